#!/usr/bin/python3
"""nnbench's comparison statistics against SciPy, computed independently.

Usage: scipy_oracle.py STATS_PROBE. Random samples (continuous, tied,
small and large) go to the probe; its Mann-Whitney U and p-value, its
order-statistic quantile intervals and its bootstrap interval of a ratio of
medians are checked against scipy.stats. Exit 0 when all agree.
"""
import json
import subprocess
import sys

import numpy as np
from scipy import stats


def quantile_ci(x, q, level=0.95):
    """Ranks from Binomial(n, q), written from the definition."""
    s = np.sort(x)
    n = len(s)
    tail = (1 - level) / 2
    cdf = stats.binom.cdf(np.arange(n + 1), n, q)  # cdf[j] = P(B <= j)
    lower = max([k for k in range(1, n + 1) if cdf[k - 1] <= tail], default=1)
    uppers = [k for k in range(lower, n + 1) if 1 - cdf[k - 1] <= tail]
    upper = min(uppers) if uppers else n
    return s[lower - 1], s[upper - 1], max(0.0, cdf[upper - 1] - cdf[lower - 1])


def main():
    rng = np.random.default_rng(20261125)
    cases = []
    for i in range(60):
        n1, n2 = int(rng.integers(3, 80)), int(rng.integers(3, 80))
        a = rng.lognormal(0, 0.3, n1)
        b = rng.lognormal(rng.choice([0, 0.05, 0.3]), 0.3, n2)
        if i % 3 == 0:  # ties: timer resolution
            a, b = np.round(a, 1), np.round(b, 1)
        q = [0.5, 0.9, 0.99, 0.1][i % 4]
        cases.append({"a": a.tolist(), "b": b.tolist(), "q": q,
                      "resamples": 20000})
    out = json.loads(subprocess.run([sys.argv[1]], input=json.dumps(cases),
                                    capture_output=True, text=True,
                                    check=True).stdout)
    failures = 0

    def check(ok, what):
        nonlocal failures
        if not ok:
            failures += 1
            print("MISMATCH", what)

    for i, (c, o) in enumerate(zip(cases, out)):
        a, b = np.array(c["a"]), np.array(c["b"])
        mw = stats.mannwhitneyu(a, b, alternative="two-sided",
                                method="asymptotic", use_continuity=True)
        check(abs(o["u"] - mw.statistic) < 1e-9, f"{i} U {o['u']} {mw.statistic}")
        check(abs(o["p"] - mw.pvalue) <= 1e-9 + 1e-7 * mw.pvalue,
              f"{i} p {o['p']} {mw.pvalue}")
        lo, hi, cov = quantile_ci(a, c["q"])
        check(o["quantile_ci"][0] == lo and o["quantile_ci"][1] == hi,
              f"{i} quantile_ci q={c['q']} {o['quantile_ci']} {lo} {hi}")
        check(abs(o["quantile_ci"][2] - cov) < 1e-9,
              f"{i} coverage {o['quantile_ci'][2]} {cov}")
        if len(a) >= 20 and len(b) >= 20 and i % 3 != 0:
            boot = stats.bootstrap(
                (a, b), lambda x, y: np.median(y) / np.median(x),
                vectorized=False, paired=False, method="percentile",
                n_resamples=20000, confidence_level=0.95,
                random_state=np.random.default_rng(i))
            ci = boot.confidence_interval
            ratio = np.median(b) / np.median(a)
            # Two Monte Carlo estimates of the same percentiles.
            for mine, theirs in zip(o["median_ratio_ci"], (ci.low, ci.high)):
                check(abs(mine - theirs) <= 0.03 * ratio,
                      f"{i} bootstrap {o['median_ratio_ci']} {ci}")
    print(f"{len(cases)} cases, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
