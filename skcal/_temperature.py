"""Temperature scaling (Guo et al. 2017) fitted by safeguarded Newton on beta = 1/T."""

import math
import warnings
from numbers import Integral, Real

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from .base import BaseCalibrator

__all__ = ["TemperatureScaler", "fit_temperature"]

#: Bounds of the fitted temperature. The optimum is clipped to them, with a warning.
TEMPERATURE_MIN = 1e-6
#: The upper bound is ``TEMPERATURE_MAX * S`` with the logit scale
#: ``S = max(1, max_i (max_k z_ik - z_{i,y_i}))``: T scales with the logits, so
#: huge but informative logits are still fitted, while ``z / T`` stays
#: resolvable (the argmax is kept even at the bound).
TEMPERATURE_MAX = 1e6


#: Warm start: fits with at least this many rows first solve on a subsample.
WARM_START_MIN_ROWS = 40_000
#: Target number of rows of the warm-start subsample.
WARM_START_ROWS = 10_000
#: Largest stride of the warm-start subsample (it keeps >= 1/32 of the rows).
WARM_START_MAX_STRIDE = 32
#: Safety factor on the predicted error of the final Newton step.
_SAFETY = 10.0


def _newton(
    Z, y, sample_weight, xp, stats, beta, tol, max_iter, curvature=0.0, scale=1.0
):
    """Safeguarded Newton on ``f'(beta) = 0``; see :func:`fit_temperature`.

    Returns ``(beta, n_iter, status, curvature)`` where ``curvature`` is the
    largest estimate of ``|f'''| / (2 f'')`` seen (the input value if none).
    """
    b_min, b_max = 1.0 / (TEMPERATURE_MAX * scale), 1.0 / TEMPERATURE_MIN
    lo, hi = b_min, b_max
    lo_tested = hi_tested = False
    beta = min(max(beta, b_min), b_max)
    prev = None
    n_up = 0  # consecutive steps upwards while no f' > 0 has been seen
    for it in range(1, max_iter + 1):
        f, g, h = map(
            float, xp.temperature_nll_derivs(Z, y, sample_weight, beta, row_stats=stats)
        )
        if beta <= b_min and g >= 0:
            return b_min, it, "lower", curvature
        if beta >= b_max and g <= 0:
            return b_max, it, "upper", curvature
        if f == 0 and g <= 0:
            # the NLL (>= 0) has reached 0: every row's softmax is saturated on
            # its true class from here on, i.e. the logits separate the set.
            return b_max, it, "upper", curvature
        if g == 0 and h == 0:
            if f == 0:
                # every row's softmax is saturated on its true class: the NLL is
                # flat (zero) from here on, i.e. the calibration set is separable.
                return b_max, it, "upper", curvature
            # every row's logits are equal: T changes nothing, the logits carry
            # no information; take the uninformative bound.
            return b_min, it, "lower", curvature
        if g == 0:
            return beta, it, "converged", curvature
        if g > 0:
            hi, hi_tested = beta, True
        else:
            lo, lo_tested = beta, True
        if prev is not None and h > 0 and prev[0] != beta:
            # finite difference of f'' between the last two iterates -> f'''
            f3 = (h - prev[1]) / (beta - prev[0])
            curvature = max(curvature, abs(f3) / (2.0 * h))
        newton = beta - g / h if h > 0 else math.nan
        if abs(newton - beta) <= tol * beta:  # False for NaN
            return newton, it, "converged", curvature
        cand = newton
        if g < 0 and not hi_tested and not cand <= 1.01 * beta:
            # f' -> 0 only exponentially fast on (near-)separable data, where
            # Newton's steps stay of constant size: grow geometrically instead
            # (not once the steps are small, as near an optimum).
            n_up += 1
            if n_up >= 2 and not cand >= 2 * beta:
                cand = 2 * beta
        if not lo < cand < hi:
            if cand <= lo and not lo_tested:
                cand = lo
            elif cand >= hi and not hi_tested:
                cand = hi
            elif cand != cand and not (lo_tested and hi_tested):
                cand = hi if not hi_tested else lo
            else:
                cand = math.sqrt(lo * hi)
        is_newton = cand == newton
        step = abs(cand - beta)
        if step <= tol * beta or (hi - lo) <= tol * lo:
            return cand, it, "converged", curvature
        if (
            is_newton
            and curvature > 0
            and step <= 1e-2 * beta
            and _SAFETY * curvature * step * step <= tol * beta
        ):
            # quadratic convergence: the error left after this step is
            # about |f'''| / (2 f'') * step**2, below tol * beta / 10
            return cand, it, "converged", curvature
        prev = (beta, h)
        beta = cand
    return beta, max_iter, "max_iter", curvature


