"""nnbench's models as ONNX graphs with their weights: what the inference
engines (`onnxruntime`, `openvino`) run and `nnbench models --export-onnx`
writes.

One ONNX node (or a few) per nnbench layer, NCHW and PyTorch's weight
layouts as nnbench keeps them; opset 17. Inference only: dropout is the
identity and batch norm uses its running statistics (nnbench's initial
ones, mean 0 and variance 1, unless the parameters carry others).
LSTMs become ONNX LSTM nodes, sequence-major (transposed around): PyTorch's gate
order i, f, g, o is moved to ONNX's i, o, f, c, and the two biases are
ONNX's Wb and Rb (one bias: Rb is zero).

The transformer ops, as the reference oracle defines them
(src/engines/reference/ops/transformer.h): layer norm is ONNX's
LayerNormalization (an opset-17 op); GELU is written out (ONNX's Gelu is
opset 20), x/2 (1 + erf(x/sqrt 2)) or, `approximate`, the tanh form;
learned positions add the table's first T rows; attention is MatMuls,
Reshapes and Transposes around a Softmax (q, k and v are the row blocks of
in_weight, heads consecutive blocks of F/heads, scores scaled by
1/sqrt(F/heads), a causal mask of float32's lowest value added above the
diagonal: exp gives 0 there, as for -inf); the tied output multiplies by
the transpose of the embedding's own table (one initializer for both);
seq_first gathers position 0.

Generation (`decoder`): for a model that generates (token ids [T] in,
logits [T, vocab] out, every layer per position but causal attention), a
second graph in Hugging Face Optimum's idiom for GPT-2 with past keys and
values: inputs input_ids [N, t] and, per attention layer k in order,
past_key_k and past_value_k [N, heads, P, D]; outputs logits [N, 1, vocab]
(the last new position's only: the head, run on that position alone,
chooses the next token) and present_key_k, present_value_k
[N, heads, P + t, D], the past with the new tokens' keys and values
concatenated. P (read from past_key_0's shape; 0 for the prompt) offsets
the learned positions, and new token j sees the P cached tokens and the
new ones up to itself. Its weights are the same parameters, written the
same way, but for the positions table, which it keeps whole (it reads
rows P..P+t-1).
"""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, List, NoReturn, Optional, Tuple, TypeVar

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from description import (attr, generation_problem, layer_inputs, pool_dim, shapes,
                         window_overhang)

OPSET = 17

# The decoder graph's names (Optimum's GPT-2 export's, less its dots).
IDS, LOGITS = "input_ids", "logits"

def check_avg_pool_overhang(model: dict) -> None:
    """NotImplementedError for a ceil-mode average pool with padding whose
    last window passes the padding: OpenVINO's divisor there differs from
    PyTorch's (the conformance case avg_pool_ceil_pad). Shapes only."""
    out = shapes(model)
    for i, l in enumerate(model["layers"]):
        first = layer_inputs(model, i)[0]
        s = model["input"]["shape"] if first < 0 else out[first]
        if (l["op"] == "avg_pool2d" and attr(l, "ceil_mode", False)
                and max(attr(l, "pad", [0, 0])) > 0 and window_overhang(l, s)):
            raise NotImplementedError(
                f"layer '{l['name']}' (avg_pool2d): a ceil-mode window past "
                "the padding (OpenVINO's divisor there differs from PyTorch's)")


