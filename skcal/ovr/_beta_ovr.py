"""All one-vs-rest beta calibration fits of a float32 multiclass problem, batched over classes.

:func:`fit_beta_ovr32` solves :func:`skcal.ovr._beta.fit_beta`'s problem of
every class in the same row-chunked float32 passes over ``Z``, as
:func:`skcal.ovr._platt.fit_platt_ovr` does for Platt scaling; the bounds
``a, b >= 0`` by the active-set rules of :func:`skcal.ovr._newton.newton_batched`.
"""

import math

import numpy as np

from .._backend import _numpy
from .._backend._ovr import _row_stats32, ovr_log_odds
from .._backend._steps import log_sigmoid
from ._base import label_positions, row_stats_buffers
from ._logistic import base_rate_log_odds
from ._newton import (
    ARMIJO_C, F32_CHUNK_BYTES, F32_CLIP, F32_LOSS_RESOLUTION, RIDGE,
    WARM_START_MIN_ROWS, WARM_START_ROWS, _directions, newton_batched,
)

__all__ = ["fit_beta_ovr32", "BATCH_MIN_ROWS"]

#: Multiclass float32 fits on at least this many rows are batched (below,
#: one float64 fit per class: the passes are cheap and the subsample warm
#: start would be most of the data).
BATCH_MIN_ROWS = WARM_START_MIN_ROWS
#: The warm start's subsample (:data:`~skcal.ovr._newton.WARM_START_ROWS`) is
#: solved to this.
WARM_START_TOL = 1e-6
#: The warm start's own warm start: every ``WARM_START_STEPS``-th row of the
#: subsample, solved to :data:`WARM_START_TOL_COARSE`.
WARM_START_STEPS = 8
WARM_START_TOL_COARSE = 1e-4
#: After a step whose predicted decrease (half the squared Newton decrement)
#: is at most this, the Hessian is not recomputed at the new point: the last
#: one is used (near the optimum it changes by O(lambda) relative per step,
#: lambda = sqrt(2 * 1e-8) here, i.e. well under 1 %).
HESS_REUSE = 1e-8
#: A subsample feature whose sd is at most this fraction of its largest
#: magnitude is (nearly) constant in float32: the class is fitted in float64.
F32_FLAT = 1e-4
_LOG2 = math.log(2.0)


def beta_map(parameters, coef, c, shift):
    """``(a, b, c)`` of the map from the coefficients of the centred features.

    ``coef``: one coefficient per feature (one for ``"am"``); ``c``: the
    intercept on the centred features; ``shift``: ``coef`` dotted with the centres.
    """
    if parameters == "ab":
        a, b = coef
        return a, b, (a - b) * _LOG2
    a, b = (coef[0], coef[0]) if parameters == "am" else coef
    return a, b, c - shift


def _design(parameters):
    """Number of (bounded) features and whether there is an intercept."""
    return {"abm": (2, True), "am": (1, True), "ab": (2, False)}[parameters]


