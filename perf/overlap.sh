#!/usr/bin/env bash
# Overlapping the all-reduce with backward (docs/performance.md): LibTorch,
# 2 ranks x 1 thread, strong scaling at batch 128, 1 MiB buckets, overlap
# off and on alternated ROUNDS times per model and engine. Prints each run's
# median step, exposed all-reduce (the wait after backward) and buckets.
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
out=${OUT:-/tmp/nnbench-overlap}
mkdir -p "$out"
run() {  # round model engine off|on
  local round=$1 model=$2 engine=$3 overlap=$4 flag=()
  [ "$overlap" = on ] && flag=(--overlap)
  "$NNBENCH" run --model "$model" --backend torch --threads 1 \
    --batch 128 --warmup-time 1 --min-time "${MIN_TIME:-4}" \
    --on-contention warn --distributed "$engine" --processes 2 \
    --bucket-bytes 1048576 "${flag[@]}" \
    --out "$out/$model-$engine-$overlap-r$round.json" >/dev/null 2>&1 || true
}
mapfile -t sides < <(grid "${MODELS:-resnet-56 alexnet-r}" "mpi gloo" "off on")
alternate "${ROUNDS:-2}" run "${sides[@]}"
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, sys
print("| run | median ms | exposed all-reduce ms | buckets | overlap as recorded |")
print("|---|---:|---:|---:|---|")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(f))["results"][0]
    d = r.get("distributed") or {}
    if r["state"] != "ok":
        print(f"| {os.path.basename(f)[:-5]} | {r['state']} | | | {r.get('message','')} |")
        continue
    print(f"| {os.path.basename(f)[:-5]} | {r['stats_seconds']['median']*1e3:.1f} | "
          f"{d['allreduce_seconds']*1e3:.2f} | {d['allreduce_calls_per_step']} | {d['overlap'].split(';')[0]} |")
PY
