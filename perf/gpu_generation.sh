#!/usr/bin/env bash
# Transformers on a GPU (issue 33): nnbench verify on the device for the
# tiny GPT-2 (outputs, a training step, greedy tokens and logits against
# the reference oracle on the CPU) and the tiny BERT, then GPT-2 small's
# generation suite there (each record's ceiling the GPU's own bandwidth,
# measured by its engine) and its report.
#   OUT=dir [NNBENCH=build/release/bin/nnbench] [DEVICE=cuda:0]
#   [ENGINES=pytorch,jax] [SUITE=suites/gpu-generation.toml] perf/gpu_generation.sh
# On a machine without the project's packages: perf/gpu_bundle.sh here,
# then NNBENCH=build/gpu-bundle/bin/nnbench with NNBENCH_VENVS and
# NNBENCH_FRAMEWORKS as it says. Every step runs even when one before it
# fails; the log says which did.
set -u
cd "$(dirname "$0")/.." || exit
# shellcheck source=perf/lib.sh
. perf/lib.sh
DEVICE=${DEVICE:-cuda:0}
ENGINES=${ENGINES:-pytorch,jax}
SUITE=${SUITE:-suites/gpu-generation.toml}
OUT=${OUT:?OUT names the folder for the results}
mkdir -p "$OUT"

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem \
    --format=csv
fi
for m in gpt2-tiny bert-tiny; do
  step "$NNBENCH" verify --model "$m" --backends "$ENGINES" --device "$DEVICE"
done 2>&1 | tee "$OUT/verify.txt"
step "$NNBENCH" suite "$SUITE" --device "$DEVICE" --db "$OUT/gen.db" \
  --out "$OUT/gen.json" 2>&1 | tee "$OUT/suite.txt"
step "$NNBENCH" report --db "$OUT/gen.db" -o "$OUT/gen.html"
