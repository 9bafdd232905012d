"""The one sample-weight policy of skcal's calibrators: the weight of one row.

A fit that holds a *prior* counted in rows (Platt's target smoothing, the
histogram's smoothing, scaling-binning, BBQ's and the spline's bin counts,
Venn-Abers' pseudo-rows, matrix scaling's ``"sms"`` penalty ``lambda k / n``)
counts those rows in units of :func:`weight_unit`, a function of the weights
alone. So integer weights (of greatest common divisor 1) fit exactly like
repeated rows, weights with a fractional part count one row per row, and
multiplying all weights by a constant changes nothing (but for whole-number
weights with counts above 16, scaled by a fraction), for every calibrator.
Documented once in the user guide (:ref:`sample-weights`).
"""

import math
from fractions import Fraction

import numpy as np

from .._backend._array import to_numpy

__all__ = ["is_whole_number_weights", "weight_unit", "weighted_rows"]

#: Relative tolerance of "a whole number" (a few float64 roundings).
_RTOL = 64 * np.finfo(np.float64).eps
#: Largest repetition count read in weights that are not whole numbers
#: themselves (``c m_i`` for a fractional ``c``): it bounds the factor by
#: which such a reading can multiply the rows.
MAX_SCALED_COUNT = 16
#: Largest whole-number weight read as a count (exact in float64).
_MAX_WHOLE = 2.0 ** 53


def is_whole_number_weights(w):
    """Whether the non-negative float64 weights ``w`` are all whole numbers (at most ``2**53``)."""
    return bool(np.all(w == np.rint(w))) and float(w.max(initial=0.0)) <= _MAX_WHOLE


def _scaled_counts(vals):
    """``c`` with ``vals ~= c m``, ``m`` whole of gcd 1 and ``max m <= MAX_SCALED_COUNT``; or None.

    ``vals``: sorted distinct positive floats. Each ratio ``vals / vals[0]``
    must be within ``_RTOL`` (relative) of a fraction (found by continued
    fractions) whose denominator keeps the counts within the bound.
    """
    if vals[-1] / vals[0] > MAX_SCALED_COUNT:
        return None
    rho = vals / vals[0]
    L = 1
    while L <= MAX_SCALED_COUNT:
        x = rho * L
        m = np.rint(x)
        bad = np.abs(x - m) > _RTOL * x
        if not bad.any():
            m = m.astype(np.int64)
            d = int(np.gcd.reduce(m))
            return float(vals[0]) / L * d if m[-1] // d <= MAX_SCALED_COUNT else None
        r = float(rho[int(np.argmax(bad))])
        fr = Fraction(r).limit_denominator(MAX_SCALED_COUNT)
        if abs(fr.numerator / fr.denominator - r) > _RTOL * r:
            return None
        L = math.lcm(L, fr.denominator)
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
        weighted counts are divided by it): 1 without weights; the greatest
        common divisor of whole-number weights; ``c`` for other weights
        ``w_i = c m_i`` with whole ``m_i`` of gcd 1 and at most
        :data:`MAX_SCALED_COUNT` (up to a relative rounding of ``64 eps``);
        otherwise the mean positive weight.

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

    - whole-number weights ``m_i`` (any size up to ``2**53``) stand for the
      data set repeating row ``i`` ``m_i / d`` times, ``d`` their gcd
      (integer weights with a weight-1 row count their weighted sums, as
      scikit-learn counts Platt's prior);
    - other weights ``w_i = c m_i``, whole ``m_i <= 16`` of gcd 1 (integer
      weights scaled, e.g. normalised to sum to 1), stand for the same
      repeated rows: one row weighs ``c``;
    - all other weights count one row per row of positive weight: one row
      weighs their mean. Class-balanced weights ``n / (K n_k)``, importance
      weights, or weights of 1 with one of them changed to 1.001 or 0.001
      are such weights: reading them as copies of a fine common step (1000
      and 1001 copies) would make every prior vanish.

    The bound makes the rule not invariant to a fractional scale of
    whole-number weights with counts above 16 (weights 1 and 20 count 21
    rows, weights 0.05 and 1 count 2); every other rule is invariant to the
    row order and to multiplying the weights by a constant. The fits see the
    weights through :func:`skcal.utils.validation.check_sample_weight`
    (``relative=True``), which keeps whole numbers as they are. See
    :ref:`sample-weights`.
    """
    if w is None:
        return 1.0
    w = np.asarray(w, dtype=np.float64)
    wk = w[w > 0]
    if wk.size == 0:
        return 1.0
    if is_whole_number_weights(wk):
        return float(np.gcd.reduce(wk.astype(np.int64)))
    found = _scaled_counts(np.unique(wk))
    if found is not None:
        return found
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
