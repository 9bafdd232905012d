"""Centered isotonic regression (Oron & Flournoy 2017) on log-odds scores.

:func:`centered_isotonic_knots` turns scikit-learn's pool-adjacent-violators
fit (:func:`sklearn.isotonic.isotonic_regression`) into the knots of the
centered map; :class:`CenteredIsotonicScaler` evaluates and exports them with
:class:`~skcal.IsotonicScaler`'s interpolation code.
"""

from numbers import Real

import numpy as np
from sklearn.isotonic import isotonic_regression
from sklearn.utils._param_validation import Interval

from ..base import BaseCalibrator
from ..utils._docstrings import substitute_docstring
from ..utils.validation import DEFAULT_INPUT_TYPE
from ._base import OneVsRestCalibrator
from ._isotonic import IsotonicScaler

__all__ = ["CenteredIsotonicScaler", "centered_isotonic_knots"]

#: Adjacent isotonic values closer than this fraction of the largest |value|
#: are one level set (one block): they differ only by rounding.
LEVEL_RTOL = 1e-12


def _clip_knots(xk, yk, lo, hi):
    """Knots of ``clip(g, lo, hi)`` for the non-decreasing piecewise-linear ``g`` through ``(xk, yk)``.

    Where a segment crosses ``lo`` or ``hi`` the crossing becomes a knot, so
    that interpolating the clipped knots is exactly the clipped map.
    """
    xs, ys = [xk[:1]], [yk[:1]]
    for level in (lo, hi):
        i = np.flatnonzero((yk[:-1] < level) & (yk[1:] > level))
        if i.size:
            x_cross = xk[i] + (level - yk[i]) * (xk[i + 1] - xk[i]) / (yk[i + 1] - yk[i])
            xs.append(x_cross)
            ys.append(np.full(i.size, level))
    xs.append(xk[1:])
    ys.append(yk[1:])
    x, y = np.concatenate(xs), np.concatenate(ys)
    order = np.argsort(x, kind="stable")
    x, y = x[order], np.clip(y[order], lo, hi)
    # a crossing that rounds onto an existing knot: keep one knot per x
    keep = np.concatenate([x[1:] != x[:-1], [True]])
    return x[keep], y[keep]


def centered_isotonic_knots(s, t, sample_weight=None, *, y_min=None, y_max=None):
    """Knots of the centered isotonic regression of targets ``t`` on scores ``s``.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
        Scores, finite; used in float64.
    t : ndarray of shape (n_samples,)
        Targets (0/1 for calibration; any reals).
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights; rows of weight 0 are left out.
    y_min, y_max : float, default=None
        Bounds of the returned map (None: unbounded).

    Returns
    -------
    x : ndarray of shape (m,), float64
        Strictly increasing knots (``m >= 1``).
    y : ndarray of shape (m,), float64
        Non-decreasing values; the map is ``np.interp(s, x, y)`` (constant
        beyond the ends).

    Notes
    -----
    Equal scores are pooled (their weights summed, their targets averaged
    with weights). scikit-learn's pool-adjacent-violators algorithm gives
    the isotonic fit ``g``, constant on *blocks* of consecutive distinct
    scores (its level sets; adjacent values within :data:`LEVEL_RTOL` of
    the largest ``|g|`` are one block, since they differ only by rounding). Centered isotonic regression (Oron & Flournoy 2017, Sec. 2.2)
    replaces each block by one knot at its weighted score centre
    ``sum_block w_j s_j / sum_block w_j`` with the block's value, and
    interpolates linearly between knots, so the map is strictly increasing
    from the first centre to the last. As in the ``cir-model`` package that
    probmetrics wraps: the first and last blocks also keep a knot at the
    lowest and highest score (the map is flat from there to their
    centres), and a block whose value is exactly 0 or 1 keeps both its end
    scores instead of its centre (the map stays at 0 or 1 on all of it).
    The bounds are applied to the interpolated map, by adding the knots
    where it crosses them.
    """
    s = np.asarray(s, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, np.float64)
    keep = w > 0
    if not keep.all():
        s, t, w = s[keep], t[keep], w[keep]
    order = np.argsort(s, kind="stable")
    xs = s[order]
    starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))
    ux = xs[starts]
    if starts.size == s.size:  # distinct scores: no pooling
        W, m = w[order], t[order]
    else:
        W = np.add.reduceat(w[order], starts)
        m = np.add.reduceat((w * t)[order], starts) / W
    g = isotonic_regression(m, sample_weight=W, increasing=True)
    # level sets of the fit: adjacent values equal up to the rounding of the
    # pooled means (PAVA does not pool equal neighbours, and the weights'
    # scale can decide whether two equal means round alike)
    new = np.empty(ux.size, dtype=bool)
    new[0] = True
    np.greater(g[1:] - g[:-1], LEVEL_RTOL * max(float(np.max(np.abs(g))), 1e-300), out=new[1:])
    block = np.cumsum(new) - 1
    Wb = np.bincount(block, weights=W)
    first = ux[new]
    last = ux[np.append(new[1:], True)]
    value = np.clip(np.bincount(block, weights=W * g) / Wb, g[new], g[np.append(new[1:], True)])
    centre = np.clip(np.bincount(block, weights=W * ux) / Wb, first, last)
    if value[0] == 0.0:
        centre[0] = last[0]
    if value[-1] == 1.0:
        centre[-1] = first[-1]
    x = np.concatenate([[first[0]], centre, [last[-1]]])
    y = np.concatenate([[value[0]], value, [value[-1]]])
    distinct = np.concatenate([[True], x[1:] != x[:-1]])
    x, y = x[distinct], y[distinct]
    lo = -np.inf if y_min is None else float(y_min)
    hi = np.inf if y_max is None else float(y_max)
    if y[0] < lo or y[-1] > hi:
        x, y = _clip_knots(x, y, lo, hi)
    return x, y


