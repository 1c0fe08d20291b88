"""frameworks/common/scores.py: the training accuracy a framework loop
counts, against counts made by hand."""
from __future__ import annotations

import numpy as np

import scores


def test_arg_max_over_classes_and_sequence_positions() -> None:
    out = np.array([[0.1, 0.9, 0.0], [2.0, 1.0, 0.5], [0.0, 0.0, 3.0]],
                   dtype=np.float32)
    # predictions 1, 0, 2 against 1, 2, 2: two right of three
    assert scores.correct(out, np.array([1, 2, 2]), False) == (2, 3)
    # a sequence output [N, T, C] counts every position
    seq = out.reshape(1, 3, 3)
    assert scores.correct(seq, np.array([[1, 0, 0]]), False) == (2, 3)


def test_binary_logits_by_their_sign() -> None:
    out = np.array([[1.5], [-0.2], [0.3], [-4.0]], dtype=np.float32)
    labels = np.array([[1.0], [1.0], [0.0], [0.0]], dtype=np.float32)
    assert scores.correct(out, labels, True) == (2, 4)
