#!/usr/bin/env python3
"""A framework engine's worker and its framework's plain decoding loop,
both started once and kept alive, their generations alternated set by set
(perf/generation_ab.sh, docs/performance.md, "Generation beside the
frameworks' own loops").

Why: on a shared VM the memory bandwidth that batch-1 generation is bound
by drifts by 2x within minutes, so one process against the next, each
timed once, differs by more than the 2 % sought. Here both processes
exist throughout; each round runs one set of generations (--warmup
untimed, then --repetitions timed) on each side, a pause between sides
so that the idle side's spinning threads have stopped, and the ratio of
a round's two figures compares runs seconds apart: short sets (one
generation a side by default) and many rounds, since the phases last
tens of seconds (docs/performance.md). The side that goes first
alternates from round to round: with the engine always first, a set
after a pause that runs slower (or faster) than the one after it would
be counted against the engine (every engine measured +3 to +4 % so on a
Zen 5 whose two phases had other speeds, docs/performance.md); the
median of each order's rounds is printed too, their gap being that
order's effect.

The engine's side is nnbench's own worker (frameworks/common/worker.py
with frameworks/ENGINE/engine.py), started as nnbench starts it (fd 3 in,
fd 4 out, NNBENCH_THREADS, PYTHONDONTWRITEBYTECODE) and asked what
nnbench generate asks: hello, a compile for generation with the zoo's
description and seeded weights (zoo_gpt2.py; the same shapes as nnbench's,
another draw), then `generate` requests, which worker.py times as it does
for nnbench: the figures are the ones nnbench's record would hold. Not
in it: nnbench's C++ process around the worker, which holds no clock
during a generation. The plain side is the framework's peer
(peer_generate_*.py) run with --serve: one set per line it reads.

Both sides' time per output token is the median over the set's
generations of each one's mean token time (timing.time_generations; the
worker's inter-token latencies reduced the same way here); the time to
first token the median prefill. Prints each round's figures, then the
median of the rounds' ratios (engine / plain) with a distribution-free
95 % interval for it (order statistics of the ratios, binomial). Run with
the engine's interpreter, from the repository root, with the environment
perf/framework_peers.sh gives (perf/generation_ab.sh does both).
"""
from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Dict, List, Optional, Tuple

import numpy as np

import timing
from zoo_gpt2 import MODELS, gpt2, weights

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "frameworks" / "common"))
import tensors

# The plain loop of each engine: script and its extra options.
PEERS: Dict[str, Tuple[str, List[str]]] = {
    "pytorch": ("peer_generate_torch.py", []),
    "tensorflow": ("peer_generate_keras.py", []),
    "jax": ("peer_generate_keras.py", []),
    "mxnet": ("peer_generate_gluon.py", []),
    "onnxruntime": ("peer_generate_onnx.py", ["--runtime", "onnxruntime"]),
    "openvino": ("peer_generate_onnx.py", ["--runtime", "openvino"]),
}
PAUSE_SECONDS = 1.0  # between sides: OpenMP's and ONNX Runtime's spin-waits end in ms


class Worker:
    """nnbench's worker for one engine, driven over its protocol."""

    def __init__(self, python: str, engine: str, threads: int, log: IO[str]):
        req_r, self.req_w = os.pipe()
        self.rep_r, rep_w = os.pipe()
        env = {**os.environ, "NNBENCH_THREADS": str(threads),
               "PYTHONDONTWRITEBYTECODE": "1"}

        def fds() -> None:  # in the child: fd 3 requests, fd 4 replies
            high = [fcntl.fcntl(f, fcntl.F_DUPFD, 10) for f in (req_r, rep_w)]
            os.dup2(high[0], 3)  # via fds above 4: req_r or rep_w may be 3 or 4
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen(
            [python, "-u", str(ROOT / "frameworks/common/worker.py"),
             str(ROOT / "frameworks" / engine / "engine.py")],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
            preexec_fn=fds, pass_fds=(3, 4))
        os.close(req_r)
        os.close(rep_w)
        self.replies = os.fdopen(self.rep_r, "r", encoding="utf-8")

    def request(self, op: str, **fields: object) -> dict:
        data = (json.dumps({"op": op, **fields}) + "\n").encode()
        while data:  # a pipe may take a long request in parts
            data = data[os.write(self.req_w, data):]
        line = self.replies.readline()
        if not line:
            raise RuntimeError(f"the worker ended during '{op}' (see its log)")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(f"{op}: {reply.get('state')}: {reply.get('message')}")
        return reply

    def close(self) -> None:
        os.close(self.req_w)  # the end of its requests: the worker returns
        self.proc.wait(timeout=60)


