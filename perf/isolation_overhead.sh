#!/usr/bin/env bash
# Isolation overhead (docs/performance.md): the quick suite with each case in
# its own process against all cases in one process, alternated ROUNDS times
# in one session. Prints per-case medians of both and the wall time of each
# suite run.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-2}
. perf/lib.sh
out=$(mktemp -d)
suite() {  # round mode: one suite run and its wall time
  local r=$1 mode=$2 flag="" t0 t1
  [ "$mode" = in-process ] && flag="--in-process"
  t0=$(date +%s.%N)
  "$NNBENCH" suite quick $flag --no-store --on-contention warn \
    --out "$out/$mode-$r.json" > /dev/null 2>&1 || true
  t1=$(date +%s.%N)
  echo "round $r $mode wall $(echo "$t1 - $t0" | bc) s"
}
alternate "$rounds" suite isolated in-process
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, sys, statistics
d, rounds = sys.argv[1], int(sys.argv[2])
med = {}
for mode in ("isolated", "in-process"):
    for r in range(1, rounds + 1):
        for x in json.load(open(f"{d}/{mode}-{r}.json"))["results"]:
            key = f'{x["model"]["name"]} {x["requested"]["mode"]} b{x["requested"]["batch"]}'
            med.setdefault(key, {}).setdefault(mode, []).append(
                (x["stats_seconds"]["median"] * 1e3, x["validity"]["valid"]))
for k, v in med.items():
    iso = statistics.median(m for m, _ in v["isolated"])
    inp = statistics.median(m for m, _ in v["in-process"])
    ok = all(ok for m, ok in v["isolated"] + v["in-process"])
    print(f"{k:28s} isolated {iso:9.3f} ms  in-process {inp:9.3f} ms  "
          f"ratio {iso / inp:.3f}{'' if ok else '  (some run invalid)'}")
PY
rm -rf "$out"
