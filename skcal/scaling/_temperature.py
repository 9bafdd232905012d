"""Temperature scaling (Guo et al. 2017) fitted by safeguarded Newton on beta = 1/T."""

import math
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._backend import _numpy
from ..base import BaseCalibrator, SOLVER_CONSTRAINTS
from ..utils._docstrings import substitute_docstring
from ..utils.validation import DEFAULT_INPUT_TYPE, _caller_stacklevel
from ..utils._params import store_params

__all__ = ["TemperatureScaler", "fit_temperature"]

#: Bounds of the fitted temperature, relative to the logit scale: the optimum is
#: clipped to ``[TEMPERATURE_MIN * S, TEMPERATURE_MAX * S]``, with a warning, where
#: ``S = max_i (max_k z_ik - z_{i,y_i})`` (``S = 1`` when that is 0, i.e. every
#: row's true class has the largest logit). Both bounds scale with the logits,
#: so ``fit(c * Z)`` gives ``c * T`` (huge or tiny but informative logits are
#: still fitted), while ``z / T`` stays resolvable (the argmax is kept even at
#: the upper bound).
TEMPERATURE_MIN = 1e-6
TEMPERATURE_MAX = 1e6


#: Warm start: fits with at least this many rows first solve on a subsample.
WARM_START_MIN_ROWS = 8_000
#: Target number of rows of the first warm-start subsample.
WARM_START_ROWS = 10_000
#: Smallest and largest stride of a warm-start subsample: each level keeps
#: between 1/32 and 1/8 of the rows of the level above it.
WARM_START_MIN_STRIDE = 8
WARM_START_MAX_STRIDE = 32
#: Relative tolerance on ``beta`` of the warm-start solves (their optimum is
#: a subsample's, off by its sampling error, ~1e-2, anyway).
WARM_START_TOL = 1e-4
#: Safety factor on the predicted error of the final step.
_SAFETY = 10.0
#: A Newton step leaving the bracket is replaced by a multiplicative step of
#: this factor, squared on each further such step in the same direction.
_EXPAND = 4.0
#: After a step of at most this relative size, f''' of the previous point is
#: reused (it only sets Halley's correction and the error estimate).
_REUSE_THIRD_MAX_STEP = 0.02
#: Halley's correction is used when it changes the Newton step by at most
#: this fraction (near the root); otherwise the plain Newton step.
_HALLEY_MAX = 0.5
#: After a Newton step of at most this relative size, the next pass computes
#: only ``f`` and ``f'``: ``f''`` is extrapolated from the last one with
#: ``f'''`` (one product and row sum per entry less).
_REUSE_SECOND_MAX_STEP = 1e-2


#: The NLL counts as flat where Newton's predicted decrease ``f'^2 / f''`` is
#: below this fraction of ``f`` (a few float64 roundings of ``f``).
_FLAT = 4 * 2.0**-52
#: Relative bracket width at which the float32-swept objective (float16/32
#: logits) is solved: a few float32 roundings of ``beta * d`` (~1.2e-7), at
#: which scale ``f'`` as computed is a step function of ``beta``.
_SINGLE_BRACKET = 2.0**-22

#: The arrays every fit function of this package takes, ``%(fit_arrays)s`` in
#: their docstrings (:func:`skcal.utils._docstrings.substitute_docstring`).
FIT_DOCS = {
    "fit_arrays": """\
Z : ndarray or torch.Tensor of shape (n_samples, n_classes)
    Logits (float16, bfloat16, float32 or float64).
y : ndarray or torch.Tensor of shape (n_samples,), int64
    Encoded labels in ``0..n_classes-1``.
sample_weight : ndarray or torch.Tensor of shape (n_samples,), float64, or None
xp : module
    Kernel module (``skcal._backend._numpy`` or ``_torch``).""",
}


