"""Spline calibration (Lucena 2018, "SplineCalib"): a penalised cubic spline of the log-odds."""

import math
from numbers import Integral

import numpy as np
from scipy.interpolate import BSpline, PPoly
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from .._backend._ovr import stack_columns
from .._backend._steps import piecewise_poly
from ..base import BaseCalibrator, SOLVER_CONSTRAINTS
from ..utils._docstrings import substitute_docstring
from ._base import OneVsRestCalibrator, unzip_maps, warn, warn_constant_scores
from ._binning import cut_edges, distinct_scores, equal_mass_cuts
from ..utils._weights import weight_unit
from ._logistic import base_rate_log_odds, fit_logistic_bounded, logistic_loss
from ..utils._params import store_params

__all__ = ["SplineCalibrator", "fit_spline"]

#: Default grid of penalties (on scores standardised to unit sd).
DEFAULT_PENALTIES = tuple(10.0 ** np.arange(-8.0, 3.0))


def _penalty_matrix(t, p):
    """``P_ij = integral of B_i'' B_j''`` over the knot span (exact: 2-point Gauss per piece)."""
    kn = np.unique(t)
    g = np.array([-1.0, 1.0]) / math.sqrt(3.0)
    mid, half = (kn[1:] + kn[:-1]) / 2.0, (kn[1:] - kn[:-1]) / 2.0
    xq = (mid[:, None] + half[:, None] * g).ravel()
    wq = np.repeat(half, 2)
    D2 = BSpline(t, np.eye(p), 3).derivative(2)(xq)
    return (D2 * wq[:, None]).T @ D2


def _spaced(knots, lo, hi, gap):
    """Drop knots closer than ``gap`` to the previous kept knot or to the ends."""
    kept, last = [], lo
    for k in knots:
        if k - last >= gap and hi - k >= gap:
            kept.append(k)
            last = k
    return np.array(kept)


#: The 10 pairs ``a <= b`` of the 4 non-zero columns of a row (the band of X'X).
_PA = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 3])
_PB = np.array([0, 1, 2, 3, 1, 2, 3, 2, 3, 3])


class _BSplineDesign:
    """Cubic B-spline design, 4 non-zeros per row, as a design operator.

    Row ``i`` has the values ``B[i, a]`` in columns ``j[i] + a``, ``a = 0..3``;
    with ``cumulative=True`` the coefficients are ``theta = cumsum(delta)``
    (the monotone parametrisation), i.e. the design is ``X L``.

    The rows are sorted by score, so ``j`` is non-decreasing and the rows of
    one knot interval are contiguous: products with ``X`` and ``X'`` and the
    banded ``X' diag(q) X`` are sums over these segments (``np.add.reduceat``,
    one call each) instead of scatter-adds of every row.
    """

    def __init__(self, u, t, cumulative=False):
        # CSR with the 4 values of each row stored in column order
        M = BSpline.design_matrix(np.clip(u, t[3], t[-4]), t, 3)
        self._set(M.indices.reshape(-1, 4)[:, 0], M.data.reshape(-1, 4), t.size - 4, cumulative)

    def _set(self, j, B, p, cumulative):  # j non-decreasing: the rows come sorted
        self.j, self.B, self.p, self.cumulative = j, B, p, cumulative
        self.shape = (j.size, p)
        self.starts = (np.flatnonzero(np.r_[True, j[1:] != j[:-1]]) if j.size
                       else np.empty(0, np.intp))
        self.seg_j = j[self.starts]
        self.counts = np.diff(np.r_[self.starts, j.size])
        self.BB = B[:, _PA] * B[:, _PB]  # (n, 10): products of the band pairs

    def take(self, rows):
        """The rows ``rows`` (increasing indices) as a design."""
        out = object.__new__(_BSplineDesign)
        out._set(self.j[rows], self.B[rows], self.p, self.cumulative)
        return out

    def matvec(self, theta):
        if self.cumulative:
            theta = np.cumsum(theta)
        C = np.repeat(theta[self.seg_j[:, None] + np.arange(4)], self.counts, axis=0)
        return np.einsum("ij,ij->i", self.B, C)

    def rmatvec(self, r):
        g = np.zeros(self.p)
        if self.starts.size:
            G = np.add.reduceat(self.B * r[:, None], self.starts, axis=0)
            np.add.at(g, self.seg_j[:, None] + np.arange(4), G)
        return np.cumsum(g[::-1])[::-1] if self.cumulative else g

    def gram(self, q):
        p = self.p
        H = np.zeros((p, p))
        if self.starts.size:
            G = np.add.reduceat(self.BB * q[:, None], self.starts, axis=0)
            np.add.at(H, (self.seg_j[:, None] + _PA, self.seg_j[:, None] + _PB), G)
            H = H + np.triu(H, 1).T
        if self.cumulative:
            H = np.cumsum(np.cumsum(H[::-1, ::-1], 0), 1)[::-1, ::-1]
        return H


