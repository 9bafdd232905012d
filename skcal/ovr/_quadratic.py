"""Quadratic logistic scaling: ``sigmoid(a s + q s^2 + b)`` of the log-odds score.

:func:`fit_quadratic` solves one binary problem: a logistic regression on
``(s, s^2)`` with Platt's target smoothing and start
(:func:`skcal.ovr._platt.fit_platt`), solved by the exact Newton solver of
:mod:`skcal.ovr._logistic`. The one-vs-rest scores, the multiclass
combination and the exports come from :mod:`skcal.ovr._base`.
"""

import math

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from .._backend._ovr import param_like
from ..base import BaseCalibrator, SOLVER_CONSTRAINTS
from ..utils._docstrings import substitute_docstring
from ..utils._weights import weight_unit
from ..utils.validation import DEFAULT_INPUT_TYPE
from ._base import OneVsRestCalibrator, unzip_maps, warn
from ._logistic import DenseDesign, WorkBuffers, fit_logistic_bounded, logistic_evaluator, softplus
from ._platt import _FLAT_SD, _is_separable, fit_platt, separable_message
from ..utils._params import store_params

__all__ = ["QuadraticScaler", "fit_quadratic"]

#: Without target smoothing, a fitted mean loss below this means the scores
#: separate the classes by a threshold or an interval (a parabola's sign):
#: the likelihood has no maximiser.
SEPARATED_NLL = 1e-6


#: Fits on at least this many rows start from the optimum of a weighted
#: summary of the data in :data:`SUMMARY_BINS` equal-width bins of the
#: standardised score (exact class weights per bin, bin-mean features): the
#: full-data Newton iteration then starts within ~1e-7 of the optimum and
#: usually stops after 1-2 passes.
SUMMARY_MIN_ROWS = 20_000
SUMMARY_BINS = 16384
#: The summary's Newton iteration stops at this half squared decrement and
#: takes its last full step: Newton's quadratic convergence lands it within
#: ~1e-16 of the summary's optimum, one summary pass fewer than 1e-14
#: (measured on 112 fits of the benchmark's binary and one-vs-rest problems,
#: weighted and not: the same full-data passes as from 1e-14, one in 111 of
#: them and two in one; fitted maps within 5e-11 relative).
SUMMARY_TOL = 1e-8


def _summary_start(u, v, t, w, theta0, max_iter, work=None, buffers=None, candidate=None):
    """Optimum of the binned summary of ``(u, v, t, w)`` (see :data:`SUMMARY_BINS`), or ``theta0``.

    ``w`` None: unit weights; ``work`` an n-vector the bin positions may be
    computed in (overwritten); ``buffers`` a :class:`WorkBuffers` lending
    the vector of bin indices. Also returns whether the bins alone show
    that the 0/1 targets ``t`` (rows of positive weight) are not separated
    by a threshold of ``u``: some positive lies in a lower bin than some
    negative and some negative in a lower bin than some positive (the bins
    are monotone in ``u``); False when undecided. ``theta0``: Platt's start
    ``(0, 0, b)``; ``candidate``: another start (same parametrisation),
    taken when the summary's loss is lower there.
    """
    lo, hi = float(u.min()), float(u.max())
    if not hi > lo:
        return theta0, 0, False
    idx = np.subtract(u, lo, out=work)
    idx *= (SUMMARY_BINS - 1e-9) / (hi - lo)
    if buffers is None:
        idx = idx.astype(np.intp)
    else:
        bins = buffers.get("bins", idx.shape, np.intp)
        np.copyto(bins, idx, casting="unsafe")  # astype's truncation, in place
        idx = bins

    def binsum(x):
        return np.bincount(idx, weights=x if w is None else w * x, minlength=SUMMARY_BINS)

    wb = np.bincount(idx, weights=w, minlength=SUMMARY_BINS).astype(np.float64)
    tsum = binsum(t)
    # a bin holds a positive iff its summed w t > 0, a negative iff its summed w
    # exceeds that (equal sums when every row is positive: the same additions)
    pos, neg = np.flatnonzero(tsum > 0), np.flatnonzero(wb > tsum)
    interleaved = bool(pos.size and neg.size and pos[0] < neg[-1] and neg[0] < pos[-1])
    keep = wb > 0
    wb = wb[keep]
    tb = tsum[keep] / wb
    ub, vb = (binsum(x)[keep] / wb for x in (u, v))
    Xb = DenseDesign.from_rows(np.stack([ub, vb]), intercept=True)
    # loss, gradient and Hessian at (0, 0, b) from moments: f = b in every bin
    b, M, c = float(theta0[2]), Xb.gram(wb), Xb.rmatvec(wb * tb)
    wbsum, p0 = M[-1, -1], float(expit(b))
    at0 = (float(softplus(np.array([b]))[0]) - b * c[-1] / wbsum,
           (p0 * M[-1] - c) / wbsum, p0 * (1.0 - p0) / wbsum * M)
    start, known = theta0, at0
    if candidate is not None and np.all(np.isfinite(candidate)):
        at_c = tuple(v[0] for v in logistic_evaluator(Xb, tb, wb)(None, candidate[None]))
        if at_c[0] < at0[0]:
            start, known = candidate, at_c
    theta, it, ok = fit_logistic_bounded(Xb, tb, wb, theta0=start, tol=SUMMARY_TOL,
                                         max_iter=max_iter, start=known)
    return (theta if ok and np.all(np.isfinite(theta)) else theta0), it, interleaved


