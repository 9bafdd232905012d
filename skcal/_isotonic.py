"""Isotonic-regression calibration (Zadrozny & Elkan 2002) on log-odds scores.

The monotone fits are scikit-learn's :class:`~sklearn.isotonic.IsotonicRegression`
(pool-adjacent-violators); this module only chooses the scores, combines the
one-vs-rest outputs and evaluates the fitted step functions on any device.
"""

import sys
from numbers import Real

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.utils._param_validation import Interval

from ._backend import _numpy
from ._platt import (
    _backend_name,
    _empty_like_out,
    _host64,
    _is_cpu_tensor,
    _to_host,
    binary_score,
    ovr_column,
    ovr_log_odds,
    ovr_row_stats,
)
from .base import BaseCalibrator
from .utils._array import to_numpy

__all__ = ["IsotonicScaler"]


#: Bytes (float64) of one row chunk of ``predict_proba``.
_PREDICT_CHUNK_BYTES = 1 << 24


def _interp(x, ir):
    """Evaluate a fitted ``IsotonicRegression`` at the float64 scores ``x``.

    NumPy input uses ``ir.predict``; a tensor is evaluated on its own device by
    linear interpolation between ``ir.X_thresholds_`` / ``ir.y_thresholds_``
    (strictly increasing knots), with ``x`` first clipped to the knot range,
    which is what ``IsotonicRegression(out_of_bounds="clip").predict`` computes.
    """
    if _backend_name(x) == "numpy":
        return ir.predict(x)
    torch = sys.modules["torch"]
    xt = torch.as_tensor(ir.X_thresholds_, dtype=x.dtype, device=x.device)
    yt = torch.as_tensor(ir.y_thresholds_, dtype=x.dtype, device=x.device)
    if xt.numel() == 1:
        return yt.expand(x.shape[0]).clone()
    x = torch.clamp(x, xt[0], xt[-1])
    j = torch.searchsorted(xt, x, right=True).clamp_(1, xt.numel() - 1)
    x0, x1, y0, y1 = xt[j - 1], xt[j], yt[j - 1], yt[j]
    return y0 + (x - x0) / (x1 - x0) * (y1 - y0)


def _stack(cols):
    """Stack 1-D columns (NumPy arrays or tensors) into (n, len(cols))."""
    if _backend_name(cols[0]) == "numpy":
        return np.stack(cols, axis=1)
    return sys.modules["torch"].stack(cols, dim=1)


