"""The ONNX writer's transformer ops (frameworks/common/nnbench_onnx.py):
layer norm, both GELUs, learned positions, multi-head attention (causal
or not), the output tied to an embedding, the first position. Each graph
is checked by onnx's checker at opset 17, run by onnx's reference
evaluator here and by ONNX Runtime and OpenVINO in their own environments
(scripts/setup onnxruntime|openvino; skipped where one is missing), and
compared with the ops' definitions (src/engines/reference/ops/
transformer.h) written in plain numpy, in float64 (transformer_numpy.py)."""
from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Callable, Dict, List, Tuple

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

import nnbench_onnx
from conftest import ROOT
from transformer_numpy import Params, attention, gelu, layer_norm, model

# A case: the model description, its parameters, an input batch, the
# numpy forward pass and op types its graph must hold.
Case = Tuple[dict, Params, np.ndarray, Callable[[Params, np.ndarray], np.ndarray], List[str]]

N, T, F, H, V = 2, 5, 6, 2, 9  # batch, sequence, width, heads, vocabulary


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def floats(shape: Tuple[int, ...], seed: int, scale: float = 1.0) -> np.ndarray:
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32)


# The cases.

def ln_case() -> Case:
    m = model([{"name": "ln", "op": "layer_norm", "eps": 1e-5, "shape": [T, F]}], [T, F],
              name="ln")
    p = {"ln.weight": floats((F,), 1), "ln.bias": floats((F,), 2)}
    return (m, p, floats((N, T, F), 3, 2.0),
            lambda p, x: layer_norm(x, p["ln.weight"], p["ln.bias"], 1e-5),
            ["LayerNormalization"])


def gelu_case(approximate: bool) -> Case:
    m = model([{"name": "g", "op": "gelu", "approximate": approximate, "shape": [T, F]}],
              [T, F], name="gelu")
    return (m, {}, floats((N, T, F), 4, 2.0), lambda p, x: gelu(x, approximate),
            ["Tanh"] if approximate else ["Erf"])


def positions_case() -> Case:
    # 8 positions learned, the first T added
    m = model([{"name": "pe", "op": "positions", "vocab": 8, "shape": [T, F]}], [T, F],
              name="pos")
    p = {"pe.weight": floats((8, F), 5)}
    return m, p, floats((N, T, F), 6), lambda p, x: x + p["pe.weight"][:T], ["Add"]


def attention_case(causal: bool, bias: bool) -> Case:
    m = model([{"name": "a", "op": "attention", "heads": H, "causal": causal, "bias": bias,
                "shape": [T, F]}], [T, F], name="attn")
    p = {"a.in_weight": floats((3 * F, F), 7, 0.5), "a.out_weight": floats((F, F), 8, 0.5)}
    if bias:
        p |= {"a.in_bias": floats((3 * F,), 9, 0.1), "a.out_bias": floats((F,), 10, 0.1)}
    return (m, p, floats((N, T, F), 11),
            lambda p, x: attention(x, p, H, causal), ["Softmax"])


def tied_case() -> Case:
    """Token ids -> embedding -> linear -> logits over the embedding's own
    table (GPT-2's output)."""
    m = model([
        {"name": "wte", "op": "embedding", "vocab": V, "out": F, "shape": [T, F]},
        {"name": "d", "op": "linear", "out": F, "bias": True, "shape": [T, F]},
        {"name": "lm_head", "op": "tied_linear", "tied": 0, "shape": [T, V]}], [T], "int64",
        name="tied")
    p = {"wte.weight": floats((V, F), 12), "d.weight": floats((F, F), 13, 0.5),
         "d.bias": floats((F,), 14, 0.1)}
    ids = rng(15).integers(0, V, (N, T)).astype(np.int64)

    def forward(p: Params, x: np.ndarray) -> np.ndarray:
        table = p["wte.weight"].astype(np.float64)
        return (table[x] @ p["d.weight"].T + p["d.bias"]) @ table.T
    return m, p, ids, forward, ["Gather", "MatMul"]


def seq_first_case() -> Case:
    m = model([{"name": "cls", "op": "seq_first", "shape": [F]}], [T, F], name="first")
    return m, {}, floats((N, T, F), 16), lambda p, x: x[:, 0, :], ["Gather"]


