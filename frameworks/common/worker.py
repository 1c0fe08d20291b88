"""A framework engine's worker: nnbench's C++ harness drives it.

Requests arrive as JSON lines on fd 3, replies leave as JSON lines on fd 4,
so that whatever the framework prints to stdout or stderr (both go to a
log the harness reads on failure) never corrupts the protocol. The ops,
their fields and the failure states are contract.json's (the C++ side
compiles the same file in); the engine's methods are protocol.py's. The
harness owns every rule; the engine builds and runs steps, and this file
times them: the clock is here alone, around each step.

Usage: python worker.py ENGINE.py
       python worker.py --zygote SOCKET OWNER_PID ENGINE.py  (zygote.py)
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import time
import traceback
from typing import Any, Callable, List, Optional, cast

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensors
from protocol import Engine, Tensors, load_contract


def load_module(path: str):
    """The engine's module: importing it imports its framework."""
    spec = importlib.util.spec_from_file_location("nnbench_engine", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def environment() -> str:
    """The Python environment as a package count and the hash of its list."""
    import hashlib
    from importlib import metadata
    pkgs = sorted({f"{d.metadata['Name']}=={d.version}"
                   for d in metadata.distributions() if d.metadata["Name"]})
    digest = hashlib.sha256("\n".join(pkgs).encode()).hexdigest()[:16]
    return f"{sys.prefix}: {len(pkgs)} packages, sha256 {digest}"


# The failure states (contract.json's "states"), by exception.
STATES = [(NotImplementedError, "unimplemented"), (MemoryError, "oom"),
          (ValueError, "invalid_args")]


def state_of(e: BaseException) -> str:
    for kind, state in STATES:
        if isinstance(e, kind):
            return state
    return "oom" if "out of memory" in str(e).lower() else "failed"


def rows_of(prompts: dict) -> List[List[int]]:
    """{"rows": [[id, ...], ...]}: prompts of one length."""
    rows = [[int(t) for t in r] for r in prompts["rows"]]
    if not rows or len({len(r) for r in rows}) != 1 or not rows[0]:
        raise ValueError("prompts: rows of one length, at least one token")
    return rows


def finite(x: Optional[float]) -> Optional[float]:
    return x if x is not None and math.isfinite(x) else None


class Worker:
    """One engine behind the contract's ops: each `op_NAME` answers NAME."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.batches = 0

    def op_hello(self, req: dict) -> dict:
        return {**self.engine.hello(), "environment": environment()}

    def op_check(self, req: dict) -> dict:
        self.optional("check")(req["model"])
        return {}

    def op_compile(self, req: dict) -> dict:
        params = tensors.read(req["params"])
        return {"effective": self.engine.compile(req["model"], params,
                                                 req["options"], req["shapes"])}

    def op_load_batches(self, req: dict) -> dict:
        t = tensors.read(req["file"])
        self.batches = sum(1 for k in t if k.startswith("input."))
        self.engine.load_batches(t)
        return {}

    def op_set_learning_rate(self, req: dict) -> dict:
        self.optional("set_learning_rate")(float(req["value"]))
        return {}

    def op_steps(self, req: dict) -> dict:
        """Each step timed around the engine's call; the last one of the
        request also around `settle` (work a step left running)."""
        mode, first, n = req["mode"], int(req["first"]), int(req["n"])
        if mode not in ("train", "infer") or n < 1 or self.batches < 1:
            raise ValueError(f"steps: mode {mode!r}, n {n}, "
                             f"{self.batches} batches loaded")
        engine = self.engine
        begin = getattr(engine, "begin", None)
        if begin is not None:
            begin(mode)
        step = engine.train_step if mode == "train" else engine.infer_step
        settle = getattr(engine, "settle", None)
        seconds: List[float] = []
        loss = None
        for s in range(n):
            batch = (first + s) % self.batches
            t0 = time.perf_counter()
            value = step(batch)
            if settle is not None and s == n - 1:
                settle()
            seconds.append(time.perf_counter() - t0)
            loss = value
        return {"seconds": seconds,
                "loss": finite(loss) if mode == "train" else None}

    def op_fit(self, req: dict) -> dict:
        """One epoch of the framework's own loop, prepared outside the clock
        and timed whole: the data handling inside the loop is the
        framework's, as in its users' scripts."""
        loop = self.optional("fit")(tensors.read(req["file"]))
        t0 = time.perf_counter()
        epoch = loop()
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "loss": finite(epoch.get("loss")),
                "accuracy": finite(epoch.get("accuracy")),
                "loop": str(epoch["loop"])}

    def op_prefill(self, req: dict) -> dict:
        rows = rows_of(req["prompts"])
        return {"next": self.optional("prefill")(rows, int(req["capacity"]))}

    def op_decode(self, req: dict) -> dict:
        return {"next": self.optional("decode")([int(t) for t in req["tokens"]])}

    def op_logits(self, req: dict) -> dict:
        give = getattr(self.engine, "last_logits", None)
        rows = give() if give is not None else None
        return {"logits": {} if rows is None else {"rows": rows}}

    def op_bandwidth(self, req: dict) -> dict:
        """The read bandwidth of the engine's device ({} on the host)."""
        give = getattr(self.engine, "device_bandwidth", None)
        return {"bandwidth": give() if give is not None else {}}

    def op_generate(self, req: dict) -> dict:
        """Generations timed here, as steps are: the prefill (time to first
        token), then each decoding step (an inter-token latency); the
        cache holds the prompt and the new tokens."""
        rows = rows_of(req["prompts"])
        n, warmup = int(req["new_tokens"]), int(req["warmup"])
        reps = int(req["repetitions"])
        if n < 2 or warmup < 0 or reps < 1 or not rows:
            raise ValueError(f"generate: new_tokens {n}, warmup {warmup}, "
                             f"repetitions {reps}, {len(rows)} prompts")
        prefill, decode = self.optional("prefill"), self.optional("decode")
        capacity = len(rows[0]) + n
        ttft: List[float] = []
        itl: List[List[float]] = []
        tokens: List[List[int]] = []
        for rep in range(warmup + reps):
            t0 = time.perf_counter()
            nxt = prefill(rows, capacity)
            t1 = time.perf_counter()
            first, times, row0 = t1 - t0, [], [int(nxt[0])]
            for _ in range(1, n):
                t0 = t1
                nxt = decode(nxt)
                t1 = time.perf_counter()
                times.append(t1 - t0)
                row0.append(int(nxt[0]))
            if rep >= warmup:
                ttft.append(first)
                itl.append(times)
                tokens.append(row0)
        return {"ttft": ttft, "itl": {"rows": itl}, "tokens": {"rows": tokens}}

    def op_effective(self, req: dict) -> dict:
        return {"effective": self.optional("effective")()}

    def tensors_op(self, req: dict, give: Callable[[], Tensors]) -> dict:
        tensors.write(req["file"], give())
        return {}

    def op_output(self, req: dict) -> dict:
        return self.tensors_op(req, self.engine.output)

    def op_parameters(self, req: dict) -> dict:
        return self.tensors_op(req, self.engine.parameters)

    def op_gradients(self, req: dict) -> dict:
        return self.tensors_op(req, self.engine.gradients)

    def op_running_stats(self, req: dict) -> dict:
        # An engine that keeps none (an inference engine) gives none.
        give = getattr(self.engine, "running_stats", None)
        return self.tensors_op(req, give or dict)

    def op_export(self, req: dict) -> dict:
        self.optional("export")(req["format"], req["model"],
                                tensors.read(req["params"]), req["file"])
        return {}

    def optional(self, method: str) -> Callable[..., Any]:
        f = getattr(self.engine, method, None)
        if f is None:
            raise NotImplementedError(f"this engine has no '{method}'")
        return cast(Callable[..., Any], f)

    def handle(self, req: dict) -> dict:
        op = req.get("op")
        spec = CONTRACT["ops"].get(op) if isinstance(op, str) else None
        if spec is None or op == "quit":
            raise ValueError(f"unknown request '{op}'")
        missing = [k for k, kind in spec["request"].items()
                   if not kind.endswith("?") and k not in req]
        if missing:
            raise ValueError(f"request '{op}' lacks {', '.join(missing)}")
        answer: dict = getattr(self, "op_" + str(op))(req)
        return answer


CONTRACT = load_contract()


def serve(engine: Engine) -> int:
    """Answers requests on fd 3 on fd 4 until quit or the end of fd 3."""
    worker = Worker(engine)
    requests = os.fdopen(3, "r", encoding="utf-8")
    replies = os.fdopen(4, "w", encoding="utf-8")
    for line in requests:
        req = json.loads(line)
        if req.get("op") == "quit":
            break
        try:
            reply = {"ok": True, **worker.handle(req)}
        except BaseException as e:
            traceback.print_exc(file=sys.stderr)
            reply = {"ok": False, "state": state_of(e),
                     "message": f"{type(e).__name__}: {e}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--zygote":
        import zygote
        return zygote.run(sys.argv[2], int(sys.argv[3]),
                          load_module(sys.argv[4]), serve)
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    return serve(load_module(sys.argv[1]).Engine())


if __name__ == "__main__":
    sys.exit(main())
