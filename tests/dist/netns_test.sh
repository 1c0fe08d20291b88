#!/usr/bin/env bash
# Two "machines" on this one: network namespaces joined by a veth pair,
# shaped with tc (netem: delay and rate; where the kernel lacks netem, as
# Firecracker VMs do, tbf: rate only), one Gloo rank in each over TCP
# (docs/distributed.md). Checks that the run completes with 2 ranks and
# that its all-reduce took at least what the shaped link allows: the
# traffic crossed it, not loopback. Exits 77 (ctest: skipped), saying why,
# without the rights to make namespaces.
# Usage: netns_test.sh NNBENCH [DELAY_MS] [RATE_MBIT]
set -uo pipefail
nnbench=$1
delay=${2:-5}
rate=${3:-200}
a=nnbench_test_a$$ b=nnbench_test_b$$
skip() { echo "SKIP: $*"; exit 77; }
command -v ip >/dev/null || skip "no ip command (iproute2)"
command -v tc >/dev/null || skip "no tc command (iproute2)"
ip netns add "$a" 2>/dev/null || skip "cannot create network namespaces (needs root / CAP_SYS_ADMIN)"
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; rm -rf "$dir"; }
dir=$(mktemp -d /tmp/nnbench-netns-XXXXXX)
trap cleanup EXIT
set -e
ip netns add "$b"
ip link add va$$ netns "$a" type veth peer name vb$$ netns "$b"
ip -n "$a" addr add 10.231.0.1/24 dev va$$
ip -n "$b" addr add 10.231.0.2/24 dev vb$$
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set va$$ up
ip -n "$b" link set vb$$ up
shape=(netem delay "${delay}ms" rate "${rate}mbit")
if ! ip netns exec "$a" tc qdisc add dev va$$ root "${shape[@]}" 2>/dev/null; then
  echo "no netem in this kernel: shaping the rate only (tbf), no added delay"
  delay=0
  shape=(tbf rate "${rate}mbit" burst 64kb latency 100ms)
  ip netns exec "$a" tc qdisc add dev va$$ root "${shape[@]}"
fi
ip netns exec "$b" tc qdisc add dev vb$$ root "${shape[@]}"
set +e
args=(run --model mnist-mlp --backend reference --threads 1 --batch 16
      --warmup-iters 1 --warmup-time 0 --min-iters 3 --min-time 0
      --on-contention warn --distributed gloo --dist-timeout 30
      --rendezvous tcp:10.231.0.1:29517)
ip netns exec "$a" env NNBENCH_RANK=0 NNBENCH_WORLD_SIZE=2 \
  "$nnbench" "${args[@]}" --gloo-interface va$$ --out "$dir/r.json" >"$dir/0.log" 2>&1 &
p0=$!
ip netns exec "$b" env NNBENCH_RANK=1 NNBENCH_WORLD_SIZE=2 \
  "$nnbench" "${args[@]}" --gloo-interface vb$$ >"$dir/1.log" 2>&1 &
p1=$!
wait $p0; c0=$?
wait $p1; c1=$?
if [ $c0 -ne 0 ] || [ $c1 -ne 0 ]; then
  echo "FAIL: ranks exited $c0 and $c1"; cat "$dir/0.log" "$dir/1.log"; exit 1
fi
/usr/bin/python3 - "$dir/r.json" "$delay" "$rate" <<'PY'
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
assert d["ranks"] == 2 and d["engine"] == "gloo"
assert d["allreduce_seconds"] >= bound, "the all-reduce did not cross the shaped link"
print("PASS")
PY
