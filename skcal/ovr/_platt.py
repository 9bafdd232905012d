"""Platt scaling (Platt 1999) fitted by Newton's method (Lin, Lin & Weng 2007).

:func:`fit_platt` solves one binary problem; :func:`fit_platt_ovr` solves the
one-vs-rest problems of all classes in the same row-chunked passes over the
logits. The one-vs-rest scores and the way the per-class outputs are combined
come from :mod:`skcal.ovr._base` and :mod:`skcal._backend._ovr`.
"""

import math

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions

from .._backend import _numpy
from .._backend import _ovr as ops
from .._backend._ovr import (
    _ovr_columns,
    _row_stats32,
    host64,
    ovr_columns32,
    ovr_scores32_from_work,
    ovr_row_stats,
    ovr_row_stats32,
    param_like,
)
from ..base import BaseCalibrator, SOLVER_CONSTRAINTS
from ..utils._docstrings import substitute_docstring
from ..utils._weights import weight_unit
from ._base import (
    OneVsRestCalibrator, class_label, label_positions, row_stats_buffers, unzip_maps, warn,
)
from ._logistic import DenseDesign, logistic_evaluator, softplus
from ._newton import (
    ARMIJO_C, F32_CHUNK_BYTES, F32_CLIP, F32_LOSS_RESOLUTION, F32_MIN_TOL,
    WARM_START_MIN_ROWS, WARM_START_ROWS, _directions, newton_batched,
)
from ..utils.validation import DEFAULT_INPUT_TYPE
from ..utils._params import store_params

__all__ = ["PlattScaler", "fit_platt", "fit_platt_ovr"]

#: A score column whose weighted sd is at most this fraction of its mean is
#: constant up to rounding: its standardised score is set to 0 (slope 0).
_FLAT_SD = 1e-13
#: Multiclass fits on at least :data:`~skcal.ovr._newton.WARM_START_MIN_ROWS`
#: rows first solve all classes on a systematic subsample
#: (:data:`~skcal.ovr._newton.WARM_START_ROWS`) to this; the full-data Newton
#: iteration starts there (about 3 passes over the data instead of 7-10 from
#: Lin et al.'s start).
WARM_START_TOL = 1e-8
#: The float32 solver's subsample is solved to this: its optimum differs from
#: the full one by decrements of ~1e-4 (sampling), so a finer solve of the
#: subsample does not bring the full iteration's start closer.
WARM_START_TOL32 = 1e-6


# ----------------------------------------------------------------- 1-D solver
def separable_message(label, fitted):
    """The ``ConvergenceWarning`` text of a fit without target smoothing on separable scores.

    ``fitted``: the map Newton stopped at, e.g. ``"a steep sigmoid (A=.., B=..)"``.
    """
    return (f"The scores separate {label} from the other class(es) on the calibration "
            "set (or it has no or only such examples): without target smoothing the "
            f"likelihood has no maximiser. Newton stopped at {fitted}; consider "
            "target_smoothing=True.")


def _is_separable(s, y, w):
    """True if the scores separate the classes (ties allowed) or a class is absent.

    Rows of zero weight are ignored.
    """
    if w is not None:
        keep = w > 0
        if not keep.all():
            s, y = s[keep], y[keep]
    pos, neg = s[y], s[~y]
    if pos.size == 0 or neg.size == 0:
        return True
    p_lo, p_hi, n_lo, n_hi = pos.min(), pos.max(), neg.min(), neg.max()
    if min(p_lo, n_lo) == max(p_hi, n_hi):
        return False  # constant scores
    return bool(p_lo >= n_hi or n_lo >= p_hi)


def platt_targets(y, w, unit, target_smoothing=True):
    """Platt's targets ``t`` (n,) and the class counts ``N+, N-`` in rows.

    ``t+ = (N+ + 1) / (N+ + 2)``, ``t- = 1 / (N- + 2)`` (1 and 0 without
    ``target_smoothing``). Platt's prior counts rows: the weighted counts (``y``
    bool, ``w`` float64) are divided by ``unit``, the weight of one row
    (:func:`skcal.utils._weights.weight_unit`), so that integer weights fit
    like repeated rows and rescaling every weight changes nothing.
    """
    n_pos = float(w[y].sum()) / unit
    n_neg = float(w[~y].sum()) / unit
    if not target_smoothing:
        return y.astype(np.float64), n_pos, n_neg
    return np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0)), n_pos, n_neg