def warn_stopped(name, status, max_iter, remedy):
    """The ``ConvergenceWarning`` of a solve that ended on ``"max_iter"`` or ``"line_search"``.

    ``remedy`` follows "increase max_iter" (e.g. ``", or alpha if ..."``);
    other statuses warn nothing.
    """
    if status == "max_iter":
        msg = (f"{name} stopped after max_iter={max_iter} iterations before reaching "
               f"tol; increase max_iter{remedy}.")
    elif status == "line_search":
        msg = (f"{name} stopped: the line search found no decrease of the objective "
               "before reaching tol (tol may be below machine precision).")
    else:
        return
    warnings.warn(msg, ConvergenceWarning, stacklevel=_caller_stacklevel())


class ScaleBiasMap:
    """Predict and export ``softmax(w * z + b)``, ``(w, b) = self._scale_bias()`` (``b`` may be None)."""

    def _predict_log_proba(self, Z, xp):
        w, b = self._scale_bias()
        return xp.log_softmax(Z, scale=w, bias=b)

    def _predict_proba(self, Z, xp):
        w, b = self._scale_bias()
        return xp.softmax(Z, scale=w, bias=b)

    def _torch_spec(self):
        w, b = self._scale_bias()
        return {"kind": "affine", "scale": w, "bias": b}