class _BetaProblem32:
    """The K standardised one-vs-rest beta problems of a float32 logit matrix.

    Features of class ``k``: ``x1 = log p_k`` and ``x2 = -log(1 - p_k)`` of
    ``p = softmax(z)``, computed in float32 without cancellation:
    ``x1 = z_k - (m + log T)`` and ``x2 = -log1p(-exp(x1))`` with ``m`` the
    row maximum and ``T = sum_j exp(z_j - m)``; for the arg-max column
    (where ``p`` may be close to 1) ``x2 = s_k - x1`` from its one-vs-rest
    log-odds ``s_k``, which the row statistics hold without cancellation.
    The kernel centres them in float32 (``x1 - mu1``, ``x2 - mu2``; for
    ``"am"`` the score ``x1 + x2 - mu1 - mu2``; ``"ab"``'s fixed centres are
    ``-log 2, log 2``) and the scales ``sd`` are applied to the per-class
    sums in float64: the coefficients ``theta`` are those of
    ``u_j = (x_j - mu_j) / sd_j`` (plus the intercept ``theta_c`` for
    ``"abm"`` and ``"am"``), a positive rescaling that keeps the bounds.

    Every evaluation walks ``Z`` in row chunks; all elementwise work is
    float32 and every sum over the rows of a chunk a float32 ``einsum``,
    accumulated in float64 across chunks. The row statistics (20 B per row)
    are taken during the first evaluation.
    """

    def __init__(self, Z, y, w, parameters, mu, sd):
        self.Z, self.y, self.w, self.K = Z, y, w, Z.shape[1]
        self.w32 = None if w is None else w.astype(np.float32)
        self.wsum = float(Z.shape[0]) if w is None else float(w.sum())
        self.parameters = parameters
        self.nf, self.intercept = _design(parameters)
        self.p = self.nf + self.intercept
        # the float32 centres (mu1, mu2) of x1, x2 (also for "am") used exactly
        self.mu32 = np.asarray(mu, np.float64).astype(np.float32)
        self.mu = self.mu32.astype(np.float64)
        self.sd = sd = np.asarray(sd, np.float64)
        self.sgn = (1.0 / sd[:1] if parameters == "am"  # see _evaluate
                    else np.stack([1.0 / sd[0], -1.0 / sd[1]]))
        self.stats, self._stats = None, row_stats_buffers(Z.shape[0], 4)

    # ------------------------------------------------------------ features
    def _features(self, sl, cols, all_cols):
        """Centred features of the chunk ``sl``: ``x1 - mu1`` and ``w2 = -(x2 - mu2)`` (float32).

        ``x1 = log p``, ``x2 = -log(1 - p)``; ``"am"`` returns the single
        centred score ``s - mu`` instead.
        """
        f32 = np.float32
        mu1 = self.mu32[0] if all_cols else self.mu32[0][cols]
        mu2 = self.mu32[1] if all_cols else self.mu32[1][cols]
        if self.stats is None:  # the first evaluation: the row statistics too
            (a1, m1, total, nt), X, E = _row_stats32(self.Z[sl])
            logT = np.log(total)
            for o, v in zip(self._stats, (a1, m1, total, nt, logT)):
                o[sl] = v
            X -= logT[:, None]  # x1 = log p (exactly -log T at the arg-max)
            X -= mu1
            E *= (f32(-1.0) / total)[:, None]  # -p (0 at the arg-max)
        else:
            a1, m1, total, nt, logT = (v[sl] for v in self.stats)
            A = self.Z[sl] if all_cols else self.Z[sl][:, cols]
            X = A - (m1 + logT)[:, None]  # x1 = log p
            E = np.exp(X)
            np.negative(E, out=E)  # -p
            X -= mu1
        with np.errstate(divide="ignore"):
            np.log1p(E, out=E)  # log(1 - p); the arg-max entries are replaced
        r, j = label_positions(a1, cols, self.K)
        E[r, j] = -(nt[r] + logT[r])  # log(1 - p) = -(s - log p) at the arg-max
        E += mu2  # w2 = -(x2 - mu2)
        if self.parameters == "am":
            X -= E  # s - mu1 - mu2
            return [X]
        return [X, E]

    # ----------------------------------------------------------- evaluation
    def evaluate(self, cols, theta, loss=True, hess=True):
        """Mean loss, gradient and Hessian of the classes ``cols`` at ``theta`` (m, p).

        Returns ``F`` (m,) (None unless ``loss``), ``g`` (m, p) and ``H``
        (m, p, p), NaN for the classes where ``hess`` (a bool, or a bool
        array over ``cols``) is False: their Hessian sums are skipped. At
        least a quarter of the classes are evaluated as all of them (a
        column gather costs more than the classes it skips).
        """
        hess = np.broadcast_to(np.asarray(hess, bool), cols.shape)
        loss = np.broadcast_to(np.asarray(loss, bool), cols.shape)
        if self.stats is None or (cols.size < self.K and 4 * cols.size >= self.K):
            th = np.zeros((self.K, self.p))
            th[cols] = theta
            hk, lk = np.zeros(self.K, bool), np.zeros(self.K, bool)
            hk[cols], lk[cols] = hess, loss
            F, g, H = self._evaluate(np.arange(self.K), th, lk, hk)
            return (F[cols] if F is not None else None), g[cols], H[cols]
        return self._evaluate(cols, theta, loss, hess)

    def _evaluate(self, cols, theta, loss, hess):
        n, m, p, nf = self.Z.shape[0], cols.size, self.p, self.nf
        all_cols = m == self.K
        f32 = np.float32
        # theta is on the standardised features u_j = sgn_j * feature_j
        # (sgn = (1 / sd1, -1 / sd2) or (1 / sd,)); the kernel's features are
        # the centred ones, so its sums are scaled by sgn afterwards
        sgn = (self.sgn if all_cols else self.sgn[:, cols])  # (nf, m)
        neg_coef = [(-(theta[:, i] * sgn[i])).astype(f32) for i in range(nf)]
        neg_c = (-theta[:, nf]).astype(f32) if self.intercept else None
        # the Hessian entries (i <= j; index nf: the intercept, a feature of ones)
        pairs = [(i, j) for i in range(p) for j in range(i, p)]
        hcols = np.flatnonzero(hess)
        h_all = hcols.size == m
        lcols = np.flatnonzero(loss)
        l_all = lcols.size == m
        loss = bool(lcols.size)
        acc = np.zeros((p, m))
        acc_h = np.zeros((len(pairs), hcols.size))
        F_acc, sum_pos_f = np.zeros(m), np.zeros(m)
        for sl in _numpy.chunk_rows(n, m, itemsize=4, chunk_bytes=F32_CHUNK_BYTES):
            U = self._features(sl, cols, all_cols)
            G = U[0] * neg_coef[0]  # -f
            if nf == 2:
                G += U[1] * neg_coef[1]
            if neg_c is not None:
                G += neg_c
            r, j = label_positions(self.y[sl], cols, self.K)
            wc = None if self.w32 is None else self.w32[sl]
            if loss:
                fp = -G[r, j].astype(np.float64)
                if self.w is not None:
                    fp *= self.w[sl][r]
                sum_pos_f += np.bincount(j, weights=fp, minlength=m)
                # -log(1 - p) below loses f beyond the clip (f > 87); f < -87
                # only drops terms below 1e-37
                if G.min(initial=0.0) < -F32_CLIP:
                    ri, ci = np.nonzero(G < -F32_CLIP)
                    f = -G[ri, ci].astype(np.float64)
                    fix = np.logaddexp(0.0, f) - np.logaddexp(0.0, F32_CLIP)
                    if wc is not None:
                        fix *= wc[ri]
                    F_acc += np.bincount(ci, weights=fix, minlength=m)
            np.clip(G, f32(-F32_CLIP), f32(F32_CLIP), out=G)
            E = np.exp(G, out=G)  # exp(-f)
            P = E + f32(1.0)
            np.reciprocal(P, out=P)  # p = sigmoid(f)
            if loss or hcols.size:
                Q = np.multiply(E, P, out=E)  # 1 - p, without cancellation
            if loss:  # softplus(f) = -log(1 - p)
                L = np.log(Q if l_all else Q[:, lcols])
                F_acc[lcols] -= (L.sum(0) if wc is None else wc @ L)
            if hcols.size:
                Q *= P  # q = p (1 - p)
                if wc is not None:
                    Q *= wc[:, None]
            P[r, j] -= f32(1.0)  # p - t
            if wc is not None:
                P *= wc[:, None]
            acc += np.array([_weighted_sum(P, U[i:i + 1]) for i in range(p)])
            if hcols.size:
                if not h_all:
                    Q = Q[:, hcols]
                Uh = U if h_all else [u[:, hcols] for u in U]
                acc_h += np.array([_weighted_sum(Q, [Uh[c] for c in ij if c < nf])
                                   for ij in pairs])
        if self.stats is None:
            self.stats = self._stats
        Fm = None
        if loss:  # NaN for the classes whose loss was not asked for
            Fm = np.full(m, np.nan)
            Fm[lcols] = (F_acc - sum_pos_f)[lcols] / self.wsum
        acc /= self.wsum
        acc_h /= self.wsum
        # scale: g_u = sgn * g_centred; H_u = sgn_i sgn_j H_centred
        scale = np.vstack([sgn, np.ones((int(self.intercept), m))])  # (p, m)
        g = (acc * scale).T.copy()
        H = np.full((m, p, p), np.nan)
        sh = scale[:, hcols]
        for k, (i, jx) in enumerate(pairs):
            H[hcols, i, jx] = H[hcols, jx, i] = acc_h[k] * sh[i] * sh[jx]
        return Fm, g, H


