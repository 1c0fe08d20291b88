#!/usr/bin/env bash
# The worker path on a GPU (docs/performance.md): nnbench's pytorch and jax
# engines on DEVICE against the frameworks' own loops on the same GPU (a
# plain PyTorch loop, Keras's train_on_batch on JAX), fp32 with TF32 off on
# both sides, batch 128, nnbench's default rules, alternated over ROUNDS.
# The interpreters are the engines' (NNBENCH_VENVS). Keras copies each
# numpy batch to the GPU inside train_on_batch, as its users' loops do;
# nnbench's engines and the PyTorch loop keep their batches on the GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${NNBENCH:-build/release/bin/nnbench}
rounds=${ROUNDS:-2}
models=${MODELS:-mnist-mlp resnet-56}
device=${DEVICE:-cuda:0}
cpus=$(nproc)
. perf/framework_peers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  for model in $models; do
    peer=$(peer_model "$model")
    plain() { sed "s/^/round $r plain /"; }
    nnbench "$r" "$model" pytorch --device "$device"
    "$venvs/pytorch/bin/python" perf/peer_pytorch.py --model "$peer" \
      --threads "$cpus" --device "${device%%:*}" | plain
    nnbench "$r" "$model" jax --device "$device"
    JAX_DEFAULT_MATMUL_PRECISION=highest KERAS_BACKEND=jax \
      "$venvs/jax/bin/python" perf/peer_keras.py --model "$peer" \
      --threads "$cpus" 2>/dev/null | plain
  done
done
