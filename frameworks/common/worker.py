"""A framework engine's worker: nnbench's C++ harness drives it.

Requests arrive as JSON lines on fd 3, replies leave as JSON lines on fd 4,
so that whatever the framework prints to stdout or stderr (both go to a
log the harness reads on failure) never corrupts the protocol. Tensors
travel in files (tensors.py). The harness owns every rule; the worker only
builds, runs and times steps:

  hello                        -> framework, version, devices, precisions,
                                  optimizers, python
  compile {model, params, options, shapes}
                               -> effective
  load_batches {file}          -> ok
  set_learning_rate {value}    -> ok (the next steps' rate)
  steps {mode, first, n}       -> seconds (one per step, timed around the
                                  step and the framework's synchronisation),
                                  loss (the last step's, training)
  output|parameters|gradients {file} -> ok (the tensors written)
  export {format, model, params, file} -> ok (the model written, where
                               hello lists the format under "exports")
  quit

A failure is {"ok": false, "state": "unimplemented" | "oom" | "invalid_args"
| "failed", "message"}: NotImplementedError is unimplemented, MemoryError
oom, ValueError invalid_args.

Usage: python worker.py ENGINE.py
       python worker.py --zygote SOCKET OWNER_PID ENGINE.py  (zygote.py)
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensors  # noqa: E402


def load_module(path: str):
    """The engine's module: importing it imports its framework."""
    spec = importlib.util.spec_from_file_location("nnbench_engine", path)
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


def state_of(e: BaseException) -> str:
    if isinstance(e, NotImplementedError):
        return "unimplemented"
    if isinstance(e, MemoryError) or "out of memory" in str(e).lower():
        return "oom"
    if isinstance(e, ValueError):
        return "invalid_args"
    return "failed"


def handle(engine, req: dict) -> dict:
    op = req.get("op")
    if op == "hello":
        return {**engine.hello(), "environment": environment()}
    if op == "compile":
        params = tensors.read(req["params"])
        return {"effective": engine.compile(req["model"], params,
                                            req["options"], req["shapes"])}
    if op == "load_batches":
        engine.load_batches(tensors.read(req["file"]))
        return {}
    if op == "steps":
        seconds, loss = engine.steps(req["mode"], int(req["first"]),
                                     int(req["n"]))
        return {"seconds": seconds, "loss": loss}
    if op in ("output", "parameters", "gradients"):
        tensors.write(req["file"], getattr(engine, op)())
        return {}
    if op == "running_stats":  # an inference engine keeps none it can give
        give = getattr(engine, op, None)
        tensors.write(req["file"], give() if give else {})
        return {}
    if op == "export":
        engine.export(req["format"], req["model"], tensors.read(req["params"]),
                      req["file"])
        return {}
    if op == "check":
        engine.check(req["model"])
        return {}
    if op == "set_learning_rate":
        engine.set_learning_rate(float(req["value"]))
        return {}
    if op == "effective":
        return {"effective": engine.effective()}
    raise ValueError(f"unknown request '{op}'")


def serve(engine) -> int:
    """Answers requests on fd 3 on fd 4 until quit or the end of fd 3."""
    requests = os.fdopen(3, "r", encoding="utf-8")
    replies = os.fdopen(4, "w", encoding="utf-8")
    for line in requests:
        req = json.loads(line)
        if req.get("op") == "quit":
            break
        try:
            reply = {"ok": True, **handle(engine, req)}
        except BaseException as e:  # noqa: BLE001 -- every failure is a state
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
