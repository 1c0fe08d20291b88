#!/usr/bin/env bash
# Isolation overhead as a comparison (docs/performance.md): the quick suite
# isolated (A) and in one process (B), alternated three times (A B A B A
# B), 2 repetitions of every case per run in a shuffled order, shorter
# rules; then `nnbench compare` of the pooled sides (6 repetitions each).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/bin/nnbench
db=$(mktemp -d)/iso.db
run() {
  $bin suite quick --db "$db" --on-contention warn --repetitions 2 \
    --warmup-time 0.3 --min-time 0.5 "$@" > /dev/null 2>&1 || true
}
for i in 1 2 3; do
  run --interleave "$i"
  run --interleave "$((i + 10))" --in-process
done
ids=($($bin results --db "$db" list | awk 'NR > 2 {print $1}'))
$bin compare "${ids[0]},${ids[2]},${ids[4]}" "${ids[1]},${ids[3]},${ids[5]}" \
  --db "$db"