def fit_platt(
    s, y, sample_weight=None, *, target_smoothing=True, tol=1e-12, max_iter=100
):
    """Fit ``P(y = 1 | s) = sigmoid(A s + B)`` by maximum likelihood.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
        Scores (log-odds of the positive class), finite; any float dtype, used
        in float64.
    y : ndarray of shape (n_samples,), bool
        True for the positive class.
    sample_weight : ndarray of shape (n_samples,), float64, default=None
        Non-negative weights (unit weights when None).
    target_smoothing : bool, default=True
        Platt's targets instead of 1 and 0 (:func:`platt_targets`; see
        :class:`PlattScaler`). The start ``B = log((N+ + 1) / (N- + 1))`` uses
        the same counts ``N+, N-``, in rows.
    tol : float, default=1e-12
        Stop when half the squared Newton decrement, ``g' H^{-1} g / 2`` (an
        estimate of the gap to the optimal mean loss), is at most ``tol``.
    max_iter : int, default=100
        Maximum number of Newton iterations.

    Returns
    -------
    A, B : float
        Slope and intercept on the original scale of ``s``.
    n_iter : int
        Number of Newton iterations (Hessian evaluations).
    status : {"converged", "separable", "max_iter", "line_search"}
        ``"separable"``: without target smoothing the scores separate the
        classes (or one class is absent), so the likelihood has no maximiser
        (``|A|`` or ``|B| -> inf``); the returned ``(A, B)`` is where the
        decrement test stopped Newton, a steep but finite sigmoid whose mean
        loss on the calibration set is about ``tol``. ``"line_search"``: the
        backtracking line search found no decrease (step below 1e-10) while
        the decrement still predicted one the loss can resolve (above 100
        ulps of the loss; below that the fit is at the precision limit of the
        loss and counts as converged).

    Notes
    -----
    With ``f_i = A s_i + B`` and ``p_i = sigmoid(f_i)`` the objective is the
    weighted mean cross-entropy
    ``F(A, B) = sum_i w_i [log(1 + exp(f_i)) - t_i f_i] / sum_i w_i``, convex,
    evaluated as ``max(f, 0) + log1p(exp(-|f|)) - t f`` so that no ``exp``
    overflows (Lin et al. 2007, Section 3). Its gradient is
    ``mean_w (p_i - t_i) [s_i, 1]`` and its Hessian
    ``mean_w p_i (1 - p_i) [s_i, 1]' [s_i, 1]``. The scores are first
    standardised, ``u = (s - mean_w s) / std_w s``, which leaves the optimum
    unchanged (the model is affine in ``s``) but makes the problem well scaled
    for scores of any magnitude (e.g. 1e5); ``(A, B)`` are mapped back at the
    end. Newton's method with a ``1e-12`` ridge on the Hessian diagonal and an
    Armijo backtracking line search (constant 1e-4, halving) starts from
    ``A = 0, B = log((N+ + 1) / (N- + 1))`` as in Lin et al., Algorithm 1. The
    decrement test is affine invariant, so the stopping rule does not depend
    on the scale of ``s``; when it holds the last (full) Newton step is taken.

    References
    ----------
    J. Platt, "Probabilistic outputs for support vector machines and
    comparisons to regularized likelihood methods", Advances in Large Margin
    Classifiers, 1999.

    H.-T. Lin, C.-J. Lin, R. C. Weng, "A note on Platt's probabilistic outputs
    for support vector machines", Machine Learning 68, 2007.
    """
    s = np.asarray(s, dtype=np.float64)
    y = np.asarray(y, dtype=bool)
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, np.float64)
    wsum = float(w.sum())
    t, n_pos, n_neg = platt_targets(y, w, weight_unit(sample_weight), target_smoothing)
    mu = float(np.dot(w, s) / wsum)
    # the spread on a pre-scaled copy: (s - mu)**2 underflows for scores of
    # magnitude ~1e-160 and below (read as constant scores otherwise)
    c = float(np.max(np.abs(s - mu))) if s.size else 0.0
    c = c if c > 0 else 1.0
    sd = c * math.sqrt(float(np.dot(w, ((s - mu) / c) ** 2) / wsum))
    if not sd > _FLAT_SD * abs(mu):
        # constant scores (up to rounding): only the intercept can be fitted
        sd, u = 1.0, np.zeros_like(s)
    else:
        u = (s - mu) / sd

    theta0 = np.array([[0.0, math.log((n_pos + 1.0) / (n_neg + 1.0))]])
    X = DenseDesign.from_rows(u[None], intercept=True)
    theta, n_iter, status, _ = newton_batched(
        logistic_evaluator(X, t, w), theta0, tol=tol, max_iter=max_iter)
    status = str(status[0])
    if not target_smoothing and _is_separable(s, y, w):
        status = "separable"
    A, B = _original_scale(theta, mu, sd)
    return float(A[0]), float(B[0]), int(n_iter[0]), status


