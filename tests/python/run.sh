#!/usr/bin/env bash
# The Python side's checks, as ctest runs them: `run.sh pytest|ruff|mypy`
# (and `pytest-torch`, the PyTorch engine's tests in Debian's python3;
# `pytest-mxnet`, the MXNet engine's tests in the mxnet environment),
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
  pytest-torch)
    # The PyTorch engine's tests need torch, which the tools environment
    # lacks: Debian's python3 with python3-torch and python3-pytest.
    # Without torch the file would skip itself: here that is a failure.
    /usr/bin/python3 -c "import torch" || {
      echo "no torch in /usr/bin/python3: run scripts/setup test" >&2
      exit 1
    }
    cd "$root/tests/python"
    exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \
      test_pytorch_transformer.py
    ;;
  pytest-mxnet)
    # The MXNet engine's tests need mxnet, whose environment (scripts/setup
    # mxnet) pins numpy below 1.24 and has no pytest: its python runs
    # Debian's python3-pytest (scripts/setup test), on the path only while
    # pytest is imported, so that mxnet finds none of Debian's packages
    # (scipy, numpy); no plugin autoload, which would import those that
    # Debian's packages register.
    mxpy=$venvs/mxnet/bin/python
    dist=/usr/lib/python3/dist-packages
    if [ ! -x "$mxpy" ]; then
      echo "no mxnet environment ($venvs/mxnet): run scripts/setup mxnet" >&2
      exit 1
    fi
    if [ ! -d "$dist/pytest" ]; then
      echo "no Debian python3-pytest ($dist/pytest): run scripts/setup test" >&2
      exit 1
    fi
    # Without mxnet the file would skip itself: here that is a failure.
    "$mxpy" -c "import mxnet" || {
      echo "no mxnet in $mxpy: run scripts/setup mxnet" >&2
      exit 1
    }
    cd "$root/tests/python"
    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 exec "$mxpy" -c "
import sys
sys.path.append('$dist')
import pytest
sys.path.remove('$dist')
sys.exit(pytest.main(sys.argv[1:]))" -q -p no:cacheprovider test_mxnet_transformer.py
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
    echo "usage: tests/python/run.sh pytest|pytest-torch|pytest-mxnet|ruff|mypy" >&2
    exit 2
    ;;
esac
