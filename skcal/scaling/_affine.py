"""The shared solver of the affine calibration maps ``a = W phi(z) + b``.

Matrix scaling, Dirichlet calibration (full, diagonal, fixed-diagonal),
bias-corrected temperature scaling and no-bias vector scaling all minimise

``F(W, b) = sum_i s_i [logsumexp(a_i) - a_{i, y_i}] / sum_i s_i + pen(W, b)``,
``a_i = W phi(z_i) + b``,
``pen(W, b) = sum_{k,j} C_kj (W_kj - R_kj)^2 + sum_k c_k b_k^2``,

over a *structured* ``W`` (full, diagonal, or a multiple of the identity),
with or without ``b``. ``F`` is convex (a log-sum-exp of linear functions
plus a convex quadratic). :func:`fit_affine` solves it.

Parametrisation
---------------
The solvers work on standardised features ``x~ = (phi(z) - m) / s`` (column
means ``m`` and standard deviations ``s``), i.e. on ``(W~, b~)`` with
``W = W~ diag(1/s)`` and ``b = b~ - W~ (m / s)``. This linear change of
variables leaves the minimum unchanged but makes the Hessian comparable
across parameters for features of any magnitude or offset (log-probabilities
are all negative, logits may be 1e4). The penalty is written in the original
``(W, b)`` and carried through the same linear map exactly.

Solvers
-------
Up to :data:`NEWTON_MAX_PARAMS` parameters :func:`newton`, above it
:func:`_trust_region_newton_cg` (described for users in the Notes of
:class:`~skcal.MatrixScaler`): its model's Hessian-vector products are taken
on :class:`skcal._backend._matrix.HessianSample`, its preconditioners are
:class:`_Jacobi` and :class:`_BlockJacobi`, and :class:`_NullShift` solves
the softmax's flat directions for the penalty.
"""

import numpy as np
from scipy.linalg.lapack import dtrtri

from .._backend import _matrix as mk
from ..utils._docstrings import substitute_docstring
from ._temperature import FIT_DOCS, fit_temperature

__all__ = ["AffinePenalty", "fit_affine", "newton", "nll", "NEWTON_MAX_PARAMS"]

#: Largest number of parameters solved by Newton's method with the exact
#: Hessian (a full ``W`` up to K = 20 classes, a diagonal one up to K = 256).
NEWTON_MAX_PARAMS = 512
#: Largest ``K (K + 1)`` of a full ``W`` whose Hessian is formed (the
#: ``O(n K^4)`` Hessian pass costs about ``K^2 / 8`` Hessian-vector products).
NEWTON_MAX_FULL_PARAMS = 420
#: The trust region stopping on repeated failed steps (the objective no longer
#: resolves the decrease, as with float32 logits) counts as converged when the
#: gradient norm is within this factor of the tolerance.
_PRECISION_LOSS_GTOL_FACTOR = 1e3
#: Memory for the rows on which the trust-region model's Hessian-vector
#: products are taken (features and probabilities): all rows when they fit,
#: else a fixed random subset of that many rows (at least the minimum).
HESS_SAMPLE_BYTES = 32 << 20
HESS_SAMPLE_MIN_ROWS = 4096
#: Eigenvalues of the feature covariance are floored at this fraction of the
#: largest before whitening.
WHITEN_FLOOR = 1e-2
#: Relative residual at which the inner CG solve stops on a row sample (its
#: Hessian is itself a sample's: solving it more exactly buys little).
CG_FORCING = 0.1
#: Relative rounding of the objective assumed for 16/32-bit logits: changes
#: below ``F32_EPS |f|`` are judged by the gradient.
F32_EPS = 1e-9
#: Most CG steps per trust-region iteration on a row sample (with all rows
#: held, up to 10 per parameter, as SciPy's trust-ncg).
CG_MAX_STEPS = 250
#: A full ``W`` is preconditioned by its per-class ``(K + 1) x (K + 1)``
#: Hessian blocks (:class:`_BlockJacobi`) when they take at most this many
#: bytes (K up to about 200); by the diagonal otherwise.
BLOCK_MAX_BYTES = 64 << 20
#: The diagonal preconditioner is used until a CG solve takes this many steps
#: (it is capped there), the blocks from the next iteration on: forming them
#: costs ``O(n K^3)``, up to ``K / 2`` Hessian-vector products, worth it only
#: where the diagonal leaves the problem ill-conditioned (a weak penalty on
#: many classes).
BLOCK_SWITCH_STEPS = 40
#: Rows whose weight ``p_ik (1 - p_ik)`` is below this fraction of the
#: class's largest are left out of that class's preconditioner block.
BLOCK_ROW_CUT = 1e-4
#: :func:`newton` with ``predict`` may stop on the predicted next decrement
#: only below this half squared decrement (the quadratic regime), and with
#: this safety factor on the prediction.
PREDICT_MAX_DECREMENT = 1e-4
PREDICT_SAFETY = 10.0


