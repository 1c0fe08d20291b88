"""OpenVINO: nnbench's `openvino` engine (inference only).

The model is nnbench's description as an ONNX graph with its seeded
weights (frameworks/common/nnbench_onnx.py), read by OpenVINO and compiled
for its CPU plugin, as its users run an exported model: the latency hint
(one stream), --threads as INFERENCE_NUM_THREADS, fp32 as the inference
precision (the plugin would otherwise pick bf16 on CPUs that have it). A
step is one synchronous infer on a request, the output read to the host.
Training is refused as unimplemented.

Generation (fp32) runs the writer's decoder graph (Optimum's idiom for an
exported GPT-2 with past keys and values): read with the past's length
and the new tokens' count dynamic, compiled once with the same
configuration by the first prefill after a compile, each step one infer
on its own request sharing its inputs and outputs (optimum-intel's
stateless loop), the present keys and values fed back as the past
(nnbench_onnx.InferenceEngine.prefill).

int8 is NNCF's post-training quantization of the OpenVINO model
(nncf.quantize, its default mixed preset: symmetric weights, per-channel),
calibrated on the samples nnbench hands over; the CPU plugin then runs the
quantized operations in int8 (VNNI where the CPU has it; without, every
layer's weights take 7 bits: frameworks/common/cpu.py).
"""
from __future__ import annotations

import platform
from typing import Dict, List, Optional, Tuple

import numpy as np
import onnx
import openvino as ov
import openvino.properties as props
import openvino.properties.hint as hints

import cpu  # frameworks/common, on sys.path
import nnbench_onnx  # frameworks/common, on sys.path
import tensors  # frameworks/common


def compressed(net: "ov.Model") -> "ov.Model":
    """int8 generation: NNCF's weight compression with its defaults, as
    optimum-intel's 8-bit export runs it (INT8_ASYM: u8 weights, a scale
    and zero point per output channel; the activations are the CPU
    plugin's business: its DYNAMIC_QUANTIZATION_GROUP_SIZE)."""
    import nncf  # imported only for int8: it takes seconds
    return nncf.compress_weights(net)


def quantized(net: "ov.Model", calibration: np.ndarray) -> "ov.Model":
    import nncf  # imported only for int8: it takes seconds
    from nncf.quantization.advanced_parameters import (
        AdvancedQuantizationParameters,
        OverflowFix,
    )
    rows = [calibration[i:i + 1] for i in range(calibration.shape[0])]
    # Without VNNI every layer's weights take 7 bits (NNCF's default fixes
    # the first layer only).
    advanced = None if cpu.has_vnni() else AdvancedQuantizationParameters(
        overflow_fix=OverflowFix.ENABLE)
    return nncf.quantize(net, nncf.Dataset(rows), subset_size=len(rows),
                         advanced_parameters=advanced)


# The CPU plugin's layer types that do a model's arithmetic (its runtime
# graph's names for conv and linear layers).
COMPUTE_LAYERS = ("Convolution", "GroupConvolution", "Deconvolution",
                  "FullyConnected", "MatMul")


def kernel_precisions(compiled: "ov.CompiledModel") -> dict[str, int]:
    """How many conv and linear layers run at each input precision, read
    from the compiled model's runtime graph (what runs, not the hint)."""
    counts: dict[str, int] = {}
    for op in compiled.get_runtime_model().get_ops():
        info = op.get_rt_info()
        if info["layerType"].astype(str) not in COMPUTE_LAYERS:
            continue
        p = info["runtimePrecision"].astype(str)
        counts[p] = counts.get(p, 0) + 1
    return counts


def precision_text(counts: dict[str, int], hint: str) -> str:
    """'f32', or 'u8/i8 in 2 of 3 conv and linear layers, f32 elsewhere'."""
    quantized = sum(n for p, n in counts.items() if p in ("u8", "i8"))
    if not quantized:
        return hint
    kinds = "/".join(sorted(p for p in counts if p in ("u8", "i8")))
    return (f"{kinds} in {quantized} of {sum(counts.values())} conv and "
            f"linear layers, {hint} elsewhere")