def block_case() -> Case:
    """A GPT-2 block end to end, the layers wired by index: ids, tokens and
    positions, pre-norm causal attention and a tanh-GELU MLP with their
    residuals, the final norm, the tied output."""
    layers: List[dict] = [
        {"name": "wte", "op": "embedding", "vocab": V, "out": F},
        {"name": "wpe", "op": "positions", "vocab": T + 3},
        {"name": "ln_1", "op": "layer_norm", "eps": 1e-5},
        {"name": "attn", "op": "attention", "heads": H, "causal": True, "bias": True},
        {"name": "res1", "op": "add", "inputs": [1, 3]},
        {"name": "ln_2", "op": "layer_norm", "eps": 1e-5},
        {"name": "fc", "op": "linear", "out": 4 * F, "bias": True},
        {"name": "act", "op": "gelu", "approximate": True},
        {"name": "proj", "op": "linear", "out": F, "bias": True},
        {"name": "res2", "op": "add", "inputs": [4, 8]},
        {"name": "ln_f", "op": "layer_norm", "eps": 1e-5},
        {"name": "lm_head", "op": "tied_linear", "tied": 0}]
    for l in layers:
        l["shape"] = [T, V] if l["name"] == "lm_head" else [T, 4 * F if l["name"] in
                                                             ("fc", "act") else F]
    p = {"wte.weight": floats((V, F), 20), "wpe.weight": floats((T + 3, F), 21, 0.1),
         "attn.in_weight": floats((3 * F, F), 22, 0.5), "attn.in_bias": floats((3 * F,), 23),
         "attn.out_weight": floats((F, F), 24, 0.5), "attn.out_bias": floats((F,), 25),
         "fc.weight": floats((4 * F, F), 26, 0.5), "fc.bias": floats((4 * F,), 27),
         "proj.weight": floats((F, 4 * F), 28, 0.3), "proj.bias": floats((F,), 29)}
    for i, ln in enumerate(("ln_1", "ln_2", "ln_f")):
        p[f"{ln}.weight"] = 1 + floats((F,), 30 + i, 0.1)
        p[f"{ln}.bias"] = floats((F,), 40 + i, 0.1)

    def forward(p: Params, x: np.ndarray) -> np.ndarray:
        table = p["wte.weight"].astype(np.float64)
        h = table[x] + p["wpe.weight"][:T]
        ln = lambda n, v: layer_norm(v, p[f"{n}.weight"], p[f"{n}.bias"], 1e-5)
        h = h + attention(ln("ln_1", h), p, H, True, name="attn")
        up = gelu(ln("ln_2", h) @ p["fc.weight"].T + p["fc.bias"], True)
        h = h + up @ p["proj.weight"].T + p["proj.bias"]
        return ln("ln_f", h) @ table.T
    ids = rng(19).integers(0, V, (N, T)).astype(np.int64)
    return (model(layers, [T], "int64", name="block"), p, ids, forward,
            ["LayerNormalization", "Softmax", "Tanh"])


CASES: Dict[str, Callable[[], Case]] = {
    "layer_norm": ln_case,
    "gelu": lambda: gelu_case(False),
    "gelu_tanh": lambda: gelu_case(True),
    "positions": positions_case,
    "attention_causal": lambda: attention_case(True, True),
    "attention_no_bias": lambda: attention_case(False, False),
    "tied_linear": tied_case,
    "seq_first": seq_first_case,
    "gpt2_block": block_case,
}

# The engines' run, in their own environment: every graph of a folder in
# one process (NAME.onnx with NAME.in.npy -> NAME.out.npy), one thread.
RUNNERS = {
    "onnxruntime": """
import sys, numpy as np, onnxruntime as ort
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
so.intra_op_num_threads = 1
d = sys.argv[1]
for n in sys.argv[2:]:
    s = ort.InferenceSession(f"{d}/{n}.onnx", so, providers=["CPUExecutionProvider"])
    np.save(f"{d}/{n}.out.npy", s.run(["output"], {"input": np.load(f"{d}/{n}.in.npy")})[0])
""",
    "openvino": """
import sys, numpy as np, openvino as ov
core = ov.Core()
cfg = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "1"}
d = sys.argv[1]
for n in sys.argv[2:]:
    c = core.compile_model(core.read_model(f"{d}/{n}.onnx"), "CPU", cfg)
    np.save(f"{d}/{n}.out.npy", c.create_infer_request().infer({0: np.load(f"{d}/{n}.in.npy")})[0])
""",
}