class AffinePenalty:
    """``pen(W, b) = sum C (W - R)^2 + sum c b^2`` in the original parameters.

    Parameters
    ----------
    C, R : ndarray of shape (K, K) for a full ``W`` or (K,) for a diagonal one
        Weights (>= 0) and centre of the penalty on ``W``.
    c : ndarray of shape (K,) or None
        Weights (>= 0) of the penalty on ``b`` (None: no intercept).
    """

    def __init__(self, C, R, c):
        self.C = np.asarray(C, dtype=np.float64)
        self.R = np.asarray(R, dtype=np.float64)
        self.c = None if c is None else np.asarray(c, dtype=np.float64)

    def value(self, W, b):
        d = W - self.R
        v = float(np.sum(self.C * d * d))
        if b is not None:
            v += float(np.sum(self.c * b * b))
        return v

    def grad(self, W, b):
        return self.hessp(W - self.R, b)  # H times the offset from the centre

    def hessp(self, VW, vb):
        return 2.0 * self.C * VW, None if vb is None else 2.0 * self.c * vb


class _Problem:
    """Parameter maps between ``theta`` (solver), ``(W~, b~)`` (kernels) and ``(W, b)``."""

    def __init__(self, k, structure, intercept, feat, Mt=None):
        self.k, self.structure, self.intercept, self.feat = k, structure, intercept, feat
        # full W: kernel matrix = theta-matrix @ Mt (Mt = whitening, symmetric)
        self.Mt = np.eye(k) if Mt is None else Mt
        self.whitened = Mt is not None
        self.m_s = feat.shift / feat.scale
        self.inv_s = 1.0 / feat.scale
        self.nw = {"full": k * k, "diagonal": k, "scalar": 1}[structure]
        self.n_params = self.nw + (k if intercept else 0)

    # theta <-> (W~, b~)
    def expand(self, theta):
        k, nw = self.k, self.nw
        t = theta[:nw]
        if self.structure == "full":
            Wt = t.reshape(k, k) @ self.Mt
        elif self.structure == "diagonal":
            Wt = t.copy()
        else:
            Wt = t[0] * self.feat.scale
        bt = theta[nw:].copy() if self.intercept else None
        return Wt, bt

    def reduce(self, gWt, gbt):
        if self.structure == "full":
            gw = (gWt @ self.Mt.T).ravel()
        elif self.structure == "diagonal":
            gw = gWt
        else:
            gw = np.array([gWt @ self.feat.scale])
        return np.concatenate([gw, gbt]) if self.intercept else gw.copy()

    # (W~, b~) <-> (W, b), linear (a full W~ is 2-D, a diagonal one 1-D)
    def to_original(self, Wt, bt):
        if bt is not None:
            bt = bt - (Wt @ self.m_s if Wt.ndim == 2 else Wt * self.m_s)
        return Wt * self.inv_s, bt

    def to_original_adjoint(self, gW, gb):
        gWt = gW * self.inv_s
        if gb is not None:
            gWt = gWt - (np.outer(gb, self.m_s) if gW.ndim == 2 else gb * self.m_s)
        return gWt, gb

    def from_original(self, W, b):
        """``theta`` of ``(W, b)`` (``W`` full, diagonal or scalar as the structure)."""
        s, m = self.feat.scale, self.feat.shift
        if self.structure == "full":
            Wt = W * s[None, :]
            head = np.linalg.solve(self.Mt.T, Wt.T).T.ravel()  # Wt @ inv(Mt)
            bt = None if b is None else b + W @ m
        else:
            head = W * s if self.structure == "diagonal" else np.array([float(W)])
            bt = None if b is None else b + W * m
        return np.concatenate([head, bt]) if self.intercept else head.copy()

    def theta_to_original(self, theta):
        return self.to_original(*self.expand(theta))

    def expand_matrix(self):
        """The Jacobian of :meth:`expand` (``theta`` -> the kernel Hessian's layout).

        That layout (:func:`skcal._backend._matrix.affine_nll_hess`) is
        ``[W~ | b~]`` row by row for a full ``W``, ``(W~, b~)`` otherwise.
        """
        def flat(Wt, bt):
            if Wt.ndim == 2:
                return (Wt if bt is None else np.column_stack([Wt, bt])).ravel()
            return Wt if bt is None else np.concatenate([Wt, bt])

        return np.column_stack([flat(*self.expand(e)) for e in np.eye(self.n_params)])


def _whitening(cov):
    """Symmetric ``cov^(-1/2)`` with eigenvalues floored at :data:`WHITEN_FLOOR` of the largest.

    Only a preconditioner (an exact change of variables): a floor this high
    keeps the penalty, isotropic in ``W``, well conditioned in the whitened
    parameters when the feature covariance is nearly singular (few rows,
    log-probabilities of many classes).
    """
    cov = np.where(np.isfinite(cov), cov, 0.0)
    lam, V = np.linalg.eigh(cov)
    top = max(float(lam[-1]), 1e-300)
    if not top > 0 or top < 1e-300:
        return np.eye(len(lam))
    d = 1.0 / np.sqrt(np.maximum(lam, WHITEN_FLOOR * top))
    return (V * d) @ V.T


