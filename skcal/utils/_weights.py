"""The one sample-weight policy of skcal's calibrators: the weight of one row.

Every calibrator's objective is a weighted sum or mean over rows, so integer
sample weights fit like repeated rows and, where the objective is a weighted
mean, multiplying all weights by a constant changes nothing. A fit that also
holds a *prior* counted in rows -- Platt's target smoothing (Platt, histogram
smoothing, scaling-binning), BBQ's and the spline's bin counts, Venn-Abers'
pseudo-rows, matrix scaling's ``"sms"`` penalty ``lambda k / n`` -- counts
those rows in units of :func:`weight_unit`, the weight of one row. With it
both promises hold for every calibrator: integer weights fit exactly like
repeated rows, and multiplying all weights by a constant changes nothing.

The rule is written once, here, and documented once in the user guide
(:ref:`sample-weights`); every calibrator with a prior calls this module.
"""

import math
from fractions import Fraction

import numpy as np

__all__ = ["weight_unit"]

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


def _extreme_total_is_one(s, t, m):
    """Whether the (score, label) pair of the largest or smallest score totals 1 row.

    An O(n) sufficient test for "the gcd of the totals is 1" (``m``: whole
    multiples of the unit per row, None: 1 each), which holds for almost
    all data with continuous scores and spares the sort of all rows.
    """
    c = s if s.ndim == 1 else s[:, 0]  # rows equal in column 0 contain the equal rows
    for i in (int(np.argmax(c)), int(np.argmin(c))):
        same = (c == c[i]) & (t == t[i])
        tot = np.count_nonzero(same) if m is None else float(m[same].sum())
        if tot == 1:
            return True
    return False


def weight_unit(s, t, w, n_distinct=None):
    """The weight of one row, in which a calibrator's prior counts its rows.

    Parameters
    ----------
    s : ndarray of shape (n,) or (n, k), float
        Scores (a per-class method's 1-D scores) or rows of logits (a
        whole-vector method): the rows that are compared for equality.
    t : ndarray of shape (n,), bool or int
        Labels of the rows.
    w : ndarray of shape (n,) or None
        Non-negative sample weights (None: all 1).
    n_distinct : int, default=None
        The number of distinct scores, when the caller has it: unweighted
        scores that are all distinct have unit 1 without another pass.

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
      a relative rounding of ``64 eps``, ratios of denominator at most
      ``2**16``) stand for the data set repeating row ``i`` ``m_i`` times,
      and the unit is ``c d``, ``d`` the greatest common divisor of the
      totals ``sum m_i`` of the distinct (row, label) pairs: the row of the
      smallest unweighted data set whose copies give those totals.
      Unweighted data and integer weights get ``d = 1`` unless all those
      totals share a factor (the data are then an exact copy of a smaller
      set);
    - other weights count one row per row of positive weight: the unit is
      their mean.

    Both rules are invariant to the row order and to multiplying the
    weights by a constant, and integer weights give exactly the totals of
    the repeated rows. See :ref:`sample-weights`.
    """
    s = np.asarray(s)
    t = np.asarray(t)
    if w is None:
        if n_distinct is not None and n_distinct == s.shape[0]:
            return 1.0
        return _unit_of(s, t, None, 1.0, None)
    keep, g, m = _weight_multiples(w)
    if m is None:
        return g
    return _unit_of(s[keep], t[keep], keep, g, m)


def class_weight_units(blocks, y, w):
    """:func:`weight_unit` of every one-vs-rest class, from blocks of score columns.

    Parameters
    ----------
    blocks : iterable of (c0, c1, S)
        ``S`` of shape (c1 - c0, n): the scores of classes ``c0 .. c1 - 1``
        (as :func:`skcal._backend._ovr.ovr_score_blocks` yields them).
    y : ndarray of shape (n,), int
        Encoded labels; class ``k``'s rows are ``y == k``.
    w : ndarray of shape (n,) or None
        Non-negative sample weights.

    Returns
    -------
    units : ndarray of shape (n_classes,), float64
        ``weight_unit(S[k], y == k, w)`` per class (the weights are read once).
    """
    y = np.asarray(y)
    if w is None:
        keep, g, m = None, 1.0, None
    else:
        keep, g, m = _weight_multiples(w)
        yk = y[keep]
    units = []
    for c0, c1, S in blocks:
        for k in range(c0, c1):
            s = np.asarray(S[k - c0])
            if w is None:
                units.append(_unit_of(s, y == k, None, 1.0, None))
            elif m is None:
                units.append(g)
            else:
                units.append(_unit_of(s[keep], yk == k, keep, g, m))
    return np.asarray(units, dtype=np.float64)


def _weight_multiples(w):
    """``(keep, g, m)``: rows of positive weight, and ``w[keep] = g * m`` with ``m`` whole.

    ``m`` is None when the weights are not proportional to whole numbers;
    then ``g`` is already the unit (the mean positive weight).
    """
    w = np.asarray(w, dtype=np.float64)
    keep = w > 0
    wk = w[keep]
    if wk.size == 0:
        return keep, 1.0, None
    vals = np.unique(wk)
    found = _whole_multiples(vals)
    if found is None:
        return keep, float(wk.sum()) / wk.size, None
    g, mv = found
    return keep, g, mv[np.searchsorted(vals, wk)].astype(np.float64)


def _unit_of(s, t, keep, g, m):
    """``g`` times the gcd of the totals of ``m`` over the distinct (row, label) pairs."""
    if s.shape[0] == 0:
        return g
    if _extreme_total_is_one(s, t, m):
        return g
    if s.ndim == 1:
        _, inv = np.unique(s, return_inverse=True)
    else:
        _, inv = np.unique(np.ascontiguousarray(s).reshape(s.shape[0], -1), axis=0,
                           return_inverse=True)
    _, lab = np.unique(t, return_inverse=True)
    key = inv.ravel().astype(np.int64) * (int(lab.max()) + 1) + lab.ravel()
    tot = np.bincount(key, weights=m)
    tot = tot[tot > 0]
    if tot.max() > 2.0 ** 52:
        return g
    return g * int(np.gcd.reduce(tot.astype(np.int64)))
