"""Binomial proportion intervals (the per-bin intervals of a reliability curve).

A leaf of :mod:`skcal.metrics` (imports only :mod:`._params`), used by
:func:`~skcal.metrics.reliability_curve` and re-exported by
:mod:`skcal.metrics._intervals`.
"""

import numpy as np
import scipy.stats
from scipy.special import ndtri
from sklearn.utils._param_validation import StrOptions

from ._params import validated

__all__ = ["binomial_interval"]

_BINOMIAL = ("clopper-pearson", "wilson", "jeffreys")

@validated("confidence_level", method=[StrOptions(set(_BINOMIAL))])
def binomial_interval(successes, trials, *, confidence_level=0.95,
                      method="clopper-pearson"):
    """Two-sided confidence interval of a binomial proportion.

    Parameters
    ----------
    successes : array-like of float
        Number of successes :math:`k` (may be non-integer: sums of frequency
        weights).
    trials : array-like of float
        Number of trials :math:`n \\ge k`, broadcast with ``successes``;
        entries with ``trials == 0`` give NaN.
    confidence_level : float, default=0.95
        Coverage, in (0, 1).
    method : {"clopper-pearson", "wilson", "jeffreys"}, default="clopper-pearson"
        ``"clopper-pearson"``: the exact interval from beta quantiles,
        conservative; ``"wilson"``: the score interval; ``"jeffreys"``: the
        equal-tailed interval of the Beta(1/2, 1/2) posterior (with the
        Clopper-Pearson end 0 or 1 kept at ``k = 0`` or ``k = n``, as in
        Brown, Cai and DasGupta). All three have positive width when
        ``k = 0`` or ``k = n``, where a percentile bootstrap collapses to a
        point.

    Returns
    -------
    low, high : ndarray of float
        The interval ends, in [0, 1].

    Raises
    ------
    ValueError
        For an unknown method, a level outside (0, 1), negative counts or
        ``successes > trials``.

    Notes
    -----
    With :math:`\\alpha = 1 - \\text{confidence\\_level}` and
    :math:`z = \\Phi^{-1}(1 - \\alpha/2)`:

    - Clopper-Pearson: :math:`[B^{-1}(\\alpha/2; k, n-k+1),
      B^{-1}(1-\\alpha/2; k+1, n-k)]`;
    - Jeffreys: :math:`B^{-1}(\\cdot; k + 1/2, n - k + 1/2)` at the same levels;
    - Wilson: :math:`\\frac{k + z^2/2}{n + z^2} \\pm \\frac{z}{n + z^2}
      \\sqrt{k(n-k)/n + z^2/4}`.

    For integer counts Clopper-Pearson and Wilson equal
    ``scipy.stats.binomtest(k, n).proportion_ci(method="exact" / "wilson")``.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial
       limits illustrated in the case of the binomial", Biometrika 26, 1934.
    .. [2] E. B. Wilson, "Probable inference, the law of succession, and
       statistical inference", JASA 22, 1927.
    .. [3] L. D. Brown, T. T. Cai and A. DasGupta, "Interval Estimation for a
       Binomial Proportion", Statistical Science 16(2), 2001.

    Examples
    --------
    >>> from skcal.metrics import binomial_interval
    >>> low, high = binomial_interval(0, 10)
    >>> float(low), round(float(high), 4)
    (0.0, 0.3085)
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    k, n = np.broadcast_arrays(k, n)
    if np.any(k < 0) or np.any(n < 0):
        raise ValueError("successes and trials must be >= 0.")
    if np.any(k > n * (1 + 1e-12)):
        raise ValueError("successes must not exceed trials.")
    k = np.minimum(k, n)
    alpha = 1.0 - confidence_level
    valid = n > 0
    nn = np.where(valid, n, 1.0)
    kk = np.where(valid, k, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "wilson":
            z = ndtri(1 - alpha / 2)
            center = (kk + z * z / 2) / (nn + z * z)
            half = z / (nn + z * z) * np.sqrt(kk * (nn - kk) / nn + z * z / 4)
            low, high = center - half, center + half
        else:
            a = 1.0 if method == "clopper-pearson" else 0.5
            b0 = 0.0 if method == "clopper-pearson" else 0.5
            low = scipy.stats.beta.ppf(alpha / 2, np.maximum(kk + b0, 1e-300),
                                       nn - kk + a)
            high = scipy.stats.beta.ppf(1 - alpha / 2, kk + a,
                                        np.maximum(nn - kk + b0, 1e-300))
            low = np.where(kk <= 0, 0.0, low)
            high = np.where(kk >= nn, 1.0, high)
    low = np.where(valid, np.clip(low, 0.0, 1.0), np.nan)
    high = np.where(valid, np.clip(high, 0.0, 1.0), np.nan)
    return low, high
