"""Binned calibration errors (ECE, RMS-CE, MCE) and the reliability curve."""

import inspect

import numpy as np
from sklearn.utils import check_random_state

from .._backend._array import host_array, is_dask_array
from ._binomial import binomial_interval
from ._compute import (
    bin_sums,
    curve_from_sums,
    frequency_scale,
    stack_sums,
    value_from_sums,
)
from ._params import _check_kind, validated
from ._validation import _check_inputs, _check_n_bins

__all__ = [
    "calibration_error",
    "expected_calibration_error",
    "maximum_calibration_error",
    "reliability_curve",
    "rms_calibration_error",
]


def dask_metrics(y_prob):
    """:mod:`skcal.metrics._dask` for a dask ``y_prob`` (imported then), else None."""
    if not is_dask_array(y_prob):
        return None
    from . import _dask

    return _dask


def _binned(y_true, y_prob, kind, class_index, n_bins, strategy, sample_weight,
            input_type, labels, pos_label, *, keep=False, counts=False,
            one_event=None):
    """Validate, then ``(groups, inp, scale)`` on any backend (dask: blockwise).

    ``groups``: the per-group bin sums (with ``keep``, the one group's ``(n,)``
    ``ids`` and ``targets`` too); ``inp``: the validated inputs (None for
    dask); ``scale``: with ``counts``, the factor turning weights into sample
    counts (else 1.0).
    """
    kind = _check_kind(kind, class_index, one_event)
    dask = dask_metrics(y_prob)
    if dask is not None:
        groups, scale = dask.bin_sums(
            y_true, y_prob, kind=kind, class_index=class_index, n_bins=n_bins,
            strategy=strategy, sample_weight=sample_weight, input_type=input_type,
            labels=labels, pos_label=pos_label, counts=counts, keep=keep,
        )
        return groups, None, scale
    inp = _check_inputs(
        y_true, y_prob, sample_weight=sample_weight, input_type=input_type,
        labels=labels, pos_label=pos_label, binary=kind == "binary",
    )
    n_bins = _check_n_bins(n_bins, inp.y.shape[0])
    groups = bin_sums(inp, kind, n_bins, strategy, class_index, keep=keep)
    scale = frequency_scale(sample_weight, inp) if counts else 1.0
    return groups, inp, scale


