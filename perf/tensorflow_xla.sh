#!/usr/bin/env bash
# Why the tensorflow engine's step differed from Keras's train_on_batch
# (docs/performance.md): Keras 3 compiles with jit_compile="auto", which
# on TensorFlow means XLA wherever the model allows, while the engine runs
# a plain tf.function unless NNBENCH_TF_XLA=1. Each model of MODELS,
# batch 128, 2 threads, nnbench's default rules on both sides, alternated
# over ROUNDS rounds: the engine without and with XLA, Keras with
# jit_compile auto and false. Prints one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-2}
models=${MODELS:-mnist-mlp resnet-56}
# shellcheck source=perf/framework_peers.sh
. perf/framework_peers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
variants() {  # round model: the engine without and with XLA, then Keras
  local r=$1 model=$2 peer xla jit
  peer=$(peer_model "$model")
  for xla in 0 1; do
    NNBENCH_TF_XLA=$xla "$NNBENCH" run --backend tensorflow --model "$model" \
      --batch 128 --threads 2 --on-contention warn --out "$tmp/r.json" \
      > /dev/null 2>&1
    echo "round $r $model nnbench tensorflow NNBENCH_TF_XLA=$xla: $(median_ms "$tmp/r.json") ms"
  done
  for jit in auto false; do
    "$venvs/tensorflow/bin/python" perf/peers/peer_keras.py --model "$peer" \
      --threads 2 --jit-compile "$jit" 2>/dev/null | plain "$r"
  done
}
mapfile -t sides < <(grid "$models")
alternate "$rounds" variants "${sides[@]}"