# ------------------------------------------- all one-vs-rest fits at once
class _OvrProblem:
    """The K standardised one-vs-rest logistic problems of a multiclass fit.

    Holds only O(n_samples + n_classes) memory: the per-row statistics of the
    one-vs-rest log-odds (:func:`ovr_row_stats`), labels, weights and the
    per-class moments. Every evaluation walks ``Z`` in row chunks and computes
    the scores of the requested classes on the fly.
    """

    def __init__(self, Z, y, w, target_smoothing, unit=1.0):
        self.Z, self.y, self.w, self.K = Z, y, w, Z.shape[1]
        self.stats = ovr_row_stats(Z)
        self._counts(target_smoothing, unit)
        self._moments()

    def _counts(self, target_smoothing, unit):
        """Weighted class counts, also in rows (``e_*``), and Platt's targets ``t_*``."""
        n, K, y, w = self.Z.shape[0], self.K, self.y, self.w
        self.wsum = float(n) if w is None else float(w.sum())
        self.n_pos = np.bincount(y, weights=w, minlength=K).astype(np.float64)
        self.n_neg = self.wsum - self.n_pos
        self.e_pos = self.n_pos / unit
        self.e_neg = self.n_neg / unit
        if target_smoothing:
            self.t_pos = (self.e_pos + 1.0) / (self.e_pos + 2.0)
            self.t_neg = 1.0 / (self.e_neg + 2.0)
        else:
            self.t_pos, self.t_neg = np.ones(K), np.zeros(K)

    def _scores(self, sl, cols):
        st = tuple(v[sl] for v in self.stats)
        # the column gather also for all columns: its column-major result makes
        # the many column sums below faster than on a row-major float64 copy
        return _ovr_columns(host64(self.Z[sl], cols), st, cols)

    def _moments(self):
        """Weighted mean and sd of every score column; sum of ``w s`` over positives.

        Chunk means and centred sums of squares are merged exactly (Chan et al.),
        so the variance has no cancellation whatever the mean.
        """
        K, n = self.K, self.Z.shape[0]
        cols = np.arange(K)
        W, mean, M2, sp = 0.0, np.zeros(K), np.zeros(K), np.zeros(K)
        for sl in _numpy.chunk_rows(n, K):
            S = np.asarray(self._scores(sl, cols), dtype=np.float64)
            wc = None if self.w is None else self.w[sl]
            cw = float(S.shape[0]) if wc is None else float(wc.sum())
            r, j = label_positions(self.y[sl], cols, self.K)  # every row, its class
            sp += np.bincount(
                j, weights=S[r, j] if wc is None else wc[r] * S[r, j], minlength=K
            )
            if not cw > 0:
                continue
            cm = (S.sum(0) if wc is None else wc @ S) / cw
            S -= cm
            S *= S
            cM2 = S.sum(0) if wc is None else wc @ S
            delta = cm - mean
            tot = W + cw
            mean = mean + delta * (cw / tot)
            M2 = M2 + cM2 + delta * delta * (W * cw / tot)
            W = tot
        self.mu = mean
        sd = np.sqrt(M2 / self.wsum)
        # constant score columns (up to rounding): only the intercept is fitted
        self.flat = ~(sd > _FLAT_SD * np.abs(mean))
        sd[self.flat] = 1.0
        self.sd = sd
        self.var_u = np.where(self.flat, 0.0, M2 / self.wsum / sd**2)
        self.sum_pos_u = np.where(self.flat, 0.0, (sp - self.n_pos * mean) / sd)

    def start_intercept(self, cols=slice(None)):
        """Lin et al.'s start ``b = log((N+ + 1) / (N- + 1))`` (with ``a = 0``)."""
        return np.log((self.e_pos[cols] + 1.0) / (self.e_neg[cols] + 1.0))

    def start(self):
        """Lin et al.'s start ``theta = (0, b)`` (K, 2); F, g, H there.

        At ``a = 0`` every ``f_i = b``, so all of them follow from the moments.
        """
        b = self.start_intercept()
        tbar = (self.t_pos * self.n_pos + self.t_neg * self.n_neg) / self.wsum
        F = softplus(b) - tbar * b
        p0 = expit(b)
        q0 = p0 * (1.0 - p0)
        ga = -(self.t_pos - self.t_neg) * self.sum_pos_u / self.wsum
        g = np.stack([ga, p0 - tbar], axis=1)
        return np.stack([np.zeros(self.K), b], axis=1), F, g, _hessians(
            q0 * self.var_u, np.zeros(self.K), q0)

    def evaluate(self, cols, theta):
        """Mean loss (m,), gradient (m, 2), Hessian (m, 2, 2) of classes ``cols`` at ``theta`` (m, 2)."""
        n, m = self.Z.shape[0], cols.size
        a, b = theta.T
        acc = np.zeros((6, m))
        mu, sd = self.mu[cols], self.sd[cols]
        t_neg, dt = self.t_neg[cols], (self.t_pos - self.t_neg)[cols]
        for sl in _numpy.chunk_rows(n, m):
            U = self._scores(sl, cols)
            U -= mu
            U /= sd
            U[:, self.flat[cols]] = 0.0
            f = U * a
            f += b
            r, j = label_positions(self.y[sl], cols, self.K)
            e = np.exp(-np.abs(f))
            loss = np.log1p(e)
            loss += np.maximum(f, 0.0)
            loss -= t_neg * f
            loss[r, j] -= dt[j] * f[r, j]
            e += 1.0
            p = np.reciprocal(e, out=e)  # sigmoid(|f|)
            np.subtract(1.0, p, out=p, where=f < 0)
            q = p * (1.0 - p)
            p -= t_neg
            p[r, j] -= dt[j]  # p - t
            wc = None if self.w is None else self.w[sl]

            def red(M):
                return M.sum(0) if wc is None else wc @ M

            acc[0] += red(loss)
            acc[2] += red(p)  # sum w (p - t)
            p *= U
            acc[1] += red(p)  # sum w (p - t) u
            acc[5] += red(q)  # sum w q
            q *= U
            acc[4] += red(q)  # sum w q u
            q *= U
            acc[3] += red(q)  # sum w q u^2
        acc /= self.wsum
        return acc[0], acc[1:3].T, _hessians(*acc[3:6])

    #: None: the core's Armijo test and failed-line-search status.
    trial = failed_status = None

    def solve(self, theta, F, g, H, tol, max_iter):
        """``newton_batched`` from ``theta`` and its F, g, H: theta, n_iter, status."""
        return newton_batched(
            self.evaluate, theta, start=(F, g, H), tol=tol, max_iter=max_iter,
            trial=self.trial, failed_status=self.failed_status)[:3]


def _hessians(haa, hab, hbb):
    """The (m, 2, 2) Hessians of the entries ``(a, a)``, ``(a, b)``, ``(b, b)`` (m,) each."""
    return np.stack([haa, hab, hab, hbb], axis=1).reshape(-1, 2, 2)


# ------------------------------------------------ float32 one-vs-rest solver
#: float32 solver: a subsample score column whose sd is at most this fraction
#: of its mean (nearly constant in float32) sends the fit to the float64 solver.
F32_FLAT_SD = 1e-4
#: float32 solver: a step of length ``t`` whose largest change of ``f`` over
#: the rows is ``M t`` is accepted without evaluating the loss when
#: ``t psi(M t)`` is at most this (see :func:`_certified_decrease`).
_CERTIFIED = 0.9