class Graph:
    def __init__(self, model: dict, params: Dict[str, np.ndarray]):
        self.model, self.params = model, params
        self.nodes: List[onnx.NodeProto] = []
        self.inits: List[onnx.TensorProto] = []
        self.count = 0
        self.tables: Dict[str, str] = {}  # embedding layer -> its table's name
        # The decoder graph's (build_decoder): None in the inference graph.
        self.cached: Optional[Cached] = None

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base: str, value: np.ndarray) -> str:
        n = self.name(base)
        # C order, a scalar kept 0-d (ascontiguousarray makes it [1])
        self.inits.append(numpy_helper.from_array(np.require(value, requirements="C"), n))
        return n

    def param(self, key: str) -> np.ndarray:
        if key not in self.params:
            raise ValueError(f"no initial value for parameter {key}")
        return np.asarray(self.params[key], dtype=np.float32)

    def node(self, op: str, inputs: List[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def build(self) -> onnx.ModelProto:
        m = self.model
        shape = m["input"]["shape"]
        ids = m["input"]["dtype"] == "int64"
        x = helper.make_tensor_value_info(
            "input", TensorProto.INT64 if ids else TensorProto.FLOAT,
            ["batch"] + list(shape))
        outs: List[str] = []
        shapes: List[list] = []
        for i, l in enumerate(m["layers"]):
            ins = layer_inputs(m, i)
            xs = ["input" if j < 0 else outs[j] for j in ins]
            ss = [list(shape) if j < 0 else shapes[j] for j in ins]
            y, s = self.layer(l, xs, ss)
            outs.append(y)
            shapes.append(s)
        self.nodes.append(helper.make_node("Identity", [outs[-1]], ["output"]))
        y = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                          ["batch"] + shapes[-1])
        g = helper.make_graph(self.nodes, m.get("name", "model"), [x], [y],
                              self.inits)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="nnbench")
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model

    def build_decoder(self) -> Tuple[onnx.ModelProto, List["Past"]]:
        """The generation graph (the module's docstring) and its past
        inputs, in order; NotImplementedError for a model that does not
        generate."""
        m = self.model
        why = generation_problem(m)
        if why:
            raise NotImplementedError(f"generation: {why}")
        layers = m["layers"]
        out_shapes = shapes(m)
        past: List[Past] = []
        for i, l in enumerate(layers):
            if l["op"] == "attention":
                f = out_shapes[i][-1]  # attention keeps its input's width
                h = attr(l, "heads", 1)
                past.append(Past(len(past), h, f // h))
        if not past and any(l["op"] == "positions" for l in layers):
            # The past's length is what offsets the positions: without a
            # cache the graph cannot tell where the new tokens stand.
            raise NotImplementedError("generation: learned positions without "
                                      "attention (no cache to count the tokens by)")
        inputs = [helper.make_tensor_value_info(IDS, TensorProto.INT64,
                                                ["batch", "tokens"])]
        outputs = [helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT,
                                                 ["batch", 1, out_shapes[-1][-1]])]
        for p in past:
            for name in (p.key, p.value):
                inputs.append(helper.make_tensor_value_info(
                    name, TensorProto.FLOAT, ["batch", p.heads, "past", p.width]))
            for name in (p.present_key, p.present_value):
                outputs.append(helper.make_tensor_value_info(
                    name, TensorProto.FLOAT, ["batch", p.heads, "total", p.width]))
        self.cached = Cached(past, *self.lengths(past[0].key) if past else ("", "", ""))
        outs: List[str] = []
        last = len(layers) - 1
        for i, l in enumerate(layers):
            xs = [IDS if j < 0 else outs[j] for j in layer_inputs(m, i)]
            ss = [list(m["input"]["shape"]) if j < 0 else out_shapes[j]
                  for j in layer_inputs(m, i)]
            if i == last and l["op"] != "attention":
                # Only the last position's logits choose the next token, and
                # the head works on each position alone: it skips the others
                # (a prompt's whole [t, vocab] would be t times the work).
                xs = [self.last_position(x) for x in xs]
            y, _ = self.layer(l, xs, ss)
            if i == last and l["op"] == "attention":
                y = self.last_position(y)
            outs.append(y)
        self.nodes.append(helper.make_node("Identity", [outs[-1]], [LOGITS]))
        g = helper.make_graph(self.nodes, f"{m.get('name', 'model')}_decoder", inputs,
                              outputs, self.inits)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="nnbench")
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model, past

    def lengths(self, past_key: str) -> Tuple[str, str, str]:
        """The cached length P and P + t as int64 [1], and the causal mask
        [t, P + t] (float32's lowest where key position > P + query j, 0
        elsewhere), one for every attention layer: new token j sits at
        position P + j and sees positions up to it."""
        p = self.node("Shape", [past_key], start=2, end=3)
        total = self.node("Add", [p, self.node("Shape", [IDS], start=1, end=2)])
        axis0 = self.const("axes", np.array([0], np.int64))
        zero, one = (self.const("i", np.array(v, np.int64)) for v in (0, 1))
        end = self.node("Squeeze", [total, axis0])
        queries = self.node("Range", [self.node("Squeeze", [p, axis0]), end, one])
        keys = self.node("Range", [zero, end, one])
        later = self.node("Greater", [keys, self.node(
            "Unsqueeze", [queries, self.const("axes", np.array([1], np.int64))])])
        mask = self.node("Where", [later,
                                   self.scalar(float(np.finfo(np.float32).min)),
                                   self.scalar(0.0)])
        return p, total, mask

    def last_position(self, x: str) -> str:
        """x [N, t, ...] as [N, 1, ...], its last position."""
        return self.node("Slice", [x, self.const("starts", np.array([-1], np.int64)),
                                   self.const("ends", np.array([2**62], np.int64)),
                                   self.const("axes", np.array([1], np.int64))])

    def layer(self, l: dict, xs: List[str], ss: List[list]):
        op, x, s, name = l["op"], xs[0], list(ss[0]), l["name"]
        k = attr(l, "kernel", [1, 1])
        st = attr(l, "stride", [1, 1])
        p = attr(l, "pad", [0, 0])
        if op == "linear":
            w = self.param(f"{name}.weight")
            y = self.node("MatMul", [x, self.const("w", w.T)])
            if attr(l, "bias", True):
                y = self.node("Add", [y, self.const("b", self.param(f"{name}.bias"))])
            return y, s[:-1] + [l["out"]]
        if op == "conv2d":
            ins = [x, self.const("w", self.param(f"{name}.weight"))]
            if attr(l, "bias", True):
                ins.append(self.const("b", self.param(f"{name}.bias")))
            y = self.node("Conv", ins, kernel_shape=k, strides=st,
                          pads=[p[0], p[1], p[0], p[1]], group=attr(l, "groups", 1))
            return y, [l["out"], pool_dim(s[1], k[0], st[0], p[0], False),
                       pool_dim(s[2], k[1], st[1], p[1], False)]
        if op in ("max_pool2d", "avg_pool2d"):
            ceil = attr(l, "ceil_mode", False)
            extra = {"count_include_pad": 1} if op == "avg_pool2d" else {}
            y = self.node("MaxPool" if op == "max_pool2d" else "AveragePool", [x],
                          kernel_shape=k, strides=st, pads=[p[0], p[1], p[0], p[1]],
                          ceil_mode=int(ceil), **extra)
            return y, [s[0], pool_dim(s[1], k[0], st[0], p[0], ceil),
                       pool_dim(s[2], k[1], st[1], p[1], ceil)]
        if op == "global_avg_pool":
            return self.node("Flatten", [self.node("GlobalAveragePool", [x])],
                             axis=1), [s[0]]
        if op == "seq_mean":
            return self.node("ReduceMean", [x], axes=[1], keepdims=0), [s[1]]
        if op in ("relu", "sigmoid", "tanh"):
            return self.node(op.capitalize(), [x]), s
        if op == "softmax":
            return self.node("Softmax", [x], axis=-1), s
        if op == "dropout":
            return x, s
        if op == "batch_norm":
            c = s[0]
            mean = self.params.get(f"{name}.running_mean", np.zeros(c, np.float32))
            var = self.params.get(f"{name}.running_var", np.ones(c, np.float32))
            y = self.node("BatchNormalization",
                          [x, self.const("scale", self.param(f"{name}.weight")),
                           self.const("bias", self.param(f"{name}.bias")),
                           self.const("mean", np.asarray(mean, np.float32)),
                           self.const("var", np.asarray(var, np.float32))],
                          epsilon=attr(l, "eps", 1e-5))
            return y, s
        if op == "lrn":
            return self.node("LRN", [x], size=attr(l, "size", 5),
                             alpha=attr(l, "alpha", 1e-4), beta=attr(l, "beta", 0.75),
                             bias=attr(l, "k", 1.0)), s
        if op == "flatten":
            return self.node("Flatten", [x], axis=1), [int(np.prod(s))]
        if op == "add":
            return self.node("Add", xs[:2]), s
        if op == "concat":
            return self.node("Concat", xs, axis=1), [sum(q[0] for q in ss)] + s[1:]
        if op == "zero_pad_shortcut":
            sub = self.node("Slice", [x, self.const("starts", np.array([0, 0], np.int64)),
                                      self.const("ends", np.array([2**62, 2**62], np.int64)),
                                      self.const("axes", np.array([2, 3], np.int64)),
                                      self.const("steps", np.array(st, np.int64))])
            extra = l["out"] - s[0]
            lo = extra // 2
            pads = np.array([0, lo, 0, 0, 0, extra - lo, 0, 0], np.int64)
            y = self.node("Pad", [sub, self.const("pads", pads)])
            return y, [l["out"], -(-s[1] // st[0]), -(-s[2] // st[1])]
        if op == "embedding":
            table = self.const("table", self.param(f"{name}.weight"))
            self.tables[name] = table
            return self.node("Gather", [table, x]), s + [l["out"]]
        if op == "one_hot":
            y = self.node("OneHot", [x, self.const("depth", np.array(l["vocab"], np.int64)),
                                     self.const("values", np.array([0, 1], np.float32))],
                          axis=-1)
            return y, s + [l["vocab"]]
        if op == "lstm":
            return self.lstm(l, x, s)
        if op == "layer_norm":
            y = self.node("LayerNormalization",
                          [x, self.const("scale", self.param(f"{name}.weight")),
                           self.const("bias", self.param(f"{name}.bias"))],
                          axis=-1, epsilon=attr(l, "eps", 1e-5))
            return y, s
        if op == "gelu":
            return self.gelu(x, attr(l, "approximate", False)), s
        if op == "positions":
            if self.cached is not None:
                # Generation: rows P..P+t-1 of the whole table
                table = self.const("positions", self.param(f"{name}.weight"))
                seen = self.node("Slice", [table, self.cached.past_length,
                                           self.cached.total_length,
                                           self.const("axes", np.array([0], np.int64))])
                return self.node("Add", [x, seen]), s
            rows = self.param(f"{name}.weight")[:s[0]]  # [T, F] of [P, F]
            return self.node("Add", [x, self.const("positions", rows)]), s
        if op == "attention":
            return self.attention(l, x, s), s
        if op == "tied_linear":
            emb = self.model["layers"][l["tied"]]
            shared = self.tables.get(emb["name"])
            if shared is None:
                shared = self.const("table", self.param(f"{emb['name']}.weight"))
            y = self.node("MatMul", [x, self.node("Transpose", [shared], perm=[1, 0])])
            return y, s[:-1] + [emb["vocab"]]
        if op == "seq_first":
            return self.node("Gather", [x, self.const("first", np.array(0, np.int64))],
                             axis=1), [s[1]]
        raise NotImplementedError(f"layer '{name}' ({op})")

    def scalar(self, v: float) -> str:
        return self.const("c", np.array(v, np.float32))

    def gelu(self, x: str, approximate: bool) -> str:
        """(x (1 + erf(x/sqrt 2))) 0.5, or GPT-2's
        (x 0.5) (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): in the node order
        ONNX Runtime fuses into its Gelu and FastGelu kernels."""
        if approximate:
            cube = self.node("Pow", [x, self.scalar(3.0)])
            inner = self.node("Add", [x, self.node("Mul", [cube, self.scalar(0.044715)])])
            t = self.node("Tanh", [self.node("Mul", [inner,
                                                     self.scalar(math.sqrt(2 / math.pi))])])
            half = self.node("Mul", [x, self.scalar(0.5)])
            return self.node("Mul", [half, self.node("Add", [t, self.scalar(1.0)])])
        t = self.node("Erf", [self.node("Div", [x, self.scalar(math.sqrt(2))])])
        y = self.node("Mul", [x, self.node("Add", [t, self.scalar(1.0)])])
        return self.node("Mul", [y, self.scalar(0.5)])

    def attention(self, l: dict, x: str, s: list) -> str:
        """Multi-head self-attention on x [N, T, F]: per head (columns
        h*D..(h+1)*D of q, k and v, D = F/H) softmax(q k^T / sqrt(D)) v,
        position i seeing positions <= i only when causal; the heads side
        by side, projected out. In the decoder graph, k and v are the
        past's with the new tokens' concatenated (present_key_k,
        present_value_k) and the mask is the cache's (lengths)."""
        name, f = l["name"], s[-1]
        h = attr(l, "heads", 1)
        d = f // h
        bias = attr(l, "bias", True)
        w_in = self.param(f"{name}.in_weight")  # [3F, F]: q, k, v row blocks
        b_in = self.param(f"{name}.in_bias") if bias else None
        split = self.const("shape", np.array([0, 0, h, d], np.int64))
        cached = self.cached
        # q, k, v as [N, H, T, D], k as [N, H, D, T]; k too as [N, H, T, D]
        # in the decoder graph, the cache's layout (the idiom's)
        perms = ([0, 2, 1, 3], [0, 2, 1, 3] if cached else [0, 2, 3, 1], [0, 2, 1, 3])
        heads = []
        for j, perm in enumerate(perms):
            y = self.node("MatMul", [x, self.const("w", w_in[j * f:(j + 1) * f].T)])
            if b_in is not None:
                y = self.node("Add", [y, self.const("b", b_in[j * f:(j + 1) * f])])
            heads.append(self.node("Transpose", [self.node("Reshape", [y, split])],
                                   perm=perm))
        if cached is not None:
            p = cached.past[cached.next]
            cached.next += 1
            for j, (past, present) in enumerate(((p.key, p.present_key),
                                                 (p.value, p.present_value))):
                self.nodes.append(helper.make_node("Concat", [past, heads[j + 1]],
                                                   [present], axis=2))
            heads[1:] = [self.node("Transpose", [p.present_key], perm=[0, 1, 3, 2]),
                         p.present_value]
        scores = self.node("Mul", [self.node("MatMul", heads[:2]),
                                   self.scalar(1 / math.sqrt(d))])
        if cached is not None:
            scores = self.node("Add", [scores, cached.mask])
        elif attr(l, "causal", False):
            # float32's lowest rather than -inf: the same softmax (exp gives
            # 0 exactly) without infinities for int8 calibration's ranges
            t = s[0]
            mask = np.triu(np.full((t, t), np.finfo(np.float32).min, np.float32), 1)
            scores = self.node("Add", [scores, self.const("mask", mask)])
        ctx = self.node("MatMul", [self.node("Softmax", [scores], axis=-1), heads[2]])
        ctx = self.node("Reshape", [self.node("Transpose", [ctx], perm=[0, 2, 1, 3]),
                                    self.const("shape", np.array([0, 0, f], np.int64))])
        y = self.node("MatMul", [ctx, self.const("w", self.param(f"{name}.out_weight").T)])
        if bias:
            y = self.node("Add", [y, self.const("b", self.param(f"{name}.out_bias"))])
        return y

    def lstm(self, l: dict, x: str, s: list):
        name, h = l["name"], l["out"]
        bi = attr(l, "bidirectional", False)
        dirs = ["", "_reverse"] if bi else [""]
        order = np.concatenate([np.arange(0, h), np.arange(3 * h, 4 * h),
                                np.arange(h, 2 * h), np.arange(2 * h, 3 * h)])
        n = attr(l, "num_layers", 1)
        width = h * len(dirs)
        # Sequence-major, ONNX's default layout (ONNX Runtime's CPU LSTM
        # has no batch-major form): [N, T, C] -> [T, N, C].
        x = self.node("Transpose", [x], perm=[1, 0, 2])
        for k in range(n):
            W, R, B = [], [], []
            for d in dirs:
                base = f"{name}.l{k}{d}"
                W.append(self.param(f"{base}.w_ih")[order])
                R.append(self.param(f"{base}.w_hh")[order])
                b_ih = self.param(f"{base}.b_ih")[order]
                b_hh = (self.param(f"{base}.b_hh")[order]
                        if attr(l, "lstm_biases", 1) == 2 else np.zeros_like(b_ih))
                B.append(np.concatenate([b_ih, b_hh]))
            outs = [self.name("lstm_y"), self.name("lstm_h")]
            self.nodes.append(helper.make_node(
                "LSTM", [x, self.const("W", np.stack(W)), self.const("R", np.stack(R)),
                         self.const("B", np.stack(B))], outs, hidden_size=h,
                direction="bidirectional" if bi else "forward"))
            # Y: [T, dirs, N, H] -> [T, N, dirs * H], the next layer's input
            x = self.node("Reshape", [self.node("Transpose", [outs[0]],
                                                perm=[0, 2, 1, 3]),
                                      self.const("shape", np.array([0, 0, width],
                                                                   np.int64))])
        if attr(l, "sequences", True):
            return self.node("Transpose", [x], perm=[1, 0, 2]), [s[0], width]
        # Y_h: [dirs, N, H] -> [N, dirs * H]: forward's last step, and the
        # backward direction's final state (at t = 0), as PyTorch's h_n.
        y = self.node("Reshape", [self.node("Transpose", [outs[1]], perm=[1, 0, 2]),
                                  self.const("shape", np.array([0, width], np.int64))])
        return y, [width]


def build(model: dict, params: Dict[str, np.ndarray]) -> onnx.ModelProto:
    return Graph(model, params).build()


@dataclass
class Past:
    """Attention layer `index`'s (in order) cache: [N, heads, P, width]."""

    index: int
    heads: int
    width: int

    @property
    def key(self) -> str:
        return f"past_key_{self.index}"

    @property
    def value(self) -> str:
        return f"past_value_{self.index}"

    @property
    def present_key(self) -> str:
        return f"present_key_{self.index}"

    @property
    def present_value(self) -> str:
        return f"present_value_{self.index}"


@dataclass
class Cached:
    """The decoder graph's while it is written: the past inputs, the
    lengths' and mask's names (Graph.lengths), the next attention's."""

    past: List[Past]
    past_length: str
    total_length: str
    mask: str
    next: int = 0


@dataclass
class Decoder:
    """What running the generation graph needs besides its session: the
    past inputs in order (the graph's inputs are input_ids, then
    past_key_k, past_value_k for each; its outputs logits, then
    present_key_k, present_value_k) and the most tokens it takes (the
    learned positions' rows; None: no limit)."""

    past: List[Past]
    limit: Optional[int]



Loaded = TypeVar("Loaded")


def load_from_file(graph: bytes, load: Callable[[str], Loaded]) -> Loaded:
    """`load(path)` on the serialized graph written to a temporary file,
    removed after: the runtimes load a model from a path as their users
    do (an ONNX Runtime session made from the bytes decoded slower)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as f:
            f.write(graph)
        return load(path)

def decoder(model: dict, params: Dict[str, np.ndarray]) -> Tuple[onnx.ModelProto, Decoder]:
    """The generation graph (the module's docstring) and its layout;
    NotImplementedError for a model that does not generate."""
    proto, past = Graph(model, params).build_decoder()
    rows = [l["vocab"] for l in model["layers"] if l["op"] == "positions"]
    return proto, Decoder(past, min(rows) if rows else None)


@dataclass
class Generation:
    """One generation's state: the cache's capacity, the rows, the tokens
    held and the past keys and values as the graph gave them (on OpenVINO
    views of its request's outputs, fed back in before it runs again)."""

    capacity: int
    rows: int
    length: int = 0
    past: List[np.ndarray] = field(default_factory=list)
    logits: Optional[np.ndarray] = None  # the last step's, [N, 1, vocab]


class InferenceEngine:
    """What the inference engines (onnxruntime, openvino) share: the
    batches, the timed steps around `run(x)` (which returns the output on
    the host), training refused by name, and greedy generation on the
    decoder graph (`decoder`) around `open_decoder(proto)` (its session,
    built once per compile) and `run_decoder(feeds)` (its outputs in the
    graph's order, on the host). A subclass sets ENGINE and defines hello,
    compile (calling `compiling` first), effective, run, open_decoder and
    run_decoder."""

    ENGINE = ""

    def __init__(self) -> None:
        self.batches: List[np.ndarray] = []
        self.out: Optional[np.ndarray] = None
        self.options: dict = {}
        # The model and its parameters while the decoder is not built: the
        # first prefill after a compile builds it (an inference run never
        # pays for it), once.
        self.source: Optional[Tuple[dict, Dict[str, np.ndarray]]] = None
        self.decoder: Optional[Decoder] = None
        self.generation: Optional[Generation] = None
        self.why_not = "no model compiled"  # generation_problem's, "" when it generates

    PRECISIONS = ("fp32",)

    def compiling(self, model: dict, params: Dict[str, np.ndarray], options: dict,
                  shapes: dict) -> None:
        """A compile's start: what it refuses, and the decoder of an earlier
        compile dropped. The parameters are kept (a reference, no copy)
        only for a model that generates. A compile for generation
        (options' "generation") may ask for a precision the steps do not
        run (generation_precisions), and needs no calibration."""
        if options.get("generation"):
            self.refuse_generation(options["precision"])
            if shapes.get("train_batch", 0) > 0:
                self.training()
        else:
            self.refuse(options, shapes)
        self.options = options
        self.decoder, self.generation = None, None
        self.why_not = generation_problem(model)
        self.source = None if self.why_not else (model, params)

    def generation_precisions(self) -> Tuple[List[str], Dict[str, str]]:
        """The precisions the engine generates at here, and why not at the
        others it could (hello's generation_precisions and _gaps)."""
        return ["fp32"], {}

    def refuse_generation(self, precision: str) -> None:
        at, gaps = self.generation_precisions()
        if precision not in at:
            why = f"; {gaps[precision]}" if precision in gaps else ""
            raise NotImplementedError(f"generation at {precision} (the {self.ENGINE} "
                                      f"engine generates at {', '.join(at)}{why})")

    def open_generation(self) -> None:
        """A compile for generation builds the decoder now (the first
        prefill would otherwise); a model that does not generate is
        refused here."""
        if self.source is None:
            raise NotImplementedError(f"generation: {self.why_not}")
        self.build_decoder()

    def build_decoder(self) -> Decoder:
        assert self.source is not None
        # Neither the graph nor the parameters are kept: the session
        # holds the weights now.
        proto, d = decoder(*self.source)
        self.open_decoder(proto)
        self.decoder = d  # only once its session is open
        self.source = None
        del proto
        return d

    def refuse(self, options: dict, shapes: dict) -> None:
        if options["precision"] not in self.PRECISIONS:
            raise NotImplementedError(
                f"precision {options['precision']} (the {self.ENGINE} engine "
                f"runs {', '.join(self.PRECISIONS)})")
        if options["precision"] == "int8" and not options.get("calibration"):
            raise ValueError("int8 needs calibration samples (nnbench infer "
                             "writes them)")
        if shapes.get("train_batch", 0) > 0:
            self.training()

    def training(self) -> NoReturn:
        raise NotImplementedError(f"training (the {self.ENGINE} engine runs "
                                  "inference only)")

    def run(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError("run")

    def open_decoder(self, proto: onnx.ModelProto) -> None:
        raise NotImplementedError("open_decoder")

    def run_decoder(self, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
        raise NotImplementedError("run_decoder")

    def prefill(self, rows: List[List[int]], capacity: int) -> List[int]:
        """Greedy generation with a KV cache, as Optimum's ONNX decoder loop
        runs it: the prompts with an empty past, then each step's present
        fed back as the next one's past. The past grows by one position a
        step (the graph's Concat): `capacity` bounds it, nothing is
        allocated ahead."""
        if self.options.get("precision", "fp32") != "fp32" and \
                not self.options.get("generation"):
            raise NotImplementedError(f"generation after a compile at "
                                      f"{self.options['precision']} for steps")
        d = self.decoder
        if d is None:
            if self.source is None:
                raise NotImplementedError(f"generation: {self.why_not}")
            d = self.build_decoder()
        limit = d.limit
        if limit is not None and capacity > limit:
            raise ValueError(f"generation: a cache of {capacity} tokens, but the "
                             f"model has {limit} learned positions")
        n = len(rows)
        self.generation = Generation(capacity, n, 0, [
            np.zeros((n, p.heads, 0, p.width), np.float32)
            for p in d.past for _ in (p.key, p.value)])
        return self.next_tokens(np.array(rows, dtype=np.int64))

    def decode(self, tokens: List[int]) -> List[int]:
        g = self.generation
        if g is None:
            raise ValueError("generation: decode before a prefill")
        if len(tokens) != g.rows:
            raise ValueError(f"generation: {len(tokens)} tokens to decode for "
                             f"{g.rows} rows")
        return self.next_tokens(np.array(tokens, dtype=np.int64).reshape(-1, 1))

    def next_tokens(self, ids: np.ndarray) -> List[int]:
        """ids [N, t] after the generation's tokens: each row's greedy next
        token; the past then holds them too."""
        g, d = self.generation, self.decoder
        assert g is not None and d is not None
        g.logits = None  # a step that fails leaves no logits
        if g.length + ids.shape[1] > g.capacity:
            raise ValueError(f"generation: {g.length + ids.shape[1]} tokens "
                             f"exceed the cache's {g.capacity}")
        names = [name for p in d.past for name in (p.key, p.value)]
        logits, *present = self.run_decoder({IDS: ids, **dict(zip(names, g.past))})
        g.past = present
        g.length += ids.shape[1]
        g.logits = logits  # kept (OpenVINO's is a view) for last_logits
        return [int(t) for t in np.asarray(logits)[:, -1].argmax(-1)]

    def last_logits(self) -> Optional[List[List[float]]]:
        """Each row's logits at its last position after the last step."""
        g = self.generation
        if g is None or g.logits is None:
            return None
        return np.asarray(g.logits)[:, -1].astype(np.float32).tolist()

    def load_batches(self, t: dict) -> None:
        n = sum(1 for k in t if k.startswith("input."))
        self.batches = [np.ascontiguousarray(t[f"input.{i}"]) for i in range(n)]

    def train_step(self, batch: int) -> None:
        self.training()

    def infer_step(self, batch: int) -> None:
        self.out = self.run(self.batches[batch])

    def output(self) -> dict:
        return {"output": np.asarray(self.out, dtype=np.float32)}

    def set_learning_rate(self, lr: float) -> None:
        self.training()

    def parameters(self) -> dict:
        self.training()

    def gradients(self) -> dict:
        self.training()
