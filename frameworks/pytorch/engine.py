"""PyTorch through Python, eager: nnbench's `pytorch` engine.

Builds the model from nnbench's description with torch.nn modules (the
layouts of model/params.h are PyTorch's, so weights load as they are),
runs nnbench's optimizers as torch.optim's own where the formula is the
same (sgd, adam, rmsprop) and Adadelta with learning_rate scaling the
update, as nnbench defines it. Each step is timed with perf_counter around
the step and the loss read to the host (training) or one output element
read to the host (inference). The transformer ops are written as LibTorch's
engine writes them (src/engines/torch/network.cpp): attention and the
learned positions as small modules holding nnbench's parameters under
their own names, the tied output as a linear map by the embedding's table.
"""
from __future__ import annotations

import functools
import math
import platform
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F

import bandwidth
import scores
from description import attr, first_gap, layer_inputs, refuse_precision, shapes


class Attention(torch.nn.Module):
    """Multi-head self-attention as the description defines it (oracle:
    src/engines/reference/ops/transformer.h): q, k and v from one [3F, F]
    projection (row blocks q, k, v), head h in columns h*D..(h+1)*D of each
    (D = F/heads), softmax(q k^T / sqrt(D)) v with position i seeing only
    positions <= i when causal, the heads side by side projected out.
    The projections are nn.Linear modules, as in Hugging Face's models, so
    that dynamic quantization (which replaces nn.Linear) takes them too."""

    def __init__(self, f: int, heads: int, causal: bool, bias: bool):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.in_proj = torch.nn.Linear(f, 3 * f, bias=bias)
        self.out_proj = torch.nn.Linear(f, f, bias=bias)

    def canonical(self) -> Dict[str, torch.nn.Parameter]:
        """nnbench's names of the parameters."""
        out = {"in_weight": self.in_proj.weight, "out_weight": self.out_proj.weight}
        if self.in_proj.bias is not None:
            out["in_bias"] = self.in_proj.bias
            out["out_bias"] = self.out_proj.bias
        return out

    def forward(self, x):
        n, t, f = x.shape
        d = f // self.heads
        q, k, v = self.in_proj(x).chunk(3, -1)

        def split(y):  # [N, T, F] -> [N, H, T, D]
            return y.reshape(n, t, self.heads, d).transpose(1, 2)

        scores = torch.matmul(split(q), split(k).transpose(-2, -1)) / math.sqrt(d)
        if self.causal:
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        ctx = torch.matmul(torch.softmax(scores, -1), split(v))
        return self.out_proj(ctx.transpose(1, 2).reshape(n, t, f))

    def cached(self, x, cache: "Cache", i: int):
        """The same on new tokens x [N, t, F] after the cache's `length`
        earlier ones, whose keys and values cache.k[i], cache.v[i]
        ([N, H, capacity, D], made on first use) hold; these are added."""
        n, t, f = x.shape
        d, at = f // self.heads, cache.length
        q, k, v = self.in_proj(x).chunk(3, -1)

        def split(y):  # [N, t, F] -> [N, H, t, D]
            return y.reshape(n, t, self.heads, d).transpose(1, 2)

        if i not in cache.k:
            # Only positions [0, length + t) are ever read: no need to zero.
            cache.k[i] = x.new_empty(n, self.heads, cache.capacity, d)
            cache.v[i] = x.new_empty(n, self.heads, cache.capacity, d)
        cache.k[i][:, :, at:at + t] = split(k)
        cache.v[i][:, :, at:at + t] = split(v)
        keys, values = cache.k[i][:, :, :at + t], cache.v[i][:, :, :at + t]
        scores = torch.matmul(split(q), keys.transpose(-2, -1)) / math.sqrt(d)
        if t > 1:  # new token j sees the cache and the new ones up to itself
            mask = torch.ones(t, at + t, dtype=torch.bool,
                              device=x.device).triu(at + 1)
            scores = scores.masked_fill(mask, float("-inf"))
        ctx = torch.matmul(torch.softmax(scores, -1), values)
        return self.out_proj(ctx.transpose(1, 2).reshape(n, t, f))


class Cache:
    """Generation's keys and values per attention layer, for `capacity`
    positions, `length` of them filled."""

    def __init__(self, capacity: int, rows: int):
        self.capacity, self.rows, self.length = capacity, rows, 0
        self.k: Dict[int, torch.Tensor] = {}
        self.v: Dict[int, torch.Tensor] = {}


