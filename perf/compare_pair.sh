#!/usr/bin/env bash
# A real pair for `nnbench compare` (docs/compare.md), in one session: the
# quick suite as A (all threads) and B (the same again) interleaved in time
# (A B A B A B, 2 repetitions each, every case in its own process, shuffled,
# shorter rules), so the machine's drift falls on both sides; then C (1
# thread) once with 6 repetitions. A against B should be "no change" for
# most cases; A against C "slower" where the model scales with threads.
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
db=$(mktemp -d)/pair.db
run() {
  "$NNBENCH" suite quick --db "$db" --on-contention warn --warmup-time 0.3 \
    --min-time 0.5 "$@" > /dev/null 2>&1 || true
}
side() {  # round A|B: B shuffles with A's seed + 10, so the orders differ
  if [ "$2" = A ]; then
    run --repetitions 2 --interleave "$1"
  else
    run --repetitions 2 --interleave "$(($1 + 10))"
  fi
}
alternate 3 side A B
run --repetitions 6 --threads 1 --interleave 99
# shellcheck disable=SC2207  # run ids are single words; a failed list stops here
ids=($(stored_runs "$db"))
a="${ids[0]},${ids[2]},${ids[4]}"
b="${ids[1]},${ids[3]},${ids[5]}"
echo "## A ($a) against B ($b): same suite, same threads, interleaved"
"$NNBENCH" compare "$a" "$b" --db "$db"
echo "## A against C (${ids[6]}, 1 thread)"
"$NNBENCH" compare "$a" "${ids[6]}" --db "$db" --ignore-threads
