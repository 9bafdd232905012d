"""Top-versus-all: one binary calibrator for "is the top-1 prediction correct?".

:class:`TopVersusAllCalibrator` (Le Coz, Herbin & Adjed, NeurIPS 2024) fits
any binary calibrator on the top-1 confidence of every row, labelled by
whether the top-1 class is the true one, and puts the calibrated confidence
back into the probability vector.
"""

import warnings

import numpy as np
from scipy.special import log_expit
from sklearn.utils.validation import check_is_fitted

from .._backend import _numpy
from .._backend._ovr import _ovr_row_stats
from ..base import BaseCalibrator
from .._backend._array import to_numpy
from ..utils._docstrings import substitute_docstring
from ..utils.validation import DEFAULT_INPUT_TYPE, _caller_stacklevel
from ._inner import WrapperMixin, check_inner, fit_inner, inner_spec, predict_inner
from ..utils._params import store_params

__all__ = ["TopVersusAllCalibrator", "complete_confidence", "top_scores"]

#: The top class's calibrated probability stays at least ``exp(ARGMAX_MARGIN)``
#: times the runner-up's: strictly the most probable, by a relative margin of
#: about 1e-6, which float32 output still resolves.
ARGMAX_MARGIN = 1e-6


def top_scores(Z):
    """Top-1 class, top-1 log-odds and the runner-up's share of the other classes.

    Parameters
    ----------
    Z : array-like of shape (n_samples, n_classes)
        Logits, ``n_classes >= 2`` (float64 on the host).

    Returns
    -------
    top : ndarray of shape (n_samples,), int
        The arg-max column of each row (the first one on ties).
    score : ndarray of shape (n_samples,)
        ``log c - log(1 - c)`` for the top-1 confidence ``c = max_k p_k``,
        ``p = softmax(z)``: ``z_top - log sum_{k != top} exp(z_k)``.
    log_rest : ndarray of shape (n_samples,)
        ``log sum_{k != top} exp(z_k)``.
    log_share2 : ndarray of shape (n_samples,)
        ``z_2 - log_rest = log(p_2 / (1 - c))``, with ``z_2`` the
        second-largest logit: the runner-up's share of the probability of
        the classes other than the top one.
    """
    A = np.asarray(Z, dtype=np.float64)
    rows = np.arange(A.shape[0])
    top, m1, _, log_rest = _ovr_row_stats(A)
    A2 = A.copy()
    A2[rows, top] = -np.inf
    z2 = A2.max(axis=1)
    return top, m1 - log_rest, log_rest, z2 - log_rest