#: Relative rounding of ``q s^2 + a s + b`` (in units of its result) above
#: which the fit warns: ``eps (max |s| / spread)^2``.
FAR_FROM_ZERO_ROUNDING = 1e-6


def _warn_if_far_from_zero(s, label):
    """Warn when scores far from 0 next to their spread make ``q s^2 + a s + b`` cancel.

    The map is stored and evaluated in the scores' own coordinates, where its
    terms are about ``(max |s| / spread)^2`` times its value: float64 rounds
    it to about ``eps`` times that (probabilities off by ~1e-3 for scores
    near 1e8 spread over 20; all information lost near 1e10).
    """
    lo, hi = float(np.min(s)), float(np.max(s))
    spread, big = hi - lo, max(abs(lo), abs(hi))
    if not spread > 0:
        return
    rounding = np.finfo(np.float64).eps * (big / spread) ** 2
    if rounding > FAR_FROM_ZERO_ROUNDING:
        warn(f"Quadratic scaling of {label}: the scores lie within {lo:.10g}..{hi:.10g}, "
             f"far from 0 for their spread {spread:.3g}; the map q s^2 + a s + b "
             f"is evaluated on them and rounds to about {rounding:.1e} times its "
             "value, so its probabilities are not accurate. Subtract a constant "
             "(e.g. the mean score) from the scores before calibrating.")


def _fit_buffers(n):
    """A :class:`WorkBuffers` holding one fit's eleven n-vectors (targets, design, bins, evaluation) in one block."""
    return WorkBuffers(11 * (8 * n + 64))


