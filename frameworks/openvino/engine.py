"""OpenVINO: nnbench's `openvino` engine (inference only).

The model is nnbench's description as an ONNX graph with its seeded
weights (frameworks/common/onnx_model.py), read by OpenVINO and compiled
for its CPU plugin, as its users run an exported model: the latency hint
(one stream), --threads as INFERENCE_NUM_THREADS, fp32 as the inference
precision (the plugin would otherwise pick bf16 on CPUs that have it). A
step is one synchronous infer on a request, the output read to the host.
Training is refused as unimplemented.
"""
from __future__ import annotations

import os
import platform
import tempfile
import time

import numpy as np
import openvino as ov
import openvino.properties as props
import openvino.properties.hint as hints

import onnx_model  # frameworks/common, on sys.path

TRAINING = "training (OpenVINO runs inference here)"


class Engine:
    def __init__(self):
        self.batches = []
        self.out = None
        self.core = ov.Core()

    def hello(self) -> dict:
        return {"framework": "OpenVINO", "version": ov.get_version(),
                "python": platform.python_version(),
                "devices": ["cpu"], "precisions": ["fp32"], "optimizers": [],
                "checks_shapes": True}

    def check(self, model: dict) -> None:
        """The gaps that depend on shapes: NotImplementedError names one."""
        onnx_model.check_avg_pool_overhang(model)

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        if options["precision"] != "fp32":
            raise NotImplementedError(f"precision {options['precision']} "
                                      "(the openvino engine runs fp32)")
        if shapes.get("train_batch", 0) > 0:
            raise NotImplementedError(TRAINING)
        self.options = options
        onnx_model.check_avg_pool_overhang(model)
        proto = onnx_model.build(model, params)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(proto.SerializeToString())
            net = self.core.read_model(path)
        config = {hints.performance_mode: hints.PerformanceMode.LATENCY,
                  hints.inference_precision: ov.Type.f32}
        if options["threads"] > 0:
            config[props.inference_num_threads] = options["threads"]
        self.compiled = self.core.compile_model(net, "CPU", config)
        self.request = self.compiled.create_infer_request()
        return self.effective()

    def effective(self) -> dict:
        c = self.compiled
        return {"threads": int(c.get_property(props.inference_num_threads)),
                "device": "cpu", "precision": "fp32", "optimizer": "none (inference)",
                "streams": str(c.get_property(props.num_streams)),
                "hint": str(c.get_property(hints.performance_mode)),
                "inference_precision": str(c.get_property(hints.inference_precision)),
                "framework": f"OpenVINO {ov.get_version()} (CPU plugin)"}

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
            self.out = self.request.infer({0: x})[0]
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