def _certified_decrease(step, M):
    """Whether a Newton step provably satisfies Armijo's rule, from the data's range.

    Along a Newton direction ``d`` (``g' d = -d' H d = slope < 0``) the loss
    ``phi(t)`` of a step ``t`` is convex with ``|phi'''| <= M phi''``, where
    ``M = max_i |d' x_i|`` is the largest change of ``f_i`` per unit step (the
    logistic loss has ``|l'''| = q |1 - 2 p| <= q = l''``). Hence
    ``phi''(t) <= phi''(0) exp(M t)`` and
    ``phi(t) - phi(0) <= t slope - slope t^2 psi(M t)``, with
    ``psi(x) = (e^x - 1 - x) / x^2`` (the bounds of F. Bach, "Self-concordant
    analysis for logistic regression", Electron. J. Statist. 4, 2010), where
    ``phi''(0) = d' H d <= -slope`` (``H`` with its ridge): Armijo's test
    ``phi(t) - phi(0) <= c t slope`` holds whenever ``t psi(M t) <= 1 - c``.
    The test here, ``t psi(M t) <= 0.9`` (a certified decrease of at least a tenth of the
    linear prediction), leaves a wide margin for the float32 rounding of ``g``
    and ``H``; a full step qualifies for ``M`` up to about 1.6. (``psi`` is
    ``1/2 + x/6`` below ``x = 1e-4``, where the quotient cancels.)
    """
    x = np.asarray(M * step, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        psi = np.where(x < 1e-4, 0.5 + x / 6.0, (np.expm1(x) - x) / (x * x))
    return step * psi <= _CERTIFIED


class _OvrProblem32(_OvrProblem):
    """:class:`_OvrProblem` on a float32 NumPy matrix, evaluated in float32.

    Scores from float32 row statistics (:func:`ovr_row_stats32`, 16 B per
    row); elementwise work in four reused float32 chunk buffers
    (:data:`F32_CHUNK_BYTES` each), row sums per chunk in float32,
    accumulated in float64. ``standardise=(mu, sd)``: given moments (no
    moments pass). The first evaluation of all classes records each score
    column's range, which certifies steps and tells when ``f`` needs clipping.
    """

    def __init__(self, Z, y, w, target_smoothing, standardise=None, unit=1.0):
        self.Z, self.y, self.w, self.K = Z, y, w, Z.shape[1]
        self._counts(target_smoothing, unit)
        self.w32 = None if w is None else w.astype(np.float32)
        if standardise is None:
            self.stats = ovr_row_stats32(Z)
            self._moments()
        else:  # row statistics by the first evaluation (one read of Z and one exp fewer)
            self.stats, self._stats = None, row_stats_buffers(Z.shape[0], 3)
            self.mu, self.sd = standardise
            self.flat = np.zeros(self.K, dtype=bool)
        # the float32 mean and 1 / sd that the evaluations use, exactly, so that
        # mapping (a, b) back to (A, B) adds no rounding of its own
        with np.errstate(over="ignore"):
            self.mu = self.mu.astype(np.float32).astype(np.float64)
            self.sd = 1.0 / (1.0 / self.sd).astype(np.float32).astype(np.float64)
        #: range of the scores per class (unknown: None)
        self.lo = self.hi = None

    def _scores(self, sl, cols, out=None):
        """float32 scores of chunk ``sl``, columns ``cols`` (in ``out[0]`` if given)."""
        if self.stats is None:  # the first evaluation (all classes): row statistics too
            st, D, E = _row_stats32(self.Z[sl], out=out)
            for o, v in zip(self._stats, st):
                o[sl] = v
            return ovr_scores32_from_work(st, D, E)
        st = tuple(v[sl] for v in self.stats)
        all_cols = cols.size == self.K
        return ovr_columns32(self.Z[sl], st, cols, all_cols=all_cols, out=out)

    def _step_range(self, cols, da, db):
        """Largest ``|change of f|`` over the rows per unit step (inf: range unknown)."""
        if self.lo is None:
            return np.full(cols.size, np.inf)
        mu, isd = self.mu[cols], 1.0 / self.sd[cols]
        lo, hi = (self.lo[cols] - mu) * isd, (self.hi[cols] - mu) * isd
        return np.maximum(np.abs(da * lo + db), np.abs(da * hi + db))

    def trial(self, cols, th, step, d, slope, theta, F, H):
        """``newton_batched``'s step test, with three acceptance rules.

        Certified steps (:func:`_certified_decrease`) pass; one predicting a
        decrease of at most :data:`F32_LOSS_RESOLUTION` (below the float32
        loss's resolution) passes if the decrement at the candidate is smaller;
        the others take Armijo's test (the only losses evaluated).
        """
        safe = _certified_decrease(step, self._step_range(cols, *d.T))
        local = -slope / 2.0 <= F32_LOSS_RESOLUTION
        need = ~(safe | local)
        miss = cols[need & np.isnan(F[cols])]
        if miss.size:  # losses at the current points (after certified steps)
            F[miss] = self.evaluate(miss, theta[miss], loss=True)[0]
        F_c, g_c, H_c = self.evaluate(cols, th, loss=need)
        d_c = _directions(g_c, H_c, np.ones_like(g_c, dtype=bool))
        ok = safe | (-np.einsum("ij,ij->i", g_c, d_c) < -slope)  # a smaller decrement
        armijo = F_c <= F[cols] + ARMIJO_C * step * slope
        return np.where(need, armijo, ok), F_c, g_c, H_c

    def failed_status(self, slope, F):  # the float64 solver is run instead
        return np.full(slope.size, "line_search", dtype=object)

    def evaluate(self, cols, theta, loss=True):
        """Mean loss (m,), gradient (m, 2), Hessian (m, 2, 2) of classes ``cols`` at ``theta``.

        ``loss``: bool, or a bool mask over ``cols`` of the classes whose loss
        is computed (NaN for the others). Many classes are evaluated as all of
        them (a column gather costs more than the classes it skips), and so
        are the first evaluation's (it takes the row statistics).
        """
        lmask = np.broadcast_to(np.asarray(loss, dtype=bool), cols.size)
        many = self.stats is None or cols.size >= _F32_GATHER_MAX * self.K
        if cols.size < self.K and many:
            th_all, l_all = np.zeros((self.K, 2)), np.zeros(self.K, dtype=bool)
            th_all[cols], l_all[cols] = theta, lmask
            F, g, H = self._evaluate(np.arange(self.K), th_all, l_all)
            return F[cols], g[cols], H[cols]
        return self._evaluate(cols, theta, lmask)

    def _evaluate(self, cols, theta, lmask):
        n, m = self.Z.shape[0], cols.size
        a, b = theta.T
        f32 = np.float32
        # sums over rows: w r, w r s, w q, w q s, w q s^2 (s: the scores)
        acc = np.zeros((5, m))
        lc = np.flatnonzero(lmask)
        if 2 * lc.size >= m:  # one log of all columns is cheaper than a gather
            lc = np.arange(m)
        lall = slice(None) if lc.size == m else lc
        loss, sum_f, sum_pos_f = np.zeros(m), np.zeros(m), np.zeros(m)
        mu, isd = self.mu[cols], 1.0 / self.sd[cols]
        # f = a (s - mu) / sd + b: -f = na s + nb
        na32, nb32 = (-a * isd).astype(f32), (a * isd * mu - b).astype(f32)
        t_neg, dt = self.t_neg[cols], (self.t_pos - self.t_neg)[cols]
        t_neg32, dt32 = t_neg.astype(f32), dt.astype(f32)
        # the columns that may hold |f| > F32_CLIP (all while the range is unknown)
        if self.lo is None:
            clip, lo, hi = np.arange(m), np.full(m, np.inf), np.full(m, -np.inf)
        else:
            s_ends = np.stack([self.lo[cols], self.hi[cols]]) - mu
            ends = np.abs(s_ends * (a * isd) + b)
            clip = np.flatnonzero(~(ends.max(axis=0) <= F32_CLIP))
            if 2 * clip.size >= m:
                clip = np.arange(m)
        # row chunks of about F32_CHUNK_BYTES of work arrays (the gathered columns)
        width = max(m, 16)
        step = max(1, F32_CHUNK_BYTES // (4 * width))
        bufs = np.empty((4, min(n, step), m), dtype=f32)
        ones = np.ones(min(n, step), dtype=f32)
        for sl in _numpy.chunk_rows(n, width, itemsize=4, chunk_bytes=F32_CHUNK_BYTES):
            rows = sl.stop - sl.start
            D, NF, P, Q = bufs[:, :rows]
            U = self._scores(sl, cols, out=(D, NF))
            if self.lo is None and m == self.K:
                lo = np.minimum(lo, U.min(axis=0))
                hi = np.maximum(hi, U.max(axis=0))
            np.multiply(U, na32, out=NF)
            NF += nb32  # -f
            wc = ones[:rows] if self.w32 is None else self.w32[sl]
            r, j = label_positions(self.y[sl], cols, self.K)
            if lc.size:  # the t f terms of the loss, from sums of f
                sum_f[lall] -= wc @ NF[:, lall]
                keep = lmask[j]
                fp = NF[r[keep], j[keep]].astype(np.float64)
                if self.w is not None:
                    fp *= self.w[sl][r[keep]]
                sum_pos_f -= np.bincount(j[keep], weights=fp, minlength=m)
            if clip.size:
                # f clipped to [-87, 87] so that exp(-f) neither overflows nor
                # underflows in float32; the loss beyond is corrected in float64
                X = NF if clip.size == m else NF[:, clip]
                if lc.size and (X.max(initial=0.0) > F32_CLIP
                                or X.min(initial=0.0) < -F32_CLIP):
                    ri, ci = np.nonzero(np.abs(X) > F32_CLIP)
                    f = -X[ri, ci].astype(np.float64)
                    ci = clip[ci]
                    fix = softplus(f) - softplus(np.clip(f, -F32_CLIP, F32_CLIP))
                    loss += np.bincount(ci, weights=fix * wc[ri], minlength=m)
                np.clip(X, f32(-F32_CLIP), f32(F32_CLIP), out=X)
                if clip.size < m:
                    NF[:, clip] = X
            E = np.exp(NF, out=NF)  # exp(-f)
            np.add(E, f32(1.0), out=P)
            np.reciprocal(P, out=P)  # p = sigmoid(f)
            np.multiply(E, P, out=Q)  # exp(-f) p = 1 - p, no cancellation
            if lc.size:  # softplus(f) = -log(1 - p)
                if lc.size == m:
                    loss -= wc @ np.log(Q, out=E)
                else:
                    loss[lc] -= wc @ np.log(Q[:, lc])
            Q *= P  # q = p (1 - p)
            P -= t_neg32
            P[r, j] -= dt32[j]  # r = p - t
            acc[0] += wc @ P
            P *= U
            acc[1] += wc @ P
            acc[2] += wc @ Q
            Q *= U
            acc[3] += wc @ Q
            Q *= U
            acc[4] += wc @ Q
        if self.stats is None:
            self.stats = self._stats
        if self.lo is None and m == self.K:
            self.lo, self.hi = lo.astype(np.float64), hi.astype(np.float64)
        loss -= t_neg * sum_f + dt * sum_pos_f  # minus sum_i w_i t_i f_i
        loss[~lmask] = np.nan
        # moments of the standardised scores u = (s - mu) / sd from those of s
        # (float64; as precise as sums of u: the float32 rounding of each
        # chunk's sums is bounded by sum |r| (|s| + |mu|) either way)
        acc /= self.wsum
        m_r, m_rs, m_q, m_qs, m_qss = acc
        g = np.stack([isd * (m_rs - mu * m_r), m_r], axis=1)
        m_qu = isd * (m_qs - mu * m_q)
        m_quu = isd * isd * (m_qss - mu * (2.0 * m_qs - mu * m_q))
        return loss / self.wsum, g, _hessians(m_quu, m_qu, m_q)


#: float32 solver: at least this fraction of the classes is evaluated as all
#: of them (a column gather of most classes costs about a full evaluation).
_F32_GATHER_MAX = 0.75


def _original_scale(theta, mu, sd):
    """``(A, B)`` on the scores of the standardised ``theta = (a, b)``: ``f = a (s - mu) / sd + b``.

    Raises a ``ValueError`` when ``A`` or ``B`` overflows float64 for a finite
    ``theta``: scores that spread over a subnormal ``sd`` (~1e-310) need a
    slope no float64 holds (the map would predict 0 or 1 everywhere).
    """
    a, b = theta.T
    with np.errstate(over="ignore", invalid="ignore"):
        A, B = a / sd, b - a * mu / sd
    if np.all(np.isfinite(theta)) and not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise ValueError(
            f"the scores spread over only {float(np.min(sd)):.3g} (their weighted "
            "standard deviation), so the logistic map's slope on them overflows "
            "float64; multiply the scores by a constant (e.g. 1e300) before "
            "calibrating."
        )
    return A, B


def _fit_platt_ovr32(Z, y, w, tol, max_iter, unit):
    """:func:`fit_platt_ovr` of a float32 matrix by float32 evaluations, or None.

    The subsample's moments standardise the full problem (any affine
    standardisation has the same optimum and Newton decrements). None (the
    float64 solver runs instead) when a subsample score column is nearly
    constant or not finite, or a class does not converge to a finite optimum.
    """
    n, K = Z.shape
    sub = slice(None, None, max(1, n // WARM_START_ROWS))
    ys, ws = y[sub], None if w is None else w[sub]
    ps = _OvrProblem32(Z[sub], ys, ws, True, unit=unit)
    if not np.all(~ps.flat & np.isfinite(ps.sd)
                  & (ps.sd > F32_FLAT_SD * np.abs(ps.mu))):
        return None
    theta, _, g, H = ps.start()
    # the start's loss by the float32 evaluation, as every later loss
    F, _, _ = ps.evaluate(np.arange(K), theta, loss=True)
    theta, _, st = ps.solve(theta, F, g, H, WARM_START_TOL32, max_iter)
    prob = _OvrProblem32(Z, y, w, True, standardise=(ps.mu, ps.sd), unit=unit)
    cold = (st != "converged") | ~np.all(np.isfinite(theta), axis=1)
    theta[cold] = 0.0
    theta[cold, 1] = prob.start_intercept(cold)
    F, g, H = prob.evaluate(np.arange(K), theta, loss=True)
    theta, n_iter, status = prob.solve(theta, F, g, H, tol, max_iter)
    A, B = _original_scale(theta, prob.mu, prob.sd)
    if not (np.all(status == "converged") and np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        return None
    return A, B, n_iter, status


def fit_platt_ovr(
    Z, y, sample_weight=None, *, target_smoothing=True, tol=1e-12, max_iter=100,
    warm_start=True,
):
    """All one-vs-rest Platt fits of a multiclass problem, batched over classes.

    Solves, for every class ``k``, the problem of :func:`fit_platt` with scores
    ``s = ovr_log_odds(Z)[:, k]`` and positives ``y == k``, with the same start,
    standardisation, ridge, Armijo backtracking (per class), stopping rule and
    statuses, but all classes in the same passes over ``Z``: each pass walks
    ``Z`` in row chunks, computes the scores of the classes still being
    solved, and accumulates their losses, gradients and Hessians. A class
    stops changing once its own test stops it.

    Parameters
    ----------
    Z : ndarray or torch.Tensor of shape (n_samples, n_classes)
        Logits, ``n_classes >= 3``, any float dtype (read in float64 row
        chunks; a tensor's chunks are copied to host memory).
    y : ndarray of shape (n_samples,), int
        Encoded labels in ``0..n_classes-1``.
    sample_weight : ndarray of shape (n_samples,), float64, default=None
    target_smoothing, tol, max_iter
        As in :func:`fit_platt`.
    warm_start : bool, default=True
        With at least :data:`WARM_START_MIN_ROWS` rows, first solve on a
        systematic subsample (every ``s``-th row, about
        :data:`WARM_START_ROWS` rows) to :data:`WARM_START_TOL`; a class
        whose subsample fit converged starts the full iteration there when
        its loss is below that at Lin et al.'s start. This changes only the
        starting point, not the optimum or the stopping rule, and is
        deterministic. For a float32 NumPy ``Z`` (with ``target_smoothing``
        and ``tol >= 1e-14``) the whole solve runs in float32 evaluations
        (:func:`_fit_platt_ovr32`), falling back to this float64 solver when
        it does not converge.

    Returns
    -------
    A, B : ndarray of shape (n_classes,), float64
        Slopes and intercepts on the scale of the one-vs-rest log-odds.
    n_iter : ndarray of shape (n_classes,), int64
        Newton iterations (Hessian evaluations) per class.
    status : ndarray of shape (n_classes,), object
        Per class, as ``status`` of :func:`fit_platt`.

    Notes
    -----
    Extra memory is O(n_samples + n_classes) plus one row chunk (about
    :data:`skcal._backend._numpy.CHUNK_BYTES` per work array), never an
    (n_samples, n_classes) matrix. The start point's loss, gradient and
    Hessian follow from per-class moments of the scores (``a = 0`` makes
    every ``f_i`` equal). Each later pass evaluates the candidate point of
    the line search together with its gradient and Hessian, so an accepted
    full Newton step costs one pass.

    **float32 solver** (:func:`_fit_platt_ovr32`; its evaluations and
    acceptance rules: :class:`_OvrProblem32`). The scores carry an absolute
    error of a few float32 ulps of the row's largest logit, as the logits
    themselves; the stopping rule and ``tol`` are unchanged, and the optimum
    agrees with the float64 solver's to ~1e-7 relative.
    """
    y = np.asarray(y)
    w = None if sample_weight is None else np.asarray(sample_weight, np.float64)
    unit = weight_unit(w)
    if (
        warm_start
        and target_smoothing
        and tol >= F32_MIN_TOL
        and ops.is_host_float32(Z)
        and Z.shape[0] >= WARM_START_MIN_ROWS
    ):
        out = _fit_platt_ovr32(Z, y, w, tol, max_iter, unit)
        if out is not None:
            return out
    prob = _OvrProblem(Z, y, w, target_smoothing, unit)
    theta, F, g, H = prob.start()
    if warm_start and Z.shape[0] >= WARM_START_MIN_ROWS:
        sub = slice(None, None, Z.shape[0] // WARM_START_ROWS)
        A0, B0, _, st = fit_platt_ovr(
            Z[sub], y[sub], None if w is None else w[sub],
            target_smoothing=target_smoothing, tol=WARM_START_TOL, max_iter=max_iter,
            warm_start=False,
        )
        ok = (st == "converged") & np.isfinite(A0) & np.isfinite(B0)
        cols = np.flatnonzero(ok & ~prob.flat)
        if cols.size:  # the subsample's (A, B) in the standardised parametrisation
            th = np.stack([A0[cols] * prob.sd[cols], B0[cols] + A0[cols] * prob.mu[cols]],
                          axis=1)
            F_c, g_c, H_c = prob.evaluate(cols, th)
            better = F_c < F[cols]
            c = cols[better]
            theta[c], F[c], g[c], H[c] = th[better], F_c[better], g_c[better], H_c[better]
    theta, n_iter, status = prob.solve(theta, F, g, H, tol, max_iter)
    for k in range(prob.K) if not target_smoothing else ():
        if _is_separable(ops.ovr_column(Z, k, prob.stats), y == k, w):
            status[k] = "separable"
    A, B = _original_scale(theta, prob.mu, prob.sd)
    return A, B, n_iter, status


# --------------------------------------------------------- one-vs-rest scores
@substitute_docstring
class PlattScaler(OneVsRestCalibrator):
    """Platt scaling: a logistic map ``sigmoid(A s + B)`` of the log-odds score.

    Binary problems use one score per sample, the log-odds
    ``s = z_1 - z_0`` of ``classes_[1]`` (or the 1-D score given as ``X``),
    and ``P(classes_[1] | s) = sigmoid(A s + B)``. Multiclass problems fit one
    ``(A_k, B_k)`` per class, "class k versus the rest", on the one-vs-rest
    log-odds of that class, and renormalise the rows.

    Parameters
    ----------
    %(calibrator_params)s
    target_smoothing : bool, default=True
        Fit against Platt's smoothed targets ``t+ = (N+ + 1) / (N+ + 2)`` for
        positives and ``t- = 1 / (N- + 2)`` for negatives (``N+``, ``N-``:
        the class's weighted counts in rows) instead of 1 and 0. This is
        Platt's out-of-sample prior, as in scikit-learn's
        ``CalibratedClassifierCV(method="sigmoid")``; it keeps ``(A, B)``
        finite on separable calibration sets. ``False`` gives the plain
        maximum-likelihood logistic fit. The counts are the summed weights
        divided by the weight of one row
        (:func:`skcal.utils._weights.weight_unit`, :ref:`sample-weights`):
        integer weights fit exactly like repeated rows (scikit-learn's
        weighted sums, for weights of greatest common divisor 1), and
        multiplying every weight by a constant changes nothing.
    score_scale : {"auto", "log_odds", "probability"}, default="auto"
        The score ``s`` of each class that the sigmoid is fitted on: its
        (one-vs-rest) log-odds, or its probability ``sigmoid(log-odds)``
        (scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` on a
        ``predict_proba``). ``"auto"`` uses the log-odds, except for
        ``input_type="probabilities"`` whose calibration probabilities
        contain an exact 0 (the votes or counts of a forest, a kNN or a naive
        Bayes model): see Notes.
    tol : float, default=1e-12
        Newton stops when half the squared Newton decrement (an estimate of
        the gap to the optimal mean cross-entropy) is at most ``tol``.
    max_iter : int, default=100
        Maximum number of Newton iterations per fitted ``(A, B)``.

    Attributes
    ----------
    score_scale_ : {"log_odds", "probability"}
        The score the sigmoid was fitted on (``score_scale`` with ``"auto"``
        resolved).
    a_ : float or ndarray of shape (n_classes,)
        Slope(s) ``A``. A float for a binary problem (the slope on
        ``s = z_1 - z_0``), a float64 array with one slope per class otherwise.
    b_ : float or ndarray of shape (n_classes,)
        Intercept(s) ``B``, as ``a_``.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted; column ``j`` of the output is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).
    n_iter_ : int
        Newton iterations of the fit; for multiclass the largest count over
        the per-class fits.
    log_floor_ : float or None
        With ``input_type="probabilities"``, ``score_scale="log_odds"`` and
        exact zeros in the calibration probabilities: the log of half the
        smallest positive calibration probability. Every log-probability is
        raised to it, in fit and predict, so that an exact 0 (or 1) becomes a
        probability below every observed one instead of a log-odds of -708
        (+708) that would dominate the fit (see Notes). None otherwise.

    See Also
    --------
    skcal.TemperatureScaler : one temperature for all classes; keeps the argmax.
    skcal.IsotonicScaler : non-parametric monotone one-vs-rest calibration.

    Notes
    -----
    **Binary.** ``p = sigmoid(A s + B)`` with ``(A, B)`` minimising the
    weighted mean cross-entropy
    ``sum_i w_i [log(1 + exp(f_i)) - t_i f_i] / sum_i w_i``, ``f_i = A s_i + B``,
    over targets ``t_i`` (smoothed or 0/1). The loss is evaluated without
    ``exp`` overflow and minimised by Newton's method with an Armijo
    backtracking line search, as in Lin, Lin & Weng (2007), on standardised
    scores so that scores of any magnitude (1e-3 or 1e5) are equally well
    conditioned; stopping rule and tolerance: see ``tol`` and
    :func:`fit_platt`. A ``ConvergenceWarning`` reports reaching
    ``max_iter`` or a failed line search.

    **Separable data.** Without target smoothing, a calibration set whose
    scores separate the classes (or in which a class is absent) has no
    maximum-likelihood ``(A, B)``: the loss decreases towards 0 as ``|A|``
    (or ``|B|``) grows. Newton then stops, by the same decrement rule, at a
    steep but finite sigmoid whose mean calibration loss is about ``tol``, and
    a ``ConvergenceWarning`` says so. With target smoothing (the default) the
    optimum is always finite.

    **Multiclass.** With ``p_i = softmax(z_i)`` the score of class ``k`` is its
    one-vs-rest log-odds ``s_ik = log p_ik - log(1 - p_ik) =
    z_ik - log sum_{j != k} exp(z_ij)``. It is what the binary score is for
    two classes, and, unlike the raw logit ``z_ik``, it does not change when a
    constant is added to a row (so logits and log-probabilities of the same
    model give the same fit). ``(A_k, B_k)`` is fitted as above with
    "``y == classes_[k]``" as the positive class, and the outputs are
    renormalised: ``P_ik = sigmoid(A_k s_ik + B_k) / sum_j sigmoid(A_j s_ij + B_j)``,
    computed in log space (the denominator is never 0). The predicted class may
    differ from the argmax of ``X``.

    **Probabilities with exact zeros.** The averaged votes of a random
    forest (or the neighbour counts of a kNN) contain exact 0s and 1s; their
    log-odds are infinite, and any finite stand-in (the floor of
    ``score_scale="log_odds"``) puts those rows far from the others and lets
    them dominate the fit. A sigmoid of the probability itself,
    ``sigmoid(A p_k + B)``, as scikit-learn fits on ``predict_proba``, does
    better there: on scikit-learn's ``test_calibration_multiclass`` (a
    30-tree forest, 5-fold ``CalibratedClassifier``) the Brier score is
    0.240 / 0.227 (seed 0, ``ensemble=True`` / ``False``) against 0.248 /
    0.236 with the floored log-odds, equal to scikit-learn's sigmoid. For the
    probabilities of a softmax (no exact zeros) the log-odds keep Platt's map
    equivalent to its map on the logits, which ``"auto"`` keeps.

    **Multiclass solver.** The ``n_classes`` problems are solved together by
    :func:`fit_platt_ovr`: every Newton iteration (and every backtracking
    step) is one row-chunked pass over ``X`` that computes the scores of the
    classes still being solved and their losses, gradients and Hessians; each
    class keeps its own line search and stopping rule and stops changing when
    it converges. Extra memory is O(n_samples) (four per-row statistics of the
    scores) plus one row chunk, never an (n_samples, n_classes) matrix.

    **Devices.** The fit runs on the CPU in float64 (float32 logits in a
    NumPy array with at least 40,000 rows: in float32 with float64 sums, see
    :func:`fit_platt_ovr`): for a torch tensor each row chunk is copied to
    host memory as it is read. Prediction is
    elementwise and runs entirely on the tensor's device.

    References
    ----------
    J. Platt, "Probabilistic outputs for support vector machines and
    comparisons to regularized likelihood methods", in Advances in Large
    Margin Classifiers, MIT Press, 1999.

    H.-T. Lin, C.-J. Lin, R. C. Weng, "A note on Platt's probabilistic outputs
    for support vector machines", Machine Learning 68(3), 267-276, 2007.

    B. Zadrozny, C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD 2002 (one-vs-rest and
    renormalisation).

    Examples
    --------
    >>> from skcal import PlattScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)  # over-confident logits
    >>> ps = PlattScaler().fit(X, y)
    >>> bool(0 < ps.a_ < 1)  # the sigmoid is flatter than the raw log-odds
    True
    >>> ps.predict_proba(X).shape
    (1000, 2)
    """

    _binary_log_odds_only = True

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "target_smoothing": ["boolean"],
        "score_scale": [StrOptions({"auto", "log_odds", "probability"})],
        **SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        input_type=DEFAULT_INPUT_TYPE,
        classes=None,
        backend="auto",
        target_smoothing=True,
        score_scale="auto",
        tol=1e-12,
        max_iter=100,
    ):
        store_params(self, locals())

    def _warn(self, status, A, B, n_iter, label):
        """ConvergenceWarning for one ``(A, B)`` whose status is not "converged"."""
        message = {
            "separable": separable_message(
                label, f"a steep sigmoid (A={A:.6g}, B={B:.6g})"),
            "max_iter": f"Platt scaling of {label} stopped after "
            f"max_iter={self.max_iter} Newton iterations before reaching tol; "
            "increase max_iter.",
            "line_search": f"Platt scaling of {label}: the line search found no "
            f"decrease of the loss after {n_iter} Newton iterations (precision "
            "limit); the fit may be inaccurate.",
        }.get(status)
        if message is not None:
            warn(message, ConvergenceWarning)

    _map_output = "log_odds"

    # ------------------------------------------- probabilities with exact 0 / 1
    def _floor_log_proba(self, Z):
        """``max(Z, log_floor_)`` for probability input (see ``log_floor_``)."""
        floor = getattr(self, "log_floor_", None)
        if floor is None:
            return Z
        return ops.clamp_min(Z, floor)

    def _resolve_score_scale(self, Z):
        """Set ``score_scale_`` and ``log_floor_`` (see both) from the fitted ``Z``.

        An exact 0 of ``input_type="probabilities"`` is stored as
        ``log(finfo.tiny)`` (about -708) by ``check_scores``.
        """
        self.log_floor_ = None
        scale = "log_odds" if self.score_scale == "auto" else self.score_scale
        self.score_scale_ = scale
        if self.input_type != "probabilities" or scale == "probability":
            return
        exact0 = Z <= ops.log_tiny(Z) + 1.0
        if not bool(exact0.any()) or bool(exact0.all()):
            return
        if self.score_scale == "auto":
            self.score_scale_ = "probability"
        else:
            self.log_floor_ = float(Z[~exact0].min()) - math.log(2.0)

    def _on_probabilities(self):
        return getattr(self, "score_scale_", "log_odds") == "probability"

    def _fit(self, Z, y, sample_weight, xp):
        self._resolve_score_scale(Z)
        super()._fit(self._floor_log_proba(Z), y, sample_weight, xp)

    def _predict_rows(self, Z, log):
        return super()._predict_rows(self._floor_log_proba(Z), log)

    def _options(self):
        return dict(
            target_smoothing=self.target_smoothing, tol=self.tol, max_iter=self.max_iter
        )

    def _fit_map(self, s, t, sample_weight, label):
        if self._on_probabilities():
            s = expit(s)
        A, B, n_iter, status = fit_platt(s, t, sample_weight, **self._options())
        self._warn(status, A, B, n_iter, label)
        return A, B, n_iter

    def _fit_multiclass(self, Z, y, sample_weight):
        if self._on_probabilities():
            # one probability column at a time through _fit_map
            return super()._fit_multiclass(Z, y, sample_weight)
        # all K problems in the same passes over Z (fit_platt_ovr)
        A, B, n_iter, status = fit_platt_ovr(Z, y, sample_weight, **self._options())
        for k in range(Z.shape[1]):
            self._warn(status[k], A[k], B[k], n_iter[k], class_label(self.classes_[k]))
        return list(zip(A, B, n_iter))

    def _set_maps(self, maps):
        self.a_, self.b_, n_iter = unzip_maps(maps, 2)
        self.n_iter_ = int(np.max(n_iter))

    def _map_scores(self, S):
        """``F = A s + B`` per column of ``S`` (in place; ``s`` as ``score_scale_``)."""
        if self._on_probabilities():
            S = ops.sigmoid(S)
        S *= param_like(self.a_, S)
        S += param_like(self.b_, S)
        return S

    def _torch_spec(self):
        return {
            "kind": "ovr_sigmoid",
            "coef": np.atleast_1d(np.asarray(self.a_, dtype=np.float64))[None, :],
            "intercept": np.atleast_1d(np.asarray(self.b_, dtype=np.float64)),
            "features": ("sigmoid",) if self._on_probabilities() else ("score",),
            "log_floor": getattr(self, "log_floor_", None),
        }
