"""Beta calibration (Kull, Silva Filho & Flach, AISTATS 2017) with its constraints enforced.

:func:`fit_beta` solves one binary problem: the constrained logistic
regression of the paper on the features ``log p`` and ``-log(1 - p)``, by the
active-set Newton solver of :mod:`skcal.ovr._logistic`.
"""

import math

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions

from .._backend import _ovr as ops
from .._backend._ovr import param_like
from .._backend._steps import log_sigmoid
from ..base import BaseCalibrator, SOLVER_CONSTRAINTS
from ..utils._docstrings import substitute_docstring
from ._base import OneVsRestCalibrator, class_label, unzip_maps, warn
from ._beta_ovr import BATCH_MIN_ROWS, beta_map, fit_beta_ovr32
from ._logistic import base_rate_log_odds, fit_logistic_bounded, logistic_loss
from ._newton import F32_MIN_TOL
from ..utils._params import store_params

__all__ = ["BetaCalibrator", "fit_beta"]

#: A feature whose weighted sd is at most this fraction of its largest
#: magnitude is constant up to rounding.
_FLAT = 1e-13


def fit_beta(s, y, sample_weight=None, *, parameters="abm", tol=1e-12, max_iter=200):
    """Fit the beta calibration map ``logit q = a log p - b log(1 - p) + c``.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
        Scores: log-odds ``log p - log(1 - p)`` of the positive class.
    y : ndarray of shape (n_samples,), bool
        True for the positive class.
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights.
    parameters : {"abm", "am", "ab"}, default="abm"
        As in :class:`BetaCalibrator` (always with ``a, b >= 0``).
    tol : float, default=1e-12
        Stopping tolerance of :func:`~skcal.ovr._logistic.fit_logistic_bounded`
        on the mean log loss (the gap to the constrained optimum is at most
        about ``tol``).
    max_iter : int, default=200
        Maximum number of Newton iterations.

    Returns
    -------
    a, b, c : float
        The map, on the original features.
    n_iter : int
    status : {"converged", "max_iter", "constant", "one_class", "uninformative"}
        ``"constant"``: the scores are constant (up to rounding);
        ``"one_class"``: one class has no weight; ``"uninformative"``: the
        constrained optimum has ``a = b = 0``. In these three cases the map is
        the constant base rate (clipped to ``[1e-6, 1 - 1e-6]`` when 0 or 1).

    Notes
    -----
    With ``p = sigmoid(s)`` the features are ``x1 = log p = log_sigmoid(s)``
    and ``x2 = -log(1 - p) = -log_sigmoid(-s)``, computed without
    cancellation for any ``s``. ``"abm"`` minimises the weighted mean log loss
    of ``sigmoid(a x1 + b x2 + c)`` over ``a, b >= 0`` (Kull et al. 2017,
    Eq. 7 and Section 3.3: the map is monotonically non-decreasing exactly
    when ``a, b >= 0``); ``x1 + x2 = s``, so ``"am"`` is ``sigmoid(a s + c)``
    with ``a >= 0``; ``"ab"`` uses ``x1 + log 2`` and ``x2 - log 2`` without an
    intercept. The features are centred and scaled (which changes neither
    the optimum nor the constraints) before the solve.
    """
    s = np.asarray(s, dtype=np.float64)
    y = np.asarray(y, dtype=bool)
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, np.float64)
    keep = w > 0
    s, y, w = s[keep], y[keep], w[keep]
    wsum = float(w.sum())
    n_pos = float(w[y].sum())
    c0 = float(base_rate_log_odds(n_pos, wsum))
    if n_pos == 0.0 or n_pos == wsum:
        return 0.0, 0.0, c0, 0, "one_class"
    x1 = log_sigmoid(s)
    x2 = -log_sigmoid(-s)
    if parameters == "am":
        feats = [s]
    elif parameters == "ab":
        feats = [x1 + math.log(2.0), x2 - math.log(2.0)]
    else:
        feats = [x1, x2]
    intercept = parameters != "ab"
    cols, mus, sds = [], [], []
    for x in feats:
        mu = float((w * x).sum() / wsum) if intercept else 0.0
        sd = math.sqrt(float((w * (x - mu) ** 2).sum() / wsum))
        if not sd > _FLAT * float(np.max(np.abs(x))):
            sd = 0.0
        mus.append(mu)
        sds.append(sd)
        cols.append((x - mu) / sd if sd > 0 else np.zeros_like(x))
    if not any(sd > 0 for sd in sds):
        return 0.0, 0.0, c0, 0, "constant"
    if intercept:
        cols.append(np.ones_like(s))
    X = np.column_stack(cols)
    nonneg = np.array([True] * len(feats) + [False] * intercept)
    # start at the better of the base rate and the identity map (a = b = 1,
    # c = 0: the scores are log-odds, often close to the optimum)
    base = np.array([0.0] * len(feats) + [c0] * intercept)
    ident = np.array(sds + [sum(mus)] * intercept)
    yf = y.astype(np.float64)
    losses = [logistic_loss(X @ th, yf, w, wsum) for th in (base, ident)]
    theta0 = base if losses[0] <= losses[1] else ident
    # the constraints are usually inactive: solve without them first, and
    # run the active-set method (from the projected solution) only if needed
    theta, n_iter, converged = fit_logistic_bounded(
        X, yf, w, theta0=theta0, tol=tol, max_iter=max_iter,
    )
    if not (converged and np.all(theta[nonneg] >= 0)):
        theta, it, converged = fit_logistic_bounded(
            X, yf, w, nonneg=nonneg, theta0=np.where(nonneg, np.maximum(theta, 0), theta)
            if converged else theta0, tol=tol, max_iter=max_iter,
        )
        n_iter += it
    coef = [th / sd if sd > 0 else 0.0 for th, sd in zip(theta, sds)]
    shift = sum(cf * mu for cf, mu in zip(coef, mus))
    a, b, c = beta_map(parameters, coef, theta[-1], shift)
    status = "converged" if converged else "max_iter"
    if a == 0.0 and b == 0.0:
        # the best non-decreasing map is a constant: the base rate
        return 0.0, 0.0, c0, n_iter, "uninformative"
    return float(a), float(b), float(c), n_iter, status


