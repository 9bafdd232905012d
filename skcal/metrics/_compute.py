"""The one metric path: per-bin sums of validated inputs, then one function from sums to values.

Every binned metric is computed in two steps, as torchmetrics' ``_update`` /
``_compute`` pairs are:

1. :func:`bin_sums` (the *update*): the per-bin sufficient statistics of one
   or more groups (events) -- ``count``, ``weight`` :math:`W_m`,
   ``score_sum`` :math:`P_m = \\sum_{i \\in B_m} w_i s_i` and ``target_sum``
   :math:`T_m = \\sum_{i \\in B_m} w_i o_i` -- from the row-chunked kernels
   of :mod:`skcal.metrics._rows` (NumPy, or torch on the tensor's device).
   :mod:`skcal.metrics._dask` computes the same sums per dask block and adds
   them up.
2. :func:`value_from_sums` (the *compute*): :math:`(W, P, T)` -> the L1 / L2
   / max calibration error or the debiased L2 error, and
   :func:`curve_from_sums`: the reliability curve. The bootstrap of
   :mod:`skcal.metrics._intervals` calls the same :func:`value_from_sums` on
   the re-summed statistics of every resample, so the estimate, the dask
   value and the interval can never drift apart.

This module imports only the leaves :mod:`._params`, :mod:`._rows` and
:mod:`._validation`: there is no import cycle among the metric modules.

Adding a binned metric: compute its value from ``(W, P, T)`` in
:func:`value_from_sums` (a new ``norm``), give it a public function that
calls :func:`~skcal.metrics._calibration_error._binned` (every backend, every
argument) and an entry in :mod:`skcal.metrics._registry` (its name for the
intervals, the scorers and the CLI), and a case in
``tests/metrics/test_metric_tester.py``.
"""

import warnings

import numpy as np
from sklearn.utils import Bunch

from ..utils.validation import _caller_stacklevel, check_sample_weight
from . import _rows

__all__ = [
    "bin_sums",
    "bin_terms",
    "combine_groups",
    "curve_from_sums",
    "debiased_terms",
    "frequency_scale",
    "frequency_weights",
    "stack_sums",
    "value_from_sums",
    "warn_small_bins",
]

def bin_sums(inp, kind, n_bins, strategy, class_index=None, keep=False):
    """Per-bin sums of every group of ``kind`` (a list of dicts).

    The scores and 0/1 outcomes are produced chunk by chunk in float64 by
    :mod:`skcal.metrics._rows`: ``"top-label"`` the confidence ``max_k p_ik``
    and ``1[argmax_k = y_i]``, ``"classwise"`` / ``"binary"`` one column
    ``p_ik`` and ``1[y_i = k]`` (all columns, one group each, for
    ``kind="classwise"`` without ``class_index``; for ``"binary"`` the column
    of ``inp.pos_index``). With ``keep=True`` (one group only) the ``(n,)``
    bin indices and targets are kept for the bootstrap.

    Returns
    -------
    groups : list of dict
        Per group: ``edges``, ``ids``, ``targets``, ``count``, ``weight``,
        ``score_sum``, ``target_sum`` (NumPy arrays; ``ids`` and ``targets``
        None without ``keep``).
    """
    xp = _rows.ops(inp)
    if kind == "classwise" and class_index is None:
        return _rows.binned_all_classes(inp, xp, n_bins, strategy)
    events = _rows.event_chunks(inp, xp, kind, class_index)
    return [_rows.binned_event(inp, xp, events, inp.scores.shape[0], n_bins,
                               strategy, keep)]


def stack_sums(groups):
    """``(W, P, T)`` of shape ``(n_groups, n_bins)`` from :func:`bin_sums` groups.

    Groups with fewer (equal-mass) bins are padded with empty bins, which
    every value skips.
    """
    nb = max(s["weight"].shape[0] for s in groups)
    out = np.zeros((3, len(groups), nb))
    for g, s in enumerate(groups):
        m = s["weight"].shape[0]
        out[0, g, :m] = s["weight"]
        out[1, g, :m] = s["score_sum"]
        out[2, g, :m] = s["target_sum"]
    return out[0], out[1], out[2]


def debiased_terms(W, P, T, scale):
    """Per-bin terms ``W_m [(acc_m - conf_m)^2 - acc_m (1 - acc_m) / (N_m - 1)]``.

    ``W``, ``P``, ``T``: per-bin weight, score sum and outcome sum (any shape,
    broadcast together); ``N = W * scale`` the number of samples in the bin.
    Bins with fewer than 2 samples contribute 0 (as in the reference code of
    Kumar et al.; :func:`~skcal.metrics.debiased_calibration_error` warns
    about them). Their sum divided by the total weight is the unbiased
    estimate of the squared L2 calibration error of one event.
    """
    N = W * scale
    ok = N >= 2
    Ws = np.where(ok, W, 1.0)
    acc = np.where(ok, T / Ws, 0.0)
    gap2 = (T - P) ** 2 / Ws
    var = acc * (1.0 - acc) * Ws / np.where(ok, N - 1.0, 1.0)
    return np.where(ok, gap2 - var, 0.0)


