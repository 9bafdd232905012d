"""Label-shift-ready vector scalings of Alexandari et al. (2020): BCTS and NBVS.

They are :class:`~skcal.VectorScaler` with one part of its map removed, as
their own small classes (not parameters of ``VectorScaler``), so that each
has its own documented objective, attributes and defaults.
"""

import warnings

import numpy as np
from scipy.special import softmax

from ..utils._docstrings import substitute_docstring
from .._backend._array import to_numpy
from ..utils.validation import _caller_stacklevel
from ._affine import AffinePenalty, fit_affine, nll
from ._temperature import ScaleBiasMap, warn_stopped
from ._vector import (
    ABSENT_CLASS_ALPHA, NEWTON_DOCS, _VectorParameters, penalty_centre, warn_absent_classes,
    warn_if_separated,
)

__all__ = ["BiasCorrectedTemperatureScaler", "NoBiasVectorScaler"]


def _warn_constant_rows_no_bias(est, Z, y, sample_weight):
    """NBVS on identical rows: warn when ``softmax(w * z)`` misses the base rate.

    With one common row ``z``, the attainable probabilities are those with
    equal values on the classes whose score is 0 (their logit ``w_k z_k`` is
    0 whatever ``w``); the NLL optimum of the family is ``p_k = r_k`` (the
    weighted class frequency, up to the ``alpha`` penalty) on the other
    classes, and ``(1 - sum of those r_k) / m`` on each of the ``m``
    zero-score classes.
    """
    n = Z.shape[0]
    if n < 2 or not bool((Z[:, 0] == Z[0, 0]).all()) or not bool((Z == Z[:1]).all()):
        return
    k = Z.shape[1]
    z = to_numpy(Z[0]).astype(np.float64)
    sw = None if sample_weight is None else to_numpy(sample_weight).astype(np.float64)
    base = np.bincount(to_numpy(y), weights=sw, minlength=k)
    base = base / base.sum()
    p = softmax(est.coef_ * z)
    gap = float(np.abs(p - base).max())
    if gap <= 1.0 / n + 1e-6:
        return
    zero = np.flatnonzero(z == 0)
    warnings.warn(
        f"Every row of X is the same: {type(est).__name__} has no bias, so "
        "softmax(w * z) cannot reach the class frequencies of the calibration set "
        f"(the base rate; largest gap {gap:.3g}). Classes whose common score is 0 "
        f"({len(zero)} here) keep equal probabilities; the fit gives the others "
        "their base rate (up to the alpha penalty) and shares the rest equally. "
        "BiasCorrectedTemperatureScaler and VectorScaler return the base rate.",
        UserWarning,
        stacklevel=_caller_stacklevel(),
    )


class _RestrictedVectorScaler(ScaleBiasMap, _VectorParameters):
    """:class:`~skcal.VectorScaler` with one shared scale (BCTS) or no bias (NBVS); its parameters."""

    def _fit(self, Z, y, sample_weight, xp):
        k = Z.shape[1]
        alpha = float(self.alpha)
        if alpha == 0 and self._intercept and warn_absent_classes(
            self.classes_, y, sample_weight, "bias", f"alpha={ABSENT_CLASS_ALPHA:g}"
        ):
            alpha = ABSENT_CLASS_ALPHA
        beta, centre = penalty_centre(Z, y, sample_weight, xp)
        # alpha/2 (sum of squared relative deviations of the free scales from the
        # temperature fit's 1/T = centre) + alpha/2 ||b||^2: the deviation after
        # the temperature, so rescaled logits (centre and w alike) fit the same
        per_entry = alpha / 2.0 / (k if self._structure == "scalar" else 1) / centre**2
        pen = AffinePenalty(np.full(k, per_entry), np.full(k, centre),
                            np.full(k, alpha / 2.0) if self._intercept else None)
        W, b, _, n_iter, status = fit_affine(
            Z, y, sample_weight, xp,
            structure=self._structure, intercept=self._intercept, penalty=pen,
            w_start=beta, tol=self.tol, max_iter=self.max_iter,
        )
        w = np.full(k, float(W)) if np.ndim(W) == 0 else np.asarray(W, dtype=np.float64)
        if b is not None and alpha == 0:
            b = b - b.mean()
        self._set(w, b)
        self.n_iter_ = n_iter
        warn_stopped(type(self).__name__, status, self.max_iter,
                     ", or alpha if the logits separate the calibration set")
        if status == "converged" and alpha == 0:
            warn_if_separated(
                nll(Z, y, sample_weight, xp, w, b), "logits", "the unpenalised NLL has "
                "no finite minimiser (the scale -> inf); use alpha > 0.")


#: The end of both docstrings: the solver and the reference.
_SOLVER = """
    Solver: Newton's method with the exact Hessian (one pass over the data
    each; trust-region Newton-CG with exact Hessian-vector products above
    512 parameters), from the temperature-scaling optimum, Armijo
    backtracking, stopping when half the squared Newton decrement is at most
    ``tol`` (see :mod:`skcal.scaling._affine`). A ``ConvergenceWarning``
    reports stopping early and, with ``alpha=0``, a separable calibration
    set (fitted NLL < 1e-6, optimum at infinity).

    References
    ----------
    A. Alexandari, A. Kundaje, A. Shrikumar, "Maximum Likelihood with
    Bias-Corrected Calibration is Hard-To-Beat at Label Shift Adaptation",
    ICML 2020, Sec. 3 (BCTS and NBVS).
"""


