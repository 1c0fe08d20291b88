"""OpenVINO's own hints on the graph nnbench runs (perf/inference_hints.sh).

Runs an ONNX file (nnbench models --export-onnx) on OpenVINO's CPU plugin as
its users would, for --seconds after a warm-up, batch 1, fp32 inference
precision: the LATENCY hint with synchronous requests, and the THROUGHPUT
hint with an AsyncInferQueue of as many requests as the plugin's optimal
number. Prints samples/s and what the plugin chose (streams, threads).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import openvino as ov
import openvino.properties as props
import openvino.properties.hint as hints


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("onnx")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=5)
    a = ap.parse_args()
    core = ov.Core()
    net = core.read_model(a.onnx)
    shape = [1] + list(net.input(0).get_partial_shape().get_min_shape())[1:]
    x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    for mode in (hints.PerformanceMode.LATENCY, hints.PerformanceMode.THROUGHPUT):
        c = core.compile_model(net, "CPU", {
            hints.performance_mode: mode,
            hints.inference_precision: ov.Type.f32,
            props.inference_num_threads: a.threads})
        n = c.get_property(props.optimal_number_of_infer_requests)
        queue = ov.AsyncInferQueue(c, n)
        for _ in range(4 * n):  # warm-up
            queue.start_async({0: x})
        queue.wait_all()
        done = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < a.seconds:
            for _ in range(n):
                queue.start_async({0: x})
            queue.wait_all()
            done += n
        dt = time.perf_counter() - t0
        print(f"openvino {mode.name} hint: {done / dt:.1f} samples/s "
              f"(streams {c.get_property(props.num_streams)}, requests {n}, "
              f"threads {c.get_property(props.inference_num_threads)})")


if __name__ == "__main__":
    main()
