"""The one sample-weight policy of skcal's calibrators: the weight of one row.

A fit that holds a *prior* counted in rows (Platt's target smoothing, the
histogram's smoothing, scaling-binning, BBQ's and the spline's bin counts,
Venn-Abers' pseudo-rows, matrix scaling's ``"sms"`` penalty ``lambda k / n``)
counts those rows in units of :func:`weight_unit`, a function of the weights
alone. So integer weights (of greatest common divisor 1) fit exactly like
repeated rows, weights with a fractional part count one row per row, and
multiplying all weights by a constant changes nothing (but for whole-number
weights without a weight-1 row, scaled by a fraction), for every calibrator.
Documented once in the user guide (:ref:`sample-weights`).
"""

import numpy as np

from .._backend._array import to_numpy

__all__ = ["weight_unit", "weighted_rows"]

#: Relative tolerance of "a whole number" (a few float64 roundings).
_RTOL = 64 * np.finfo(np.float64).eps


def _whole(x):
    """Whether every entry of ``x`` (positive floats) is a whole number up to ``_RTOL``."""
    return bool(np.all(np.abs(x - np.rint(x)) <= _RTOL * x))


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
        weighted counts are divided by it): 1 without weights; the smallest
        positive weight ``c`` when every weight is a whole multiple of it
        (``w_i = c m_i``, whole ``m_i``, up to a relative rounding of
        ``64 eps``); for other whole-number weights their greatest common
        divisor; otherwise the mean positive weight.

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

    - weights ``w_i = c m_i`` with whole ``m_i`` and ``min m_i = 1`` (integer
      weights with a weight-1 row, the same normalised to sum to 1, ...)
      stand for the data set repeating row ``i`` ``m_i`` times: one row
      weighs ``c``, as scikit-learn counts Platt's prior in weighted sums;
    - other whole-number weights (e.g. 2 and 3) stand for the rows repeated
      ``m_i / d`` times, ``d`` their gcd;
    - all other weights count one row per row of positive weight: one row
      weighs their mean. Class-balanced weights ``n / (K n_k)`` or any
      weights with a fractional part are such weights, however they round:
      a weight-1 set with one weight changed to 1.001 still counts its rows
      (reading it as 1000 and 1001 copies would make every prior vanish).

    Both the first and the last rule are invariant to the row order and to
    multiplying the weights by a constant; the middle one is not invariant
    to a fractional scale (weights 2 and 3 count 5 rows, weights 1 and 1.5
    count 2). See :ref:`sample-weights`.
    """
    if w is None:
        return 1.0
    w = np.asarray(w, dtype=np.float64)
    wk = w[w > 0]
    if wk.size == 0:
        return 1.0
    lo = float(wk.min())
    if _whole(wk / lo):
        return lo
    if _whole(wk) and float(wk.max()) <= 2.0 ** 53:
        return float(np.gcd.reduce(np.rint(wk).astype(np.int64)))
    return float(wk.sum()) / wk.size


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
