#!/usr/bin/env python3
"""Plain decoding loop for nnbench's onnxruntime and openvino engines
(perf/generation_peers.sh, docs/generation.md).

The decoder graph is the one the engines run: nnbench_onnx's builder
(frameworks/common) makes Optimum's GPT-2 idiom (opset 17, input_ids and
past_key_k / past_value_k in, logits of the last position and
present_key_k / present_value_k out) from the zoo model's description,
written here as src/model/zoo/transformers.cpp builds it (the input's
length set to prompt + new tokens, as nnbench generate does), and fp32
weights of the zoo's shapes and initial distributions drawn by numpy from
--seed (not the zoo's values: a benchmark of the arithmetic, as nnbench's
own prompts and weights are). The graph goes through a temporary .onnx
file (one file: GPT-2 small is 0.5 GB, under protobuf's 2 GB), then the
builder's objects are dropped and only the runtime's own API runs:

  onnxruntime: as Optimum's ORTModelForCausalLM runs on the CPU (no I/O
    binding there): an InferenceSession on the file, one session.run per
    token, the present_* outputs fed back as the next past_* inputs, an
    empty past [N, heads, 0, D] for the prompt.
  openvino: as optimum-intel's OVModelForCausalLM runs a stateless model:
    core.read_model and compile_model on the CPU (the graph's symbolic
    dims read as dynamic), one infer request, start_async(share_inputs=
    True) and wait per token, the logits and present_* read from the
    request's own output tensors (get_tensor(...).data, no copy) and fed
    back as the next past_*.

Settings, matched to the engines' (frameworks/onnxruntime/engine.py,
frameworks/openvino/engine.py) so that only the worker path differs:
ONNX Runtime's CPU provider with ORT_ENABLE_ALL, sequential execution,
intra_op_num_threads = --threads, inter_op_num_threads 1 (the engine's
exactly); OpenVINO's CPU plugin with PERFORMANCE_HINT LATENCY,
INFERENCE_NUM_THREADS = --threads and INFERENCE_PRECISION_HINT f32 (the
engine's exactly; a user would often leave the precision unset, but on a
CPU with bf16 the plugin would then run bf16 and the comparison would be of
precisions). What differs on purpose: the engines build and compile the
decoder in the first prefill after a compile (inside the warm-up's time to
first token), the peer before timing; and the worker hands tokens over as
Python lists through its request loop.

Timing is perf/peers/timing.py's time_generations, as nnbench's worker
times a generation: whole generations of warm-up, then the prefill (time
to first token) and each later token alone. Greedy: the argmax of the
last position's logits. --check first decodes a few tokens with the cache
and recomputes each without it (the prompt and the tokens before it
through the decoder with an empty past), and the timed run's tokens must
repeat them. Run it with the engine's interpreter:

    ~/.local/share/nnbench/venvs/onnxruntime/bin/python \\
        perf/peers/peer_generate_onnx.py --runtime onnxruntime --threads 2
    ~/.local/share/nnbench/venvs/openvino/bin/python \\
        perf/peers/peer_generate_onnx.py --runtime openvino --threads 2
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import List, Tuple

import numpy as np

import timing  # perf/peers/timing.py, beside this script

# zoo_gpt2 puts frameworks/common on the path: nnbench_onnx writes the
# graph, never used in the timed loop
from zoo_gpt2 import MODELS, gpt2, weights
import nnbench_onnx

IDS, LOGITS = "input_ids", "logits"


def past_layout(inputs: List[Tuple[str, list]]) -> Tuple[List[str], List[Tuple[int, int]]]:
    """The past inputs' names in the graph's order and each one's (heads,
    D), from the runtime's own view of the inputs, as Optimum reads them."""
    past = [(n, s) for n, s in inputs if n.startswith("past_")]
    return [n for n, _ in past], [(int(s[1]), int(s[3])) for _, s in past]