def _penalty_terms(prob, pen, theta):
    """The penalty's value and gradient in ``theta``."""
    W, b = prob.theta_to_original(theta)
    return pen.value(W, b), prob.reduce(*prob.to_original_adjoint(*pen.grad(W, b)))


def _penalty_hessp(prob, pen, v):
    VW, vb = prob.to_original(*prob.expand(v))
    return prob.reduce(*prob.to_original_adjoint(*pen.hessp(VW, vb)))


def jacobi_scaled(H, g):
    """``(D, D H D, D g, dead)`` with ``D = diag(H)^(-1/2)`` (``H`` positive semi-definite).

    ``dead``: the parameters whose diagonal entry is not positive (the data
    do not touch them); their rows and columns are zeroed, their step is 0.
    """
    h = np.diag(H)
    dead = ~(h > 0)
    D = 1.0 / np.sqrt(np.where(dead, 1.0, h))
    Hs = H * D[:, None] * D[None, :]
    Hs[dead, :] = 0.0
    Hs[:, dead] = 0.0
    return D, Hs, np.where(dead, 0.0, g * D), dead


def scaled_pinv_step(D, Hs, gs, rcond):
    """``-D Hs^+ gs``, eigenvalues of ``Hs`` below ``rcond`` times the largest dropped."""
    lam, V = np.linalg.eigh(Hs)
    keep = lam > max(lam[-1], 0.0) * rcond
    return -D * (V[:, keep] @ ((V[:, keep].T @ gs) / lam[keep]))


def _pinv_step(H, g):
    """``-H^+ g`` after a symmetric Jacobi scaling (``H`` positive semi-definite)."""
    return scaled_pinv_step(*jacobi_scaled(H, g)[:3], 1e-13)


def newton(evaluate, theta, tol, max_iter, direction=_pinv_step, predict=False):
    """Damped Newton's method on a convex ``evaluate: theta -> (f, g, H)``.

    Steps ``d = direction(H, g)`` (``-H^+ g``), halved until the Armijo
    condition holds or the directional derivative at the trial point is <= 0
    (which, ``f`` being convex, proves a decrease even where rounding of
    ``f``, as in float32 work, hides it). Stops when half the squared Newton
    decrement ``-g.d / 2`` is at most ``tol`` or, with ``predict``, once it
    is below :data:`PREDICT_MAX_DECREMENT` and :data:`PREDICT_SAFETY` times
    the decrement predicted after the next step (``rate dec^2``, ``rate =
    dec / dec_prev^2`` measured on the last full step: quadratic
    convergence) is; the last step is then applied. Returns
    ``(theta, n_iter, status)``.
    """
    f, g, H = evaluate(theta)
    prev_dec = None  # half squared decrement before the last full step
    for it in range(1, max_iter + 1):
        d = direction(H, g)
        slope = float(g @ d)
        dec = -0.5 * slope
        if dec <= tol:
            return theta + d, it, "converged"
        if predict and prev_dec is not None and dec <= PREDICT_MAX_DECREMENT:
            rate = dec / prev_dec**2
            if PREDICT_SAFETY * rate * dec * dec <= tol:
                return theta + d, it, "converged"
        t = 1.0
        while True:
            th = theta + t * d
            f_t, g_t, H_t = evaluate(th)
            if f_t <= f + 1e-4 * t * slope or (np.isfinite(f_t) and g_t @ d <= 0):
                break
            t *= 0.5
            if t < 1e-10:
                return theta, it, "line_search"
        prev_dec = dec if t == 1.0 else None
        theta, f, g, H = th, f_t, g_t, H_t
    return theta, max_iter, "max_iter"


