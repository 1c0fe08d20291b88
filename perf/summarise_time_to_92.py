#!/usr/bin/python3
"""Markdown rows for docs/performance.md from a perf/time_to_92.sh folder:
one row per nnbench run and per peer run (epochs to target, time to
target, validity), then the MLPerf aggregate per nnbench configuration."""
import json
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1])
print("| run | seed | state | epochs to 92 % | time to 92 % (s) | validity |")
print("|---|---:|---|---:|---:|---|")
aggregates = []
for name in ["onednn-bf16", "onednn-fp32", "torch-fp32"]:
    f = out / f"{name}.json"
    if not f.exists():
        continue
    doc = json.load(open(f))
    for r in doc["runs"]:
        ep = next((e["epoch"] for e in r["epochs"]
                   if e["val_accuracy"] >= r["target"]), None)
        t = r["time_to_target_seconds"]
        why = "; ".join(x["reason"] for x in r["validity"]["reasons"])
        print(f'| nnbench {name} | {r["seed"]} | {r["state"]} | {ep or "-"} | '
              f'{t:.2f} | {"valid" if r["validity"]["valid"] else "invalid: " + why} |'
              if t is not None else
              f'| nnbench {name} | {r["seed"]} | {r["state"]} | - | - | '
              f'{"valid" if r["validity"]["valid"] else "invalid: " + why} |')
    a = doc["aggregate"]
    aggregates.append((name, a))
for f in sorted(out.glob("peer-*.txt")):
    text = f.read_text()
    seed = re.search(r"seed (\d+)", text).group(1)
    epochs = re.findall(r"epoch (\d+): train ([\d.]+) s, test accuracy ([\d.]+)", text)
    hit = re.search(r"reached [\d.]+ after ([\d.]+) s", text)
    ep = next((e for e, _, acc in epochs if float(acc) >= 0.92), "-")
    print(f'| PyTorch peer, {f.stem[5:]} | {seed} | '
          f'{"converged" if hit else "not_converged"} | {ep} | '
          f'{hit.group(1) if hit else "-"} | not judged |')
print()
print("| nnbench configuration | MLPerf aggregate | runs | converged | mean time to 92 % (s) |")
print("|---|---|---:|---:|---:|")
for name, a in aggregates:
    mean = f'{a["mean_time_to_target_seconds"]:.2f}' if a["valid"] else "-"
    verdict = "valid" if a["valid"] else f'invalid: {a["reason"]}'
    print(f'| {name} | {verdict} | {a["runs"]} | {a["converged"]} | {mean} |')