class IsotonicScaler(BaseCalibrator):
    """Isotonic calibration: a non-decreasing step-linear map of the log-odds.

    A binary problem fits one monotone map from the log-odds score
    ``s = z_1 - z_0`` of ``classes_[1]`` (or the 1-D score given as ``X``) to
    ``P(classes_[1])``. A multiclass problem fits one map per class, "class k
    versus the rest", on that class's one-vs-rest log-odds, and renormalises
    the rows.

    Parameters
    ----------
    input_type : {"logits", "probabilities"}, default="logits"
        What ``X`` holds. Probabilities are turned into logits by ``log``.
    classes : array-like of shape (n_classes,), default=None
        Labels of the columns of ``X``. By default the sorted unique labels of
        ``y``; with integer labels ``0..K-1`` some classes may be absent.
    backend : {"auto", "numpy", "torch"}, default="auto"
        Array library used for the computation; ``"auto"`` follows the input.
    clip : float in [0, 0.5) or None, default=1e-6
        ``eps``: bound every fitted map to ``[eps, 1 - eps]`` (the ``y_min`` /
        ``y_max`` of the isotonic fits), so that no predicted probability is
        exactly 0 or 1 and the log loss, hence :meth:`score`, stays finite
        (a plain isotonic fit gives probability 0 to any test point scored
        below every positive calibration example, and one such row makes the
        log loss infinite). ``None`` (or 0) keeps the plain isotonic fit of
        Zadrozny & Elkan, identical to scikit-learn's
        ``CalibratedClassifierCV(method="isotonic")``.

    Attributes
    ----------
    calibrators_ : list of sklearn.isotonic.IsotonicRegression
        The fitted monotone maps: one (for ``classes_[1]``) in the binary case,
        one per class otherwise. Their ``X_thresholds_`` are log-odds scores and
        their ``y_thresholds_`` probabilities.
    classes_ : ndarray of shape (n_classes,)
        Class labels; column ``j`` of ``X`` is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).

    See Also
    --------
    skcal.PlattScaler : parametric (sigmoid) counterpart.
    sklearn.calibration.CalibratedClassifierCV : ``method="isotonic"`` is the
        same binary map on a classifier's ``decision_function``.

    Notes
    -----
    **Fit.** Each map is
    ``IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=eps,
    y_max=1-eps)``
    fitted by scikit-learn's pool-adjacent-violators algorithm to the 0/1
    targets "``y == class``" with the given ``sample_weight``: it minimises
    ``sum_i w_i (g(s_i) - t_i)^2`` over non-decreasing ``g``, which is also the
    maximum-likelihood monotone calibration map. The algorithm is exact and
    not iterative, so there is no ``n_iter_`` and no convergence warning.
    Prediction interpolates linearly between the fitted knots; scores outside
    the calibration range take the value of the nearest end (never NaN).

    **Scores.** With ``p_i = softmax(z_i)`` the score of class ``k`` is its
    one-vs-rest log-odds ``s_ik = log p_ik - log(1 - p_ik)``, computed without
    cancellation (see :class:`skcal.PlattScaler`). Any increasing
    function of ``p_ik`` gives the same isotonic fit; the log-odds keep
    distinct scores distinct where ``p_ik`` rounds to 1 in floating point.
    For two classes ``s = z_1 - z_0``, so the fit equals scikit-learn's
    ``CalibratedClassifierCV(method="isotonic")`` on that decision function.

    **Multiclass renormalisation.** ``P_ik = g_k(s_ik) / sum_j g_j(s_ij)``.
    If every ``g_j(s_ij)`` is 0 (possible only with ``clip=None``), the row gets
    the uniform distribution ``1 / n_classes``, as in scikit-learn, instead of
    ``0 / 0``. With ``clip=eps`` every ``g_j`` lies in ``[eps, 1 - eps]``;
    binary probabilities are then in ``[eps, 1 - eps]`` exactly, and
    multiclass ones, after renormalisation, lie in
    ``[eps / (n_classes (1 - eps)), (1 - eps) / (1 - eps + (n_classes - 1) eps)]``,
    so they are never exactly 0 or 1.

    **Memory and devices.** The fit computes one class's scores at a time
    from four per-row statistics (O(n_samples) memory, never an
    (n_samples, n_classes) matrix); for a torch tensor the rows are copied to
    host memory as float64 chunk by chunk. Prediction (scores, interpolation,
    renormalisation) runs on the tensor's device; a CPU tensor is evaluated
    through NumPy (``IsotonicRegression.predict``) and returned as a tensor.

    References
    ----------
    B. Zadrozny, C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal._isotonic import IsotonicScaler
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=1000)
    >>> scores = 4.0 * (2 * y - 1 + rng.normal(size=1000))
    >>> iso = IsotonicScaler(clip=1e-3).fit(scores, y)
    >>> P = iso.predict_proba(scores)
    >>> P.shape, bool(P.min() >= 1e-3)
    ((1000, 2), True)
    """

    _weight_scale_invariant = True

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "clip": [Interval(Real, 0, 0.5, closed="left"), None],
    }

    def __init__(self, *, input_type="logits", classes=None, backend="auto", clip=1e-6):
        self.input_type = input_type
        self.classes = classes
        self.backend = backend
        self.clip = clip

    def _new_calibrator(self):
        eps = 0.0 if self.clip is None else float(self.clip)
        return IsotonicRegression(
            increasing=True, out_of_bounds="clip", y_min=eps, y_max=1.0 - eps
        )

    def _fit(self, Z, y, sample_weight, xp):
        y = _to_host(y)
        sw = _to_host(sample_weight)
        if Z.shape[1] == 2:
            s = to_numpy(binary_score(Z))
            cal = self._new_calibrator().fit(s, (y == 1).astype(np.float64), sw)
            self.calibrators_ = [cal]
            return
        # One score column at a time (O(n_samples) memory, not (n, K)).
        stats = ovr_row_stats(Z)
        self.calibrators_ = [
            self._new_calibrator().fit(
                ovr_column(Z, k, stats), (y == k).astype(np.float64), sw
            )
            for k in range(Z.shape[1])
        ]

    def _torch_spec(self):
        return {
            "kind": "ovr_interp",
            "x": [c.X_thresholds_ for c in self.calibrators_],
            "y": [c.y_thresholds_ for c in self.calibrators_],
        }

    def _proba_chunk(self, Zc):
        """Calibrated probabilities of a row chunk (NumPy array or tensor)."""
        k = Zc.shape[1]
        if len(self.calibrators_) == 1:
            p1 = _interp(binary_score(Zc), self.calibrators_[0])
            return _stack([1.0 - p1, p1])
        S = ovr_log_odds(Zc)
        Q = _stack([_interp(S[:, j], cal) for j, cal in enumerate(self.calibrators_)])
        if _backend_name(Zc) == "numpy":
            den = Q.sum(axis=1, keepdims=True)
            return np.divide(Q, den, out=np.full_like(Q, 1.0 / k), where=den > 0)
        torch = sys.modules["torch"]
        den = Q.sum(dim=1, keepdim=True)
        return torch.where(den > 0, Q / torch.where(den > 0, den, 1.0), 1.0 / k)

    def _predict_proba(self, Z, xp):
        n, k = Z.shape
        out = _empty_like_out(Z, n, k)
        # A CPU tensor is evaluated by NumPy on a host view and the result
        # copied into the output tensor: torch's CPU kernels for these many
        # small elementwise ops are ~5x slower on a loaded machine (OpenMP
        # threads spin-waiting), and skcal never changes torch's thread settings.
        via_numpy = _is_cpu_tensor(Z)
        # Large chunks: each one costs one IsotonicRegression.predict call per
        # class, whose fixed overhead dominates small chunks.
        for sl in _numpy.chunk_rows(n, k, chunk_bytes=_PREDICT_CHUNK_BYTES):
            if via_numpy:
                out[sl] = sys.modules["torch"].from_numpy(
                    self._proba_chunk(_host64(Z[sl]))
                )
            else:
                out[sl] = self._proba_chunk(Z[sl])
        return out
