"""A fake framework engine for the worker protocol's tests.

FAKE_MODE picks its behaviour:
  sleep    each step sleeps FAKE_STEP seconds (default 0.01) and reports it;
  crash    dies by SIGSEGV at the first step;
  hang     never answers the first step;
  garbage  answers the first step with a line that is not JSON;
  chatty   prints to stdout and stderr around every answer (harmless);
  liar     makes the worker's clock report each step as 10 s (more than
           the call took);
  unimpl   refuses to compile with NotImplementedError naming a layer;
  escapes  prints terminal escape sequences, then crashes at the first step;
  escaped-reply  fails the first step with escape sequences in its message;
  flood    answers the first step with bytes and never an end of line;
  noeffective  compiles but says nothing of what runs (a malformed reply).

`fit` (the framework's own loop) sleeps FAKE_STEP per batch, times that
loop by hand and appends "BATCHES SECONDS LR" to FAKE_FIT_LOG, for the
harness's time to be checked against it.
"""
from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

MODE = os.environ.get("FAKE_MODE", "sleep")
# The process that imported this module: the worker itself, or the zygote
# it was forked from (frameworks/common/zygote.py).
IMPORTED_IN = os.getpid()
STEP = float(os.environ.get("FAKE_STEP", "0.01"))


class Engine:
    def hello(self):
        return {"framework": "Fake", "version": "0.1", "python": "3",
                "devices": ["cpu"], "precisions": ["fp32"],
                "optimizers": ["sgd"]}

    def compile(self, model, params, options, shapes):
        if MODE == "unimpl":
            raise NotImplementedError("layer 'dense_1' (linear): fake refuses it")
        if MODE == "noeffective":
            return None
        if MODE == "liar":
            # The worker's clock itself lies: 10 s between any two readings.
            ticks = iter(range(0, 10**9, 10))
            time.perf_counter = lambda: float(next(ticks))
        self.params = params
        self.lr = options.get("learning_rate")
        self.out = np.zeros((2, 10), np.float32)
        return {"threads": options["threads"], "device": "cpu",
                "precision": "fp32", "optimizer": "none (fake)",
                # what the harness put in this process's environment
                "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
                "pid": str(os.getpid()), "ppid": str(os.getppid()),
                "imported_in": str(IMPORTED_IN)}

    def load_batches(self, t):
        self.n = sum(1 for k in t if k.startswith("input."))
        self.out = np.zeros((len(t["input.0"]), 10), np.float32)

    def set_learning_rate(self, lr: float) -> None:
        self.lr = lr

    def fit(self, t):
        n = sum(1 for k in t if k.startswith("input."))
        self.out = np.zeros((len(t["input.0"]), 10), np.float32)

        def run():
            t0 = time.perf_counter()
            for _ in range(n):
                time.sleep(STEP)
            hand = time.perf_counter() - t0
            log = os.environ.get("FAKE_FIT_LOG")
            if log:
                with open(log, "a") as f:
                    f.write(f"{n} {hand!r} {self.lr!r}\n")
            return {"loss": 0.25, "accuracy": 0.5,
                    "loop": f"a fake loop over {n} batches"}

        return run

    def step(self, batch: int) -> None:
        if MODE == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if MODE == "hang":
            time.sleep(3600)
        if MODE == "garbage":
            os.write(4, b"this is not json\n")
            time.sleep(3600)
        if MODE == "escapes":
            print("\x1b]0;PWNED\x07\x1b[31mred", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        if MODE == "escaped-reply":
            raise RuntimeError("\x1b[2Jcleared")
        if MODE == "flood":
            while True:
                os.write(4, b"x" * 65536)
        if MODE == "chatty":
            print("a framework's chatter on stdout", flush=True)
            print("and on stderr", file=sys.stderr, flush=True)
        time.sleep(STEP)

    def train_step(self, batch: int) -> float:
        self.step(batch)
        return 0.5

    def infer_step(self, batch: int) -> None:
        self.step(batch)

    def output(self):
        return {"output": self.out}

    def parameters(self):
        return self.params

    def gradients(self):
        return {}

    def effective(self):
        return {}
