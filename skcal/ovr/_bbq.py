"""Bayesian Binning into Quantiles (Naeini, Cooper & Hauskrecht, AAAI 2015)."""

import math
from numbers import Real

import numpy as np
from scipy.special import expit, gammaln, logsumexp
from sklearn.utils._param_validation import Interval

from ..base import BaseCalibrator
from ..utils._docstrings import substitute_docstring
from ._base import HostStepMapCalibrator, unzip_maps, warn_constant_scores
from ._binning import cut_edges, distinct_scores, unique_scores
from ..utils._weights import weight_unit
from ..utils._params import store_params

__all__ = ["BBQCalibrator", "fit_bbq", "bbq_bin_range"]


def bbq_bin_range(n, C=10.0):
    """Numbers of bins of the BBQ models: ``floor(n^(1/3) / C) .. ceil(C n^(1/3))``.

    As in Naeini et al. (2015, Section 3) and netcal: at least 1, at most
    ``ceil(n / 5)``.
    """
    r = n ** (1.0 / 3.0)
    lo = int(max(1, math.floor(r / C)))
    hi = int(max(lo, min(math.ceil(n / 5.0), math.ceil(r * C))))
    return lo, hi


def fit_bbq(s, y, sample_weight=None, *, C=10.0, ess=2.0):
    """Fit BBQ: Bayesian model averaging of equal-mass histogram models.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
        Scores (log-odds of the positive class); the priors use ``sigmoid(s)``.
    y : ndarray of shape (n_samples,), bool
    sample_weight : ndarray of shape (n_samples,), default=None
        Counted in rows of :func:`~skcal.utils._weights.weight_unit`.
    C : float, default=10.0
        The models have ``B`` equal-mass bins for every ``B`` in
        :func:`bbq_bin_range`.
    ess : float, default=2.0
        Equivalent sample size ``N'`` of the BDeu prior.

    Returns
    -------
    edges : ndarray
        Edges (log-odds) of the merged step function: the union of the cuts
        of the models in the average.
    values : ndarray of shape (len(edges) + 1,)
        Model-averaged probability on each cell.
    n_bins : ndarray of int
        Bins of each model.
    log_weights : ndarray
        Normalised log posterior weight of each model.
    """
    u, W, Y = distinct_scores(s, y, sample_weight)
    unit = weight_unit(sample_weight)
    W, Y = W / unit, Y / unit
    k = u.size
    total = float(W.sum())
    if k == 1:  # constant scores: the base rate (see BBQCalibrator)
        return np.empty(0), np.array([float(Y.sum()) / total]), np.array([1]), np.zeros(1)
    # rows: a whole number up to rounding (weight_unit), rounded so that
    # rescaled weights get the same range of models
    lo, hi = bbq_bin_range(max(1.0, round(total)), C)
    cum_w = np.concatenate([[0.0], np.cumsum(W)])
    cum_y = np.concatenate([[0.0], np.cumsum(Y)])
    # negatives summed on their own: a bin without one has exactly 0 (not a
    # rounding residue, where gammaln(x + beta) with beta ~ 1e-16 is steep)
    cum_n = np.concatenate([[0.0], np.cumsum(W - Y)])
    # every model at once, as flat arrays (the rule of equal_mass_cuts for
    # each B): the cuts of model B are its targets b / B of the total weight,
    # b = 1 .. B - 1, without the last distinct score and without repeats
    Bs = np.arange(lo, hi + 1)
    T = Bs.size
    t_model = np.repeat(np.arange(T), Bs - 1)
    t_first = np.concatenate([[0], np.cumsum(Bs - 1)[:-1]])
    b = np.arange(t_model.size) - t_first[t_model] + 1
    targets = cum_w[-1] * (b / Bs[t_model] - 1e-10)
    j = np.searchsorted(cum_w[1:], targets, side="left")
    keep = j < k - 1
    keep[1:] &= (j[1:] != j[:-1]) | (t_model[1:] != t_model[:-1])
    cuts, c_model = j[keep], t_model[keep]
    n_cuts = np.bincount(c_model, minlength=T)
    nb = n_cuts + 1  # bins of each model
    c_first = np.concatenate([[0], np.cumsum(n_cuts)[:-1]])  # first cut of each model
    b_first = c_first + np.arange(T)  # first bin of each model
    b_model = np.repeat(np.arange(T), nb)
    # bin b of a model covers distinct scores start[b] .. stop[b] - 1; cut r
    # of a model closes its bin r
    at = np.arange(cuts.size) + c_model
    start = np.zeros(nb.sum(), np.intp)
    stop = np.full(nb.sum(), k, np.intp)
    stop[at], start[at + 1] = cuts + 1, cuts + 1
    e = expit(cut_edges(u, cuts))
    lo_p, hi_p = np.zeros(start.size), np.ones(start.size)
    hi_p[at], lo_p[at + 1] = e, e
    m = np.maximum(cum_y[stop] - cum_y[start], 0.0)
    neg = np.maximum(cum_n[stop] - cum_n[start], 0.0)
    N = m + neg
    p_mid = np.clip(0.5 * (lo_p + hi_p), 1e-300, 1.0 - 1e-16)
    prior = ess / nb[b_model]  # N' / B of each bin's model
    a = prior * p_mid
    bb = prior * (1.0 - p_mid)
    # BDeu marginal likelihood (Naeini et al. 2015, Eq. 2), summed per model
    terms = (gammaln(prior) - gammaln(N + prior) + gammaln(m + a) - gammaln(a)
             + gammaln(neg + bb) - gammaln(bb))
    ends = np.concatenate([b_first, [terms.size]])
    log_ml = np.array([float(np.sum(terms[ends[i]:ends[i + 1]])) for i in range(T)])
    vals = (m + a) / (N + a + bb)
    log_w = log_ml - logsumexp(log_ml)
    # merge: the average is constant between consecutive cuts of the models
    # it keeps; models below exp(-50) of the total weight are left out (their
    # share is below float64 resolution), and so are their cuts: the average
    # does not change there
    kept = np.flatnonzero(log_w >= log_w.max() - 50.0)
    mark = np.zeros(k, dtype=bool)  # the sorted union of the kept cuts (indices < k)
    mark[cuts[np.isin(c_model, kept)]] = True
    union = np.flatnonzero(mark)
    cell_last = np.concatenate([union, [k - 1]])  # last distinct score of each cell
    values = np.zeros(union.size + 1)
    for i in kept:
        cm = cuts[c_first[i]:c_first[i] + n_cuts[i]]
        vm = vals[b_first[i]:b_first[i] + nb[i]]
        values += math.exp(log_w[i]) * vm[np.searchsorted(cm, cell_last, side="left")]
    values /= np.exp(log_w[kept]).sum()
    edges = cut_edges(u, union) if union.size else np.empty(0)
    return edges, np.clip(values, 0.0, 1.0), Bs, log_w