def fit_quadratic(s, y, sample_weight=None, *, target_smoothing=True, tol=1e-12, max_iter=100,
                  buffers=None, start=None):
    """Fit ``P(y = 1 | s) = sigmoid(a s + q s^2 + b)`` by (smoothed) maximum likelihood.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
        Scores (log-odds of the positive class), finite; used in float64.
    y : ndarray of shape (n_samples,), bool
        True for the positive class.
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights (unit weights when None).
    target_smoothing : bool, default=True
        Platt's targets ``t+ = (N+ + 1) / (N+ + 2)``, ``t- = 1 / (N- + 2)``
        (``N+``, ``N-``: rows of each class with positive weight), exactly
        as :func:`~skcal.ovr._platt.fit_platt`; False: targets 1 and 0.
    tol : float, default=1e-12
        Stop when half the squared Newton decrement (the decrease of the
        mean loss the quadratic model still predicts) is at most ``tol``.
    max_iter : int, default=100
        Maximum number of Newton iterations (the binned summary's and the full
        fit each).
    buffers : skcal.ovr._logistic.WorkBuffers, default=None
        Lends the fit's n-vectors (design, targets, bins, evaluation work),
        for a loop of fits on equally long scores (one per class).
    start : tuple (a, q, b), default=None
        A candidate start (e.g. the previous class's map), taken for the
        binned summary's iteration when its loss there is lower than that
        of Platt's start; it changes the iterations, not the optimum.

    Returns
    -------
    a, q, b : float
        Linear, quadratic and constant coefficients on the original scale
        of ``s``.
    n_iter : int
        Newton iterations (binned summary and full data together).
    status : {"converged", "separable", "max_iter", "line_search"}
        ``"separable"``: without target smoothing the scores separate the
        classes by a threshold or, the map being quadratic, by an interval
        (fitted mean loss below 1e-6), or a class is absent, so the
        likelihood has no maximiser;
        the returned map is where Newton stopped. ``"line_search"``: only
        from Platt's fit on constant scores (see
        :func:`~skcal.ovr._platt.fit_platt`).

    Notes
    -----
    With ``f_i = a s_i + q s_i^2 + b`` the objective is the weighted mean
    cross-entropy ``F = sum_i w_i [log(1 + exp(f_i)) - t_i f_i] / sum_i w_i``,
    convex in ``(a, q, b)``. It is solved on standardised features
    ``u = (s - m) / d`` (weighted mean and sd) and ``(u^2 - 1) / d2``
    (``d2`` the weighted sd of ``u^2``; its weighted mean is 1), which
    changes neither the model nor the optimum; the coefficients are mapped
    back exactly at the end. The start is Lin et al.'s for Platt
    (``a = q = 0``, ``b = log((N+ + 1) / (N- + 1))``); with at least 20,000
    rows the problem is first solved on a weighted summary of the rows in
    16,384 equal-width bins of ``u`` (per bin: the summed weights and
    weighted targets, exact, and the weighted mean features), which starts
    the full-data iteration within ~1e-7 of its optimum. The solve is :func:`~skcal.ovr._logistic.fit_logistic_bounded` (Newton with
    the exact Hessian and Armijo backtracking) without constraints; the
    stopping rule is always tested on all rows. When the scores are
    constant, or ``u^2`` is (two values symmetric about their mean), the
    quadratic term is not identified: the map is Platt's (``q = 0``,
    :func:`~skcal.ovr._platt.fit_platt`).
    """
    s = np.asarray(s, dtype=np.float64)
    y = np.asarray(y, dtype=bool)
    n = s.size
    if buffers is None:
        buffers = _fit_buffers(n)
    # unit weights: no weight vector (every weighted sum is a plain one)
    w = None if sample_weight is None else np.asarray(sample_weight, np.float64)

    def wdot(x, z):  # sum_i w_i x_i z_i
        return float(np.dot(x, z)) if w is None else float(np.dot(w * x, z))

    wsum = float(n) if w is None else float(w.sum())
    # Platt's prior and start, counted in rows (fit_platt, :ref:`sample-weights`)
    unit = weight_unit(sample_weight)
    n_pos = float(np.count_nonzero(y) if w is None else np.dot(w, y)) / unit
    n_neg = wsum / unit - n_pos
    t = np.empty(n) if buffers is None else buffers.get("targets", (n,))
    if target_smoothing:
        t.fill(1.0 / (n_neg + 2.0))
        np.copyto(t, (n_pos + 1.0) / (n_pos + 2.0), where=y)
    else:
        np.copyto(t, y)
    # the design [u, v, 1] (the ones implicit) written in place into one (3, n)
    # array, its third row the summary's work: every fresh n-vector costs page
    # faults comparable to its arithmetic
    D = np.empty((3, n)) if buffers is None else buffers.get("design", (3, n))
    u, v = D[0], D[1]
    mu = (float(s.sum()) if w is None else float(np.dot(w, s))) / wsum
    np.subtract(s, mu, out=u)
    sd = math.sqrt(wdot(u, u) / wsum)
    sd2 = 0.0
    if sd > _FLAT_SD * abs(mu):
        u /= sd
        np.multiply(u, u, out=v)
        v -= 1.0
        sd2 = math.sqrt(wdot(v, v) / wsum)
    if not sd2 > 1e-12:
        # constant scores, or u^2 constant (two values symmetric about the
        # mean): no quadratic direction; Platt's fit
        A, B, n_iter, status = fit_platt(
            s, y, w, target_smoothing=target_smoothing, tol=tol, max_iter=max_iter
        )
        return A, 0.0, B, n_iter, status
    v /= sd2
    theta0 = np.array([0.0, 0.0, math.log((n_pos + 1.0) / (n_neg + 1.0))])
    it0, interleaved = 0, False
    if n >= SUMMARY_MIN_ROWS:
        # the binned summary first: the full-data iteration starts next to the optimum
        candidate = None
        if start is not None:
            # (a, q, b) on this fit's features: f = a1 u + a2 v + c, s = mu + sd u, u^2 = sd2 v + 1
            a0, q0, b0 = (float(x) for x in start)
            candidate = np.array([(a0 + 2.0 * q0 * mu) * sd, q0 * sd * sd * sd2,
                                  q0 * sd * sd + a0 * mu + q0 * mu * mu + b0])
        theta0, it0, interleaved = _summary_start(u, v, t, w, theta0, max_iter, work=D[2],
                                                  buffers=buffers, candidate=candidate)
    X = DenseDesign.from_rows(D[:2], buffers, intercept=True)
    theta, it1, converged, F = fit_logistic_bounded(X, t, w, theta0=theta0, tol=tol,
                                                    max_iter=max_iter, full_output=True,
                                                    buffers=buffers)
    a1, a2, c = (float(x) for x in theta)
    # f = a1 u + a2 (u^2 - 1) / sd2 + c with u = (s - mu) / sd
    q = a2 / (sd2 * sd * sd)
    a = a1 / sd - 2.0 * q * mu
    b = c - a2 / sd2 - a1 * mu / sd + q * mu * mu
    if not target_smoothing and (
        F < SEPARATED_NLL or (not interleaved and _is_separable(s, y, w))
    ):
        status = "separable"
    elif converged:
        status = "converged"
    else:
        status = "max_iter"
    return a, q, b, it0 + it1, status


