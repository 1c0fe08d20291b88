"""nnbench's models as Keras 3 models: shared by the engines that run Keras
(`tensorflow` on TensorFlow, `jax` on JAX); only keras.ops inside, so the
same graph builds on either backend.

The model is built with Keras layers from nnbench's description, images
channels-last as Keras users run them (batches are transposed to NHWC
when they are loaded, before any clock); the weights are nnbench's seeded
values moved into Keras's layouts (conv HWIO, dense [in, out], LSTM
kernels transposed; a dense layer after a flatten of an image takes its
input in H, W, C order, so its weight columns are permuted).

The transformer ops are Keras's own layers where their function is the
description's: LayerNormalization, the GELUs of keras.ops, MultiHeadAttention
(nnbench's one [3F, F] projection split into its query, key and value
kernels, [F, H, D] each) and, for an embedding that an output layer is tied
to, ReversibleEmbedding, whose reverse call maps by the same table (one
variable, so its gradient sums both uses). The learned positions, which
Keras has no layer for, are the small layer Positions below.

The optimizers are nnbench's (src/backend/optimizer.cpp, PyTorch's
formulas). L2 weight decay is added to the gradients in the engines' step,
PyTorch's way, for all of them (Keras's own weight_decay is decoupled).
Keras's SGD computes PyTorch's momentum and Nesterov forms (with the rate
constant; a new rate rescales its velocity) and Keras's Adadelta is
nnbench's, the learning rate scaling the step. Keras's Adam adds epsilon to
sqrt(v) before the bias correction and its RMSprop inside the square root
(with the rate inside the momentum buffer), so Adam and RMSprop are
nnbench's formulas written here as Keras optimizers in keras.ops: under
TensorFlow they run as tf ops inside the engine's tf.function, under JAX
as jax.numpy inside its jitted stateless_apply.

Generation (greedy, with a KV cache) is KerasHub's idiom, written over
the same layers (cached_forward below): a cache of a fixed size per
attention layer, slice updates at a position given as a tensor, attention
masked to the positions filled; each engine compiles the step once per
shape (jax.jit, tf.function).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Callable, Dict, List, Optional

import numpy as np
import keras
from keras import layers as L
from keras import ops

from description import (PER_POSITION, attr, first_gap, generation_problem, layer_inputs,
                         optimizer_settings, pool_dim, refuse_precision)


def lrn(t, n: int, alpha: float, beta: float, k: float):
    """Cross-channel LRN, channels last, PyTorch's form: the mean of the
    squares over an odd window of n channels, zero-padded."""
    r = (n - 1) // 2
    c = t.shape[-1]
    sq = ops.pad(ops.square(t), [[0, 0], [0, 0], [0, 0], [r, r]])
    total = sq[..., 0:c]
    for i in range(1, n):
        total = total + sq[..., i:i + c]
    return t / ops.power(k + (alpha / n) * total, beta)


TWO_BIASES = ("two biases per gate (Keras's LSTM has one: their sum "
              "computes the same function but trains differently)")



def transposed(a: np.ndarray) -> np.ndarray:
    return a.T


class Positions(keras.layers.Layer):
    """Learned positions: a table [P, F], its first T rows added to
    [N, T, F] (GPT-2's wpe, BERT's position embeddings)."""

    def __init__(self, positions: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.positions = positions

    def build(self, input_shape) -> None:
        self.table = self.add_weight(shape=(self.positions, input_shape[-1]),
                                     initializer="zeros", name="weight")

    def call(self, x, offset=None):
        """`offset`: the first position's index, a tensor in a generation's
        cached forward (one compiled step for every offset); from 0
        otherwise."""
        if offset is None:
            return x + self.table[:x.shape[1]]
        table = ops.convert_to_tensor(self.table)  # JAX's slice takes no variable
        return x + ops.slice(table, [offset, 0], [x.shape[1], x.shape[2]])


class Builder:
    """Keras tensors for nnbench's layers, with the weight mappings."""

    def __init__(self, model: dict):
        self.model = model
        # canonical name -> (its Keras variables, to_keras, from_keras):
        # to_keras gives one array per variable, from_keras takes them back.
        self.loads: Dict[str, tuple] = {}
        # Layer index -> the Keras embedding built for it, for tied_linear.
        self.embeddings: Dict[int, L.Embedding] = {}
        self.tied: set = set()  # embeddings an output layer is tied to
        # "<bn>.running_mean"/"running_var" -> (layer, index): batch norm's
        # moving statistics, loaded where a weights file gives them.
        self.stats: Dict[str, tuple] = {}
        self.layout: list = []  # per layer: "nhwc", ("flat", C, H, W) or "plain"
        self.shape: List[list] = []   # per layer: per-sample shape, nnbench's order
        # Layer index -> the Keras layer that gives its output, for the
        # generation's cached forward, which calls the same layers again.
        self.made: Dict[int, keras.layers.Layer] = {}
        self.at = 0  # the layer being built

    def build(self):
        m = self.model
        shape = m["input"]["shape"]
        if m["input"]["dtype"] == "int64":
            inp = keras.Input(shape=tuple(shape), dtype="int32")
            in_layout = "plain"
        elif len(shape) == 3:
            c, h, w = shape
            inp = keras.Input(shape=(h, w, c))
            in_layout = "nhwc"
        else:
            inp = keras.Input(shape=tuple(shape))
            in_layout = "plain"
        self.tied = {l["tied"] for l in m["layers"] if l["op"] == "tied_linear"}
        outs = []
        for i, l in enumerate(m["layers"]):
            ins = layer_inputs(m, i)
            xs = [inp if j < 0 else outs[j] for j in ins]
            lays = [in_layout if j < 0 else self.layout[j] for j in ins]
            shapes = [shape if j < 0 else self.shape[j] for j in ins]
            self.at = i
            y, lay, s = self.layer(i, l, xs, lays, shapes)
            outs.append(y)
            self.layout.append(lay)
            self.shape.append(s)
        if self.layout[-1] != "plain":
            raise NotImplementedError("a model whose output is an image or a "
                                      "flattened image (the tensorflow engine "
                                      "returns it channels-last)")
        return keras.Model(inp, outs[-1])

    def keep(self, layer: keras.layers.Layer) -> keras.layers.Layer:
        """The layer that gives the output of the layer being built."""
        self.made[self.at] = layer
        return layer

    def map(self, name: str, layer, index: int, to_k: Optional[Callable],
            from_k: Optional[Callable]) -> None:
        """One canonical parameter as one Keras variable, layer.weights[index]."""
        self.loads[name] = (
            [layer.weights[index]],
            lambda a: [to_k(a) if to_k else a],
            lambda vs: from_k(vs[0]) if from_k else vs[0])

    def map_split(self, name: str, variables: list, to_k: Callable,
                  from_k: Callable) -> None:
        """One canonical parameter as several Keras variables."""
        self.loads[name] = (list(variables), to_k, from_k)

    def layer(self, i, l, xs, lays, shapes):
        op, x, lay, s = l["op"], xs[0], lays[0], list(shapes[0])
        name = l["name"]
        k = attr(l, "kernel", [1, 1])
        st = attr(l, "stride", [1, 1])
        p = attr(l, "pad", [0, 0])
        if op == "linear":
            d = self.keep(L.Dense(l["out"], use_bias=attr(l, "bias", True)))
            y = d(x)
            if isinstance(lay, tuple):  # flattened image: H, W, C order
                _, c, h, w = lay
                to_k = lambda a, c=c, h=h, w=w: (
                    a.reshape(a.shape[0], c, h, w).transpose(0, 2, 3, 1)
                    .reshape(a.shape[0], -1).T)
                from_k = lambda a, c=c, h=h, w=w: (
                    a.T.reshape(-1, h, w, c).transpose(0, 3, 1, 2)
                    .reshape(a.shape[1], -1))
            else:
                to_k = from_k = transposed
            self.map(f"{name}.weight", d, 0, to_k, from_k)
            if attr(l, "bias", True):
                self.map(f"{name}.bias", d, 1, None, None)
            return y, "plain", s[:-1] + [l["out"]]
        if op == "conv2d":
            if lay != "nhwc":
                raise NotImplementedError(f"layer '{name}' (conv2d) on a non-image")
            # Keras's "same" pads (k - 1) / 2 on each side at stride 1 and
            # an odd kernel: PyTorch's padding there, without a pad op of
            # its own (a pass over the activation each way per conv: on
            # ResNet-56, batch 128, the step was 11-16 % slower than plain
            # Keras with it, 0-4 % without; docs/performance.md). Elsewhere
            # "same" would split the pad unevenly: an explicit
            # ZeroPadding2D keeps PyTorch's.
            same = st == [1, 1] and all(
                kk % 2 == 1 and pp == kk // 2 for kk, pp in zip(k, p))
            if p != [0, 0] and not same:
                x = L.ZeroPadding2D(tuple(p))(x)
            cv = L.Conv2D(l["out"], tuple(k), strides=tuple(st),
                          padding="same" if same else "valid",
                          groups=attr(l, "groups", 1), use_bias=attr(l, "bias", True))
            y = cv(x)
            self.map(f"{name}.weight", cv, 0, lambda a: a.transpose(2, 3, 1, 0),
                     lambda a: a.transpose(3, 2, 0, 1))
            if attr(l, "bias", True):
                self.map(f"{name}.bias", cv, 1, None, None)
            return y, "nhwc", [l["out"], pool_dim(s[1], k[0], st[0], p[0], False),
                               pool_dim(s[2], k[1], st[1], p[1], False)]
        if op in ("max_pool2d", "avg_pool2d"):
            ceil = attr(l, "ceil_mode", False)
            oh = pool_dim(s[1], k[0], st[0], p[0], ceil)
            ow = pool_dim(s[2], k[1], st[1], p[1], ceil)
            # Extra bottom/right rows a ceil-mode window reaches past the pad.
            eh = max(0, (oh - 1) * st[0] + k[0] - (s[1] + 2 * p[0]))
            ew = max(0, (ow - 1) * st[1] + k[1] - (s[2] + 2 * p[1]))
            if op == "avg_pool2d":
                if eh or ew:
                    raise NotImplementedError(
                        f"layer '{name}' (avg_pool2d): a ceil-mode window past "
                        "the padding (PyTorch's divisor there has no Keras form)")
                if p != [0, 0]:
                    x = L.ZeroPadding2D(tuple(p))(x)
                y = L.AveragePooling2D(tuple(k), tuple(st), padding="valid")(x)
            else:
                if p != [0, 0] or eh or ew:
                    pads = [[0, 0], [p[0], p[0] + eh], [p[1], p[1] + ew], [0, 0]]
                    x = L.Lambda(lambda t, pads=pads: ops.pad(
                        t, pads, constant_values=-np.inf),
                        output_shape=(s[1] + 2 * p[0] + eh, s[2] + 2 * p[1] + ew,
                                      s[0]))(x)
                y = L.MaxPooling2D(tuple(k), tuple(st), padding="valid")(x)
            return y, "nhwc", [s[0], oh, ow]
        if op == "global_avg_pool":
            return L.GlobalAveragePooling2D()(x), "plain", [s[0]]
        if op == "seq_mean":
            return L.GlobalAveragePooling1D()(x), "plain", [s[1]]
        if op in ("relu", "sigmoid", "tanh"):
            return self.keep(L.Activation(op))(x), lay, s
        if op == "softmax":
            if lay != "plain":
                raise NotImplementedError(f"layer '{name}' (softmax) on an image")
            return self.keep(L.Softmax(axis=-1))(x), lay, s
        if op == "dropout":
            return self.keep(L.Dropout(attr(l, "p", 0.0)))(x), lay, s
        if op == "batch_norm":
            if isinstance(lay, tuple):
                raise NotImplementedError(f"layer '{name}' (batch_norm) after "
                                          "a flatten of an image")
            bn = L.BatchNormalization(axis=-1, epsilon=attr(l, "eps", 1e-5),
                                      momentum=1 - attr(l, "momentum", 0.1))
            y = bn(x)
            self.map(f"{name}.weight", bn, 0, None, None)
            self.map(f"{name}.bias", bn, 1, None, None)
            self.stats[f"{name}.running_mean"] = (bn, 2)
            self.stats[f"{name}.running_var"] = (bn, 3)
            return y, lay, s
        if op == "lrn":
            n = attr(l, "size", 5)
            if n % 2 == 0 or lay != "nhwc":
                raise NotImplementedError(f"layer '{name}' (lrn): an even window")
            a, b, kk = attr(l, "alpha", 1e-4), attr(l, "beta", 0.75), attr(l, "k", 1.0)
            y = L.Lambda(lambda t: lrn(t, n, a, b, kk),
                         output_shape=(s[1], s[2], s[0]))(x)
            return y, lay, s
        if op == "flatten":
            flat = [int(np.prod(s))]
            if lay == "nhwc":
                return L.Flatten()(x), ("flat", s[0], s[1], s[2]), flat
            return L.Flatten()(x), lay, flat
        if op == "add":
            if lays[0] != lays[1]:
                raise NotImplementedError(f"layer '{name}' (add) of two layouts")
            return self.keep(L.Add())(xs), lay, s
        if op == "concat":
            if any(q != lay for q in lays) or isinstance(lay, tuple):
                raise NotImplementedError(f"layer '{name}' (concat) of these layouts")
            axis = -1 if lay == "nhwc" or len(s) == 1 else 1
            return (L.Concatenate(axis=axis)(xs), lay,
                    [sum(q[0] for q in shapes)] + s[1:])
        if op == "zero_pad_shortcut":
            extra = l["out"] - s[0]
            lo = extra // 2
            oh, ow = -(-s[1] // st[0]), -(-s[2] // st[1])
            y = L.Lambda(lambda t: ops.pad(t[:, ::st[0], ::st[1], :],
                                          [[0, 0], [0, 0], [0, 0], [lo, extra - lo]]),
                         output_shape=(oh, ow, l["out"]))(x)
            return y, "nhwc", [l["out"], oh, ow]
        if op == "embedding":
            e = self.keep(L.ReversibleEmbedding(l["vocab"], l["out"]) if i in self.tied
                          else L.Embedding(l["vocab"], l["out"]))
            y = e(x)
            self.map(f"{name}.weight", e, 0, None, None)
            self.embeddings[i] = e
            return y, "plain", s + [l["out"]]
        if op == "one_hot":
            return (self.keep(L.Lambda(lambda t: ops.one_hot(t, l["vocab"]),
                                       output_shape=tuple(s + [l["vocab"]])))(x),
                    "plain", s + [l["vocab"]])
        if op == "lstm":
            return self.lstm(l, x, s)
        if op in ("layer_norm", "gelu", "positions", "attention", "tied_linear",
                  "seq_first"):
            return self.transformer(l, x, lay, s)
        raise NotImplementedError(f"layer '{name}' ({op})")

    def transformer(self, l: dict, x, lay, s: list) -> tuple:
        op, name = l["op"], l["name"]
        if lay != "plain":
            raise NotImplementedError(f"layer '{name}' ({op}) on an image")
        if op == "layer_norm":
            ln = self.keep(L.LayerNormalization(axis=-1, epsilon=attr(l, "eps", 1e-5)))
            y = ln(x)
            self.map(f"{name}.weight", ln, 0, None, None)
            self.map(f"{name}.bias", ln, 1, None, None)
            return y, lay, s
        if op == "gelu":
            a = bool(attr(l, "approximate", False))
            return self.keep(L.Activation(lambda t: ops.gelu(t, approximate=a)))(x), lay, s
        if op == "seq_first":
            return (L.Lambda(lambda t: t[:, 0], output_shape=(s[1],))(x), lay,
                    [s[1]])
        if op == "positions":
            p = self.keep(Positions(l["vocab"]))
            y = p(x)
            self.map(f"{name}.weight", p, 0, None, None)
            return y, lay, s
        if op == "attention":
            return self.attention(l, x, s), lay, s
        e = self.embeddings.get(l["tied"])
        if not isinstance(e, L.ReversibleEmbedding):
            raise ValueError(f"layer '{name}' (tied_linear): layer {l['tied']} "
                             "is not an embedding")
        return e(x, reverse=True), lay, s[:-1] + [e.input_dim]

    def attention(self, l: dict, x, s: list):
        """Keras's MultiHeadAttention: head h's query, key and value are
        columns h*D..(h+1)*D of nnbench's, their kernels [F, H, D]; the
        output kernel [H, D, F] (D = F / H)."""
        name, f, heads = l["name"], s[-1], attr(l, "heads", 1)
        if f % heads:
            raise ValueError(f"layer '{name}' (attention): width {f} is not a "
                             f"multiple of {heads} heads")
        d = f // heads
        bias = attr(l, "bias", True)
        mha = self.keep(L.MultiHeadAttention(heads, d, use_bias=bias))
        y = mha(x, x, use_causal_mask=bool(attr(l, "causal", False)))
        qkv = (mha.query_dense, mha.key_dense, mha.value_dense)
        self.map_split(
            f"{name}.in_weight", [p.kernel for p in qkv],
            lambda a: [b.T.reshape(f, heads, d) for b in np.split(a, 3)],
            lambda ks: np.concatenate([k.reshape(f, f).T for k in ks]))
        self.map_split(f"{name}.out_weight", [mha.output_dense.kernel],
                       lambda a: [a.T.reshape(heads, d, f)],
                       lambda ks: ks[0].reshape(f, f).T)
        if bias:
            self.map_split(f"{name}.in_bias", [p.bias for p in qkv],
                           lambda a: [b.reshape(heads, d) for b in np.split(a, 3)],
                           lambda bs: np.concatenate([b.reshape(-1) for b in bs]))
            self.map_split(f"{name}.out_bias", [mha.output_dense.bias],
                           lambda a: [a], lambda bs: bs[0])
        return y

    def lstm(self, l, x, s):
        name, h = l["name"], l["out"]
        if attr(l, "lstm_biases", 1) != 1:
            raise NotImplementedError(f"layer '{name}' (lstm): {TWO_BIASES}")
        bi = attr(l, "bidirectional", False)
        n = attr(l, "num_layers", 1)
        for k in range(n):
            seq = attr(l, "sequences", True) or k < n - 1
            cell = L.LSTM(h, return_sequences=seq)
            if bi:
                wrap = L.Bidirectional(cell, merge_mode="concat")
                x = wrap(x)
                pairs = [(wrap.forward_layer, ""), (wrap.backward_layer, "_reverse")]
            else:
                x = cell(x)
                pairs = [(cell, "")]
            for lay, d in pairs:
                base = f"{name}.l{k}{d}"
                t = lambda a: a.T
                self.map(f"{base}.w_ih", lay, 0, t, t)
                self.map(f"{base}.w_hh", lay, 1, t, t)
                self.map(f"{base}.b_ih", lay, 2, None, None)
        width = h * (2 if bi else 1)
        return x, "plain", ([s[0], width] if attr(l, "sequences", True) else [width])


OPTIMIZERS = ["sgd", "adam", "rmsprop", "adadelta"]


# Layers with weights that Keras's quantize("int8") leaves in fp32 (it
# quantizes Dense, EinsumDense and Embedding): a model holding one is
# refused at int8 rather than run partly at fp32.
INT8_GAPS = {op: (f"Keras's model.quantize('int8') quantizes Dense, EinsumDense "
                  f"and Embedding layers only; {kind} would run fp32")
             for op, kind in (("conv2d", "a convolution"), ("lstm", "an LSTM"))}


# Layers that do not build under the 'bfloat16' policy: refused at bf16 by
# name (the conformance suite found it on TensorFlow and JAX).
BF16_GAPS = {"lstm": "Keras builds an LSTM's recurrent kernel with its "
                     "orthogonal initializer, whose QR decomposition has no "
                     "bf16 kernel (TensorFlow) or dtype (JAX)"}


def refuse(options: dict, shapes: dict, model: dict, engine: str,
           bf16_problem: str = "") -> None:
    """What no Keras engine here runs, named before anything is built:
    training at fp32 only; inference and generation at bf16 too unless
    `bf16_problem` says why the framework's bf16 products do not run here,
    and at int8 (Keras's post-training quantization) where every layer with
    weights is quantized."""
    precision = options["precision"]
    refuse_precision(precision, shapes, engine, "post-training quantization")
    if precision == "bf16" and bf16_problem:
        raise NotImplementedError(f"bf16: {bf16_problem}")
    gap = first_gap(model, {"bf16": BF16_GAPS, "int8": INT8_GAPS}.get(precision, {}))
    if gap:
        raise NotImplementedError(f"{precision}: {gap}")
    if options["optimizer"] not in OPTIMIZERS:
        raise NotImplementedError(
            f"optimizer '{options['optimizer']}' (the {engine} engine runs: "
            f"{' '.join(OPTIMIZERS)})")


def hello_gaps(bf16_problem: str) -> dict:
    # Gaps supports() answers from attributes alone; those that depend on
    # shapes (a ceil-mode average pool's overhang) need the model built:
    # "check". Inference steps and generation also at bf16 where the
    # framework's bf16 products run, and at int8 (Keras's own quantization);
    # training at fp32 only.
    below = ([] if bf16_problem else ["bf16"]) + ["int8"]
    return {"precisions": ["fp32"] + below,
            "inference_only_precisions": below,
            "unsupported": [{"op": "lstm", "attribute": "lstm_biases",
                             "value": 2, "why": TWO_BIASES}] +
            [{"op": op, "precision": p, "why": why}
             for p, gaps in (("bf16", BF16_GAPS), ("int8", INT8_GAPS))
             for op, why in gaps.items()],
            "checks_shapes": True,
            "generation_precisions": ["fp32"] + ([] if bf16_problem else ["bf16"])
            + ["int8"],
            "generation_gaps": {"bf16": bf16_problem} if bf16_problem else {}}


@functools.cache
def bf16_problem() -> str:
    """Why bf16 products do not run on this framework's CPU here, or "":
    a few are tried (keras.ops, as the model computes), as the pytorch
    engine tries its own; once per process, on the device the first
    caller's context names."""
    try:
        a = ops.cast(ops.reshape(ops.arange(64, dtype="float32"), (8, 8)) / 64,
                     "bfloat16")
        b = ops.matmul(a, ops.transpose(a))
        if ops.convert_to_numpy(ops.cast(b, "float32")).shape != (8, 8):
            return "a bf16 matmul gave another shape"
    except Exception as e:  # the framework names what it lacks
        return f"a bf16 matmul failed: {str(e).splitlines()[0][:200]}"
    return ""


def precision_effective(options: dict, quantized: Dict[str, int]) -> dict:
    """What runs below fp32, for the record: at int8 `quantized`, the
    layers Keras quantized by class."""
    generation = {"kv_cache": "fp32, per attention layer"} \
        if options.get("generation") else {}
    if options.get("precision") == "int8":
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(quantized.items()))
        return {"weights": f"int8 (Keras's model.quantize('int8'): {kinds}; "
                           "Dense and EinsumDense s8 weights with one abs-max "
                           "scale per output channel, each input row quantized "
                           "to s8 on the fly, int8 x int8 products summed in "
                           "int32; embeddings s8 with one scale per row; "
                           "positions, norms and biases fp32)",
                "calibration": "none: each input row's scale is taken as it comes",
                **generation}
    if options.get("precision") != "bf16":
        return {}
    return {"weights": "bf16 (Keras dtype policy 'bfloat16', as KerasHub's "
                       "dtype='bfloat16': variables and computation bf16, "
                       "but where Keras computes in at least fp32 for "
                       "stability, as its layer normalization does)",
            **({"kv_cache": "bf16, per attention layer"}
               if options.get("generation") else {})}


class Adam(keras.optimizers.Optimizer):
    """torch.optim.Adam, as nnbench defines it: epsilon is added to
    sqrt(v) / sqrt(1 - beta2^t), after the bias correction. Keras's Adam
    adds it to sqrt(v), an epsilon 1 / sqrt(1 - beta2^t) times larger
    (31.6 times on the first step at beta2 0.999)."""

    def __init__(self, o: dict):
        super().__init__(learning_rate=o["learning_rate"], name="nnbench_adam")
        self.beta1 = float(o["beta1"])
        self.beta2 = float(o["beta2"])
        self.eps = float(o["eps"])

    def build(self, variables) -> None:
        if self.built:
            return
        super().build(variables)
        self.exp_avg, self.exp_avg_sq = self.add_optimizer_variables(
            variables, ["exp_avg", "exp_avg_sq"])

    def update_step(self, gradient, variable, learning_rate) -> None:
        i = self._get_variable_index(variable)
        dtype = variable.dtype
        lr = ops.cast(learning_rate, dtype)
        t = ops.cast(self.iterations + 1, dtype)
        b1, b2 = ops.cast(self.beta1, dtype), ops.cast(self.beta2, dtype)
        g = ops.cast(gradient, dtype)
        m = ops.add(ops.multiply(b1, self.exp_avg[i]), ops.multiply(1 - b1, g))
        v = ops.add(ops.multiply(b2, self.exp_avg_sq[i]),
                    ops.multiply(1 - b2, ops.square(g)))
        self.assign(self.exp_avg[i], m)
        self.assign(self.exp_avg_sq[i], v)
        step_size = ops.divide(lr, 1 - ops.power(b1, t))
        bc2_sqrt = ops.sqrt(1 - ops.power(b2, t))
        denom = ops.add(ops.divide(ops.sqrt(v), bc2_sqrt), self.eps)
        self.assign_sub(variable, ops.divide(ops.multiply(step_size, m), denom))


class RMSprop(keras.optimizers.Optimizer):
    """torch.optim.RMSprop, not centered, as nnbench defines it: epsilon is
    added to sqrt(square_avg), and momentum accumulates the steps with the
    rate outside the buffer (p -= lr * buf). Keras's RMSprop adds epsilon
    inside the square root and keeps the rate inside its momentum."""

    def __init__(self, o: dict):
        super().__init__(learning_rate=o["learning_rate"], name="nnbench_rmsprop")
        self.alpha = float(o["alpha"])
        self.eps = float(o["eps"])
        self.momentum = float(o["momentum"])

    def build(self, variables) -> None:
        if self.built:
            return
        super().build(variables)
        self.square_avg = self.add_optimizer_variables(variables, "square_avg")
        # No buffer without momentum, as HostOptimizer keeps none.
        self.buffers = (self.add_optimizer_variables(variables, "momentum_buffer")
                        if self.momentum > 0 else [])

    def update_step(self, gradient, variable, learning_rate) -> None:
        i = self._get_variable_index(variable)
        dtype = variable.dtype
        lr = ops.cast(learning_rate, dtype)
        a = ops.cast(self.alpha, dtype)
        g = ops.cast(gradient, dtype)
        sq = ops.add(ops.multiply(a, self.square_avg[i]), ops.multiply(1 - a, ops.square(g)))
        self.assign(self.square_avg[i], sq)
        step = ops.divide(g, ops.add(ops.sqrt(sq), self.eps))
        if self.momentum > 0:
            step = ops.add(ops.multiply(ops.cast(self.momentum, dtype), self.buffers[i]), step)
            self.assign(self.buffers[i], step)
        self.assign_sub(variable, ops.multiply(lr, step))


def make_optimizer(o: dict) -> keras.optimizers.Optimizer:
    """nnbench's optimizer `o` as a Keras optimizer; weight decay is not
    its business (the engines' step adds it to the gradients)."""
    name = o["optimizer"]
    if name == "sgd":
        return keras.optimizers.SGD(learning_rate=o["learning_rate"],
                                    momentum=o["momentum"], nesterov=o["nesterov"])
    if name == "adam":
        return Adam(o)
    if name == "rmsprop":
        return RMSprop(o)
    if name == "adadelta":
        return keras.optimizers.Adadelta(learning_rate=o["learning_rate"],
                                         rho=o["rho"], epsilon=o["eps"])
    raise NotImplementedError(f"optimizer '{name}'")


# What applies each optimizer's update: Keras's own where its formula is
# nnbench's, the classes above where it is not.
IMPLEMENTS = {"sgd": "keras.optimizers.SGD",
              "adam": "nnbench's formula in keras.ops: Keras's Adam adds epsilon "
                      "before the bias correction",
              "rmsprop": "nnbench's formula in keras.ops: Keras's RMSprop adds "
                         "epsilon inside the square root",
              "adadelta": "keras.optimizers.Adadelta"}


def describe_optimizer(o: dict) -> str:
    wd = " (L2 added to the gradients)" if o["weight_decay"] else ""
    return f"{optimizer_settings(o)}{wd} ({IMPLEMENTS[o['optimizer']]})"


class KerasModel:
    """A built model, its weights loaded, its batches; the engines add the
    step. `value_of` and `grad_of` read one Keras variable's value and last
    gradient (None where it has none)."""

    def __init__(self, model: dict, params: Dict[str, np.ndarray], options: dict):
        keras.utils.set_random_seed(options["seed"])
        b = Builder(model)
        # bf16 (inference and generation): every layer's variables and
        # computation, as KerasHub builds a model for dtype="bfloat16".
        self.dtype = "bfloat16" if options.get("precision") == "bf16" else "float32"
        before = keras.config.dtype_policy()
        keras.config.set_dtype_policy(self.dtype)
        try:
            self.net = b.build()
        finally:
            keras.config.set_dtype_policy(before)
        self.loads = b.loads
        self.stats = b.stats
        self.model = model
        self.made = b.made
        self.embeddings = b.embeddings
        self.images = model["input"]["dtype"] != "int64" and \
            len(model["input"]["shape"]) == 3
        for name, (variables, to_k, _) in self.loads.items():
            if name not in params:
                raise ValueError(f"no initial value for parameter {name}")
            for v, a in zip(variables, to_k(params[name])):
                v.assign(a)
        for name, (layer, index) in self.stats.items():
            if name in params:
                layer.weights[index].assign(params[name])
        self.quantized: Dict[str, int] = {}
        if options.get("precision") == "int8":
            # Inference steps and generation (refuse): int8 as Keras makes
            # it, its quantizers' defaults, as a user calls it on a loaded
            # model. It warns of each layer it leaves (norms, positions):
            # expected.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*does not have a `quantize`")
                self.net.quantize("int8")
            for lay in self.net._flatten_layers(include_self=False):
                if getattr(lay, "quantization_mode", None) == "int8":
                    k = type(lay).__name__
                    self.quantized[k] = self.quantized.get(k, 0) + 1
            if not self.quantized:
                raise NotImplementedError(
                    "int8: Keras's quantize('int8') quantized no layer of this "
                    "model (no Dense, EinsumDense or Embedding): it would run fp32")
        self.bce = model["loss"] == "sigmoid_binary_cross_entropy"
        self.loss_fn = (keras.losses.BinaryCrossentropy(from_logits=True)
                        if self.bce else
                        keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        self.opt = make_optimizer(options)
        self.opt.build(self.net.trainable_variables)
        self.fit_ready = False  # Model.compile'd for fit_loop

    def host_batches(self, t: dict) -> List[tuple]:
        """The batches as numpy arrays in Keras's layouts and dtypes."""
        out = []
        n = sum(1 for k in t if k.startswith("input."))
        for i in range(n):
            x = t[f"input.{i}"]
            if self.images:
                x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
            elif x.dtype == np.int64:
                x = x.astype(np.int32)
            y = t[f"labels.{i}"]
            y = y.astype(np.float32) if self.bce else y.astype(np.int32)
            out.append((x, y))
        return out

    def canonical(self, values_of: Callable) -> Dict[str, np.ndarray]:
        """nnbench's names and layouts of what values_of(variable) gives."""
        out = {}
        for name, (variables, _, from_k) in self.loads.items():
            vs = [values_of(v) for v in variables]
            if any(v is None for v in vs):
                continue
            out[name] = np.asarray(from_k([np.asarray(v, dtype=np.float32)
                                           for v in vs]), dtype=np.float32)
        return out


    def running_stats(self, values_of: Callable) -> Dict[str, np.ndarray]:
        """Batch norm's moving statistics, by nnbench's names."""
        return {name: np.asarray(values_of(layer.weights[index]), dtype=np.float32)
                for name, (layer, index) in self.stats.items()}


# Generation: greedy decoding with a KV cache, KerasHub's way (its
# CausalLM's call_with_cache and CachedMultiHeadAttention): each attention
# layer's keys and values in a cache of a fixed size, the new tokens' put
# in with slice updates at a position that is a tensor, attention masked
# to the positions filled; the shapes then depend on the rows, the
# capacity and the number of new tokens only, so that one compiled step
# serves the prompt and one every next token, at any position.

def cached_attention(mha, x, keys, values, length) -> tuple:
    """Keras's MultiHeadAttention on new tokens x [N, t, F] after `length`
    cached ones: their keys and values go into the caches [N, capacity, H,
    D] (the layout of the layer's key and value projections) at `length`,
    and new token j attends to positions up to length + j, the cache and
    the new ones up to itself. The layer's own projections and its own
    attention function (_compute_attention, which KerasHub's cached
    attention calls too) with the mask; the updated caches come back."""
    n, t = x.shape[0], x.shape[1]
    capacity = keys.shape[1]
    at = [0, length, 0, 0]
    keys = ops.slice_update(keys, at, mha.key_dense(x))
    values = ops.slice_update(values, at, mha.value_dense(x))
    # The positions past length + t hold the zeros the cache was made with
    # or an earlier generation's values: masked out, never seen.
    seen = ops.expand_dims(ops.arange(capacity, dtype="int32"), 0) <= \
        ops.expand_dims(length + ops.arange(t, dtype="int32"), 1)
    mask = ops.broadcast_to(ops.expand_dims(seen, 0), (n, t, capacity))
    ctx, _ = mha._compute_attention(mha.query_dense(x), keys, values,
                                    attention_mask=mask, training=False)
    return mha.output_dense(ctx), keys, values


def cached_forward(k: KerasModel, ids, cache: list, length) -> tuple:
    """Token ids [N, t] after `length` cached tokens (an int32 scalar
    tensor): the last position's logits [N, vocab] and the cache (per
    attention layer, in order, its keys then its values) with the new
    tokens' keys and values. The layers are the model's own, so the
    weights are those the model holds (the engine's state under JAX's
    StatelessScope)."""
    layers = k.model["layers"]
    last = len(layers) - 1
    outs: list = []
    new: list = []
    for i, l in enumerate(layers):
        op = l["op"]
        xs = [ids if j < 0 else outs[j] for j in layer_inputs(k.model, i)]
        # Only the last position's logits choose the next token, and the
        # head works on each position alone: the prompt's other positions
        # skip it.
        if i == last and op != "attention" and ids.shape[1] > 1:
            xs = [x[:, -1:] for x in xs]
        if op == "attention":
            at = len(new)
            y, keys, values = cached_attention(k.made[i], xs[0], cache[at],
                                               cache[at + 1], length)
            new += [keys, values]
        elif op == "positions":
            y = k.made[i](xs[0], offset=length)
        elif op == "tied_linear":
            y = k.embeddings[l["tied"]](xs[0], reverse=True)
        elif op in PER_POSITION:
            y = k.made[i](xs if op == "add" else xs[0], training=False)
        else:
            raise NotImplementedError(f"generation: layer '{l['name']}' ({op})")
        outs.append(y)
    return outs[-1][:, -1], new


def greedy_step(k: KerasModel, ids, cache: list, length) -> tuple:
    """cached_forward's next token per row (the argmax of its logits, the
    first of equal ones), the logits and the cache: what an engine
    compiles. The logits stay on the device unless asked for (verify)."""
    logits, cache = cached_forward(k, ids, cache, length)
    return ops.argmax(logits, axis=-1), logits, cache


class Generation:
    """Greedy generation on a KerasModel with the cache that
    cached_forward fills: made by the first generation (a warm-up's) and
    kept while the rows and the capacity stay the same, as the pytorch
    engine keeps its own; a prefill starts over at position 0.

    `run(ids, cache, length)` is the engine's compiled greedy_step: ids
    [N, t] int32 on the host, length an int; it gives the next tokens and
    the cache. `zeros(shape)` makes one float32 cache tensor on the
    engine's device."""

    def __init__(self, k: KerasModel, run: Callable, zeros: Callable):
        problem = generation_problem(k.model)
        if problem:
            raise NotImplementedError(f"generation: {problem}")
        self.k, self.run, self.zeros = k, run, zeros
        layers = k.model["layers"]
        # Each attention layer's key and value caches: [N, capacity, H, D].
        self.heads = [(attr(l, "heads", 1), k.made[i].key_dense.kernel.shape[-1])
                      for i, l in enumerate(layers) if l["op"] == "attention"]
        tables = [l["vocab"] for l in layers if l["op"] == "positions"]
        self.positions: Optional[int] = min(tables) if tables else None
        self.cache: Optional[list] = None
        self.capacity = self.rows = self.length = 0
        self.logits = None  # the last step's, on the device

    def prefill(self, rows: List[List[int]], capacity: int) -> List[int]:
        if self.positions is not None and capacity > self.positions:
            raise ValueError(f"generation: a cache of {capacity} tokens exceeds "
                             f"the model's {self.positions} learned positions")
        if self.cache is None or capacity != self.capacity or len(rows) != self.rows:
            self.cache = None  # the old one's memory goes first
            self.cache = [self.zeros((len(rows), capacity, h, d))
                          for h, d in self.heads for _ in ("keys", "values")]
            self.capacity, self.rows = capacity, len(rows)
        self.length = 0
        return self.next(np.asarray(rows, dtype=np.int32))

    def decode(self, tokens: List[int]) -> List[int]:
        if self.cache is None:
            raise ValueError("generation: decode before a prefill")
        if len(tokens) != self.rows:
            raise ValueError(f"generation: {len(tokens)} tokens to decode for "
                             f"{self.rows} rows")
        return self.next(np.asarray(tokens, dtype=np.int32).reshape(-1, 1))

    def next(self, ids: np.ndarray) -> List[int]:
        total = self.length + ids.shape[1]
        if total > self.capacity:
            raise ValueError(f"generation: {total} tokens exceed the cache's "
                             f"{self.capacity}")
        self.logits = None  # a step that fails leaves none
        try:
            tokens, logits, self.cache = self.run(ids, self.cache, self.length)
        except BaseException:
            # The step may have taken the cache (JAX donates it): the next
            # prefill makes another.
            self.cache = None
            raise
        self.length, self.logits = total, logits
        return [int(t) for t in np.asarray(tokens)]

    def last_logits(self) -> Optional[List[List[float]]]:
        if self.logits is None:
            return None
        rows: List[List[float]] = np.asarray(
            ops.convert_to_numpy(ops.cast(self.logits, "float32"))).tolist()
        return rows


def fit_loop(k: KerasModel, t: dict, o: dict,
             after: Callable[[], None] = lambda: None) -> Callable[[], dict]:
    """Keras's own idiom, as the CPU-vs-GPU study's examples train:
    Model.compile with the loss and an accuracy metric, then Model.fit over
    the epoch's samples at the staged batch size, in nnbench's order
    (shuffle=False: its loader shuffled them), one silent epoch. Keras's
    defaults otherwise (jit_compile "auto"). `after` runs inside the loop's
    time, once fit returned (the JAX engine takes its state back)."""
    if float(o["weight_decay"]):
        raise NotImplementedError(
            "weight decay in Keras's Model.fit (nnbench's Keras steps add it "
            "to the gradients; Keras's optimizers decouple it)")
    batches = k.host_batches(t)
    x = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    size = len(batches[0][0])
    if not k.fit_ready:
        metric = (keras.metrics.BinaryAccuracy(threshold=0.0) if k.bce
                  else keras.metrics.SparseCategoricalAccuracy())
        k.net.compile(optimizer=k.opt, loss=k.loss_fn, metrics=[metric])
        k.fit_ready = True

    def run() -> dict:
        h = k.net.fit(x, y, batch_size=size, epochs=1, shuffle=False, verbose=0)
        after()
        acc = [v[-1] for key, v in h.history.items() if key != "loss"]
        return {"loss": float(h.history["loss"][-1]),
                "accuracy": float(acc[0]) if acc else None,
                "loop": (f"Keras Model.fit(x, y, batch_size={size}, epochs=1, "
                         f"shuffle=False) with an accuracy metric, "
                         f"jit_compile={k.net.jit_compile}")}

    return run


def rescale_ratio(old: float, new: float, o: dict) -> float:
    """Keras's SGD keeps the rate inside its velocity (v = m v - lr g),
    PyTorch outside its buffer (w -= lr * buf): with v = -lr * buf, a new
    rate rescales the velocity by new / old and the two stay the same. The
    other optimizers keep no rate in their state (Adam and Adadelta apply
    it to each step, RMSprop above outside its buffer): 1."""
    if o["optimizer"] != "sgd" or not o["momentum"]:
        return 1.0
    if old == 0:
        raise NotImplementedError("a learning rate of 0 followed by another "
                                  "with momentum (Keras's velocity keeps no "
                                  "buffer at rate 0)")
    return new / old


def finite(loss: Optional[float]) -> Optional[float]:
    return loss if loss is not None and math.isfinite(loss) else None


def kept(grads) -> None:
    """A training step's gradients are kept only when compile was asked to
    observe them (nnbench verify): the timed step does not return them."""
    if grads is None:
        raise ValueError("the training step's gradients were not kept "
                         "(compile with options.observe, as nnbench verify "
                         "does)")


class Generates:
    """An engine's prefill and decode over a Generation made by its first
    prefill after a compile (which sets `generation` back to None);
    the engine gives its KerasModel `k`, its compiled step `_greedy(ids,
    cache, length)` and `_zeros(shape)`, a cache tensor on its device."""

    generation: Optional[Generation] = None
    k: KerasModel

    def prefill(self, rows: List[List[int]], capacity: int) -> List[int]:
        if self.generation is None:
            self.generation = Generation(self.k, self._greedy, self._zeros)
        return self.generation.prefill(rows, capacity)

    def decode(self, tokens: List[int]) -> List[int]:
        if self.generation is None:
            raise ValueError("generation: decode before a prefill")
        return self.generation.decode(tokens)

    def last_logits(self) -> Optional[List[List[float]]]:
        """Each row's logits at its last position after the last step."""
        return None if self.generation is None else self.generation.last_logits()

    def _greedy(self, ids: np.ndarray, cache: list, length: int):
        raise NotImplementedError

    def _zeros(self, shape: tuple):
        raise NotImplementedError
