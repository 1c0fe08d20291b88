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
import argparse
import statistics
import sys
import time
from typing import Callable, Iterable, List, Sequence, Tuple

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


def time_generations(prefill: Callable[[], Sequence[int]],
                     decode: Callable[..., Sequence[int]], new_tokens: int,
                     warmup: int = 1,
                     repetitions: int = 5) -> Tuple[float, float, List[int]]:
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


def run_generations(a: argparse.Namespace, prefill: Callable[[], Sequence[int]],
                    decode: Callable[..., Sequence[int]], label: str) -> List[int]:
    """One set of timed generations (a.warmup, then a.repetitions), printed
    as "LABEL: " and generation_summary's words; with --serve, one such set
    for each line read from stdin until its end, each printed as it ends,
    so that perf/generation_ab.py can alternate this loop with an engine's
    worker, both kept alive ("ready" first, once the loop is set up).
    Returns row 0's tokens of the last one."""
    row0: List[int] = []
    if a.serve:  # set up: the driver starts timing the other side only now
        print("ready", flush=True)
    for _ in sys.stdin if a.serve else [""]:
        ttft, tpot, row0 = time_generations(prefill, decode, a.new_tokens,
                                            a.warmup, a.repetitions)
        print(f"{label}: {generation_summary(ttft, tpot, a.repetitions)}", flush=True)
    return row0


def generation_summary(ttft: float, tpot: float, repetitions: int) -> str:
    """The end of a generation peer's line; perf/generation_peers.sh reads
    "ttft median X ms" and "tpot median Y ms", so keep those words."""
    return (f"ttft median {ttft * 1e3:.2f} ms, tpot median {tpot * 1e3:.3f} ms "
            f"over {repetitions} generations")


def generation_parser(description: str,
                      models: Iterable[str]) -> argparse.ArgumentParser:
    """The generation peers' shared options (nnbench generate's, with its
    defaults: pp512/tg128, batch 1, one warm-up and five timed
    generations); models: the peer's model names."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(models), default="gpt2-small")
    p.add_argument("--prompt", type=int, default=512, help="prompt tokens")
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=1, help="untimed generations")
    p.add_argument("--repetitions", type=int, default=5, help="timed generations")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--check", action="store_true",
                   help="first compare the first cached tokens with a "
                        "recomputation without a cache")
    p.add_argument("--serve", action="store_true",
                   help="time one set of generations per line read from "
                        "stdin, until its end (perf/generation_ab.py)")
    return p


def check_generation_arguments(p: argparse.ArgumentParser, a: argparse.Namespace,
                               positions: int) -> None:
    """Each shared option's bound (positions: the model's learned
    positions), as an argparse error naming it."""
    for ok, why in ((a.prompt >= 1, "--prompt must be at least 1"),
                    (a.new_tokens >= 2, "--new-tokens must be at least 2"),
                    (a.prompt + a.new_tokens <= positions,
                     f"--prompt + --new-tokens ({a.prompt + a.new_tokens}) exceed "
                     f"{a.model}'s {positions} learned positions"),
                    (1 <= a.batch <= 64, "--batch must be 1 to 64"),
                    (a.threads >= 1, "--threads must be at least 1"),
                    (a.warmup >= 0, "--warmup must be at least 0"),
                    (a.repetitions >= 1, "--repetitions must be at least 1"),
                    (a.seed >= 0, "--seed must be at least 0")):
        if not ok:
            p.error(why)