class Positions(torch.nn.Module):
    """A learned table of positions [P, F], its first T rows added to
    [N, T, F]."""

    def __init__(self, positions: int, f: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(positions, f))

    def forward(self, x, offset: int = 0):
        return x + self.weight[offset:offset + x.shape[1]]


class Net(torch.nn.Module):
    def __init__(self, model: dict):
        super().__init__()
        self.model = model
        self.layers = model["layers"]
        self.dtype = torch.float32  # what one_hot makes: bf16 after to()
        self.mods = torch.nn.ModuleDict()
        self.canonical: Dict[str, torch.nn.Parameter] = {}
        # Batch norm's running statistics (buffers), by nnbench's names.
        self.stats: Dict[str, torch.Tensor] = {}
        shapes = self._shapes()
        for i, l in enumerate(self.layers):
            first = layer_inputs(model, i)[0]
            shape = model["input"]["shape"] if first < 0 else shapes[first]
            m = self._module(l, shape)
            if m is not None:
                self.mods[str(i)] = m
                self._map(l, m)

    def _shapes(self) -> List[list]:
        """Per-sample output shapes, as model/analysis.cpp infers them."""
        return shapes(self.model)

    def _module(self, l: dict, shape: list):
        op = l["op"]
        if op == "linear":
            return torch.nn.Linear(shape[-1], l["out"],
                                   bias=attr(l, "bias", True))
        if op == "conv2d":
            return torch.nn.Conv2d(shape[0], l["out"], tuple(l["kernel"]),
                                   stride=tuple(attr(l, "stride", [1, 1])),
                                   padding=tuple(attr(l, "pad", [0, 0])),
                                   groups=attr(l, "groups", 1),
                                   bias=attr(l, "bias", True))
        if op == "batch_norm":
            cls = torch.nn.BatchNorm2d if len(shape) == 3 else torch.nn.BatchNorm1d
            return cls(shape[0], eps=attr(l, "eps", 1e-5),
                       momentum=attr(l, "momentum", 0.1))
        if op == "dropout":
            return torch.nn.Dropout(attr(l, "p", 0.0))
        if op == "embedding":
            return torch.nn.Embedding(l["vocab"], l["out"])
        if op == "layer_norm":
            return torch.nn.LayerNorm(shape[-1], eps=attr(l, "eps", 1e-5))
        if op == "positions":
            return Positions(l["vocab"], shape[1])
        if op == "attention":
            return Attention(shape[1], attr(l, "heads", 1), attr(l, "causal", False),
                             attr(l, "bias", True))
        if op == "lstm":
            m = torch.nn.LSTM(shape[1], l["out"],
                              num_layers=attr(l, "num_layers", 1),
                              bidirectional=attr(l, "bidirectional", False),
                              batch_first=True)
            if attr(l, "lstm_biases", 1) == 1:
                # One bias per gate (Keras): PyTorch's second is held at 0.
                for name, p in m.named_parameters():
                    if "bias_hh" in name:
                        with torch.no_grad():
                            p.zero_()
                        p.requires_grad_(False)
            return m
        return None

    def _map(self, l: dict, m: torch.nn.Module) -> None:
        name = l["name"]
        if isinstance(m, Attention):
            for suffix, p in m.canonical().items():
                self.canonical[f"{name}.{suffix}"] = p
            return
        if l["op"] != "lstm":
            for suffix, p in m.named_parameters():
                self.canonical[f"{name}.{suffix}"] = p
            if l["op"] == "batch_norm":
                self.stats[f"{name}.running_mean"] = m.running_mean
                self.stats[f"{name}.running_var"] = m.running_var
            return
        dirs = ["", "_reverse"] if attr(l, "bidirectional", False) else [""]
        for k in range(attr(l, "num_layers", 1)):
            for d in dirs:
                base = f"{name}.l{k}{d}"
                self.canonical[f"{base}.w_ih"] = getattr(m, f"weight_ih_l{k}{d}")
                self.canonical[f"{base}.w_hh"] = getattr(m, f"weight_hh_l{k}{d}")
                self.canonical[f"{base}.b_ih"] = getattr(m, f"bias_ih_l{k}{d}")
                if attr(l, "lstm_biases", 1) == 2:
                    self.canonical[f"{base}.b_hh"] = getattr(m, f"bias_hh_l{k}{d}")

    def forward(self, x):
        outs = []
        for i, l in enumerate(self.layers):
            ins = [x if j < 0 else outs[j] for j in layer_inputs(self.model, i)]
            outs.append(self._run(i, l, ins))
        return outs[-1]

    def cached(self, ids, cache: Cache):
        """Token ids [N, t] after the cache's `length` tokens: the last
        position's logits [N, 1, vocab]; the cache then holds all."""
        if cache.length + ids.shape[1] > cache.capacity:
            raise ValueError(f"generation: {cache.length + ids.shape[1]} "
                             f"tokens exceed the cache's {cache.capacity}")
        outs: List[torch.Tensor] = []
        last = len(self.layers) - 1
        for i, l in enumerate(self.layers):
            ins = [ids if j < 0 else outs[j] for j in layer_inputs(self.model, i)]
            # Only the last position's logits choose the next token, and the
            # head works on each position alone: the prompt's other rows
            # skip it.
            if i == last and l["op"] != "attention" and ins[0].shape[1] > 1:
                ins[0] = ins[0][:, -1:]
            if l["op"] == "attention":
                outs.append(self.mods[str(i)].cached(ins[0], cache, i))
            elif l["op"] == "positions":
                outs.append(self.mods[str(i)](ins[0], cache.length))
            else:
                outs.append(self._run(i, l, ins))
        cache.length += ids.shape[1]
        return outs[-1]

    def _run(self, i: int, l: dict, ins):
        op, x = l["op"], ins[0]
        k = tuple(attr(l, "kernel", [1, 1]))
        st = tuple(attr(l, "stride", [1, 1]))
        p = tuple(attr(l, "pad", [0, 0]))
        if op == "max_pool2d":
            return F.max_pool2d(x, k, st, p, ceil_mode=attr(l, "ceil_mode", False))
        if op == "avg_pool2d":
            return F.avg_pool2d(x, k, st, p, ceil_mode=attr(l, "ceil_mode", False),
                                count_include_pad=True)
        if op == "global_avg_pool":
            return x.mean((2, 3))
        if op == "seq_mean":
            return x.mean(1)
        if op == "relu":
            return torch.relu(x)
        if op == "sigmoid":
            return torch.sigmoid(x)
        if op == "tanh":
            return torch.tanh(x)
        if op == "softmax":
            return torch.softmax(x, -1)
        if op == "lrn":
            return F.local_response_norm(x, attr(l, "size", 5), attr(l, "alpha", 1e-4),
                                         attr(l, "beta", 0.75), attr(l, "k", 1.0))
        if op == "flatten":
            return x.flatten(1)
        if op == "add":
            return ins[0] + ins[1]
        if op == "concat":
            return torch.cat(ins, 1)
        if op == "zero_pad_shortcut":
            y = x[:, :, ::st[0], ::st[1]]
            extra = l["out"] - x.shape[1]
            lo = extra // 2
            return F.pad(y, (0, 0, 0, 0, lo, extra - lo))
        if op == "one_hot":
            return F.one_hot(x, l["vocab"]).to(self.dtype)
        if op == "gelu":
            return F.gelu(x, approximate="tanh" if attr(l, "approximate", False) else "none")
        if op == "tied_linear":
            if str(i) in self.mods:  # untied for int8 (quantize_int8)
                return self.mods[str(i)](x)
            # The embedding's table, shared: no parameter of its own, the
            # gradient adds into the embedding's.
            table = self.mods[str(l["tied"])]
            assert isinstance(table, torch.nn.Embedding), "tied: not an embedding"
            return F.linear(x, table.weight)
        if op == "seq_first":
            return x[:, 0]
        if op == "lstm":
            seq, (h, _) = self.mods[str(i)](x)
            if attr(l, "sequences", True):
                return seq
            if not attr(l, "bidirectional", False):
                return h[-1]
            return torch.cat([h[-2], h[-1]], 1)
        if str(i) in self.mods:
            return self.mods[str(i)](x)
        raise NotImplementedError(f"layer '{l['name']}' ({op})")