class Decoder:
    """A runtime's decoding loop: first() starts a generation with an empty
    past, next() feeds one token per row; both return each row's next
    token. A subclass sets names and shapes (the past inputs) and step."""

    names: List[str]
    shapes: List[Tuple[int, int]]
    past: List[np.ndarray]

    def first(self, ids: np.ndarray) -> np.ndarray:
        """ids [N, t] with an empty past: each row's next token."""
        n = ids.shape[0]
        self.past = [np.zeros((n, h, 0, d), np.float32) for h, d in self.shapes]
        return self.step(ids)

    def next(self, tokens: np.ndarray) -> np.ndarray:
        return self.step(tokens[:, None])

    def step(self, ids: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class OrtDecoder(Decoder):
    """ONNX Runtime, as Optimum's ORTModelForCausalLM on the CPU."""

    def __init__(self, path: str, threads: int):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.version = f"onnxruntime {ort.__version__}"
        self.threads = self.session.get_session_options().intra_op_num_threads
        self.names, self.shapes = past_layout(
            [(i.name, i.shape) for i in self.session.get_inputs()])
        self.past: List[np.ndarray] = []

    def step(self, ids: np.ndarray) -> np.ndarray:
        feeds = dict(zip(self.names, self.past))
        feeds[IDS] = ids
        # outputs in the graph's order: logits, then present_key_k,
        # present_value_k as the past_* inputs are ordered
        logits, *self.past = self.session.run(None, feeds)
        return logits[:, -1].argmax(-1)


class OvDecoder(Decoder):
    """OpenVINO, as optimum-intel's OVModelForCausalLM runs a stateless
    model."""

    def __init__(self, path: str, threads: int):
        import openvino as ov
        import openvino.properties as props
        import openvino.properties.hint as hints

        core = ov.Core()
        self.compiled = core.compile_model(core.read_model(path), "CPU", {
            hints.performance_mode: hints.PerformanceMode.LATENCY,
            hints.inference_precision: ov.Type.f32,
            props.inference_num_threads: threads})
        self.request = self.compiled.create_infer_request()
        self.version = f"openvino {ov.__version__.split('-')[0]}"
        self.threads = int(self.compiled.get_property(props.inference_num_threads))
        self.names, self.shapes = past_layout(
            [(i.get_any_name(), [d.get_length() if d.is_static else -1
                                 for d in i.get_partial_shape()])
             for i in self.compiled.inputs])
        self.present = [n.replace("past_", "present_", 1) for n in self.names]
        self.past: List[np.ndarray] = []

    def step(self, ids: np.ndarray) -> np.ndarray:
        feeds = dict(zip(self.names, self.past))
        feeds[IDS] = ids
        self.request.start_async(feeds, share_inputs=True)
        self.request.wait()
        r = self.request
        self.past = [r.get_tensor(n).data for n in self.present]
        return r.get_tensor(LOGITS).data[:, -1].argmax(-1)


def check(dec: Decoder, prompt: np.ndarray, k: int) -> np.ndarray:
    """k tokens per row with the cache, each equal to the argmax of a
    recomputation without it; exits 1 where one differs. Returns them."""
    got = [dec.first(prompt)]
    for _ in range(1, k):
        got.append(dec.next(got[-1]))
    cached = np.stack(got, 1)
    for j in range(k):
        want = dec.first(np.concatenate([prompt, cached[:, :j]], 1))
        if not np.array_equal(want, cached[:, j]):
            print(f"check: token {j} differs: cached {cached[:, j].tolist()}, "
                  f"no cache {want.tolist()}", file=sys.stderr)
            sys.exit(1)
    return cached


def arguments() -> argparse.Namespace:
    ap = timing.generation_parser(__doc__.splitlines()[0], MODELS)
    ap.add_argument("--runtime", choices=("onnxruntime", "openvino"), required=True)
    a = ap.parse_args()
    timing.check_generation_arguments(ap, a, MODELS[a.model][4])
    return a


def main() -> None:
    a = arguments()
    model = gpt2(a.model, a.prompt + a.new_tokens)
    vocab = model["input"]["vocab"]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "decoder.onnx")
        proto, _ = nnbench_onnx.decoder(model, weights(model, a.seed))
        with open(path, "wb") as f:
            f.write(proto.SerializeToString())
        del proto  # the runtime holds the weights from here, as in the engines
        dec = (OrtDecoder if a.runtime == "onnxruntime" else OvDecoder)(path, a.threads)
    prompt = np.random.default_rng(a.seed).integers(0, vocab, (a.batch, a.prompt),
                                                    dtype=np.int64)
    checked = None
    if a.check:
        checked = check(dec, prompt, min(a.new_tokens, 8))
        rows = f" in each of {a.batch} rows" if a.batch > 1 else ""
        print(f"check: {checked.shape[1]} tokens equal{rows}")
    row0 = timing.run_generations(
        a, lambda: dec.first(prompt), dec.next,
        f"{dec.version} {a.model} pp{a.prompt} tg{a.new_tokens} batch {a.batch}, "
        f"{dec.threads} threads")
    if checked is not None and row0[:checked.shape[1]] != checked[0].tolist():
        print(f"check: the timed generation gave {row0[:checked.shape[1]]}, "
              f"the checked one {checked[0].tolist()}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
