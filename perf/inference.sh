#!/usr/bin/env bash
# Inference under MLPerf's LoadGen (docs/performance.md, "Inference"): every
# inference engine on ResNet-56 and ResNet-50 at 2 threads, SingleStream
# (p90 latency) and Offline (samples/s), fp32 and, where the engine
# quantizes, int8 (calibrated on CALIBRATION seeded synthetic samples: these
# zoo models are untrained). Engines run one after another, interleaved by
# model, on an idle machine. Prints a TSV: model engine precision scenario
# figure LoadGen-verdict state.
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
engines=${ENGINES:-onednn torch onnxruntime openvino}
models=${MODELS:-resnet-56 resnet-50}
duration=${DURATION:-5}
calibration=${CALIBRATION:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
figure() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
f = r["figures"]
if r["state"] != "ok":
    print(f"-\t-\t{r['state']}: {r['message'][:80]}")
elif r["kind"] == "offline":
    print(f"{f['samples_per_second']:.1f} samples/s\t{'VALID' if r['loadgen']['valid'] else 'INVALID'}\tok")
else:
    i = r["percentile_interval"]
    print(f"p90 {f['percentile_latency_seconds']*1e3:.2f} ms [{i['low_seconds']*1e3:.2f}, {i['high_seconds']*1e3:.2f}]"
          f" (ES {f['early_stopping_latency_seconds']*1e3:.2f})\t{'VALID' if r['loadgen']['valid'] else 'INVALID'}\tok")
PY
}
echo -e "model\tengine\tprecision\tscenario\tfigure\tLoadGen\tstate"
for model in $models; do
  batch=32
  [ "$model" = resnet-50 ] && batch=8
  for engine in $engines; do
    for precision in fp32 int8; do
      for scenario in single-stream offline; do
        "$NNBENCH" infer --model "$model" --backend "$engine" --threads 2 \
          --precision "$precision" --scenario "$scenario" --batch "$batch" \
          --min-duration-s "$duration" --calibration-samples "$calibration" \
          --out "$tmp/r.json" > /dev/null 2>&1 || true
        if [ -f "$tmp/r.json" ]; then
          echo -e "$model\t$engine\t$precision\t$scenario\t$(figure "$tmp/r.json")"
          rm -f "$tmp/r.json"
        else
          echo -e "$model\t$engine\t$precision\t$scenario\t-\t-\trefused before running"
        fi
      done
    done
  done
done
