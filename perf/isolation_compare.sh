#!/usr/bin/env bash
# Isolation overhead as a comparison (docs/performance.md): the quick suite
# isolated (A) and in one process (B), alternated three times (A B A B A
# B), 2 repetitions of every case per run in a shuffled order, shorter
# rules; then `nnbench compare` of the pooled sides (6 repetitions each).
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
db=$(mktemp -d)/iso.db
run() {
  "$NNBENCH" suite quick --db "$db" --on-contention warn --repetitions 2 \
    --warmup-time 0.3 --min-time 0.5 "$@" > /dev/null 2>&1 || true
}
side() {  # round A|B: B runs in one process, shuffled with A's seed + 10
  if [ "$2" = A ]; then
    run --interleave "$1"
  else
    run --interleave "$(($1 + 10))" --in-process
  fi
}
alternate 3 side A B
# shellcheck disable=SC2207  # run ids are single words; a failed list stops here
ids=($(stored_runs "$db"))
"$NNBENCH" compare "${ids[0]},${ids[2]},${ids[4]}" "${ids[1]},${ids[3]},${ids[5]}" \
  --db "$db"
