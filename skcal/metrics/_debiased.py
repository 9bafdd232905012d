"""Debiased L2 calibration error (Kumar, Liang & Ma, NeurIPS 2019)."""

import numpy as np

from ._calibration_error import (
    _COMMON_PARAMS,
    _STRATEGIES,
    _TAIL_PARAMS,
    _bins,
    _check_kind,
)
from ._validation import _check_choice, _check_inputs, _check_n_bins

__all__ = ["debiased_calibration_error"]


def _frequency_scale(sample_weight, inp):
    """Factor turning the validated (max-normalised) weights back into counts."""
    if inp.weight is None:
        return 1.0
    from ._events import frequency_weights

    return float(np.max(frequency_weights(sample_weight, inp)))


def debiased_terms(W, P, T, scale):
    """Per-bin terms ``W_m [(acc_m - conf_m)^2 - acc_m (1 - acc_m) / (N_m - 1)]``.

    ``W``, ``P``, ``T``: per-bin weight, score sum and outcome sum (any shape,
    broadcast together); ``N = W * scale`` the number of samples in the bin.
    Bins with fewer than 2 samples contribute 0 (as in the reference code of
    Kumar et al.). Their sum divided by the total weight is the unbiased
    estimate of the squared L2 calibration error of one event.
    """
    N = W * scale
    ok = N >= 2
    Ws = np.where(ok, W, 1.0)
    acc = np.where(ok, T / Ws, 0.0)
    gap2 = (T - P) ** 2 / Ws
    var = acc * (1.0 - acc) * Ws / np.where(ok, N - 1.0, 1.0)
    return np.where(ok, gap2 - var, 0.0)


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
):
    """Debiased L2 calibration error (Kumar, Liang & Ma, 2019).

    The plug-in binned squared calibration error
    :math:`\\sum_m w_m (\\mathrm{{acc}}_m - \\mathrm{{conf}}_m)^2` is biased
    upwards: even a perfectly calibrated model gets a positive value, of order
    ``n_bins / n_samples``. This estimator subtracts the sampling variance of
    each bin's observed frequency, which makes the squared error unbiased for
    the binned (squared) calibration error, and returns its square root.

    Parameters
    ----------
    {common}
    kind : {{"top-label", "classwise", "binary"}}, default="top-label"
        As in :func:`calibration_error`. For ``"classwise"`` without
        ``class_index`` the per-class squared errors are averaged before the
        square root (Kumar et al.'s "marginal" calibration error).
    class_index : int, default=None
        Only with ``kind="classwise"``: the column whose error is returned.
    n_bins : int, default=15
        Number of bins.
    strategy : {{"uniform", "quantile"}}, default="quantile"
        Equal-width or equal-mass bins (the bin rules of
        :func:`calibration_error`). Kumar et al. use equal-mass bins.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative *frequency* weights: a weight of 2 counts as two samples
        in the bias correction, so weights are equivalent to repeated rows
        (their scale matters, unlike for :func:`calibration_error`).
    input_type : {{"probabilities", "logits"}}, default="probabilities"
        How to read ``y_prob``.
    labels : array-like of shape (n_classes,), default=None
        As in :func:`calibration_error`.

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

    See Also
    --------
    rms_calibration_error : The plug-in (biased) L2 calibration error.
    confidence_interval : Bootstrap interval of this metric.

    Notes
    -----
    For bin :math:`B_m` with :math:`N_m` samples (sum of frequency weights),
    weight fraction :math:`w_m`, mean score :math:`\\mathrm{{conf}}_m` and observed
    frequency :math:`\\mathrm{{acc}}_m` (Kumar et al. 2019, Definition 5.2 and
    the estimator of Section 5):

    .. math::

        \\widehat{{\\mathrm{{CE}}}}^2 = \\sum_m w_m \\Big[(\\mathrm{{acc}}_m -
        \\mathrm{{conf}}_m)^2 - \\frac{{\\mathrm{{acc}}_m (1 -
        \\mathrm{{acc}}_m)}}{{N_m - 1}}\\Big],
        \\qquad \\widehat{{\\mathrm{{CE}}}} =
        \\sqrt{{\\max(\\widehat{{\\mathrm{{CE}}}}^2, 0)}}.

    Bins with :math:`N_m < 2` contribute 0. With ``kind="classwise"`` the
    result is
    :math:`\\big(\\frac1K \\sum_k \\max(\\widehat{{\\mathrm{{CE}}}}_k^2, 0)\\big)^{{1/2}}`.
    These are the numbers of the reference implementation
    (``calibration.get_calibration_error(..., p=2, debias=True)`` of the
    ``uncertainty-calibration`` package) for the same bins; that package's
    equal-mass edges are midpoints between order statistics, skcal's are
    linear quantiles, so with ``strategy="quantile"`` the bins (and values)
    can differ slightly.

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
    kind = _check_kind(kind)
    _check_choice("strategy", strategy, _STRATEGIES)
    n_bins = _check_n_bins(n_bins)
    if kind != "classwise" and class_index is not None:
        raise ValueError("class_index is only used with kind='classwise'.")
    inp = _check_inputs(
        y_true, y_prob, sample_weight=sample_weight, input_type=input_type,
        labels=labels,
    )
    n_bins = _check_n_bins(n_bins, inp.y.shape[0])
    scale = _frequency_scale(sample_weight, inp)
    groups, _ = _bins(inp, kind, n_bins, strategy, class_index)
    sq = []
    for s in groups:
        terms = debiased_terms(s["weight"], s["score_sum"], s["target_sum"], scale)
        sq.append(max(float(np.sum(terms) / np.sum(s["weight"])), 0.0))
    return float(np.sqrt(np.mean(sq)))


debiased_calibration_error.__doc__ = debiased_calibration_error.__doc__.format(
    common=_COMMON_PARAMS, tail=_TAIL_PARAMS
)