def _trust_region_newton_cg(fun, model, theta, tol, max_iter, f_eps=1e-13, trace=None):
    """Trust-region Newton-CG (Steihaug) with a Jacobi preconditioner.

    Parameters
    ----------
    fun : callable
        ``theta -> (f, g)``, the exact objective and gradient (one pass).
    model : _TrustRegionModel
        ``model(theta, block) -> (hessp, pre)``, the preconditioner ``pre``
        with ``pre.left = L^(-1)`` and ``pre.right = L^(-T)``.
    theta : ndarray
        Start.
    tol : float
        Stops when the Euclidean norm of the exact gradient is at most
        ``sqrt(tol) / 10``.
    max_iter : int
        Most iterations.
    f_eps : float, default=1e-13
        Relative rounding of the objective (see Notes).
    trace : list, optional
        If given, receives one dict per iteration (objective, gradient norm,
        radius, CG steps, rho, whether the step was accepted): a diagnostic
        for ``benchmarks/bench_family_real.py --trace``.

    Notes
    -----
    Steihaug's truncated conjugate gradient (Nocedal & Wright 2006, Alg. 7.2)
    in the variables ``psi = L^T theta`` (``L L^T`` the preconditioner from
    ``model``: the Hessian's diagonal, as in LIBLINEAR's preconditioned
    TRON, Hsia, Chiang & Lin 2018, or its per-class blocks, refreshed at
    every iterate), the radius rule of Nocedal & Wright Alg. 4.1 (accept when
    ``rho > 0.1``). The inner solve stops at a relative residual of
    ``min(0.5, sqrt(|g|))`` when the model's Hessian is exact (``model.exact``),
    else at :data:`CG_FORCING` or :data:`CG_MAX_STEPS` steps. A row-subset
    Hessian (sub-sampled Newton, Byrd, Chin, Neveitt & Nocedal 2011) only
    shapes the step: acceptance and the stopping test use the exact objective
    and gradient. A step whose predicted or actual change is below the
    objective's rounding (``f_eps |f|``) is accepted when it lowers the exact
    gradient's norm.
    """
    gtol = np.sqrt(tol) / 10.0
    f, g = fun(theta)
    gnorm = float(np.linalg.norm(g))
    radius = None
    fails = 0
    use_block = False
    exact, can_block = model.exact, model.can_block
    for it in range(1, max_iter + 1):
        if gnorm <= gtol:
            return theta, it - 1, "converged"
        hessp, pre = model(theta, block=use_block)
        gs = pre.left(g)
        gs_norm = float(np.linalg.norm(gs))
        if radius is None:
            radius = max(gs_norm, 1.0)

        def Hs(v):
            return pre.left(hessp(pre.right(v)))

        eta = min(0.5, np.sqrt(gnorm)) if exact else CG_FORCING
        cap = None if exact else CG_MAX_STEPS
        if can_block and not use_block:
            cap = BLOCK_SWITCH_STEPS if cap is None else min(cap, BLOCK_SWITCH_STEPS)
        p, hit, m_p, steps_used = _steihaug(Hs, gs, radius, eta * gs_norm, cap)
        if can_block and steps_used >= BLOCK_SWITCH_STEPS:
            use_block = True
        pred = -m_p
        step = pre.right(p)
        f_new, g_new = fun(theta + step)
        gnorm_new = float(np.linalg.norm(g_new))
        actual = f - f_new
        pnorm = float(np.linalg.norm(p))
        noise = f_eps * max(abs(f), 1.0)
        if pred <= noise or (np.isfinite(f_new) and abs(actual) <= noise):
            # the objective cannot resolve the change: judge by the gradient
            accept = bool(np.isfinite(f_new) and gnorm_new < gnorm)
            rho = 1.0 if accept else 0.0
        else:
            rho = actual / pred if np.isfinite(f_new) else -np.inf
            accept = rho > 0.1
        if rho < 0.25:
            radius = 0.25 * pnorm
        elif rho > 0.75 and hit:
            radius = 2.0 * radius
        if trace is not None:
            trace.append(dict(it=it, f=f, gnorm=gnorm, radius=radius, cg=steps_used,
                              hit=hit, rho=rho, accept=accept, pnorm=pnorm))
        if accept:
            theta, f, g, gnorm = theta + step, f_new, g_new, gnorm_new
            fails = 0
        else:
            fails += 1
            if fails >= 20 or radius < 1e-14:
                ok = gnorm <= _PRECISION_LOSS_GTOL_FACTOR * gtol
                return theta, it, "converged" if ok else "line_search"
    return theta, max_iter, "converged" if gnorm <= gtol else "max_iter"


def _steihaug(Hv, g, radius, rtol, max_steps=None):
    """Approximately minimise ``m(p) = g.p + p.H.p / 2`` over ``|p| <= radius`` (CG-Steihaug).

    Returns the step, whether it reached the boundary, ``m(p)`` and the
    number of Hessian-vector products taken.
    """
    p = np.zeros_like(g)
    r = g.copy()  # r = g + H p
    dvec = -r
    rr = float(r @ r)
    cap = 10 * len(g) + 10 if max_steps is None else min(10 * len(g) + 10, max_steps)
    steps = 0
    for steps in range(1, cap + 1):
        Hd = Hv(dvec)
        dHd = float(dvec @ Hd)
        alpha = None if dHd <= 0 else rr / dHd
        if alpha is None or np.linalg.norm(p + alpha * dvec) >= radius:
            return (*_boundary_step(p, r, g, dvec, Hd, radius), steps)
        p = p + alpha * dvec
        r = r + alpha * Hd
        rr_next = float(r @ r)
        if np.sqrt(rr_next) <= rtol:
            break
        dvec = -r + (rr_next / rr) * dvec
        rr = rr_next
    return p, False, 0.5 * float(g @ p + r @ p), steps


