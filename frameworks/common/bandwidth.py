"""The read bandwidth of a device's memory, measured by the engine that
generates there: the ceiling of a generation on a GPU, as nnbench's own
read kernel on the host's memory is on the host (src/machine/bandwidth.h).

The kernel is the framework's sum over one array of fp32, larger than any
GPU's last-level cache (an H200's is 60 MiB); a pass queues CALLS sums and
waits once, so that a launch and the wait are a small part of it; the best
of PASSES passes is kept, as STREAM keeps its best.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Dict

CALLS = 10
PASSES = 5
MIN_BYTES = 64 << 20
MAX_BYTES = 1 << 30


def array_bytes(free_bytes: int) -> int:
    """1 GiB, or an eighth of the device's free memory where that is less
    (the engine's weights and cache stay); 0 where that is under 64 MiB."""
    n = min(MAX_BYTES, free_bytes // 8) // 4 * 4
    return n if n >= MIN_BYTES else 0


def measure(read: Callable[[], Any], wait: Callable[[], None], nbytes: int,
            what: str) -> Dict[str, Any]:
    """`read()` queues one sum over the `nbytes` array, `wait()` returns
    when every queued one is done. One untimed call first (a compilation,
    the first touch)."""
    start = time.perf_counter()
    read()
    wait()
    best = float("inf")
    for _ in range(PASSES):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            read()
        wait()
        best = min(best, (time.perf_counter() - t0) / CALLS)
    return {"read_gbs": nbytes / best / 1e9, "array_bytes": nbytes,
            "passes": PASSES,
            "method": (f"{what} over {nbytes >> 20} MiB of fp32, {CALLS} calls "
                       f"a pass, the best of {PASSES} passes"),
            "seconds": time.perf_counter() - start}
