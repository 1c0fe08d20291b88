#!/usr/bin/env python3
"""Gluon peer for nnbench's mxnet generation (docs/generation.md).

GPT-2 (gpt2-small, or gpt2-tiny for a quick look) generating greedily with
a KV cache, written in plain MXNet Gluon 1.9 as a user writes it:
GluonNLP-style HybridBlocks, hybridized with static memory, for what has
a fixed shape within a step (ln_1 with the fused q, k, v projection split
into heads; the heads merged, projected out and added to the residual;
the pre-norm MLP with GPT-2's tanh GELU and its residual), and an
imperative decoding loop around them for what grows with the cache.
Keys and values are preallocated per layer for prompt + new tokens
([N H, capacity, D], made by the first generation and kept) and written
in place by slice assignment; GluonNLP 0.x's GPT-2 concatenates its
states instead, a copy of the whole cache per layer and token. The head
is tied to the token embedding (a Dense holding the embedding's params,
as GluonNLP ties it) and runs on the last position only; the argmax is
read to the host (asnumpy), which waits for MXNet's asynchronous engine,
so each timed prefill and decoding step includes all of its work.

Weights are Gluon's initializers under mx.random.seed (Normal(0.02),
biases 0, layer norms 1 and 0), fp32; the prompt is seeded random ids.
Timing is the peers' (timing.py's time_generations: the time to first
token and each later token alone, whole generations of warm-up first).
Threads are OMP_NUM_THREADS, set before mxnet loads, as nnbench's mxnet
worker sets them; perf/generation_peers.sh gives this script the
environment nnbench gives its workers (perf/framework_peers.sh: the
OpenMP OpenBLAS first on LD_LIBRARY_PATH, GLIBC_TUNABLES keeping freed
memory). --check first compares the cached greedy tokens with the whole
model recomputed over prompt + generated tokens, without a cache. Run it
with the mxnet engine's interpreter:

    ~/.local/share/nnbench/venvs/mxnet/bin/python perf/peers/peer_generate_gluon.py --threads 2
"""
import argparse
import math
import os
import sys
from typing import Any, List, Optional, Tuple

import timing  # perf/peers/timing.py, beside this script

# layers, width, heads, vocabulary, learned positions (docs/models.md,
# src/model/zoo/transformers.cpp).
MODELS = {
    "gpt2-small": (12, 768, 12, 50257, 1024),
    "gpt2-tiny": (2, 64, 4, 512, 64),
}
LN_EPS = 1e-5
CHECK_TOKENS = 4  # --check's tokens per row: each costs a whole recomputation


