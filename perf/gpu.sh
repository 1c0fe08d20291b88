#!/usr/bin/env bash
# The frameworks on a GPU (issue 20): nnbench verify on the device (forward,
# loss and one training step against the reference oracle on the CPU, same
# weights and batch) for the MNIST CNN, ResNet-56 and an LSTM, then the gpu
# suite (images/s against batch, an OOM cell) and its report.
#   OUT=dir [NNBENCH=build/release/bin/nnbench] [DEVICE=cuda:0]
#   [ENGINES=pytorch,jax] [SUITE=suites/gpu.toml] perf/gpu.sh
# Every step runs even when one before it fails; the log says which did.
set -u
# No set -e here, so a failed cd stops the script itself (from anywhere
# else, perf/lib.sh and the build are not found).
cd "$(dirname "$0")/.." || exit
# shellcheck source=perf/lib.sh
. perf/lib.sh
DEVICE=${DEVICE:-cuda:0}
ENGINES=${ENGINES:-pytorch,jax}
SUITE=${SUITE:-suites/gpu.toml}
OUT=${OUT:?OUT names the folder for the results}
mkdir -p "$OUT"

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm \
    --format=csv
fi
step "$NNBENCH" env >"$OUT/env.txt" 2>&1
for m in mnist-cnn resnet-56 lstm-ptb; do
  step "$NNBENCH" verify --model "$m" --backends "$ENGINES" --device "$DEVICE"
done 2>&1 | tee "$OUT/verify.txt"
step "$NNBENCH" suite "$SUITE" --device "$DEVICE" --db "$OUT/gpu.db" \
  --out "$OUT/gpu.json"
step "$NNBENCH" report --db "$OUT/gpu.db" -o "$OUT/gpu.html"