def bin_terms(W, P, T, norm, scale=1.0):
    """Per-bin contribution of the additive norms (0 for empty bins).

    ``"l1"``: :math:`|T_m - P_m|`; ``"l2"``: :math:`(T_m - P_m)^2 / W_m`;
    ``"debiased"``: :func:`debiased_terms`. Summed over the bins and divided
    by the total weight they give the ECE, the squared RMSCE and the debiased
    squared error of one group.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if norm == "l1":
            return np.abs(T - P)
        if norm == "l2":
            return np.where(W > 0, (T - P) ** 2 / np.where(W > 0, W, 1.0), 0.0)
        return debiased_terms(W, P, T, scale)


def combine_groups(per_group, norm):
    """The metric from per-group values (last axis): their mean, or for
    ``"debiased"`` the square root of the mean of the clipped squared errors."""
    if norm == "debiased":
        return np.sqrt(np.mean(np.maximum(per_group, 0.0), axis=-1))
    return np.mean(per_group, axis=-1)


def value_from_sums(W, P, T, norm, scale=1.0):
    """Every binned calibration error from per-bin sums.

    Parameters
    ----------
    W, P, T : ndarray of shape (..., n_groups, n_bins)
        Per-bin weight, weighted score sum and weighted outcome sum (any
        leading axes, e.g. bootstrap resamples).
    norm : {"l1", "l2", "max", "debiased"}
        ECE, RMSCE, MCE (over bins with :math:`W_m > 0`) or the debiased L2
        error of :func:`~skcal.metrics.debiased_calibration_error`.
    scale : float, default=1.0
        Factor turning ``W`` into numbers of samples (``"debiased"`` only).

    Returns
    -------
    value : ndarray of shape (...)
        The metric: the mean over groups of the per-group error (see
        :func:`combine_groups` for ``"debiased"``).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if norm == "max":
            gap = np.where(W > 0, np.abs(T - P) / np.where(W > 0, W, 1.0), -np.inf)
            return combine_groups(gap.max(axis=-1), norm)
        per = bin_terms(W, P, T, norm, scale).sum(axis=-1) / W.sum(axis=-1)
    if norm == "l2":
        per = np.sqrt(per)
    return combine_groups(per, norm)


def curve_from_sums(s):
    """The reliability curve of one group's sums (only bins with positive weight).

    Returns a :class:`~sklearn.utils.Bunch` with ``prob_pred``,
    ``prob_true``, ``bin_weight``, ``bin_count``, ``bin_index`` and
    ``bin_edges`` (see :func:`~skcal.metrics.reliability_curve`).
    """
    nonempty = s["weight"] > 0
    wsum = s["weight"][nonempty]
    return Bunch(
        prob_pred=s["score_sum"][nonempty] / wsum,
        prob_true=s["target_sum"][nonempty] / wsum,
        bin_weight=wsum / wsum.sum(),
        bin_count=s["count"][nonempty].astype(np.int64),
        bin_index=np.flatnonzero(nonempty),
        bin_edges=s["edges"],
    )


def frequency_weights(sample_weight, inp):
    """Validated weights as a float64 NumPy array on their own scale, or None.

    ``inp.weight`` (from the shared validation) holds the same weights
    divided by their maximum; this returns them as given, so a weight of 2
    is two samples.
    """
    if sample_weight is None:
        return None
    raw = check_sample_weight(sample_weight, inp.scores.shape[0])
    return np.asarray(raw, dtype=np.float64)


def frequency_scale(sample_weight, inp):
    """Factor turning the validated weights back into counts.

    The validation divides the weights by their maximum unless they are whole
    numbers (:func:`~skcal.utils.validation.check_sample_weight`).
    """
    if inp.weight is None:
        return 1.0
    return float(np.max(frequency_weights(sample_weight, inp))) / float(inp.weight.max())


def warn_small_bins(groups, scale, what):
    """Warn when a bin holds between 0 and 2 samples (its debiased term is set to 0)."""
    small = sum(
        int(np.count_nonzero((s["weight"] > 0) & (s["weight"] * scale < 2)))
        for s in groups
    )
    if small:
        warnings.warn(
            f"{what}: {small} non-empty bin(s) hold fewer than 2 samples; their "
            "variance correction is undefined and they contribute 0 (as in Kumar "
            "et al.'s reference code). Use fewer bins or more samples.",
            UserWarning,
            stacklevel=_caller_stacklevel(),
        )
