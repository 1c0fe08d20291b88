#!/usr/bin/python3
"""PyTorch peer of nnbench generate (docs/generation.md) for the pytorch
engine: GPT-2 greedy generation with a KV cache written in plain PyTorch
as a user writes it (nanoGPT's and Hugging Face's GPT2LMHeadModel's
modules and names), to compare with the engine's worker path.

The model: gpt2-small (12 pre-norm blocks, width 768, 12 heads, vocabulary
50,257, 1,024 learned positions) or gpt2-tiny (2 layers, width 64, 4
heads, vocabulary 512, 64 positions): nn.Embedding wte and wpe, layer
norms with eps 1e-5, q, k and v from one c_attn projection, c_proj out,
an MLP c_fc -> GELU (tanh form) -> c_proj of 4 x width, all with biases,
a final layer norm and lm_head tied to wte (one shared weight, no bias);
PyTorch's default initialisation under torch.manual_seed(--seed), fp32.

The generation, the way Hugging Face's StaticCache and gpt-fast do it:
keys and values [N, H, capacity, D] per block, capacity = prompt + new
tokens, preallocated and written by slice assignment at the generation's
position; attention by matmul and softmax (torch 1.13 has no
scaled_dot_product_attention), the prompt under a causal mask, a single
new token without one (it sees every cached position). The final layer
norm on every position, then lm_head on the last one only (only its
logits choose the next token, as generate uses them); the argmax read to
the host as Python ints, all under torch.inference_mode() with the model
in eval mode. The cache is made by the first generation (the warm-up's)
and kept; each prefill starts over at position 0.

Timed by perf/peers/timing.py's time_generations, as nnbench's workers
time a generation. --check first compares the cached greedy tokens, and
their logits, with a recomputation without a cache (the whole model over
the prompt and the tokens so far, the last position). Run it with
Debian's interpreter, which has python3-torch:

    /usr/bin/python3 perf/peers/peer_generate_torch.py --threads 2
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

import timing  # perf/peers/timing.py, beside this script


@dataclass(frozen=True)
class Config:
    n_layer: int
    n_embd: int
    n_head: int
    vocab_size: int
    block_size: int  # learned positions


MODELS = {"gpt2-small": Config(12, 768, 12, 50257, 1024),
          "gpt2-tiny": Config(2, 64, 4, 512, 64)}
EPS = 1e-5
CHECKED_TOKENS = 8  # --check: the first tokens compared with a recomputation


class StaticCache:
    """Keys and values per block, [N, H, capacity, D] each, allocated once;
    `length` positions of them belong to the current generation."""

    def __init__(self, config: Config, rows: int, capacity: int) -> None:
        shape = (rows, config.n_head, capacity, config.n_embd // config.n_head)
        # Only positions below length + the new tokens are ever read: no
        # need to zero them.
        self.k = [torch.empty(shape) for _ in range(config.n_layer)]
        self.v = [torch.empty(shape) for _ in range(config.n_layer)]
        self.rows, self.capacity, self.length = rows, capacity, 0

    def update(self, layer: int, pos: int, k: torch.Tensor,
               v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Writes the new tokens' k and v [N, H, t, D] at pos; returns the
        keys and values of positions 0 .. pos + t."""
        end = pos + k.shape[2]
        self.k[layer][:, :, pos:end] = k
        self.v[layer][:, :, pos:end] = v
        return self.k[layer][:, :, :end], self.v[layer][:, :, :end]


