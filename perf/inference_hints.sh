#!/usr/bin/env bash
# Concurrency (docs/performance.md, "Copies against OpenVINO's hints"):
# ResNet-56 at batch 1, 2 CPUs, under LoadGen's offline scenario through
# nnbench's openvino engine as 1 copy x 2 threads and 2 copies x 1 thread,
# against OpenVINO's own LATENCY and THROUGHPUT hints in a plain script on
# the same ONNX graph (perf/peer_openvino.py). Alternated over ROUNDS.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NNBENCH:-build/release/bin/nnbench}
rounds=${ROUNDS:-2}
. scripts/paths
venvs=$(nnbench_venvs)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" models --export-onnx resnet-56 --out "$tmp/r56.onnx" > /dev/null 2>&1
sps() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f samples/s (%s)" % (r["figures"]["samples_per_second"], "VALID" if r["loadgen"]["valid"] else "INVALID"))' "$1"; }
for r in $(seq "$rounds"); do
  for copies in "1 2" "2 1"; do
    set -- $copies
    "$bin" infer --model resnet-56 --backend openvino --scenario offline \
      --batch 1 --instances "$1" --threads "$2" --min-duration-s 5 \
      --out "$tmp/o.json" > /dev/null 2>&1 || true
    echo "round $r nnbench openvino offline $1 copy x $2 threads: $(sps "$tmp/o.json")"
  done
  "$venvs/openvino/bin/python" perf/peer_openvino.py "$tmp/r56.onnx" \
    --threads 2 --seconds 5 | sed "s/^/round $r /"
done