def _weighted_sum(Q, us):
    """``sum_i Q_ik prod_u u_ik`` per column ``k`` (one float32 ``einsum``; no ``us``: ``Q``'s column sums)."""
    return np.einsum(",".join(["ik"] * (1 + len(us))) + "->k", Q, *us) if us else Q.sum(0)


# --------------------------------------------------------- per-class solver
def _solve(prob, n_pos, cols, theta0, H0, warm, tol, max_iter):
    """Solve the classes ``cols`` of ``prob`` by :func:`~skcal.ovr._newton.newton_batched`.

    A class starts at ``theta0`` with the Hessian ``H0`` (of the previous,
    subsample, problem) where ``warm``, else at :func:`_start_point`. The
    active-set and stopping rules are the core's; a step is accepted by
    Armijo's rule or, when it predicts a decrease of at most
    :data:`F32_LOSS_RESOLUTION` and reaches no bound, when the decrement at
    the new point is smaller (the loss is then not evaluated); after such a
    step predicting at most :data:`HESS_REUSE` the last Hessian is reused
    (see that constant for why). A failed line search is "line_search" (the
    class is refitted in float64).
    Returns ``theta`` (K, p), ``status`` (K,), ``n_iter`` (K,) and the last
    Hessians ``H`` (K, p, p); classes not in ``cols``: 0, "skipped", 0 and
    the identity.
    """
    K, p, m = prob.K, prob.p, cols.size
    nonneg = np.arange(p) < prob.nf
    theta, F, g, H = np.zeros((m, p)), np.full(m, np.nan), np.zeros((m, p)), np.zeros((m, p, p))
    good = warm[cols]
    if good.any():
        theta[good], H[good] = theta0[cols[good]], H0[cols[good]]
        F[good], g[good], _ = prob.evaluate(cols[good], theta[good], hess=False)
    if not good.all():
        theta[~good], F[~good], g[~good], H[~good] = _start_point(prob, n_pos, cols[~good])

    def trial(i, th, step, d, slope, cur, Fcur, Hcur):
        ks = cols[i]
        base = cur[i] + step[:, None] * d
        hit = np.any((th == 0.0) & (base != 0.0), axis=1)
        local = (-slope / 2.0 <= F32_LOSS_RESOLUTION) & ~hit
        miss = ~local & np.isnan(Fcur[i])
        if miss.any():  # the loss at the current point (after local steps)
            Fcur[i[miss]] = prob.evaluate(ks[miss], cur[i[miss]], hess=False)[0]
        hess = ~local | (-slope / 2.0 > HESS_REUSE)
        F_c, g_c, H_c = prob.evaluate(ks, th, loss=~local, hess=hess)
        F_c = np.full(i.size, np.nan) if F_c is None else np.where(local, np.nan, F_c)
        ok = F_c <= Fcur[i] + ARMIJO_C * step * slope
        if local.any():
            # local steps: the decrement at the new point (with the Hessian used there)
            li = np.flatnonzero(local)
            Hl = np.where(hess[li, None, None], H_c[li] + RIDGE * np.eye(p), Hcur[i[li]])
            free = ~(nonneg & (th[li] == 0.0))
            dl = _directions(g_c[li], Hl, free)  # (0 on held coordinates)
            ok[li] = -np.einsum("ij,ij->i", g_c[li], dl) < -slope[li]
        return ok, F_c, g_c, H_c  # H_c: NaN where not hess (kept by the core)

    th, it, st, _, _, Hk = newton_batched(
        None, theta, start=(F, g, H), nonneg=nonneg, tol=tol, max_iter=max_iter, trial=trial,
        failed_status=lambda slope, F: np.full(slope.size, "line_search", dtype=object),
        full_output=True)
    theta, H = np.zeros((K, p)), np.tile(np.eye(p), (K, 1, 1))
    n_iter = np.zeros(K, dtype=np.int64)
    status = np.full(K, "skipped", dtype=object)
    theta[cols], n_iter[cols], status[cols] = th, it, st
    H[cols] = Hk - RIDGE * np.eye(p)
    return theta, status, n_iter, H