@substitute_docstring(entries=NEWTON_DOCS)
class BiasCorrectedTemperatureScaler(_RestrictedVectorScaler):
    __doc__ = """Bias-corrected temperature scaling (BCTS): ``softmax(z / T + b)``.

    One temperature shared by all classes plus a per-class bias, fitted by
    negative log-likelihood (Alexandari et al. 2020). The bias makes the
    calibrated probabilities unbiased per class, which label-shift
    adaptation by EM (:func:`skcal.adapt_to_label_shift`) needs; with
    ``K + 1`` parameters it over-fits less than vector scaling.

    Parameters
    ----------
    %(calibrator_params)s
    alpha : float >= 0, default=1e-4
        Strength of the L2 penalty ``alpha/2 ((T_ts/T - 1)^2 + ||b||^2)`` added
        to the mean NLL; 0 gives the plain maximum-likelihood fit.
    %(newton_params)s

    Attributes
    ----------
    temperature_ : float
        ``T``.
    intercept_ : ndarray of shape (n_classes,), float64
        ``b`` (centred to sum 0 when ``alpha=0``: a common shift changes
        nothing).
    coef_ : ndarray of shape (n_classes,), float64
        ``1/T`` repeated: the scales of the equivalent vector scaling.
    classes_, n_features_in_, n_iter_

    See Also
    --------
    NoBiasVectorScaler, VectorScaler, TemperatureScaler

    Notes
    -----
    Objective: ``F(beta, b) = sum_i s_i [logsumexp(beta z_i + b) - beta
    z_{i,y_i} - b_{y_i}] / sum_i s_i + alpha/2 ((T_ts beta - 1)^2 + ||b||^2)``
    (``T_ts``: the temperature of :class:`TemperatureScaler` on the same data,
    1 where that fit ends at a bound of ``T``: the penalty acts after the
    temperature, so logits rescaled by any ``c > 0`` fit the same probabilities),
    convex in ``(beta, b)`` (``beta = 1/T``, not constrained positive: it is
    positive whenever the logits carry information).
    """ + _SOLVER + """
    Examples
    --------
    >>> from skcal import BiasCorrectedTemperatureScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(2000, 3)
    >>> X = X + [1.0, 0.0, 0.0]  # logits biased towards class 0
    >>> bcts = BiasCorrectedTemperatureScaler().fit(X, y)
    >>> bool(bcts.intercept_[0] < bcts.intercept_[1])  # the bias is removed
    True
    """

    _structure = "scalar"
    _intercept = True

    def _set(self, w, b):
        self.temperature_ = 1.0 / float(w[0])
        self.coef_ = w
        self.intercept_ = np.asarray(b, dtype=np.float64)

    def _scale_bias(self):
        return 1.0 / self.temperature_, self.intercept_


@substitute_docstring(entries=NEWTON_DOCS)
class NoBiasVectorScaler(_RestrictedVectorScaler):
    __doc__ = """No-bias vector scaling (NBVS): ``softmax(w * z)``, a per-class scale only.

    Vector scaling without its bias (Alexandari et al. 2020).

    Parameters
    ----------
    %(calibrator_params)s
    alpha : float >= 0, default=1e-4
        Strength of the L2 penalty ``alpha/2 ||T_ts w - 1||^2`` (``T_ts``: the
        temperature of :class:`TemperatureScaler` on the same data; the penalty
        acts after the temperature, so rescaled logits fit alike).
    %(newton_params)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes,), float64
        The per-class scales ``w``.
    classes_, n_features_in_, n_iter_

    See Also
    --------
    BiasCorrectedTemperatureScaler, VectorScaler

    Notes
    -----
    Objective: ``F(w) = sum_i s_i [logsumexp(w * z_i) - w_{y_i} z_{i,y_i}] /
    sum_i s_i + alpha/2 ||T_ts w - 1||^2``, convex. Unlike the other scalings it
    is not invariant to adding a constant to a row of logits.

    Constant scores (every row the same ``z``): without a bias the map can
    only set ``p_k`` for the classes with ``z_k != 0``; the fit gives them
    their base rate ``r_k`` (weighted class frequency, up to the ``alpha``
    penalty) and the ``m`` classes with ``z_k = 0`` share ``1 - sum r_k``
    equally. When that misses the base rate by more than ``1 / n_samples``
    a ``UserWarning`` says so.
    """ + _SOLVER + """
    Examples
    --------
    >>> from skcal import NoBiasVectorScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(2000, 3)
    >>> NoBiasVectorScaler().fit(X, y).coef_.shape  # one scale per class
    (3,)
    """

    _structure = "diagonal"
    _intercept = False

    def _fit(self, Z, y, sample_weight, xp):
        super()._fit(Z, y, sample_weight, xp)
        _warn_constant_rows_no_bias(self, Z, y, sample_weight)

    def _set(self, w, b):
        self.coef_ = w

    def _scale_bias(self):
        return self.coef_, None
