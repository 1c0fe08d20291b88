#!/usr/bin/env bash
# The measurements behind the contention rule (docs/performance.md,
# "Contention"): training steps measured alone and beside one co-runner that
# keeps a CPU busy a given fraction of the time (a duty-cycled spin loop,
# 10 ms periods, perf/spin.py), interleaved over ROUNDS rounds. Prints, per
# run, the step median and what nnbench recorded: cpu_share,
# other_load_cpus, involuntary switches per thread-second, steal and the
# validity verdict. Run on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-2}
duties=${DUTIES:-"0 0.1 0.25 0.5 1"}
models=${MODELS:-"mnist-mlp resnet-56"}
. perf/lib.sh
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"' EXIT
measure() {  # model duty -> one line
  local model=$1 duty=$2 pid=""
  if [ "$duty" != 0 ]; then perf/spin.py "$duty" & pid=$!; sleep 0.5; fi
  "$NNBENCH" run --model "$model" --batch 32 --threads 2 --min-time 3 \
    --on-contention warn --out "$out/r.json" >/dev/null 2>&1 || true
  # shellcheck disable=SC2015  # || true on purpose: no spinner, or it died
  [ -n "$pid" ] && kill "$pid" && wait "$pid" 2>/dev/null || true
  /usr/bin/python3 - "$out/r.json" "$model" "$duty" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
u = r["cpu_usage"]
print(f'{sys.argv[2]} duty {sys.argv[3]} median_ms {r["stats_seconds"]["median"]*1e3:.3f} '
      f'cpu_share {u["cpu_share"]:.3f} other_load {u["other_load_cpus"]:.3f} '
      f'nivcsw_per_thread_s {u["involuntary_switches_per_thread_second"]:.1f} '
      f'steal {u["steal_fraction"]:.3f} {"valid" if r["validity"]["valid"] else "invalid"}')
PY
}
line() { echo "round $1 $(measure "$2" "$3")"; }  # round model duty
mapfile -t sides < <(grid "$models" "$duties")
uptime
alternate "$rounds" line "${sides[@]}"
uptime
