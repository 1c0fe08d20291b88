#!/usr/bin/env bash
# Interleaved comparisons for docs/performance.md, 2 threads, batch 128:
#   1. harness overhead: nnbench vs a bare LibTorch loop (MNIST MLP)
#   2. nnbench's LibTorch backend vs the same models in PyTorch (MLP, CNN)
# Each pair runs ROUNDS times alternately so drifts of a noisy machine hit
# both sides. All use the OpenMP OpenBLAS, as nnbench applies it itself.
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
rounds=${ROUNDS:-5}
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp
nn() {  # model -> median ms
  "$NNBENCH" run --model "$1" --backend torch --batch 128 --threads 2 --min-time 3 \
    --out /tmp/nnbench_peer.json >/dev/null 2>&1
  median_ms /tmp/nnbench_peer.json
}
peer_ms() { sed 's/.*median \([0-9.]*\) ms.*/\1/'; }  # a peer's line -> its median
pair() {  # round model peer: one line, the peer's median then nnbench's
  local r=$1 model=$2 peer=$3 ms
  if [ "$peer" = bare_libtorch ]; then
    ms=$("$perf_bin/bare_torch_mlp" 2 128 1000 | peer_ms)
  else
    ms=$(/usr/bin/python3 perf/peers/peer_pytorch.py --model "$model" --min-time 3 | peer_ms)
  fi
  echo "round $r $model $peer $ms nnbench $(nn "mnist-$model")"
}
alternate "$rounds" pair "mlp bare_libtorch" "mlp pytorch" "cnn pytorch"
