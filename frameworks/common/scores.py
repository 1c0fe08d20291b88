"""Training accuracy as a framework's own loop counts it (engines' `fit`):
the correct predictions of one batch, on the host."""
from __future__ import annotations

from typing import Tuple

import numpy as np


def correct(out: np.ndarray, labels: np.ndarray, bce: bool) -> Tuple[int, int]:
    """(correct, counted) for logits `out` against `labels`: the sign of a
    binary logit, else the arg-max over the last axis (every position of a
    sequence output counts)."""
    y = labels.reshape(-1)
    if bce:
        hit = (out.reshape(-1) > 0) == (y > 0.5)
    else:
        hit = out.reshape(-1, out.shape[-1]).argmax(axis=1) == y.astype(np.int64)
    return int(hit.sum()), int(y.size)