def _moments(x1, x2, w, parameters):
    """Centres ``mu`` (2, K) of ``x1, x2`` and scales ``sd`` (nf, K) of the features; flat classes.

    ``"abm"``: weighted means and sds of ``x1`` and ``x2``; ``"am"``: the
    means of ``x1`` and ``x2`` and the sd of ``s = x1 + x2``; ``"ab"`` (no
    intercept): the fixed centres ``-log 2, log 2`` and the root mean squares
    of ``x1 + log 2`` and ``x2 - log 2``.
    """
    wsum = float(x1.shape[0]) if w is None else float(w.sum())

    def mean(x):
        return (x.sum(0) if w is None else w @ x) / wsum

    if parameters == "ab":
        mu = np.stack([np.full(x1.shape[1], -_LOG2), np.full(x1.shape[1], _LOG2)])
    else:
        mu = np.stack([mean(x1), mean(x2)])
    if parameters == "am":
        feats = [x1 + x2 - (mu[0] + mu[1])]
    else:
        feats = [x1 - mu[0], x2 - mu[1]]
    sd = np.stack([np.sqrt(mean(x * x)) for x in feats])
    flat = np.zeros(x1.shape[1], bool)
    for x, v in zip(feats, sd):
        flat |= ~(v > F32_FLAT * np.abs(x).max(0))
    flat |= ~np.all(np.isfinite(mu), 0) | ~np.all(np.isfinite(sd), 0)
    return mu, np.where(sd > 0, sd, 1.0), flat