@substitute_docstring
class TopVersusAllCalibrator(WrapperMixin, BaseCalibrator):
    """Top-versus-all: a binary calibrator of the top-1 confidence, for any number of classes.

    The multiclass problem is reduced to the single binary problem "is the
    top-1 prediction correct?" (Le Coz, Herbin & Adjed 2024): a binary
    calibrator is fitted on the top-1 confidence of every row of the
    calibration set, labelled 1 where the arg-max class is the true class.
    All rows feed that one fit, however many classes there are, which is why
    it scales to 1,000 classes where one-vs-rest fits starve. The prediction
    (arg-max) never changes.

    Parameters
    ----------
    calibrator : skcal calibrator, default=None
        The binary calibrator (cloned in ``fit``); :class:`~skcal.PlattScaler`
        by default. Any skcal calibrator takes the binary problem; it is
        given one score per row (the top-1 log-odds) and labels 0 / 1. Set
        ``input_type`` on the ``TopVersusAllCalibrator``, not on it.
    %(calibrator_params)s

    Attributes
    ----------
    calibrator_ : estimator
        The fitted binary calibrator (its ``classes_`` are ``[0, 1]``:
        wrong, correct).
    top1_accuracy_ : float
        The (weighted) share of calibration rows whose arg-max is the true
        class.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    SmoothedCalibrator : another wrapper, mixing any output with the uniform.

    Notes
    -----
    With ``p = softmax(z)``, the top class ``t = argmax_k p_k`` and the
    confidence ``c = p_t``, the binary calibrator ``g`` is fitted on the
    pairs ``(s_i, 1[t_i = y_i])`` with the score ``s = log(c / (1 - c)) =
    z_t - log sum_{k != t} exp(z_k)``, the top-1 log-odds (the paper fits
    its binary methods on ``c`` itself; skcal's calibrators read a binary
    probability ``c`` as this same log-odds, computed here without the
    rounding of ``c`` near 1). The calibrated confidence ``c' = g(s)``
    replaces ``c``, as in the paper.

    The paper only calibrates the confidence. To return a probability vector,
    skcal gives the other classes the remaining mass ``1 - c'`` in proportion
    to their probabilities, ``p'_k = p_k (1 - c') / (1 - c)`` for ``k != t``,
    whenever that keeps the top class the most probable. Where it would not
    (the confidence fell so far that the runner-up's proportional share
    ``p_2 (1 - c') / (1 - c)`` passes ``c'``, common for over-confident
    models with near ties), the others' shares are mixed with even shares,
    ``p'_k = (1 - c') ((1 - a) p_k / (1 - c) + a / (K - 1))``, with the
    smallest ``a`` in ``[0, 1]`` that keeps the runner-up just below ``c'``
    (by a factor ``exp(-1e-6)``); the order of the other classes is kept and
    ``c'`` is returned unchanged. Only a calibrated confidence below about
    ``1 / K`` (where even shares would pass it) is raised to
    ``c' / (1 - c') = exp(1e-6) / (K - 1)``. So the arg-max is always kept,
    and the top class's probability is the binary calibrator's ``c'`` except
    below ``1 / K`` (below ``1/2`` for a binary problem).

    Weights are passed to the binary calibrator unchanged, so the weight
    properties (repetition, rescaling) are its own.

    **Export.** ``to_torch()`` and ONNX export (:func:`skcal.onnx.to_onnx`)
    compute the same map, in float64, around the binary calibrator's own
    exported map (Platt, beta, isotonic, ...); they raise
    ``NotImplementedError`` where that calibrator has no closed form on
    logits (histogram binning, BBQ, Venn-Abers).

    References
    ----------
    A. Le Coz, S. Herbin, F. Adjed, "Confidence Calibration of Classifiers
    with Many Classes", NeurIPS 2024 (arXiv:2411.02988).

    Examples
    --------
    >>> from skcal import TopVersusAllCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(2000, 10, scale=3.0)
    >>> tva = TopVersusAllCalibrator().fit(X, y)
    >>> bool((tva.predict(X) == X.argmax(axis=1)).all())  # the top class is kept
    True
    >>> P = tva.predict_proba(X)  # mean confidence = accuracy of the top class
    >>> round(float(P.max(axis=1).mean()), 2), round(tva.top1_accuracy_, 2)
    (0.5, 0.5)
    """

    _default_inner = "PlattScaler"
    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        **WrapperMixin._INNER_CONSTRAINT,
    }

    def __init__(
        self,
        calibrator=None,
        *,
        input_type=DEFAULT_INPUT_TYPE,
        classes=None,
        backend="auto",
    ):
        store_params(self, locals())

    # for two classes the map depends on |z1 - z0| and the sign only
    _binary_log_odds_only = True
    # the top class stays on top and the others keep their order (see Notes):
    # predict is the arg-max of the input
    _preserves_order = True



    def _fit(self, Z, y, sample_weight, xp):
        template = self._template()
        check_inner(template, type(self).__name__)
        top, score, _, _ = top_scores(to_numpy(Z))
        correct = (top == to_numpy(y)).astype(np.int64)
        w = None if sample_weight is None else to_numpy(sample_weight)
        total = correct.size if w is None else float(w.sum())
        self.top1_accuracy_ = float(correct.sum() if w is None else w @ correct) / total
        if correct.min() == correct.max():
            warnings.warn(
                f"Every top-1 prediction of the calibration set is "
                f"{'correct' if correct[0] else 'wrong'}: the binary calibrator "
                "sees one outcome only.",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )
        self.calibrator_ = fit_inner(
            template, score[:, None], correct, w, np.arange(2)
        )
        return self

    def _torch_spec(self):
        """``{"kind": "top_versus_all", "inner": <binary map>, "margin": ARGMAX_MARGIN}``."""
        check_is_fitted(self, "calibrator_")
        spec = inner_spec(self.calibrator_, type(self).__name__)
        return {"kind": "top_versus_all", "inner": spec, "margin": ARGMAX_MARGIN}

    def _predict_log_proba(self, Z, xp):
        check_is_fitted(self, "calibrator_")
        Zn = to_numpy(Z)
        A = Zn.astype(np.float64)
        # softmax is shift-invariant: shift each row by its max so that
        # ``A - log_rest`` does not cancel for huge logits (rows summed to
        # 4.6 at -1e30 and 0.96 at 1e15 before)
        A -= A.max(axis=1, keepdims=True)
        n, k = A.shape
        top, score, log_rest, log_share2 = top_scores(A)
        LQ = to_numpy(predict_inner(self.calibrator_, score[:, None], log=True))
        log_c, log_rest_c, alpha = complete_confidence(
            LQ.astype(np.float64), log_share2, k
        )
        with np.errstate(divide="ignore"):
            log_keep = np.log1p(-alpha)[:, None]
            log_even = (np.log(alpha) - np.log(k - 1))[:, None]
        out = np.logaddexp(log_keep + (A - log_rest[:, None]), log_even)
        out += log_rest_c[:, None]
        out[np.arange(n), top] = log_c
        out = out.astype(_numpy.output_dtype(Zn.dtype), copy=False)
        return xp.from_numpy(out, device=getattr(Z, "device", None))


