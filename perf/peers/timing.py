"""The peers' timing loop, written once, so that every plain loop is timed
alike and as nnbench times its own steps: a warm-up of at least 5 steps
and 1 s (nnbench's default), then at least min_iters steps and min_time
seconds measured, each step alone between two time.perf_counter() reads.

time_generations times a generation as nnbench generate does (docs/
generation.md): the prefill (time to first token) and each later token
alone, whole generations of warm-up first.

A step must return only once its work is done (its loss read to the host,
as nnbench's worker does): on a GPU that read is the step's
synchronisation, so the time includes it. Standard library only: the
peers run in each framework's own environment. The peers import it from
their own folder, which Python puts first on sys.path for a script.
"""
import statistics
import time

WARMUP_STEPS, WARMUP_SECONDS = 5, 1.0


def time_steps(step, min_iters, min_time):
    """The seconds of each measured step; step(i) gets the step's number,
    counted from the first warm-up step (the peers pick batch i % 4)."""
    i, t0 = 0, time.perf_counter()
    while i < WARMUP_STEPS or time.perf_counter() - t0 < WARMUP_SECONDS:
        step(i)
        i += 1
    samples, t0 = [], time.perf_counter()
    while len(samples) < min_iters or time.perf_counter() - t0 < min_time:
        t = time.perf_counter()
        step(i)
        samples.append(time.perf_counter() - t)
        i += 1
    return samples


def summary(samples):
    """The end of a peer's line; perf/compare_peers.sh reads the median
    from "median X ms", so keep those words."""
    return (f"median {statistics.median(samples) * 1e3:.3f} ms "
            f"over {len(samples)} steps")


def time_generations(prefill, decode, new_tokens, warmup=1, repetitions=5):
    """The median time to first token and the median of each repetition's
    mean time per later token, in seconds, and row 0's tokens of the last
    generation: prefill() starts a generation (a new cache) and returns the
    first new tokens, one per row, as host ints; decode(tokens) feeds them
    and returns the next ones."""
    ttft, tpot = [], []
    for rep in range(warmup + repetitions):
        t0 = time.perf_counter()
        nxt = prefill()
        t1 = time.perf_counter()
        first, times, row0 = t1 - t0, [], [int(nxt[0])]
        for _ in range(1, new_tokens):
            t0 = t1
            nxt = decode(nxt)
            t1 = time.perf_counter()
            times.append(t1 - t0)
            row0.append(int(nxt[0]))
        if rep >= warmup:
            ttft.append(first)
            tpot.append(sum(times) / len(times))
    return statistics.median(ttft), statistics.median(tpot), row0


def generation_summary(ttft, tpot, repetitions):
    """The end of a generation peer's line; perf/generation_peers.sh reads
    "ttft median X ms" and "tpot median Y ms", so keep those words."""
    return (f"ttft median {ttft * 1e3:.2f} ms, tpot median {tpot * 1e3:.3f} ms "
            f"over {repetitions} generations")
