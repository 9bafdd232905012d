"""Debiased L2 calibration error (Kumar, Liang & Ma, NeurIPS 2019)."""

from ._calibration_error import _binned
from ._compute import stack_sums, value_from_sums, warn_small_bins
from ._params import validated

__all__ = ["debiased_calibration_error"]


@validated("kind", "class_index", "n_bins", "strategy", "input_type")
def debiased_calibration_error(
    y_true,
    y_prob,
    *,
    kind="top-label",
    class_index=None,
    n_bins=15,
    strategy="quantile",
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    pos_label=None,
):
    """Debiased L2 calibration error (Kumar, Liang & Ma, 2019).

    The plug-in binned squared calibration error
    :math:`\\sum_m w_m (\\mathrm{acc}_m - \\mathrm{conf}_m)^2` is biased
    upwards: even a perfectly calibrated model gets a positive value, of order
    ``n_bins / n_samples``. This estimator subtracts the sampling variance of
    each bin's observed frequency, which makes the squared error unbiased for
    the binned (squared) calibration error, and returns its square root.

    Parameters
    ----------
    %(common)s
    kind : {"top-label", "classwise", "binary"}, default="top-label"
        As in :func:`calibration_error`. For ``"classwise"`` without
        ``class_index`` the per-class squared errors are averaged before the
        square root (Kumar et al.'s "marginal" calibration error).
    class_index : int, default=None
        Only with ``kind="classwise"``: the column whose error is returned.
    n_bins : int, default=15
        Number of bins.
    strategy : {"uniform", "quantile"}, default="quantile"
        Equal-width or equal-mass bins (the bin rules of
        :func:`calibration_error`). Kumar et al. use equal-mass bins.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative *frequency* weights: a weight of 2 counts as two samples
        in the bias correction, so weights are equivalent to repeated rows
        (their scale matters, unlike for :func:`calibration_error`).
    %(short_tail)s

    Returns
    -------
    error : float
        The debiased L2 calibration error, in [0, 1]. It is 0 when the
        debiased squared error is negative (no evidence of miscalibration at
        this sample size).

    Raises
    ------
    ValueError
        As :func:`calibration_error`.

    Warns
    -----
    UserWarning
        When a non-empty bin holds fewer than 2 samples (sum of frequency
        weights below 2): its variance correction :math:`1 / (N_m - 1)` is
        undefined, and the bin contributes 0.

    See Also
    --------
    rms_calibration_error : The plug-in (biased) L2 calibration error.
    confidence_interval : Bootstrap interval of this metric.

    Notes
    -----
    For bin :math:`B_m` with :math:`N_m` samples (sum of frequency weights),
    weight fraction :math:`w_m`, mean score :math:`\\mathrm{conf}_m` and observed
    frequency :math:`\\mathrm{acc}_m` (Kumar et al. 2019, Definition 5.2 and
    the estimator of Section 5):

    .. math::

        \\widehat{\\mathrm{CE}}^2 = \\sum_m w_m \\Big[(\\mathrm{acc}_m -
        \\mathrm{conf}_m)^2 - \\frac{\\mathrm{acc}_m (1 -
        \\mathrm{acc}_m)}{N_m - 1}\\Big],
        \\qquad \\widehat{\\mathrm{CE}} =
        \\sqrt{\\max(\\widehat{\\mathrm{CE}}^2, 0)}.

    Bins with :math:`N_m < 2` contribute 0 (see Warns). With
    ``kind="classwise"`` the result is
    :math:`\\big(\\frac1K \\sum_k \\max(\\widehat{\\mathrm{CE}}_k^2, 0)\\big)^{1/2}`.

    **Against the reference implementation.** The per-bin formula and the
    reductions are those of ``calibration.get_calibration_error(..., p=2,
    debias=True)`` of Kumar et al.'s ``uncertainty-calibration`` package:
    with the same bins the values agree to rounding (``strategy="uniform"``
    against its ``get_equal_prob_bins``). Its equal-mass bins cut the sorted
    scores with ``numpy.array_split`` (the first ``n_samples % n_bins`` bins
    one row larger), skcal's at the inverted-CDF quantiles (bin :math:`j`
    ends at sorted row :math:`\\lceil j n / M \\rceil`, the rule under which
    an integer ``sample_weight`` equals repeated rows): unless ``n_samples``
    is a multiple of ``n_bins`` (and no ties), the values differ (0.1784 vs
    0.1783 for 2000 over-confident 5-class rows and 15 bins). The package
    gives each distinct value its own bin below ``n_samples / 4`` distinct
    scores; skcal at most ``n_bins`` (see :func:`calibration_error`).

    References
    ----------
    .. [1] A. Kumar, P. Liang and T. Ma, "Verified Uncertainty Calibration",
       NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.metrics import debiased_calibration_error, rms_calibration_error
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)  # calibrated
    >>> biased = rms_calibration_error(y, p, kind="binary", strategy="quantile")
    >>> debiased = debiased_calibration_error(y, p, kind="binary")
    >>> bool(debiased < biased)
    True
    """
    groups, _, scale = _binned(
        y_true, y_prob, kind, class_index, n_bins, strategy, sample_weight,
        input_type, labels, pos_label, counts=True,
    )
    warn_small_bins(groups, scale, "debiased_calibration_error")
    return float(value_from_sums(*stack_sums(groups), "debiased", scale))
