"""ONNX Runtime: nnbench's `onnxruntime` engine (inference only).

The model is nnbench's description turned into an ONNX graph with its
seeded weights (frameworks/common/nnbench_onnx.py) and run by ONNX Runtime's
CPU execution provider, as its users run an exported model: an
InferenceSession with every graph optimisation, --threads as the
session's intra-op threads (inter-op 1, sequential execution). A step is
one session.run, which returns the output on the host. Training is
refused as unimplemented: ONNX Runtime here is an inference engine.

Generation (fp32) runs the writer's decoder graph, Optimum's idiom for an
exported GPT-2 with past keys and values, in a second session with the
same options, built by the first prefill after a compile; each step is
one session.run, the present keys and values fed back as the past
(nnbench_onnx.InferenceEngine.prefill).

int8 is ONNX Runtime's own post-training static quantization
(quant_pre_process, then quantize_static) of that graph: QDQ format,
per-channel signed 8-bit weights (7-bit, reduce_range, on a CPU without
VNNI: frameworks/common/cpu.py), unsigned 8-bit activations, MinMax ranges
from the calibration samples nnbench hands over.
"""
from __future__ import annotations

import os
import platform
import tempfile
from typing import Callable, Dict, List, Tuple

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime import quantization
from onnxruntime.quantization import shape_inference

# frameworks/common, on sys.path ("nnbench_onnx", not "onnx_model": ONNX
# Runtime's quantization imports a module of that name of its own)
import cpu  # frameworks/common
import nnbench_onnx
import tensors  # frameworks/common


def session(graph: bytes, so: ort.SessionOptions) -> ort.InferenceSession:
    """An InferenceSession on the CPU provider, loaded from a file as its
    users load a model (Optimum's ORTModel takes a path): one made from
    the same graph's bytes ran GPT-2 small's decoding steps 4-7 % slower
    than such a loop (docs/performance.md, "GELU fused, MXNet at bf16,
    ONNX Runtime's session from a file")."""
    return nnbench_onnx.load_from_file(
        graph, lambda path: ort.InferenceSession(
            path, so, providers=["CPUExecutionProvider"]))


class Calibration(quantization.CalibrationDataReader):
    """The calibration samples, one at a time, as quantize_static reads."""

    def __init__(self, x: np.ndarray):
        self.rows = iter(x[i:i + 1] for i in range(x.shape[0]))

    def get_next(self):
        x = next(self.rows, None)
        return None if x is None else {"input": x}


def quantize(proto: onnx.ModelProto, run: Callable[[str, str], None]) -> bytes:
    """The graph quantized by `run(src, dst)` (file paths), after ONNX
    Runtime's recommended first step: shape inference and graph
    optimisation (batch norm folded into the convolutions, so that the
    quantized convolutions are not split by a float batch norm)."""
    with tempfile.TemporaryDirectory() as d:
        raw, src = os.path.join(d, "raw.onnx"), os.path.join(d, "fp32.onnx")
        dst = os.path.join(d, "int8.onnx")
        onnx.save(proto, raw)
        shape_inference.quant_pre_process(raw, src, skip_symbolic_shape=True)
        run(src, dst)
        with open(dst, "rb") as f:
            return f.read()


def quantized(proto: onnx.ModelProto, calibration: np.ndarray) -> bytes:
    return quantize(proto, lambda src, dst: quantization.quantize_static(
        src, dst, Calibration(calibration),
        quant_format=quantization.QuantFormat.QDQ, per_channel=True,
        activation_type=quantization.QuantType.QUInt8,
        weight_type=quantization.QuantType.QInt8,
        calibrate_method=quantization.CalibrationMethod.MinMax,
        reduce_range=not cpu.has_vnni()))


def dynamic(proto: onnx.ModelProto) -> bytes:
    """int8 generation: ONNX Runtime's dynamic quantization with its
    defaults (what its docs recommend for transformers): s8 weights per
    tensor (the MatMuls' and the embedding tables' of Gather), u8
    activations quantized on the fly, after the same pre-processing as the
    static path; 7-bit weights (reduce_range) without VNNI, as there."""
    return quantize(proto, lambda src, dst: quantization.quantize_dynamic(
        src, dst, weight_type=quantization.QuantType.QInt8,
        reduce_range=not cpu.has_vnni()))