# What PyTorch's dynamic quantization replaces (its default qint8 mapping
# has the recurrent cells too): the linears, as in its BERT tutorial, and
# the LSTMs, as in its LSTM word-language-model tutorial.
DYNAMIC_INT8 = (torch.nn.Linear, torch.nn.LSTM)

# Layers with weights that dynamic quantization leaves in fp32: a model
# holding one is refused at int8 rather than run partly at fp32.
INT8_GAPS = {"conv2d": "PyTorch's dynamic quantization quantizes nn.Linear "
                       "and nn.LSTM only; a convolution needs static "
                       "quantization with calibration (not built)"}


@functools.cache
def bf16_gaps() -> Dict[str, str]:
    """Layers whose bf16 CPU kernels this PyTorch lacks, each tried once
    (the conformance suite found them): refused at bf16 rather than failing
    in the step."""
    gaps = {}
    try:
        F.local_response_norm(torch.ones(1, 4, 3, 3, dtype=torch.bfloat16), 3)
    except RuntimeError as e:
        first = str(e).splitlines()[0][:160]
        gaps["lrn"] = f"PyTorch {torch.__version__}'s local_response_norm at bf16: {first}"
    return gaps


def quantize_int8(net: Net) -> Dict[str, int]:
    """int8 as PyTorch's dynamic quantization makes it (its BERT and LSTM
    tutorials): every nn.Linear and nn.LSTM replaced by a dynamically
    quantized one, s8 weights with one scale per tensor, each input
    quantized to u8 as it comes. A tied head first becomes an nn.Linear
    holding a copy of the embedding's table, as Hugging Face's lm_head is
    one, so it is quantized too; the token lookup stays fp32. Returns how
    many modules of each kind it replaced."""
    for i, l in enumerate(net.layers):
        if l["op"] == "tied_linear":
            table = net.mods[str(l["tied"])]
            assert isinstance(table, torch.nn.Embedding), "tied: not an embedding"
            head = torch.nn.Linear(table.embedding_dim, table.num_embeddings,
                                   bias=False)
            with torch.no_grad():
                head.weight.copy_(table.weight)
            net.mods[str(i)] = head
    counts = {c.__name__: sum(isinstance(m, c) for m in net.modules())
              for c in DYNAMIC_INT8}
    torch.ao.quantization.quantize_dynamic(net, set(DYNAMIC_INT8),
                                           dtype=torch.qint8, inplace=True)
    return {k: v for k, v in counts.items() if v}


