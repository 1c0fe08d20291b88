#!/usr/bin/env bash
# The cross-machine report of the example results kept here: every run
# file under examples/machines/*/ imported into one store, then one report
# of all of them ("Which machine is fastest and cheapest for this job?"
# opens it when the runs come from two machines or more).
#   examples/machines/report.sh [OUT.html]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-machines.html}
nnbench=${NNBENCH:-build/release/bin/nnbench}
db=$(mktemp -d)/examples.db
trap 'rm -rf "$(dirname "$db")"' EXIT
"$nnbench" results import examples/machines/*/*.json --db "$db" >/dev/null
mapfile -t runs < <("$nnbench" results list --db "$db" | awk 'NR > 2 {print $1}')
"$nnbench" report "${runs[@]}" --db "$db" -o "$out"
