#!/usr/bin/env bash
# Makes tests/data/report_fixture.json, the fixed results file the browser
# test reports: real runs on this machine (a batch x threads grid on two
# backends, batch-1 latency, a short training run to a target), merged into
# one results file. Three records are then edited, so every kind of cell
# appears: one renamed to "<script>alert(1)</script>" (escaping), one marked
# contended (invalid, drawn grey), one made an OOM cell. Rerun only to
# refresh the fixture; the test never runs this.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${NNBENCH:-build/release/bin/nnbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/grid.toml" <<'TOML'
description = "report fixture: batch x threads"
[grid]
models = ["mnist-mlp"]
backends = ["torch", "onednn"]
batches = [16, 32, 64]
threads = [1, 2]
[warmup]
min_iterations = 2
min_seconds = 0.1
[stop]
min_iterations = 20
min_seconds = 0.3
TOML
cat > "$tmp/train.toml" <<'TOML'
description = "report fixture: training to a target"
scenario = "training"
[grid]
tasks = ["fashion-mnist-mlp"]
threads = [1, 2]
[settings]
epochs = 3
target = 0.8
latency = true
latency_items = 200
TOML
common="--no-store --on-contention warn"
$bin suite "$tmp/grid.toml" $common --out "$tmp/grid.json" > /dev/null
$bin suite "$tmp/train.toml" $common --out "$tmp/train.json" > /dev/null
for b in torch onednn; do
  $bin run --model mnist-mlp --backend $b --scenario latency --threads 1 \
    --max-iters 500 --on-contention warn --out "$tmp/lat-$b.json" > /dev/null
done
/usr/bin/python3 - "$tmp" tests/data/report_fixture.json <<'PY'
import glob, json, sys
tmp, out = sys.argv[1], sys.argv[2]
base = json.load(open(f"{tmp}/grid.json"))
for f in [f"{tmp}/train.json"] + sorted(glob.glob(f"{tmp}/lat-*.json")):
    base["results"] += json.load(open(f))["results"]
grid = [r for r in base["results"] if r["kind"] == "throughput"]
grid[0]["model"]["name"] = "<script>alert(1)</script>"
grid[1]["validity"] = {"valid": False, "reasons": [{
    "reason": "contended", "detail": "edited into the fixture: invalid cell"}]}
oom = [r for r in grid if r["backend"]["name"] == "onednn"
       and r["requested"]["batch"] == 64 and r["requested"]["threads"] == 2][0]
oom["state"] = "oom"
oom["oom_source"] = "allocation"
oom["message"] = "edited into the fixture: an OOM cell"
json.dump(base, open(out, "w"), indent=1)
print(out, len(base["results"]), "records")
PY