@substitute_docstring
class CenteredIsotonicScaler(IsotonicScaler):
    """Centered isotonic calibration: isotonic regression made strictly increasing.

    Isotonic regression (:class:`IsotonicScaler`) is a step function: every
    pooled block of scores gets one probability, which ties the calibrated
    probabilities of different inputs and so lowers ranking metrics (AUC).
    Centered isotonic regression (CIR, Oron & Flournoy 2017) keeps the
    isotonic fit's values but puts each block's value at the block's score
    centre and interpolates linearly between centres: the map is strictly
    increasing between the first and the last centre. A binary problem fits
    one map of the log-odds ``s = z_1 - z_0`` (or the 1-D score given as
    ``X``); a multiclass problem one per class on its one-vs-rest log-odds,
    renormalised.

    Parameters
    ----------
    %(input_type)s
    %(classes)s
    %(backend)s
    clip : float in [0, 0.5) or None, default=1e-6
        ``eps``: the map is ``clip(cir(s), eps, 1 - eps)``, so that no
        predicted probability is exactly 0 or 1 and the log loss stays
        finite. ``None`` (or 0): the plain CIR map.

    Attributes
    ----------
    calibrators_ : list of sklearn.isotonic.IsotonicRegression
        One per map (one for ``classes_[1]`` in the binary case, one per
        class otherwise), holding the CIR knots: ``X_thresholds_`` (strictly
        increasing log-odds scores) and ``y_thresholds_`` (probabilities);
        ``predict`` of each interpolates them.
    classes_ : ndarray of shape (n_classes,)
        Class labels; column ``j`` of ``X`` is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).

    See Also
    --------
    IsotonicScaler : the step-function fit CIR starts from.
    centered_isotonic_knots : the knots of one map.

    Notes
    -----
    **Fit.** Per map: scikit-learn's pool-adjacent-violators fit of the 0/1
    targets "``y == class``" on the distinct scores (equal scores pooled,
    with ``sample_weight``), then the CIR knots of
    :func:`~skcal.ovr._centered_isotonic.centered_isotonic_knots`: each
    pooled block becomes one knot at its weighted score centre with the
    block's value; the lowest and highest calibration scores keep the first
    and last block values (flat ends), and a block of value exactly 0 or 1
    keeps its two ends. Exact and not iterative. Sample weights enter the
    block values and centres only as weighted means, so integer weights fit
    exactly like repeated rows and rescaling every weight changes nothing.

    **Prediction** interpolates linearly between the knots (constant beyond
    the calibration range), clips to ``[eps, 1 - eps]`` (the crossings are
    knots, so the clip is exact), and renormalises multiclass rows as
    :class:`IsotonicScaler` does; the same knots are exported to torch and
    ONNX.

    References
    ----------
    A. P. Oron, N. Flournoy, "Centered Isotonic Regression: Point and
    Interval Estimation for Dose-Response Studies", Statistics in
    Biopharmaceutical Research 9(3), 258-267, 2017.

    B. Zadrozny, C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD 2002 (isotonic calibration,
    one-vs-rest).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import CenteredIsotonicScaler, IsotonicScaler
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=1000)
    >>> scores = 4.0 * (2 * y - 1 + rng.normal(size=1000))
    >>> p_cir = CenteredIsotonicScaler().fit(scores, y).predict_proba(scores)[:, 1]
    >>> p_iso = IsotonicScaler().fit(scores, y).predict_proba(scores)[:, 1]
    >>> len(np.unique(p_cir)) > 10 * len(np.unique(p_iso))  # far fewer ties
    True
    """

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "clip": [Interval(Real, 0, 0.5, closed="left"), None],
    }

    def __init__(self, *, input_type=DEFAULT_INPUT_TYPE, classes=None, backend="auto", clip=1e-6):
        self.input_type = input_type
        self.classes = classes
        self.backend = backend
        self.clip = clip

    def _fit_map(self, s, t, sample_weight, label):
        cal = self._new_calibrator()  # IsotonicRegression(y_min=eps, y_max=1 - eps)
        bounded = bool(self.clip)
        x, y = centered_isotonic_knots(
            s, t, sample_weight, y_min=cal.y_min if bounded else None,
            y_max=cal.y_max if bounded else None,
        )
        cal.increasing_ = True
        cal.X_min_, cal.X_max_ = float(x[0]), float(x[-1])
        cal.X_thresholds_, cal.y_thresholds_ = x, y
        cal._build_f(x, y)
        return cal

    # one class at a time through _fit_map (not IsotonicScaler's sorted shortcut)
    _fit_multiclass = OneVsRestCalibrator._fit_multiclass