def _newton(Z, y, sample_weight, xp, stats, beta, tol, max_iter, scale=1.0, t=None):
    """Safeguarded Newton-Halley iteration on ``f'(beta) = 0``; see :func:`fit_temperature`.

    With ``stats=None`` the row statistics are taken in the first pass and
    the logit scale follows from them (``scale`` is then a lower bound of
    it, used only to clip the starting point). ``t``: an estimate of
    ``f'''`` near ``beta`` (from a warm start), which only sets Halley's
    correction and the error estimate; the first pass then skips it.

    Returns ``(beta, n_iter, status, t)``, ``t`` the last ``f'''`` used.
    """
    b_min, b_max = 1.0 / (TEMPERATURE_MAX * scale), 1.0 / (TEMPERATURE_MIN * scale)
    lo, hi = b_min, b_max
    lo_tested = hi_tested = False
    beta = min(max(beta, b_min), b_max)
    n_up = 0  # consecutive steps upwards while no f' > 0 has been seen
    expand = (0, _EXPAND)  # (direction of the last expansion step, its next factor)
    # t: f''' at the last point where it was computed (or the warm start's)
    last_step = math.inf if t is None else 0.0  # relative size of the last step
    prev = None  # (beta, f'', f') of the last pass with f'', for a lite pass
    bracket_tol = tol if "float64" in str(Z.dtype) else max(tol, _SINGLE_BRACKET)
    for it in range(1, max_iter + 1):
        third = t is None or last_step > _REUSE_THIRD_MAX_STEP
        lite = prev is not None and not third and last_step <= _REUSE_SECOND_MAX_STEP
        fused = stats is None
        f, g, h, *rest = xp.temperature_nll_derivs(
            Z, y, sample_weight, beta, row_stats=stats, third=third,
            return_row_stats=fused, second=not lite,
        )
        if lite:
            # f'' at beta: linear in f''' from the last pass (h_lin), checked
            # against the estimate that also fits the secant of f' (quadratic
            # term included): their difference bounds the error of h_lin,
            # including float32 rounding of f' (conservative when the step is
            # tiny against that rounding).
            b0, h0, g0 = prev
            db = beta - b0
            h = h0 + t * db
            h_quad = 3.0 * (g - g0) / db - 2.0 * h0 - 0.5 * t * db
            h_err = abs(h_quad - h) / h if h > 0 else math.inf
            if not h > 0:
                h, h_err = h0, math.inf
        else:
            h_err = 0.0  # the relative error estimate of f'': none when computed
        if fused:
            # row statistics from this first pass (NumPy or torch, also on
            # dask): the true lower bound of beta
            stats = rest.pop()
            s_full = _numpy.logit_scale(Z, y, stats)
            b_min = lo = 1.0 / (TEMPERATURE_MAX * s_full)
            b_max = hi = 1.0 / (TEMPERATURE_MIN * s_full)
        if third:
            t = rest[0]
        if beta <= b_min and g >= 0:
            return b_min, it, "lower", t
        if beta >= b_max and g <= 0:
            return b_max, it, "upper", t
        if f == 0 and g <= 0:  # every row saturated on its true class: separable
            return b_max, it, "upper", t
        if g == 0 and h == 0:  # saturated and tied rows, or all tied (see Notes)
            if f == 0 or not bool((Z == Z[:, :1]).all()):  # not every row tied
                return b_max, it, "upper", t
            return b_min, it, "lower", t
        if g == 0:
            return beta, it, "converged", t
        if g > 0:
            hi, hi_tested = beta, True
        else:
            lo, lo_tested = beta, True
        if h > 0:
            d = -g / h                       # Newton step
            r = 0.5 * d * t / h              # Halley's relative correction
            step = d / (1.0 + r) if abs(r) <= _HALLEY_MAX else d
            curvature = abs(t) / (2.0 * h)   # Newton's error after d: ~c d^2
        else:
            d = step = curvature = math.nan
        newton = beta + step
        if (
            g < 0
            and not hi_tested
            and h > 0
            and g * g / h <= _FLAT * f
            # not where Newton is converging (a step much smaller than the
            # last one): there the decrease is unresolvable because f is at
            # its optimum, not because the rows are saturated (those keep
            # steps of a constant size, about 1 / (logit gap))
            and not (abs(d) <= 1e-2 * beta and abs(d) <= 0.1 * last_step * beta)
        ):
            # flat as computed (see Notes): test the upper bound
            cand = hi
            if abs(cand - beta) <= tol * beta:
                return cand, it, "upper", t
            last_step = abs(cand - beta) / beta
            beta = cand
            continue
        if abs(d) <= tol * beta:  # False for NaN
            return newton, it, "converged", t
        cand = newton
        if g < 0 and not hi_tested and not cand <= 1.01 * beta:
            # (near-)separable data: grow geometrically (see Notes)
            n_up += 1
            if n_up >= 2 and not cand >= 2 * beta:
                cand = 2 * beta
        if not lo < cand < hi:
            down = g > 0
            if (down and not lo_tested) or (not down and not hi_tested):
                direction = -1 if down else 1
                factor = expand[1] if expand[0] == direction else _EXPAND
                cand = max(beta / factor, lo) if down else min(beta * factor, hi)
                expand = (direction, factor * factor)
            else:
                cand = math.sqrt(lo * hi)
                expand = (0, _EXPAND)
        else:
            expand = (0, _EXPAND)
        if abs(cand - beta) <= tol * beta or (hi - lo) <= bracket_tol * lo:
            return cand, it, "converged", t
        if (
            cand == newton
            and abs(d) <= 1e-2 * beta
            and _SAFETY * curvature * d * d + abs(d) * h_err <= tol * beta
        ):
            return cand, it, "converged", t
        # after a lite pass, prev stays: the next one extrapolates from the same full pass
        if not lite:
            prev = (beta, h, g) if cand == newton and h > 0 else None
        last_step = abs(cand - beta) / beta
        beta = cand
    return beta, max_iter, "max_iter", t


