#!/usr/bin/env bash
# The pytorch engine on Debian's PyTorch 1.13 against the opt-in PyTorch 2.x
# environment (frameworks/pytorch/requirements.txt), alternated over ROUNDS
# rounds on an idle machine (docs/performance.md). TORCH2_VENV is a made
# environment (scripts/setup pytorch makes one at $NNBENCH_VENVS/pytorch);
# the 1.13 side runs with NNBENCH_VENVS pointing where no pytorch
# environment is, so the engine falls back to /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
rounds=${ROUNDS:-3}
venv=${TORCH2_VENV:?the PyTorch 2.x environment (scripts/setup pytorch)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/v2" "$tmp/v1"
ln -s "$(realpath "$venv")" "$tmp/v2/pytorch"
# A run's line: its median, and which PyTorch with how many threads ran it.
figure='"%.3f ms (%s, threads %s)" % (median_ms(), r["backend"]["version"], r["effective"]["threads"])'
run() {  # round model batch v1|v2
  NNBENCH_VENVS="$tmp/$4" XDG_CACHE_HOME="$tmp/cache-$4" "$NNBENCH" run \
    --backend pytorch --model "$2" --batch "$3" --threads 2 \
    --on-contention warn --out "$tmp/r.json" > /dev/null 2>&1
  echo "round $1 $2 b$3 $4: $(result "$tmp/r.json" "$figure")"
}
alternate "$rounds" run "mnist-cnn 128 v1" "mnist-cnn 128 v2" "resnet-56 32 v1" "resnet-56 32 v2"
