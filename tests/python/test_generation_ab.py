"""perf/peers/generation_ab.py's interval for the median of its rounds'
ratios, against the ranks of published tables (Conover, Practical
Nonparametric Statistics: the 95 % interval of a median from n
observations lies between the order statistics of ranks k+1 and n-k)."""
from __future__ import annotations

import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "perf", "peers"))
from generation_ab import median_interval


def test_median_interval_is_between_the_tables_ranks() -> None:
    # shuffled, so that the function must sort
    ten = [0.97, 1.04, 0.99, 1.01, 0.95, 1.08, 1.00, 1.02, 0.98, 1.03]
    # n = 10: ranks 2 and 9 (1-based): 0.97 and 1.04 of the sorted list
    assert median_interval(ten) == (0.97, 1.04)
    forty = [1 + (i * 7 % 40) / 1000 for i in range(40)]  # 1.000 .. 1.039, shuffled
    # n = 40: ranks 14 and 27
    assert median_interval(forty) == (1.013, 1.026)


def test_too_few_rounds_give_no_interval() -> None:
    # n = 5: even the extremes cover the median with only 1 - 2/32 = 93.75 %
    assert median_interval([1.0, 1.1, 0.9, 1.2, 0.8]) is None
    # n = 6: the extremes, 1 - 2/64 = 96.9 %
    assert median_interval([1.0, 1.1, 0.9, 1.2, 0.8, 1.3]) == (0.8, 1.3)