def fit_spline(s, y, sample_weight=None, *, n_knots=20, penalties=DEFAULT_PENALTIES,
               n_folds=5, monotone=False, max_cv_scores=20000, tol=1e-10, max_iter=200):
    """Fit a penalised cubic regression spline of the log-odds, its penalty chosen by cross-validation.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
    y : ndarray of shape (n_samples,), bool
    sample_weight : ndarray of shape (n_samples,), default=None
    n_knots, penalties, n_folds, monotone, max_cv_scores, tol, max_iter
        See :class:`SplineCalibrator`.

    Returns
    -------
    dict
        ``breaks`` and ``coefs`` (the map as a piecewise cubic in ``s``, see
        :func:`skcal._backend._steps.piecewise_poly`), ``knots`` (in ``s``),
        ``coef`` (B-spline coefficients on the standardised scores),
        ``penalty``, ``cv_loss`` (per penalty), ``n_iter`` and ``status``.
    """
    u_s, W, Y = distinct_scores(s, y, sample_weight)
    t_s = Y / W if W.size else Y
    total, pos = float(W.sum()), float(Y.sum())
    c0 = float(base_rate_log_odds(pos, total)) if total > 0 else 0.0
    const = dict(breaks=np.zeros(1), coefs=np.array([[0.0, c0, 0, 0, 0]] * 2),
                 knots=np.empty(0), coef=np.empty(0), penalty=np.nan,
                 cv_loss=np.full(len(penalties), np.nan), n_iter=0)
    if pos == 0.0 or pos == total:
        return {**const, "status": "one_class"}
    # Platt's smoothed targets (counts in rows): a finite optimum even where
    # the scores separate the classes (a line has no roughness penalty)
    unit = weight_unit(sample_weight)
    n_pos, n_neg = pos / unit, (total - pos) / unit
    t_fit = (Y * ((n_pos + 1.0) / (n_pos + 2.0)) + (W - Y) * (1.0 / (n_neg + 2.0))) / W
    mu = float(np.dot(W, u_s) / total)
    sd = math.sqrt(float(np.dot(W, (u_s - mu) ** 2) / total))
    # a spread below 1e-8 of the range: the rows off the weighted mean hold a
    # share of the weight below float64's eps (one weight of 1e300 among ones),
    # too little to change any weighted sum; standardising by it would overflow
    if u_s.size < 2 or not sd > 0:
        return {**const, "status": "constant"}
    if not sd > 1e-8 * (u_s[-1] - u_s[0]):
        return {**const, "status": "weight_on_one_score"}
    u = (u_s - mu) / sd
    interior = cut_edges(u, equal_mass_cuts(W, n_knots + 1)) if n_knots else np.empty(0)
    interior = _spaced(interior, u[0], u[-1], (u[-1] - u[0]) / (10.0 * (n_knots + 1)))
    t = np.concatenate([[u[0]] * 4, interior, [u[-1]] * 4])
    p = t.size - 4
    X = _BSplineDesign(u, t, cumulative=monotone)
    P = _penalty_matrix(t, p)
    nonneg = np.zeros(p, bool)
    if monotone:  # coefficients non-decreasing: theta = L delta, delta[1:] >= 0
        L = np.tril(np.ones((p, p)))
        P = L.T @ P @ L
        nonneg[1:] = True
    theta0 = np.zeros(p)
    theta0[0] = c0

    def solve(Xr, rows, lam, start):
        rows = slice(None) if rows is None else rows
        return fit_logistic_bounded(Xr, t_fit[rows], W[rows], nonneg=nonneg,
                                    penalty=lam * P, theta0=start, tol=tol,
                                    max_iter=max_iter)

    # cross-validation: folds by the rank of the distinct score (copies of a
    # score stay together); above max_cv_scores, every k-th distinct score
    lams = np.sort(np.asarray(penalties, dtype=np.float64))[::-1]
    cv_rows = np.arange(0, u.size, max(1, math.ceil(u.size / max_cv_scores)))
    fold = np.arange(cv_rows.size) % n_folds
    cv_loss = np.zeros(lams.size)
    n_iter = 0
    for f in range(n_folds):
        train, test = cv_rows[fold != f], cv_rows[fold == f]
        if test.size == 0 or W[test].sum() == 0:
            continue
        start = theta0
        X_train, X_test = X.take(train), X.take(test)
        for i, lam in enumerate(lams):
            theta, it, _ = solve(X_train, train, lam, start)
            n_iter += it
            start = theta
            eta = X_test.matvec(theta)
            cv_loss[i] += logistic_loss(eta, t_s[test], W[test], 1.0)
    # the largest penalty within 1e-9 (relative) of the lowest held-out loss:
    # losses that differ by rounding only (rescaled weights) pick alike
    best = int(np.flatnonzero(cv_loss <= cv_loss.min() + 1e-9 * abs(cv_loss.min()))[0])
    lam = float(lams[best])
    theta, it, converged = solve(X, None, lam, theta0)
    n_iter += it
    coef = np.cumsum(theta) if monotone else theta
    # the map as a piecewise cubic in s, linear beyond the calibration range
    spl = BSpline(t, coef, 3)
    pp = PPoly.from_spline(spl)  # pp.c: (4, len(pp.x) - 1), highest degree first
    keep = np.diff(pp.x) > 0
    ends = np.append(pp.x[:-1][keep], pp.x[-1])
    v, d = spl(ends[[0, -1]]), spl.derivative()(ends[[0, -1]])
    # rows (origin, c0..c3) in u - origin: the linear ends, the cubic pieces between
    C = np.vstack([[ends[0], v[0], d[0], 0.0, 0.0],
                   np.column_stack([ends[:-1], pp.c[:, keep][::-1].T]),
                   [ends[-1], v[1], d[1], 0.0, 0.0]])
    # back to the original scale: d_u = d_s / sd
    C[:, 0] = mu + sd * C[:, 0]
    C[:, 2:] /= sd ** np.arange(1, 4)
    return dict(breaks=mu + sd * ends, coefs=C, knots=mu + sd * np.unique(t), coef=coef,
                penalty=lam, cv_loss=cv_loss[::-1], n_iter=n_iter,
                status="converged" if converged else "max_iter")


