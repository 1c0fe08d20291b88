#!/usr/bin/env bash
# Interleaved comparisons for docs/performance.md, 2 threads, batch 128:
#   1. harness overhead: nnbench vs a bare LibTorch loop (MNIST MLP)
#   2. nnbench's LibTorch backend vs the same models in PyTorch (MLP, CNN)
# Each pair runs ROUNDS times alternately so drifts of a noisy machine hit
# both sides. All use the OpenMP OpenBLAS, as nnbench applies it itself.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
bin=build/release/bin
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp
nn() {  # model -> median ms
  $bin/nnbench run --model "$1" --backend torch --batch 128 --threads 2 --min-time 3 \
    --out /tmp/nnbench_peer.json >/dev/null 2>&1
  /usr/bin/python3 -c "import json; print('%.3f' % (json.load(open('/tmp/nnbench_peer.json'))['results'][0]['stats_seconds']['median']*1e3))"
}
for r in $(seq "$rounds"); do
  bare=$($bin/bare_torch_mlp 2 128 1000 | sed 's/.*median \([0-9.]*\) ms.*/\1/')
  echo "round $r mlp bare_libtorch $bare nnbench $(nn mnist-mlp)"
  py=$(/usr/bin/python3 perf/peer_pytorch.py --model mlp --min-time 3 | sed 's/.*median \([0-9.]*\) ms.*/\1/')
  echo "round $r mlp pytorch $py nnbench $(nn mnist-mlp)"
  py=$(/usr/bin/python3 perf/peer_pytorch.py --model cnn --min-time 3 | sed 's/.*median \([0-9.]*\) ms.*/\1/')
  echo "round $r cnn pytorch $py nnbench $(nn mnist-cnn)"
done
