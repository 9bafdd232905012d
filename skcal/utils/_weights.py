"""The one sample-weight policy of skcal's calibrators: the weight of one row.

A fit that holds a *prior* counted in rows (Platt's target smoothing, the
histogram's smoothing, scaling-binning, BBQ's and the spline's bin counts,
Venn-Abers' pseudo-rows, matrix scaling's ``"sms"`` penalty ``lambda k / n``)
counts those rows in units of :func:`weight_unit`, a function of the weights
alone. So integer weights (of greatest common divisor 1) fit exactly like
repeated rows, and multiplying all weights by a constant changes nothing, for
every calibrator. Documented once in the user guide (:ref:`sample-weights`).
"""

import math
from fractions import Fraction

import numpy as np

from .._backend._array import to_numpy

__all__ = ["weight_unit", "weighted_rows"]

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


def weight_unit(w):
    """The weight of one row, in which a calibrator's prior counts its rows.

    Parameters
    ----------
    w : ndarray of shape (n_samples,) or None
        Non-negative sample weights (None: all 1).

    Returns
    -------
    unit : float > 0
        The prior's pseudo-counts are multiplied by it (equivalently, its
        weighted counts are divided by it): 1 without weights; ``c`` for
        weights proportional to whole numbers of greatest common divisor 1,
        ``w_i = c m_i`` (up to a relative rounding of ``64 eps``, ratios of
        denominator at most ``2**16``); otherwise the mean positive weight.

    Notes
    -----
    Two promises fix the unit: integer weights fit like repeated rows, and
    multiplying all weights by a constant changes nothing. Integer weights
    ``m_i`` with a common factor ``d`` are both ``d`` times the weights
    ``m_i / d`` and the rows repeated ``m_i`` times, so the two promises
    cannot both hold for them with unweighted data counting its rows; skcal
    keeps "unweighted data count their rows" (an unweighted data set with
    ties is never read as copies of a smaller one, which would make the
    prior of, e.g., constant scores depend on the gcd of the class counts)
    and reads such weights as ``m_i / d``. So:

    - weights ``w_i = c m_i`` with whole ``m_i`` of gcd 1 stand for the
      data set repeating row ``i`` ``m_i`` times: one row weighs ``c``
      (integer weights with a weight-1 row, or two coprime weights: 1, as
      scikit-learn counts Platt's prior in weighted sums);
    - other weights count one row per row of positive weight: one row
      weighs their mean.

    Both rules are invariant to the row order and to multiplying the
    weights by a constant. See :ref:`sample-weights`.
    """
    if w is None:
        return 1.0
    w = np.asarray(w, dtype=np.float64)
    wk = w[w > 0]
    if wk.size == 0:
        return 1.0
    vals = np.unique(wk)
    found = _whole_multiples(vals)
    if found is None:
        return float(wk.sum()) / wk.size
    return found[0]


def weighted_rows(w, n):
    """The number of rows that the weights ``w`` stand for: ``sum(w) / weight_unit(w)``.

    Parameters
    ----------
    w : ndarray or torch.Tensor of shape (n_samples,), or None
        Non-negative sample weights (None: all 1).
    n : int
        The number of rows.

    Returns
    -------
    float
        ``n`` without weights; otherwise the summed weights in units of one
        row (:func:`weight_unit`): integer weights count as repeated rows, and
        multiplying all weights by a constant changes nothing.
    """
    if w is None:
        return float(n)
    w = np.asarray(to_numpy(w), dtype=np.float64)
    return float(w.sum()) / weight_unit(w)
