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

import numpy as np
import onnx
import onnxruntime as ort

import onnx_model  # frameworks/common, on sys.path


class Engine(onnx_model.InferenceEngine):
    ENGINE = "onnxruntime"

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
        self.refuse(options, shapes)
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
        return self.effective()

    def effective(self) -> dict:
        so = self.session.get_session_options()
        return {"threads": so.intra_op_num_threads or self.options["threads"],
                "device": "cpu", "precision": "fp32", "optimizer": "none (inference)",
                "inter_op_threads": str(so.inter_op_num_threads),
                "provider": ",".join(self.session.get_providers()),
                "graph": f"ONNX opset {onnx_model.OPSET}, ORT_ENABLE_ALL",
                "framework": f"ONNX Runtime {ort.__version__}"}

    def run(self, x: np.ndarray) -> np.ndarray:
        return self.session.run(["output"], {"input": x})[0]
