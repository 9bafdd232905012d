"""Brier score and log loss = miscalibration - discrimination + uncertainty."""

import numpy as np
from scipy.optimize import isotonic_regression
from scipy.special import xlogy
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions

from . import _binning, _rows
from ._events import event_groups
from ._params import _check_kind, _entry, validated
from ._validation import _check_inputs, _check_n_bins

__all__ = ["brier_decomposition", "log_loss_decomposition"]


def _brier(p, o):
    return (p - o) ** 2


def _log_loss(p, o):
    # 0 log 0 = 0: a recalibrated probability of 0 or 1 only occurs where every
    # outcome agrees with it
    return -(xlogy(o, p) + xlogy(1 - o, 1 - p))


def _recalibrated(s, o, w, method, n_bins, strategy):
    """Recalibrated probabilities of the rows (of positive weight ``w``): isotonic
    (CORP) or per-bin frequency, and for binned the per-bin mean score."""
    if method == "corp":
        _, group = np.unique(s, return_inverse=True)  # tied scores pooled
        Wg = np.bincount(group, w)  # > 0: the caller dropped zero-weight rows
        fit = isotonic_regression(np.bincount(group, w * o) / Wg, weights=Wg).x
        return fit[group], None
    ids, nb = _binning.bin_ids(s, w, n_bins, strategy)
    Wb = np.bincount(ids, w, nb)
    Tb = np.bincount(ids, w * o, nb)
    Pb = np.bincount(ids, w * s, nb)
    freq = np.divide(Tb, Wb, out=np.zeros(nb), where=Wb > 0)
    mean = np.divide(Pb, Wb, out=np.zeros(nb), where=Wb > 0)
    return freq[ids], mean[ids]


def _decompose_event(s, o, w, score, method, n_bins, strategy):
    keep = w > 0  # zero-weight rows neither count nor move the fits
    if not keep.all():
        s, o, w = s[keep], o[keep], w[keep]
    W = np.sum(w)
    base = np.sum(w * o) / W
    recal, bin_mean = _recalibrated(s, o, w, method, n_bins, strategy)
    total = np.sum(w * score(s, o)) / W
    recal_score = np.sum(w * score(recal, o)) / W
    unc = np.sum(w * score(np.full_like(s, base), o)) / W
    out = {
        "score": total,
        "miscalibration": total - recal_score,
        "discrimination": unc - recal_score,
        "uncertainty": unc,
    }
    if bin_mean is not None and score is _brier:
        # Murphy's reliability: per-bin mean score against per-bin frequency
        out["reliability"] = np.sum(w * _brier(bin_mean, recal)) / W
    return out


def _decomposition(score, name, doc, *, title, scorer, other, returns=""):
    """The public decomposition ``name`` of the score ``score(p, o)`` (per row).

    Its docstring is :data:`_DOC` filled with the texts given.
    """

    def decomposition(
        y_true,
        y_prob,
        *,
        method="corp",
        kind="classwise",
        class_index=None,
        n_bins=15,
        strategy="uniform",
        sample_weight=None,
        scale_by_half="auto",
        input_type="probabilities",
        labels=None,
        pos_label=None,
    ):
        kind = _check_kind(kind, class_index)
        inp = _check_inputs(
            y_true, y_prob, sample_weight=sample_weight, input_type=input_type,
            labels=labels, pos_label=pos_label, binary=kind == "binary",
        )
        n_bins = _check_n_bins(n_bins, inp.y.shape[0])
        w = (np.ones(inp.scores.shape[0]) if inp.weight is None
             else _rows.ops(inp).to_numpy(inp.weight))
        n_events, events = event_groups(inp, kind, class_index)
        half = n_events > 1 and _rows.halved(scale_by_half, _rows.n_columns(inp))
        parts = [_decompose_event(s, o, w, score, method, n_bins, strategy)
                 for s, o in events]
        factor = 0.5 if half else 1.0
        terms = {k: float(factor * sum(p[k] for p in parts)) for k in parts[0]}
        return Bunch(**terms, method=method)

    decomposition.__name__ = decomposition.__qualname__ = name
    decomposition.__doc__ = _DOC.format(
        title=title, scorer=scorer, other=other, returns=returns, doc=doc
    )
    return validated(
        "kind", "class_index", "n_bins", "strategy", "input_type", "scale_by_half",
        method=[StrOptions({"corp", "binned"})],
        docs={"params": _PARAMS, "notes": _NOTES},
    )(decomposition)