@validated("kind", "class_index", "n_bins", "strategy", "norm", "input_type")
def calibration_error(
    y_true,
    y_prob,
    *,
    kind="top-label",
    class_index=None,
    n_bins=15,
    strategy="uniform",
    norm="l1",
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    pos_label=None,
):
    """Binned calibration error of predicted probabilities.

    Parameters
    ----------
    %(common)s
    kind : {"top-label", "classwise", "binary"}, default="top-label"
        Which probabilities are checked against which outcomes:

        - ``"top-label"``: the confidence ``max_k p_ik`` against whether the
          predicted class ``argmax_k p_ik`` is correct (ties go to the lowest
          column; for logits the argmax is taken on the log-probabilities).
          This is the ECE of Guo et al. (2017).
        - ``"classwise"``: every column ``p_ik`` against ``1[y_i = k]``; the
          result is the mean over the ``n_classes`` classes of the per-class
          error, each with its own bins (Kull et al., 2019). With
          ``class_index=k``, only the error of column ``k``.
        - ``"binary"``: the probability of the second class (``labels[1]``,
          the positive class) against ``1[y_i = labels[1]]``; needs 2
          classes. This is the view of :func:`sklearn.calibration.calibration_curve`.

        ``"class"`` is accepted as another name for ``"classwise"``; the same
        names are used by :func:`reliability_curve`.
    class_index : int, default=None
        Only with ``kind="classwise"``: the column of ``y_prob`` whose error
        is returned (None: the mean over all columns).
    n_bins : int, default=15
        Number of bins (equal-mass binning can produce fewer, see Notes); at
        most ``max(10000, n_samples)``.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1] or equal-mass bins (weighted quantiles of
        the scores).
    norm : {"l1", "l2", "max"}, default="l1"
        How the per-bin gaps are combined: weighted mean (ECE), weighted
        root mean square (RMS calibration error) or maximum over non-empty
        bins (MCE).
    %(tail)s

    Returns
    -------
    error : float
        The calibration error, in [0, 1] (multiply by 100 for %).

    Raises
    ------
    ValueError
        For NaN or infinite values, wrong shapes, empty input, mismatched
        lengths, probabilities outside [0, 1] or rows that do not sum to 1,
        labels that do not match the columns or leave a column's label
        ambiguous, negative or all-zero weights, and invalid options.

    See Also
    --------
    reliability_curve : The per-bin values this error is computed from.
    expected_calibration_error, rms_calibration_error, maximum_calibration_error

    Notes
    -----
    With bins :math:`B_1..B_M`, per-bin weight fraction
    :math:`w_m = \\sum_{i \\in B_m} w_i / \\sum_i w_i`, mean score
    :math:`\\mathrm{conf}_m` and observed frequency :math:`\\mathrm{acc}_m`
    (both weighted means over :math:`B_m`):

    .. math::

        \\mathrm{ECE} = \\sum_m w_m |\\mathrm{acc}_m - \\mathrm{conf}_m|, \\quad
        \\mathrm{RMSCE} = \\sqrt{\\sum_m w_m (\\mathrm{acc}_m -
        \\mathrm{conf}_m)^2}, \\quad
        \\mathrm{MCE} = \\max_{m: w_m > 0} |\\mathrm{acc}_m - \\mathrm{conf}_m|.

    Bin rules: equal-width bins are closed on the right,
    :math:`(m/M, (m+1)/M]`, with 0.0 in the first bin and 1.0 in the last; a
    score on an interior edge falls in the lower bin whether it is float32 or
    float64 (scores within a relative :math:`2^{-21}` of an edge count as on
    it). Equal-mass edges are the inverted-CDF weighted quantiles of the scores
    (edge :math:`j` is the smallest score :math:`v` whose cumulative weight
    fraction reaches :math:`j/M`; NumPy's ``method="inverted_cdf"``), the
    definition under which an integer weight gives exactly the bins of the
    repeated rows; duplicate edges from tied scores are merged, so fewer bins
    may result; zero-weight samples do not move the edges. When the scores
    take at most ``n_bins`` distinct values, every value gets its own bin
    (edges at the midpoints between neighbouring values), so no two distinct
    values share a bin while bins are left. Bins with zero weight are skipped.

    Memory: uniform bins are accumulated row chunk by row chunk (for
    ``kind="classwise"``, all classes in one pass); equal-mass bins need the
    ``(n_samples,)`` float64 scores of one group and a sorted copy for their
    edges (one class at a time for ``kind="classwise"``; for logits also the
    per-row maximum and log-sum-exp). Nothing of shape
    ``(n_samples, n_classes)`` is allocated.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On Calibration of
       Modern Neural Networks", ICML 2017.
    .. [2] M. P. Naeini, G. Cooper and M. Hauskrecht, "Obtaining Well
       Calibrated Probabilities Using Bayesian Binning", AAAI 2015.
    .. [3] M. Kull, M. Perello-Nieto, M. Kängsepp, T. Silva Filho, H. Song and
       P. Flach, "Beyond temperature scaling: Obtaining well-calibrated
       multiclass probabilities with Dirichlet calibration", NeurIPS 2019.
    .. [4] A. Kumar, P. Liang and T. Ma, "Verified Uncertainty Calibration",
       NeurIPS 2019.

    Examples
    --------
    >>> from skcal.metrics import calibration_error
    >>> y_true = [0, 1, 0, 0]
    >>> y_prob = [[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.3, 0.7]]
    >>> round(calibration_error(y_true, y_prob, n_bins=2), 4)  # |0.5 - 0.75|
    0.25
    """
    groups, _, _ = _binned(
        y_true, y_prob, kind, class_index, n_bins, strategy, sample_weight,
        input_type, labels, pos_label,
    )
    return float(value_from_sums(*stack_sums(groups), norm))


