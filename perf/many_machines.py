#!/usr/bin/env python3
"""Synthetic result files of many machines, for the scale benchmark of
`nnbench results import`, `report` and `compare` (docs/performance.md,
"Many machines").

From one real run export (`nnbench results export RUN --format json`), N
copies as if from N machines: each gets its own run id, host hash, CPU
name, CPU count, cloud instance and price, and every time sample scaled
by the machine's speed factor (so the rankings have something to find).
The records are synthetic; they measure nnbench's handling of many runs,
never a machine.

    perf/many_machines.py RUN.json 1000 OUT_DIR
"""

import argparse
import copy
import json
import random
from pathlib import Path
from typing import Any

CPUS = [
    ("AMD EPYC 7B12", "Zen 2", ["avx2", "fma"]),
    ("AMD EPYC 9B14", "Zen 4", ["avx2", "fma", "avx512f", "avx512_bf16"]),
    ("AMD EPYC 9B45", "Zen 5", ["avx2", "fma", "avx512f", "avx512_bf16"]),
    ("Intel Xeon Platinum 8481C", "Sapphire Rapids",
     ["avx2", "fma", "avx512f", "amx_bf16"]),
]


def scale_record(record: dict[str, Any], factor: float) -> None:
    """Every time of one result, scaled: samples, medians, throughput."""
    if "samples_seconds" in record:
        record["samples_seconds"] = [s * factor for s in record["samples_seconds"]]
    stats = record.get("stats_seconds")
    if isinstance(stats, dict):
        for k, v in stats.items():
            if isinstance(v, (int, float)) and k not in ("n", "median_ci_coverage"):
                stats[k] = v * factor
    thr = record.get("throughput")
    if isinstance(thr, dict) and isinstance(thr.get("samples_per_second"), (int, float)):
        thr["samples_per_second"] /= factor


def machine(template: dict[str, Any], i: int, rng: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(template)
    name, micro, isa = CPUS[i % len(CPUS)]
    cpus = rng.choice([2, 4, 8, 16, 32, 64])
    factor = rng.uniform(0.3, 3.0) * 2 / cpus ** 0.5
    env = out["environment"]
    env["host"] = f"sha256:{i:016x}"
    env["cpu"] = dict(env.get("cpu", {}), name=name, microarchitecture=micro, isa=isa)
    env["logical_cpus"] = cpus
    env["usable_cpus"] = cpus
    env["instance"] = {
        "name": f"synthetic-{micro.lower().replace(' ', '-')}-{cpus}-{i}",
        "source": "--instance",
        "provider": "synthetic",
        "usd_per_hour": round(0.045 * cpus * rng.uniform(0.6, 1.4), 4),
        "pricing": "synthetic",
        "price_date": "2026-11",
        "price_source": "perf/many_machines.py",
        "vcpus": cpus,
        "gpus": 0,
        "pro_rata_vcpus": False,
    }
    run = out["run"]
    run["id"] = f"{run['id']}-m{i:04d}"
    for r in out["results"]:
        if isinstance(r.get("median_seconds"), (int, float)):
            r["median_seconds"] *= factor
        if isinstance(r.get("samples_per_second"), (int, float)):
            r["samples_per_second"] /= factor
        scale_record(r["record"], factor)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("export", type=Path)
    p.add_argument("machines", type=int)
    p.add_argument("out", type=Path)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if not 1 <= a.machines <= 100000:
        p.error("machines must be between 1 and 100000")
    template = json.loads(a.export.read_text())
    a.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    for i in range(a.machines):
        (a.out / f"machine-{i:04d}.json").write_text(json.dumps(machine(template, i, rng)))


if __name__ == "__main__":
    main()