@functools.cache
def int8_problem() -> str:
    """Why this PyTorch cannot run int8 here ("" when it can): a
    dynamically quantized linear tried."""
    try:
        m = torch.nn.Sequential(torch.nn.Linear(64, 32))
        q = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear},
                                                   dtype=torch.qint8)
        q(torch.ones(2, 64))
        return ""
    except (RuntimeError, AttributeError) as e:
        first = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        return f"PyTorch's dynamic quantization fails here: {first}"


class Adadelta(torch.optim.Optimizer):
    """torch.optim.Adadelta's formula with learning_rate scaling the update."""

    def __init__(self, params, lr, rho, eps, weight_decay):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps,
                                      weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if g["weight_decay"]:
                    grad = grad.add(p, alpha=g["weight_decay"])
                s = self.state[p]
                if not s:
                    s["sq"] = torch.zeros_like(p)
                    s["acc"] = torch.zeros_like(p)
                s["sq"].mul_(g["rho"]).addcmul_(grad, grad, value=1 - g["rho"])
                delta = (s["acc"].add(g["eps"]).sqrt_()
                         .div_(s["sq"].add(g["eps"]).sqrt_()).mul_(grad))
                s["acc"].mul_(g["rho"]).addcmul_(delta, delta, value=1 - g["rho"])
                p.add_(delta, alpha=-g["lr"])


def make_optimizer(params, o: dict):
    name = o["optimizer"]
    if name == "sgd":
        return torch.optim.SGD(params, lr=o["learning_rate"], momentum=o["momentum"],
                               nesterov=o["nesterov"], weight_decay=o["weight_decay"])
    if name == "adam":
        return torch.optim.Adam(params, lr=o["learning_rate"],
                                betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                                weight_decay=o["weight_decay"])
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=o["learning_rate"], alpha=o["alpha"],
                                   eps=o["eps"], momentum=o["momentum"],
                                   weight_decay=o["weight_decay"])
    if name == "adadelta":
        return Adadelta(params, o["learning_rate"], o["rho"], o["eps"],
                        o["weight_decay"])
    raise NotImplementedError(f"optimizer '{name}'")