def _warm_start_strides(n):
    """Strides of the warm-start subsamples of ``n`` rows, coarsest first."""
    strides, total, rows = [], 1, n
    while rows >= WARM_START_MIN_ROWS:
        s = min(WARM_START_MAX_STRIDE, max(WARM_START_MIN_STRIDE, rows // WARM_START_ROWS))
        total *= s
        rows //= s
        strides.append(total)
    return strides[::-1]


@substitute_docstring(entries=FIT_DOCS)
def fit_temperature(
    Z, y, sample_weight, xp, *, tol=1e-10, max_iter=100, beta0=1.0, warm_start=True
):
    """Minimise the NLL of ``softmax(beta * Z)`` over ``beta = 1/T``.

    Parameters
    ----------
    %(fit_arrays)s
    tol : float, default=1e-10
        Relative tolerance on ``beta``: stop when the Newton step, or the
        predicted error left after it, is at most ``tol * beta``.
    max_iter : int, default=100
        Maximum number of objective evaluations over the full ``Z``.
    beta0 : float, default=1.0
        Starting point (of the coarsest warm start, when it runs).
    warm_start : bool, default=True
        With at least :data:`WARM_START_MIN_ROWS` rows, first solve on
        systematic subsamples (every ``s``-th row): a chain of them, each
        keeping 1/8 to 1/32 of the rows of the next (the first about
        :data:`WARM_START_ROWS` rows, the coarsest at least
        ``WARM_START_MIN_ROWS / 32``), each solved to
        :data:`WARM_START_TOL` and starting the next. This changes only the
        starting point, not the optimum, and is deterministic.

    Returns
    -------
    beta : float
        The minimiser, within ``[1/(TEMPERATURE_MAX * S), 1/(TEMPERATURE_MIN * S)]``
        with the logit scale ``S = max_i (max_k z_ik - z_{i,y_i})`` (1 where
        that is 0).
    n_iter : int
        Number of derivative evaluations over the full ``Z`` (passes).
    status : {"converged", "lower", "upper", "max_iter"}
        ``"lower"``: the optimum is at ``beta <= 1/(TEMPERATURE_MAX * S)`` (logits
        carry no or inverted information); ``"upper"``: the optimum is at
        ``beta >= 1/(TEMPERATURE_MIN * S)`` (separable calibration set).

    Notes
    -----
    ``f(beta) = sum_i w_i [logsumexp(beta z_i) - beta z_{i,y_i}] / sum_i w_i``
    is convex, with ``f'(beta) = mean_w(E_p[z] - z_y)``,
    ``f''(beta) = mean_w Var_p[z] >= 0`` and ``f'''(beta)`` (the mean third
    central moment) computed in one pass. Each iteration takes Halley's step
    ``d / (1 + d f''' / (2 f''))``, ``d = -f'/f''`` the Newton step, which
    converges cubically (Halley 1694; e.g. Press et al., *Numerical
    Recipes*, 3rd ed., Sec. 9.4), or the Newton step when that correction
    exceeds 50%. The method keeps a bracket ``[lo, hi]`` with
    ``f'(lo) < 0 < f'(hi)`` (initially the bounds) and takes the step when it
    lands strictly inside the bracket; otherwise it moves by a factor 4
    towards an untested bound (16, 256, ... on the next such steps, so a bound
    is reached in a few steps) or, with both ends tested, bisects the bracket
    geometrically. While no ``f' > 0`` has been seen, a second step upwards
    of more than 1% at least doubles ``beta``: on (near-)separable data
    ``f'`` decays exponentially and Newton's steps would stay of constant
    size. If every row's softmax saturates on its true class (the NLL
    evaluates to exactly 0 in float64) the set is separable and ``beta`` goes
    to its upper bound. Where ``f' = f'' = 0`` with ``f > 0``: if every row's
    logits are equal, ``T`` changes nothing and ``beta`` goes to its lower
    bound; otherwise the rows that are not tied are saturated on their true
    class (their terms underflowed; forest or kNN log-probabilities with
    ``-708`` entries do this), the tied ones contribute ``log K`` whatever
    ``beta``, so the NLL is at its limit and ``beta`` goes to its upper bound.
    Likewise, while ``f' < 0`` and Newton's predicted decrease ``f'^2 / f''``
    is below the float64 resolution of ``f`` (``4 eps f``), the upper bound
    is tested next: the NLL is flat as computed, and a bracket forms if it
    rises again before the bound.

    Stopping rule: near the optimum the error left after a Newton step ``d``
    is about ``c d^2`` with ``c = |f'''| / (2 f'')`` (exact, from the same
    pass), and Halley's step removes that term. The iteration stops after a
    step with ``|d| <= 0.01 beta`` and ``10 c d^2 <= tol * beta``, or with
    ``|d| <= tol * beta``, or when the bracket is narrower than ``tol * lo``.
    With the warm start this typically takes 2 passes over ``Z``.
    """
    scale, t0 = 1.0, None
    strides = _warm_start_strides(Z.shape[0]) if warm_start else []
    if strides:
        # Row statistics of the finest subsample only (the coarser ones are
        # its subsamples); the full ones come with the first full pass.
        # (xp.row_stride: a view, lazy on dask)
        fine = strides[-1]
        Zf, yf = xp.row_stride(Z, fine), xp.row_stride(y, fine)
        stats = xp.row_max_and_true(Zf, yf)
        # (dask: one reduction; the lazy statistics are not used by its passes)
        scale = xp.logit_scale(Zf, yf, stats)
        for stride in strides:
            ss = slice(None, None, stride // fine)
            sw = None if sample_weight is None else xp.row_stride(sample_weight, stride)
            if sw is not None and not xp.total(sw) > 0:
                continue
            b, _, status, t = _newton(
                xp.row_stride(Z, stride), xp.row_stride(y, stride), sw, xp,
                (stats[0][ss], stats[1][ss]), beta0, WARM_START_TOL, max_iter, scale=scale,
            )
            if status == "converged":
                beta0, t0 = b, t
    return _newton(Z, y, sample_weight, xp, None, beta0, tol, max_iter, scale, t0)[:3]


#: A row whose logits span more than this times the median row's span is an
#: outlier that can alone drive the temperature to its upper bound.
EXTREME_SPAN_RATIO = 1e3


def _extreme_logits_cause(Z, xp):
    """The outlier rows that explain a temperature at its upper bound, or None.

    ``None`` when the kernel module ``xp`` gives no row spans (dask: no pass
    is made for a message) or no row of ``Z`` spans (max minus min over the
    classes) more than :data:`EXTREME_SPAN_RATIO` times the median row's span.
    """
    span = xp.row_spans(Z)
    if span is None:
        return None
    median = float(np.median(span))
    extreme = span > EXTREME_SPAN_RATIO * median
    if median <= 0 or not extreme.any():
        return None
    i = int(np.argmax(span))
    return (
        f"{int(extreme.sum())} row(s) have extreme logits (row {i} spans "
        f"{span[i]:.3g}, the median row {median:.3g}): such outlying or "
        "overflowing logits dominate the NLL and force T up. Clip, rescale or "
        "remove those rows before calibrating."
    )


class _TemperatureParameters(BaseCalibrator):
    """The parameters of :class:`TemperatureScaler`, also those of :class:`~skcal.EnsembleTemperatureScaler`."""

    _refuses_underflowing_logits = True
    _predict_checks_range = True  # their softmax kernels check the logits' range

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        **SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        input_type=DEFAULT_INPUT_TYPE,
        classes=None,
        backend="auto",
        tol=1e-10,
        max_iter=100,
    ):
        store_params(self, locals())


@substitute_docstring
class TemperatureScaler(ScaleBiasMap, _TemperatureParameters):
    """Temperature scaling: one positive temperature ``T`` shared by all classes.

    The calibrated probabilities are ``softmax(z / T)``. ``T`` minimises the
    negative log-likelihood (NLL) of the calibration set. ``T > 1`` softens
    over-confident logits, ``T < 1`` sharpens under-confident ones; the
    predicted class never changes.

    Parameters
    ----------
    input_type : {"logits", "probabilities"}, default="logits"
        What ``X`` holds. Probabilities are turned into logits by ``log``
        (exact zeros first become the dtype's smallest normal number).
    %(classes)s
    %(backend)s
    tol : float, default=1e-10
        Relative tolerance on ``beta = 1/T``: the iteration stops when the
        Newton step, or the error predicted after it, is below ``tol * beta``.
        This is the distance to the optimum of the objective as computed: for
        float16/bfloat16/float32 logits each row's terms are evaluated in
        float32 (see the backends guide), which moves the optimum itself by
        about 1e-8 relative (at most 4e-8 measured on 1e5-1e6-row sets), so
        that, not ``tol``, bounds their error against an exact float64 solve.
        float64 logits reach ``tol``.
    max_iter : int, default=100
        Maximum number of passes over the calibration set.

    Attributes
    ----------
    temperature_ : float
        Fitted temperature ``T``, in ``[1e-6 * S, 1e6 * S]`` where the logit
        scale ``S = max_i (max_k z_ik - z_{i,y_i})`` (1 where that is 0): both
        bounds scale with the logits, so ``fit(c * Z)`` gives ``c * T`` and
        huge or tiny but informative logits are still fitted (within the
        accepted magnitudes: at most 1e100, and, unless all zero, at least
        1e-100 for float64; 1e15 and 1e-15 for the other dtypes).
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted; column ``j`` of the output is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).
    n_iter_ : int
        Number of Newton iterations (passes over the data).

    Notes
    -----
    Objective, over ``beta = 1/T``:
    ``f(beta) = sum_i w_i [log sum_k exp(beta z_ik) - beta z_{i,y_i}] / sum_i w_i``.
    It is convex in ``beta``; its exact first and second derivatives (the mean
    over samples of ``E_p[z] - z_y`` and ``Var_p[z]`` under
    ``p = softmax(beta z)``) are computed in one stable pass, and a
    safeguarded Newton method (bracketing with geometric bisection) solves
    ``f'(beta) = 0`` to relative tolerance ``tol``. When the optimum lies at
    ``T >= 1e6 * S`` (logits uninformative or anti-informative, or a few rows
    with extreme logits, named in the warning: ``T -> inf``)
    or ``T <= 1e-6 * S`` (separable calibration set, ``T -> 0``), ``T`` is set to
    the bound and a ``ConvergenceWarning`` says so. A ``ConvergenceWarning``
    also reports stopping at ``max_iter``. Constant scores (every row the
    same) cannot be mapped to the base rate by one temperature: the fit then
    warns (the other calibrators return the base rate).

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
    Neural Networks", ICML 2017, Section 4.2 ("Temperature scaling").

    Examples
    --------
    >>> from skcal import TemperatureScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 3, scale=5.0)
    >>> ts = TemperatureScaler().fit(X, y)
    >>> bool(ts.temperature_ > 1)  # over-confident logits are softened
    True
    >>> ts.predict_proba(X).shape
    (1000, 3)
    """

    #: dask arrays: exact distributed passes (see the dask user guide).
    _dask_fit = True
    _preserves_order = True
    _binary_log_odds_only = True

    def _fit(self, Z, y, sample_weight, xp):
        beta, n_iter, status = fit_temperature(
            Z, y, sample_weight, xp, tol=self.tol, max_iter=self.max_iter
        )
        self.temperature_ = float(1.0 / beta)
        self.n_iter_ = n_iter
        if status == "lower":
            warnings.warn(
                "The NLL-optimal temperature is at or above the upper bound "
                f"{self.temperature_:g} ({TEMPERATURE_MAX:g} times the logit scale): "
                + (_extreme_logits_cause(Z, xp) or
                   "the logits are uninformative (e.g. equal within each row) or "
                   "anti-informative on the calibration set.")
                + " The temperature is set to that bound.",
                ConvergenceWarning,
                stacklevel=_caller_stacklevel(),
            )
        elif status == "upper":
            warnings.warn(
                "The NLL keeps decreasing as T -> 0 down to the lower bound "
                f"{self.temperature_:g} ({TEMPERATURE_MIN:g} times the logit scale): "
                "the logits separate the calibration set (apart from rows whose "
                "logits are all equal, whose probabilities are uniform at any T). "
                "The temperature is set to that bound.",
                ConvergenceWarning,
                stacklevel=_caller_stacklevel(),
            )
        else:
            warn_stopped("TemperatureScaler", status, self.max_iter, "")

    def _scale_bias(self):
        return 1.0 / self.temperature_, None