def _start_point(prob, n_pos, cols):
    """Of the classes ``cols``: the better (lower loss) of ``fit_beta``'s two starts, and F, g, H there.

    The base rate and the identity map, in the standardised coordinates.
    """
    nf = prob.nf
    base, ident = np.zeros((cols.size, prob.p)), np.zeros((cols.size, prob.p))
    ident[:, :nf] = prob.sd.T[cols]  # f = x1 + x2 = sum_j sd_j u_j + (mu1 + mu2)
    if prob.intercept:
        base[:, nf] = base_rate_log_odds(n_pos[cols], prob.wsum)
        ident[:, nf] = (prob.mu[0] + prob.mu[1])[cols]
    Fb, gb, Hb = prob.evaluate(cols, base)
    Fi, gi, Hi = prob.evaluate(cols, ident)
    use_i = Fi < Fb
    return (np.where(use_i[:, None], ident, base), np.where(use_i, Fi, Fb),
            np.where(use_i[:, None], gi, gb), np.where(use_i[:, None, None], Hi, Hb))


def fit_beta_ovr32(Z, y, sample_weight=None, *, parameters="abm", tol=1e-12, max_iter=200):
    """All one-vs-rest beta calibration fits of a float32 logit matrix, batched over classes.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_classes), float32
        Logits, ``n_classes >= 3``.
    y : ndarray of shape (n_samples,), int
        Encoded labels in ``0..n_classes-1``.
    sample_weight : ndarray of shape (n_samples,), float64, default=None
    parameters, tol, max_iter
        As in :func:`skcal.ovr._beta.fit_beta`.

    Returns
    -------
    a, b, c : ndarray of shape (n_classes,), float64
        The maps ``logit q = a log p - b log(1 - p) + c`` of the classes
        fitted here (NaN for the others).
    n_iter : ndarray of shape (n_classes,), int64
        Newton iterations of the full-data solve.
    status : ndarray of shape (n_classes,), object
        ``"converged"`` or ``"uninformative"`` (as :func:`fit_beta`: the
        constrained optimum has ``a = b = 0``; ``c`` is then the base rate);
        ``None`` for a class this solver leaves to ``fit_beta`` (one class
        absent from the data or from the subsample, a feature (nearly)
        constant on the subsample, or a float32 fit that did not converge).

    Notes
    -----
    A systematic subsample (every ``s``-th row, about
    :data:`WARM_START_ROWS`) gives the features' moments, which standardise
    the problem (any affine standardisation with a positive scale has the
    same optimum and the same constraints), and is solved, from the better
    of ``fit_beta``'s two starts, to :data:`WARM_START_TOL`. The full-data
    Newton iteration starts there, with the subsample's Hessian, and stops
    by ``fit_beta``'s rule; steps are accepted and Hessians reused by
    :func:`_solve`'s rules. The optimum agrees with the float64 solve of the
    same logits to ~1e-6 relative (the float32 rounding of the features).
    Extra memory: O(n_samples + n_classes) plus one row chunk of work arrays.
    """
    n, K = Z.shape
    y = np.asarray(y)
    w = None if sample_weight is None else np.asarray(sample_weight, np.float64)
    nf, intercept = _design(parameters)
    p = nf + intercept
    wsum = float(n) if w is None else float(w.sum())
    n_pos = np.bincount(y, weights=w, minlength=K).astype(np.float64)
    a_out, b_out, c_out = np.full(K, np.nan), np.full(K, np.nan), np.full(K, np.nan)
    n_iter = np.zeros(K, dtype=np.int64)
    status = np.full(K, None, dtype=object)

    ws_step = max(1, n // WARM_START_ROWS)
    sub = slice(None, None, ws_step)
    Zs, ys = np.ascontiguousarray(Z[sub]), y[sub]
    ws = None if w is None else w[sub]
    S = ovr_log_odds(Zs)  # float64 features x1 = log p, x2 = -log(1 - p) of the subsample
    mu, sd, flat = _moments(log_sigmoid(S), -log_sigmoid(-S), ws, parameters)
    ns_pos = np.bincount(ys, weights=ws, minlength=K)
    ns_w = float(ys.size) if ws is None else float(ws.sum())
    ok = ~flat & (n_pos > 0) & (n_pos < wsum) & (ns_pos > 0) & (ns_pos < ns_w)
    cols = np.flatnonzero(ok)
    if cols.size == 0:
        return a_out, b_out, c_out, n_iter, status
    # warm starts: the subsample's optimum (from fit_beta's better start), on
    # a smaller subsample's optimum first; every level starts a class at the
    # previous level's optimum where that converged, else at the better start
    levels = [(ws_step * WARM_START_STEPS, WARM_START_TOL_COARSE), (ws_step, WARM_START_TOL)]
    theta, warm = np.zeros((K, p)), np.zeros(K, bool)
    H = np.tile(np.eye(p), (K, 1, 1))
    for lstep, ltol in levels:  # lstep >= 5: fits of n >= BATCH_MIN_ROWS rows only
        sub = slice(None, None, lstep)
        yl, wl = y[sub], None if w is None else w[sub]
        pl = _BetaProblem32(np.ascontiguousarray(Z[sub]), yl, wl, parameters, mu, sd)
        npl = np.bincount(yl, weights=wl, minlength=K)
        ok_l = cols[(npl[cols] > 0) & (npl[cols] < pl.wsum)]
        theta, st, _, H = _solve(pl, npl, ok_l, theta, H, warm, ltol, max_iter)
        warm = (st == "converged") & np.all(np.isfinite(theta), 1) & np.all(np.isfinite(H), (1, 2))
    # the full problem
    prob = _BetaProblem32(Z, y, w, parameters, mu, sd)
    theta, st, it, _ = _solve(prob, n_pos, cols, theta, H, warm, tol, max_iter)
    done = cols[(st[cols] == "converged") & np.all(np.isfinite(theta[cols]), 1)]
    coef = theta[:, :nf] / prob.sd.T  # on the features x1, x2 (or s)
    c0 = base_rate_log_odds(n_pos, wsum)
    for k in done:
        mu1, mu2 = prob.mu[:, k]
        shift = coef[k, 0] * (mu1 + mu2) if nf == 1 else coef[k] @ (mu1, mu2)
        a, b, c = beta_map(parameters, coef[k], theta[k, -1], shift)
        n_iter[k] = it[k]
        if a == 0.0 and b == 0.0:
            a_out[k], b_out[k], c_out[k], status[k] = 0.0, 0.0, c0[k], "uninformative"
        else:
            a_out[k], b_out[k], c_out[k], status[k] = a, b, c, "converged"
    return a_out, b_out, c_out, n_iter, status
