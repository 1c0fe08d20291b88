#!/usr/bin/env bash
# The worker path on a GPU (docs/performance.md): nnbench's pytorch and jax
# engines on DEVICE against the frameworks' own loops on the same GPU (a
# plain PyTorch loop, Keras's train_on_batch on JAX), fp32 with TF32 off on
# both sides, batch 128, nnbench's default rules, alternated over ROUNDS.
# The interpreters are the engines' (NNBENCH_VENVS). Keras copies each
# numpy batch to the GPU inside train_on_batch, as its users' loops do;
# nnbench's engines and the PyTorch loop keep their batches on the GPU.
set -uo pipefail
# No set -e here, so a failed cd stops the script itself (from anywhere
# else, perf/lib.sh and the build are not found).
cd "$(dirname "$0")/.." || exit
rounds=${ROUNDS:-2}
models=${MODELS:-mnist-mlp resnet-56}
device=${DEVICE:-cuda:0}
cpus=$(nproc)
# shellcheck source=perf/framework_peers.sh
. perf/framework_peers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model_round() {  # round model: each engine, then its framework's own loop
  local r=$1 model=$2 peer
  peer=$(peer_model "$model")
  nnbench "$r" "$model" pytorch --device "$device"
  "$venvs/pytorch/bin/python" perf/peers/peer_pytorch.py --model "$peer" \
    --threads "$cpus" --device "${device%%:*}" | plain "$r"
  nnbench "$r" "$model" jax --device "$device"
  JAX_DEFAULT_MATMUL_PRECISION=highest KERAS_BACKEND=jax \
    "$venvs/jax/bin/python" perf/peers/peer_keras.py --model "$peer" \
    --threads "$cpus" 2>/dev/null | plain "$r"
}
mapfile -t sides < <(grid "$models")
alternate "$rounds" model_round "${sides[@]}"