def _boundary_step(p, r, g, d, Hd, radius):
    """``q = p + t d`` (``t >= 0``) on ``|q| = radius``, with its model value."""
    a, t = float(d @ d), 0.0
    if a != 0:
        b = 2.0 * float(p @ d)
        c = float(p @ p) - radius * radius
        t = (-b + np.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a)
    q = p + t * d
    r = r + t * Hd
    return q, True, 0.5 * float(g @ q + r @ q)


def start_scale(Z, y, sample_weight, xp):
    """``(1/T, status)`` of the temperature-scaling optimum (solved to 1e-6), the usual start.

    ``status`` is :func:`~skcal.scaling._temperature.fit_temperature`'s:
    ``"upper"`` where the logits separate the calibration set (``1/T`` at its
    upper bound).
    """
    beta, _, status = fit_temperature(Z, y, sample_weight, xp, tol=1e-6)
    return float(beta), status


@substitute_docstring(entries=FIT_DOCS)
def fit_affine(
    Z,
    y,
    sample_weight,
    xp,
    *,
    structure,
    intercept,
    penalty,
    log_features=False,
    feature_beta=1.0,
    w_start=1.0,
    tol=1e-10,
    max_iter=100,
    solver="auto",
    info=None,
    trace=None,
):
    """Minimise the penalised NLL of ``softmax(W phi(z) + b)`` (see the module docstring).

    Parameters
    ----------
    %(fit_arrays)s
    structure : {"full", "diagonal", "scalar"}
        ``W`` full, diagonal, or ``w I``.
    intercept : bool
        Whether ``b`` is fitted (otherwise ``b = 0``).
    penalty : AffinePenalty
        In the original parameters; ``C`` of shape (K, K) for "full", (K,)
        otherwise.
    log_features : bool, default=False
        ``phi(z) = log_softmax(feature_beta * z)`` if True, else ``z``.
    feature_beta : float, default=1.0
    w_start : float, default=1.0
        Start: ``W = w_start * I``, ``b = 0``.
    tol : float, default=1e-10
        Newton: bound on half the squared Newton decrement. Trust region:
        exact-gradient-norm tolerance ``sqrt(tol) / 10`` in the standardised
        parameters.
    max_iter : int, default=100
        Maximum number of Newton / trust-region iterations.
    solver : {"auto", "newton", "trust-ncg"}, default="auto"
        "auto": Newton up to :data:`NEWTON_MAX_PARAMS` parameters
        (:data:`NEWTON_MAX_FULL_PARAMS` for a full ``W``), the trust-region
        Newton-CG method above ("trust-ncg"; see the module docstring).

    info : dict, optional
        If given, receives ``"nll"``: the mean NLL (without the penalty) at
        the returned solution when the solver evaluated it there (the trust
        region does; Newton applies its last step unevaluated), else None.
    trace : list, optional
        If given, the trust region appends one dict per iteration to it (see
        :func:`_trust_region_newton_cg`); Newton fits append nothing.

    Returns
    -------
    W : ndarray, float64
        Shape (K, K) for "full", (K,) for "diagonal", a float for "scalar".
    b : ndarray of shape (K,), float64, or None
    feat : skcal._backend._matrix.Features
        Only needed to evaluate the fitted map with the kernels; the
        returned ``(W, b)`` act on ``phi(z)`` itself.
    n_iter : int
    status : {"converged", "max_iter", "line_search"}
    """
    k = Z.shape[1]
    whiten = structure == "full" and intercept
    # the trust region's passes reuse the log-softmax's row constants (2 values a row)
    rows = [] if log_features else None
    mean, spread = mk.feature_moments(
        Z, xp, log_features, feature_beta, covariance=whiten, rows=rows
    )
    shift = np.where(np.isfinite(mean), mean, 0.0) if intercept else np.zeros(k)
    Mt = None
    if whiten:
        Mt = _whitening(spread)
        scale = np.ones(k)
    else:
        good = np.isfinite(spread) & (spread > 1e-12 * max(1.0, float(np.nanmax(spread))))
        scale = np.where(good, spread, 1.0)
    feat = mk.Features(bool(log_features), float(feature_beta), shift, scale)
    prob = _Problem(k, structure, intercept, feat, Mt)
    eye = {"full": np.eye(k), "diagonal": np.ones(k), "scalar": 1.0}[structure]
    W0 = float(w_start) * eye
    theta0 = prob.from_original(W0, np.zeros(k) if intercept else None)
    if solver == "auto":
        limit = NEWTON_MAX_FULL_PARAMS if structure == "full" else NEWTON_MAX_PARAMS
        solver = "newton" if prob.n_params <= limit else "trust-ncg"

    if solver == "newton":
        E = prob.expand_matrix()
        # the penalty's Hessian in theta (constant: the penalty is quadratic)
        pH = np.column_stack(
            [_penalty_hessp(prob, penalty, e) for e in np.eye(prob.n_params)])

        def evaluate(theta):
            Wt, bt = prob.expand(theta)
            f, gW, gb, H = mk.affine_nll_hess(Z, y, sample_weight, xp, feat, Wt, bt)
            g = prob.reduce(gW, gb)
            pf, pg = _penalty_terms(prob, penalty, theta)
            return f + pf, g + pg, E.T @ H @ E + pH

        theta, n_iter, status = newton(evaluate, theta0, tol, max_iter)
    else:
        shift = _NullShift(prob, penalty) if structure == "full" and intercept else None
        model = _TrustRegionModel(Z, sample_weight, xp, prob, penalty, shift)

        seen = []  # the last few evaluations: (theta after the shift, NLL)

        def fun(theta):
            if shift is not None:
                theta = shift(theta)
            Wt, bt = prob.expand(theta)
            f, gW, gb = mk.affine_nll_grad(Z, y, sample_weight, xp, feat, Wt, bt, rows)
            pf, pg = _penalty_terms(prob, penalty, theta)
            g = prob.reduce(gW, gb) + pg
            seen[:] = seen[-2:] + [(theta.copy(), f)]
            return f + pf, g if shift is None else shift.project(g)

        f_eps = 1e-13 if str(Z.dtype).endswith("float64") else F32_EPS
        theta, n_iter, status = _trust_region_newton_cg(
            fun, model, theta0, tol, max_iter, f_eps=f_eps, trace=trace
        )
        if shift is not None:
            theta = shift(theta)
        for th, f in seen if info is not None else ():
            if np.array_equal(th, theta):
                info["nll"] = f
    if info is not None:
        info.setdefault("nll", None)
    W, b = prob.theta_to_original(theta)
    if structure == "scalar":
        W = float(W[0])
    return W, b, feat, n_iter, status