@substitute_docstring
class BBQCalibrator(HostStepMapCalibrator):
    """Bayesian Binning into Quantiles: a posterior average of equal-mass histograms.

    Parameters
    ----------
    %(calibrator_params)s
    C : float, default=10.0
        Range of the models: ``B`` bins for every integer ``B`` from
        ``floor(N^(1/3) / C)`` to ``ceil(C N^(1/3))`` (at most ``N / 5``), ``N``
        the calibration weight.
    ess : float, default=2.0
        Equivalent sample size ``N'`` of the BDeu prior.

    Attributes
    ----------
    bin_edges_ : ndarray or list of ndarray
        Edges (log-odds) of the averaged step function: the union of the
        edges of the models in the average (those within ``exp(-50)`` of the
        largest weight).
    bin_probabilities_ : ndarray or list of ndarray
        Averaged probability on each cell.
    model_n_bins_ : ndarray of int
        Bins of each model (the same range for every class when the classes
        share the calibration weight).
    model_log_weights_ : ndarray or list of ndarray
        Normalised log posterior weights of the models.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    skcal.HistogramCalibrator : one binning.

    Notes
    -----
    Each model ``M`` is a histogram with ``B`` equal-mass bins of the scores
    (the tie and edge rules of :class:`~skcal.HistogramCalibrator`). Its score
    is the BDeu marginal likelihood (Naeini et al. 2015, Eq. 2):

    .. math::

        P(D | M) = \\prod_{b=1}^{B} \\frac{\\Gamma(N'/B)}{\\Gamma(N_b + N'/B)}
        \\frac{\\Gamma(m_b + \\alpha_b)}{\\Gamma(\\alpha_b)}
        \\frac{\\Gamma(n_b + \\beta_b)}{\\Gamma(\\beta_b)},

    with ``N_b, m_b, n_b`` the bin's total, positive and negative (weighted)
    counts, ``alpha_b = N'/B p_b``, ``beta_b = N'/B (1 - p_b)`` and ``p_b`` the
    midpoint of the bin's interval of probabilities ``sigmoid(s)`` (the first
    bin starts at 0, the last ends at 1). With a uniform prior over models the
    posterior weight of ``M`` is proportional to ``P(D | M)``; the prediction
    is ``sum_M P(M | D) (m_b + alpha_b) / (N_b + N'/B)`` over the models' bins
    containing the score (models whose weight is below ``exp(-50)`` of the
    largest are dropped: their share is below float64 resolution).
    Everything is deterministic (no sampling). Constant scores give the
    base rate, with a ``UserWarning``.

    **Cost.** A direct implementation evaluates every model at prediction:
    ``T`` lookups per score for ``T ~ C N^(1/3)`` models (about 1000 at
    ``N = 10^6``). skcal sorts the scores once (``O(N log N)``), scores every
    model from prefix sums in ``O(B)`` (all models at once, as flat arrays),
    and merges the averaged map into one step function on the union of the
    edges of the models it keeps (at most ``sum_B B ~ C^2 N^(2/3) / 2``
    cells, never more than the distinct scores, and in practice far fewer:
    the posterior keeps a few dozen models): a prediction is one binary
    search, ``O(log N)``.

    netcal's ``BBQ`` (the reference implementation used by the benchmark)
    scores the same family of models by BIC by default and keeps the models
    past an "elbow" of the scores; Naeini et al.'s BDeu average is used here.

    The counts ``N_b, m_b, n_b`` and ``N`` of the range are in rows, the
    unit of the prior's ``N'``:

    %(weight_unit)s

    References
    ----------
    M. P. Naeini, G. F. Cooper, M. Hauskrecht, "Obtaining well calibrated
    probabilities using Bayesian binning", AAAI 2015.

    Examples
    --------
    >>> from skcal import BBQCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)
    >>> P = BBQCalibrator().fit(X, y).predict_proba(X)
    >>> bool(P.min() > 0)  # an average of binnings with Beta priors: never 0
    True
    """

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "C": [Interval(Real, 1, None, closed="left")],
        "ess": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, *, input_type="logits", classes=None, backend="auto", C=10.0,
                 ess=2.0):
        store_params(self, locals())

    def _fit_map(self, s, t, sample_weight, label):
        if unique_scores(s, sample_weight).size == 1:
            warn_constant_scores("BBQ", label)
        return fit_bbq(s, t, sample_weight, C=self.C, ess=self.ess)

    def _set_maps(self, maps):
        self.model_n_bins_ = maps[0][2]
        self.bin_edges_, self.bin_probabilities_, _, self.model_log_weights_ = unzip_maps(maps)
