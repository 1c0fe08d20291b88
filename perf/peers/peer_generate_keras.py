#!/usr/bin/env python3
"""Keras peer of nnbench generate (docs/generation.md) for the tensorflow and
jax engines: GPT-2 greedy generation with a KV cache written in plain Keras
3 as a KerasHub user's GPT2CausalLM does it, on the backend named by
KERAS_BACKEND (tensorflow unless set).

The model: gpt2-small (12 pre-norm blocks, width 768, 12 heads, vocabulary
50,257, 1,024 learned positions) or gpt2-tiny (2 layers, width 64, 4
heads, vocabulary 512, 64 positions), layer norms with eps 1e-5, an MLP
of 4 x width with GELU's tanh form, a final layer norm and the head tied
to the token embedding; Keras's default initialisers under
keras.utils.set_random_seed(--seed), fp32.

The generation, KerasHub's way (its CachedMultiHeadAttention and
GPT2CausalLM.call_with_cache): a cache of a fixed capacity (prompt + new
tokens) per attention layer, keys and values [N, capacity, H, D] each,
the new tokens' written in with keras.ops.slice_update at an index that
is a tensor, the positions not yet filled masked (each token attends over
the whole capacity); the layers are Keras's own (MultiHeadAttention's
projections and attention function, Dense, LayerNormalization,
ReversibleEmbedding's reverse call for the head), the head on the last
position only and the argmax on the device. One compiled step of the
token ids, the cache and the index: jax.jit of the model's stateless_call
with the cache donated (KerasHub's JAX generate runs stateless, the
variables mapped to the state), or a tf.function (XLA with --xla, or
NNBENCH_TF_XLA=1 as the engine reads it); it compiles once for the
prompt's length and once for one token. The cache is made by the first
generation (the warm-up's) and kept; each prefill starts over at 0.

Timed by perf/peers/timing.py's time_generations, as nnbench's workers
time a generation. --check first compares the cached greedy tokens with
a recomputation without a cache (the whole model over the prompt and the
tokens so far, the argmax of the last position).

Threads as the engines set them: TensorFlow's intra-op pool (inter-op 1);
on jax the process's CPU affinity, set before jax is imported (XLA's CPU
client sizes its pools by it).

    ~/.local/share/nnbench/venvs/tensorflow/bin/python \\
        perf/peers/peer_generate_keras.py --threads 2
    KERAS_BACKEND=jax ~/.local/share/nnbench/venvs/jax/bin/python \\
        perf/peers/peer_generate_keras.py --threads 2
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, List, Tuple

import timing  # perf/peers/timing.py, beside this script

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
BACKEND = os.environ["KERAS_BACKEND"]


def asked_threads(argv: List[str]) -> int:
    """--threads from the command line before argparse sees it (0 when
    absent or malformed: argparse then says what is wrong)."""
    for i, a in enumerate(argv):
        value = a.split("=", 1)[1] if a.startswith("--threads=") else (
            argv[i + 1] if a == "--threads" and i + 1 < len(argv) else None)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                return 0
    return 2


if BACKEND == "jax":
    # XLA's CPU client has no thread setting after it starts: the affinity
    # must be in place before jax is imported (frameworks/jax/engine.py).
    _threads = asked_threads(sys.argv[1:])
    if _threads >= 1:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:_threads])

# After the environment above: Keras picks its backend when it loads.
import numpy as np
import keras
from keras import ops


@dataclass(frozen=True)
class Spec:
    layers: int
    width: int
    heads: int
    vocab: int
    positions: int


MODELS = {"gpt2-small": Spec(12, 768, 12, 50257, 1024),
          "gpt2-tiny": Spec(2, 64, 4, 512, 64)}
EPS = 1e-5
CHECKED_TOKENS = 8  # --check: the first tokens compared with a recomputation


def gelu_tanh(x):
    # GPT-2's GELU (KerasHub's gelu_approximate); Keras's "gelu" is exact.
    return keras.activations.gelu(x, approximate=True)


class PositionEmbedding(keras.layers.Layer):
    """Learned positions (Keras has no layer for them; KerasHub's
    PositionEmbedding): rows start .. start + T of the table for [N, T, F],
    start a tensor in a cached step, so one compiled step serves every
    position."""

    def __init__(self, positions: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.positions = positions

    def build(self, input_shape) -> None:
        self.table = self.add_weight(shape=(self.positions, input_shape[-1]),
                                     initializer="glorot_uniform", name="embeddings")

    def call(self, x, start=0):
        # A tensor, not the variable: JAX's dynamic slice takes arrays only.
        table = ops.convert_to_tensor(self.table)
        return ops.slice(table, [start, 0], [x.shape[1], x.shape[2]])


class CachedAttention(keras.layers.MultiHeadAttention):
    """KerasHub's CachedMultiHeadAttention, its cached path: the new tokens'
    keys and values written into fixed-size caches at `index`, then
    MultiHeadAttention's own attention function over the whole capacity
    under the mask. Called without a cache it is the plain layer."""

    def call_with_cache(self, x, keys, values, index, mask) -> Tuple[Any, Any, Any]:
        query = self._query_dense(x)
        at = [0, index, 0, 0]
        keys = ops.slice_update(keys, at, self._key_dense(x))
        values = ops.slice_update(values, at, self._value_dense(x))
        out, _ = self._compute_attention(query, keys, values,
                                         attention_mask=mask, training=False)
        return self._output_dense(out), keys, values


class Block(keras.layers.Layer):
    """GPT-2's pre-norm decoder block (KerasHub's TransformerDecoder with
    normalize_first=True, no cross-attention, dropout 0)."""

    def __init__(self, spec: Spec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ln_1 = keras.layers.LayerNormalization(epsilon=EPS)
        self.attn = CachedAttention(spec.heads, spec.width // spec.heads)
        self.ln_2 = keras.layers.LayerNormalization(epsilon=EPS)
        self.fc = keras.layers.Dense(4 * spec.width, activation=gelu_tanh)
        self.proj = keras.layers.Dense(spec.width)

    def call(self, x):
        """No cache: the whole sequence, causal (--check's recomputation)."""
        h = self.ln_1(x)
        x = x + self.attn(h, h, use_causal_mask=True)
        return x + self.proj(self.fc(self.ln_2(x)))

    def call_with_cache(self, x, keys, values, index, mask) -> Tuple[Any, Any, Any]:
        a, keys, values = self.attn.call_with_cache(self.ln_1(x), keys, values,
                                                    index, mask)
        x = x + a
        return x + self.proj(self.fc(self.ln_2(x))), keys, values


class GPT2(keras.Model):
    """call(ids, cache, index): token ids [N, t] after `index` cached ones;
    the next token per row (the argmax of the last position's logits) and
    the cache, a (keys, values) pair per block, with the new tokens'."""

    def __init__(self, spec: Spec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.wte = keras.layers.ReversibleEmbedding(spec.vocab, spec.width)
        self.wpe = PositionEmbedding(spec.positions)
        self.blocks = [Block(spec, name=f"h{i}") for i in range(spec.layers)]
        self.ln_f = keras.layers.LayerNormalization(epsilon=EPS)

    def build(self, input_shape=None) -> None:
        # The weights: the plain forward of one token builds every layer
        # (MultiHeadAttention makes its projections in its build).
        self.logits(np.zeros((1, 1), np.int32))

    def head(self, x):
        # The final layer norm, then the tied head on the last position
        # only: only its logits choose the next token.
        return self.wte(self.ln_f(x)[:, -1], reverse=True)

    def call(self, ids, cache, index):
        x = self.wte(ids)
        x = x + self.wpe(x, start=index)
        # New token j (at index + j) sees the capacity's positions up to
        # itself; later ones hold zeros or an earlier generation's values.
        # One mask for all the blocks, as KerasHub's call_with_cache makes it.
        n, t, capacity = ids.shape[0], ids.shape[1], cache[0][0].shape[1]
        seen = ops.expand_dims(index + ops.arange(t, dtype="int32"), 1) >= \
            ops.expand_dims(ops.arange(capacity, dtype="int32"), 0)
        mask = ops.broadcast_to(ops.expand_dims(seen, 0), (n, t, capacity))
        new = []
        for block, (keys, values) in zip(self.blocks, cache):
            x, keys, values = block.call_with_cache(x, keys, values, index, mask)
            new.append((keys, values))
        return ops.argmax(self.head(x), axis=-1), new

    def logits(self, ids):
        """The last position's logits of the whole sequence, no cache."""
        x = self.wte(ids)
        x = x + self.wpe(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)

    def empty_cache(self, rows: int, capacity: int) -> list:
        s = self.spec
        shape = (rows, capacity, s.heads, s.width // s.heads)
        return [(ops.zeros(shape, "float32"), ops.zeros(shape, "float32"))
                for _ in self.blocks]


def compiled_step(model: GPT2, xla: bool) -> Tuple[Callable, str]:
    """The backend's compiled step(ids, cache, index) -> (tokens, cache),
    ids and index from the host, and the framework's name and version."""
    if BACKEND == "jax":
        import jax

        def stateless(tv, ntv, ids, cache, index):
            # The variables as arguments, KerasHub's stateless generate:
            # under jit a Keras variable cannot be read as a constant.
            return model.stateless_call(tv, ntv, ids, cache, index)[0]

        # The cache is donated: its buffers are updated in place.
        jitted = jax.jit(stateless, donate_argnums=3)
        tv = [v.value for v in model.trainable_variables]
        ntv = [v.value for v in model.non_trainable_variables]

        def step(ids: np.ndarray, cache: list, index: int):
            # index as an array, not a Python int, which jit would take as
            # a constant: one compile for every position.
            return jitted(tv, ntv, ids, cache, np.int32(index))

        return step, f"jax {jax.__version__}"
    import tensorflow as tf

    greedy = tf.function(model.__call__, jit_compile=xla)

    def tf_step(ids: np.ndarray, cache: list, index: int):
        # index as a tensor: a Python int would trace again per position.
        return greedy(tf.constant(ids), cache, tf.constant(index, tf.int32))

    return tf_step, f"tensorflow {tf.__version__}" + (" (XLA)" if xla else "")


class Generator:
    """Greedy generation with the compiled step: the cache made by the
    first prefill and kept (JAX hands back a new one for the donated)."""

    def __init__(self, model: GPT2, step: Callable, prompt: np.ndarray,
                 capacity: int) -> None:
        self.model, self.step, self.prompt = model, step, prompt
        self.capacity = capacity
        self.cache: list | None = None
        self.index = 0

    def prefill(self) -> np.ndarray:
        if self.cache is None:
            self.cache = self.model.empty_cache(self.prompt.shape[0], self.capacity)
        self.index = 0
        return self._next(self.prompt)

    def decode(self, tokens: np.ndarray) -> np.ndarray:
        return self._next(np.asarray(tokens, dtype=np.int32).reshape(-1, 1))

    def _next(self, ids: np.ndarray) -> np.ndarray:
        tokens, self.cache = self.step(ids, self.cache, self.index)
        self.index += ids.shape[1]
        return np.asarray(tokens)  # to the host: the step is done


def check(model: GPT2, gen: Generator, count: int) -> None:
    """The first `count` cached tokens against the whole model recomputed
    over the prompt and the tokens before each; exits 1 on a difference."""
    seq = gen.prompt
    nxt = gen.prefill()
    for k in range(count):
        if k:
            nxt = gen.decode(nxt)
        want = np.asarray(ops.argmax(model.logits(seq), axis=-1))
        if not np.array_equal(nxt, want):
            print(f"check: token {k} differs: cached {nxt.tolist()}, "
                  f"recomputed {want.tolist()}", file=sys.stderr)
            sys.exit(1)
        seq = np.concatenate([seq, nxt.reshape(-1, 1).astype(np.int32)], axis=1)
    print(f"check: {count} tokens equal (cached against recomputed, "
          f"{seq.shape[0]} rows)")


def main() -> None:
    p = timing.generation_parser(__doc__, MODELS)
    p.add_argument("--xla", action="store_true",
                   default=os.environ.get("NNBENCH_TF_XLA") == "1",
                   help="tensorflow: tf.function(jit_compile=True), as the "
                        "engine with NNBENCH_TF_XLA=1 (the default when it is set)")
    a = p.parse_args()
    spec = MODELS[a.model]
    timing.check_generation_arguments(p, a, spec.positions)
    if BACKEND == "tensorflow":
        import tensorflow as tf
        # Before any op runs: the pools are made with the runtime.
        tf.config.threading.set_intra_op_parallelism_threads(a.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    elif a.xla:
        p.error("--xla is for tensorflow: jax always compiles with XLA")

    keras.utils.set_random_seed(a.seed)
    model = GPT2(spec)
    model.build()
    prompt = np.random.default_rng(a.seed).integers(
        0, spec.vocab, (a.batch, a.prompt)).astype(np.int32)
    step, version = compiled_step(model, a.xla)
    gen = Generator(model, step, prompt, a.prompt + a.new_tokens)
    if a.check:
        check(model, gen, min(CHECKED_TOKENS, a.new_tokens))
    timing.run_generations(a, gen.prefill, gen.decode,
                           f"keras {keras.__version__} on {version} {a.model} "
                           f"pp{a.prompt} tg{a.new_tokens} batch {a.batch}, "
                           f"{a.threads} threads")


if __name__ == "__main__":
    main()
