"""bandwidth.py: a device's read bandwidth from queued sums and one wait a
pass, on a fake device whose sums take a known time; the worker's op."""
from __future__ import annotations

import time
from typing import List

import bandwidth
import worker


class Queue:
    """A device whose queued sums run when waited for, 2 ms each."""

    def __init__(self) -> None:
        self.queued = 0
        self.waits: List[int] = []

    def read(self) -> None:
        self.queued += 1

    def wait(self) -> None:
        self.waits.append(self.queued)
        time.sleep(0.002 * self.queued)
        self.queued = 0


def test_each_pass_queues_its_calls_and_waits_once() -> None:
    q = Queue()
    r = bandwidth.measure(q.read, q.wait, 2_000_000, "fake")
    # One untimed call, then PASSES passes of CALLS calls each.
    assert q.waits == [1] + [bandwidth.CALLS] * bandwidth.PASSES
    # 2e6 bytes in at least 2 ms a sum: at most 1 GB/s, and a pass's
    # bookkeeping is far below the 20 ms it sleeps.
    assert 0.8 <= r["read_gbs"] <= 1.0
    assert r["array_bytes"] == 2_000_000 and r["passes"] == bandwidth.PASSES
    assert "fake" in r["method"]
    assert r["seconds"] >= 0.002 * (1 + bandwidth.CALLS * bandwidth.PASSES)


def test_the_array_is_a_gib_or_an_eighth_of_the_free_memory() -> None:
    assert bandwidth.array_bytes(140 << 30) == 1 << 30
    assert bandwidth.array_bytes(4 << 30) == 512 << 20
    assert bandwidth.array_bytes((512 << 20) + 3 * 8) == (64 << 20) + 0
    # Under 64 MiB to spare: no measurement rather than one in the caches.
    assert bandwidth.array_bytes(511 << 20) == 0


class Plain:
    pass


class OnDevice:
    def device_bandwidth(self) -> dict:
        return {"read_gbs": 4000.0}


def test_the_op_gives_the_engines_figure_or_none() -> None:
    assert worker.Worker(Plain()).handle({"op": "bandwidth"}) == {"bandwidth": {}}  # type: ignore[arg-type]
    assert worker.Worker(OnDevice()).handle(  # type: ignore[arg-type]
        {"op": "bandwidth"}) == {"bandwidth": {"read_gbs": 4000.0}}
