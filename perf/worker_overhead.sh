#!/usr/bin/env bash
# The framework engines' worker path against each framework's own loop in a
# plain script (docs/performance.md): the MNIST MLP's training step, batch
# 128, 2 threads, alternated over ROUNDS rounds on an idle machine. Prints
# one line per run: nnbench's median (the worker's own step times) and the
# plain loop's.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NNBENCH:-build/release/bin/nnbench}
rounds=${ROUNDS:-3}
venvs=${NNBENCH_VENVS:-${XDG_DATA_HOME:-$HOME/.local/share}/nnbench/venvs}
median() { python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["stats_seconds"]["median"]*1e3))' "$1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  "$bin" run --backend pytorch --model mnist-mlp --batch 128 --threads 2 \
    --on-contention warn --out "$tmp/pt.json" > /dev/null 2>&1
  echo "round $r nnbench pytorch: $(median "$tmp/pt.json") ms"
  /usr/bin/python3 perf/peer_pytorch.py --model mlp --threads 2 | sed "s/^/round $r plain /"
  "$bin" run --backend tensorflow --model mnist-mlp --batch 128 --threads 2 \
    --on-contention warn --out "$tmp/tf.json" > /dev/null 2>&1
  echo "round $r nnbench tensorflow: $(median "$tmp/tf.json") ms"
  "$venvs/tensorflow/bin/python" perf/peer_keras.py --threads 2 2>/dev/null | sed "s/^/round $r plain /"
done