def complete_confidence(log_q, log_share2, n_classes):
    """The calibrated confidence and the mixing weight of the other classes.

    Parameters
    ----------
    log_q : ndarray of shape (n_samples, 2)
        The binary calibrator's ``[log(1 - c'), log c']``.
    log_share2 : ndarray of shape (n_samples,)
        ``log(p_2 / (1 - c))``: the runner-up's share of the other classes.
    n_classes : int

    Returns
    -------
    log_c, log_rest_c : ndarray of shape (n_samples,)
        ``log c'`` and ``log(1 - c')``, with ``c'`` raised where it is below
        ``1 / K`` (see :class:`TopVersusAllCalibrator`).
    alpha : ndarray of shape (n_samples,)
        Weight of the uniform distribution in the other classes' shares:
        0 where proportional shares keep the top class on top.
    """
    log_rest_c, log_c = log_q[:, 0].copy(), log_q[:, 1].copy()
    log_u = -np.log(n_classes - 1)
    with np.errstate(invalid="ignore"):
        # the largest share of 1 - c' that a class may take and stay below c'
        log_m = log_c - log_rest_c - ARGMAX_MARGIN
    low = ~(log_m >= log_u)  # even shares are too large: c' < about 1 / K
    if low.any():
        s_low = log_u + ARGMAX_MARGIN
        log_c[low] = log_expit(s_low)
        log_rest_c[low] = log_expit(-s_low)
        log_m[low] = log_u
    alpha = np.zeros_like(log_c)
    mix = log_share2 > log_m
    if n_classes > 2 and mix.any():  # (one other class: its share is 1 anyway)
        r2, m, u = np.exp(log_share2[mix]), np.exp(log_m[mix]), np.exp(log_u)
        den = r2 - u  # > 0 unless the other shares are (nearly) even already
        with np.errstate(invalid="ignore", divide="ignore"):
            a = np.where(den > 1e-12 * u, (r2 - m) / den, 1.0)
        alpha[mix] = np.clip(a, 0.0, 1.0)
    return log_c, log_rest_c, alpha

