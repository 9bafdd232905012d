"""Weighted binning of 1-D scores, shared by the histogram, scaling-binning and BBQ calibrators.

Every rule here depends on the data only through the distinct scores and
their summed weights, so integer sample weights bin exactly like repeated
rows, and the row order never matters. :func:`weight_unit` gives the unit of
weight in which the per-class methods count their priors (see there).
"""

import math
from fractions import Fraction

import numpy as np
from scipy.special import logit

__all__ = ["distinct_scores", "equal_mass_cuts", "cut_edges", "uniform_edges",
           "weight_unit"]

#: Largest denominator of a weight ratio read as a ratio of whole numbers.
_MAX_DEN = 1 << 16
#: Relative tolerance of "a whole number" (a few float64 roundings).
_RTOL = 64 * np.finfo(np.float64).eps


def _whole_multiples(vals):
    """``(g, m)`` with ``vals ~= m * g``, ``m`` int64 of gcd 1, or None.

    ``vals``: sorted distinct positive floats. Each ratio ``vals / vals[0]``
    must be within ``_RTOL`` (relative) of a fraction of denominator at most
    ``_MAX_DEN`` (found by continued fractions), and their common
    denominator at most ``_MAX_DEN``. Weights of random floats pass with
    probability about ``_RTOL * _MAX_DEN**2 ~ 6e-5`` per distinct value.
    """
    rho = vals / vals[0]
    L = 1
    while True:
        x = rho * L
        if x[-1] > 2.0 ** 52:
            return None
        m = np.rint(x)
        bad = np.abs(x - m) > _RTOL * x
        if not bad.any():
            m = m.astype(np.int64)
            d = int(np.gcd.reduce(m))
            return float(vals[0]) / L * d, m // d
        r = float(rho[int(np.argmax(bad))])
        fr = Fraction(r).limit_denominator(_MAX_DEN)
        if abs(fr.numerator / fr.denominator - r) > _RTOL * r:
            return None
        L = math.lcm(L, fr.denominator)
        if L > _MAX_DEN:
            return None


def weight_unit(s, t, w, n_distinct=None):
    """The weight of one row, in which the per-class priors count.

    Parameters
    ----------
    s : ndarray of shape (n,), float64
        Scores.
    t : ndarray of shape (n,), bool
        Labels of the class.
    w : ndarray of shape (n,) or None
        Non-negative sample weights (None: all 1).
    n_distinct : int, default=None
        The number of distinct scores, when the caller has it: unweighted
        scores that are all distinct have unit 1 without another sort.

    Returns
    -------
    unit : float > 0
        The prior's pseudo-counts are multiplied by it (equivalently, the
        data's weights are divided by it).

    Notes
    -----
    Two promises fix the unit: integer weights fit like repeated rows, and
    multiplying all weights by a constant changes nothing. Together (and
    with "unit weights fit like no weights") they imply that an unweighted
    data set and its exact copy ``k`` times fit alike, and since copying is
    not continuous in the weights, no rule continuous in the weights can keep
    the promises and still count the rows of unweighted data with ties.
    skcal keeps both promises and counts rows wherever the weights allow it:

    - weights proportional to whole numbers ``m_i`` (``w_i = c m_i``, up to
      rounding, see :func:`_whole_multiples`) stand for the data set
      repeating row ``i`` ``m_i`` times, and the unit is ``c d``, ``d`` the
      greatest common divisor of the totals ``sum m_i`` of the distinct
      (score, label) pairs: the row of the smallest unweighted data set
      whose copies give those totals. Unweighted data and integer weights
      get ``d = 1`` unless all those totals share a factor (the data are
      then an exact copy of a smaller set);
    - other weights count one row per row of positive weight: the unit is
      their mean (as Platt's target smoothing, :class:`skcal.PlattScaler`).

    Both rules are invariant to the row order and to multiplying the
    weights by a constant, and integer weights give exactly the totals of
    the repeated rows.
    """
    s = np.asarray(s, dtype=np.float64)
    t = np.asarray(t, dtype=bool)
    if w is None:
        if n_distinct is not None and n_distinct == s.size:
            return 1.0
        m = None
        g = 1.0
    else:
        w = np.asarray(w, dtype=np.float64)
        keep = w > 0
        s, t, w = s[keep], t[keep], w[keep]
        if w.size == 0:
            return 1.0
        vals = np.unique(w)
        found = _whole_multiples(vals)
        if found is None:
            return float(w.sum()) / w.size
        g, mv = found
        m = mv[np.searchsorted(vals, w)].astype(np.float64)
    if s.size == 0:
        return g
    _, inv = np.unique(s, return_inverse=True)
    key = 2 * inv.ravel() + t
    tot = np.bincount(key, weights=m)
    tot = tot[tot > 0]
    if tot.max() > 2.0 ** 52:
        return g
    return g * int(np.gcd.reduce(tot.astype(np.int64)))


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
    j = j[j < W.size - 1]
    # non-decreasing (increasing targets): drop repeats, as np.unique without its sort
    if j.size > 1:
        j = j[np.concatenate([[True], j[1:] != j[:-1]])]
    return j


def cut_edges(u, cuts):
    """Edges between distinct scores: the midpoint of ``u[j]`` and ``u[j + 1]``.

    A midpoint that rounds to ``u[j]`` is replaced by ``u[j + 1]``, so every
    calibration score stays in its bin under the rule "a score equal to an
    edge belongs to the bin above".
    """
    lo, hi = u[cuts], u[cuts + 1]
    mid = lo + (hi - lo) / 2.0
    return np.where(mid > lo, mid, hi)


def uniform_edges(n_bins):
    """Equal-width bins of the probability ``sigmoid(s)`` on [0, 1], as log-odds edges.

    Returns ``logit(b / n_bins)`` for ``b = 1 .. n_bins - 1``.
    """
    return logit(np.arange(1, n_bins) / n_bins)
