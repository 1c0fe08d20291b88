set -u
t0=$SECONDS
python3 -m tarfile -e build/gpu-bundle.tar.xz build/ 2>&1 | grep -v -i deprecat | tail -2
chmod +x build/gpu-bundle/bin/* build/gpu-bundle/venvs/*/bin/python
export NNBENCH_VENVS=$PWD/build/gpu-bundle/venvs NNBENCH_FRAMEWORKS=$PWD/frameworks N=$PWD/build/gpu-bundle/bin/nnbench
timeout 60 $N generate --model gpt2-small --backend pytorch --device cuda:0 --out $OUT/pytorch-1.json 2>&1 | grep -v warning | tail -3
echo "== bert after $((SECONDS - t0)) s"
timeout 230 $N suite suites/gpu-bert.toml --db $OUT/bert.db --out $OUT/bert.json 2>&1 | grep -v warning | tail -16
echo "done after $((SECONDS - t0)) s"
