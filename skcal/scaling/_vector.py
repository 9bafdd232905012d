"""Vector scaling (Guo et al. 2017): a per-class scale and bias on the logits."""

import warnings
from numbers import Real

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from ._affine import PREDICT_SAFETY, jacobi_scaled, newton, scaled_pinv_step
from ._temperature import (
    FIT_DOCS, ScaleBiasMap, _TemperatureParameters, fit_temperature, warn_stopped,
)
from ..utils._docstrings import substitute_docstring
from .._backend._array import to_numpy
from ..utils.validation import DEFAULT_INPUT_TYPE, _caller_stacklevel
from ..utils._params import store_params

__all__ = ["VectorScaler", "fit_vector"]

#: Up to this many classes the exact ``2K x 2K`` Hessian is formed in each pass
#: and Newton's method is used; above it, Newton steps with the exact per-class
#: ``2 x 2`` Hessian blocks (:func:`_fit_block_newton`, one pass each).
FULL_HESSIAN_MAX_CLASSES = 256

#: Rows (at most, about) of the subsample on which the starting 1/T is solved.
_START_ROWS = 20_000
#: ... and at most about this many entries (rows x classes): with many classes
#: a few thousand rows fix 1/T well enough for a start.
_START_ENTRIES = 4_000_000

#: With ``alpha=0``, a fitted mean NLL below this means the logits separate the
#: calibration set (the infimum 0 is not attained): a ``ConvergenceWarning``.
SEPARATED_NLL = 1e-6

#: Penalty strength used instead of ``alpha=0`` when some class has zero total
#: weight: the unpenalised objective then has no finite minimiser.
ABSENT_CLASS_ALPHA = 1e-6

#: Largest ``max |z|`` for which the start is the temperature-scaling optimum;
#: above it (where ``T`` would typically exceed the temperature solver's upper
#: bound, and differences of float32 logits can overflow) the start is
#: ``w = 1 / max |z|``, which keeps every starting logit within [-1, 1].
_TEMPERATURE_START_MAX_ABS = 1e30

#: Above this ``max |z|`` the many-class solver sweeps float32 logits in
#: float64 (``p z^2`` must stay far inside the float32 range).
_SINGLE_MAX_ABS = 1e12

#: ``%(newton_params)s`` of the vector scalings (here and BCTS / NBVS).
NEWTON_DOCS = {
    "newton_params": """\
tol : float, default=1e-10
    Stopping tolerance on the predicted decrease of the objective (half the
    squared Newton decrement), in units of mean NLL (nats).
max_iter : int, default=100
    Maximum number of Newton iterations.""",
}


def warn_absent_classes(classes, y, sample_weight, term, replacement):
    """Warn, and return True, when some class has no weight in the calibration set.

    Without a penalty on ``term`` (the intercept or bias) the NLL then has no
    finite minimiser; the fit uses ``replacement`` (e.g. ``"alpha=1e-06"``).
    """
    sw = None if sample_weight is None else to_numpy(sample_weight)
    cw = np.bincount(to_numpy(y), weights=sw, minlength=len(classes))
    absent = classes[cw <= 0][:10].tolist()  # the first 10
    if absent:
        warnings.warn(
            f"Classes {absent!r} have no weight in the calibration set, so the NLL "
            f"without a penalty on the {term} has no finite minimiser (their {term} "
            f"-> -inf); fitting with {replacement} instead.",
            ConvergenceWarning,
            stacklevel=_caller_stacklevel(),
        )
    return bool(absent)


def warn_if_separated(f, features, consequence):
    """Warn when the unpenalised NLL ``f`` is below :data:`SEPARATED_NLL`."""
    if f < SEPARATED_NLL:
        warnings.warn(
            f"The calibration NLL is {f:.2g} (< {SEPARATED_NLL:g}): the {features} "
            f"separate the calibration set, so {consequence}",
            ConvergenceWarning,
            stacklevel=_caller_stacklevel(),
        )


