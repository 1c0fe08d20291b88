#!/usr/bin/env bash
# A real pair for `nnbench compare` (docs/compare.md): the quick suite run
# three times in one session, interleaved: A (all threads), C (1 thread),
# B (all threads again). A against B should be "no change" for most cases;
# A against C ("slower" where the model scales with threads).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/bin/nnbench
db=$(mktemp -d)/pair.db
run() { $bin suite quick --db "$db" --on-contention warn "$@" > /dev/null 2>&1 || true; }
run; run --threads 1; run
ids=($($bin results --db "$db" list | awk 'NR > 2 {print $1}'))
echo "runs: A ${ids[0]}, C ${ids[1]} (1 thread), B ${ids[2]}"
echo "## A against B (same suite, same threads)"
$bin compare "${ids[0]}" "${ids[2]}" --db "$db"
echo "## A (all threads) against C (1 thread)"
$bin compare "${ids[0]}" "${ids[1]}" --db "$db" --ignore-threads