def _convenience(norm, name, long_name, symbol):
    """``calibration_error(..., norm=norm)`` as the public function ``name``."""

    def func(y_true, y_prob, **kwargs):
        return calibration_error(y_true, y_prob, norm=norm, **kwargs)

    sig = inspect.signature(calibration_error)  # all its parameters but norm
    func.__signature__ = sig.replace(
        parameters=[p for p in sig.parameters.values() if p.name != "norm"]
    )
    func.__name__ = func.__qualname__ = name
    func.__doc__ = f"""{long_name} ({symbol}).

    Same as ``calibration_error(..., norm="{norm}")``; see
    :func:`calibration_error` for the bin rules, the ``kind`` variants and
    the formula.

    Parameters
    ----------
    %(common)s
    kind : {{"top-label", "classwise", "binary"}}, default="top-label"
        Top-label confidence, mean over classes (one class with
        ``class_index``), or the positive class. ``"class"`` is another name
        for ``"classwise"``.
    class_index : int, default=None
        Column of ``y_prob`` for ``kind="classwise"`` (None: mean over all).
    n_bins : int, default=15
        Number of bins; at most ``max(10000, n_samples)``.
    strategy : {{"uniform", "quantile"}}, default="uniform"
        Equal-width or equal-mass bins.
    %(tail)s

    Returns
    -------
    error : float
        In [0, 1].

    Raises
    ------
    ValueError
        As :func:`calibration_error`.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On Calibration of
       Modern Neural Networks", ICML 2017.
    """
    return validated("kind", "class_index", "n_bins", "strategy", "input_type")(func)


expected_calibration_error = _convenience(
    "l1", "expected_calibration_error", "Expected calibration error", "ECE"
)
expected_calibration_error.__doc__ += """
    Examples
    --------
    >>> from skcal.metrics import expected_calibration_error
    >>> round(expected_calibration_error([1, 0], [0.8, 0.3], n_bins=10), 4)
    0.25
    """
rms_calibration_error = _convenience(
    "l2", "rms_calibration_error", "Root-mean-square calibration error", "RMSCE"
)
maximum_calibration_error = _convenience(
    "max", "maximum_calibration_error", "Maximum calibration error", "MCE"
)


@validated("kind", "class_index", "n_bins", "strategy", "input_type", "n_bootstrap",
           "confidence_level", "random_state", "interval")