def describe_optimizer(o: dict) -> str:
    name = o["optimizer"]
    extra = {"sgd": f"momentum {o['momentum']:g}" + (" nesterov" if o["nesterov"] else ""),
             "adam": f"betas {o['beta1']:g} {o['beta2']:g} eps {o['eps']:g}",
             "rmsprop": f"alpha {o['alpha']:g} eps {o['eps']:g} momentum {o['momentum']:g}",
             "adadelta": f"rho {o['rho']:g} eps {o['eps']:g}"}[name]
    wd = f" weight_decay {o['weight_decay']:g}" if o["weight_decay"] else ""
    impl = "nnbench's formula in Python" if name == "adadelta" else f"torch.optim.{type_name(name)}"
    return f"{name} lr {o['learning_rate']:g} {extra}{wd} ({impl})"


def bf16_problem() -> str:
    """Why this PyTorch cannot generate at bf16 here ("" when it can): a
    few of a decoder's bf16 products tried, as LibTorch's engine does
    (src/engines/torch): under an ONEDNN_MAX_CPU_ISA=AVX2 cap PyTorch's
    oneDNN refuses them."""
    try:
        x = torch.ones(2, 8, 64, dtype=torch.bfloat16)
        F.linear(x, torch.ones(192, 64, dtype=torch.bfloat16))
        torch.matmul(x, x.transpose(-2, -1))
        return ""
    except RuntimeError as e:
        return f"PyTorch's bf16 matrix products fail on this CPU: {e}"


def type_name(name: str) -> str:
    return {"sgd": "SGD", "adam": "Adam", "rmsprop": "RMSprop"}[name]


