#!/usr/bin/env bash
# Concurrency (docs/performance.md, "Copies against OpenVINO's hints"):
# ResNet-56 at batch 1, 2 CPUs, under LoadGen's offline scenario through
# nnbench's openvino engine as 1 copy x 2 threads and 2 copies x 1 thread,
# against OpenVINO's own LATENCY and THROUGHPUT hints in a plain script on
# the same ONNX graph (perf/peers/peer_openvino.py). Alternated over ROUNDS.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-2}
. perf/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$NNBENCH" models --export-onnx resnet-56 --out "$tmp/r56.onnx" > /dev/null 2>&1
sps() { result "$1" '"%.1f samples/s (%s)" % (r["figures"]["samples_per_second"], "VALID" if r["loadgen"]["valid"] else "INVALID")'; }
side() {  # round, then "nnbench COPIES THREADS" or "openvino"
  local r=$1
  if [ "$2" = nnbench ]; then
    "$NNBENCH" infer --model resnet-56 --backend openvino --scenario offline \
      --batch 1 --instances "$3" --threads "$4" --min-duration-s 5 \
      --out "$tmp/o.json" > /dev/null 2>&1 || true
    echo "round $r nnbench openvino offline $3 copy x $4 threads: $(sps "$tmp/o.json")"
  else
    "$venvs/openvino/bin/python" perf/peers/peer_openvino.py "$tmp/r56.onnx" \
      --threads 2 --seconds 5 | sed "s/^/round $r /"
  fi
}
alternate "$rounds" side "nnbench 1 2" "nnbench 2 1" openvino
