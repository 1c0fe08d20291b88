# shellcheck shell=bash
# Sourced by the perf/ scripts after they cd to the repository root: the
# binary under test, the framework environments, the alternation of sides
# over rounds, and a run's figures read from its results JSON. It sets no
# shell options: gpu.sh, gpu_generation.sh and gpu_overhead.sh go on past
# a failed step on purpose, the others stop at the first (set -e).
# shellcheck source=scripts/paths
. scripts/paths

# The nnbench binary: $NNBENCH, else the release build's. The perf
# executables (bare_torch_mlp, allreduce_bandwidth, scaling_check) are
# built into the same folder (CMAKE_RUNTIME_OUTPUT_DIRECTORY), so perf_bin
# follows NNBENCH to the build it names.
NNBENCH=${NNBENCH:-$(nnbench_bin release)}
# shellcheck disable=SC2034  # read by the scripts that source this file
perf_bin=$(dirname "$NNBENCH")
# The framework environments ($NNBENCH_VENVS or the XDG default), where
# the peers find each framework's interpreter.
# shellcheck disable=SC2034  # read by the scripts that source this file
venvs=$(nnbench_venvs)

# alternate ROUNDS FN SIDE...: runs FN ROUND SIDE for each side in turn,
# the whole list ROUNDS times (A B A B ...), so that the drifts of a shared,
# noisy machine fall on every side alike. A side of several words reaches
# FN as several arguments ("resnet-56 32 v1" -> FN ROUND resnet-56 32 v1).
alternate() {
  local rounds=$1 fn=$2 round side
  shift 2
  for round in $(seq "$rounds"); do
    for side in "$@"; do
      # shellcheck disable=SC2086  # a side's words are FN's arguments
      "$fn" "$round" $side
    done
  done
}

# grid LIST...: every combination of one word from each list, one a line,
# the first list outermost (the order nested for loops give): the sides
# for alternate when each round runs every model with every setting.
grid() {
  local head=$1 rest x y
  shift
  if [ $# -eq 0 ]; then
    for x in $head; do echo "$x"; done
    return 0
  fi
  rest=$(grid "$@")
  # An empty list: no combinations (as an empty for loop runs nothing).
  [ -n "$rest" ] || return 0
  for x in $head; do
    while IFS= read -r y; do echo "$x $y"; done <<<"$rest"
  done
}

# result FILE EXPR: prints the Python expression EXPR on r, the first
# result of the results JSON FILE (what nnbench run/infer --out write),
# with median_ms() at hand; one interpreter start for all of a line's
# figures. The only place that opens a run's JSON for its median.
result() {
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
def median_ms():  # the median step: results[0].stats_seconds.median, in s
    return r["stats_seconds"]["median"] * 1e3
print(eval(sys.argv[2]))' "$1" "$2"
}

# median_ms FILE: the run's median step in ms, 3 decimals ("12.345").
median_ms() { result "$1" '"%.3f" % median_ms()'; }

# stored_runs DB: the ids of the runs stored in DB, oldest first (the
# first column of `nnbench results list` below its two header lines).
stored_runs() { "$NNBENCH" results --db "$1" list | awk 'NR > 2 {print $1}'; }

# A step of a script that goes on past failures (gpu.sh,
# gpu_generation.sh): its command, exit status and seconds, in the log.
step() {
  local t0=$SECONDS
  echo "== $*"
  "$@"
  echo "== exit $? after $((SECONDS - t0)) s"
}