@substitute_docstring
class QuadraticScaler(OneVsRestCalibrator):
    """Quadratic scaling: a logistic map ``sigmoid(a s + q s^2 + b)`` of the log-odds score.

    Platt scaling with one more term: a binary problem fits
    ``P(classes_[1] | s) = sigmoid(a s + q s^2 + b)`` on the log-odds
    ``s = z_1 - z_0`` (or the 1-D score given as ``X``); a multiclass problem
    fits one ``(a_k, q_k, b_k)`` per class on that class's one-vs-rest
    log-odds and renormalises the rows. The quadratic term lets the map bend
    where a sigmoid cannot (e.g. a model over-confident on one side of 0.5
    and under-confident on the other).

    Parameters
    ----------
    %(calibrator_params)s
    target_smoothing : bool, default=True
        Fit against Platt's smoothed targets, counted in rows, exactly as
        :class:`PlattScaler` (see its ``target_smoothing`` and
        :ref:`sample-weights`): the optimum is then always finite, integer
        weights fit like repeated rows and rescaling every weight changes
        nothing. ``False`` gives the plain maximum-likelihood fit (the
        definition of probmetrics' ``quadratic-scaling``); it has no finite
        optimum on separable scores (warned).
    tol : float, default=1e-12
        Newton stops when half the squared Newton decrement is at most ``tol``.
    max_iter : int, default=100
        Maximum number of Newton iterations per fitted map.

    Attributes
    ----------
    a_ : float or ndarray of shape (n_classes,)
        Linear coefficient(s) ``a``: a float for a binary problem, one per
        class otherwise (float64).
    q_ : float or ndarray of shape (n_classes,)
        Quadratic coefficient(s) ``q``, as ``a_``.
    b_ : float or ndarray of shape (n_classes,)
        Intercept(s) ``b``, as ``a_``.
    classes_ : ndarray of shape (n_classes,)
        Class labels; column ``j`` of ``X`` is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).
    n_iter_ : int
        Newton iterations; for multiclass the largest over the classes.

    See Also
    --------
    PlattScaler : ``q = 0``, the affine logistic map.
    BetaCalibrator : a logistic map of ``(log p, log(1 - p))``, monotone.

    Notes
    -----
    **Objective.** With ``f_i = a s_i + q s_i^2 + b``, the weighted mean
    cross-entropy ``sum_i w_i [log(1 + exp(f_i)) - t_i f_i] / sum_i w_i``
    over Platt's targets ``t_i`` (or 0/1), convex in ``(a, q, b)``; solved
    by Newton's method with exact derivatives from Platt's start (see
    :func:`~skcal.ovr._quadratic.fit_quadratic` for the parametrisation and
    stopping rule). A ``ConvergenceWarning`` reports reaching ``max_iter``
    or, without target smoothing, separable scores.

    **Monotonicity.** A parabola is monotone only on one side of its vertex
    ``-a / (2 q)``: the map is not constrained to be increasing, and may
    reverse the ranking of scores beyond the vertex (outside the bulk of the
    calibration scores when the fit is sensible). Use :class:`BetaCalibrator`
    when a monotone map is required.

    **Multiclass.** The score of class ``k`` is its one-vs-rest log-odds
    ``s_ik = log p_ik - log(1 - p_ik)``, ``p_i = softmax(z_i)`` (as
    :class:`PlattScaler`); the outputs are combined in log space,
    ``log P_ik = log sigmoid(f_ik) - logsumexp_j log sigmoid(f_ij)``.

    CalArena (2026) lists quadratic scaling among the best methods for log
    loss on binary tabular benchmarks; it is probmetrics' ``quadratic-scaling``
    (``BinaryLogisticCalibrator(type="quadratic")``, scikit-learn's
    unpenalised ``LogisticRegression`` on ``(1, s, s^2)``), of which
    ``target_smoothing=False`` is the same objective.

    References
    ----------
    J. Platt, "Probabilistic outputs for support vector machines and
    comparisons to regularized likelihood methods", Advances in Large Margin
    Classifiers, 1999 (the logistic map and the smoothed targets).

    E. Berta, D. Holzmüller, M. I. Jordan, F. Bach, "Structured Matrix
    Scaling for Multi-Class Calibration", AISTATS 2026 (arXiv:2511.03685):
    quadratic scaling among the binary logistic maps of probmetrics.

    Examples
    --------
    >>> from skcal import QuadraticScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(2000, 2, scale=3.0)
    >>> qs = QuadraticScaler().fit(X, y)
    >>> qs.predict_proba(X).shape
    (2000, 2)
    >>> bool(abs(qs.q_) < 0.05)  # nearly Platt on well-specified scores
    True
    """

    _binary_log_odds_only = True
    _map_output = "log_odds"

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "target_smoothing": ["boolean"],
        **SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        input_type=DEFAULT_INPUT_TYPE,
        classes=None,
        backend="auto",
        target_smoothing=True,
        tol=1e-12,
        max_iter=100,
    ):
        store_params(self, locals())

    def _fit_multiclass(self, Z, y, sample_weight):
        # the classes' fits reuse one set of n-vectors (no fresh pages per class)
        # and each starts its summary's iteration from the previous class's map
        # when that fits its summary better than Platt's start
        self._buffers, self._previous_map = _fit_buffers(Z.shape[0]), None
        try:
            return super()._fit_multiclass(Z, y, sample_weight)
        finally:
            del self._buffers, self._previous_map

    def _fit_map(self, s, t, sample_weight, label):
        _warn_if_far_from_zero(s, label)
        a, q, b, n_iter, status = fit_quadratic(
            s, t, sample_weight, target_smoothing=self.target_smoothing, tol=self.tol,
            max_iter=self.max_iter, buffers=getattr(self, "_buffers", None),
            start=getattr(self, "_previous_map", None),
        )
        if hasattr(self, "_previous_map") and status == "converged":
            self._previous_map = (a, q, b)
        if status == "separable":
            warn(separable_message(label, f"a steep map (a={a:.6g}, q={q:.6g}, b={b:.6g})"),
                 ConvergenceWarning)
        elif status != "converged":
            warn(f"Quadratic scaling of {label} did not reach tol={self.tol} in "
                 f"max_iter={self.max_iter} Newton iterations ({status}); increase "
                 "max_iter.", ConvergenceWarning)
        return a, q, b, n_iter

    def _set_maps(self, maps):
        self.a_, self.q_, self.b_, n_iter = unzip_maps(maps, 3)
        self.n_iter_ = int(np.max(n_iter))

    def _map_scores(self, S):
        """``F = (q s + a) s + b`` per column of the scores ``S``."""
        F = S * param_like(self.q_, S)
        F += param_like(self.a_, S)
        F *= S
        F += param_like(self.b_, S)
        return F

    def _torch_spec(self):
        a = np.atleast_1d(np.asarray(self.a_, dtype=np.float64))
        q = np.atleast_1d(np.asarray(self.q_, dtype=np.float64))
        return {
            "kind": "ovr_sigmoid",
            "coef": np.stack([a, q]),
            "intercept": np.atleast_1d(np.asarray(self.b_, dtype=np.float64)),
            "features": ("score", "square"),
        }
