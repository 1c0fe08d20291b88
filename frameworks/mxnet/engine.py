"""MXNet's Gluon, hybridized: nnbench's `mxnet` engine.

The model is one Gluon HybridBlock built from nnbench's description with
Gluon's layers (NCHW and PyTorch's weight layouts, so nnbench's seeded
weights load as they are) and hybridized with static memory, as Gluon's
guides run it. A training step is autograd.record, backward and the
Trainer's step; the loss is read to the host to end it, and the last step
of each request also waits for backward and the update (mx.nd.waitall), so
no work is left outside the timed steps; inference waits with
mx.nd.waitall.

nnbench's optimizers (src/backend/optimizer.cpp, PyTorch's formulas): SGD
is MXNet's own, sgd (momentum) or nag (Nesterov), weight decay as L2 in
the update, both PyTorch's formulas with a constant rate, but for nag with
weight decay: its kernel, updating the weight in place, decays the
momentum by the new weight (three steps on random tensors were 2e-3 from
PyTorch's, sgd's 1e-8). MXNet's adam adds epsilon to sqrt(v) before the
bias correction, its rmsprop adds it inside the square root and has no
momentum unless centered, and its adadelta ignores the learning rate and
decouples weight decay: so Adam, RMSprop and Adadelta are nnbench's
formulas written here as MXNet optimizers, which the Trainer runs as it
runs its own: Adam, and RMSprop without momentum, on MXNet's fused
adam_update kernel with the arguments that make it nnbench's formula,
RMSprop with momentum and Adadelta in mx.nd ops. Softmax cross-entropy is Gluon's on
log-probabilities from log_softmax below (MXNet's own kernel rather than
oneDNN's where the classes are few).

The transformer ops are Gluon's where it has them: LayerNorm, GELU (the
exact, erf form) and Dense, the tied output a Dense holding the
embedding's ParameterDict (Gluon's way of sharing a parameter: one table,
its gradient summed over both uses). The rest is written in the
symbolic/NDArray ops a HybridBlock hybridizes, as the PyTorch engine
writes them: attention (batch_dot per head; when causal, -inf added to
each later position's score, an exact 0 after softmax), the learned
positions, the first position and GPT-2's tanh GELU, which MXNet 1.x's
LeakyReLU does not have (its 'gelu' is the erf form).

Generation (prefill, decode: greedy, with a KV cache) runs the same
blocks under autograd.pause(train_mode=False), a Gluon decoding loop:
Net.cached calls hybridized graphs of the blocks (each attention's
projections and heads, each run of layers between attentions: Heads,
Merge, Segment, on the blocks' own parameters), and writes attention's
keys and values per layer into arrays of the capacity's positions made by
the first generation, by slice assignment; the cache's reads and writes
and the scores run in mx.nd.
GluonNLP 0.x's GPT-2 instead returns its states grown by a concat each
step, a copy of the whole cache per layer and token and a new allocation
every time; the preallocated cache is the PyTorch engine's too, so both
time the same algorithm. The tokens are read to the host (asnumpy) before
prefill and decode return, which waits for MXNet's asynchronous engine.

Threads: MXNet's operators and its oneDNN size their OpenMP pools when
the library loads, so --threads N is OMP_NUM_THREADS, set from
NNBENCH_THREADS before mxnet is imported; the effective count is
OpenMP's own answer.
"""
from __future__ import annotations

import ctypes
import functools
import json
import math
import os
import platform
import warnings
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Tuple

ASKED_THREADS = int(os.environ.get("NNBENCH_THREADS", "0") or 0)
if ASKED_THREADS > 0:
    os.environ["OMP_NUM_THREADS"] = str(ASKED_THREADS)

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
from mxnet.contrib import amp
from mxnet.gluon import nn, rnn

import scores
from description import (attr, layer_inputs, layer_shape, optimizer_settings,
                         refuse_precision, window_overhang)


def gelu_tanh(F, x):
    """GPT-2's 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in F's
    element-wise ops, which autograd differentiates."""
    c = math.sqrt(2 / math.pi)
    return 0.5 * x * (1 + F.tanh(c * (x + 0.044715 * x * x * x)))


