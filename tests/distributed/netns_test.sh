#!/usr/bin/env bash
# Two "machines" on this one: network namespaces joined by a veth pair,
# shaped with tc (netem: delay and rate; where the kernel lacks netem, as
# Firecracker VMs do, tbf: rate only), one Gloo rank in each over TCP
# (docs/distributed.md), then the same over Open MPI (mpirun with a
# hostfile of the two addresses and a launch agent per namespace). Checks
# for each engine that the run completes with 2 ranks and
# that its all-reduce took at least what the shaped link allows: the
# traffic crossed it, not loopback. Exits 77 (ctest: skipped), saying why,
# without the rights to make namespaces.
# Usage: netns_test.sh NNBENCH [DELAY_MS] [RATE_MBIT]
set -uo pipefail
nnbench=$1
delay=${2:-5}
rate=${3:-200}
. "$(dirname "$0")/netns_lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
dir=$(mktemp -d /tmp/nnbench-netns-XXXXXX)
trap 'netns_down; rm -rf "$dir"' EXIT
netns_up nnbench_test_a$$ nnbench_test_b$$ >"$dir/why" || skip "$(cat "$dir/why")"
set -e
netns_shape "$rate" "$delay"
delay=$SHAPED_DELAY
set +e
args=(run --model mnist-mlp --backend reference --threads 1 --batch 16
      --warmup-iters 1 --warmup-time 0 --min-iters 3 --min-time 0
      --on-contention warn --distributed gloo --dist-timeout 30
      --rendezvous tcp:10.231.0.1:29517)
ip netns exec "$NETNS_A" env NNBENCH_RANK=0 NNBENCH_WORLD_SIZE=2 \
  "$nnbench" "${args[@]}" --gloo-interface "$VA" --out "$dir/r.json" >"$dir/0.log" 2>&1 &
p0=$!
ip netns exec "$NETNS_B" env NNBENCH_RANK=1 NNBENCH_WORLD_SIZE=2 \
  "$nnbench" "${args[@]}" --gloo-interface "$VB" >"$dir/1.log" 2>&1 &
p1=$!
wait $p0; c0=$?
wait $p1; c1=$?
if [ $c0 -ne 0 ] || [ $c1 -ne 0 ]; then
  echo "FAIL: ranks exited $c0 and $c1"; cat "$dir/0.log" "$dir/1.log"; exit 1
fi
check() {
/usr/bin/python3 - "$1" "$delay" "$rate" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
d = r["distributed"]
delay, rate = float(sys.argv[2]) / 1e3, float(sys.argv[3]) * 1e6 / 8
# Any all-reduce of n bytes over 2 ranks has each rank send at least n / 2
# bytes, after at least one one-way delay: a lower bound the shaped link
# sets, far above what loopback takes (about 1 ms for 2.7 MB here).
bound = max(delay, d["gradient_bytes"] / 2 / rate)
print(f'state {r["state"]}, ranks {d["ranks"]}, all-reduce {d["allreduce_seconds"]*1e3:.2f} ms '
      f'per step for {d["gradient_bytes"]} bytes; the link allows no less than {bound*1e3:.2f} ms')
assert r["state"] == "ok", r.get("message")
assert d["ranks"] == 2 and d["engine"] == sys.argv[4], d["engine"]
assert d["allreduce_seconds"] >= bound, "the all-reduce did not cross the shaped link"
print("PASS")
PY
}
check "$dir/r.json" gloo || exit 1
if command -v mpirun >/dev/null; then
  netns_mpirun "$nnbench" "${args[@]/gloo/mpi}" --out "$dir/m.json" >"$dir/m.log" 2>&1 ||
    { echo "FAIL: mpirun across the namespaces"; cat "$dir/m.log"; exit 1; }
  check "$dir/m.json" mpi || exit 1
else
  echo "no mpirun: Open MPI across the namespaces not checked"
fi
