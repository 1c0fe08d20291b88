#!/usr/bin/env bash
# mpirun's launch agent (plm_rsh_agent) for ranks in network namespaces:
# runs the command mpirun would run over ssh inside the namespace that
# holds the host's address (tests/distributed/netns_lib.sh's two).
host=$1
shift
case "$host" in
  10.231.0.1) ns=$NNBENCH_NETNS_A ;;
  10.231.0.2) ns=$NNBENCH_NETNS_B ;;
  *) echo "netns_agent: unknown host $host" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" sh -c "$*"