def parse(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = timing.generation_parser(__doc__, MODELS)
    a = p.parse_args(argv)
    timing.check_generation_arguments(p, a, MODELS[a.model][4])
    return a


def gpt2(mx: Any, layers: int, width: int, heads: int, vocab: int, positions: int) -> Any:
    """The model, a gluon.Block: net(ids, caches, at) gives the logits of
    the last position [N, 1, vocab] of ids [N, t] (float32, as Gluon's
    Embedding takes them) at positions at..at + t; caches is None (no
    cache: the whole sequence is ids, at 0) or one (keys, values) pair per
    layer, whose first `at` positions hold the earlier tokens' and which
    get these tokens' too."""
    gluon, nn = mx.gluon, mx.gluon.nn

    def gelu_tanh(F: Any, x: Any) -> Any:
        # GPT-2's GELU is the tanh form; MXNet 1.x's (nn.GELU, LeakyReLU
        # act_type "gelu") is the erf one.
        return 0.5 * x * (1 + F.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    class QKV(gluon.HybridBlock):
        """ln_1 and the fused q, k, v projection (columns q | k | v, head h
        in columns h D..(h + 1) D of each), split into heads [N H, t, D]
        (batch_dot's batch), q scaled by 1 / sqrt(D) as GluonNLP's
        DotProductAttentionCell scales it."""

        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                self.ln = nn.LayerNorm(epsilon=LN_EPS, in_channels=width)
                self.proj = nn.Dense(3 * width, flatten=False, in_units=width)

        def hybrid_forward(self, F: Any, x: Any) -> Tuple[Any, Any, Any]:
            y = F.reshape(self.proj(self.ln(x)), shape=(0, 0, 3, heads, -1))  # N T 3 H D
            y = F.reshape(F.transpose(y, axes=(2, 0, 3, 1, 4)), shape=(0, -3, 0, 0))
            q, k, v = F.split(y, num_outputs=3, axis=0, squeeze_axis=True)
            return F.contrib.div_sqrt_dim(q), k, v

    class AttentionOut(gluon.HybridBlock):
        """The heads [N H, t, D] side by side, projected out, added to the
        residual x [N, t, F]."""

        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                self.proj = nn.Dense(width, flatten=False, in_units=width)

        def hybrid_forward(self, F: Any, x: Any, ctx: Any) -> Any:
            ctx = F.transpose(F.reshape(ctx, shape=(-4, -1, heads, 0, 0)), axes=(0, 2, 1, 3))
            return x + self.proj(F.reshape(ctx, shape=(0, 0, -3)))

    class MLP(gluon.HybridBlock):
        """Pre-norm position-wise MLP with its residual (GluonNLP's
        PositionwiseFFN with pre_norm): x + c_proj(gelu(c_fc(ln_2(x))))."""

        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                self.ln = nn.LayerNorm(epsilon=LN_EPS, in_channels=width)
                self.c_fc = nn.Dense(4 * width, flatten=False, in_units=width)
                self.c_proj = nn.Dense(width, flatten=False, in_units=4 * width)

        def hybrid_forward(self, F: Any, x: Any) -> Any:
            return x + self.c_proj(gelu_tanh(F, self.c_fc(self.ln(x))))

    class Layer(gluon.Block):
        """One pre-norm block. Imperative (mx.nd) around its hybridized
        parts: the keys' length grows every token, and a hybridized graph
        with static shapes would re-plan on every new length."""

        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                self.qkv = QKV()
                self.out = AttentionOut()
                self.mlp = MLP()

        def forward(self, x: Any, cache: Optional[Tuple[Any, Any]], at: int) -> Any:
            nd, t = mx.nd, x.shape[1]
            q, k, v = self.qkv(x)
            if cache is not None:
                # In place (_slice_assign): the arrays are allocated once.
                cache[0][:, at:at + t] = k
                cache[1][:, at:at + t] = v
                k = nd.slice_axis(cache[0], axis=1, begin=0, end=at + t)
                v = nd.slice_axis(cache[1], axis=1, begin=0, end=at + t)
            scores = nd.batch_dot(q, k, transpose_b=True)  # [N H, t, at + t]
            if t > 1:
                # Token j (position at + j) sees keys up to at + j: an
                # additive mask, -1e9 after it (exactly 0 after softmax).
                later = nd.broadcast_greater(nd.arange(at + t).reshape((1, -1)),
                                             nd.arange(at, at + t).reshape((-1, 1)))
                scores = nd.broadcast_add(scores, (later * -1e9).expand_dims(0))
            ctx = nd.batch_dot(nd.softmax(scores, axis=-1), v)
            return self.mlp(self.out(x, ctx))

    class GPT2(gluon.Block):
        def __init__(self) -> None:
            super().__init__()
            with self.name_scope():
                self.wte = nn.Embedding(vocab, width)
                self.wpe = nn.Embedding(positions, width)
                self.h: List[Any] = []
                for i in range(layers):
                    self.h.append(Layer())
                    self.register_child(self.h[-1], f"h{i}")
                self.ln_f = nn.LayerNorm(epsilon=LN_EPS, in_channels=width)
                # Tied to the token embedding: one Parameter, as GluonNLP ties it.
                self.head = nn.Dense(vocab, use_bias=False, flatten=False, in_units=width,
                                     params=self.wte.params)

        def forward(self, ids: Any, caches: Optional[List[Tuple[Any, Any]]], at: int) -> Any:
            t = ids.shape[1]
            pos = self.wpe(mx.nd.arange(at, at + t))
            x = mx.nd.broadcast_add(self.wte(ids), pos.expand_dims(0))
            for i, layer in enumerate(self.h):
                x = layer(x, None if caches is None else caches[i], at)
            # Only the last position chooses the next token.
            return self.head(self.ln_f(mx.nd.slice_axis(x, axis=1, begin=-1, end=None)))

    return GPT2()


class Generator:
    """Greedy generation with the model's KV cache: prefill() starts a
    generation over the prompt, decode(tokens) feeds one token per row;
    both return the next tokens (host ints, one per row)."""

    def __init__(self, mx: Any, net: Any, prompt: Any, capacity: int,
                 layers: int, width: int, heads: int) -> None:
        self.mx, self.net, self.prompt = mx, net, prompt
        self.shape = (prompt.shape[0] * heads, capacity, width // heads)
        self.layers = layers
        self.caches: Optional[List[Tuple[Any, Any]]] = None
        self.length = 0
        self.logits: Any = None  # the last step's [N, 1, vocab], for --check

    def prefill(self) -> Any:
        if self.caches is None:
            # Made by the first generation (a warm-up's) and kept: only
            # positions below the length are ever read, so no zeroing.
            nd = self.mx.nd
            self.caches = [(nd.empty(self.shape), nd.empty(self.shape))
                           for _ in range(self.layers)]
        self.length = 0
        return self._next(self.prompt)

    def decode(self, tokens: Any) -> Any:
        return self._next(self.mx.nd.array(tokens.reshape(-1, 1), dtype="float32"))

    def _next(self, ids: Any) -> Any:
        self.logits = self.net(ids, self.caches, self.length)
        self.length += ids.shape[1]
        # asnumpy waits for MXNet's asynchronous engine: the step is done.
        return self.mx.nd.argmax(self.logits, axis=-1).asnumpy().reshape(-1).astype("int64")


def check(mx: Any, np: Any, net: Any, gen: Generator, prompt: Any, steps: int) -> bool:
    """The cached greedy tokens against the whole model recomputed, with
    no cache, over prompt + the tokens so far; prints the verdict. The
    logits are compared too: with small random weights the residual stream
    is mostly the last token's own embedding, so the tied head often
    picks that token again whatever the attention read, and a cache that
    kept a wrong key, value or position could still give equal tokens."""
    cached, logits = [gen.prefill()], [gen.logits.asnumpy()]
    for _ in range(1, steps):
        cached.append(gen.decode(cached[-1]))
        logits.append(gen.logits.asnumpy())  # before the next step reuses it
    seq, worst = prompt, 0.0
    for j, tokens in enumerate(cached):
        out = net(mx.nd.array(seq, dtype="float32"), None, 0).asnumpy()
        ref = out.argmax(axis=-1).reshape(-1)
        # fp32 over different batch_dot shapes: agreement to rounding, 1e-4
        # of the logits' range, is far below what a wrong position moves.
        diff = float(np.abs(logits[j] - out).max()) / float(np.abs(out).max())
        worst = max(worst, diff)
        if not np.array_equal(ref, tokens) or diff > 1e-4:
            print(f"check: token {j}: cached {tokens.tolist()}, recomputed "
                  f"{ref.tolist()}, logits {diff:.2g} apart (relative)", file=sys.stderr)
            return False
        seq = np.concatenate([seq, tokens[:, None]], axis=1)
    print(f"check: {steps * prompt.shape[0]} tokens equal (logits within {worst:.1g} "
          "of their largest)")
    return True


def main() -> int:
    a = parse()
    # MXNet's operators and oneDNN size their OpenMP pools when the
    # library loads: the count must be in the environment before import.
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import mxnet as mx

    layers, width, heads, vocab, positions = MODELS[a.model]
    mx.random.seed(a.seed)
    net = gpt2(mx, layers, width, heads, vocab, positions)
    # Params without an initializer of their own (Dense weights,
    # embeddings) get Normal(0.02); Dense biases 0, layer norms 1 and 0.
    net.initialize(mx.init.Normal(0.02))
    net.hybridize(static_alloc=True, static_shape=True)
    prompt = np.random.default_rng(a.seed).integers(0, vocab, (a.batch, a.prompt))
    gen = Generator(mx, net, mx.nd.array(prompt, dtype="float32"),
                    a.prompt + a.new_tokens, layers, width, heads)
    if a.check and not check(mx, np, net, gen, prompt, min(CHECK_TOKENS, a.new_tokens)):
        return 1
    timing.run_generations(a, gen.prefill, gen.decode,
                           f"mxnet {mx.__version__} {a.model} pp{a.prompt} "
                           f"tg{a.new_tokens} batch {a.batch}, {a.threads} threads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
