#!/usr/bin/env bash
# Each framework engine's generation against its framework's plain loop,
# both processes kept alive and their sets of generations alternated
# (perf/peers/generation_ab.py says why and how): GPT-2 small (MODEL),
# pp PROMPT / tg NEW_TOKENS, batch 1, THREADS threads, ROUNDS rounds (40)
# of WARMUP untimed (0) and REPETITIONS timed generations (1) a side. ENGINES picks some
# of pytorch tensorflow jax mxnet onnxruntime openvino (all by default),
# run one after another. Both sides get the environment nnbench gives its
# workers (perf/framework_peers.sh). Each engine's log (both processes'
# stderr) goes to LOGS (a temporary folder, kept when a run fails).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=perf/framework_peers.sh
. perf/framework_peers.sh
logs=${LOGS:-$(mktemp -d)}
for engine in ${ENGINES:-pytorch tensorflow jax mxnet onnxruntime openvino}; do
  if [ "$engine" = pytorch ]; then python=/usr/bin/python3; else python=$venvs/$engine/bin/python; fi
  "$python" perf/peers/generation_ab.py --engine "$engine" --model "${MODEL:-gpt2-small}" \
    --prompt "${PROMPT:-512}" --new-tokens "${NEW_TOKENS:-128}" --threads "${THREADS:-2}" \
    --rounds "${ROUNDS:-40}" --warmup "${WARMUP:-0}" \
    --repetitions "${REPETITIONS:-1}" --log "$logs/$engine.log" || {
    echo "generation_ab.sh: $engine failed; its log: $logs/$engine.log" >&2
    exit 1
  }
done
[ -n "${LOGS:-}" ] || rm -rf "$logs"
