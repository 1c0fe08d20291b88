"""The model builders the framework engines share compute what the numpy
forward pass of reference_nets.py does: Keras's (channels-last, weights
moved into Keras's layouts; on JAX here, as the jax engine runs it) and the
ONNX writer's graph (checked by onnx's checker, run by its reference
evaluator)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

import reference_nets as ref


def test_keras_builds_the_cnn_in_its_layouts() -> None:
    import keras_model as km

    p = ref.params()
    k = km.KerasModel(ref.CNN, p, {"seed": 1, "optimizer": "sgd", "learning_rate": 0.1,
                                   "momentum": 0.0, "nesterov": False})
    x = ref.batch()
    out = np.asarray(k.net(np.ascontiguousarray(x.transpose(0, 2, 3, 1))))
    np.testing.assert_allclose(out, ref.forward(p, x), rtol=1e-4, atol=1e-5)
    # nnbench's names and layouts come back as they went in.
    back = k.canonical(lambda v: np.asarray(v))
    assert sorted(back) == sorted(p)
    for name, a in p.items():
        np.testing.assert_array_equal(back[name], a)


def test_the_onnx_writer_builds_a_valid_graph_of_the_cnn() -> None:
    import nnbench_onnx

    p = ref.params()
    graph = nnbench_onnx.build(ref.CNN, p)
    onnx.checker.check_model(graph, full_check=True)
    assert graph.opset_import[0].version == nnbench_onnx.OPSET
    x = ref.batch(n=3)
    (out,) = ReferenceEvaluator(graph).run(None, {"input": x})
    np.testing.assert_allclose(np.asarray(out), ref.forward(p, x), rtol=1e-4, atol=1e-5)