def _sample_rows(n, k, itemsize):
    """Rows held for the Hessian model: all if they fit :data:`HESS_SAMPLE_BYTES`, else a fixed subset."""
    cap = max(HESS_SAMPLE_MIN_ROWS, HESS_SAMPLE_BYTES // (2 * k * itemsize))
    if n <= cap:
        return None
    rng = np.random.default_rng(0)
    return np.sort(rng.choice(n, size=cap, replace=False))


class _TrustRegionModel:
    """The trust region's model: ``model(theta, block) -> (hessp, pre)``.

    See :func:`_trust_region_newton_cg`. The Hessian-vector products are
    those of the NLL on the rows held (:func:`_sample_rows`) plus the
    penalty's; ``pre`` is the Jacobi preconditioner, or for a full ``W`` with
    ``block=True`` the per-class blocks (:class:`_BlockJacobi`).

    Attributes
    ----------
    exact : bool
        Whether every row is held (the model's Hessian is the exact one).
    can_block : bool
        Whether the per-class block preconditioner is available (a full ``W``
        whose blocks fit :data:`BLOCK_MAX_BYTES`).
    """

    def __init__(self, Z, sample_weight, xp, prob, penalty, shift=None):
        n, k = Z.shape
        itemsize = 8 if str(Z.dtype).endswith("float64") else 4
        rows = _sample_rows(n, k, itemsize)
        self.prob, self.penalty, self.shift = prob, penalty, shift
        self.full = prob.structure == "full"
        # a diagonal or scalar W (BCTS: one shared scale) works on the diagonal
        # kernels through prob.expand / prob.reduce (W~ = w s, its gradient s . gW~)
        self.scalar = prob.structure == "scalar"
        self.sample = mk.HessianSample(
            Z, sample_weight, xp, prob.feat, M=prob.Mt if prob.whitened else None, rows=rows
        )
        self.pen_diag = None if self.scalar else _penalty_diagonal(prob, penalty)
        self.pen_blocks = None  # formed on the first call with block=True
        self.exact = rows is None
        self.can_block = bool(self.full and 8 * k * (k + 1) ** 2 <= BLOCK_MAX_BYTES)

    def __call__(self, theta, block=False):
        prob, penalty, shift, sample = self.prob, self.penalty, self.shift, self.sample
        full, scalar = self.full, self.scalar
        k, nw = prob.k, prob.nw
        if shift is not None:
            theta = shift(theta)
        # a full W: the sample whitens T itself; else prob.expand's diagonal kernels
        if full:
            sample.at(theta[:nw].reshape(k, k), theta[nw:] if prob.intercept else None)
        else:
            sample.at(*prob.expand(theta))

        def hessp(v):
            if not full:
                h = prob.reduce(*sample.hessp(*prob.expand(v)))
                return h + _penalty_hessp(prob, penalty, v)
            VW, vb = v[:nw].reshape(k, k), v[nw:] if prob.intercept else None
            HW, hb = sample.hessp(VW, vb)
            h = np.concatenate([HW.ravel(), hb]) if prob.intercept else HW.ravel()
            if shift is not None:
                return shift.project(h + shift.penalty_hessp(v))
            return h + _penalty_hessp(prob, penalty, v)

        if scalar:
            # the scale's diagonal entry exactly (one product); the biases' from the kernel
            d = [hessp(np.eye(1, prob.n_params)[0])[:1]]
            if prob.intercept:  # (penalty.c is None only without an intercept)
                d.append(sample.diagonal(False)[1] + 2.0 * penalty.c)
            return hessp, _Jacobi(np.concatenate(d))

        if block and self.can_block:
            if self.pen_blocks is None:
                self.pen_blocks = _penalty_blocks(prob, penalty)
            B = sample.class_blocks(prob.intercept, BLOCK_ROW_CUT)
            B += self.pen_blocks
            return hessp, _BlockJacobi(B, prob.intercept)
        dW, db = sample.diagonal(full)
        dW = dW.ravel()
        diag = (np.concatenate([dW, db]) if prob.intercept else dW) + self.pen_diag
        return hessp, _Jacobi(diag)


class _Jacobi:
    """``D = diag(d)``: ``left = D^(-1/2) v``, ``right`` the same."""

    def __init__(self, diag):
        floor = 1e-12 * max(float(np.max(diag)), 1e-300)
        self.d = np.sqrt(np.maximum(diag, floor))

    def left(self, v):
        return v / self.d

    right = left


class _NullShift:
    """The shifts that leave every softmax unchanged, solved for the penalty.

    ``softmax(W x + b)`` does not change under ``W -> W + 1 c^T``,
    ``b -> b + t 1`` (a constant added to every logit of a row): the NLL is
    flat along these ``K + 1`` directions and only the penalty, whose weights
    can be tiny (``reg="l2"``: ``lambda / K^2`` per entry), curves them. The
    Hessian then has ``K + 1`` eigenvalues of the order of the penalty
    weight, which no (block-)diagonal preconditioner sees (each class's block
    carries the data curvature): the conjugate-gradient solves of the trust
    region stall on them. The penalty is separable per entry, so its minimum
    along the shifts is explicit (``c_j = sum_k C_kj (R_kj - W_kj) /
    sum_k C_kj``, ``t = -sum_k c_k b_k / sum_k c_k``); the solver minimises
    ``G(theta) = F(shift(theta))`` instead, for which these directions are
    exactly flat (a consistent singular system for CG), and returns
    ``shift(theta)``. ``G`` and ``F`` have the same minimum value, the
    minimiser of ``F`` is the shifted minimiser of ``G``, and the gradient of
    ``G`` at ``theta`` is that of ``F`` at ``shift(theta)`` (envelope
    theorem), so the stopping test is unchanged. Full ``W`` with intercept
    only.
    """

    def __init__(self, prob, pen):
        self.prob, self.pen = prob, pen
        C = np.broadcast_to(pen.C, (prob.k, prob.k))
        S = C.sum(axis=0)
        self.colw = np.where(S > 0, C / np.where(S > 0, S, 1.0)[None, :], 0.0)
        cb = pen.c
        sb = float(cb.sum())
        self.bw = cb / sb if sb > 0 else np.zeros_like(cb)
        # theta's W-part is T with W = T Mt diag(1/s): W + 1 c^T is T + 1 c_T^T,
        # c_T = Mt^-T (s * c); b~ moves by (t + c . shift)
        self.MtinvT = np.linalg.inv(prob.Mt.T)

    def _coeffs(self, W, b, R):
        c = np.sum(self.colw * (R - W), axis=0)
        t = -float(self.bw @ b)
        return c, t

    def __call__(self, theta):
        prob = self.prob
        W, b = prob.theta_to_original(theta)
        c, t = self._coeffs(W, b, self.pen.R)
        out = theta.copy()
        k = prob.k
        cT = self.MtinvT @ (prob.feat.scale * c)
        out[: k * k] += np.tile(cT, k)
        out[k * k :] += t + float(c @ prob.feat.shift)
        return out

    def project(self, v):
        """``v`` less its component along the shifts (orthogonal projection in ``theta``).

        In ``theta`` the shifts are ``T -> T + 1 c^T``, ``b~ -> b~ + t 1``
        (the kernel map is ``T Mt``), so this removes the column means of
        the ``T`` part and the mean of the ``b~`` part. The exact gradient of
        ``G`` and every Hessian product of ``G`` lie in that complement;
        projecting removes the rounding along the flat directions, which the
        conjugate gradient would otherwise follow to the trust-region
        boundary.
        """
        k = self.prob.k
        out = np.array(v, dtype=np.float64)
        T = out[: k * k].reshape(k, k)
        T -= T.mean(axis=0, keepdims=True)
        out[k * k :] -= out[k * k :].mean()
        return out

    def penalty_hessp(self, v):
        """Hessian of ``pen(shift(theta))`` times ``v`` (``H_pen`` of the shifted direction)."""
        prob = self.prob
        VW, vb = prob.theta_to_original(v)
        c, t = self._coeffs(VW, vb, 0.0)
        VW = VW + c[None, :]
        vb = vb + t
        return prob.reduce(*prob.to_original_adjoint(*self.pen.hessp(VW, vb)))


class _BlockJacobi:
    """Per-class block preconditioner ``D = blockdiag(L_k L_k^T)`` of a full ``W``.

    ``theta`` is ordered ``[T (row-major, K x K) | b~ (K)]``; block ``k``
    holds row ``k`` of ``T`` and ``b~_k``. ``left = L^(-1) v`` and
    ``right = L^(-T) v``, so ``left H right`` is symmetric.
    """

    def __init__(self, B, intercept):
        k, m, _ = B.shape
        self.k, self.intercept = k, intercept
        tr = np.trace(B, axis1=1, axis2=2) / m
        jitter = 1e-12 * np.maximum(tr, 1e-300)
        eye = np.eye(m)
        for _ in range(8):
            try:
                L = np.linalg.cholesky(B + jitter[:, None, None] * eye)
                break
            except np.linalg.LinAlgError:
                jitter = jitter * 100.0
        else:  # pragma: no cover - the penalty or jitter makes B definite
            L = np.sqrt(np.maximum(tr, 1e-300))[:, None, None] * eye
        self.Linv = np.empty_like(L)
        for c in range(k):
            self.Linv[c], _ = dtrtri(L[c], lower=1)

    def _apply(self, M, v):
        """``blockdiag(M) v`` (each block's vector gathered from ``theta`` and back)."""
        k = self.k
        V = v[: k * k].reshape(k, k)
        if self.intercept:
            V = np.concatenate([V, v[k * k :, None]], axis=1)
        V = np.matmul(M, V[:, :, None])[:, :, 0]
        if self.intercept:
            return np.concatenate([V[:, :k].ravel(), V[:, k]])
        return V.ravel()

    def left(self, v):
        return self._apply(self.Linv, v)

    def right(self, v):
        return self._apply(self.Linv.transpose(0, 2, 1), v)


def _penalty_blocks(prob, pen):
    """Per-class blocks of the penalty's Hessian in ``theta`` (full ``W``; exact: it is block-diagonal)."""
    k = prob.k
    A = prob.inv_s[:, None] * prob.Mt.T  # W_k = A t_k
    C = np.broadcast_to(pen.C, (k, k))
    if np.all(C == C.flat[0]):
        Htt = np.broadcast_to(2.0 * C.flat[0] * (A.T @ A), (k, k, k)).copy()
    else:
        Htt = 2.0 * np.einsum("lj,cl,lm->cjm", A, C, A)
    if not prob.intercept:
        out = Htt
    else:
        c = pen.c
        u = prob.Mt @ prob.m_s
        out = np.zeros((k, k + 1, k + 1))
        out[:, :k, :k] = Htt + 2.0 * c[:, None, None] * np.outer(u, u)[None]
        out[:, :k, k] = out[:, k, :k] = -2.0 * c[:, None] * u[None, :]
        out[:, k, k] = 2.0 * c
    return out


def _penalty_diagonal(prob, pen):
    """Diagonal of the penalty's Hessian in ``theta`` (``theta -> (W, b)`` is linear)."""
    C = pen.C
    c = pen.c if prob.intercept else None
    inv_s, m_s = prob.inv_s, prob.m_s
    if prob.structure == "full":
        # W = T Mt diag(1/s), b = b~ - T Mt (m/s)
        M = prob.Mt * inv_s[None, :]
        dW = 2.0 * C @ (M * M).T
        if c is not None:
            u = prob.Mt @ m_s
            dW = dW + 2.0 * np.outer(c, u * u)
        out = [dW.ravel()]
    else:
        dW = 2.0 * C * inv_s**2
        if c is not None:
            dW = dW + 2.0 * c * m_s**2
        out = [dW]
    if c is not None:
        out.append(2.0 * c)
    return np.concatenate(out)


def nll(Z, y, sample_weight, xp, W, b, log_features=False, feature_beta=1.0):
    """The mean NLL of ``softmax(W phi(z) + b)`` (one pass; ``F`` without the penalty).

    ``W`` is (K, K), (K,) or a float (then ``W I``); ``b`` may be None.
    """
    k = Z.shape[1]
    feat = mk.Features(bool(log_features), float(feature_beta), np.zeros(k), np.ones(k))
    Wa = np.full(k, float(W)) if np.ndim(W) == 0 else np.asarray(W, dtype=np.float64)
    return mk.affine_nll_grad(Z, y, sample_weight, xp, feat, Wa, b)[0]
