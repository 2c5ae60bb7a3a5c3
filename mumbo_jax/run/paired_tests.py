"""Paired tests of two strategies' per-seed outcomes (the protocol's statistics): the
Wilcoxon signed-rank p-value with its method fixed across scipy releases, and Holm's
step-down adjustment of a family of p-values."""

from __future__ import annotations

import numpy as np

__all__ = ["wilcoxon_p", "holm_adjust"]


def wilcoxon_p(d) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of paired differences ``d [n]``,
    with the method chosen explicitly as scipy >= 1.15 chooses it for ``method="auto"``:
    the exact null distribution for n <= 50 without ties or zeros, else the normal
    approximation with the tie correction (a permutation test for n <= 13 with ties).
    Older scipy chose the exact distribution despite ties, so p-values (and the committed
    tables' verdicts) would depend on the installed release."""
    from scipy import stats

    d = np.asarray(d, float)
    nonzero = np.abs(d[d != 0])
    ties = len(np.unique(nonzero)) < len(nonzero)
    if len(d) <= 50 and not ties and len(nonzero) == len(d):
        method = "exact"
    elif len(d) <= 50 and len(d) <= 13:
        method = stats.PermutationMethod()
    else:
        method = "asymptotic"
    try:
        return float(stats.wilcoxon(d, method=method).pvalue)
    except ValueError:  # scipy < 1.15 names the normal approximation "approx"
        return float(stats.wilcoxon(d, method="approx").pvalue)


def holm_adjust(p_values) -> list:
    """Holm's step-down adjustment of a family of p-values (Holm 1979).

    With the m available p-values sorted, p_(1) <= ... <= p_(m), the adjusted value of
    the j-th smallest is ``max_{i <= j} min(1, (m - i + 1) p_(i))``; rejecting where the
    adjusted value is below alpha controls the family-wise error rate at alpha.

    Args:
        p_values: a sequence of floats in [0, 1] or ``None`` (no test: every pair tied);
            ``None`` entries are not counted in m and come back as ``None``.

    Returns:
        a list of the same length: adjusted p-values (>= the raw ones, <= 1) or ``None``.
    """
    p = list(p_values)
    idx = [i for i, v in enumerate(p) if v is not None]
    vals = np.asarray([p[i] for i in idx], float)
    if np.any(~np.isfinite(vals)) or np.any((vals < 0) | (vals > 1)):
        raise ValueError(f"p-values must lie in [0, 1] (or be None); got {p}")
    out = [None] * len(p)
    if not idx:
        return out
    m = vals.size
    order = np.argsort(vals, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * vals[order])
    adjusted = np.maximum.accumulate(scaled)  # step-down: never below an earlier rejection's
    for rank, j in enumerate(order):
        out[idx[j]] = float(adjusted[rank])
    return out
