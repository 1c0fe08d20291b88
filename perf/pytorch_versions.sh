#!/usr/bin/env bash
# The pytorch engine on Debian's PyTorch 1.13 against the opt-in PyTorch 2.x
# environment (frameworks/pytorch/requirements.txt), alternated over ROUNDS
# rounds on an idle machine (docs/performance.md). TORCH2_VENV is a made
# environment (scripts/setup pytorch makes one at $NNBENCH_VENVS/pytorch);
# the 1.13 side runs with NNBENCH_VENVS pointing where no pytorch
# environment is, so the engine falls back to /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NNBENCH:-build/release/bin/nnbench}
rounds=${ROUNDS:-3}
venv=${TORCH2_VENV:?the PyTorch 2.x environment (scripts/setup pytorch)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/v2" "$tmp/v1"
ln -s "$(realpath "$venv")" "$tmp/v2/pytorch"
median() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f ms (%s, threads %s)" % (r["stats_seconds"]["median"]*1e3, r["backend"]["version"], r["effective"]["threads"]))' "$1"; }
for r in $(seq "$rounds"); do
  for model in "mnist-cnn 128" "resnet-56 32"; do
    set -- $model
    for side in v1 v2; do
      NNBENCH_VENVS="$tmp/$side" XDG_CACHE_HOME="$tmp/cache-$side" "$bin" run \
        --backend pytorch --model "$1" --batch "$2" --threads 2 \
        --on-contention warn --out "$tmp/r.json" > /dev/null 2>&1
      echo "round $r $1 b$2 $side: $(median "$tmp/r.json")"
    done
  done
done