class Engine(nnbench_onnx.InferenceEngine):
    ENGINE = "onnxruntime"
    PRECISIONS = ("fp32", "int8")

    def hello(self) -> dict:
        at, gaps = self.generation_precisions()
        return {"framework": "ONNX Runtime",
                "version": f"{ort.__version__} (onnx {onnx.__version__})",
                "python": platform.python_version(),
                "devices": ["cpu"], "precisions": list(self.PRECISIONS),
                "optimizers": [],
                "exports": ["onnx"],
                "generates": True,
                "generation_precisions": at, "generation_gaps": gaps}

    def generation_precisions(self) -> Tuple[List[str], Dict[str, str]]:
        return ["fp32", "int8"], {
            "bf16": "ONNX Runtime's CPU execution provider has no bf16 MatMul "
                    "(a bf16 MatMul node finds no implementation)"}

    def export(self, fmt: str, model: dict, params: dict, path: str) -> None:
        """`nnbench models --export-onnx`: the graph this engine runs."""
        with open(path, "wb") as f:
            f.write(nnbench_onnx.build(model, params).SerializeToString())

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        self.compiling(model, params, options, shapes)
        self.calibrated = 0
        if options.get("generation"):
            self.open_generation()
            return self.effective()
        proto = nnbench_onnx.build(model, params)
        so = self.session_options()
        graph = proto.SerializeToString()
        if options["precision"] == "int8":
            x = tensors.read(options["calibration"])["input"]
            graph = quantized(proto, x)
            self.calibrated = x.shape[0]
        self.session = session(graph, so)
        return self.effective()

    def session_options(self) -> ort.SessionOptions:
        """The inference session's and the decoder's."""
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if self.options["threads"] > 0:
            so.intra_op_num_threads = self.options["threads"]
        so.inter_op_num_threads = 1
        return so

    def effective(self) -> dict:
        generating = self.options.get("generation")
        session = self.decoder_session if generating else self.session
        so = session.get_session_options()
        extra = {}
        if generating and self.options["precision"] == "int8":
            extra["weights"] = (
                "int8, ONNX Runtime quant_pre_process + quantize_dynamic "
                f"(defaults{', reduce_range' if not cpu.has_vnni() else ''}): "
                f"{cpu.int8_weights_text()} per tensor in {self.quantized} "
                f"MatMul ({self.left} with weights left fp32) and "
                f"{self.tables} embedding table(s), u8 activations quantized "
                "on the fly")
        if self.calibrated:
            extra["quantization"] = (
                "ONNX Runtime quant_pre_process + quantize_static: QDQ, "
                f"per-channel s8 weights, {cpu.int8_weights_text()}, "
                f"u8 activations, MinMax on {self.calibrated} samples")
        return {**extra,
                "threads": so.intra_op_num_threads or self.options["threads"],
                "device": "cpu", "precision": self.options["precision"],
                "optimizer": "none (inference)",
                "inter_op_threads": str(so.inter_op_num_threads),
                "provider": ",".join(session.get_providers()),
                "graph": f"ONNX opset {nnbench_onnx.OPSET}, ORT_ENABLE_ALL",
                "framework": f"ONNX Runtime {ort.__version__}"}

    def run(self, x: np.ndarray) -> np.ndarray:
        return self.session.run(["output"], {"input": x})[0]

    def open_decoder(self, proto: onnx.ModelProto) -> None:
        graph = proto.SerializeToString()
        if self.options.get("generation") and self.options["precision"] == "int8":
            graph = dynamic(proto)
            g = onnx.load_from_string(graph).graph
            weights = {t.name for t in g.initializer}
            self.quantized = sum(n.op_type == "MatMulInteger" for n in g.node)
            s8 = {t.name for t in g.initializer
                  if t.data_type in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8)}
            # Embedding tables quantized too (a Gather from an 8-bit table).
            self.tables = sum(n.op_type == "Gather" and n.input[0] in s8 for n in g.node)
            # What the quantizer left fp32 that reads a weight.
            self.left = sum(n.op_type in ("MatMul", "Gemm") and
                            any(i in weights for i in n.input) for n in g.node)
        self.decoder_session = session(graph, self.session_options())

    def run_decoder(self, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
        return self.decoder_session.run(None, feeds)
