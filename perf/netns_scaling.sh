#!/usr/bin/env bash
# Data parallel across two "machines" (docs/performance.md): network
# namespaces joined by veth, shaped per RATES (Mbit/s; netem where the
# kernel has it, else tbf: rate only), one Gloo rank in each. Per rate: the
# all-reduce sweep across the link and its ring-model fit, 2-rank training
# of each model (1 thread per rank, strong scaling), and the model's
# prediction against it from a 1-process run measured just before; the
# all-reduce sweep over Open MPI too (ALLREDUCE_ONLY=1: sweeps only). Needs
# root; nothing else may run meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/distributed/netns_lib.sh
. perf/lib.sh
# Absolute paths: the Open MPI ranks start through mpirun's launch agent
# (netns_mpirun), which need not run them in this folder.
absolute() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
nnbench=$(absolute "$NNBENCH")
tools=$(absolute "$perf_bin")
out=${OUT:-/tmp/nnbench-netns}
mkdir -p "$out"
trap netns_down EXIT
netns_up nnbench_bench_a nnbench_bench_b
batch=${BATCH:-128}
common=(--backend onednn --threads 1 --batch "$batch" --warmup-time 1
        --min-time "${MIN_TIME:-4}" --on-contention warn)
# Two ranks, one per namespace: ranks A B COMMAND... (rank 0 writes).
ranks() {
  local port=$((29600 + RANDOM % 300))
  ip netns exec "$NETNS_A" env NNBENCH_RANK=0 NNBENCH_WORLD_SIZE=2 \
    NNBENCH_RENDEZVOUS=tcp:10.231.0.1:$port GLOO_SOCKET_IFNAME="$VA" "$@" &
  local p0=$!
  ip netns exec "$NETNS_B" env NNBENCH_RANK=1 NNBENCH_WORLD_SIZE=2 \
    NNBENCH_RENDEZVOUS=tcp:10.231.0.1:$port GLOO_SOCKET_IFNAME="$VB" "$@" \
    >/dev/null 2>&1 &
  local p1=$!
  wait $p0 || true
  wait $p1 || true
}
for rate in ${RATES:-10000 1000}; do
  netns_shape "$rate" 0
  ranks "$tools/allreduce_bandwidth" gloo >"$out/allreduce-$rate.txt" 2>/dev/null
  fit=$(sed -n 's/ring model fit: alpha \([0-9.]*\) us per step, beta \([0-9.]*\) ns.*/\1 \2/p' "$out/allreduce-$rate.txt")
  echo "== $rate Mbit/s: $(head -1 "$out/allreduce-$rate.txt"), fit alpha_us beta_ns: $fit"
  cat "$out/allreduce-$rate.txt"
  if command -v mpirun >/dev/null; then
    netns_mpirun "$tools/allreduce_bandwidth" mpi >"$out/allreduce-mpi-$rate.txt" 2>/dev/null || true
    echo "== $rate Mbit/s, Open MPI across the namespaces"
    cat "$out/allreduce-mpi-$rate.txt"
  fi
  [ "${ALLREDUCE_ONLY:-0}" = 1 ] && continue
  for model in ${MODELS:-resnet-56 alexnet-r}; do
    "$nnbench" run --model "$model" "${common[@]}" \
      --out "$out/$model-1x1-$rate.json" >/dev/null 2>&1 || true
    ranks "$nnbench" run --model "$model" "${common[@]}" \
      --distributed gloo --out "$out/$model-2x1-$rate.json" >/dev/null 2>&1
    # shellcheck disable=SC2086  # fit is two numbers, two arguments
    "$tools/scaling_check" $fit "$out/$model-1x1-$rate.json" \
      "$out/$model-2x1-$rate.json" || true
  done
done