def fit_temperature(
    Z, y, sample_weight, xp, *, tol=1e-10, max_iter=100, beta0=1.0, warm_start=True
):
    """Minimise the NLL of ``softmax(beta * Z)`` over ``beta = 1/T``.

    Parameters
    ----------
    Z : ndarray or torch.Tensor of shape (n_samples, n_classes)
        Logits (float16, bfloat16, float32 or float64).
    y : ndarray or torch.Tensor of shape (n_samples,), int64
        Encoded labels in ``0..n_classes-1``.
    sample_weight : ndarray or torch.Tensor of shape (n_samples,), float64, or None
    xp : module
        Kernel module (``skcal._backend._numpy`` or ``_torch``).
    tol : float, default=1e-10
        Relative tolerance on ``beta``: stop when the Newton step, or the
        predicted error left after it, is at most ``tol * beta``.
    max_iter : int, default=100
        Maximum number of objective evaluations over the full ``Z``.
    beta0 : float, default=1.0
        Starting point (of the warm start, when it runs).
    warm_start : bool, default=True
        With at least :data:`WARM_START_MIN_ROWS` rows, first solve on a
        systematic subsample (every ``s``-th row, about
        :data:`WARM_START_ROWS` rows, ``2 <= s <= 32``) and start the
        full-data iterations from its optimum. This changes only the starting
        point, not the optimum, and is deterministic.

    Returns
    -------
    beta : float
        The minimiser, within ``[1/(TEMPERATURE_MAX * S), 1/TEMPERATURE_MIN]``
        with the logit scale ``S = max(1, max_i (max_k z_ik - z_{i,y_i}))``.
    n_iter : int
        Number of derivative evaluations over the full ``Z`` (passes).
    status : {"converged", "lower", "upper", "max_iter"}
        ``"lower"``: the optimum is at ``beta <= 1/(TEMPERATURE_MAX * S)`` (logits
        carry no or inverted information); ``"upper"``: the optimum is at
        ``beta >= 1/TEMPERATURE_MIN`` (separable calibration set).

    Notes
    -----
    ``f(beta) = sum_i w_i [logsumexp(beta z_i) - beta z_{i,y_i}] / sum_i w_i``
    is convex, with ``f'(beta) = mean_w(E_p[z] - z_y)`` and
    ``f''(beta) = mean_w Var_p[z] >= 0`` computed in one pass. The method keeps
    a bracket ``[lo, hi]`` with ``f'(lo) < 0 < f'(hi)`` (initially the bounds)
    and takes the Newton step when it lands strictly inside the bracket, else
    tries the untested bound, else bisects the bracket geometrically. While
    no ``f' > 0`` has been seen, a second step upwards of more than 1% at least
    doubles ``beta``: on (near-)separable data ``f'`` decays exponentially and
    Newton's steps would stay of constant size. If every row's softmax
    saturates on its true class (the NLL evaluates to exactly 0 in float64)
    the set is separable and ``beta`` goes to its upper bound; if every row's
    logits are equal (``f' = f'' = 0`` with ``f > 0``) ``T`` changes nothing and
    ``beta`` goes to its lower bound.

    Stopping rule: near the optimum Newton converges quadratically, the error
    left after a step ``d`` being about ``c d^2`` with
    ``c = |f'''| / (2 f'')``. ``c`` is estimated by finite differences of
    ``f''`` between successive iterates (the largest estimate seen, those of
    the warm start included). The iteration stops after a Newton step with
    ``|d| <= 0.01 beta`` and ``10 c d^2 <= tol * beta``, or with
    ``|d| <= tol * beta``, or when the bracket is narrower than ``tol * lo``.
    With the warm start this typically takes 2 or 3 passes over ``Z``.
    """
    stats = xp.row_max_and_true(Z, y)
    scale = max(1.0, float((stats[0] - stats[1]).max()))
    n = Z.shape[0]
    curvature = 0.0
    stride = min(WARM_START_MAX_STRIDE, n // WARM_START_ROWS)
    if warm_start and n >= WARM_START_MIN_ROWS and stride >= 2:
        sub = slice(None, None, stride)
        sw = None if sample_weight is None else sample_weight[sub]
        if sw is None or float(sw.sum()) > 0:
            b, _, status, curvature = _newton(
                Z[sub], y[sub], sw, xp, (stats[0][sub], stats[1][sub]),
                beta0, 1e-6, max_iter, scale=scale,
            )
            if status == "converged":
                beta0 = b
    beta, n_iter, status, _ = _newton(
        Z, y, sample_weight, xp, stats, beta0, tol, max_iter, curvature, scale
    )
    return beta, n_iter, status


class TemperatureScaler(BaseCalibrator):
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
    classes : array-like of shape (n_classes,), default=None
        Labels of the columns of ``X``. By default the sorted unique labels of
        ``y``; with integer labels ``0..K-1`` some classes may be absent.
    backend : {"auto", "numpy", "torch"}, default="auto"
        Array library used for the computation; ``"auto"`` follows the input.
    tol : float, default=1e-10
        Relative tolerance on ``beta = 1/T``: Newton stops when its step is
        below ``tol * beta``.
    max_iter : int, default=100
        Maximum number of passes over the calibration set.

    Attributes
    ----------
    temperature_ : float
        Fitted temperature ``T``, in ``[1e-6, 1e6 * S]`` where the logit scale
        ``S = max(1, max_i (max_k z_ik - z_{i,y_i}))`` (so huge but informative
        logits are still fitted: ``T`` scales with the logits).
    classes_ : ndarray of shape (n_classes,)
        Class labels; column ``j`` of ``X`` is ``classes_[j]``.
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
    ``T >= 1e6 * S`` (logits uninformative or anti-informative, ``T -> inf``)
    or ``T <= 1e-6`` (separable calibration set, ``T -> 0``), ``T`` is set to
    the bound and a ``ConvergenceWarning`` says so. A ``ConvergenceWarning``
    also reports stopping at ``max_iter``.

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
    Neural Networks", ICML 2017, Section 4.2 ("Temperature scaling").

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import TemperatureScaler
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, size=1000)
    >>> logits = 5.0 * (np.eye(3)[y] + rng.normal(size=(1000, 3)))
    >>> ts = TemperatureScaler().fit(logits, y)
    >>> bool(ts.temperature_ > 1)  # over-confident logits are softened
    True
    >>> ts.predict_proba(logits).shape
    (1000, 3)
    """

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        input_type="logits",
        classes=None,
        backend="auto",
        tol=1e-10,
        max_iter=100,
    ):
        self.input_type = input_type
        self.classes = classes
        self.backend = backend
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, Z, y, sample_weight, xp):
        beta, n_iter, status = fit_temperature(
            Z, y, sample_weight, xp, tol=self.tol, max_iter=self.max_iter
        )
        self.temperature_ = float(1.0 / beta)
        self.n_iter_ = n_iter
        if status == "lower":
            warnings.warn(
                "The NLL-optimal temperature is at or above the upper bound "
                f"{self.temperature_:g}: the logits are uninformative (e.g. equal "
                "within each row) or anti-informative on the calibration set, or on "
                "a huge scale. The temperature is set to that bound.",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif status == "upper":
            warnings.warn(
                "The NLL keeps decreasing as T -> 0 down to the lower bound "
                f"{self.temperature_:g}: the logits separate the calibration set, or "
                "are on a tiny scale. The temperature is set to that bound.",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif status == "max_iter":
            warnings.warn(
                f"Temperature scaling stopped after max_iter={self.max_iter} "
                "iterations before reaching tol; increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _predict_log_proba(self, Z, xp):
        return xp.log_softmax(Z, scale=1.0 / self.temperature_)

    def _predict_proba(self, Z, xp):
        return xp.softmax(Z, scale=1.0 / self.temperature_)
