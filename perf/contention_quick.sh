#!/usr/bin/env bash
# The quick suite on an idle machine, then beside one busy co-runner
# (perf/spin.py 1, unpinned), with the same stopping rules and
# --on-contention warn so that every run is kept and its verdict shown
# (docs/performance.md, "Contention"). Extra arguments go to both suite runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
out=${OUT:-results/contention-quick-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
uptime
"$NNBENCH" suite quick --on-contention warn --out "$out/idle.json" "$@" || true
perf/spin.py 1 &
spinner=$!
sleep 0.5
"$NNBENCH" suite quick --on-contention warn --out "$out/busy.json" "$@" || true
kill "$spinner"
uptime
/usr/bin/python3 - "$out" <<'PY'
import json, sys
runs = {}
for side in ["idle", "busy"]:
    for r in json.load(open(f"{sys.argv[1]}/{side}.json"))["results"]:
        key = (r["model"]["name"], r["requested"]["mode"], r["requested"]["batch"])
        runs.setdefault(key, {})[side] = r
print("| model | mode | batch | idle median ms | idle other load | idle verdict "
      "| busy median ms | slowdown | busy other load | busy CPU share | busy verdict |")
print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|")
verdict = lambda r: "valid" if r["validity"]["valid"] else "invalid: contended"
for (m, mode, b), s in runs.items():
    i, y = s["idle"], s["busy"]
    mi, my = i["stats_seconds"]["median"], y["stats_seconds"]["median"]
    print(f'| {m} | {mode} | {b} | {mi*1e3:.3f} | {i["cpu_usage"]["other_load_cpus"]:.3f} '
          f'| {verdict(i)} | {my*1e3:.3f} | {my/mi:.1f}x '
          f'| {y["cpu_usage"]["other_load_cpus"]:.3f} | {y["cpu_usage"]["cpu_share"]:.2f} | {verdict(y)} |')
PY
