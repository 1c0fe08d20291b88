#!/usr/bin/env bash
# The framework engines' worker path against each framework's own loop in a
# plain script (docs/performance.md: a PyTorch loop, Keras train_on_batch on
# TensorFlow and on JAX, a Gluon autograd.record loop): the MNIST MLP's training step, batch
# 128, 2 threads, alternated over ROUNDS rounds on an idle machine. Prints
# one line per run: nnbench's median (the worker's own step times) and the
# plain loop's. The plain loops get the environment nnbench gives its
# workers: the OpenMP OpenBLAS first on LD_LIBRARY_PATH (nnbench's fix for
# two fighting thread pools; without it Debian's PyTorch takes the
# pthreads OpenBLAS and its MLP step is 1.5x slower).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NNBENCH:-build/release/bin/nnbench}
rounds=${ROUNDS:-3}
venvs=${NNBENCH_VENVS:-${XDG_DATA_HOME:-$HOME/.local/share}/nnbench/venvs}
median() { python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["stats_seconds"]["median"]*1e3))' "$1"; }
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  "$bin" run --backend pytorch --model mnist-mlp --batch 128 --threads 2 \
    --on-contention warn --out "$tmp/pt.json" > /dev/null 2>&1
  echo "round $r nnbench pytorch: $(median "$tmp/pt.json") ms"
  /usr/bin/python3 perf/peer_pytorch.py --model mlp --threads 2 | sed "s/^/round $r plain /"
  "$bin" run --backend tensorflow --model mnist-mlp --batch 128 --threads 2 \
    --on-contention warn --out "$tmp/tf.json" > /dev/null 2>&1
  echo "round $r nnbench tensorflow: $(median "$tmp/tf.json") ms"
  "$venvs/tensorflow/bin/python" perf/peer_keras.py --threads 2 2>/dev/null | sed "s/^/round $r plain /"
  "$bin" run --backend jax --model mnist-mlp --batch 128 --threads 2 \
    --on-contention warn --out "$tmp/jax.json" > /dev/null 2>&1
  echo "round $r nnbench jax: $(median "$tmp/jax.json") ms"
  KERAS_BACKEND=jax "$venvs/jax/bin/python" perf/peer_keras.py --threads 2 2>/dev/null | sed "s/^/round $r plain /"
  "$bin" run --backend mxnet --model mnist-mlp --batch 128 --threads 2 \
    --on-contention warn --out "$tmp/mx.json" > /dev/null 2>&1
  echo "round $r nnbench mxnet: $(median "$tmp/mx.json") ms"
  "$venvs/mxnet/bin/python" perf/peer_gluon.py --threads 2 2>/dev/null | sed "s/^/round $r plain /"
done