def venvs() -> str:
    """scripts/paths' nnbench_venvs, as the setup script and nnbench find them."""
    return subprocess.run(
        ["bash", "-c", 'source "$0/scripts/paths" && nnbench_venvs', ROOT],
        check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def built() -> Dict[str, Tuple[onnx.ModelProto, Case]]:
    out = {}
    for name, make in CASES.items():
        case = make()
        out[name] = (nnbench_onnx.build(case[0], case[1]), case)
    return out


@pytest.fixture(scope="module", params=sorted(RUNNERS))
def engine_outputs(request: pytest.FixtureRequest,
                   built: Dict[str, Tuple[onnx.ModelProto, Case]]) -> Dict[str, np.ndarray]:
    engine = request.param
    py = os.path.join(venvs(), engine, "bin", "python")
    if not os.access(py, os.X_OK):
        pytest.skip(f"no {engine} environment ({py}): scripts/setup {engine}")
    with tempfile.TemporaryDirectory() as d:
        for name, (graph, case) in built.items():
            onnx.save(graph, os.path.join(d, f"{name}.onnx"))
            np.save(os.path.join(d, f"{name}.in.npy"), case[2])
        r = subprocess.run([py, "-c", RUNNERS[engine], d, *built], capture_output=True,
                           text=True)
        assert r.returncode == 0, f"{engine}: {r.stderr}"
        return {name: np.load(os.path.join(d, f"{name}.out.npy")) for name in built}


@pytest.mark.parametrize("name", list(CASES))
def test_the_graph_is_valid_opset_17(name: str,
                                     built: Dict[str, Tuple[onnx.ModelProto, Case]]) -> None:
    graph, case = built[name]
    onnx.checker.check_model(graph, full_check=True)
    assert [(o.domain, o.version) for o in graph.opset_import] == [("", 17)]
    ops = {n.op_type for n in graph.graph.node}
    assert set(case[4]) <= ops, ops
    assert "Gelu" not in ops and "Attention" not in ops  # later opsets, contrib


@pytest.mark.parametrize("name", list(CASES))
def test_onnx_reference_evaluator_computes_the_definition(
        name: str, built: Dict[str, Tuple[onnx.ModelProto, Case]]) -> None:
    graph, (_, p, x, forward, _) = built[name]
    (out,) = ReferenceEvaluator(graph).run(None, {"input": x})
    np.testing.assert_allclose(np.asarray(out), forward(p, x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(CASES))
def test_the_engine_computes_the_definition(
        name: str, built: Dict[str, Tuple[onnx.ModelProto, Case]],
        engine_outputs: Dict[str, np.ndarray]) -> None:
    _, (_, p, x, forward, _) = built[name]
    out = engine_outputs[name]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, forward(p, x), rtol=1e-4, atol=1e-5)


def test_the_causal_mask_hides_later_positions(
        built: Dict[str, Tuple[onnx.ModelProto, Case]]) -> None:
    """Changing the last position leaves the others' outputs as they were
    when causal, and changes them when not."""
    for name, causal in (("attention_causal", True), ("attention_no_bias", False)):
        graph, (_, _, x, _, _) = built[name]
        run = ReferenceEvaluator(graph)
        y = x.copy()
        y[:, -1] += 1
        (a,), (b,) = run.run(None, {"input": x}), run.run(None, {"input": y})
        same = np.allclose(np.asarray(a)[:, :-1], np.asarray(b)[:, :-1], atol=1e-6)
        assert same == causal, name


def test_the_tied_output_shares_the_embedding_table(
        built: Dict[str, Tuple[onnx.ModelProto, Case]]) -> None:
    graph, (_, p, _, _, _) = built["tied_linear"]
    tables = [t for t in graph.graph.initializer if list(t.dims) == [V, F]]
    assert len(tables) == 1
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(tables[0]), p["wte.weight"])
    assert graph.graph.output[0].type.tensor_type.shape.dim[-1].dim_value == V
