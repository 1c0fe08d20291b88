# Sourced by the scripts that time nnbench's framework engines against
# the frameworks' own loops (worker_overhead.sh, tensorflow_xla.sh): the
# environments, a run's median step, and the environment nnbench gives
# its workers (the OpenMP OpenBLAS first on LD_LIBRARY_PATH, the malloc
# setting), given to the plain loops too.
. scripts/paths
venvs=$(nnbench_venvs)
median() { python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["stats_seconds"]["median"]*1e3))' "$1"; }
# One nnbench training run at batch 128 (ROUND MODEL ENGINE [run options]),
# printed as its median step; the caller sets $bin and $tmp.
nnbench() {
  local round=$1 model=$2 engine=$3
  shift 3
  "$bin" run --backend "$engine" --model "$model" --batch 128 \
    --on-contention warn --out "$tmp/r.json" "$@" >/dev/null 2>&1
  echo "round $round $model nnbench $engine: $(median "$tmp/r.json") ms"
}
# The peers' name of a zoo model: mlp or resnet56.
peer_model() { if [ "$1" = resnet-56 ]; then echo resnet56; else echo mlp; fi; }
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# nnbench's workers keep freed memory (GLIBC_TUNABLES, as nnbench's own
# process does with mallopt; NNBENCH_SYSTEM_MALLOC=1 opts out): so do the
# plain loops. nnbench itself then inherits the same setting.
if [ -z "${NNBENCH_SYSTEM_MALLOC:-}" ]; then
  export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647
fi