class Engine(nnbench_onnx.InferenceEngine):
    ENGINE = "openvino"
    # Steps at bf16 where bf16_problem() finds its kernels run (hello lists
    # it then; compile refuses it otherwise).
    PRECISIONS = ("fp32", "int8", "bf16")

    def __init__(self):
        super().__init__()
        self.core = ov.Core()
        self.bf16_why: Optional[str] = None  # bf16_problem's answer, once

    def hello(self) -> dict:
        at, gaps = self.generation_precisions()
        # Steps at bf16 too where its kernels run here (the inference
        # precision hint, as for generation): tried on a small model.
        steps = [p for p in self.PRECISIONS if p != "bf16" or not self.bf16_problem()]
        return {"framework": "OpenVINO", "version": ov.get_version(),
                "python": platform.python_version(),
                "devices": ["cpu"], "precisions": steps,
                "optimizers": [],
                "checks_shapes": True,
                "generates": True,
                "generation_precisions": at, "generation_gaps": gaps,
                "unsupported": [{
                    "op": "lstm", "precision": "int8",
                    "why": "NNCF's int8 LSTM does not compile on the CPU "
                           "plugin (its LSTMSequence expects constant "
                           "weights)"}]}

    def generation_precisions(self) -> Tuple[List[str], Dict[str, str]]:
        """fp32; bf16 where the CPU plugin lists BF16 (its own detection,
        which ONEDNN_MAX_CPU_ISA does not cap); int8, weight-only
        (compressed), on every CPU."""
        caps = self.core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        if "BF16" in caps:
            return ["fp32", "bf16", "int8"], {}
        return ["fp32", "int8"], {
            "bf16": f"the CPU plugin lists no BF16 here ({', '.join(caps)})"}

    def bf16_problem(self) -> str:
        """Why bf16 steps do not run here ("" when they do), tried once: the
        plugin lists BF16 by the CPU's instructions, but its kernels follow
        ONEDNN_MAX_CPU_ISA; a small model (a linear layer) is compiled at
        the bf16 hint and run once, as the generation probe does."""
        if self.bf16_why is None:
            self.bf16_why = self.try_bf16()
        return self.bf16_why

    def try_bf16(self) -> str:
        caps = self.core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        if "BF16" not in caps:
            return f"the CPU plugin lists no BF16 here ({', '.join(caps)})"
        model = {"name": "probe", "input": {"shape": [16], "dtype": "float32"},
                 "loss": "softmax_cross_entropy",
                 "layers": [{"name": "fc", "op": "linear", "out": 8, "shape": [8]}]}
        rng = np.random.default_rng(0)
        params = {"fc.weight": rng.standard_normal((8, 16), dtype=np.float32),
                  "fc.bias": np.zeros(8, np.float32)}
        try:
            c = self.core.compile_model(self.read(nnbench_onnx.build(model, params)),
                                        "CPU", {hints.inference_precision: ov.Type.bf16})
            c.create_infer_request().infer({0: np.ones((2, 16), np.float32)})
        except RuntimeError as e:
            line = str(e).strip().splitlines()[0][:200] if str(e) else type(e).__name__
            return f"OpenVINO's CPU plugin has no bf16 kernel here ({line})"
        return ""

    def check(self, model: dict) -> None:
        """The gaps that depend on shapes: NotImplementedError names one."""
        nnbench_onnx.check_avg_pool_overhang(model)

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        if options["precision"] == "bf16" and not options.get("generation") and \
                self.bf16_problem():
            raise NotImplementedError(f"bf16: {self.bf16_problem()}")
        self.compiling(model, params, options, shapes)
        self.calibrated = 0
        if options.get("generation"):
            if options["precision"] == "fp32":
                self.open_generation()
            else:
                self.probe()
            return self.effective()
        nnbench_onnx.check_avg_pool_overhang(model)
        net = self.read(nnbench_onnx.build(model, params))
        if options["precision"] == "int8":
            x = tensors.read(options["calibration"])["input"]
            net = quantized(net, x)
            self.calibrated = x.shape[0]
        self.compiled = self.core.compile_model(net, "CPU", self.config())
        self.request = self.compiled.create_infer_request()
        return self.effective()

    def probe(self) -> None:
        """The decoder built and one token through it: the plugin lists
        BF16 by the CPU's instructions, but its kernels follow
        ONEDNN_MAX_CPU_ISA, and under an AVX2 cap its bf16 layers have
        none (its compile says so) nor do its compressed int8 ones (its
        first inference does). That refusal is named here, not
        mid-generation."""
        try:
            self.open_generation()
            self.decode(self.prefill([[0, 0]], 3))  # a prompt's shape, then a token's
        except RuntimeError as e:
            if "primitive descriptor" not in str(e):
                raise
            line = next((t for t in str(e).splitlines()
                         if "primitive descriptor" in t), str(e))
            raise NotImplementedError(
                f"generation at {self.options['precision']}: OpenVINO's CPU "
                f"plugin has no kernel for it here ({line.strip()})") from e
        self.generation = None

    def read(self, proto: onnx.ModelProto) -> "ov.Model":
        return nnbench_onnx.load_from_file(proto.SerializeToString(),
                                           self.core.read_model)

    def config(self) -> dict:
        """The inference model's compile configuration and the decoder's."""
        bf16 = self.options["precision"] == "bf16"
        config = {hints.performance_mode: hints.PerformanceMode.LATENCY,
                  hints.inference_precision: ov.Type.bf16 if bf16 else ov.Type.f32}
        if self.options["threads"] > 0:
            config[props.inference_num_threads] = self.options["threads"]
        return config

    def effective(self) -> dict:
        generating = self.options.get("generation")
        c = self.decoder_model if generating else self.compiled
        counts = kernel_precisions(c)
        extra = {}
        if generating and self.options["precision"] == "int8":
            import nncf
            group = int(c.get_property(hints.dynamic_quantization_group_size))
            # The plugin's default also quantizes the activations of a layer
            # with compressed weights, on the fly, per group (0: off).
            acts = (f"the CPU plugin's DYNAMIC_QUANTIZATION_GROUP_SIZE {group}: "
                    f"where its kernels apply it, activations quantized on the fly "
                    f"in groups of {group}" if group
                    else "activations f32 (DYNAMIC_QUANTIZATION_GROUP_SIZE 0)")
            extra["weights"] = (f"int8, NNCF {nncf.__version__} compress_weights "
                                "(defaults: INT8_ASYM, u8 per output channel with a "
                                f"scale and zero point); {acts}")
        if self.calibrated:
            import nncf
            fix = "" if cpu.has_vnni() else ", overflow fix on every layer"
            extra["quantization"] = (
                f"NNCF {nncf.__version__} quantize (defaults{fix}) on "
                f"{self.calibrated} samples; {cpu.int8_weights_text()}")
        return {**extra,
                "threads": int(c.get_property(props.inference_num_threads)),
                "device": "cpu", "precision": self.options["precision"],
                "optimizer": "none (inference)",
                "streams": str(c.get_property(props.num_streams)),
                "hint": str(c.get_property(hints.performance_mode)),
                # What the kernels run, as plain text: the hint alone says
                # f32 where NNCF's quantized layers run u8/i8 kernels.
                "inference_precision": precision_text(
                    counts, c.get_property(hints.inference_precision).get_type_name()),
                "kernel_precisions": ", ".join(
                    f"{p}: {n}" for p, n in sorted(counts.items())),
                "framework": f"OpenVINO {ov.get_version()} (CPU plugin)"}

    def run(self, x: np.ndarray) -> np.ndarray:
        return self.request.infer({0: x})[0]

    def open_decoder(self, proto: onnx.ModelProto) -> None:
        # The graph's symbolic dims (batch, tokens, past) read as dynamic:
        # one compiled model for the prompt and every step.
        net = self.read(proto)
        if self.options.get("generation") and self.options["precision"] == "int8":
            net = compressed(net)
        self.decoder_model = self.core.compile_model(net, "CPU", self.config())
        self.decoder_request = self.decoder_model.create_infer_request()

    def run_decoder(self, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
        # optimum-intel's stateless loop: the inputs shared (the past is read
        # where it lies, not copied in) and the outputs read from the
        # request's own tensors (not copied out), so that the next step's
        # past is this step's present as the request left it: copying both
        # ways moved the whole cache twice a token (docs/performance.md).
        # The outputs are views, good until the request's next inference but
        # one: the CPU plugin writes an output whose buffer is a shared input
        # elsewhere (its "cyclic memory" guard), which this relies on, as
        # optimum-intel does; the generation tests check every step's tokens.
        r = self.decoder_request
        r.start_async(feeds, share_inputs=True)
        r.wait()
        return [r.get_tensor(o).data for o in self.decoder_model.outputs]
