# shellcheck shell=bash
# Sourced by the scripts that time nnbench's framework engines against
# the frameworks' own loops (worker_overhead.sh, tensorflow_xla.sh,
# gpu_overhead.sh, generation_peers.sh), after perf/lib.sh's binary,
# environments and
# median_ms: one nnbench run printed as its median step, the peers' model
# names and line prefix, and the environment nnbench gives its workers
# (the OpenMP OpenBLAS first on LD_LIBRARY_PATH, the malloc setting),
# given to the plain loops too.
# shellcheck source=perf/lib.sh
. perf/lib.sh
# One nnbench training run at batch 128 (ROUND MODEL ENGINE [run options]),
# printed as its median step; the caller sets $tmp.
nnbench() {
  local round=$1 model=$2 engine=$3
  shift 3
  # shellcheck disable=SC2154  # tmp: the caller's scratch folder
  "$NNBENCH" run --backend "$engine" --model "$model" --batch 128 \
    --on-contention warn --out "$tmp/r.json" "$@" >/dev/null 2>&1
  echo "round $round $model nnbench $engine: $(median_ms "$tmp/r.json") ms"
}
# The peers' name of a zoo model: mlp or resnet56.
peer_model() { if [ "$1" = resnet-56 ]; then echo resnet56; else echo mlp; fi; }
# A plain loop's line, marked with its round: ... | plain ROUND.
plain() { sed "s/^/round $1 plain /"; }
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# nnbench's workers keep freed memory (GLIBC_TUNABLES, as nnbench's own
# process does with mallopt; NNBENCH_SYSTEM_MALLOC=1 opts out): so do the
# plain loops. nnbench itself then inherits the same setting.
if [ -z "${NNBENCH_SYSTEM_MALLOC:-}" ]; then
  export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647
fi