@substitute_docstring
class SplineCalibrator(OneVsRestCalibrator):
    """Spline calibration: a penalised cubic spline of the log-odds, the penalty chosen by cross-validation.

    Parameters
    ----------
    %(calibrator_params)s
    n_knots : int, default=20
        Interior knots, at weighted equal-mass quantiles of the distinct
        scores (fewer with heavy ties; a knot closer than
        ``range / (10 (n_knots + 1))`` to the previous one or to an end of the
        score range is dropped, so clusters of scores cannot make the basis
        ill-conditioned).
    penalties : array-like of float, default=10**(-8..2)
        Candidate penalties ``lambda``, on scores standardised to unit
        standard deviation.
    n_folds : int, default=5
        Folds of the cross-validation that picks ``lambda``.
    monotone : bool, default=False
        Constrain the spline to be non-decreasing (its B-spline coefficients
        non-decreasing).
    max_cv_scores : int, default=20000
        The cross-validation uses at most this many distinct scores (every
        ``k``-th in sorted order); the final fit uses all.
    tol : float, default=1e-10
        Tolerance of the Newton solves (decrement on the penalised mean log
        loss).
    max_iter : int, default=200
        Newton iterations per solve.

    Attributes
    ----------
    knots_ : ndarray or list of ndarray
        Knots in log-odds.
    spline_breaks_, spline_pieces_ : ndarray or list of ndarray
        The fitted map as a piecewise cubic in the log-odds: breakpoints, and
        per cell ``(origin, c0, c1, c2, c3)`` (linear beyond the end knots).
    penalty_ : float or ndarray of shape (n_classes,)
        The chosen ``lambda``.
    cv_loss_ : ndarray or list of ndarray
        Summed held-out log loss of each candidate penalty (in ``penalties``
        sorted increasingly).
    n_iter_ : int
        Newton iterations of the cross-validation and final fit (largest over
        classes).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    skcal.PlattScaler : the limit of an infinite penalty (a line in log-odds).
    skcal.IsotonicScaler : monotone and non-parametric, not smooth.

    Notes
    -----
    The calibrated log-odds are ``f(s) = sum_j theta_j B_j(u)``, ``u`` the score
    standardised by its weighted mean and sd, ``B_j`` the cubic B-splines on
    the knots, and ``theta`` minimises the weighted mean log loss plus
    ``lambda / 2 * integral f''(u)^2 du`` over the calibration range (Newton's
    method, the penalty matrix computed exactly by Gauss quadrature). The
    targets are Platt's smoothed labels ``(N+ + 1) / (N+ + 2)`` and
    ``1 / (N- + 2)`` (``N+, N-`` the rows of each label): a straight line has
    no roughness penalty, and without them scores that separate the classes
    would leave the optimum at infinite slope. A huge ``lambda`` leaves a
    straight line, i.e. Platt scaling (:class:`~skcal.PlattScaler`); a small
    one follows the data. Beyond the calibration range ``f`` continues linearly (the
    natural-spline boundary behaviour), so extreme scores keep a finite slope.

    ``lambda`` minimises the summed weighted held-out log loss of
    ``n_folds``-fold cross-validation, each fold solved along the penalty
    path from large to small with warm starts. The folds are assigned by the
    rank of the distinct score (``rank mod n_folds``): deterministic,
    independent of the row order, and the copies of a score stay in the same
    fold, so integer weights behave exactly like repeated rows.

    Lucena (2018) fits a natural cubic spline basis with a ridge penalty on
    its coefficients by L-BFGS, knots drawn at random from the data, data
    augmented with a "unity prior" (pseudo-points on the diagonal) and the
    penalty chosen by cross-validation; ml-insights' ``SplineCalib`` is that
    method. skcal keeps the method (a cross-validated penalised cubic
    spline of the log-odds) with a deterministic knot rule, the classical
    roughness penalty (Platt as its limit) and no pseudo-data beyond Platt's
    target smoothing. The held-out losses of the cross-validation use the
    raw labels; the penalty chosen is the largest whose loss is within
    ``1e-9`` (relative) of the lowest.

    %(weight_unit)s

    With ``monotone=True`` the coefficients are written as cumulative sums of
    increments constrained to be ``>= 0`` (solved by the active-set Newton
    solver of :class:`~skcal.BetaCalibrator`), a sufficient condition for a
    non-decreasing spline.

    A constant score, or a class with no (or only) examples, gives the
    constant base rate (clipped to ``[1e-6, 1 - 1e-6]``).

    References
    ----------
    B. Lucena, "Spline-based probability calibration", arXiv:1809.07751, 2018.

    K. Gupta, A. Rahimi, T. Ajanthan, T. Mensink, C. Sminchisescu, R. Hartley,
    "Calibration of neural networks using splines", ICLR 2021.

    P. H. C. Eilers, B. D. Marx, "Flexible smoothing with B-splines and
    penalties", Statistical Science 11(2), 1996.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import SplineCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)
    >>> scores = X[:, 1] - X[:, 0]  # a binary problem as one score: the log-odds
    >>> sc = SplineCalibrator(monotone=True).fit(scores, y)
    >>> P = sc.predict_proba(np.sort(scores))[:, 1]
    >>> bool(np.all(np.diff(P) >= 0))
    True
    """

    _map_output = "log_odds"
    _predict_on_host = True
    _predict_chunk_bytes = 1 << 24

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "n_knots": [Interval(Integral, 0, None, closed="left")],
        "penalties": ["array-like"],
        "n_folds": [Interval(Integral, 2, None, closed="left")],
        "monotone": ["boolean"],
        "max_cv_scores": [Interval(Integral, 10, None, closed="left")],
        **SOLVER_CONSTRAINTS,
    }

    def __init__(self, *, input_type="logits", classes=None, backend="auto", n_knots=20,
                 penalties=DEFAULT_PENALTIES, n_folds=5, monotone=False,
                 max_cv_scores=20000, tol=1e-10, max_iter=200):
        store_params(self, locals())

    def _fit_map(self, s, t, sample_weight, label):
        pen = np.asarray(self.penalties, dtype=np.float64).ravel()
        if pen.size == 0 or not np.all(np.isfinite(pen)) or np.any(pen < 0):
            raise ValueError(
                "penalties must be a non-empty list of finite non-negative numbers, "
                f"got {self.penalties!r}."
            )
        r = fit_spline(s, t, sample_weight, n_knots=self.n_knots, penalties=pen,
                       n_folds=self.n_folds, monotone=self.monotone,
                       max_cv_scores=self.max_cv_scores, tol=self.tol,
                       max_iter=self.max_iter)
        if r["status"] == "constant":
            warn_constant_scores("Spline calibration", label)
        elif r["status"] == "weight_on_one_score":
            warn(f"Spline calibration of {label}: the scores off their weighted mean "
                 "hold less than float64's eps of the weight; the map is the base rate.")
        elif r["status"] == "max_iter":
            warn(f"Spline calibration of {label} did not converge in "
                 f"max_iter={self.max_iter} Newton iterations.", ConvergenceWarning)
        return r

    def _set_maps(self, maps):
        keys = ("penalty", "knots", "cv_loss", "breaks", "coefs")
        (self.penalty_, self.knots_, self.cv_loss_, self.spline_breaks_,
         self.spline_pieces_) = unzip_maps([[r[k] for k in keys] for r in maps], 1)
        self.n_iter_ = int(max(r["n_iter"] for r in maps))

    def _map_scores(self, S):
        b, c = self.spline_breaks_, self.spline_pieces_
        pieces = list(zip(b, c)) if isinstance(b, list) else [(b, c)]
        return stack_columns(
            [piecewise_poly(S[:, j], bj, cj) for j, (bj, cj) in enumerate(pieces)]
        )
