"""The ONNX writer's transformer ops (frameworks/common/nnbench_onnx.py):
layer norm, both GELUs, learned positions, multi-head attention (causal
or not), the output tied to an embedding, the first position. Each graph
is checked by onnx's checker at opset 17, run by onnx's reference
evaluator here and by ONNX Runtime and OpenVINO in their own environments
(scripts/setup onnxruntime|openvino; skipped where one is missing), and
compared with the ops' definitions (src/engines/reference/ops/
transformer.h) written in plain numpy, in float64 (transformer_numpy.py)."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Callable, Dict, List, Tuple, cast

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import nnbench_onnx
import tensors
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


# Generation: the decoder graph (nnbench_onnx.decoder) with past keys and
# values, step by step, and the engines' greedy generation on it.

GEN_V, GEN_F, GEN_H, GEN_T, GEN_POS = 13, 8, 2, 6, 12  # GEN_T: the description's
GEN_BLOCKS = 2  # two attention layers: past_key_0 and past_key_1


def gpt2_case() -> Tuple[dict, Params, Callable[[Params, np.ndarray], np.ndarray]]:
    """A two-block GPT-2 (block_case's layers twice, the residual stream
    wired by index) and its NumPy forward pass over a sequence of any
    length (the positions' first rows), in float64."""
    layers: List[dict] = [{"name": "wte", "op": "embedding", "vocab": GEN_V, "out": GEN_F},
                          {"name": "wpe", "op": "positions", "vocab": GEN_POS}]
    for b in range(GEN_BLOCKS):
        stream = len(layers) - 1  # the residual stream's layer
        layers += [{"name": f"ln_1_{b}", "op": "layer_norm", "eps": 1e-5},
                   {"name": f"attn_{b}", "op": "attention", "heads": GEN_H, "causal": True,
                    "bias": True},
                   {"name": f"res1_{b}", "op": "add", "inputs": [stream, stream + 2]},
                   {"name": f"ln_2_{b}", "op": "layer_norm", "eps": 1e-5},
                   {"name": f"fc_{b}", "op": "linear", "out": 4 * GEN_F, "bias": True},
                   {"name": f"act_{b}", "op": "gelu", "approximate": True},
                   {"name": f"proj_{b}", "op": "linear", "out": GEN_F, "bias": True},
                   {"name": f"res2_{b}", "op": "add", "inputs": [stream + 3, stream + 7]}]
    layers += [{"name": "ln_f", "op": "layer_norm", "eps": 1e-5},
               {"name": "lm_head", "op": "tied_linear", "tied": 0}]
    for l in layers:
        wide = l["name"].startswith(("fc", "act"))
        l["shape"] = [GEN_T, GEN_V if l["name"] == "lm_head" else 4 * GEN_F if wide
                      else GEN_F]
    p = {"wte.weight": floats((GEN_V, GEN_F), 50), "wpe.weight": floats((GEN_POS, GEN_F), 51)}
    for b in range(GEN_BLOCKS):
        s = 60 + 20 * b
        p |= {f"attn_{b}.in_weight": floats((3 * GEN_F, GEN_F), s, 0.5),
              f"attn_{b}.in_bias": floats((3 * GEN_F,), s + 1, 0.1),
              f"attn_{b}.out_weight": floats((GEN_F, GEN_F), s + 2, 0.5),
              f"attn_{b}.out_bias": floats((GEN_F,), s + 3, 0.1),
              f"fc_{b}.weight": floats((4 * GEN_F, GEN_F), s + 4, 0.5),
              f"fc_{b}.bias": floats((4 * GEN_F,), s + 5, 0.1),
              f"proj_{b}.weight": floats((GEN_F, 4 * GEN_F), s + 6, 0.3),
              f"proj_{b}.bias": floats((GEN_F,), s + 7, 0.1)}
        for i, ln in enumerate((f"ln_1_{b}", f"ln_2_{b}")):
            p[f"{ln}.weight"] = 1 + floats((GEN_F,), s + 10 + i, 0.1)
            p[f"{ln}.bias"] = floats((GEN_F,), s + 12 + i, 0.1)
    p["ln_f.weight"] = 1 + floats((GEN_F,), 99, 0.1)
    p["ln_f.bias"] = floats((GEN_F,), 98, 0.1)

    def forward(p: Params, ids: np.ndarray) -> np.ndarray:
        table = p["wte.weight"].astype(np.float64)
        h = table[ids] + p["wpe.weight"][:ids.shape[1]]
        ln = lambda n, v: layer_norm(v, p[f"{n}.weight"], p[f"{n}.bias"], 1e-5)
        for b in range(GEN_BLOCKS):
            h = h + attention(ln(f"ln_1_{b}", h), p, GEN_H, True, name=f"attn_{b}")
            up = gelu(ln(f"ln_2_{b}", h) @ p[f"fc_{b}.weight"].T + p[f"fc_{b}.bias"], True)
            h = h + up @ p[f"proj_{b}.weight"].T + p[f"proj_{b}.bias"]
        out: np.ndarray = ln("ln_f", h) @ table.T
        return out
    return model(layers, [GEN_T], "int64", name="gpt2"), p, forward


GEN_ROWS = [[3, 9, 1, 12], [10, 2, 2, 7]]  # prompts of one length
GEN_CAPACITY = 9  # prompt 4, five decodes: a sixth is refused


def greedy(forward: Callable[[Params, np.ndarray], np.ndarray], p: Params,
           rows: List[List[int]], steps: int) -> List[List[int]]:
    """Each step's next tokens: the argmax of the last row of a forward
    pass over the whole sequence so far (no cache). The margin over the
    runner-up is asserted, so that float32 engines cannot differ by a
    rounding."""
    seqs = np.array(rows, np.int64)
    out = []
    for _ in range(steps):
        last = forward(p, seqs)[:, -1]
        top = np.sort(last, -1)
        assert (top[:, -1] - top[:, -2] > 1e-3).all(), "a near tie: pick other seeds"
        nxt = last.argmax(-1)
        out.append([int(t) for t in nxt])
        seqs = np.concatenate([seqs, nxt[:, None]], 1)
    return out


def test_the_decoder_graph_is_valid_opset_17_with_a_cache_per_attention() -> None:
    m, p, _ = gpt2_case()
    proto, d = nnbench_onnx.decoder(m, p)
    onnx.checker.check_model(proto, full_check=True)
    assert [(o.domain, o.version) for o in proto.opset_import] == [("", 17)]
    names = lambda vs: [v.name for v in vs]
    assert names(proto.graph.input) == ["input_ids", "past_key_0", "past_value_0",
                                          "past_key_1", "past_value_1"]
    assert names(proto.graph.output) == ["logits", "present_key_0", "present_value_0",
                                           "present_key_1", "present_value_1"]
    assert [(c.heads, c.width) for c in d.past] == [(GEN_H, GEN_F // GEN_H)] * GEN_BLOCKS
    assert d.limit == GEN_POS
    ops = {n.op_type for n in proto.graph.node}
    assert "Gelu" not in ops and "Attention" not in ops
    # the whole positions table, the other weights as the inference graph's
    tables = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    assert any(v.shape == (GEN_POS, GEN_F) and np.array_equal(v, p["wpe.weight"])
               for v in tables.values())
    graph = {t.name: numpy_helper.to_array(t)
             for t in nnbench_onnx.build(m, p).graph.initializer}
    same = lambda v: any(v.shape == w.shape and np.array_equal(v, w) for w in graph.values())
    assert sum(not same(v) for v in tables.values() if v.ndim == 2) == 1  # positions


def test_the_decoder_graph_step_by_step_gives_the_whole_sequences_logits() -> None:
    """ONNX's reference evaluator runs the prompts with an empty past, then
    one token a step and once two (a past and several new tokens: the
    mask's general case), each step's present fed back: the last position's
    logits are those of the whole sequence by the NumPy definition."""
    m, p, forward = gpt2_case()
    run = ReferenceEvaluator(nnbench_onnx.decoder(m, p)[0])
    n, depth = len(GEN_ROWS), GEN_F // GEN_H
    past: List[np.ndarray] = [np.zeros((n, GEN_H, 0, depth), np.float32)
                              for _ in range(2 * GEN_BLOCKS)]
    names = [f"past_{kind}_{b}" for b in range(GEN_BLOCKS) for kind in ("key", "value")]
    seqs = np.zeros((n, 0), np.int64)
    for rows in (GEN_ROWS, [[5], [11]], [[0, 4], [8, 1]], [[6], [6]]):
        new = np.array(rows, np.int64)
        seqs = np.concatenate([seqs, new], 1)
        # a list, the outputs in order, when no names are asked for
        outs = cast(List[np.ndarray],
                    run.run(None, {"input_ids": new, **dict(zip(names, past))}))
        logits, past = np.asarray(outs[0]), [np.asarray(x) for x in outs[1:]]
        assert logits.shape == (n, 1, GEN_V)
        assert [x.shape for x in past] == [(n, GEN_H, seqs.shape[1], depth)] * 4
        np.testing.assert_allclose(logits[:, 0], forward(p, seqs)[:, -1],
                                   rtol=1e-4, atol=1e-5)
    assert seqs.shape[1] > GEN_T  # past the description's T: the table's later rows


def test_a_model_that_does_not_generate_has_no_decoder() -> None:
    m, p, _, _, _ = attention_case(True, True)
    with pytest.raises(NotImplementedError, match="token ids"):
        nnbench_onnx.decoder(m, p)
    m, p, _, _, _ = seq_first_case()
    with pytest.raises(NotImplementedError, match="generation"):
        nnbench_onnx.decoder(m, p)


# The engines' generation, in their own environment: compile, then prefill
# and decode as worker.py drives them (tokens to the JSON file argv[2]).
GENERATE = """
import json, os, sys
import numpy as np
root, d = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "frameworks", "common"))
import worker
engine = sys.argv[3]
e = worker.load_module(os.path.join(root, "frameworks", engine, "engine.py")).Engine()
opened = []
open_decoder = e.open_decoder
e.open_decoder = lambda proto: (opened.append(1), open_decoder(proto))[1]
with open(f"{d}/case.json") as f:
    case = json.load(f)
import tensors
params = tensors.read(f"{d}/params.bin")
e.compile(case["model"], params, {"precision": "fp32", "threads": 1, "device": "cpu",
          "seed": 1}, {"train_batch": 0, "infer_batches": [len(case["rows"])]})
out = {"generates": e.hello().get("generates")}

def generate(rows, steps):
    got = [e.prefill(rows, case["capacity"])]
    for _ in range(steps - 1):
        got.append(e.decode(got[-1]))
    return got

out["batch"] = generate(case["rows"], case["steps"])
try:
    e.decode(out["batch"][-1])
except ValueError as x:
    out["refused"] = str(x)
out["alone"] = generate(case["rows"][1:], case["steps"])
try:
    e.prefill(case["rows"], case["too_many"])
except ValueError as x:
    out["too_many"] = str(x)
out["opened"] = len(opened)
with open(f"{d}/out.json", "w") as f:
    json.dump(out, f)
"""


@pytest.fixture(scope="module", params=sorted(RUNNERS))
def engine_generations(request: pytest.FixtureRequest) -> dict:
    engine = request.param
    py = os.path.join(venvs(), engine, "bin", "python")
    if not os.access(py, os.X_OK):
        pytest.skip(f"no {engine} environment ({py}): scripts/setup {engine}")
    m, p, _ = gpt2_case()
    steps = GEN_CAPACITY - len(GEN_ROWS[0]) + 1  # the prefill's token and 5 decodes
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"model": m, "rows": GEN_ROWS, "capacity": GEN_CAPACITY,
                       "steps": steps, "too_many": GEN_POS + 1}, f)
        tensors.write(os.path.join(d, "params.bin"), p)  # as nnbench hands them over
        r = subprocess.run([py, "-c", GENERATE, ROOT, d, engine], capture_output=True,
                           text=True)
        assert r.returncode == 0, f"{engine}: {r.stderr}"
        with open(os.path.join(d, "out.json")) as f:
            out: dict = json.load(f)
            return out


def test_the_engine_generates_the_greedy_tokens_of_the_whole_sequences(
        engine_generations: dict) -> None:
    m, p, forward = gpt2_case()
    out = engine_generations
    assert out["generates"] is True
    steps = GEN_CAPACITY - len(GEN_ROWS[0]) + 1
    want = greedy(forward, p, GEN_ROWS, steps)
    assert out["batch"] == want
    assert len({tuple(t) for t in want}) > 1  # not one token over and over
    # the rows decoded apart: the second prompt alone, as in the batch
    assert out["alone"] == [[t[1]] for t in want]
    assert out["opened"] == 1  # one decoder per compile, not per generation


def test_the_engine_refuses_tokens_past_the_capacity(engine_generations: dict) -> None:
    assert f"{GEN_CAPACITY + 1} tokens exceed the cache's {GEN_CAPACITY}" in \
        engine_generations["refused"]
    assert f"{GEN_POS} learned positions" in engine_generations["too_many"]
