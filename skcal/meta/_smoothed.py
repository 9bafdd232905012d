"""Mixture smoothing: any calibrator's output mixed with the uniform distribution.

:class:`SmoothedCalibrator` wraps a calibrator and returns
``(1 - lam) * p + lam / K``, with ``lam = a / (n + a)`` from a pseudo-count
``a`` and the calibration set size ``n`` (CalArena's "-mix" rule with
``a = 1``), so that no probability is exactly 0 or 1.
"""

import math
from numbers import Integral, Real

import numpy as np
from scipy.optimize import brentq
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._backend._dispatch import get_backend
from ..base import BaseCalibrator
from .._backend._array import to_numpy
from ..utils._docstrings import substitute_docstring
from ..utils._weights import weight_unit, weighted_rows
from ..utils.validation import DEFAULT_INPUT_TYPE
from ._inner import (
    WrapperMixin,
    check_inner,
    fit_inner,
    inner_flag,
    inner_spec,
    predict_inner,
    split_rows,
)
from ..utils._params import store_params

__all__ = ["SmoothedCalibrator", "mixture_weight"]


def _mixture_slope(lam, p, w, u):
    """Derivative in ``lam`` of ``-sum_i w_i log((1 - lam) p_i + lam u)`` (increasing)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = w * (u - p) / ((1.0 - lam) * p + lam * u)
    # a zero weight times an infinite term (p = 0 at lam = 0) counts nothing
    return -float(np.sum(np.where(w > 0, t, 0.0)))


def mixture_weight(log_p, n_classes, sample_weight=None):
    """The weight ``lam`` in ``[0, 1]`` minimising the NLL of ``(1 - lam) p + lam / K``.

    Parameters
    ----------
    log_p : array-like of shape (n_samples,)
        Log-probability that a calibrator gave each row's true class
        (``-inf`` for 0), on rows it was not fitted on.
    n_classes : int
        ``K``, the number of classes (the mixture component is ``1 / K``).
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    lam : float
        The minimiser of ``f(lam) = -sum_i w_i log((1 - lam) p_i + lam / K)``.
        ``f`` is convex, so ``lam`` is 0 where ``f'(0) >= 0``, 1 where
        ``f'(1) <= 0``, and otherwise the root of ``f'`` (Brent's method,
        relative tolerance ``1e-15``).

    Raises
    ------
    ValueError
        If ``log_p`` is empty or holds NaN or values above 0.
    """
    log_p = np.asarray(log_p, dtype=np.float64).ravel()
    if log_p.size == 0 or np.isnan(log_p).any() or (log_p > 1e-12).any():
        raise ValueError(
            "log_p must be a non-empty vector of log-probabilities (<= 0, no NaN)."
        )
    p = np.exp(np.minimum(log_p, 0.0))
    w = np.ones_like(p) if sample_weight is None else np.asarray(
        sample_weight, dtype=np.float64
    ).ravel()
    u = 1.0 / n_classes
    if _mixture_slope(0.0, p, w, u) >= 0:
        return 0.0
    if _mixture_slope(1.0, p, w, u) <= 0:
        return 1.0
    lo = 0.0 if np.isfinite(_mixture_slope(0.0, p, w, u)) else 1e-300
    if _mixture_slope(lo, p, w, u) >= 0:
        return lo
    return float(brentq(_mixture_slope, lo, 1.0, args=(p, w, u), xtol=1e-300, rtol=1e-15))


@substitute_docstring
class SmoothedCalibrator(WrapperMixin, BaseCalibrator):
    """Any calibrator's probabilities mixed with the uniform distribution.

    ``p' = (1 - lam) p + lam / K``: a small share ``lam`` of every
    prediction goes to the uniform distribution, so that no class gets
    probability exactly 0 and none exactly 1. Non-parametric maps
    (isotonic, histogram binning) give 0 or 1 to whole bins; one such
    prediction on a wrong class costs an infinite (or huge) log-loss.

    Parameters
    ----------
    calibrator : skcal calibrator, default=None
        The calibrator whose output is smoothed (cloned in ``fit``);
        :class:`~skcal.IsotonicScaler` by default. It is fitted on the
        validated logits, with ``classes`` set to all ``K`` columns; set
        ``input_type`` on the ``SmoothedCalibrator``, not on it.
    pseudo_count : float >= 0 or "cv", default=1.0
        ``a`` in ``lam = a / (n + a)``, where ``n`` is the calibration set's
        size (its rows, :ref:`sample-weights`): the weight of ``a`` imagined
        rows spread evenly over the classes. ``a = 1`` is the "-mix" rule of
        probmetrics and CalArena; ``a = K`` is add-one (Laplace) smoothing
        of every class, ``(n p + 1) / (n + K)``; ``a = 0`` switches smoothing
        off. ``"cv"`` chooses ``a`` by cross-validation (see Notes).
    cv : int >= 2, cross-validation splitter or iterable, default=5
        Folds for ``pseudo_count="cv"`` (unused otherwise): a number of
        interleaved folds (see Notes), or any splitter / iterable of
        ``(train, test)`` index arrays that scikit-learn accepts. ``fit``
        takes no ``groups``: for grouped folds pass the splits,
        ``cv=list(GroupKFold(5).split(X, y, groups))``.
    %(calibrator_params)s

    Attributes
    ----------
    calibrator_ : estimator
        The inner calibrator fitted on all rows.
    pseudo_count_ : float
        ``a``: ``pseudo_count``, or the cross-validated value (``inf`` if the
        held-out rows were best served by the uniform distribution alone).
    mix_weight_ : float
        ``lam = a / (n + a)`` (1 for ``a = inf``), in ``[0, 1]``.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    TopVersusAllCalibrator : another wrapper, over binary calibrators.

    Notes
    -----
    **Strength.** With ``n`` rows (or total weight) the mixture weight is
    ``lam = a / (n + a)``, the posterior mean of the class probabilities
    when the calibrator's ``n p`` counts are joined by ``a`` pseudo-rows
    spread uniformly over the ``K`` classes. probmetrics 1.3
    (``MixtureCalibrator`` behind every ``"<method>-mix"`` of
    ``get_calibrator``, output constant 1) uses ``lam = 1 / (n + 1)``, which
    is ``a = 1``, the default here. Every output then lies in
    ``[lam / K, 1 - lam (K - 1) / K]``; for a parametric map, whose output is
    already strictly inside ``(0, 1)``, ``lam -> 0`` as ``n`` grows, so the
    smoothing vanishes in the limit (``a = 0`` is exactly the inner map).
    In float32 output a probability within ``6e-8`` of 1 rounds to 1.

    **Cross-validated strength** (``pseudo_count="cv"``): row ``i`` goes to
    fold ``i mod cv``; a clone of the calibrator fitted on the other folds
    predicts each fold, and the weight ``lam_cv`` that minimises the
    (weighted) NLL of ``(1 - lam) p + lam / K`` on these held-out
    predictions is found by :func:`mixture_weight` (a convex problem in
    ``lam``). It belongs to calibrators fitted on ``m`` rows (``m`` the mean
    training weight of the folds), so ``a = lam_cv m / (1 - lam_cv)``, and
    the calibrator fitted on all ``n`` rows gets ``lam = a / (n + a)``.

    **Export.** ``to_torch()`` and ONNX export go through the inner
    calibrator's map (where it has one), followed by the mixture.

    **Weights.** ``n`` is the number of rows, the sum of the sample weights
    in units of one row (:ref:`sample-weights`), so integer weights fit like
    repeated rows and rescaling every weight changes nothing. With
    ``"cv"``, folds are made of rows, so weights are not repetitions there.

    References
    ----------
    E. Berta, D. Holzmüller, F. Bach, M. I. Jordan, "CalArena: A Large-Scale
    Post-Hoc Calibration Benchmark", arXiv:2605.30188, 2026 (the "-mix"
    methods; implementations in probmetrics 1.3).

    Examples
    --------
    >>> from skcal import IsotonicScaler, SmoothedCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(400, 3)
    >>> sm = SmoothedCalibrator(IsotonicScaler(clip=None)).fit(X, y)
    >>> round(sm.mix_weight_, 6)  # 1 / (400 + 1)
    0.002494
    >>> bool(sm.predict_proba(X).min() >= sm.mix_weight_ / 3)
    True
    """

    _default_inner = "IsotonicScaler"
    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        **WrapperMixin._INNER_CONSTRAINT,
        "pseudo_count": [Interval(Real, 0, None, closed="left"), StrOptions({"cv"})],
        "cv": ["cv_object"],
    }

    def __init__(
        self,
        calibrator=None,
        *,
        pseudo_count=1.0,
        cv=5,
        input_type=DEFAULT_INPUT_TYPE,
        classes=None,
        backend="auto",
    ):
        store_params(self, locals())


    @property
    def _binary_log_odds_only(self):
        return inner_flag(self._template(), "_binary_log_odds_only", False)


    def _cv_pseudo_count(self, template, Z, y, sample_weight, n_classes):
        """``a`` from the held-out NLL of the mixture (see the class Notes)."""
        Zh, yh = to_numpy(Z), to_numpy(y)
        w = None if sample_weight is None else to_numpy(sample_weight)
        n = Zh.shape[0]
        if isinstance(self.cv, Integral):
            cv = int(self.cv)
            if n < 2 * cv:
                raise ValueError(
                    f"pseudo_count='cv' with cv={cv} needs at least {2 * cv} rows "
                    f"(two per fold); got {n}."
                )
            fold = np.arange(n) % cv
            splits = [(fold != f, fold == f) for f in range(cv)]
        else:
            splits = split_rows(self.cv, Zh, yh, "SmoothedCalibrator")
        log_p = np.full(n, np.nan)
        unit = None if w is None else weight_unit(w)
        train_weight = []
        classes = np.arange(n_classes)
        for train, test in splits:
            est = fit_inner(
                template, Zh[train], yh[train], None if w is None else w[train], classes
            )
            LP = to_numpy(est.predict_log_proba(Zh[test])).astype(np.float64)
            log_p[test] = LP[np.arange(LP.shape[0]), yh[test]]
            # rows, in the units of ``n`` (weight_unit of all the weights)
            train_weight.append(Zh[train].shape[0] if w is None else w[train].sum() / unit)
        seen = ~np.isnan(log_p)
        if not seen.any():
            raise ValueError("the cv splits hold out no row.")
        lam_cv = mixture_weight(log_p[seen], n_classes, None if w is None else w[seen])
        if lam_cv >= 1.0:
            return math.inf
        return lam_cv * float(np.mean(train_weight)) / (1.0 - lam_cv)

    def _fit(self, Z, y, sample_weight, xp):
        template = self._template()
        check_inner(template, type(self).__name__)
        n_classes = Z.shape[1]
        classes = np.arange(n_classes)
        self.calibrator_ = fit_inner(template, Z, y, sample_weight, classes)
        # n counts rows (:ref:`sample-weights`): integer weights are repeated
        # rows and rescaling the weights changes nothing
        n = weighted_rows(sample_weight, Z.shape[0])
        if self.pseudo_count == "cv":
            a = self._cv_pseudo_count(template, Z, y, sample_weight, n_classes)
        else:
            a = float(self.pseudo_count)
        self.pseudo_count_ = a
        if math.isinf(a):
            self.mix_weight_ = 1.0
        else:
            self.mix_weight_ = a / (n + a) if a > 0 else 0.0
        return self

    def _torch_spec(self):
        """The inner calibrator's map, mixed: ``{"kind": "uniform_mixture", ...}``."""
        spec = inner_spec(self.calibrator_, type(self).__name__)
        return {"kind": "uniform_mixture", "inner": spec, "weight": self.mix_weight_}

    def _inner_log_proba(self, Z):
        inner = self.calibrator_
        if hasattr(inner, "predict_log_proba"):
            return inner.predict_log_proba(Z)
        P = inner.predict_proba(Z)
        with np.errstate(divide="ignore"):
            return get_backend(P).affine_ops(P).log(P)

    def _predict_proba(self, Z, xp):
        # the mixture itself: no log / exp round trip over the inner output
        check_is_fitted(self, "mix_weight_")
        lam = self.mix_weight_
        mixed = getattr(self.calibrator_, "_mixed_proba", None)
        if lam > 0.0 and mixed is not None:
            # Z is validated: the inner map mixes each chunk as it writes it
            P = mixed(Z, 1.0 - lam, lam / len(self.classes_))
            if P is not None:
                return P
        P = predict_inner(self.calibrator_, Z)
        if lam == 0.0:
            return P
        P = get_backend(P).writable(P)
        P *= 1.0 - lam
        P += lam / len(self.classes_)
        return P

    def _predict_log_proba(self, Z, xp):
        check_is_fitted(self, "mix_weight_")
        LP = self._inner_log_proba(Z)
        lam = self.mix_weight_
        if lam == 0.0:
            return LP
        k = len(self.classes_)
        log_keep = math.log1p(-lam) if lam < 1.0 else -math.inf
        log_const = math.log(lam / k)
        xp = get_backend(LP)
        LP = xp.writable(LP)
        # in place: log((1 - lam) p + lam / K), no temporaries the size of LP
        LP += log_keep
        return xp.logaddexp(LP, log_const, out=LP)