def reliability_curve(
    y_true,
    y_prob,
    *,
    kind="top-label",
    class_index=None,
    n_bins=15,
    strategy="uniform",
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    pos_label=None,
    n_bootstrap=0,
    confidence_level=0.95,
    random_state=None,
    interval=None,
):
    """Per-bin mean score and observed frequency: the data of a reliability diagram.

    It is computed by the same code as :func:`calibration_error`, so the
    ECE equals ``sum(bin_weight * abs(prob_true - prob_pred))``.

    Parameters
    ----------
    %(common)s
    kind : {"top-label", "classwise", "binary"}, default="top-label"
        ``"top-label"``: confidence vs. accuracy of the predicted class;
        ``"classwise"``: column ``class_index`` vs.
        ``1[y = labels[class_index]]`` (a curve shows one class);
        ``"binary"``: the second (positive) class of a 2-class problem, as
        :func:`sklearn.calibration.calibration_curve`. The names are those
        of :func:`calibration_error`; ``"class"`` is another name for
        ``"classwise"``.
    class_index : int, default=None
        Column of ``y_prob`` for ``kind="classwise"`` (required there).
    n_bins : int, default=15
        Number of bins; at most ``max(10000, n_samples)``.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width or equal-mass bins; see :func:`calibration_error` for the
        bin rules.
    %(tail)s
    n_bootstrap : int, default=0
        If > 0, the number of bootstrap resamples (rows drawn with
        replacement, bin edges kept fixed) used for a percentile confidence
        interval of ``prob_true`` in every bin. This keeps the
        ``(n_samples,)`` bin indices and outcomes (copied to the host for a
        torch input) and draws ``(n_samples,)`` multiplicities per resample.
    confidence_level : float, default=0.95
        Coverage of the bootstrap interval, in (0, 1).
    random_state : int, RandomState instance or None, default=None
        Seed of the bootstrap resampling.
    interval : {"clopper-pearson", "wilson", "jeffreys"}, default=None
        If given, an exact (or score) binomial interval of ``prob_true`` in
        every bin, from :func:`binomial_interval` with the bin's number of
        samples and of positive outcomes (sums of the sample weights, read
        as frequency weights). Unlike a percentile bootstrap, these keep a
        positive width on bins whose outcomes are all 0 or all 1. Cannot be
        combined with ``n_bootstrap``.

    Returns
    -------
    curve : :class:`sklearn.utils.Bunch`
        Only bins with positive total weight are listed (``n_nonempty``
        entries, in increasing order of score). NumPy arrays, also for torch
        input:

        - ``prob_pred`` (n_nonempty,): weighted mean score (confidence) per bin;
        - ``prob_true`` (n_nonempty,): weighted observed frequency (accuracy);
        - ``bin_weight`` (n_nonempty,): fraction of the total weight per bin;
        - ``bin_count`` (n_nonempty,), int: number of samples per bin;
        - ``bin_index`` (n_nonempty,), int: position of each bin among all bins;
        - ``bin_edges`` (n_bins_effective + 1,): the edges of all bins;
        - ``prob_true_low``, ``prob_true_high`` (n_nonempty,): the binomial
          interval (with ``interval``) or the bootstrap interval (with
          ``n_bootstrap > 0``; NaN where a bin was empty in every resample).

    Raises
    ------
    ValueError
        As :func:`calibration_error`, and for an invalid ``class_index``,
        ``n_bootstrap`` or ``confidence_level``.

    See Also
    --------
    calibration_error
    skcal.display.ReliabilityDisplay : Plots this curve.

    Notes
    -----
    For bin :math:`B_m`, ``prob_pred`` is
    :math:`\\sum_{i \\in B_m} w_i s_i / \\sum_{i \\in B_m} w_i` and
    ``prob_true`` is :math:`\\sum_{i \\in B_m} w_i o_i / \\sum_{i \\in B_m} w_i`
    for scores :math:`s_i` and 0/1 outcomes :math:`o_i`. For
    ``kind="binary"`` and unit weights these equal the two outputs of
    ``sklearn.calibration.calibration_curve`` (which drops empty bins too).

    References
    ----------
    .. [1] A. Niculescu-Mizil and R. Caruana, "Predicting Good Probabilities
       with Supervised Learning", ICML 2005.
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On Calibration of
       Modern Neural Networks", ICML 2017.

    Examples
    --------
    >>> from skcal.metrics import reliability_curve
    >>> curve = reliability_curve([0, 1, 1, 1], [0.2, 0.3, 0.7, 0.9],
    ...                           kind="binary", n_bins=2)
    >>> curve.prob_pred.tolist(), curve.prob_true.tolist()
    ([0.25, 0.8], [0.5, 1.0])
    """
    if interval is not None and n_bootstrap:
        raise ValueError("Pass either interval or n_bootstrap, not both.")
    (s,), inp, scale = _binned(
        y_true, y_prob, kind, class_index, n_bins, strategy, sample_weight,
        input_type, labels, pos_label, keep=n_bootstrap > 0,
        counts=interval is not None, one_event="A reliability curve",
    )
    curve = curve_from_sums(s)
    if interval is not None:
        nonempty = s["weight"] > 0
        curve.prob_true_low, curve.prob_true_high = binomial_interval(
            s["target_sum"][nonempty] * scale, s["weight"][nonempty] * scale,
            confidence_level=confidence_level, method=interval,
        )
    if n_bootstrap:
        curve.prob_true_low, curve.prob_true_high = _bootstrap_prob_true(
            inp, s, n_bootstrap, confidence_level, random_state
        )
    return curve


def _bootstrap_prob_true(inp, s, n_bootstrap, level, random_state):
    """Percentile interval of ``prob_true`` over row resamples, bins fixed (host)."""
    ids, targets, weight = s["ids"], s["targets"], host_array(inp.weight)
    n, nb = ids.shape[0], s["weight"].shape[0]
    w = np.ones(n) if weight is None else weight
    rng = check_random_state(random_state)
    freq = np.empty((n_bootstrap, nb))
    for b in range(n_bootstrap):
        mult = np.bincount(rng.randint(0, n, size=n), minlength=n) * w
        tot = np.bincount(ids, weights=mult, minlength=nb)
        hit = np.bincount(ids, weights=mult * targets, minlength=nb)
        with np.errstate(invalid="ignore", divide="ignore"):
            freq[b] = hit / tot
    freq = freq[:, s["weight"] > 0]
    alpha = (1.0 - level) / 2.0
    low, high = np.full((2, freq.shape[1]), np.nan)
    seen = np.any(np.isfinite(freq), axis=0)
    if np.any(seen):
        low[seen], high[seen] = np.nanquantile(
            freq[:, seen], [alpha, 1 - alpha], axis=0
        )
    return low, high
