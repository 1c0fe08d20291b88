#!/usr/bin/env bash
# nnbench's generation on each framework engine against the framework's own
# decoding loop in a plain script (docs/performance.md, "Generation beside
# the frameworks' own loops"): GPT-2 small (MODEL), greedy, pp PROMPT / tg
# NEW_TOKENS at batch 1, THREADS threads, one warm-up generation and five
# timed on both sides, each engine followed by its plain loop, alternated
# over ROUNDS rounds on an idle machine. The plain loops (perf/peers/
# peer_generate_*.py) time the prefill and every later token as nnbench's
# workers do (perf/peers/timing.py's time_generations); nnbench's figures
# are its record's medians (ttft_seconds, tpot_seconds). Prints one line per
# run, then nnbench / plain per engine and round. ENGINES picks some of
# pytorch tensorflow jax mxnet onnxruntime openvino (all by default). The
# plain loops get the environment nnbench gives its workers
# (perf/framework_peers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
model=${MODEL:-gpt2-small}
prompt=${PROMPT:-512}
new_tokens=${NEW_TOKENS:-128}
threads=${THREADS:-2}
engines=" ${ENGINES:-pytorch tensorflow jax mxnet onnxruntime openvino} "
want() { [[ $engines == *" $1 "* ]]; }
# shellcheck source=perf/framework_peers.sh
. perf/framework_peers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lines=$tmp/lines
shape=(--prompt "$prompt" --new-tokens "$new_tokens" --threads "$threads")
# One nnbench generation run (ROUND ENGINE), printed as the peers print.
generate() {
  local round=$1 engine=$2
  "$NNBENCH" generate --model "$model" --backend "$engine" "${shape[@]}" \
    --out "$tmp/g.json" >"$tmp/err" 2>&1 || {
    cat "$tmp/err" >&2
    return 1
  }
  echo "round $round nnbench $engine: $(result "$tmp/g.json" \
    '"ttft median %.2f ms, tpot median %.3f ms, valid %s" % (
       r["ttft_seconds"]["median"] * 1e3, r["tpot_seconds"]["median"] * 1e3,
       r["validity"]["valid"])')"
}
# A plain loop (ROUND ENGINE PYTHON SCRIPT [options]), marked with its
# engine, as generate's lines are.
peer() {
  local round=$1 engine=$2 python=$3 script=$4
  shift 4
  "$python" "perf/peers/$script" --model "$model" "${shape[@]}" "$@" \
    >"$tmp/out" 2>"$tmp/err" || {
    cat "$tmp/err" >&2
    return 1
  }
  sed "s/^/round $round plain $engine: /" "$tmp/out"
}
engine_round() {
  local r=$1 engine=$2
  want "$engine" || return 0
  generate "$r" "$engine"
  case $engine in
    pytorch) peer "$r" pytorch /usr/bin/python3 peer_generate_torch.py ;;
    tensorflow | jax)
      KERAS_BACKEND=$engine peer "$r" "$engine" "$venvs/$engine/bin/python" \
        peer_generate_keras.py ;;
    mxnet) peer "$r" mxnet "$venvs/mxnet/bin/python" peer_generate_gluon.py ;;
    onnxruntime | openvino)
      peer "$r" "$engine" "$venvs/$engine/bin/python" peer_generate_onnx.py \
        --runtime "$engine" ;;
  esac
}
alternate "$rounds" engine_round pytorch tensorflow jax mxnet onnxruntime \
  openvino | tee "$lines"
echo "nnbench / plain loop (median time per output token; time to first token):"
awk '
  { match($0, /tpot median [0-9.]+/); tpot = substr($0, RSTART + 12, RLENGTH - 12)
    match($0, /ttft median [0-9.]+/); ttft = substr($0, RSTART + 12, RLENGTH - 12)
    sub(/:$/, "", $4); key = $2 " " $4 }
  $3 == "nnbench" { n_tpot[key] = tpot; n_ttft[key] = ttft }
  $3 == "plain" && (key in n_tpot) {
    printf "round %s %s tpot %+.1f %% ttft %+.1f %%\n", $2, $4,
      (n_tpot[key] / tpot - 1) * 100, (n_ttft[key] / ttft - 1) * 100 }
' "$lines"
