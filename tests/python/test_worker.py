"""worker.py: the contract's ops answered, the clock around each step, the
failure states; and the whole loop over real pipes with a scripted engine."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from typing import List, Optional

import numpy as np
import pytest

import tensors
import worker
from conftest import COMMON
from protocol import Effective, Hello, Model, Options, Shapes, Tensors, load_contract

CONTRACT = load_contract()


class Scripted:
    """An engine whose steps take known times and record what they saw."""

    def __init__(self, step_seconds: float = 0.02, loss: float = 0.75) -> None:
        self.step_seconds = step_seconds
        self.loss = loss
        self.seen: List[tuple] = []

    def hello(self) -> Hello:
        return {"framework": "Scripted", "version": "1", "python": "3",
                "devices": ["cpu"], "precisions": ["fp32"], "optimizers": ["sgd"]}

    def compile(self, model: Model, params: Tensors, options: Options,
                shapes: Shapes) -> Effective:
        self.params = params
        return {"threads": options["threads"], "device": "cpu",
                "precision": "fp32", "optimizer": "none"}

    def load_batches(self, t: Tensors) -> None:
        self.seen.append(("load", sorted(t)))

    def begin(self, mode: str) -> None:
        self.seen.append(("begin", mode))

    def train_step(self, batch: int) -> Optional[float]:
        time.sleep(self.step_seconds)
        self.seen.append(("train", batch))
        return self.loss

    def infer_step(self, batch: int) -> None:
        time.sleep(self.step_seconds)
        self.seen.append(("infer", batch))

    def settle(self) -> None:
        time.sleep(self.step_seconds)
        self.seen.append(("settle",))

    def output(self) -> Tensors:
        return {"output": np.ones((2, 3), np.float32)}

    def parameters(self) -> Tensors:
        return self.params

    def gradients(self) -> Tensors:
        return {}


def loaded(engine: Scripted, tmp_path, batches: int = 3) -> worker.Worker:
    w = worker.Worker(engine)
    f = str(tmp_path / "batches")
    tensors.write(f, {**{f"input.{i}": np.zeros((2, 4), np.float32) for i in range(batches)},
                      **{f"labels.{i}": np.zeros(2, np.int64) for i in range(batches)}})
    w.handle({"op": "load_batches", "file": f})
    return w


def test_every_op_of_the_contract_has_a_handler_and_no_other() -> None:
    handlers = {n[3:] for n in dir(worker.Worker) if n.startswith("op_")}
    assert handlers == set(CONTRACT["ops"]) - {"quit"}


def test_the_failure_states_are_the_contracts() -> None:
    named = {state for _, state in worker.STATES} | {"failed"}
    assert named == set(CONTRACT["states"])
    assert worker.state_of(NotImplementedError()) == "unimplemented"
    assert worker.state_of(MemoryError()) == "oom"
    assert worker.state_of(RuntimeError("CUDA out of memory")) == "oom"
    assert worker.state_of(ValueError()) == "invalid_args"
    assert worker.state_of(KeyError()) == "failed"


def test_steps_are_timed_around_the_step_and_the_last_ones_settle(tmp_path) -> None:
    e = Scripted(step_seconds=0.02)
    w = loaded(e, tmp_path)
    r = w.handle({"op": "steps", "mode": "train", "first": 2, "n": 4})
    assert len(r["seconds"]) == 4
    # Each step sleeps 20 ms; the last also settles (another 20 ms).
    for s in r["seconds"][:3]:
        assert 0.02 <= s < 0.035
    assert 0.04 <= r["seconds"][3] < 0.06
    assert r["loss"] == 0.75
    # Batches from `first`, wrapping around the three loaded.
    assert e.seen[1:] == [("begin", "train"), ("train", 2), ("train", 0), ("train", 1),
                          ("train", 2), ("settle",)]


def test_a_loss_that_is_not_finite_is_null_and_inference_has_none(tmp_path) -> None:
    w = loaded(Scripted(step_seconds=0, loss=math.nan), tmp_path)
    assert w.handle({"op": "steps", "mode": "train", "first": 0, "n": 1})["loss"] is None
    assert w.handle({"op": "steps", "mode": "infer", "first": 0, "n": 2})["loss"] is None


@pytest.mark.parametrize("req,words", [
    ({"op": "launch"}, "unknown request 'launch'"),
    ({"op": "steps", "mode": "train", "first": 0}, "lacks n"),
    ({"op": "steps", "mode": "walk", "first": 0, "n": 1}, "mode 'walk'"),
    ({"op": "steps", "mode": "train", "first": 0, "n": 0}, "n 0"),
])
def test_bad_requests_are_invalid_args_naming_the_problem(tmp_path, req, words) -> None:
    w = loaded(Scripted(step_seconds=0), tmp_path)
    with pytest.raises(ValueError, match=words):
        w.handle(req)


def test_an_optional_method_the_engine_lacks_is_unimplemented(tmp_path) -> None:
    w = loaded(Scripted(step_seconds=0), tmp_path)
    with pytest.raises(NotImplementedError, match="no 'export'"):
        w.handle({"op": "export", "format": "onnx", "model": {}, "params": "p",
                  "file": "f"})
    out = str(tmp_path / "stats")
    w.handle({"op": "running_stats", "file": out})  # none kept: an empty file
    assert tensors.read(out) == {}


ENGINE = '''
import time
class Engine:
    def hello(self):
        return {"framework": "Piped", "version": "1", "python": "3",
                "devices": ["cpu"], "precisions": ["fp32"], "optimizers": []}
    def compile(self, model, params, options, shapes):
        if model["layers"][0]["op"] == "conv2d":
            raise NotImplementedError("layer 'c' (conv2d)")
        self.params = params
        return {"threads": 1}
    def load_batches(self, t):
        self.x = [t[f"input.{i}"] for i in range(len(t) // 2)]
    def train_step(self, batch):
        time.sleep(0.01)
        return float(self.x[batch].sum())
    def infer_step(self, batch):
        self.out = self.x[batch] * 2
    def output(self):
        return {"output": self.out}
    def parameters(self):
        return self.params
    def gradients(self):
        return {}
'''


def test_the_loop_over_real_pipes(tmp_path) -> None:
    """worker.py as the harness starts it: requests on fd 3, replies on 4,
    the engine's chatter elsewhere."""
    engine = tmp_path / "engine.py"
    engine.write_text(ENGINE)
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    # fds 3 and 4 in the worker, as the harness gives them.
    p = subprocess.Popen(["/bin/bash", "-c", f'exec "$0" "$1" "$2" 3<&{req_r} 4>&{rep_w}',
                          sys.executable, os.path.join(COMMON, "worker.py"), str(engine)],
                         pass_fds=(req_r, rep_w), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    os.close(req_r)
    os.close(rep_w)
    to = os.fdopen(req_w, "w")
    back = os.fdopen(rep_r, "r")

    def ask(op: str, **fields) -> dict:
        to.write(json.dumps({"op": op, **fields}) + "\n")
        to.flush()
        line = back.readline()
        assert line, f"no reply to {op}: " + p.communicate()[1].decode()[-800:]
        reply: dict = json.loads(line)
        return reply

    hello = ask("hello")
    assert hello["ok"] and hello["framework"] == "Piped"
    assert hello["environment"].startswith(sys.prefix)
    params = str(tmp_path / "params")
    tensors.write(params, {"w": np.arange(3, dtype=np.float32)})
    conv = ask("compile", model={"layers": [{"op": "conv2d"}]}, params=params,
               options={}, shapes={})
    assert conv == {"ok": False, "state": "unimplemented",
                    "message": "NotImplementedError: layer 'c' (conv2d)"}
    assert ask("compile", model={"layers": [{"op": "linear"}]}, params=params, options={},
               shapes={})["effective"] == {"threads": 1}
    batches = str(tmp_path / "batches")
    tensors.write(batches, {"input.0": np.full(4, 1, np.float32),
                            "labels.0": np.zeros(1, np.int64),
                            "input.1": np.full(4, 2, np.float32),
                            "labels.1": np.zeros(1, np.int64)})
    assert ask("load_batches", file=batches) == {"ok": True}
    r = ask("steps", mode="train", first=1, n=2)
    assert r["loss"] == 4.0  # the last step's: batch 0, four ones
    assert all(0.01 <= s < 0.5 for s in r["seconds"]) and len(r["seconds"]) == 2
    ask("steps", mode="infer", first=1, n=1)
    out = str(tmp_path / "out")
    assert ask("output", file=out) == {"ok": True}
    assert tensors.read(out)["output"].tolist() == [4.0] * 4
    to.write(json.dumps({"op": "quit"}) + "\n")
    to.flush()
    assert p.wait(timeout=30) == 0


class Generating:
    """An engine whose prefill and decode advance a fake clock by known
    times: prefill 0.3 s, the k-th decode of a generation 0.01 * k s."""

    def __init__(self, clock: List[float]) -> None:
        self.clock = clock
        self.prefills: List[tuple] = []
        self.k = 0

    def prefill(self, rows: List[List[int]], capacity: int) -> List[int]:
        self.prefills.append((len(rows), len(rows[0]), capacity))
        self.k = 0
        self.clock[0] += 0.3
        return [7] * len(rows)

    def decode(self, tokens: List[int]) -> List[int]:
        self.k += 1
        self.clock[0] += 0.01 * self.k
        return [self.k] * len(tokens)


def test_generations_are_timed_here_token_by_token(monkeypatch) -> None:
    clock = [50.0]
    monkeypatch.setattr(worker.time, "perf_counter", lambda: clock[0])
    e = Generating(clock)
    w = worker.Worker(e)  # type: ignore[arg-type]
    r = w.op_generate({"prompts": {"rows": [[1, 2, 3], [4, 5, 6]]}, "new_tokens": 4,
                       "warmup": 2, "repetitions": 3})
    # Two untimed generations, then three timed, each with a cache for the
    # 3 prompt tokens and the 4 new ones.
    assert e.prefills == [(2, 3, 7)] * 5
    assert r["ttft"] == pytest.approx([0.3] * 3)
    assert len(r["itl"]["rows"]) == 3
    for times in r["itl"]["rows"]:
        assert times == pytest.approx([0.01, 0.02, 0.03])
    assert r["tokens"]["rows"] == [[7, 1, 2, 3]] * 3


def test_generation_requests_are_checked(monkeypatch) -> None:
    w = worker.Worker(Generating([0.0]))  # type: ignore[arg-type]
    good = {"prompts": {"rows": [[1, 2]]}, "new_tokens": 2, "warmup": 0, "repetitions": 1}
    bad: dict
    for bad in ({"new_tokens": 1}, {"repetitions": 0}, {"prompts": {"rows": [[1], [2, 3]]}},
                {"prompts": {"rows": []}}):
        with pytest.raises(ValueError):
            w.op_generate({**good, **bad})
    assert w.op_decode({"tokens": [4, 4]}) == {"next": [1, 1]}
    # An engine without generation is unimplemented, naming the method.
    with pytest.raises(NotImplementedError, match="prefill"):
        worker.Worker(Scripted()).op_prefill({"prompts": {"rows": [[1]]}, "capacity": 2})