_PARAMS = """
    y_true : array-like of shape (n_samples,)
        True labels (a ``torch.Tensor`` is accepted).
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Probabilities (or logits with ``input_type="logits"``).
    method : {"corp", "binned"}, default="corp"
        ``"corp"``: recalibrate by isotonic regression (pool-adjacent-
        violators, tied scores pooled), the CORP approach of Dimitriadis,
        Gneiting and Jordan (2021): no tuning parameter, and the
        miscalibration term is never negative. ``"binned"``: recalibrate by
        the observed frequency of each bin (Murphy 1973).
    kind : {"classwise", "top-label", "binary"}, default="classwise"
        Which binary events are decomposed. ``"classwise"``: every class
        against the rest, terms summed over classes, halved for 2 classes
        (see ``scale_by_half``); ``"binary"``: the positive class;
        ``"top-label"``: the confidence against correctness (a score of
        that event, not of the multiclass forecast). With ``class_index``,
        ``"classwise"`` decomposes one class.
    class_index : int, default=None
        One column of ``y_prob`` for ``kind="classwise"``.
    n_bins : int, default=15
        Bins for ``method="binned"``.
    strategy : {"uniform", "quantile"}, default="uniform"
        Bin rule for ``method="binned"`` (as in :func:`calibration_error`).
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights (a weight of 2 is a repeated row).
    scale_by_half : bool or "auto", default="auto"
        For ``kind="classwise"`` over all classes: halve the sum over classes
        (``"auto"``: for 2 classes only, the convention of
        :func:`brier_score`)."""

_NOTES = """
    With :math:`S` the mean score, :math:`\\hat p_i` the recalibrated
    probability of row :math:`i` (isotonic fit of the outcomes on the scores
    for CORP, its bin's observed frequency for binned) and :math:`\\bar o`
    the base rate:

    .. math::

        \\mathrm{MCB} = S(s, o) - S(\\hat p, o),\\quad
        \\mathrm{DSC} = S(\\bar o, o) - S(\\hat p, o),\\quad
        \\mathrm{UNC} = S(\\bar o, o),\\qquad
        S(s, o) = \\mathrm{MCB} - \\mathrm{DSC} + \\mathrm{UNC}

    exactly (up to rounding). With CORP, MCB and DSC are non-negative,
    because the isotonic fit minimises every proper score among monotone
    recalibrations (Dimitriadis et al. 2021, Theorem 1)."""
_PARAMS, _NOTES = _entry(_PARAMS), _entry(_NOTES)

#: The docstring both decompositions share; :func:`_decomposition` fills it.
_DOC = """{title} = miscalibration - discrimination + uncertainty.

    Parameters
    ----------
    %(params)s
    %(short_tail)s

    Returns
    -------
    result : :class:`sklearn.utils.Bunch`
        ``score``, ``miscalibration``, ``discrimination``, ``uncertainty``
        (floats, with ``score = miscalibration - discrimination +
        uncertainty``) and ``method``.{returns}

    Raises
    ------
    ValueError
        As :func:`{scorer}`, and for invalid options.

    See Also
    --------
    {other}, {scorer}

    Notes
    -----
    %(notes)s
{doc}"""


brier_decomposition = _decomposition(
    _brier, "brier_decomposition", title="Brier score", scorer="brier_score",
    other="log_loss_decomposition", returns=""" For ``method="binned"`` also
        ``reliability``: Murphy's :math:`\\sum_m w_m (\\bar s_m - \\bar o_m)^2`,
        which differs from ``miscalibration`` by the within-bin variance and
        covariance of Stephenson et al. (2008).""", doc="""
    For the binned method, DSC is Murphy's resolution
    :math:`\\sum_m w_m (\\bar o_m - \\bar o)^2` and UNC is
    :math:`\\bar o (1 - \\bar o)`; ``miscalibration`` equals Murphy's
    reliability only when the scores are constant within bins. For
    ``kind="classwise"``, ``score`` is :func:`brier_score` with the same
    ``scale_by_half``.

    References
    ----------
    .. [1] A. H. Murphy, "A New Vector Partition of the Probability Score",
       Journal of Applied Meteorology 12, 1973.
    .. [2] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
       diagrams for probabilistic classifiers", PNAS 118(8), 2021.
    .. [3] D. B. Stephenson, C. A. S. Coelho and I. T. Jolliffe, "Two Extra
       Components in the Brier Score Decomposition", Weather and Forecasting
       23, 2008.

    Examples
    --------
    >>> from skcal.metrics import brier_decomposition
    >>> d = brier_decomposition([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.6], kind="binary")
    >>> round(d.score, 4), round(d.miscalibration - d.discrimination + d.uncertainty, 4)
    (0.185, 0.185)
    """)


log_loss_decomposition = _decomposition(
    _log_loss, "log_loss_decomposition", title="Log loss",
    scorer="negative_log_likelihood", other="brier_decomposition", doc="""
    The score is the binary log loss (natural log) of each event,
    :math:`-o \\log s - (1 - o) \\log(1 - s)`; UNC is the entropy of the base
    rate. For ``kind="binary"`` (and ``"classwise"`` with 2 classes) the
    score equals :func:`negative_log_likelihood`; for more classes
    ``"classwise"`` sums the one-vs-rest log losses, which is not the
    multiclass NLL. A score of exactly 0 or 1 on a row whose outcome
    disagrees makes the score and the miscalibration infinite.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
       diagrams for probabilistic classifiers", PNAS 118(8), 2021.
    .. [2] J. Bröcker, "Reliability, sufficiency, and the decomposition of
       proper scores", Quarterly Journal of the Royal Meteorological Society
       135, 2009.

    Examples
    --------
    >>> from skcal.metrics import log_loss_decomposition
    >>> d = log_loss_decomposition([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.6], kind="binary")
    >>> round(d.score - (d.miscalibration - d.discrimination + d.uncertainty), 12)
    0.0
    """)