class Attention(gluon.HybridBlock):
    """Multi-head self-attention as the description defines it (oracle:
    src/engines/reference/ops/transformer.h): q, k and v from one [3F, F]
    projection (row blocks q, k, v), head h in columns h*D..(h+1)*D of each
    (D = F/heads), softmax(q k^T / sqrt(D)) v with position i seeing only
    positions <= i when causal, the heads side by side projected out. Both
    projections are Gluon Dense layers (their weights are PyTorch's
    layout, as nnbench's)."""

    def __init__(self, t: int, f: int, heads: int, causal: bool, bias: bool, **kwargs):
        super().__init__(**kwargs)
        self.t, self.heads, self.causal = t, heads, causal
        self.scale = 1 / math.sqrt(f // heads)
        with self.name_scope():
            self.proj_in = nn.Dense(3 * f, use_bias=bias, flatten=False, in_units=f)
            self.proj_out = nn.Dense(f, use_bias=bias, flatten=False, in_units=f)
        # Generation's graphs (Heads, Merge), made by the first cached call,
        # in a holder Gluon does not look into (an attribute, a list or a
        # tuple of blocks would make them children or draw its warning):
        # the whole-sequence graph does not use them.
        self.generation = SimpleNamespace(graphs=None)

    def hybrid_forward(self, F, x):
        q, k, v = F.split(self.proj_in(x), num_outputs=3, axis=-1)
        scores = F.batch_dot(self._split(F, q), self._split(F, k),
                             transpose_b=True) * self.scale
        if self.causal:
            r = F.arange(self.t)
            scores = F.broadcast_add(scores, log_seen(F, r, r))
        return self._merge(F, F.batch_dot(F.softmax(scores, axis=-1), self._split(F, v)))

    def _split(self, F, y):
        """[N, T, F] -> [N H, T, D]: the heads in the batch, batch_dot's."""
        y = F.transpose(F.reshape(y, shape=(0, 0, self.heads, -1)), axes=(0, 2, 1, 3))
        return F.reshape(y, shape=(-3, 0, 0))

    def _merge(self, F, ctx):
        """[N H, T, D] -> [N, T, F], the heads side by side, projected out."""
        ctx = F.transpose(F.reshape(ctx, shape=(-4, -1, self.heads, 0, 0)),
                          axes=(0, 2, 1, 3))
        return self.proj_out(F.reshape(ctx, shape=(0, 0, -3)))

    def cached(self, x, cache: "Cache", i: int):
        """The same on new tokens x [N, t, F] after the cache's `length`
        earlier ones, whose keys and values cache.k[i], cache.v[i]
        ([N H, capacity, D], made on first use) hold; these are written in.
        The projections and the heads' reshapes run as two hybridized graphs
        (this block's own Dense layers), the cache's reads and writes and
        the scores between them imperatively (mx.nd): their shapes grow
        with every token."""
        F, at = mx.nd, cache.length
        t = x.shape[1]
        g = self.generation
        if g.graphs is None:
            g.graphs = (Heads(self), Merge(self))
            for b in g.graphs:
                b.hybridize(static_alloc=True, static_shape=True)
            g.graphs = tuple(Lowered(b, cache.lower) for b in g.graphs)
        heads_of, merge_out = g.graphs
        q, k, v = heads_of(x)
        if i not in cache.k:
            # Only positions [0, length + t) are ever read: no need to zero.
            n, f = x.shape[0], x.shape[2]
            shape = (n * self.heads, cache.capacity, f // self.heads)
            cache.k[i] = F.empty(shape, ctx=x.context)
            cache.v[i] = F.empty(shape, ctx=x.context)
        # Slice assignment (_slice_assign) writes in place: the cache's
        # arrays are allocated once, not grown by a concat each step.
        cache.k[i][:, at:at + t] = k
        cache.v[i][:, at:at + t] = v
        keys = F.slice_axis(cache.k[i], axis=1, begin=0, end=at + t)
        values = F.slice_axis(cache.v[i], axis=1, begin=0, end=at + t)
        scores = F.batch_dot(q, keys, transpose_b=True)  # q came scaled
        if t > 1:  # new token j sees the cache and the new ones up to itself
            scores = F.broadcast_add(scores, log_seen(
                F, F.arange(at, at + t, ctx=x.context), F.arange(at + t, ctx=x.context)))
        return merge_out(F.batch_dot(F.softmax(scores, axis=-1), values))


class Heads(gluon.HybridBlock):
    """An attention's q, k and v of new tokens, each [N H, t, D]: its input
    projection and the heads' split as one graph for generation, q scaled
    by 1 / sqrt(D) in it (as GluonNLP's attention cell scales q), so that
    the scores need no imperative operator of their own to scale them."""

    def __init__(self, a: Attention, **kwargs):
        super().__init__(**kwargs)
        self.split_heads, self.scale = a._split, a.scale
        self.proj_in = a.proj_in  # a child here too: one Parameter each

    def hybrid_forward(self, F, x):
        q, k, v = F.split(self.proj_in(x), num_outputs=3, axis=-1)
        return (self.split_heads(F, q) * self.scale, self.split_heads(F, k),
                self.split_heads(F, v))


class Merge(gluon.HybridBlock):
    """An attention's heads [N H, t, D] side by side, projected out: one
    graph for generation."""

    def __init__(self, a: Attention, **kwargs):
        super().__init__(**kwargs)
        self.merge = a._merge  # it calls a.proj_out, a child here too
        self.proj_out = a.proj_out

    def hybrid_forward(self, F, ctx):
        return self.merge(F, ctx)


def log_seen(F, queries, keys):
    """The causal mask's log [1, q, k] for query positions `queries` [q]
    and key positions `keys` [k]: 0 where the key is at or before the
    query, -inf after it, which softmax turns into an exact 0."""
    seen = F.broadcast_lesser_equal(F.reshape(keys, shape=(1, -1)),
                                    F.reshape(queries, shape=(-1, 1)))
    return F.expand_dims(F.log(seen), axis=0)


class Cache:
    """Generation's keys and values per attention layer (by layer index),
    for `capacity` positions of `rows` sequences, `length` of them filled;
    `lower`, the conversion its graphs get (Lowered), or None."""

    def __init__(self, capacity: int, rows: int, lower: Optional[Callable] = None):
        self.capacity, self.rows, self.length = capacity, rows, 0
        self.lower = lower
        self.k: Dict[int, mx.nd.NDArray] = {}
        self.v: Dict[int, mx.nd.NDArray] = {}


class Lowered:
    """A hybridized graph (one of generation's, or the whole model for
    inference steps), converted by `lower` (a function
    of the block, or None: the block as it is) the first time it is
    called: MXNet's converters (AMP's convert_hybrid_block) take a block
    whose graph a first call has built. That call's outputs are dropped
    and the converted block runs on the same inputs; its outputs come
    back fp32, as the fp32 cache and the imperative code take them."""

    def __init__(self, block: gluon.HybridBlock, lower: Optional[Callable]):
        self.block, self.lower = block, lower
        self.converted: Optional[gluon.HybridBlock] = None

    def __call__(self, *xs):
        if self.lower is None:
            return self.block(*xs)
        if self.converted is None:
            self.block(*xs)
            self.converted = self.lower(self.block)
            self.converted.hybridize(static_alloc=True, static_shape=True)
        out = self.converted(*xs)
        if isinstance(out, (list, tuple)):
            return tuple(fp32(y) for y in out)
        return fp32(out)


def fp32(y):
    return y if y.dtype == np.float32 else mx.nd.amp_cast(y, dtype="float32")


class Positions(gluon.HybridBlock):
    """A learned table of positions [P, F], its first T rows added to
    [N, T, F] (T fixed by the description: hybridized shapes are static)."""

    def __init__(self, positions: int, t: int, f: int, **kwargs):
        super().__init__(**kwargs)
        self.t = t
        self.weight = self.params.get("weight", shape=(positions, f))

    def hybrid_forward(self, F, x, weight):
        rows = F.slice_axis(weight, axis=0, begin=0, end=self.t)
        return F.broadcast_add(x, F.expand_dims(rows, axis=0))

    def at(self, x, offset: int):
        """Imperatively, rows offset.. of the table added to [N, t, F]:
        generation's new tokens after `offset` cached ones."""
        rows = mx.nd.slice_axis(self.weight.data(x.context), axis=0,
                                begin=offset, end=offset + x.shape[1])
        return mx.nd.broadcast_add(x, mx.nd.expand_dims(rows, axis=0))


class Segment(gluon.HybridBlock):
    """Consecutive layers of a Net that work on each position alone, as one
    graph for generation (Net.cached): `inputs`, the outputs of earlier
    layers (-1: the ids) they read, `outputs`, theirs that later layers
    read. The model's last layer sees the last position only: only its
    logits choose the next token (a no-op for one token)."""

    def __init__(self, net: "Net", layers: List[int], **kwargs):
        super().__init__(**kwargs)
        model = net.model
        self.layers = layers
        self.last = len(model["layers"]) - 1
        inside = set(layers)
        self.inputs = sorted({j for i in layers for j in layer_inputs(model, i)
                              if j not in inside})
        later = {j for i in range(layers[-1] + 1, len(model["layers"]))
                 for j in layer_inputs(model, i)}
        self.outputs = [i for i in layers if i in later or i == self.last]
        # The Net's own layer code (a method, not a child: the Net is not a
        # part of its segment); the layers' blocks are children here too.
        self.model, self.run_layer = model, net._run
        for i in layers:
            if i in net.blocks:
                self.register_child(net.blocks[i], f"layer{i}")

    def hybrid_forward(self, F, *xs):
        env = dict(zip(self.inputs, xs))
        for i in self.layers:
            ins = [env[j] for j in layer_inputs(self.model, i)]
            if i == self.last:
                ins = [F.slice_axis(y, axis=1, begin=-1, end=None) for y in ins]
            env[i] = self.run_layer(F, i, self.model["layers"][i], ins)
        outs = [env[o] for o in self.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)


class Net(gluon.HybridBlock):
    def __init__(self, model: dict):
        super().__init__(prefix="net_")
        self.model = model
        self.blocks: Dict[int, gluon.Block] = {}
        self.canonical: Dict[str, gluon.Parameter] = {}
        # Batch norm's running statistics (Gluon parameters without
        # gradients), by nnbench's names.
        self.stats: Dict[str, gluon.Parameter] = {}
        self.shapes: List[list] = []
        # Generation's steps (cached), made by the first, in a holder Gluon
        # does not look into: its Segments are not children.
        self.generation = SimpleNamespace(plan=None)
        with self.name_scope():
            for i, l in enumerate(model["layers"]):
                ins = [model["input"]["shape"] if j < 0 else self.shapes[j]
                       for j in layer_inputs(model, i)]
                self.shapes.append(self._shape(l, ins))
                b = self._block(l, ins[0])
                if b is not None:
                    self.register_child(b, f"layer{i}")
                    self.blocks[i] = b
                    self._map(l, b)

    def _shape(self, l: dict, ins: List[list]) -> list:
        """The layer's shape (description.py); ceil-mode pools MXNet would
        size or average differently are refused."""
        op, s = l["op"], ins[0]
        if op == "seq_first":
            return s[1:]
        if op == "tied_linear":
            table = self.model["layers"][l["tied"]]
            if table["op"] != "embedding":
                raise ValueError(f"layer '{l['name']}' (tied_linear): layer "
                                 f"{l['tied']} is not an embedding")
            return s[:-1] + [table["vocab"]]
        out = layer_shape(l, ins)
        if op in ("max_pool2d", "avg_pool2d") and attr(l, "ceil_mode", False):
            k = attr(l, "kernel", [1, 1])
            st = attr(l, "stride", [1, 1])
            p = attr(l, "pad", [0, 0])
            # MXNet's "full" convention keeps a window PyTorch drops.
            full = [-(-(s[a + 1] + 2 * p[a] - k[a]) // st[a]) + 1 for a in (0, 1)]
            if full != out[1:]:
                raise NotImplementedError(
                    f"layer '{l['name']}' ({op}): a ceil-mode window that "
                    "starts in the padding (MXNet keeps it, PyTorch drops it)")
            if op == "avg_pool2d" and window_overhang(l, s):
                raise NotImplementedError(
                    f"layer '{l['name']}' (avg_pool2d): a ceil-mode window "
                    "past the padding (PyTorch's divisor there differs)")
        return out

    def _block(self, l: dict, shape: list):
        op = l["op"]
        k = tuple(attr(l, "kernel", [1, 1]))
        st = tuple(attr(l, "stride", [1, 1]))
        p = tuple(attr(l, "pad", [0, 0]))
        if op == "linear":
            return nn.Dense(l["out"], use_bias=attr(l, "bias", True),
                            flatten=False, in_units=shape[-1])
        if op == "conv2d":
            return nn.Conv2D(l["out"], k, strides=st, padding=p,
                             groups=attr(l, "groups", 1),
                             use_bias=attr(l, "bias", True), in_channels=shape[0])
        if op == "max_pool2d":
            return nn.MaxPool2D(k, st, p, ceil_mode=attr(l, "ceil_mode", False))
        if op == "avg_pool2d":
            return nn.AvgPool2D(k, st, p, ceil_mode=attr(l, "ceil_mode", False),
                                count_include_pad=True)
        if op == "batch_norm":
            return nn.BatchNorm(axis=1, momentum=1 - attr(l, "momentum", 0.1),
                                epsilon=attr(l, "eps", 1e-5), in_channels=shape[0])
        if op == "dropout":
            return nn.Dropout(attr(l, "p", 0.0))
        if op == "embedding":
            return nn.Embedding(l["vocab"], l["out"])
        if op == "layer_norm":
            return nn.LayerNorm(axis=-1, epsilon=attr(l, "eps", 1e-5),
                                in_channels=shape[-1])
        if op == "gelu":
            return None if attr(l, "approximate", False) else nn.GELU()
        if op == "positions":
            return Positions(l["vocab"], shape[0], shape[1])
        if op == "attention":
            return Attention(shape[0], shape[1], attr(l, "heads", 1),
                             attr(l, "causal", False), attr(l, "bias", True))
        if op == "tied_linear":
            table = self.blocks[l["tied"]]  # an nn.Embedding: _shape checked
            # The embedding's ParameterDict: its weight [vocab, F] is the
            # Dense's [units, in_units], one Parameter for both.
            return nn.Dense(self.model["layers"][l["tied"]]["vocab"], use_bias=False,
                            flatten=False, in_units=shape[-1], params=table.params)
        if op == "lstm":
            b = rnn.LSTM(l["out"], num_layers=attr(l, "num_layers", 1),
                         layout="NTC", bidirectional=attr(l, "bidirectional", False),
                         input_size=shape[1])
            if attr(l, "lstm_biases", 1) == 1:
                # One bias per gate (Keras): MXNet's second is held at 0.
                for name, prm in b.collect_params().items():
                    if name.endswith("h2h_bias"):
                        prm.grad_req = "null"
            return b
        if op in ("max_pool2d", "avg_pool2d", "global_avg_pool", "seq_mean",
                  "relu", "sigmoid", "tanh", "softmax", "lrn", "flatten", "add",
                  "concat", "zero_pad_shortcut", "one_hot", "seq_first"):
            return None
        raise NotImplementedError(f"layer '{l['name']}' ({op})")

    def _map(self, l: dict, b) -> None:
        name = l["name"]
        if l["op"] == "lstm":
            dirs = [("l", ""), ("r", "_reverse")] if attr(l, "bidirectional", False) \
                else [("l", "")]
            for k in range(attr(l, "num_layers", 1)):
                for j, d in dirs:
                    base = f"{name}.l{k}{d}"
                    self.canonical[f"{base}.w_ih"] = getattr(b, f"{j}{k}_i2h_weight")
                    self.canonical[f"{base}.w_hh"] = getattr(b, f"{j}{k}_h2h_weight")
                    self.canonical[f"{base}.b_ih"] = getattr(b, f"{j}{k}_i2h_bias")
                    if attr(l, "lstm_biases", 1) == 2:
                        self.canonical[f"{base}.b_hh"] = getattr(b, f"{j}{k}_h2h_bias")
            return
        if l["op"] == "attention":
            for ours, dense in (("in", b.proj_in), ("out", b.proj_out)):
                self.canonical[f"{name}.{ours}_weight"] = dense.weight
                if dense.bias is not None:
                    self.canonical[f"{name}.{ours}_bias"] = dense.bias
            return
        # tied_linear has none of its own: the table is the embedding's.
        names = {"linear": ("weight", "bias"), "conv2d": ("weight", "bias"),
                 "batch_norm": ("gamma", "beta"), "embedding": ("weight",),
                 "layer_norm": ("gamma", "beta"), "positions": ("weight",)}
        for ours, theirs in zip(("weight", "bias"), names.get(l["op"], ())):
            prm = getattr(b, theirs, None)
            if prm is not None:
                self.canonical[f"{name}.{ours}"] = prm
        if l["op"] == "batch_norm":
            self.stats[f"{name}.running_mean"] = b.running_mean
            self.stats[f"{name}.running_var"] = b.running_var

    def hybrid_forward(self, F, x):
        outs = []
        for i, l in enumerate(self.model["layers"]):
            ins = [x if j < 0 else outs[j] for j in layer_inputs(self.model, i)]
            outs.append(self._run(F, i, l, ins))
        return outs[-1]

    def cached(self, ids, cache: Cache):
        """Token ids [N, t] (float32, as the Embedding takes them) after the
        cache's `length` tokens: the last position's logits [N, 1, vocab];
        the cache then holds all. Attention and positions run with the
        cache (Attention.cached, Positions.at); the layers between them,
        which work on each position alone, as one hybridized graph per run
        of them (Segment): a decoding step then calls a few graphs per
        block instead of one imperative operator per layer and element-wise
        op, whose Python dispatch a token's arithmetic does not hide. Each
        block's own parameters: nothing is copied. The graphs are
        hybridized with static_alloc and static_shape; a new shape (a
        prefill's, then the first decode's) re-plans the graphs, which
        the time to first token and the first inter-token time include."""
        t = ids.shape[1]
        if cache.length + t > cache.capacity:
            raise ValueError(f"generation: {cache.length + t} tokens exceed "
                             f"the cache's {cache.capacity}")
        g = self.generation
        if g.plan is None:
            g.plan = self._plan()
            g.run = {id(s): Lowered(s, cache.lower) for s in g.plan
                     if isinstance(s, Segment)}
        env = {-1: ids}
        for step in g.plan:
            if isinstance(step, Segment):
                outs = g.run[id(step)](*[env[j] for j in step.inputs])
                env.update(zip(step.outputs, outs if isinstance(outs, (list, tuple))
                               else [outs]))
                continue
            i = step
            x = env[layer_inputs(self.model, i)[0]]
            if self.model["layers"][i]["op"] == "attention":
                env[i] = self.blocks[i].cached(x, cache, i)
            else:
                env[i] = self.blocks[i].at(x, cache.length)
        cache.length += t
        return env[len(self.model["layers"]) - 1]

    def _plan(self) -> list:
        """Generation's steps in order: an attention's or positions' index,
        or a Segment of the layers between them."""
        layers = self.model["layers"]
        plan: list = []
        run: List[int] = []
        for i, l in enumerate(layers):
            if l["op"] in ("attention", "positions"):
                if run:
                    plan.append(Segment(self, run))
                    run = []
                plan.append(i)
            else:
                run.append(i)
        if run:
            plan.append(Segment(self, run))
        # A run whose outputs nothing reads (layers of no use to the logits)
        # has no graph to build: left out.
        plan = [s for s in plan if not isinstance(s, Segment) or s.outputs]
        for step in plan:
            if isinstance(step, Segment):
                step.hybridize(static_alloc=True, static_shape=True)
        return plan

    def _run(self, F, i: int, l: dict, ins):
        op, x = l["op"], ins[0]
        if op == "lstm":
            seq = self.blocks[i](x)
            if attr(l, "sequences", True):
                return seq
            h = l["out"]
            last = F.squeeze(F.slice_axis(seq, axis=1, begin=-1, end=None), axis=1)
            if not attr(l, "bidirectional", False):
                return last
            # The backward direction's final state is its output at t = 0.
            first = F.squeeze(F.slice_axis(seq, axis=1, begin=0, end=1), axis=1)
            return F.concat(F.slice_axis(last, axis=1, begin=0, end=h),
                            F.slice_axis(first, axis=1, begin=h, end=2 * h), dim=1)
        if i in self.blocks:
            return self.blocks[i](x)
        if op == "global_avg_pool":
            return F.mean(x, axis=(2, 3))
        if op == "seq_mean":
            return F.mean(x, axis=1)
        if op in ("relu", "sigmoid", "tanh"):
            return F.Activation(x, act_type=op)
        if op == "softmax":
            return F.softmax(x, axis=-1)
        if op == "lrn":
            return F.LRN(x, alpha=attr(l, "alpha", 1e-4), beta=attr(l, "beta", 0.75),
                         knorm=attr(l, "k", 1.0), nsize=attr(l, "size", 5))
        if op == "flatten":
            return F.flatten(x)
        if op == "add":
            return ins[0] + ins[1]
        if op == "concat":
            return F.concat(*ins, dim=1)
        if op == "zero_pad_shortcut":
            st = attr(l, "stride", [1, 1])
            y = F.slice(x, begin=(None, None, None, None), end=(None, None, None, None),
                        step=(1, 1, st[0], st[1]))
            c = self.shapes[layer_inputs(self.model, i)[0]][0]
            extra = l["out"] - c
            lo = extra // 2
            # Gluon's pad leaves the channel axis alone: zeros concatenated.
            z = F.tile(F.zeros_like(y), reps=(1, -(-extra // c), 1, 1))
            parts = [F.slice_axis(z, axis=1, begin=0, end=lo)] if lo else []
            parts += [y, F.slice_axis(z, axis=1, begin=0, end=extra - lo)]
            return F.concat(*parts, dim=1)
        if op == "one_hot":
            return F.one_hot(x, l["vocab"])
        if op == "gelu":
            return gelu_tanh(F, x)
        if op == "seq_first":
            return F.squeeze(F.slice_axis(x, axis=1, begin=0, end=1), axis=1)
        raise NotImplementedError(f"layer '{l['name']}' ({op})")


def host_view(a: np.ndarray) -> mx.nd.NDArray:
    """A parameter's numpy values seen as an NDArray without a copy
    (DLPack), for set_data to copy in MXNet's engine. Through mx.nd.array's
    synchronous copy instead, a process's decoding steps afterwards ran
    slower, a plain Gluon loop's in the same process too (docs/
    performance.md, "Generation beside the frameworks' own loops"); why
    was not found. The view marks the array read-only (from_numpy's
    way of keeping it as MXNet saw it): the worker's parameters are its
    own copies."""
    return mx.nd.from_numpy(np.ascontiguousarray(a, dtype=np.float32), zero_copy=True)


def zeros_pair(weight) -> Tuple[mx.nd.NDArray, mx.nd.NDArray]:
    """Two state buffers shaped, placed and typed like `weight`."""
    return (mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype),
            mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype))


class Adam(mx.optimizer.Optimizer):
    """torch.optim.Adam, as nnbench defines it: L2 weight decay added to
    the gradient, epsilon added to sqrt(v) / sqrt(1 - beta2^t). MXNet's
    fused adam_update computes w -= lr * m / (sqrt(v) + epsilon) with the
    bias correction left to its caller: nnbench's update multiplied through
    by sqrt(1 - beta2^t) is that with the rate and epsilon scaled each step.
    (MXNet's own Adam passes epsilon unscaled, adding it before the bias
    correction; nd ops for each term took 13.5 ms per step of a million
    weights against the kernel's 1.8.)"""

    def __init__(self, o: dict):
        super().__init__(learning_rate=o["learning_rate"], wd=o["weight_decay"])
        self.beta1 = float(o["beta1"])
        self.beta2 = float(o["beta2"])
        self.eps = float(o["eps"])

    def create_state(self, index, weight) -> Tuple[mx.nd.NDArray, mx.nd.NDArray]:
        return zeros_pair(weight)

    def update(self, index, weight, grad, state) -> None:
        self._update_count(index)
        t = self._index_update_count[index]
        lr, wd = self._get_lr(index), self._get_wd(index)
        bc1 = 1 - self.beta1 ** t
        bc2_sqrt = math.sqrt(1 - self.beta2 ** t)
        m, v = state
        mx.nd.adam_update(weight, grad, m, v, out=weight, lr=lr * bc2_sqrt / bc1,
                          beta1=self.beta1, beta2=self.beta2, epsilon=self.eps * bc2_sqrt,
                          wd=wd, rescale_grad=self.rescale_grad, lazy_update=False)


class RMSprop(mx.optimizer.Optimizer):
    """torch.optim.RMSprop, not centered, as nnbench defines it: epsilon
    added to sqrt(square_avg), momentum accumulating the steps with the
    rate outside the buffer (w -= lr * buf). Without momentum it is Adam
    with beta1 0 (m = g) and no bias correction, which MXNet's fused
    adam_update computes (2.2 ms per step of a million weights, nd ops
    9.6); with momentum, nd ops."""

    def __init__(self, o: dict):
        super().__init__(learning_rate=o["learning_rate"], wd=o["weight_decay"])
        self.alpha = float(o["alpha"])
        self.eps = float(o["eps"])
        self.momentum = float(o["momentum"])

    def create_state(self, index, weight) -> Tuple[mx.nd.NDArray, mx.nd.NDArray]:
        # square_avg, and the momentum buffer (adam_update's m without
        # momentum: the gradient, written each step).
        return zeros_pair(weight)

    def update(self, index, weight, grad, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        sq, buf = state
        if self.momentum == 0:
            mx.nd.adam_update(weight, grad, buf, sq, out=weight, lr=lr, beta1=0.0,
                              beta2=self.alpha, epsilon=self.eps, wd=wd,
                              rescale_grad=self.rescale_grad, lazy_update=False)
            return
        g = decayed(grad * self.rescale_grad, weight, wd)
        sq[:] = self.alpha * sq + (1 - self.alpha) * mx.nd.square(g)
        buf[:] = self.momentum * buf + g / (mx.nd.sqrt(sq) + self.eps)
        weight[:] -= lr * buf


class Adadelta(mx.optimizer.Optimizer):
    """torch.optim.Adadelta, as nnbench defines it: the step
    sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g scaled by the
    learning rate, L2 weight decay added to the gradient."""

    def __init__(self, o: dict):
        super().__init__(learning_rate=o["learning_rate"], wd=o["weight_decay"])
        self.rho = float(o["rho"])
        self.eps = float(o["eps"])

    def create_state(self, index, weight) -> Tuple[mx.nd.NDArray, mx.nd.NDArray]:
        return zeros_pair(weight)

    def update(self, index, weight, grad, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        g = decayed(grad * self.rescale_grad, weight, wd)
        sq, acc = state
        sq[:] = self.rho * sq + (1 - self.rho) * mx.nd.square(g)
        delta = mx.nd.sqrt(acc + self.eps) / mx.nd.sqrt(sq + self.eps) * g
        acc[:] = self.rho * acc + (1 - self.rho) * mx.nd.square(delta)
        weight[:] -= lr * delta


def decayed(g, weight, wd: float):
    return g + wd * weight if wd else g


OPTIMIZERS = {"adam": Adam, "rmsprop": RMSprop, "adadelta": Adadelta}


def implements(o: dict, sgd_name: str) -> str:
    """What applies the update, for the record, and why it is not MXNet's
    own optimizer of that name."""
    name = o["optimizer"]
    if name == "sgd":
        return f"mxnet.optimizer '{sgd_name}'"
    if name == "adam":
        return ("nnbench's formula on mx.nd.adam_update, rate and epsilon scaled "
                "by the bias correction: MXNet's adam adds epsilon before it")
    why = {"rmsprop": "MXNet's rmsprop adds epsilon inside the square root",
           "adadelta": "MXNet's adadelta ignores the learning rate"}[name]
    how = ("on mx.nd.adam_update with beta1 0" if name == "rmsprop" and not o["momentum"]
           else "in mx.nd ops")
    return f"nnbench's formula {how}: {why}"


def omp_threads() -> int:
    """OpenMP's thread count in this process (MXNet's libgomp)."""
    try:
        return int(ctypes.CDLL("libgomp.so.1").omp_get_max_threads())
    except OSError:
        return 0


def log_softmax(z):
    """Log-probabilities over the last axis. MXNet's log_softmax runs
    oneDNN's primitive on the CPU, whose softmax cross-entropy gradients
    were 1.1e-6 to 1.9e-6 off (normwise, float64 truth) with up to 100
    classes, where MXNet's own kernel, which a temperature selects, was
    4e-8 to 8e-8 off, float32's rounding; the two cross near 4096 classes
    (6.1e-7, 5.7e-7) and at 10000 oneDNN's was the closer (4.6e-7 against
    1.4e-6) and 3 times faster (the PTB LSTM's loss). RMSprop divides each
    gradient element by its own size, and three of its steps on mnist-cnn
    carried oneDNN's error to 9e-3 from the reference's update
    (tests/conformance/optimizer_test.cpp allows 2e-3)."""
    if z.shape[-1] < 4096:
        return mx.nd.log_softmax(z, axis=-1, temperature=1.0)
    return mx.nd.log_softmax(z, axis=-1)


# MXNet's int8 is quantize_net's on symbolic graphs. Tried on the
# decoding loop's graphs as bf16 converts them below (quantize_net_v2,
# calib_mode 'none', its defaults): the embedding's, the attention's
# projections and the heads' converted and ran, but the first graph
# holding a block's residual add and MLP killed the worker (SIGSEGV,
# MXNet 1.9.1, gpt2-tiny, a Zen 5).
INT8_GAP = ("MXNet's int8 (quantize_net_v2 on the decoding loop's graphs) "
            "crashed its worker (SIGSEGV) on the graph of a block's residual "
            "add and MLP; not built")


# MXNet's bfloat16 dtype (mxnet.contrib.amp's): numpy has none.
BF16 = np.dtype([("bfloat16", np.uint16)])


@functools.cache
def bf16_problem() -> str:
    """Why MXNet's bf16 does not run here ("": it does): AMP's bf16 runs
    FullyConnected (and convolutions) in bf16 on oneDNN, the rest fp32
    (its lists: batch_dot and LayerNorm have no bf16 kernels); one bf16
    FullyConnected tried."""
    try:
        x = mx.nd.amp_cast(mx.nd.ones((2, 64)), dtype=BF16)
        w = mx.nd.amp_cast(mx.nd.ones((8, 64)), dtype=BF16)
        mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=8).wait_to_read()
        return ""
    except mx.base.MXNetError as e:
        return f"MXNet's bf16 FullyConnected fails here: {str(e).splitlines()[0][:200]}"


def tied_heads(sym: mx.sym.Symbol) -> List[str]:
    """The FullyConnected nodes of a graph that read an Embedding's table
    (a tied output head): AMP keeps the embedding fp32 and would cast the
    head's weight, one parameter, to bf16, which MXNet refuses."""
    nodes = json.loads(sym.tojson())["nodes"]
    tables = {n["inputs"][1][0] for n in nodes if n["op"] == "Embedding"}
    return [n["name"] for n in nodes
            if n["op"] == "FullyConnected" and n["inputs"][1][0] in tables]


def to_bf16(ctx) -> Callable:
    """AMP's conversion of a hybridized graph for bf16 inference, the
    weights its bf16 operators read cast once (cast_optional_params); a
    head tied to an embedding in the same graph stays fp32 (tied_heads)."""
    def convert(block: gluon.HybridBlock) -> gluon.HybridBlock:
        with warnings.catch_warnings():
            # The SymbolBlock it makes cannot type its inputs before a
            # call, and says so; the call types them.
            warnings.filterwarnings("ignore", message="Cannot decide type")
            return amp.convert_hybrid_block(
                block, target_dtype="bfloat16", ctx=ctx, cast_optional_params=True,
                excluded_sym_names=tied_heads(block._cached_graph[1]))
    return convert


class Engine:
    def __init__(self) -> None:
        self.batches: List[Tuple[mx.nd.NDArray, mx.nd.NDArray]] = []
        self.lower: Optional[Callable] = None
        self.out: Any = None
        self.options: dict = {}
        self.opt_name = ""  # MXNet's own optimizer, where sgd runs on it
        self.cache: Optional[Cache] = None

    def hello(self) -> dict:
        why = bf16_problem()
        below = [] if why else ["bf16"]
        return {"framework": "MXNet", "version": f"{mx.__version__} (Gluon)",
                "python": platform.python_version(),
                "devices": ["cpu"] + [f"cuda:{i}" for i in range(mx.context.num_gpus())],
                # Inference steps and generation also at bf16, as MXNet's
                # AMP converts a hybridized model for inference; training
                # at fp32 only.
                "precisions": ["fp32"] + below, "inference_only_precisions": below,
                "optimizers": ["sgd", *OPTIMIZERS],
                "checks_shapes": True, "generates": True,
                "generation_precisions": ["fp32"] + below,
                "generation_gaps": {"int8": INT8_GAP, **({"bf16": why} if why else {})}}

    def prefill(self, rows: List[List[int]], capacity: int) -> List[int]:
        """Greedy generation with a KV cache, as a Gluon decoding loop runs
        it: outside autograd and in predict mode."""
        self.last_step: Optional[Any] = None  # a call that fails leaves no logits
        # The cache's arrays, made by the first generation (a warm-up's),
        # are kept: a new one only starts over.
        c = self.cache
        if c is None or c.capacity != capacity or c.rows != len(rows):
            self.cache = Cache(capacity, len(rows), self.lower)
        else:
            c.length = 0
        # Ids as float32, as Gluon's Embedding takes them (exact below 2^24).
        return self._next(mx.nd.array(rows, ctx=self.ctx, dtype="float32"))

    def decode(self, tokens: List[int]) -> List[int]:
        self.last_step = None
        if self.cache is None:
            raise ValueError("generation: decode before a prefill")
        if len(tokens) != self.cache.rows:
            raise ValueError(f"generation: {len(tokens)} tokens to decode for "
                             f"{self.cache.rows} rows")
        return self._next(mx.nd.array([[t] for t in tokens], ctx=self.ctx,
                                      dtype="float32"))

    def _next(self, ids) -> List[int]:
        assert self.cache is not None
        with autograd.pause(train_mode=False):
            logits = self.net.cached(ids, self.cache)
            self.last_step = mx.nd.slice_axis(logits, axis=1, begin=-1, end=None)
            best = mx.nd.argmax(self.last_step, axis=-1)
        # MXNet runs operators asynchronously: reading the tokens to the
        # host waits for the whole step (the cache's writes included, which
        # the logits depend on), so that the worker's clock around this
        # call times the work.
        return [int(t) for t in best.asnumpy().reshape(-1)]

    def last_logits(self) -> Optional[List[List[float]]]:
        """Each row's logits at its last position after the last step."""
        last = getattr(self, "last_step", None)
        return None if last is None else last.asnumpy().reshape(last.shape[0], -1).tolist()

    def check(self, model: dict) -> None:
        """Builds the model without weights: NotImplementedError names a gap."""
        Net(model)

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        precision = options["precision"]
        if precision == "int8":
            raise NotImplementedError(f"int8: {INT8_GAP}")
        refuse_precision(precision, shapes, "mxnet", "", offered=("fp32", "bf16"))
        if precision == "bf16":
            if options["device"] != "cpu":
                raise NotImplementedError(
                    f"bf16 on {options['device']} (MXNet's AMP bf16 runs on "
                    "the CPU's oneDNN)")
            why = bf16_problem()
            if why:
                raise NotImplementedError(f"bf16: {why}")
        if options["optimizer"] != "sgd" and options["optimizer"] not in OPTIMIZERS:
            raise NotImplementedError(
                f"optimizer '{options['optimizer']}' (the mxnet engine runs: sgd "
                f"{' '.join(OPTIMIZERS)})")
        if options["threads"] != ASKED_THREADS:
            raise ValueError(f"threads {options['threads']} asked, the worker "
                             f"started with NNBENCH_THREADS={ASKED_THREADS}")
        self.options = options
        dev = options["device"]
        self.ctx = mx.gpu(int(dev.split(":")[1])) if dev.startswith("cuda") else mx.cpu()
        self.lower = to_bf16(self.ctx) if precision == "bf16" else None
        mx.random.seed(options["seed"])
        self.net = Net(model)
        self.cache = None  # an earlier compile's arrays are not this model's
        self.net.initialize(ctx=self.ctx)
        for name, prm in self.net.canonical.items():
            if name not in params:
                raise ValueError(f"no initial value for parameter {name}")
            prm.set_data(host_view(params[name]))
        for name, prm in self.net.stats.items():
            if name in params:
                prm.set_data(host_view(params[name]))
        # set_data's copies run in MXNet's engine: finished within compile.
        mx.nd.waitall()
        for name, prm in self.net.collect_params().items():
            if name.endswith("h2h_bias") and prm.grad_req == "null":
                prm.set_data(mx.nd.zeros(prm.shape, ctx=self.ctx))
        self.net.hybridize(static_alloc=True, static_shape=True)
        # bf16 inference steps: the hybridized model converted by AMP on
        # its first call (load_batches makes it, outside the clock).
        self.infer_net = Lowered(self.net, self.lower)
        self.bce = model["loss"] == "sigmoid_binary_cross_entropy"
        self.ids = model["input"]["dtype"] == "int64"
        # Softmax cross-entropy takes its log-probabilities from
        # log_softmax above.
        self.loss_fn = (gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)
                        if self.bce else
                        gluon.loss.SoftmaxCrossEntropyLoss(axis=-1, from_logits=True))
        o = options
        if o["optimizer"] == "sgd":
            self.opt_name = "nag" if o["nesterov"] else "sgd"
            self.trainer = gluon.Trainer(
                self.net.collect_params(), self.opt_name,
                {"learning_rate": o["learning_rate"], "momentum": o["momentum"],
                 "wd": o["weight_decay"]})
        else:
            self.trainer = gluon.Trainer(self.net.collect_params(),
                                         OPTIMIZERS[o["optimizer"]](o))
        return self.effective()

    def effective(self) -> dict:
        o = self.options
        graphs = ("each graph of the decoding loop" if o.get("generation")
                  else "the hybridized model")
        bf16 = {"weights": "bf16 where AMP runs bf16 (amp.convert_hybrid_block("
                           "target_dtype='bfloat16', cast_optional_params=True) "
                           f"of {graphs}: FullyConnected and convolutions "
                           "in bf16 on bf16 weights; the ops AMP's lists call "
                           "dtype-neutral (batch norm, pooling, LRN, ReLU, "
                           "concat, add) in their input's type; the rest "
                           "fp32: embeddings, layer norms, batch_dot, "
                           "softmax; an output head tied to an embedding in "
                           "the same graph fp32 too)"} \
            if o["precision"] == "bf16" else {}
        if bf16 and o.get("generation"):
            bf16["kv_cache"] = "fp32, per attention layer"
        return {"threads": omp_threads(), "device": o["device"],
                "precision": o["precision"], **bf16,
                "optimizer": self.describe_optimizer(),
                "thread_setting": f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}",
                "compiled": "hybridize(static_alloc, static_shape)",
                "framework": f"MXNet {mx.__version__} (Gluon), numpy {np.__version__}"}

    def describe_optimizer(self) -> str:
        o = self.options
        return f"{optimizer_settings(o)} ({implements(o, self.opt_name)})"

    def set_learning_rate(self, lr: float) -> None:
        """MXNet's sgd and nag keep the rate inside their momentum (sgd:
        state = m state + lr g, w -= state; nag's kernel likewise, whatever
        its docstring says: the conformance suite's schedule test shows
        it), PyTorch outside: a new rate rescales the states by new / old.
        The optimizers above keep no rate in their state."""
        old = self.trainer.learning_rate
        if self.options["optimizer"] == "sgd" and self.options["momentum"]:
            if old == 0:
                raise NotImplementedError("a learning rate of 0 followed by "
                                          "another with momentum")
            for updater in self.trainer._updaters:
                for state in updater.states.values():
                    if state is not None:
                        state[:] = state * (lr / old)
        self.trainer.set_learning_rate(lr)
        self.options["learning_rate"] = lr  # effective: the last rate
    def load_batches(self, t: dict) -> None:
        self.batches = []
        n = sum(1 for k in t if k.startswith("input."))
        for i in range(n):
            # Ids travel as float32 as Gluon's Embedding takes them (exact
            # below 2^24).
            x = mx.nd.array(t[f"input.{i}"], ctx=self.ctx, dtype="float32")
            y = mx.nd.array(t[f"labels.{i}"], ctx=self.ctx, dtype="float32")
            self.batches.append((x, y))
        if self.lower is not None and self.batches:
            with autograd.pause(train_mode=False):
                self.infer_net(self.batches[0][0])  # AMP converts here
        mx.nd.waitall()

    def fit(self, t: dict):
        """The Gluon loop of its tutorials: a DataLoader over an
        ArrayDataset (no shuffle: nnbench's loader shuffled), each batch put
        in the context, forward and loss under autograd.record, backward,
        trainer.step(batch size), the loss read with asscalar and accuracy
        counted from the outputs on the host, as a metric's update does."""
        n = sum(1 for k in t if k.startswith("input."))
        xs = mx.nd.array(np.concatenate([t[f"input.{i}"] for i in range(n)]),
                         dtype="float32")
        ys = mx.nd.array(np.concatenate([t[f"labels.{i}"] for i in range(n)]),
                         dtype="float32")
        size = len(t["input.0"])
        data = gluon.data.DataLoader(gluon.data.ArrayDataset(xs, ys),
                                     batch_size=size, shuffle=False)

        def run() -> dict:
            total, hits, counted, steps = 0.0, 0, 0, 0
            for x, y in data:
                x, y = x.as_in_context(self.ctx), y.as_in_context(self.ctx)
                with autograd.record():
                    self.out = self.net(x)
                    loss = self.loss_fn(self.out if self.bce
                                        else log_softmax(self.out), y)
                loss.backward()
                self.trainer.step(x.shape[0])
                total += float(loss.mean().asscalar())
                steps += 1
                c, k = scores.correct(self.out.asnumpy(), y.asnumpy(), self.bce)
                hits, counted = hits + c, counted + k
            return {"loss": total / steps, "accuracy": hits / counted,
                    "loop": (f"Gluon loop: DataLoader(ArrayDataset, "
                             f"batch_size={size}, shuffle=False), "
                             f"autograd.record, backward, "
                             f"trainer.step({size}), loss.asscalar() and "
                             f"correct predictions counted per batch")}

        return run

    def train_step(self, batch: int) -> float:
        x, y = self.batches[batch]
        with autograd.record():
            self.out = self.net(x)
            lt = self.loss_fn(self.out if self.bce else log_softmax(self.out), y).mean()
        lt.backward()
        self.trainer.step(1)
        return float(lt.asscalar())  # to the host, as Gluon loops do

    def infer_step(self, batch: int) -> None:
        x, _ = self.batches[batch]
        self.out = self.infer_net(x)
        mx.nd.waitall()

    def settle(self) -> None:
        """The loss needs only the forward pass: MXNet's engine may still
        run a step's backward and update, which the next step's forward
        waits for inside its own time. The last step of a request has no
        next one: worker.py calls this inside its time (measured: a
        ResNet-56 step timed to the loss alone left up to 20 ms of its
        300 ms to the pause after it; waiting after every step cost the
        MLP's steps their overlap with Python, 15 % of their time)."""
        mx.nd.waitall()

    def output(self) -> dict:
        return {"output": self.out.asnumpy().astype(np.float32)}

    def parameters(self) -> dict:
        return {k: p.data(self.ctx).asnumpy() for k, p in self.net.canonical.items()}

    def running_stats(self) -> dict:
        return {k: p.data(self.ctx).asnumpy().astype(np.float32)
                for k, p in self.net.stats.items()}

    def gradients(self) -> dict:
        return {k: p.grad(self.ctx).asnumpy() for k, p in self.net.canonical.items()
                if p.grad_req != "null"}
