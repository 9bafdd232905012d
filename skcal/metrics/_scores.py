"""Proper scoring rules: Brier score and negative log-likelihood."""

import warnings

from . import _rows
from ._params import validated
from ._calibration_error import dask_metrics
from ._validation import _check_inputs

__all__ = ["brier_score", "negative_log_likelihood"]


@validated("input_type", "scale_by_half")
def brier_score(
    y_true,
    y_prob,
    *,
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    scale_by_half="auto",
    pos_label=None,
):
    """Brier score: mean squared error of the predicted probabilities.

    Parameters
    ----------
    %(common)s
    %(tail)s
    scale_by_half : bool or "auto", default="auto"
        Whether to halve the multiclass sum. ``"auto"`` halves it for binary
        problems (1-D ``y_prob`` or 2 columns) and not otherwise, the
        convention of :func:`sklearn.metrics.brier_score_loss`.

    Returns
    -------
    score : float
        Lower is better. In [0, 2] for multiclass, [0, 1] for binary.

    Raises
    ------
    ValueError
        For the invalid inputs, labels and weights of :func:`calibration_error`.

    Notes
    -----
    Multiclass (:math:`K \\ge 3`): the sum over classes, averaged over samples,

    .. math:: \\mathrm{BS} = \\frac{\\sum_i w_i \\sum_{k=1}^K (p_{ik} -
              1[y_i = k])^2}{\\sum_i w_i}.

    Binary (:math:`K = 2`): half of that, which equals the mean squared error
    of the positive-class probability,
    :math:`\\sum_i w_i (p_{i} - 1[y_i = \\mathrm{labels}[1]])^2 / \\sum_i w_i`,
    as in scikit-learn's ``brier_score_loss``. The figures in
    ``../shared/data/README.md`` for binary sets use the un-halved sum
    (``scale_by_half=False``).

    References
    ----------
    .. [1] G. W. Brier, "Verification of forecasts expressed in terms of
       probability", Monthly Weather Review 78(1), 1950.

    Examples
    --------
    >>> from skcal.metrics import brier_score
    >>> round(brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 6)
    0.0375
    """
    score, n_classes, _ = _row_mean(
        _rows.brier_terms, y_true, y_prob, sample_weight, input_type, labels, pos_label
    )
    return score / 2 if _rows.halved(scale_by_half, n_classes) else score


@validated("input_type")
def negative_log_likelihood(
    y_true,
    y_prob,
    *,
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    pos_label=None,
):
    """Mean negative log-likelihood (log loss, cross-entropy), natural log.

    Parameters
    ----------
    %(common)s
    %(tail)s

    Returns
    -------
    nll : float
        Lower is better, in [0, inf]. It is ``inf`` when a sample with
        positive weight gives probability exactly 0 to its true class: no
        probability is clipped. (:func:`sklearn.metrics.log_loss` clips to
        the float epsilon and renormalises rows instead.)

    Raises
    ------
    ValueError
        As :func:`brier_score`.

    Notes
    -----
    .. math:: \\mathrm{NLL} = -\\frac{\\sum_i w_i \\log p_{i, y_i}}{\\sum_i w_i}

    With ``input_type="logits"``, :math:`\\log p_{ik} = z_{ik} -
    \\log\\sum_j e^{z_{ij}}` is computed with the max-shifted
    log-sum-exp, so large logits do not overflow and the result is finite.
    For 1-D log-odds :math:`s`, :math:`\\log p = -\\log(1 + e^{-s})` for the
    positive class and :math:`-\\log(1 + e^{s})` for the other.

    References
    ----------
    .. [1] I. J. Good, "Rational Decisions", Journal of the Royal Statistical
       Society B 14(1), 1952.

    Examples
    --------
    >>> from skcal.metrics import negative_log_likelihood
    >>> round(negative_log_likelihood([0, 1], [[0.5, 0.5], [0.0, 1.0]]), 6)
    0.346574
    >>> negative_log_likelihood([0, 1], [[0.0, 1.0], [0.0, 1.0]])
    inf
    """
    out, _, inp = _row_mean(
        _rows.nll_terms, y_true, y_prob, sample_weight, input_type, labels, pos_label
    )
    if inp is not None and not inp.logits:
        _warn_low_precision_zero(out, inp.scores)
    return out


def _row_mean(terms, y_true, y_prob, sample_weight, input_type, labels, pos_label):
    """``(mean, n_columns, inp)``: the weighted mean of ``terms(inp, xp)`` (dask:
    summed block by block, ``inp`` None)."""
    dask = dask_metrics(y_prob)
    if dask is not None:
        return (*dask.row_mean(terms, y_true, y_prob, sample_weight, input_type,
                               labels, pos_label), None)
    inp = _check_inputs(
        y_true, y_prob, sample_weight=sample_weight, input_type=input_type,
        labels=labels, pos_label=pos_label,
    )
    xp = _rows.ops(inp)
    return xp.weighted_mean(terms(inp, xp), inp.weight), _rows.n_columns(inp), inp


def _warn_low_precision_zero(nll, scores):
    """Warn when an infinite NLL comes from 16/32-bit probabilities (an exact zero
    of the model, or an underflow: the array cannot tell, so the warning names both)."""
    dtype = str(getattr(scores, "dtype", ""))
    # the smallest positive (subnormal) value of the dtype ("bfloat16" holds "float16")
    tiny = next((v for t, v in (("bfloat16", 2.0**-133), ("float16", 2.0**-24),
                                ("float32", 2.0**-149)) if t in dtype), None)
    if float(nll) != float("inf") or tiny is None:
        return
    name = dtype.replace("torch.", "")
    warnings.warn(
        f"negative_log_likelihood is inf: a true-class probability is exactly 0 "
        f"in {name} probabilities. Either the model gives "
        f"exact zeros (e.g. isotonic regression or histogram binning without "
        f"clipping or smoothing; then inf is the honest value), or a small "
        f"probability underflowed to 0 ({name} cannot hold "
        f"values below ~{tiny:.0e}); in the second case pass the output "
        f"of predict_log_proba with input_type='logits', or predict from float64 "
        f"logits, for a finite value.",
        UserWarning,
        # the caller of negative_log_likelihood: past this function, it, and the
        # two parameter-checking wrappers (scikit-learn's and skcal's)
        stacklevel=5,
    )