@substitute_docstring
class BetaCalibrator(OneVsRestCalibrator):
    """Beta calibration: ``logit q = a log p - b log(1 - p) + c`` with ``a, b >= 0``.

    A binary problem fits one map from the score ``p`` of ``classes_[1]``
    (``p = sigmoid(s)``, ``s = z_1 - z_0``) to ``P(classes_[1])``. A multiclass
    problem fits one map per class on its one-vs-rest probability and
    renormalises the rows (:class:`~skcal.ovr.OneVsRestCalibrator`).

    Parameters
    ----------
    %(calibrator_params)s
    parameters : {"abm", "am", "ab"}, default="abm"
        The parametrisation of Kull et al.: ``"abm"`` the full three-parameter
        family; ``"am"`` ``a = b`` (logistic calibration of the log-odds with
        ``a >= 0``); ``"ab"`` ``m = 1/2``, i.e. ``c = (a - b) log 2``.
    tol : float, default=1e-12
        Stop when half the squared Newton decrement (an estimate of the gap to
        the optimal mean log loss) is at most ``tol`` and no coefficient held
        at its bound could lower the loss by more than ``tol``.
    max_iter : int, default=200
        Maximum number of Newton iterations per class.

    Attributes
    ----------
    a_, b_, c_ : float or ndarray of shape (n_classes,)
        The maps' coefficients: floats for a binary problem (the map of
        ``classes_[1]``), one per class otherwise. ``a_, b_ >= 0``.
    n_iter_ : int
        Largest number of Newton iterations over the classes.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit``.

    See Also
    --------
    skcal.PlattScaler : ``a = b`` without the sign constraint.

    Notes
    -----
    **Model.** Kull et al. (2017, Eq. 7) derive the map from class-conditional
    beta densities of the score ``p``: ``q = 1 / (1 + 1 / (e^c p^a / (1 -
    p)^b))``, i.e. ``logit q = a log p - b log(1 - p) + c`` (with
    ``c = b log(1 - m) - a log m`` in their ``(a, b, m)`` form). The map is
    non-decreasing exactly when ``a, b >= 0``; it contains the identity
    (``a = b = 1, c = 0``), Platt's sigmoids of the log-odds (``a = b``) and
    maps that are not sigmoids (an inverse-S shape when ``a, b < 1``).

    **Fit.** Maximum likelihood: the weighted mean log loss of
    ``sigmoid(a x1 + b x2 + c)``, ``x1 = log p``, ``x2 = -log(1 - p)``, is
    minimised subject to ``a, b >= 0`` by an active-set Newton method with
    exact derivatives (:func:`fit_beta`); the constraints are part of the
    problem, not a refit after the fact. betacal (the authors' package) fits
    the unconstrained logistic regression and, when a coefficient is negative,
    refits without that feature; both reach the constrained optimum when one
    constraint is active, and skcal's solver also handles the case where the
    other coefficient then turns negative, and ``"am"`` keeps ``a >= 0``
    (betacal does not constrain it). Stopping rule and tolerance: ``tol``.
    Multiclass float32 NumPy logits with at least 40,000 rows fit all
    classes together (:func:`skcal.ovr._beta_ovr.fit_beta_ovr32`): the
    same constrained problems and stopping rule, one row-chunked float32
    pass over the logits per Newton iteration of all classes, from a
    subsample's optimum; the features then carry float32 rounding (the
    coefficients agree with the float64 fit to ~1e-6 relative), and a class
    that solver cannot take (degenerate on the subsample, or not converged)
    is fitted on its own as above.

    **Degenerate data.** Constant scores, a class without examples, or an
    optimum with ``a = b = 0`` (scores that carry no increasing information)
    give the constant map at the weighted base rate, with a ``UserWarning``
    (an absent class's base rate 0 is clipped to ``1e-6``). Scores that
    separate the classes have no maximum-likelihood map; Newton stops at a
    steep map by the same decrement rule and warns (``ConvergenceWarning``).

    **Devices.** The fit runs on the CPU in float64; prediction
    (``log_sigmoid`` of the scores, a linear map, the renormalisation) runs on
    the tensor's device.

    References
    ----------
    M. Kull, T. M. Silva Filho, P. Flach, "Beta calibration: a well-founded
    and easily implemented improvement on logistic calibration for binary
    classifiers", AISTATS 2017.

    Examples
    --------
    >>> from skcal import BetaCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)
    >>> bc = BetaCalibrator().fit(X, y)
    >>> bool(bc.a_ >= 0 and bc.b_ >= 0)  # a non-decreasing map
    True
    >>> bc.predict_proba(X).shape
    (1000, 2)
    """

    _map_output = "log_odds"

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "parameters": [StrOptions({"abm", "am", "ab"})],
        **SOLVER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        input_type="logits",
        classes=None,
        backend="auto",
        parameters="abm",
        tol=1e-12,
        max_iter=200,
    ):
        store_params(self, locals())

    def _fit_map(self, s, t, sample_weight, label):
        a, b, c, n_iter, status = fit_beta(
            s, t, sample_weight, parameters=self.parameters, tol=self.tol,
            max_iter=self.max_iter,
        )
        self._warn(status, c, label)
        return a, b, c, n_iter

    def _warn(self, status, c, label):
        if status in ("constant", "uninformative"):
            warn(f"Beta calibration of {label}: the scores are "
                 + ("constant" if status == "constant" else "not increasingly related to it")
                 + f"; the map is the base rate {1.0 / (1.0 + math.exp(-c)):.6g}.")
        elif status == "max_iter":
            warn(f"Beta calibration of {label} did not reach tol={self.tol} in "
                 f"max_iter={self.max_iter} Newton iterations (separable scores have "
                 "no maximum-likelihood map); increase max_iter.", ConvergenceWarning)

    def _fit_multiclass(self, Z, y, sample_weight):
        """All classes in the same float32 passes (:func:`fit_beta_ovr32`) where it applies.

        The classes it leaves (``status`` None), and other inputs, go through
        :func:`fit_beta` one class at a time (see the class Notes).
        """
        if not (
            ops.is_host_float32(Z)
            and Z.shape[0] >= BATCH_MIN_ROWS
            and self.tol >= F32_MIN_TOL
        ):
            return super()._fit_multiclass(Z, y, sample_weight)
        a, b, c, n_iter, status = fit_beta_ovr32(
            Z, y, sample_weight, parameters=self.parameters, tol=self.tol,
            max_iter=self.max_iter,
        )
        maps, stats = [], None
        for k in range(Z.shape[1]):
            label = class_label(self.classes_[k])
            if status[k] is None:
                if stats is None:
                    stats = ops.ovr_row_stats(Z)
                maps.append(self._fit_map(ops.ovr_column(Z, k, stats), y == k,
                                          sample_weight, label))
            else:
                self._warn(status[k], c[k], label)
                maps.append((a[k], b[k], c[k], n_iter[k]))
        return maps

    def _set_maps(self, maps):
        self.a_, self.b_, self.c_, n_iter = unzip_maps(maps, 3)
        self.n_iter_ = int(np.max(n_iter))

    def _torch_spec(self):
        a, b = np.atleast_1d(self.a_), np.atleast_1d(self.b_)
        return {
            "kind": "ovr_sigmoid",
            "coef": np.stack([a, -b]).astype(np.float64),
            "intercept": np.atleast_1d(np.asarray(self.c_, dtype=np.float64)),
            "features": ("log_sigmoid", "log_sigmoid_neg"),
        }

    def _map_scores(self, S):
        """``F = a log_sigmoid(S) - b log_sigmoid(-S) + c`` per column."""
        F = param_like(self.a_, S) * log_sigmoid(S)
        F -= param_like(self.b_, S) * log_sigmoid(-S)
        F += param_like(self.c_, S)
        return F
