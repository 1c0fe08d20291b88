#!/usr/bin/env bash
# The time-to-92 % table of docs/performance.md, in one session: nnbench's
# fashion-mnist-92 task on oneDNN bf16, oneDNN fp32 and LibTorch fp32
# (SEEDS seeds each, MLPerf aggregate), then the Python peer on the same
# recipe (one run per seed) and on the official PyTorch MNIST example recipe
# (one run). Run on an otherwise idle machine after `scripts/build release`;
# results go to OUT (default results/time-to-92-<time>).
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
seeds=${SEEDS:-3}
threads=${THREADS:-2}
out=${OUT:-results/time-to-92-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
uptime | tee "$out/uptime-before"
train() {  # name, then nnbench train arguments
  local name=$1
  shift
  "$NNBENCH" train --task fashion-mnist-92 --seeds "$seeds" --threads "$threads" \
    --on-contention warn --out "$out/$name.json" "$@" | tee "$out/$name.txt"
}
train onednn-bf16 --backend onednn --precision bf16
train onednn-fp32 --backend onednn
train torch-fp32 --backend torch
for s in $(seq "$seeds"); do
  /usr/bin/python3 perf/peers/peer_fashion_mnist.py --recipe nnbench --seed "$s" \
    --threads "$threads" | tee "$out/peer-nnbench-recipe-$s.txt"
done
/usr/bin/python3 perf/peers/peer_fashion_mnist.py --recipe example \
  --threads "$threads" | tee "$out/peer-example-recipe.txt"
uptime | tee "$out/uptime-after"
/usr/bin/python3 perf/summarise_time_to_92.py "$out"