class Engine:
    def __init__(self):
        self.net = None
        self.batches: List[Tuple[torch.Tensor, torch.Tensor]] = []
        self.out = None
        self.options: dict = {}
        self.quantized: Dict[str, int] = {}  # int8: modules replaced, by kind

    def hello(self) -> dict:
        devices = ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
        gaps = {p: why for p, why in (("bf16", bf16_problem()),
                                      ("int8", int8_problem())) if why}
        below = [p for p in ("bf16", "int8") if p not in gaps]
        return {"framework": "PyTorch", "version": torch.__version__,
                "python": platform.python_version(), "devices": devices,
                # Inference steps also at bf16 (the module converted, as
                # model.to(torch.bfloat16) makes it) and at int8 on the CPU,
                # dynamically quantized; training at fp32 only.
                "precisions": ["fp32"] + below,
                "inference_only_precisions": below,
                "optimizers": ["sgd", "adam", "rmsprop", "adadelta"],
                "unsupported": [{"op": op, "precision": "int8", "why": why}
                                for op, why in INT8_GAPS.items()] +
                [{"op": op, "precision": "bf16", "why": why}
                 for op, why in bf16_gaps().items()],
                "generates": True,
                # Generation also at bf16, the module converted (a PyTorch
                # loop after model.to(torch.bfloat16)), and at int8 on the
                # CPU, dynamically quantized.
                "generation_precisions": ["fp32"] + [p for p in ("bf16", "int8")
                                                     if p not in gaps],
                "generation_gaps": gaps}

    def prefill(self, rows: List[List[int]], capacity: int) -> List[int]:
        """Greedy generation with a KV cache, as a plain PyTorch decoding
        loop runs it under inference_mode."""
        self.last_step: Optional[torch.Tensor] = None  # a call that fails leaves no logits
        self.net.eval()
        # The cache's tensors, made by the first generation (a warm-up's),
        # are kept: a new one only starts over.
        c: Optional[Cache] = getattr(self, "cache", None)
        if c is None or c.capacity != capacity or c.rows != len(rows):
            self.cache = Cache(capacity, len(rows))
        else:
            c.length = 0
        ids = torch.tensor(rows, dtype=torch.int64, device=self.device)
        return self._next(ids)

    def decode(self, tokens: List[int]) -> List[int]:
        self.last_step = None
        if len(tokens) != self.cache.rows:
            raise ValueError(f"generation: {len(tokens)} tokens to decode for "
                             f"{self.cache.rows} rows")
        ids = torch.tensor(tokens, dtype=torch.int64,
                           device=self.device).reshape(-1, 1)
        return self._next(ids)

    def _next(self, ids) -> List[int]:
        with torch.inference_mode():
            logits = self.net.cached(ids, self.cache)
            self.last_step = logits[:, -1]  # a view, read only by last_logits
            return self.last_step.argmax(-1).tolist()

    def device_bandwidth(self) -> dict:
        """A GPU's read bandwidth (frameworks/common/bandwidth.py), the
        ceiling of a generation there; {} on the host, which nnbench
        measures itself."""
        if self.device.type != "cuda":
            return {}
        n = bandwidth.array_bytes(torch.cuda.mem_get_info(self.device)[0])
        if n == 0:
            return {}
        try:
            return self._sum_bandwidth(n)
        finally:
            torch.cuda.empty_cache()  # the array, freed on return, not kept cached

    def _sum_bandwidth(self, n: int) -> dict:
        x = torch.ones(n // 4, dtype=torch.float32, device=self.device)
        return bandwidth.measure(lambda: torch.sum(x),
                                 lambda: torch.cuda.synchronize(self.device),
                                 n, f"torch.sum on {self.device}")

    def last_logits(self) -> Optional[List[List[float]]]:
        """Each row's logits at its last position after the last step."""
        last = getattr(self, "last_step", None)
        return None if last is None else last.float().cpu().tolist()

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        precision = options["precision"]
        refuse_precision(precision, shapes, "pytorch",
                         "post-training dynamic quantization")
        if precision == "bf16":
            gap = first_gap(model, bf16_gaps())
            if gap:
                raise NotImplementedError(f"bf16: {gap}")
        if precision == "int8":
            if options["device"] != "cpu":
                raise NotImplementedError(
                    f"int8 on {options['device']} (PyTorch's dynamic "
                    "quantization runs on the CPU only)")
            gap = first_gap(model, INT8_GAPS)
            if gap:
                raise NotImplementedError(f"int8: {gap}")
        self.options = options
        self.device = torch.device(options["device"])
        if self.device.type == "cuda":
            # fp32 is fp32: cuDNN's convolutions otherwise run TF32 (10-bit
            # mantissas) on Ampere and later GPUs.
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
        if options["threads"] > 0:
            torch.set_num_threads(options["threads"])
        torch.manual_seed(options["seed"])
        self.model = model
        self.__dict__.pop("cache", None)  # an earlier compile's (another dtype, perhaps)
        self.net = Net(model)
        with torch.no_grad():
            for name, p in self.net.canonical.items():
                if name not in params:
                    raise ValueError(f"no initial value for parameter {name}")
                p.copy_(torch.from_numpy(params[name]))
            for name, b in self.net.stats.items():
                if name in params:
                    b.copy_(torch.from_numpy(params[name]))
        self.net.to(self.device)
        if precision == "bf16":
            why = bf16_problem()
            if why:
                raise NotImplementedError(f"bf16: {why}")
            self.net.to(torch.bfloat16)  # weights, activations and cache
            self.net.dtype = torch.bfloat16
        self.quantized = {}
        if precision == "int8":
            why = int8_problem()
            if why:
                raise NotImplementedError(f"int8: {why}")
            self.quantized = quantize_int8(self.net)
            if not self.quantized:
                raise NotImplementedError(
                    "int8: nothing in this model is dynamically quantized "
                    "(no nn.Linear or nn.LSTM): it would run fp32")
        # int8 is inference only, and its quantized modules hold no
        # parameters to update (a model of linears has none left).
        self.opt: Optional[torch.optim.Optimizer] = None if precision == "int8" \
            else make_optimizer([p for p in self.net.parameters()
                                 if p.requires_grad], options)
        self.bce = model["loss"] == "sigmoid_binary_cross_entropy"
        return self.effective()

    def effective(self) -> dict:
        precision = self.options.get("precision", "fp32")
        e = {"threads": torch.get_num_threads(), "device": str(self.device),
             "precision": precision,
             "optimizer": describe_optimizer(self.options),
             "interop_threads": str(torch.get_num_interop_threads()),
             "framework": f"PyTorch {torch.__version__} (eager, Python "
                          f"{platform.python_version()})"}
        if precision == "bf16":  # inference only (compile refuses training)
            e["weights"] = ("bf16 (the module converted, model.to(torch.bfloat16): "
                            "weights and activations; float inputs cast)")
            if self.options.get("generation"):
                e["kv_cache"] = "bf16, per attention layer"
        if precision == "int8":
            kinds = ", ".join(f"{n} {k}" for k, n in self.quantized.items())
            e["weights"] = ("int8: torch.ao.quantization.quantize_dynamic of every "
                            f"nn.Linear and nn.LSTM ({kinds}; a tied head "
                            "untied first), qint8 weights one scale per "
                            "tensor, inputs quantized on the fly; the token "
                            "lookup, norms and biases fp32")
            e["quantized_engine"] = str(torch.backends.quantized.engine)
            e["calibration"] = ("none: dynamic quantization takes each input's "
                                "range as it comes")
            if self.options.get("generation"):
                e["kv_cache"] = "fp32, per attention layer"
        if self.device.type == "cuda":
            b = torch.backends
            e["gpu"] = (f"{torch.cuda.get_device_name(self.device)}, CUDA "
                        f"{torch.version.cuda}, cuDNN {b.cudnn.version()}")
            e["tf32"] = (f"conv {b.cudnn.allow_tf32}, matmul "
                         f"{b.cuda.matmul.allow_tf32}")
            e["cudnn_benchmark"] = str(b.cudnn.benchmark)
        return e

    def optimizer(self) -> torch.optim.Optimizer:
        if self.opt is None:
            raise ValueError("no optimizer: compiled at int8, for inference only")
        return self.opt

    def set_learning_rate(self, lr: float) -> None:
        for group in self.optimizer().param_groups:  # torch.optim's own way
            group["lr"] = lr
        self.options["learning_rate"] = lr  # effective: the last rate
    def load_batches(self, t: dict) -> None:
        self.batches = []
        n = sum(1 for k in t if k.startswith("input."))
        for i in range(n):
            x = torch.from_numpy(t[f"input.{i}"]).to(self.device)
            if x.is_floating_point():
                # bf16: float inputs cast once, outside the clock, as a user
                # feeds a converted model (LibTorch's engine does the same).
                x = x.to(self.net.dtype)
            y = torch.from_numpy(t[f"labels.{i}"]).to(self.device)
            if self.bce:
                y = y.to(torch.float32)
            self.batches.append((x, y))

    def loss(self, out, y):
        if self.bce:
            return F.binary_cross_entropy_with_logits(out, y)
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))

    def begin(self, mode: str) -> None:
        self.net.train(mode == "train")

    def fit(self, t: dict):
        """The plain PyTorch loop of its tutorials: a DataLoader over a
        TensorDataset (no shuffle: nnbench's loader shuffled), each batch
        moved to the device, zero_grad, forward, loss, backward, step, the
        loss read with .item() and the correct predictions counted."""
        n = sum(1 for k in t if k.startswith("input."))
        xs = torch.from_numpy(np.concatenate([t[f"input.{i}"] for i in range(n)]))
        ys = torch.from_numpy(np.concatenate([t[f"labels.{i}"] for i in range(n)]))
        size = len(t["input.0"])
        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(xs, ys), batch_size=size, shuffle=False)

        opt = self.optimizer()

        def run() -> dict:
            self.net.train()
            total, hits, counted, steps = 0.0, 0, 0, 0
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                if self.bce:
                    y = y.to(torch.float32)
                opt.zero_grad()
                self.out = self.net(x)
                loss = self.loss(self.out, y)
                loss.backward()
                opt.step()
                total += loss.item()
                steps += 1
                c, k = scores.correct(self.out.detach().cpu().numpy(),
                                      y.cpu().numpy(), self.bce)
                hits, counted = hits + c, counted + k
            return {"loss": total / steps, "accuracy": hits / counted,
                    "loop": (f"plain PyTorch loop: DataLoader(TensorDataset, "
                             f"batch_size={size}, shuffle=False), zero_grad, "
                             f"forward, loss, backward, step, loss.item() and "
                             f"correct predictions counted per batch")}

        return run

    def train_step(self, batch: int) -> float:
        x, y = self.batches[batch]
        opt = self.optimizer()
        opt.zero_grad()
        self.out = self.net(x)
        lt = self.loss(self.out, y)
        lt.backward()
        opt.step()
        return lt.item()  # to the host: the step is done

    def infer_step(self, batch: int) -> None:
        x, _ = self.batches[batch]
        with torch.inference_mode():
            self.out = self.net(x)
            self.out.reshape(-1)[0].item()

    def output(self) -> dict:
        return {"output": self.out.detach().cpu().float().numpy()}

    def parameters(self) -> dict:
        return {k: p.detach().cpu().float().numpy()
                for k, p in self.net.canonical.items()}

    def running_stats(self) -> dict:
        return {k: b.detach().cpu().float().numpy()
                for k, b in self.net.stats.items()}

    def gradients(self) -> dict:
        return {k: p.grad.detach().cpu().numpy()
                for k, p in self.net.canonical.items() if p.grad is not None}
