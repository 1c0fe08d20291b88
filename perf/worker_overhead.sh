#!/usr/bin/env bash
# The framework engines' worker path against each framework's own loop in a
# plain script (docs/performance.md: a PyTorch loop, Keras train_on_batch on
# TensorFlow and on JAX, a Gluon autograd.record loop): the training step of
# each of MODELS (the MNIST MLP and DLBench's ResNet-56 by default), batch
# 128, 2 threads, the same warm-up and stopping rules on both sides
# (nnbench's defaults: at least 5 steps and 1 s of warm-up, 10 steps and
# 2 s measured), alternated over ROUNDS rounds on an idle machine. Prints
# one line per run: nnbench's median (the worker's own step times) and the
# plain loop's. ENGINES picks some of pytorch tensorflow jax mxnet (all by
# default). The plain loops get the environment nnbench gives its workers:
# the OpenMP OpenBLAS first on LD_LIBRARY_PATH (nnbench's fix for two
# fighting thread pools; without it Debian's PyTorch takes the pthreads
# OpenBLAS and its MLP step is 1.5x slower).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
models=${MODELS:-mnist-mlp resnet-56}
engines=" ${ENGINES:-pytorch tensorflow jax mxnet} "
want() { [[ $engines == *" $1 "* ]]; }
# shellcheck source=perf/framework_peers.sh
. perf/framework_peers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model_round() {  # round model: each wanted engine, then its framework's own loop
  local r=$1 model=$2 peer
  peer=$(peer_model "$model")
  if want pytorch; then
    nnbench "$r" "$model" pytorch --threads 2
    /usr/bin/python3 perf/peers/peer_pytorch.py --model "$peer" --threads 2 | plain "$r"
  fi
  if want tensorflow; then
    nnbench "$r" "$model" tensorflow --threads 2
    "$venvs/tensorflow/bin/python" perf/peers/peer_keras.py --model "$peer" \
      --threads 2 2>/dev/null | plain "$r"
  fi
  if want jax; then
    nnbench "$r" "$model" jax --threads 2
    KERAS_BACKEND=jax "$venvs/jax/bin/python" perf/peers/peer_keras.py \
      --model "$peer" --threads 2 2>/dev/null | plain "$r"
  fi
  if want mxnet; then
    nnbench "$r" "$model" mxnet --threads 2
    "$venvs/mxnet/bin/python" perf/peers/peer_gluon.py --model "$peer" \
      --threads 2 2>/dev/null | plain "$r"
  fi
}
mapfile -t sides < <(grid "$models")
alternate "$rounds" model_round "${sides[@]}"
