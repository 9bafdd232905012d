"""Weighted binning of 1-D scores, shared by the histogram, scaling-binning and BBQ calibrators.

Every rule here depends on the data only through the distinct scores and
their summed weights, so integer sample weights bin exactly like repeated
rows, and the row order never matters. The unit of weight in which the
per-class methods count their priors is :func:`skcal.utils._weights.weight_unit`.
"""

import numpy as np
from scipy.special import logit

__all__ = ["bin_sums", "distinct_scores", "equal_mass_cuts", "cut_edges", "uniform_edges",
           "unique_scores"]


def unique_scores(s, w):
    """Sorted distinct scores of the rows of positive weight (``w`` None: all rows)."""
    return np.unique(s if w is None else s[w > 0])


def distinct_scores(s, t, w):
    """Distinct scores of the rows of positive weight with their weight sums.

    Parameters
    ----------
    s : ndarray of shape (n,), float64
    t : ndarray of shape (n,), bool or float in [0, 1]
    w : ndarray of shape (n,) or None

    Returns
    -------
    u : ndarray of shape (k,)
        Sorted distinct scores (rows of weight 0 are dropped).
    W, Y : ndarray of shape (k,)
        Summed weights and summed ``w * t`` per distinct score.
    """
    s = np.asarray(s, dtype=np.float64)
    if w is None and np.asarray(t).dtype == bool:
        # unweighted labels: counts of all rows and of the positives per
        # distinct score, by two sorts (no argsort of all rows)
        t = np.asarray(t)
        u, cnt = np.unique(s, return_counts=True)
        up, cp = np.unique(s[t], return_counts=True)
        Y = np.zeros(u.size)
        Y[np.searchsorted(u, up)] = cp
        return u, cnt.astype(np.float64), Y
    t = np.asarray(t, dtype=np.float64)
    if w is None:
        w = np.ones_like(s)
    else:
        keep = w > 0
        s, t, w = s[keep], t[keep], np.asarray(w, np.float64)[keep]
    u, inv = np.unique(s, return_inverse=True)
    W = np.bincount(inv, weights=w, minlength=u.size)
    Y = np.bincount(inv, weights=w * t, minlength=u.size)
    return u, W, Y


def equal_mass_cuts(W, n_bins, cum=None):
    """Cut positions of weighted equal-mass bins over distinct scores.

    Parameters
    ----------
    W : ndarray of shape (k,)
        Weights of the sorted distinct scores.
    n_bins : int
    cum : ndarray of shape (k,), default=None
        ``np.cumsum(W)``, when the caller has it (BBQ cuts many binnings).

    Returns
    -------
    cuts : ndarray of int
        Increasing indices ``j``: a bin ends after distinct score ``j``. Bin
        ``b`` closes at the first distinct score whose cumulative weight
        reaches ``b / n_bins`` of the total (``b = 1 .. n_bins - 1``), up to a
        relative rounding tolerance of ``1e-10`` (so weights divided by a
        constant cut where repeated rows do); a tied score is never split, so
        heavy ties merge bins (fewer than ``n_bins`` bins, none empty).
    """
    cum = np.cumsum(W) if cum is None else cum
    targets = cum[-1] * (np.arange(1, n_bins) / n_bins - 1e-10)
    j = np.searchsorted(cum, targets, side="left")
    return np.unique(j[j < W.size - 1])  # (at most n_bins - 1 entries)


def cut_edges(u, cuts):
    """Edges between distinct scores: the midpoint of ``u[j]`` and ``u[j + 1]``.

    A midpoint that rounds to ``u[j]`` is replaced by ``u[j + 1]``, so every
    calibration score stays in its bin under the rule "a score equal to an
    edge belongs to the bin above".
    """
    lo, hi = u[cuts], u[cuts + 1]
    mid = lo + (hi - lo) / 2.0
    return np.where(mid > lo, mid, hi)


def bin_sums(u, edges, *values):
    """Sums of each of ``values`` (one entry per score ``u``) over the bins of ``edges``.

    A score equal to an edge is in the bin above. Returns one array of
    ``len(edges) + 1`` sums per entry of ``values``.
    """
    b = np.searchsorted(edges, u, side="right")
    return [np.bincount(b, weights=v, minlength=edges.size + 1) for v in values]


def uniform_edges(n_bins):
    """Equal-width bins of the probability ``sigmoid(s)`` on [0, 1], as log-odds edges.

    Returns ``logit(b / n_bins)`` for ``b = 1 .. n_bins - 1``.
    """
    return logit(np.arange(1, n_bins) / n_bins)