def penalty_centre(Z, y, sample_weight, xp):
    """``(beta, centre)``: ``1/T`` of temperature scaling and the penalty's centre.

    The centre is ``beta``, or 1 where that fit ends at a bound of ``T``
    (separable or uninformative logits: no scale).
    """
    beta, _, status = fit_temperature(Z, y, sample_weight, xp, tol=1e-10)
    beta = float(beta)
    return beta, beta if status == "converged" and beta > 0 and np.isfinite(beta) else 1.0


def _penalised(f, gw, gb, w, b, alpha):
    dw = w - 1.0
    f = f + 0.5 * alpha * (dw @ dw + b @ b)
    return f, np.concatenate([gw + alpha * dw, gb + alpha * b])


def _newton_direction(H, g, gauge):
    """Solution of ``H d = -g`` (H symmetric positive semi-definite), Jacobi-scaled.

    :func:`~skcal.scaling._affine.jacobi_scaled` makes the ``w`` block (of
    order ``z^2``) and the ``b`` block comparable for logits of any
    magnitude. ``gauge`` adds ``u u^T``, ``u`` the unit common shift of ``b``
    (a null direction of the unpenalised Hessian, orthogonal to ``g``: it
    leaves the probabilities unchanged). Solved by Cholesky, else by the
    pseudo-inverse when still numerically singular.
    """
    D, Hs, gs, dead = jacobi_scaled(H, g)
    Hm = Hs.copy()
    if gauge:
        k = H.shape[0] // 2
        u = np.zeros(H.shape[0])
        u[k:] = np.where(dead[k:], 0.0, 1.0 / D[k:])
        nu = np.linalg.norm(u)
        if nu > 0:
            u /= nu
            Hm += np.outer(u, u)
    Hm[dead, dead] = 1.0
    try:
        c, low = cho_factor(Hm, check_finite=False)
        pivots = np.diag(c) ** 2
        if np.all(np.isfinite(c)) and pivots.min() > 1e-12:
            e = -cho_solve((c, low), gs, check_finite=False)
            e[dead] = 0.0
            return D * e
    except LinAlgError:
        pass
    return scaled_pinv_step(D, Hs, gs, 1e-12)


