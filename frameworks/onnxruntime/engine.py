"""ONNX Runtime: nnbench's `onnxruntime` engine (inference only).

The model is nnbench's description turned into an ONNX graph with its
seeded weights (frameworks/common/onnx_model.py) and run by ONNX Runtime's
CPU execution provider, as its users run an exported model: an
InferenceSession with every graph optimisation, --threads as the
session's intra-op threads (inter-op 1, sequential execution). A step is
one session.run, which returns the output on the host. Training is
refused as unimplemented: ONNX Runtime here is an inference engine.
"""
from __future__ import annotations

import platform
import time

import numpy as np
import onnx
import onnxruntime as ort

import onnx_model  # frameworks/common, on sys.path

TRAINING = "training (ONNX Runtime runs inference here)"


class Engine:
    def __init__(self):
        self.batches = []
        self.out = None

    def hello(self) -> dict:
        return {"framework": "ONNX Runtime",
                "version": f"{ort.__version__} (onnx {onnx.__version__})",
                "python": platform.python_version(),
                "devices": ["cpu"], "precisions": ["fp32"], "optimizers": [],
                "exports": ["onnx"]}

    def export(self, fmt: str, model: dict, params: dict, path: str) -> None:
        """`nnbench models --export-onnx`: the graph this engine runs."""
        with open(path, "wb") as f:
            f.write(onnx_model.build(model, params).SerializeToString())

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        if options["precision"] != "fp32":
            raise NotImplementedError(f"precision {options['precision']} "
                                      "(the onnxruntime engine runs fp32)")
        if shapes.get("train_batch", 0) > 0:
            raise NotImplementedError(TRAINING)
        self.options = options
        proto = onnx_model.build(model, params)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if options["threads"] > 0:
            so.intra_op_num_threads = options["threads"]
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(proto.SerializeToString(), so,
                                            providers=["CPUExecutionProvider"])
        self.ids = model["input"]["dtype"] == "int64"
        return self.effective()

    def effective(self) -> dict:
        so = self.session.get_session_options()
        return {"threads": so.intra_op_num_threads or self.options["threads"],
                "device": "cpu", "precision": "fp32", "optimizer": "none (inference)",
                "inter_op_threads": str(so.inter_op_num_threads),
                "provider": ",".join(self.session.get_providers()),
                "graph": f"ONNX opset {onnx_model.OPSET}, ORT_ENABLE_ALL",
                "framework": f"ONNX Runtime {ort.__version__}"}

    def load_batches(self, t: dict) -> None:
        n = sum(1 for k in t if k.startswith("input."))
        self.batches = [np.ascontiguousarray(t[f"input.{i}"]) for i in range(n)]

    def steps(self, mode: str, first: int, n: int):
        if mode == "train":
            raise NotImplementedError(TRAINING)
        seconds = []
        for s in range(n):
            x = self.batches[(first + s) % len(self.batches)]
            t0 = time.perf_counter()
            self.out = self.session.run(["output"], {"input": x})[0]
            seconds.append(time.perf_counter() - t0)
        return seconds, None

    def set_learning_rate(self, lr: float) -> None:
        raise NotImplementedError(TRAINING)

    def output(self) -> dict:
        return {"output": np.asarray(self.out, dtype=np.float32)}

    def parameters(self) -> dict:
        raise NotImplementedError(TRAINING)

    def gradients(self) -> dict:
        raise NotImplementedError(TRAINING)

