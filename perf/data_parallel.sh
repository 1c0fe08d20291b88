#!/usr/bin/env bash
# Data-parallel training on this machine (docs/performance.md): per model
# and backend, 1 process x 2 threads, 1 process x 1 thread, and 2 processes
# x 1 thread over Open MPI and over Gloo (strong scaling: the global batch
# split in two), alternated ROUNDS times; then all-reduce bandwidth per
# engine and the ring model's prediction against each measured 2-rank run.
# Nothing else may run meanwhile (check uptime before and after).
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
out=${OUT:-/tmp/nnbench-data-parallel}
rounds=${ROUNDS:-2}
batch=${BATCH:-128}
mkdir -p "$out"
common=(--batch "$batch" --warmup-time 1 --min-time "${MIN_TIME:-4}" --on-contention warn)
# SKIP_RUNS=1: only the all-reduce sweep and the summary of earlier runs.
[ "${SKIP_RUNS:-0}" = 1 ] && rounds=0
configs() {  # round model backend: 1x2, 1x1, then 2x1 over each engine
  local tag=$2-$3-r$1 engine
  "$NNBENCH" run --model "$2" --backend "$3" --threads 2 \
    "${common[@]}" --out "$out/$tag-1x2.json" >/dev/null 2>&1 || true
  "$NNBENCH" run --model "$2" --backend "$3" --threads 1 \
    "${common[@]}" --out "$out/$tag-1x1.json" >/dev/null 2>&1 || true
  for engine in mpi gloo; do
    "$NNBENCH" run --model "$2" --backend "$3" --threads 1 \
      "${common[@]}" --distributed $engine --processes 2 \
      --out "$out/$tag-2x1-$engine.json" >/dev/null 2>&1 || true
  done
}
mapfile -t sides < <(grid "${MODELS:-resnet-56 alexnet-r}" "${BACKENDS:-onednn torch}")
alternate "$rounds" configs "${sides[@]}"
for engine in mpi gloo; do
  tests/distributed/run_ranks.sh 2 "$perf_bin/allreduce_bandwidth" $engine \
    >"$out/allreduce-$engine.txt" 2>/dev/null
done
# Step times per configuration (each round's median), then the model.
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    m = re.match(r"^(.*)-r(\d+)-(1x2|1x1|2x1-mpi|2x1-gloo)$", os.path.basename(f)[:-5])
    if not m:
        continue
    r = json.load(open(f))["results"][0]
    rows.setdefault((r["model"]["name"], r["backend"]["name"], m.group(3)), []).append(r)
print("| model | backend | processes x threads | median ms per step (each round) | samples/s | all-reduce ms | compute ms | valid |")
print("|---|---|---|---|---|---|---|---|")
for (model, backend, config), rs in sorted(rows.items()):
    ok = [r for r in rs if r["state"] == "ok"]
    ms = " / ".join(f'{r["stats_seconds"]["median"]*1e3:.1f}' for r in ok) or rs[0]["state"]
    sps = " / ".join(f'{r["throughput"]["samples_per_second"]:.1f}' for r in ok)
    d = [r.get("distributed") for r in ok if r.get("distributed")]
    ar = " / ".join(f'{x["allreduce_seconds"]*1e3:.1f}' for x in d) or "-"
    comp = " / ".join(f'{max(k["compute_seconds"] for k in x["per_rank"])*1e3:.1f}' for x in d) or "-"
    valid = all(r["validity"]["valid"] for r in ok) and len(ok) == len(rs)
    print(f"| {model} | {backend} | {config.replace('-', ' ')} | {ms} | {sps} | {ar} | {comp} | {'yes' if valid else 'no'} |")
PY
for engine in mpi gloo; do
  echo "== all-reduce, $engine"
  cat "$out/allreduce-$engine.txt"
  fit=$(sed -n 's/ring model fit: alpha \([0-9.]*\) us per step, beta \([0-9.]*\) ns.*/\1 \2/p' "$out/allreduce-$engine.txt")
  for f in "$out"/*-r1-2x1-"$engine".json; do
    one=${f%-2x1-"$engine".json}-1x1.json
    # shellcheck disable=SC2086  # fit is two numbers, two arguments
    "$perf_bin/scaling_check" $fit "$one" "$f" || true
  done
done
