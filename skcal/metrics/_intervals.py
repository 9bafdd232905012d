"""Confidence intervals: bootstrap intervals of metrics, binomial intervals of bins.

Every metric is first reduced to a few float64 numbers per row, which each
resample re-sums (see the Notes of :func:`confidence_interval`).
"""

import inspect
import numbers

import numpy as np
import scipy.stats
from scipy.special import ndtr, ndtri
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints

from . import _binning, _rows
from ._params import CONSTRAINTS, _check_kind, _entry, validated
from ._binomial import binomial_interval
from ._compute import (
    bin_terms,
    combine_groups,
    frequency_scale,
    frequency_weights,
    value_from_sums,
)
from ._events import event_groups, event_vectors
from ._registry import resolve
from ._validation import _check_inputs, _check_n_bins

__all__ = ["binomial_interval", "confidence_interval", "paired_difference_interval"]

_METHODS = ("percentile", "basic", "BCa")

#: Row indices per batch of resamples (int64: 8 MiB).
_BATCH_ELEMENTS = 2**20


def _multiplicities(idx, n):
    """Row multiplicities of each resample: float64 ``(B, n)`` from ``(B, n)`` indices.

    (One scatter-add; the sums are then sequential passes over the rows,
    faster than gathering every per-row array.)
    """
    B = idx.shape[0]
    flat = (idx + (np.arange(B) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(np.float64)


class _MeanStat:
    """``sum_i w_i a_i / sum_i w_i`` (Brier, NLL, accuracy)."""

    def __init__(self, a, w):
        self.a, self.w = a, w
        self.n = a.shape[0]
        self.wa = a if w is None else w * a

    def __call__(self, idx):
        cnt = _multiplicities(np.atleast_2d(idx), self.n)
        W = cnt.sum(axis=1) if self.w is None else cnt @ self.w
        out = (cnt @ self.wa) / W
        return out[0] if idx.ndim == 1 else out

    def jackknife(self):
        w = np.ones(self.n) if self.w is None else self.w
        A, W = np.sum(w * self.a), np.sum(w)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (A - w * self.a) / (W - w)


class _BinnedStat:
    """A binned calibration error with bins fixed at those of the full sample.

    ``cells`` ``(n, G)``: the bin of every row in each of ``G`` groups (one
    group per event: one for top-label/binary/one class, ``K`` for all
    classes), offset by ``g * nb``; ``s``, ``o`` ``(n, G)``: scores and
    outcomes; ``w`` ``(n,)`` or None.
    """

    def __init__(self, cells, s, o, w, nb, norm, scale):
        self.cells, self.s, self.o, self.w = cells, s, o, w
        self.n, self.G = cells.shape
        self.nb, self.norm, self.scale = nb, norm, scale

    def sums(self, idx):
        """Per-bin ``W``, ``P``, ``T`` of each resample: shape ``(B, G, nb)``."""
        B, C = idx.shape[0], self.G * self.nb
        off = (np.arange(B) * C)[:, None]
        w = _multiplicities(idx, self.n)  # (B, n) weight of every row
        if self.w is not None:
            w *= self.w
        W, P, T = S = np.zeros((3, B * C))
        for g in range(self.G):
            cid = (self.cells[:, g] + off).ravel()
            W += np.bincount(cid, w.ravel(), B * C)
            P += np.bincount(cid, (w * self.s[:, g]).ravel(), B * C)
            T += np.bincount(cid, (w * self.o[:, g]).ravel(), B * C)
        return S.reshape(3, B, self.G, self.nb)

    def __call__(self, idx):
        value = value_from_sums(*self.sums(np.atleast_2d(idx)), self.norm, self.scale)
        return value[0] if idx.ndim == 1 else value

    def jackknife(self):
        """Leave-one-out values, from the full-sample bin sums in O(n G)."""
        W, P, T = (a[0] for a in self.sums(np.arange(self.n)[None, :]))  # (G, nb)
        w = np.ones(self.n) if self.w is None else self.w
        Wtot = W.sum(axis=-1)  # (G,)
        per = np.empty((self.n, self.G))
        for g in range(self.G):
            c = self.cells[:, g] - g * self.nb
            Wc = W[g, c] - w
            Pc = P[g, c] - w * self.s[:, g]
            Tc = T[g, c] - w * self.o[:, g]
            Wt = Wtot[g] - w
            with np.errstate(invalid="ignore", divide="ignore"):
                if self.norm == "max":
                    gap = np.where(W[g] > 0, np.abs(T[g] - P[g]) / np.where(
                        W[g] > 0, W[g], 1.0), -np.inf)
                    top = int(np.argmax(gap))  # the largest gap but c's own
                    second = np.max(np.delete(gap, top), initial=-np.inf)
                    other = np.where(c == top, second, gap[top])
                    new = np.where(Wc > 1e-300 * Wtot[g],
                                   np.abs(Tc - Pc) / np.where(Wc > 0, Wc, 1.0), -np.inf)
                    per[:, g] = np.maximum(other, new)
                    continue
                q_all = bin_terms(W[g], P[g], T[g], self.norm, self.scale)
                Wc = np.where(Wc > 1e-12 * Wtot[g], Wc, 0.0)  # an emptied bin
                v = (q_all.sum() - q_all[c]
                     + bin_terms(Wc, Pc, Tc, self.norm, self.scale)) / Wt
                per[:, g] = np.sqrt(v) if self.norm == "l2" else v
        return combine_groups(per, self.norm)


class _GenericStat:
    """Any metric of the ``(score, outcome, weight)`` rows, recomputed per resample."""

    def __init__(self, func, s, o, w):
        self.func, self.s, self.o, self.w = func, s, o, w
        self.n = s.shape[0]

    def __call__(self, idx):
        out = np.array([
            self.func(self.s[i], self.o[i], None if self.w is None else self.w[i])
            for i in np.atleast_2d(idx)
        ])
        return out if idx.ndim > 1 else out[0]

    jackknife = None


def _binned_stat(inp, w, kind, class_index, n_bins, strategy, norm, scale):
    """Reduce ``inp`` (NumPy weights ``w``) to the rows' bins, scores and outcomes.

    Memory: float64 scores, int32 bins and uint8 outcomes, ``(n, G)`` each
    (13 bytes per row and group), filled group by group without a copy.
    """
    n = inp.scores.shape[0]
    G, groups = event_groups(inp, kind, class_index)
    cells = np.empty((n, G), dtype=np.int32)
    s_all = np.empty((n, G))
    o_all = np.empty((n, G), dtype=np.uint8)
    n_cells = []
    for g, (s, o) in enumerate(groups):
        ids, nb = _binning.bin_ids(s, w, n_bins, strategy)
        cells[:, g], s_all[:, g], o_all[:, g] = ids, s, o
        n_cells.append(nb)
    nb = max(n_cells)
    cells += (np.arange(G, dtype=np.int32) * nb)[None, :]
    return _BinnedStat(cells, s_all, o_all, w, nb, norm, scale)


#: Keyword arguments of the metric functions that are not metric options here.
_NOT_OPTIONS = {"sample_weight", "input_type", "labels", "pos_label",
                "return_bandwidth"}


def _options(name, spec, params):
    """``params`` and the defaults of the metric's other keyword options, validated
    against :data:`~skcal.metrics._params.CONSTRAINTS` as the function does."""
    options = {} if spec.function is None else {
        key: p.default for key, p in inspect.signature(spec.function).parameters.items()
        if p.kind is p.KEYWORD_ONLY and key not in _NOT_OPTIONS
    }
    extra = set(params) - set(options)
    if extra:
        raise TypeError(
            f"metric {name!r} does not take {sorted(extra)}; it takes "
            f"{sorted(options)}."
        )
    options.update(params)
    validate_parameter_constraints(
        {key: CONSTRAINTS[key] for key in options}, options, caller_name=name
    )
    return options


def _build(metric, y_true, y_prob, sample_weight, input_type, labels, params):
    """Validate, then reduce ``y_prob`` to a resampleable statistic.

    Its ``bounds``, the metric's range, clip the ends in :func:`_interval`.
    """
    name, spec = resolve(metric)
    family = spec.family
    p = _options(name, spec, params)
    inp = _check_inputs(
        y_true, y_prob, sample_weight=sample_weight, input_type=input_type,
        labels=labels,
    )
    xp = _rows.ops(inp)
    w = None if inp.weight is None else xp.to_numpy(inp.weight)
    if family in ("binned", "debiased"):
        kind = _check_kind(p["kind"], p["class_index"])
        n_bins = _check_n_bins(p["n_bins"], inp.y.shape[0])
        scale = frequency_scale(sample_weight, inp) if family == "debiased" else 1.0
        stat = _binned_stat(inp, w, kind, p["class_index"], n_bins, p["strategy"],
                            p.get("norm", spec.norm), scale)
    elif family == "smooth":
        from ._smooth import _smooth_ece_rows

        kind = _check_kind(p["kind"], p["class_index"], one_event="The smooth ECE")
        s, o = event_vectors(inp, kind, p["class_index"])
        fw = frequency_weights(sample_weight, inp)
        stat = _GenericStat(lambda s, o, w: _smooth_ece_rows(s, o, w)[0], s, o, fw)
    else:
        if family == "brier":
            a = xp.to_numpy(_rows.brier_terms(inp, xp))
            if _rows.halved(p["scale_by_half"], _rows.n_columns(inp)):
                a = a / 2
        elif family == "nll":
            a = xp.to_numpy(_rows.nll_terms(inp, xp))
        else:
            _, a = event_vectors(inp, "top-label")  # 1[argmax = y]
        stat = _MeanStat(a, w)
    stat.bounds = spec.bounds
    return stat, inp


def _rng(random_state):
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    integer = isinstance(random_state, numbers.Integral)
    if random_state is None or isinstance(random_state, np.random.Generator) or (
            integer and not isinstance(random_state, bool)):
        return np.random.default_rng(random_state)  # a Generator: unaltered
    raise ValueError(
        "random_state must be None, an int, a numpy RandomState or Generator, "
        f"got {random_state!r}."
    )


def _interval(statistic, n, groups, *, method, confidence_level, n_resamples, rng,
              batch, **extra):
    """The Bunch of :func:`confidence_interval`: scipy.stats.bootstrap over row indices.

    BCa takes the O(n) jackknife of ``statistic`` when it has one;
    ``beyond_resamples`` is :func:`_bca`'s flag (False for the other methods).
    """
    if n < 2:
        raise ValueError("A bootstrap interval needs at least 2 samples.")
    estimate = float(statistic(np.arange(n)))
    result = Bunch(
        estimate=estimate, low=np.nan, high=np.nan, standard_error=np.nan,
        bootstrap_distribution=np.full(n_resamples, np.nan), beyond_resamples=False,
        method=method, confidence_level=confidence_level, n_resamples=n_resamples,
        **extra,
    )
    if not np.isfinite(estimate):
        # e.g. the NLL of a probability 0 on a true class: resamples mix
        # infinite and finite values, and no interval is defined
        return result

    scipy_method = "percentile" if (method == "BCa" and statistic.jackknife) else method
    if batch is None:
        batch = max(1, min(n_resamples, _BATCH_ELEMENTS // max(1, n * groups)))
    res = scipy.stats.bootstrap(
        (np.arange(n),), lambda idx, axis=-1: statistic(idx), vectorized=True,
        n_resamples=n_resamples, batch=int(batch), axis=-1,
        confidence_level=confidence_level, method=scipy_method, rng=rng,
    )
    theta_b = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    beyond = False
    if method == "BCa" and statistic.jackknife:
        low, high, beyond = _bca(theta_b, estimate, statistic.jackknife(),
                                 1 - confidence_level)
    elif method == "BCa" and theta_b.size > 2 and np.isfinite([low, high]).all():
        # scipy's BCa (smooth ECE): its levels are not returned; an end short of
        # the second smallest (largest) resample is a level below about 1 / B
        tb = np.sort(theta_b)
        beyond = bool(low < tb[1] or high > tb[-2] or not low <= estimate <= high)
    bounds = getattr(statistic, "bounds", None)
    if bounds is not None:  # "basic" reflects the quantiles, past the range
        low, high = (float(np.clip(v, *bounds)) for v in (low, high))
    result.update(low=low, high=high, standard_error=float(res.standard_error),
                  bootstrap_distribution=theta_b, beyond_resamples=beyond)
    return result


def _bca(theta_b, theta_hat, jack, alpha2):
    """``(low, high, beyond)``: BCa (Efron & Tibshirani 1993, eq. 14.9-14.15) as scipy.

    ``jack``: the leave-one-out values of the statistic (with scipy's own
    jackknife this is ``scipy.stats.bootstrap(method="BCa")`` for the same
    resamples); with the rules and the ``beyond_resamples`` flag of the Notes
    of :func:`confidence_interval`.
    """
    alpha = alpha2 / 2
    B = theta_b.shape[0]
    lo_b, hi_b = float(theta_b.min()), float(theta_b.max())
    if lo_b == hi_b:  # no spread (e.g. a paired difference of one method with itself)
        return min(lo_b, theta_hat), max(hi_b, theta_hat), False
    pct = (np.count_nonzero(theta_b < theta_hat)
           + np.count_nonzero(theta_b <= theta_hat)) / (2 * B)
    if pct <= 0 or pct >= 1:
        a1, a2 = alpha, 1 - alpha  # z0 = -inf or +inf: the percentile interval
    else:
        z0 = ndtri(pct)
        n = float(jack.shape[0])
        U = (n - 1) * (jack.mean() - jack)
        num = np.sum(U**3) / n**3
        den = np.sum(U**2) / n**2
        a = num / den**1.5 / 6 if den > 0 else 0.0
        z = z0 + float(ndtri(alpha)) * np.array([1.0, -1.0])  # z0 -+ z_(1-alpha)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            a1, a2 = ndtr(z0 + z / (1 - a * z))
        if not (np.isfinite(a1) and np.isfinite(a2)):
            return np.nan, np.nan, False
    lo, hi = (float(v) for v in scipy.stats.quantile(theta_b, np.array([a1, a2])))
    beyond = bool(a1 < 1 / B or a2 > 1 - 1 / B or not lo <= theta_hat <= hi)
    return min(lo, theta_hat), max(hi, theta_hat), beyond


_SHARED_DOC = """
    method : {"percentile", "basic", "BCa"}, default="percentile"
        Interval of :func:`scipy.stats.bootstrap`. ``"BCa"`` (bias-corrected
        and accelerated) takes its acceleration from the leave-one-out
        (jackknife) values, computed in O(n_samples) from the bin sums for
        every metric except the smooth ECE (for which scipy's jackknife runs,
        ``n_samples`` evaluations of the metric). The ends are clipped to the
        metric's range (see Notes of :func:`confidence_interval`).
    confidence_level : float, default=0.95
        Coverage of the two-sided interval, in (0, 1).
    n_resamples : int, default=1000
        Number of bootstrap resamples.
    random_state : int, numpy Generator or RandomState, or None, default=None
        Seed of the resampling: a fixed value gives the same interval on
        every call (and on NumPy and torch input).
    batch : int, default=None
        Resamples evaluated at once. By default as many as keep a batch of
        row indices below ``2**20`` entries (8 MiB), which bounds the memory
        whatever ``n_resamples``.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights of the metric. Rows are the resampling units: a row
        of weight 2 is drawn as one unit carrying weight 2, so the interval
        is not the one of the data set with that row repeated (the estimate
        is).
    input_type : {"probabilities", "logits"}, default="probabilities"
        How to read ``y_prob``.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob``.
    **metric_params
        Options of the metric: ``kind``, ``class_index``, ``n_bins``,
        ``strategy`` (and ``norm`` for ``calibration_error``) for the binned
        errors, ``kind`` and ``class_index`` for the smooth ECE,
        ``scale_by_half`` for the Brier score."""

#: random_state: also a numpy Generator, so checked by ``_rng``.
_validated = validated("confidence_level", "n_resamples", "batch", "input_type",
                       method=[StrOptions(set(_METHODS))],
                       docs={"shared": _entry(_SHARED_DOC)})


@_validated
def confidence_interval(
    metric,
    y_true,
    y_prob,
    *,
    method="percentile",
    confidence_level=0.95,
    n_resamples=1000,
    random_state=None,
    batch=None,
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    **metric_params,
):
    """Bootstrap confidence interval of a scalar metric.

    Parameters
    ----------
    metric : str or callable
        The metric: one of :func:`calibration_error`,
        :func:`expected_calibration_error`, :func:`rms_calibration_error`,
        :func:`maximum_calibration_error`,
        :func:`debiased_calibration_error`, :func:`smooth_calibration_error`,
        :func:`brier_score`, :func:`negative_log_likelihood`, or their names
        (``"ece"``, ``"rmsce"``, ``"mce"``, ``"debiased_calibration_error"``,
        ``"smooth_ece"``, ``"brier"``, ``"nll"``), or ``"accuracy"`` (of the
        argmax).
    y_true : array-like of shape (n_samples,)
        True labels (a ``torch.Tensor`` is accepted).
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Probabilities, or logits with ``input_type="logits"``; a
        ``torch.Tensor`` is reduced on its device.
    %(shared)s

    Returns
    -------
    result : :class:`sklearn.utils.Bunch`
        - ``estimate`` (float): the metric on the full sample (equal to the
          metric function's value);
        - ``low``, ``high`` (float): the interval;
        - ``standard_error`` (float): standard deviation of the bootstrap
          distribution;
        - ``bootstrap_distribution`` (ndarray of shape (n_resamples,));
        - ``beyond_resamples`` (bool): True when a ``method="BCa"``
          interval is not backed by the resamples, so that one side is too
          narrow (see Notes); always False for the other methods;
        - ``method``, ``confidence_level``, ``n_resamples``.

    Raises
    ------
    ValueError
        As the metric, and for an unknown metric or method, ``n_resamples``
        below 2, a ``confidence_level`` outside (0, 1) or fewer than 2
        samples.
    TypeError
        For a metric option the metric does not take.

    See Also
    --------
    paired_difference_interval : Interval of the difference of a metric
        between two models on the same rows.
    binomial_interval : Exact per-bin intervals of a reliability curve.

    Notes
    -----
    Each bootstrap resample draws ``n_samples`` rows with replacement
    (:func:`scipy.stats.bootstrap`) and recomputes the metric. For the binned
    errors the **bins stay those of the full sample** (equal-mass edges are
    not re-estimated), so the interval is the one of the calibration error
    for these bins. Before resampling, ``y_prob`` is reduced in one chunked
    pass to per-row statistics: for a binned error each row's bin, score
    and outcome (``(n_samples, n_classes)`` of them for
    ``kind="classwise"`` without ``class_index``, one per class), for the
    Brier score, NLL and accuracy each row's loss. A resample re-sums them
    with ``numpy.bincount``; the probabilities are never copied.

    The interval ends are clipped to the range of the metric: [0, 1] for
    the calibration errors and the accuracy, [0, 2] for the Brier score,
    [0, inf) for the NLL (not for :func:`paired_difference_interval`, whose
    difference can have either sign). Only the ``"basic"`` interval
    :math:`[2\\hat\\theta - q_{1-\\alpha/2}, 2\\hat\\theta - q_{\\alpha/2}]`
    can leave the range: it reflects the bootstrap quantiles about the
    estimate, and for a metric near 0 (the debiased error of a calibrated
    model, clipped at 0 itself) it would go below 0. Prefer ``"BCa"`` or
    ``"percentile"`` for such metrics.

    Binned calibration errors of a well-calibrated model are biased upwards
    and their bootstrap distribution sits above the estimate, so percentile
    intervals of a small ECE rarely cover 0; BCa corrects for the median bias
    of the bootstrap distribution. Use :func:`debiased_calibration_error`
    for a less biased estimate.

    A metric that is not finite on the full sample (the NLL when a true
    class has probability 0) has no interval: ``low``, ``high`` and
    ``standard_error`` are NaN and ``bootstrap_distribution`` is NaN, with
    no resampling.

    ``"BCa"`` intervals (the O(n) jackknife path, every metric but the
    smooth ECE) follow three rules where the BCa formula is undefined or
    misleading: when every resample gives the same value (no spread, e.g. a
    paired difference of a method with itself) the interval is the point
    ``[estimate, estimate]`` (or spans the estimate and that value); when
    every resample lies on one side of the estimate (infinite bias
    correction) it is the percentile interval; and it always contains the
    estimate (with few resamples BCa can place both ends on one side of it:
    the nearer end is moved to the estimate). An end whose bias-corrected
    level :math:`\\alpha_1` (or :math:`1 - \\alpha_2`) is below
    ``1 / n_resamples`` is, as in scipy, read between the two smallest
    (largest) resamples: BCa's end lies further out than the resamples
    reach, so that side is too narrow; raise ``n_resamples``. This is common
    for the binned ECE of a well-calibrated model (see above): its lower end
    is then about the smallest resample, and the estimate may be the upper
    end. Both cases (for the smooth ECE, whose BCa is scipy's: an end short
    of the second smallest or largest resample, or the estimate outside) set
    ``beyond_resamples``; ``skcal benchmark`` and ``skcal report`` mark them.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap",
       Chapman & Hall, 1993 (percentile: ch. 13; BCa: ch. 14.3, eq. 14.9-14.15).
    .. [2] A. Kumar, P. Liang and T. Ma, "Verified Uncertainty Calibration",
       NeurIPS 2019 (bootstrap intervals of calibration errors).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.metrics import confidence_interval
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p).astype(int)
    >>> ci = confidence_interval("brier", y, p, random_state=0)
    >>> bool(ci.low < ci.estimate < ci.high)
    True
    """
    rng = _rng(random_state)
    stat, inp = _build(metric, y_true, y_prob, sample_weight, input_type, labels,
                       metric_params)
    return _interval(
        stat, inp.scores.shape[0], getattr(stat, "G", 1), method=method,
        confidence_level=confidence_level, n_resamples=n_resamples,
        rng=rng, batch=batch,
    )


class _Difference:
    def __init__(self, a, b):
        self.a, self.b = a, b
        ja, jb = getattr(a, "jackknife", None), getattr(b, "jackknife", None)
        self.jackknife = (lambda: ja() - jb()) if ja and jb else None

    def __call__(self, idx):
        return self.a(idx) - self.b(idx)


@_validated
def paired_difference_interval(
    metric,
    y_true,
    y_prob_a,
    y_prob_b,
    *,
    method="percentile",
    confidence_level=0.95,
    n_resamples=1000,
    random_state=None,
    batch=None,
    sample_weight=None,
    input_type="probabilities",
    labels=None,
    **metric_params,
):
    """Paired bootstrap interval of ``metric(y_prob_a) - metric(y_prob_b)``.

    Both models are evaluated on the **same** resampled rows, so the
    interval reflects the noise of the difference, which is much smaller
    than that of either metric when the two models err on the same rows.
    An interval that contains 0 means that the test set cannot tell the two
    models apart on this metric at this level.

    Parameters
    ----------
    metric : str or callable
        As in :func:`confidence_interval`.
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob_a, y_prob_b : array-like of shape (n_samples, n_classes) or (n_samples,)
        The two models' probabilities (or logits) for the same rows.
    %(shared)s

    Returns
    -------
    result : :class:`sklearn.utils.Bunch`
        As :func:`confidence_interval`, for the difference: ``estimate`` is
        ``metric(a) - metric(b)``; also ``estimate_a`` and ``estimate_b``.

    Raises
    ------
    ValueError
        As :func:`confidence_interval`, or if the two inputs have different
        numbers of rows.

    See Also
    --------
    confidence_interval

    Notes
    -----
    For binned errors each model keeps its own full-sample bins. The same
    ``random_state`` gives the same resampled rows as
    :func:`confidence_interval`.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap",
       Chapman & Hall, 1993.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.metrics import paired_difference_interval
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p).astype(int)
    >>> d = paired_difference_interval("brier", y, p, p, random_state=0)
    >>> (d.estimate, d.low, d.high)
    (0.0, 0.0, 0.0)
    """
    rng = _rng(random_state)
    sa, inp_a = _build(metric, y_true, y_prob_a, sample_weight, input_type, labels,
                       metric_params)
    sb, _ = _build(metric, y_true, y_prob_b, sample_weight, input_type, labels,
                   metric_params)
    n = inp_a.scores.shape[0]
    return _interval(
        _Difference(sa, sb), n, max(getattr(sa, "G", 1), getattr(sb, "G", 1)),
        method=method, confidence_level=confidence_level, n_resamples=n_resamples,
        rng=rng, batch=batch,
        estimate_a=float(sa(np.arange(n))), estimate_b=float(sb(np.arange(n))),
    )
