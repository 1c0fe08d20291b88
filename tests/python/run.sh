#!/usr/bin/env bash
# The Python side's checks, as ctest runs them: `run.sh pytest|ruff|mypy`,
# in the tools environment that `scripts/setup test` makes from
# tests/python/requirements.txt (in the same folder as the frameworks'
# environments). A missing environment fails, saying how to make it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/scripts/paths"
venvs=$(nnbench_venvs)
py=$venvs/tools/bin/python
if [ ! -x "$py" ]; then
  echo "no Python tools environment ($venvs/tools): run scripts/setup test" >&2
  exit 1
fi
cache=${TMPDIR:-/tmp}/nnbench-python-checks-$(id -u)
case "${1:-}" in
  pytest)
    cd "$root/tests/python"
    exec "$py" -m pytest -q -p no:cacheprovider .
    ;;
  ruff)
    cd "$root"
    exec "$py" -m ruff check --no-cache frameworks tests perf
    ;;
  mypy)
    cd "$root"
    # The engines one by one: each is a module named `engine`.
    "$py" -m mypy --cache-dir "$cache" --ignore-missing-imports \
      frameworks/common/*.py tests/python/*.py
    for e in frameworks/*/engine.py tests/worker/*/engine.py; do
      "$py" -m mypy --cache-dir "$cache" --ignore-missing-imports \
        --follow-imports=silent "$e"
    done
    ;;
  *)
    echo "usage: tests/python/run.sh pytest|ruff|mypy" >&2
    exit 2
    ;;
esac