class Plain:
    """A peer with --serve: one set of generations per line written."""

    def __init__(self, python: str, engine: str, a: argparse.Namespace, log: IO[str]):
        script, extra = PEERS[engine]
        env = {**os.environ}
        if engine in ("tensorflow", "jax"):
            env["KERAS_BACKEND"] = engine
        self.proc = subprocess.Popen(
            [python, "-u", str(ROOT / "perf/peers" / script), "--serve",
             "--model", a.model, "--prompt", str(a.prompt),
             "--new-tokens", str(a.new_tokens), "--threads", str(a.threads),
             "--warmup", str(a.warmup), "--repetitions", str(a.repetitions), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, text=True)
        # Its set-up (building and loading the model) must not overlap the
        # first round.
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip() == "ready":
                return
        raise RuntimeError("the plain loop ended before it was ready (see the log)")

    def generate(self) -> Tuple[float, float, str]:
        """(ttft, tpot) in seconds and the peer's line."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if "tpot median" in line:
                words = line.split()
                ttft = float(words[words.index("ttft") + 2]) / 1e3
                tpot = float(words[words.index("tpot") + 2]) / 1e3
                return ttft, tpot, line.strip()
        raise RuntimeError("the plain loop ended (see the log)")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def median_interval(ratios: List[float], level: float = 0.95) -> Optional[Tuple[float, float]]:
    """The distribution-free interval for the median: order statistics
    k and n-1-k, k the largest with P(Binomial(n, 1/2) <= k) <= (1-level)/2;
    None when n is too small for one at this level."""
    n = len(ratios)
    s = sorted(ratios)
    tail, k = 0.0, -1
    for j in range(n):
        tail += math.comb(n, j) / 2 ** n
        if tail > (1 - level) / 2:
            break
        k = j
    return None if k < 0 else (s[k], s[n - 1 - k])


def arguments() -> argparse.Namespace:
    p = timing.generation_parser(__doc__.splitlines()[0], MODELS)
    p.add_argument("--engine", choices=sorted(PEERS), required=True)
    p.add_argument("--rounds", type=int, default=40)
    p.set_defaults(warmup=0, repetitions=1)  # an uncounted round warms both sides
    p.add_argument("--log", default="generation_ab.log",
                   help="both processes' stderr (and the worker's stdout)")
    a = p.parse_args()
    timing.check_generation_arguments(p, a, MODELS[a.model][4])
    if not 1 <= a.rounds <= 1000:
        p.error("--rounds must be 1 to 1000")
    if a.batch != 1 or a.serve or a.check:
        p.error("runs batch 1 and neither --serve nor --check (run a peer alone for those)")
    return a


def engine_generation(worker: Worker, prompt: List[int], a: argparse.Namespace
                      ) -> Tuple[float, float]:
    """One set on the worker: (ttft, tpot) in seconds, reduced as
    timing.time_generations reduces the plain side's."""
    rep = worker.request("generate", prompts={"rows": [prompt]},
                         new_tokens=a.new_tokens, warmup=a.warmup,
                         repetitions=a.repetitions)
    tpot = statistics.median(statistics.fmean(t) for t in rep["itl"]["rows"])
    return statistics.median(rep["ttft"]), tpot


def alternate(worker: Worker, plain: Plain, prompt: List[int],
              a: argparse.Namespace) -> List[Tuple[float, float]]:
    """The rounds' ratios (tpot, ttft), engine / plain, each printed; one
    round first on both sides, not counted (the first calls plan graphs
    and touch buffers)."""
    engine_generation(worker, prompt, a)
    time.sleep(PAUSE_SECONDS)
    plain.generate()
    time.sleep(PAUSE_SECONDS)
    ratios: List[Tuple[float, float]] = []
    for r in range(a.rounds):
        if r % 2 == 0:  # the engine first
            et, ep = engine_generation(worker, prompt, a)
            time.sleep(PAUSE_SECONDS)
            pt, pp, _ = plain.generate()
        else:
            pt, pp, _ = plain.generate()
            time.sleep(PAUSE_SECONDS)
            et, ep = engine_generation(worker, prompt, a)
        time.sleep(PAUSE_SECONDS)
        ratios.append((ep / pp, et / pt))
        print(f"round {r + 1} ({'engine' if r % 2 == 0 else 'plain'} first): "
              f"tpot {ep * 1e3:.3f} / {pp * 1e3:.3f} ms ({(ep / pp - 1) * 100:+.1f} %), "
              f"ttft {et * 1e3:.2f} / {pt * 1e3:.2f} ms ({(et / pt - 1) * 100:+.1f} %)",
              flush=True)
    return ratios


def main() -> int:
    a = arguments()
    python = sys.executable
    model = gpt2(a.model, a.prompt + a.new_tokens)
    vocab = model["input"]["vocab"]
    prompt = np.random.default_rng(a.seed).integers(0, vocab, a.prompt).tolist()
    procs: List[subprocess.Popen] = []
    try:
        with tempfile.TemporaryDirectory() as d, open(a.log, "w") as log:
            params = os.path.join(d, "params")
            tensors.write(params, weights(model, a.seed))
            worker = Worker(python, a.engine, a.threads, log)
            procs.append(worker.proc)
            hello = worker.request("hello")
            options = {"device": "cpu", "threads": a.threads, "seed": a.seed,
                       "precision": "fp32", "calibration": "", "optimizer": "sgd",
                       "learning_rate": 0.01, "momentum": 0.0, "nesterov": False,
                       "weight_decay": 0.0, "beta1": 0.9, "beta2": 0.999,
                       "alpha": 0.99, "rho": 0.9, "eps": 1e-8, "observe": False,
                       "generation": True}
            worker.request("compile", model=model, params=params, options=options,
                           shapes={"train_batch": 0, "infer_batches": [1]})
            os.remove(params)
            plain = Plain(python, a.engine, a, log)
            procs.append(plain.proc)
            print(f"engine {a.engine}: {hello['framework']} {hello['version']}; "
                  f"{a.model} pp{a.prompt} tg{a.new_tokens}, {a.threads} threads, "
                  f"{a.warmup} warm-up and {a.repetitions} timed generations a side "
                  "a round", flush=True)
            ratios = alternate(worker, plain, prompt, a)
            plain.close()
            worker.close()
    finally:  # a failure must not leave either process running
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for i, what in ((0, "tpot"), (1, "ttft")):
        xs = [x[i] for x in ratios]
        ci = median_interval(xs)
        within = (f", 95 % interval {(ci[0] - 1) * 100:+.1f} to {(ci[1] - 1) * 100:+.1f} %"
                  if ci else ", too few rounds for a 95 % interval")
        print(f"{a.engine} {what}: engine / plain median {(statistics.median(xs) - 1) * 100:+.1f} %"
              f" over {len(xs)} rounds{within}")
        if len(xs) > 1:
            first, second = (statistics.median(xs[k::2]) - 1 for k in (0, 1))
            print(f"  {what} by order: engine first {first * 100:+.1f} %, "
                  f"plain first {second * 100:+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
