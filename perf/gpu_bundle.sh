#!/usr/bin/env bash
# A build of nnbench for a GPU machine that has CUDA PyTorch and JAX in its
# own Python but no Debian packages and no network (the `device` machine
# docs/performance.md's GPU sections ran on): a release build without
# LibTorch and oneDNN, its shared libraries beside it (an RPATH of
# $ORIGIN/../lib, the old kind, which serves their own dependencies too),
# Keras 3 and what it imports as unpacked wheels for that machine's Python,
# and interpreter wrappers for the pytorch and jax engines.
#   [BUNDLE=build/gpu-bundle] [PY=3.12] perf/gpu_bundle.sh
# On the GPU machine, from the repository root:
#   NNBENCH_VENVS=$PWD/build/gpu-bundle/venvs NNBENCH_FRAMEWORKS=$PWD/frameworks \
#     build/gpu-bundle/bin/nnbench ...
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${BUNDLE:-build/gpu-bundle}
PY=${PY:-3.12}

cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNNBENCH_BUILD_TESTS=OFF -DNNBENCH_WITH_TORCH=OFF -DNNBENCH_WITH_ONEDNN=OFF \
  -DCMAKE_BUILD_RPATH='$ORIGIN/../lib' \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags >/dev/null
cmake --build build/gpu -j "$(nproc)" --target nnbench

rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib" "$BUNDLE/site" "$BUNDLE/fallback"
cp build/gpu/bin/nnbench "$BUNDLE/bin/"
# Every library the binary links but the C and C++ runtimes, which the
# GPU machine's newer system has; one ldd cannot find stops the bundle.
if ldd build/gpu/bin/nnbench | grep 'not found'; then
  echo "gpu_bundle: libraries not found (above)" >&2
  exit 1
fi
ldd build/gpu/bin/nnbench | awk '$3 ~ /^\// {print $3}' |
  grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libpthread|libdl|librt)\.so' |
  while read -r lib; do cp -L "$lib" "$BUNDLE/lib/"; done

# Keras 3 for the jax engine, its versions frameworks/jax/requirements.txt's;
# the packages the machine's Python may lack go after its own on the path.
pin() { grep -iE "^$1==" frameworks/jax/requirements.txt; }
wheels() {  # DIR PACKAGE...: unpacked binary wheels for Python $PY
  local dir=$1 tmp
  shift
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version "$PY" --platform manylinux2014_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    -d "$tmp" "$@"
  for w in "$tmp"/*.whl; do python3 -m zipfile -e "$w" "$dir"; done
  rm -rf "$tmp"
}
wheels "$BUNDLE/site" "$(pin keras)" "$(pin namex)" "$(pin optree)"
wheels "$BUNDLE/fallback" "$(pin absl-py)" "$(pin rich)" "$(pin markdown-it-py)" \
  "$(pin mdurl)" "$(pin Pygments)" "$(pin h5py)" "$(pin packaging)"
cat >"$BUNDLE/site/sitecustomize.py" <<'EOF'
# perf/gpu_bundle.sh: the packages the machine's Python may lack, after its
# own on the path so that its own win.
import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "fallback"))
EOF
for engine in pytorch jax; do
  mkdir -p "$BUNDLE/venvs/$engine/bin"
  cat >"$BUNDLE/venvs/$engine/bin/python" <<'EOF'
#!/bin/sh
# The machine's own Python, with the bundle's Keras (perf/gpu_bundle.sh).
site=$(cd "$(dirname "$0")/../../../site" && pwd)
PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" exec python3 "$@"
EOF
  chmod +x "$BUNDLE/venvs/$engine/bin/python"
done

# One file to carry to the machine (its Python's tarfile unpacks it:
# python3 -m tarfile -e build/gpu-bundle.tar.xz build/).
XZ_OPT='-9 -T0' tar -C "$(dirname "$BUNDLE")" -cJf "$BUNDLE.tar.xz" "$(basename "$BUNDLE")"
ls -l "$BUNDLE.tar.xz"
