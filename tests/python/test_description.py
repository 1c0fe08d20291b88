"""description.py: shapes as nnbench sends them, PyTorch's pooling sizes."""
from __future__ import annotations

import pytest

import description


def test_shapes_are_the_ones_nnbench_sent() -> None:
    m = {"input": {"shape": [1, 28, 28]},
         "layers": [{"op": "conv2d", "out": 8, "shape": [8, 26, 26]},
                    {"op": "flatten", "shape": [5408]}]}
    assert description.shapes(m) == [[8, 26, 26], [5408]]


def test_a_model_without_shapes_is_refused_not_recomputed() -> None:
    m = {"input": {"shape": [4]}, "layers": [{"op": "relu"}]}
    with pytest.raises(ValueError, match="per-layer 'shape'"):
        description.shapes(m)


@pytest.mark.parametrize("n,k,s,p,ceil,expected", [
    (6, 3, 2, 1, False, 3),   # (6 + 2 - 3) // 2 + 1
    (6, 3, 2, 1, True, 4),    # ceil(5 / 2) + 1; the last window starts at 6 < 7
    (5, 2, 2, 0, True, 3),    # MaxPool2d(2, 2, ceil_mode=True) on 5
    (3, 2, 2, 1, True, 2),    # a third window would start in the right padding
])
def test_pool_sizes_follow_pytorch(n, k, s, p, ceil, expected) -> None:
    assert description.pool_dim(n, k, s, p, ceil) == expected


def test_inputs_default_to_the_previous_layer() -> None:
    m = {"layers": [{"op": "relu"}, {"op": "relu"}, {"op": "concat", "inputs": [0, 1]}]}
    assert description.layer_inputs(m, 0) == [-1]
    assert description.layer_inputs(m, 1) == [0]
    assert description.layer_inputs(m, 2) == [0, 1]
