# Two network namespaces joined by a veth pair, for the data-parallel tests
# and benchmarks (sourced; bash). netns_up NAME_A NAME_B sets A=10.231.0.1,
# B=10.231.0.2 on interfaces va$$ and vb$$ and returns 1 (saying why) when
# namespaces cannot be made; netns_shape RATE_MBIT DELAY_MS shapes both
# ends (netem; tbf, rate only, where the kernel has no netem) and sets
# SHAPED_DELAY to the delay actually added; netns_down removes them.
NETNS_A="" NETNS_B=""
VA=va$$ VB=vb$$
netns_up() {
  command -v ip >/dev/null || { echo "no ip command (iproute2)"; return 1; }
  command -v tc >/dev/null || { echo "no tc command (iproute2)"; return 1; }
  ip netns add "$1" 2>/dev/null ||
    { echo "cannot create network namespaces (needs root / CAP_SYS_ADMIN)"; return 1; }
  NETNS_A=$1 NETNS_B=$2
  ip netns add "$NETNS_B"
  ip link add "$VA" netns "$NETNS_A" type veth peer name "$VB" netns "$NETNS_B"
  ip -n "$NETNS_A" addr add 10.231.0.1/24 dev "$VA"
  ip -n "$NETNS_B" addr add 10.231.0.2/24 dev "$VB"
  for ns in "$NETNS_A" "$NETNS_B"; do ip -n "$ns" link set lo up; done
  ip -n "$NETNS_A" link set "$VA" up
  ip -n "$NETNS_B" link set "$VB" up
}
netns_shape() {
  local rate=$1 delay=$2 shape
  shape=(netem delay "${delay}ms" rate "${rate}mbit")
  SHAPED_DELAY=$delay
  ip netns exec "$NETNS_A" tc qdisc del dev "$VA" root 2>/dev/null || true
  ip netns exec "$NETNS_B" tc qdisc del dev "$VB" root 2>/dev/null || true
  if ! ip netns exec "$NETNS_A" tc qdisc add dev "$VA" root "${shape[@]}" 2>/dev/null; then
    echo "no netem in this kernel: shaping the rate only (tbf), no added delay"
    SHAPED_DELAY=0
    # A burst of 1 ms at the rate (at least 64 KiB) keeps tbf from
    # throttling below it at high rates.
    local burst=$(( rate * 1000 / 8 / 1000 ))
    [ "$burst" -lt 65536 ] && burst=65536
    shape=(tbf rate "${rate}mbit" burst "$burst" latency 100ms)
    ip netns exec "$NETNS_A" tc qdisc add dev "$VA" root "${shape[@]}"
  fi
  ip netns exec "$NETNS_B" tc qdisc add dev "$VB" root "${shape[@]}"
}
netns_down() {
  [ -n "$NETNS_A" ] && ip netns del "$NETNS_A" 2>/dev/null
  [ -n "$NETNS_B" ] && ip netns del "$NETNS_B" 2>/dev/null
  return 0
}
# mpirun with one rank in each namespace (a hostfile of their addresses,
# launched through netns_agent.sh, TCP over the veth link only); started
# in namespace A, where mpirun counts 10.231.0.1 as its own host.
netns_mpirun() {
  local dir hosts root=()
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  hosts=$(mktemp /tmp/nnbench-hosts-XXXXXX)
  printf "10.231.0.1 slots=1\n10.231.0.2 slots=1\n" >"$hosts"
  [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
  NNBENCH_NETNS_A=$NETNS_A NNBENCH_NETNS_B=$NETNS_B \
    ip netns exec "$NETNS_A" mpirun "${root[@]}" -np 2 --hostfile "$hosts" \
    --mca plm_rsh_agent "$dir/netns_agent.sh" -x NNBENCH_NETNS_A -x NNBENCH_NETNS_B \
    --mca oob_tcp_if_include 10.231.0.0/24 --mca btl tcp,self \
    --mca btl_tcp_if_include 10.231.0.0/24 --bind-to none "$@"
  local rc=$?
  rm -f "$hosts"
  return $rc
}