class CausalSelfAttention(nn.Module):
    def __init__(self, config: Config, layer: int) -> None:
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.n_head, self.n_embd, self.layer = config.n_head, config.n_embd, layer

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None,
                cache: StaticCache | None, pos: int) -> torch.Tensor:
        b, t, c = x.shape
        d = c // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(b, t, self.n_head, d).transpose(1, 2)  # [N, H, t, D]
        k = k.view(b, t, self.n_head, d).transpose(1, 2)
        v = v.view(b, t, self.n_head, d).transpose(1, 2)
        if cache is not None:
            k, v = cache.update(self.layer, pos, k, v)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        if mask is not None:
            att = att.masked_fill(mask, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, config: Config, layer: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=EPS)
        self.attn = CausalSelfAttention(config, layer)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=EPS)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None,
                cache: StaticCache | None, pos: int) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), mask, cache, pos)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            h=nn.ModuleList([Block(config, i) for i in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, eps=EPS),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied
        # Position i may not see j > i (nanoGPT's "bias" buffer, as masked).
        causal = torch.ones(config.block_size, config.block_size,
                            dtype=torch.bool).triu(1)
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, idx: torch.Tensor,
                cache: StaticCache | None = None) -> torch.Tensor:
        """Token ids [N, t] after the cache's `length` ones (none without a
        cache): the last position's logits [N, vocab]; the cache then holds
        the new tokens' keys and values too."""
        pos = cache.length if cache is not None else 0
        t = idx.shape[1]
        tr = self.transformer
        x = tr.wte(idx) + tr.wpe(torch.arange(pos, pos + t, device=idx.device))
        # One new token sees every earlier position: no mask.
        mask = self.causal[pos:pos + t, :pos + t] if t > 1 else None
        for block in tr.h:
            x = block(x, mask, cache, pos)
        if cache is not None:
            cache.length = pos + t
        return self.lm_head(tr.ln_f(x)[:, -1])


class Generator:
    """Greedy generation of prompt's rows with the model's cache, made by
    the first prefill and kept."""

    def __init__(self, model: GPT, prompt: torch.Tensor, capacity: int) -> None:
        self.model, self.prompt, self.capacity = model, prompt, capacity
        self.cache: StaticCache | None = None

    def start(self) -> StaticCache:
        """The cache, empty: made on first use, then only started over."""
        if self.cache is None:
            self.cache = StaticCache(self.model.config, self.prompt.shape[0],
                                     self.capacity)
        self.cache.length = 0
        return self.cache

    def prefill(self) -> list[int]:
        self.start()
        return self._next(self.prompt)

    def decode(self, tokens: list[int]) -> list[int]:
        return self._next(torch.tensor(tokens, dtype=torch.long).view(-1, 1))

    def _next(self, idx: torch.Tensor) -> list[int]:
        return self.model(idx, self.cache).argmax(-1).tolist()


def check(model: GPT, gen: Generator, count: int) -> None:
    """The first `count` greedy tokens with the generator's cache against
    the whole model recomputed over the prompt and the tokens before each,
    their logits too (random weights often repeat one token, which a wrong
    cache would not change); exits 1 on a difference."""
    cache, ids, seq = gen.start(), gen.prompt, gen.prompt
    for k in range(count):
        got, want = model(ids, cache), model(seq)
        tokens, wanted = got.argmax(-1).tolist(), want.argmax(-1).tolist()
        # Only the summation order differs: fp32 rounding, far below this.
        close = torch.allclose(got, want, rtol=1e-4,
                               atol=1e-4 * want.abs().max().item())
        if tokens != wanted or not close:
            print(f"check: token {k} differs: cached {tokens}, recomputed "
                  f"{wanted}, logits' largest difference "
                  f"{(got - want).abs().max().item():.3g}", file=sys.stderr)
            sys.exit(1)
        ids = torch.tensor(tokens, dtype=torch.long).view(-1, 1)
        seq = torch.cat([seq, ids], 1)
    print(f"check: {count} tokens equal (cached against recomputed, "
          f"{seq.shape[0]} rows)")


def main() -> None:
    p = timing.generation_parser(__doc__, MODELS)
    a = p.parse_args()
    config = MODELS[a.model]
    timing.check_generation_arguments(p, a, config.block_size)

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    model = GPT(config).eval()
    prompt = torch.randint(0, config.vocab_size, (a.batch, a.prompt))
    gen = Generator(model, prompt, a.prompt + a.new_tokens)
    with torch.inference_mode():
        if a.check:
            check(model, gen, min(CHECKED_TOKENS, a.new_tokens))
        timing.run_generations(
            a, gen.prefill, gen.decode,
            f"pytorch {torch.__version__} {a.model} pp{a.prompt} tg{a.new_tokens} "
            f"batch {a.batch}, {torch.get_num_threads()} threads")


if __name__ == "__main__":
    main()
