#!/usr/bin/env bash
# Runs a program as 2 ranks under mpirun, with a fresh Gloo rendezvous file
# (a stale one would make Gloo's ranks meet the wrong run).
# Usage: run_ranks.sh NPROC PROGRAM ARGS...
set -euo pipefail
n=$1
shift
dir=$(mktemp -d /tmp/nnbench-dist-test-XXXXXX)
trap 'rm -rf "$dir"' EXIT
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
mpirun "${root[@]}" --oversubscribe --bind-to none -np "$n" \
  -x NNBENCH_RENDEZVOUS="file:$dir/store" "$@"