def _initial_scales(Z, y, sample_weight, xp):
    """Starting scales ``w`` (``1/T`` of temperature scaling) and ``max |z|``.

    ``1/T`` is solved to relative 1e-4 on a systematic subsample
    (:data:`_START_ROWS`, :data:`_START_ENTRIES`): a fraction of a pass. At
    its lower bound (uninformative logits beyond about 1e6) ``1 / max |z|``
    is used instead, so that the starting logits are of order 1. All-zero
    columns (the class-0 column of a 1-D binary score) stay at 1: their
    scale does not enter the objective.
    """
    lo, hi = xp.column_ranges(Z)
    zmax = max(-lo.min(), hi.max())
    if zmax > _TEMPERATURE_START_MAX_ABS:
        beta = 1.0 / zmax
    else:
        rows = max(1, min(_START_ROWS, _START_ENTRIES // max(1, Z.shape[1])))
        step = max(1, Z.shape[0] // rows)
        sw = None if sample_weight is None else xp.row_stride(sample_weight, step)
        if sw is not None and not xp.total(sw) > 0:
            step, sw = 1, sample_weight
        # (xp.row_stride: a view, lazy on dask)
        beta, _, status = fit_temperature(
            xp.row_stride(Z, step), xp.row_stride(y, step), sw, xp, tol=1e-4
        )
        if status == "lower" and zmax > 0:
            beta = min(beta, 1.0 / zmax)
    return np.where((lo == 0) & (hi == 0), 1.0, float(beta)), zmax


@substitute_docstring(entries=FIT_DOCS)
def fit_vector(Z, y, sample_weight, xp, *, alpha=1e-4, tol=1e-10, max_iter=100):
    """Minimise the (penalised) NLL of ``softmax(w * Z + b)`` over ``(w, b)``.

    Parameters
    ----------
    %(fit_arrays)s
    alpha : float, default=1e-4
        L2 penalty strength (>= 0) on ``(w - 1, b)``.
    tol : float, default=1e-10
        Bound on half the squared Newton decrement, or on its prediction
        after the next step (:func:`~skcal.scaling._affine.newton` with
        ``predict``; many classes: the decrement of the block-diagonal Hessian
        and the measured linear rate, at most 0.25).
    max_iter : int, default=100
        Maximum number of Newton iterations.

    Returns
    -------
    w, b : ndarray of shape (n_classes,), float64
        The minimiser. When ``alpha == 0``, ``b`` is centred to sum to zero
        (adding a constant to every ``b_k`` leaves ``softmax`` unchanged).
    n_iter : int
        Number of Newton iterations.
    status : {"converged", "max_iter", "line_search"}
        ``"line_search"``: no decrease was found along the Newton direction
        before reaching ``tol`` (the objective is flat to machine precision).

    Notes
    -----
    Objective: ``F(w, b) = sum_i s_i [logsumexp(a_i) - a_{i,y_i}] / sum_i s_i
    + alpha/2 (||w - 1||^2 + ||b||^2)`` with ``a_i = w * z_i + b``, convex
    (strictly for ``alpha > 0``), from :func:`_initial_scales`; the solver is
    described in the Notes of :class:`VectorScaler`: up to
    :data:`FULL_HESSIAN_MAX_CLASSES` classes :func:`~skcal.scaling._affine.newton`
    with :func:`_newton_direction`, above :func:`_fit_block_newton`.
    """
    k = Z.shape[1]
    w, zmax = _initial_scales(Z, y, sample_weight, xp)
    b = np.zeros(k)
    if k > FULL_HESSIAN_MAX_CLASSES:
        # float32 sweeps for 16/32-bit logits whose squares stay far from the
        # float32 range; float64 otherwise
        single = Z.dtype != np.float64 and zmax < _SINGLE_MAX_ABS
        w, b, n_iter, status = _fit_block_newton(
            Z, y, sample_weight, xp, alpha, tol, max_iter, w, b, single
        )
    else:
        eye = alpha * np.eye(2 * k)

        def evaluate(theta):
            w, b = theta[:k], theta[k:]
            f, gw, gb, H = xp.vector_nll_hess(Z, y, sample_weight, w, b)
            f, g = _penalised(f, gw, gb, w, b, alpha)
            return f, g, H + eye

        theta, n_iter, status = newton(
            evaluate, np.concatenate([w, b]), tol, max_iter, predict=True,
            direction=lambda H, g: _newton_direction(H, g, gauge=alpha == 0),
        )
        w, b = theta[:k], theta[k:]
    if alpha == 0:
        b = b - b.mean()
    return w, b, n_iter, status


#: Above this ratio of successive Newton decrements (a slow linear rate: the
#: per-class blocks miss a strong coupling between classes, e.g. with few
#: classes), the block-diagonal step is refined by preconditioned conjugate
#: gradients on the exact Hessian (one Hessian-vector pass per CG step).
_SLOW_RATE = 0.25
#: Relative resolution of the objective summed from float32 sweeps.
_SINGLE_NOISE = 1e-7
#: Largest number of CG steps of one refined Newton step.
_MAX_CG = 50


def _block_solver(blocks, alpha, k):
    """Solve with the per-class ``2 x 2`` Hessian blocks (minus the common shift of ``b``).

    Returns ``solve(r)``: ``M^+ r`` with ``M`` the block-diagonal part of the
    Hessian (class ``k``'s block couples ``w_k`` and ``b_k``). Each block is
    Jacobi-scaled and pseudo-inverted in closed form (eigenvalues ``1 +- c``
    of the scaled block), so blocks that are singular (a constant or all-zero
    column with ``alpha = 0``) give a minimum-norm step. The common shift of
    ``b`` (unit vector ``u``) is an exact eigenvector of the Hessian, with
    eigenvalue ``alpha``, which the block diagonal does not have: ``M^+`` acts
    on the complement of ``u`` and on ``u`` as ``1 / alpha`` (nothing for
    ``alpha = 0``).
    """
    hww, hwb, hbb = (np.asarray(v, dtype=np.float64) for v in blocks)
    a, d = hww + alpha, hbb + alpha
    dead_w, dead_b = ~(a > 0), ~(d > 0)
    sa = np.where(dead_w, 0.0, 1.0 / np.sqrt(np.where(dead_w, 1.0, a)))
    sd = np.where(dead_b, 0.0, 1.0 / np.sqrt(np.where(dead_b, 1.0, d)))
    c = np.clip(hwb * sa * sd, -1.0, 1.0)
    lam1, lam2 = 1.0 + c, 1.0 - c
    i1 = np.where(lam1 > 1e-10, 1.0 / np.where(lam1 > 1e-10, lam1, 1.0), 0.0)
    i2 = np.where(lam2 > 1e-10, 1.0 / np.where(lam2 > 1e-10, lam2, 1.0), 0.0)
    p, q = 0.5 * (i1 + i2), 0.5 * (i1 - i2)  # pinv of [[1, c], [c, 1]]
    live_b = ~dead_b
    u = np.concatenate([np.zeros(k), live_b / np.sqrt(max(1, live_b.sum()))])

    def solve(r):
        ru = u @ r
        r = r - ru * u
        xw, xb = r[:k] * sa, r[k:] * sd
        x = np.concatenate([sa * (p * xw + q * xb), sd * (q * xw + p * xb)])
        x -= (u @ x) * u
        if alpha > 0:
            x += (ru / alpha) * u
        return x

    return solve


def _fit_block_newton(Z, y, sample_weight, xp, alpha, tol, max_iter, w, b, single):
    """Newton's method with the per-class ``2 x 2`` Hessian blocks (many classes).

    See the Notes of :class:`VectorScaler`. The coupling between classes is
    small against the blocks: at 100,000 x 1,000 the generalised eigenvalues
    of the Hessian against them lie in [0.6, 1.3] (all but ~0.1% in [0.98,
    1.02]); measured, a linear rate of 0.001-0.05 per pass at 300-1,000
    classes (4-6 passes from :func:`_initial_scales`).
    """
    k = w.shape[0]

    def evaluate(w, b):
        f, gw, gb, blocks = xp.vector_nll_grad_blocks(
            Z, y, sample_weight, w, b, single=single
        )
        # sum_k grad_b_k is exactly 0 (each row's p and one-hot both sum to
        # one); remove its rounding, which alpha would turn into a shift of b
        gb = gb - gb.mean()
        f, g = _penalised(f, gw, gb, w, b, alpha)
        return f, g, blocks

    def hessp(w, b, v):
        hw, hb = xp.vector_nll_hessp(Z, y, sample_weight, w, b, v[:k], v[k:])
        return np.concatenate([hw, hb]) + alpha * v

    f, g, blocks = evaluate(w, b)
    prev_dec = last_dec = None
    refine = False
    for it in range(1, max_iter + 1):
        solve = _block_solver(blocks, alpha, k)
        d = -solve(g)
        dec = -0.5 * (g @ d)
        if dec <= tol:
            return w + d[:k], b + d[k:], it, "converged"
        if single and last_dec is not None and dec > 0.5 * last_dec and refine:
            # no progress: float32 rounding of the gradient; go on in float64
            single = False
            f, g, blocks = evaluate(w, b)
            last_dec = prev_dec = None
            continue
        last_dec = dec
        if refine:
            d = _pcg(lambda v: hessp(w, b, v), solve, g, d)
            dec = -0.5 * (g @ d)
        elif prev_dec is not None:
            rate = dec / prev_dec
            if rate <= _SLOW_RATE and PREDICT_SAFETY * rate * dec <= tol:
                return w + d[:k], b + d[k:], it, "converged"
        slope = g @ d
        # Below the float32 resolution of f (and of g . d), in the linear
        # regime already measured, the line-search tests only see rounding:
        # the full step is taken (a stall then switches to float64).
        noisy = (
            single
            and prev_dec is not None
            and dec <= _SLOW_RATE * prev_dec
            and dec <= _SINGLE_NOISE * max(1.0, abs(f))
        )
        t = 1.0
        while True:
            w_t, b_t = w + t * d[:k], b + t * d[k:]
            f_t, g_t, blocks_t = evaluate(w_t, b_t)
            if f_t <= f + 1e-4 * t * slope or g_t @ d <= 0 or noisy:
                break
            t *= 0.5
            if t < 1e-10:
                if single:  # float32 rounding: continue in float64
                    single = False
                    f, g, blocks = evaluate(w, b)
                    break
                return w, b, it, "line_search"
        if t < 1e-10:
            prev_dec = None
            continue
        refine = refine or t < 1.0 or (prev_dec is not None and dec > _SLOW_RATE * prev_dec)
        prev_dec = dec if t == 1.0 else None
        w, b, f, g, blocks = w_t, b_t, f_t, g_t, blocks_t
    return w, b, max_iter, "max_iter"


def _pcg(hessp, solve, g, d0, rtol=0.1):
    """Preconditioned CG on ``H d = -g`` from ``d = 0`` (preconditioner ``solve``).

    Stops when the preconditioned residual norm is at most ``rtol`` times that
    of ``g``, after :data:`_MAX_CG` steps, or on non-positive curvature; returns
    ``d0`` (the preconditioned gradient step) if no step was taken.
    """
    x = np.zeros_like(g)
    r = -g
    z = solve(r)
    rz = r @ z
    stop = rtol * rtol * rz
    p = z
    for _ in range(_MAX_CG):
        Hp = hessp(p)
        curv = p @ Hp
        if not curv > 0:
            break
        a = rz / curv
        x = x + a * p
        r = r - a * Hp
        z = solve(r)
        rz_new = r @ z
        if rz_new <= stop:
            break
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x if np.any(x) else d0


class _VectorParameters(_TemperatureParameters):
    """The parameters of VectorScaler, BCTS and NBVS: TemperatureScaler's, alpha."""

    _parameter_constraints: dict = {
        **_TemperatureParameters._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        input_type=DEFAULT_INPUT_TYPE,
        classes=None,
        backend="auto",
        alpha=1e-4,
        tol=1e-10,
        max_iter=100,
    ):
        store_params(self, locals())


@substitute_docstring(entries=NEWTON_DOCS)
class VectorScaler(ScaleBiasMap, _VectorParameters):
    """Vector scaling: a per-class scale ``w_k`` and bias ``b_k`` on the logits.

    The calibrated probabilities are ``softmax(w * z + b)`` (element-wise
    product): class ``k``'s logit becomes ``w_k z_k + b_k``. ``(w, b)``
    minimise the negative log-likelihood (NLL) of the calibration set plus an
    optional L2 penalty that pulls them toward the identity map. Unlike
    temperature scaling, vector scaling can correct a per-class bias (e.g. of
    zero-shot language-model classifiers) and may change the predicted class.

    Parameters
    ----------
    %(input_type)s
        Note that, unlike ``softmax``, vector scaling is not invariant to a
        per-row shift of the logits (unless all ``w_k`` are equal).
    %(classes)s
    %(backend)s
    alpha : float, default=1e-4
        Strength (>= 0) of the L2 penalty
        ``alpha/2 * (||T w - 1||^2 + ||b||^2)`` added to the *mean* NLL, with
        ``T`` the temperature of :class:`TemperatureScaler` on the same data:
        the penalty acts after the temperature (it pulls the map towards
        temperature scaling), so logits rescaled by any ``c > 0`` fit the
        same probabilities. The
        default is small enough to leave the fit on real calibration sets
        whose logits are near 0 on average practically unchanged (the
        penalty on ``b`` is not invariant to a constant added to every logit:
        centre raw logits first, see the user guide), but makes the problem
        strictly convex, so the
        optimum is unique and finite even when a class never occurs in the
        calibration set (where the unpenalised optimum has ``b_k -> -inf``) or
        when the logits separate it. ``alpha=0`` gives the plain maximum
        likelihood fit of Guo et al. (2017); see Notes for its edge cases. Tune
        it with ``GridSearchCV`` (the default ``score`` is the mean
        log-likelihood).
    %(newton_params)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes,), float64
        Fitted per-class scales ``w``.
    intercept_ : ndarray of shape (n_classes,), float64
        Fitted per-class biases ``b``.
    scale_ : ndarray of shape (n_classes,), float64
        Alias of ``coef_``.
    bias_ : ndarray of shape (n_classes,), float64
        Alias of ``intercept_``.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted; column ``j`` of the output is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).
    n_iter_ : int
        Number of Newton iterations (each one pass over the data when no
        backtracking is needed).

    See Also
    --------
    TemperatureScaler : one shared scale and no bias.
    StructuredVectorScaler : SVS (Berta et al. 2025), the same per-class
        scale and bias on temperature-scaled log-probabilities, shrunk towards
        temperature scaling with a penalty scaled by ``K / n``: no tuning.

    Notes
    -----
    Objective, with sample weights ``s_i`` (1 by default) and
    ``a_i = w * z_i + b``:

    ``F(w, b) = sum_i s_i [log sum_k exp(a_ik) - a_{i,y_i}] / sum_i s_i
    + alpha/2 * (sum_k (T w_k - 1)^2 + sum_k b_k^2)``, ``T`` the
    temperature-scaling optimum (solved first, to 1e-10; ``T = 1`` for
    ``alpha = 0``, and where the temperature fit ends at a bound of ``T``:
    logits that separate the calibration set or carry no information): the
    solver below runs on ``Z / T`` and the scales are divided by ``T``.

    Parametrisation: ``(w_1..w_K, b_1..b_K)`` directly (``w_k`` may be any
    real number). ``F`` is convex; for ``alpha > 0`` it is strictly convex
    with a unique minimiser.

    Solver: for up to 256 classes, Newton's method from the
    temperature-scaling fit (``w = 1/T, b = 0``; ``T`` from
    :class:`TemperatureScaler`'s solver, a few cheap passes) with the exact
    gradient and Hessian (Jacobi-scaled, so that logits of any magnitude up
    to the accepted 1e100 are equally well conditioned), both computed in
    one stable (log-sum-exp) pass over the data, minimum-norm steps and a
    backtracking line search (Armijo, or a non-positive directional derivative
    at the trial point). It stops when half the squared Newton
    decrement, ``g^T H^+ g / 2`` (the objective decrease the quadratic model
    predicts), is at most ``tol``, or once it is below 1e-4 and ten times
    the decrement predicted after the next step (``rate * dec^2``, with
    ``rate = dec / dec_prev^2`` measured on the last full step: Newton's
    quadratic convergence) is at most ``tol``; the last Newton step is then
    applied. For float16/32 logits the ``Q^T Q`` part of the Hessian is
    accumulated in float32 per row chunk (it only shapes the step; the
    gradient and objective stay float64). For
    more classes, the ``2K x 2K`` Hessian is too costly: each pass computes
    the objective, the gradient and the exact ``2 x 2`` Hessian block of
    every class's ``(w_k, b_k)``, and the step solves the block-diagonal
    system (Jacobi-scaled, the common shift of ``b`` handled exactly). With
    many classes the coupling between classes is small, so this converges
    linearly at a fast rate (4 passes at 100,000 x 1,000); when the measured
    rate is slow, the step is refined by conjugate gradients on exact
    Hessian-vector products, preconditioned by the blocks. The stopping
    rule is the same, with the blocks' decrement and the predicted next one
    ``rate * dec`` (``rate`` the measured ratio of successive decrements).
    float16/32 logits are swept in float32 with float64 sums; if that stalls
    above ``tol`` (a tolerance below float32 rounding), the fit continues in
    float64. No finite differences are used. A
    ``ConvergenceWarning`` reports stopping at ``max_iter`` or a failed line
    search.

    With ``alpha=0``: a common shift of all ``b_k`` does not change the
    probabilities, so ``b`` is reported centred (``sum_k b_k = 0``); the
    scale of an all-zero column (the class-0 column of a 1-D binary score) is
    left at 1. If some class has zero total weight in the calibration set, no
    finite minimiser exists; the fit then uses ``alpha=1e-6`` instead and
    warns. If the logits separate the calibration set, the NLL has infimum 0
    and no minimiser: the fit stops where the objective is within ``tol`` of
    it (or at ``max_iter``), and a ``ConvergenceWarning`` is emitted when the
    fitted mean NLL is below ``1e-6``.

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
    Neural Networks", ICML 2017, Section 4.2 ("Extension to multiclass
    models": matrix and vector scaling).

    Examples
    --------
    >>> from skcal import VectorScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(2000, 3)
    >>> X = X + [2.0, 0.0, 0.0]  # logits biased towards class 0
    >>> vs = VectorScaler().fit(X, y)
    >>> vs.coef_.shape, vs.intercept_.shape
    ((3,), (3,))
    >>> bool(vs.intercept_[0] < vs.intercept_[1])  # the bias of class 0 is removed
    True
    >>> vs.predict_proba(X).sum(axis=1)[:3]
    array([1., 1., 1.])
    """

    #: dask arrays: exact distributed passes (see the dask user guide).
    _dask_fit = True

    def _fit(self, Z, y, sample_weight, xp):
        alpha = float(self.alpha)
        if alpha == 0 and warn_absent_classes(
            self.classes_, y, sample_weight, "bias", f"alpha={ABSENT_CLASS_ALPHA:g}"
        ):
            alpha = ABSENT_CLASS_ALPHA
        # the penalty acts after the temperature (see alpha): (w, b) fitted on Z / T
        beta = penalty_centre(Z, y, sample_weight, xp)[1] if alpha > 0 else 1.0
        # 16-bit tensors are scaled in float32 (their values exactly): a
        # float16 product would round the scaled logits again
        Zs = Z if beta == 1.0 else (
            xp.working_logits(Z) if Z.dtype.itemsize < 4 else Z) * beta
        w, b, n_iter, status = fit_vector(
            Zs, y, sample_weight, xp, alpha=alpha, tol=self.tol, max_iter=self.max_iter
        )
        self.coef_ = np.asarray(w, dtype=np.float64) * beta
        self.intercept_ = np.asarray(b, dtype=np.float64)
        self.n_iter_ = n_iter
        if alpha == 0 and status == "converged":
            f = xp.nll(Z, y, sample_weight, scale=self.coef_, bias=self.intercept_)
            warn_if_separated(
                f, "logits", "the unpenalised NLL has no finite minimiser (w -> inf) "
                "and the fitted scales are arbitrary; use alpha > 0.")
        warn_stopped("VectorScaler", status, self.max_iter,
                     ", or alpha if the logits separate the calibration set")

    @property
    def scale_(self):
        """Alias of ``coef_``: the per-class scales ``w``."""
        return self.coef_

    @property
    def bias_(self):
        """Alias of ``intercept_``: the per-class biases ``b``."""
        return self.intercept_

    def _scale_bias(self):
        return self.coef_, self.intercept_
