"""Importance weights for calibration under covariate shift.

:func:`covariate_shift_weights` estimates the density ratio
``w(x) = p_target(x) / p_cal(x)`` from a domain classifier, for the rows of
a calibration set, to be passed as ``sample_weight`` to any calibrator
(CPCS, Park et al. 2020; TransCal, Wang et al. 2020).
"""

import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.utils._param_validation import HasMethods, Interval, validate_params
from sklearn.utils.validation import check_array

__all__ = ["CovariateShiftWeights", "covariate_shift_weights"]


@dataclass(frozen=True)
class CovariateShiftWeights:
    """Result of :func:`covariate_shift_weights`.

    Attributes
    ----------
    weights : ndarray of shape (n_cal,)
        The clipped density ratios: pass them as ``sample_weight``.
    density_ratio : ndarray of shape (n_cal,)
        The estimated ``p_target(x) / p_cal(x)`` before clipping.
    effective_sample_size : float
        Kish's effective sample size of ``weights``,
        ``(sum w)^2 / sum w^2``: how many unweighted rows the weighted
        calibration set is worth (``n_cal`` for equal weights). It measures
        how unequal the weights are, not whether the calibration set covers
        the target: weights that are all tiny are equal, and their ESS is
        ``n_cal`` (see :func:`covariate_shift_weights`' Notes).
    n_clipped : int
        Number of rows whose ratio was above ``clip``.
    clip : float or None
        The upper bound applied.
    """

    weights: np.ndarray
    density_ratio: np.ndarray
    effective_sample_size: float
    n_clipped: int
    clip: float


def _default_domain_classifier(sparse_input=False):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(with_mean=not sparse_input),
                         LogisticRegression(max_iter=1000))


# Warnings of covariate_shift_weights. E_cal[w] = 1: a mean ratio outside
# [1/2, 2] is not sampling noise for a calibration set that covers the target (0.78 for unit Gaussians 2 sd apart, 0.37 at 3 sd, with 500
# calibration rows); the domain classifier's out-of-fold AUC is 0.92 at 2 sd
# and 0.98 at 3 sd.
_MEAN_RATIO_RANGE = (0.5, 2.0)
_MAX_DOMAIN_AUC = 0.99


def _check_features(X, name):
    X = check_array(X, accept_sparse="csr", ensure_2d=False, allow_nd=True, input_name=name)
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D, of shape (n_rows, n_features); got an array "
            f"of shape {X.shape}. One feature is {name}.reshape(-1, 1)."
        )
    return check_array(X, accept_sparse="csr", input_name=name)


def _check_same_columns(features_cal, features_target):
    """Refuse two data frames whose columns differ (the rows are paired by position)."""
    cal, target = (getattr(X, "columns", None) for X in (features_cal, features_target))
    if cal is None or target is None:
        return
    cal, target = [str(c) for c in cal], [str(c) for c in target]
    if cal != target:
        how = ("the same columns in another order: reorder it, e.g. "
               "features_target[features_cal.columns]") if sorted(cal) == sorted(target) \
            else "other columns"
        raise ValueError(
            f"features_target's columns {target[:10]} are not features_cal's "
            f"{cal[:10]}: {how}. The features are paired by position."
        )


def _check_standardisable(X, Xc, Xt):
    """Raise if the default classifier's StandardScaler would overflow on the pooled rows."""
    with np.errstate(over="ignore"):
        sq = X.multiply(X).sum(axis=0) if hasattr(X, "multiply") else np.sum(X * X, axis=0)
    if np.all(np.isfinite(sq)):
        return
    big = {
        name: float(abs(A).max()) for name, A in (("features_cal", Xc), ("features_target", Xt))
    }
    name = max(big, key=big.get)
    raise ValueError(
        f"{name} holds values up to {big[name]:.3g} in magnitude: their sum of "
        "squares overflows float64, so the default domain classifier "
        "(StandardScaler + LogisticRegression) cannot standardise them. "
        "Divide both feature arrays by a common scale (e.g. their largest "
        "absolute value), or pass an estimator that handles them."
    )


def _warn_if_not_covered(mean_ratio, auc):
    # E_cal[w] is the target's probability of the calibration set's support:
    # a low mean is target mass the calibration rows do not reach; a high one
    # can only be the domain classifier's error (over-confident probabilities)
    lo, hi = _MEAN_RATIO_RANGE
    why = []
    if mean_ratio < lo:
        why.append(
            f"the density ratios average {mean_ratio:.3g} over the calibration "
            f"rows (about 1 when they cover the target; warned below {lo:g})"
        )
    if auc >= _MAX_DOMAIN_AUC:
        why.append(
            f"the domain classifier tells the two sets apart with out-of-fold "
            f"AUC {auc:.3f} (0.5: indistinguishable; warned from {_MAX_DOMAIN_AUC:g})"
        )
    if why:
        msg = (
            "covariate_shift_weights: the calibration set does not cover the "
            f"target: {' and '.join(why)}. Weights cannot move the calibration "
            "rows to where the target lies, so a calibrator fitted with them "
            "is not fitted for the target."
        )
    elif mean_ratio > hi:
        msg = (
            f"covariate_shift_weights: the density ratios average {mean_ratio:.3g} "
            f"over the calibration rows, where about 1 is expected (warned above "
            f"{hi:g}): the domain classifier's probabilities are over-confident "
            "(e.g. too many features for the rows), so the weights are not "
            "reliable; try fewer features or a more regularised estimator."
        )
    else:
        return
    warnings.warn(msg, UserWarning, stacklevel=4)  # this, the function, validate_params


@validate_params(
    {
        "features_cal": ["array-like", "sparse matrix"],
        "features_target": ["array-like", "sparse matrix"],
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "clip": [Interval(Real, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def covariate_shift_weights(
    features_cal, features_target, estimator=None, *, cv=5, clip=20.0, random_state=0
):
    """Importance weights ``p_target(x) / p_cal(x)`` of the calibration rows, from a domain classifier.

    A classifier learns to tell target rows (label 1) from calibration rows
    (label 0) on their features; its probability ``d(x)`` of "target" gives
    the density ratio by Bayes' rule, corrected for the two sample sizes:
    ``w(x) = d(x) / (1 - d(x)) * n_cal / n_target``. Weighting the
    calibration set by ``w`` makes its feature distribution that of the
    target (covariate shift: ``p(y | x)`` is the same in both), so a
    calibrator fitted with ``sample_weight=w`` is fitted for the target.

    Parameters
    ----------
    features_cal : array-like of shape (n_cal, n_features)
        Features (inputs of the classifier, or any representation of them,
        e.g. an embedding) of the calibration rows.
    features_target : array-like of shape (n_target, n_features)
        The same features of unlabelled rows from the target distribution.
    estimator : classifier with ``predict_proba``, default=None
        The domain classifier (cloned). By default
        ``make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))``
        (``StandardScaler(with_mean=False)`` for sparse features, which
        centring would make dense): a logistic model of the log density
        ratio, exact when both distributions are Gaussians with one
        covariance.
    cv : int >= 2, default=5
        The domain classifier's probabilities for the calibration rows are
        out-of-fold (:func:`sklearn.model_selection.cross_val_predict` over
        stratified folds of the pooled rows), so that no row's weight comes
        from a classifier fitted on that row (which would over-state how
        recognisable each calibration row is).
    clip : finite float >= 1 or None, default=20.0
        Upper bound on the weights: ratios above it are set to it. A few
        huge weights would make the weighted calibration set worth a handful
        of rows; clipping trades that variance for a little bias. None
        keeps the ratios as they are.
    random_state : int, RandomState instance or None, default=0
        Shuffling of the stratified folds.

    Returns
    -------
    result : CovariateShiftWeights
        ``result.weights`` (float64, shape (n_cal,)) to pass as
        ``sample_weight``; ``result.density_ratio`` (before clipping),
        ``result.effective_sample_size`` (Kish) and ``result.n_clipped``.

    Raises
    ------
    ValueError
        If either feature array is empty, not 2-D, holds NaN or infinity,
        or the two have different numbers of features (or are data frames
        with different columns, or the same in another order); if either set has
        fewer than ``cv`` rows; with the default ``estimator``, if the
        features are so large that their sum of squares overflows float64
        (the scaler could not standardise them).

    Warns
    -----
    UserWarning
        If the calibration set does not cover the target: the mean of
        ``density_ratio`` over the calibration rows is below 0.5 (it
        estimates 1, see Notes), or the domain classifier separates the two
        sets with an out-of-fold ROC AUC of 0.99 or more. Also if that mean
        is above 2, which only an over-confident domain classifier gives.
        The message gives the numbers.

    Notes
    -----
    With ``n_c`` calibration and ``n_t`` target rows pooled, the classifier
    estimates ``d(x) = P(target | x) = n_t p_t(x) / (n_t p_t(x) + n_c p_c(x))``,
    so ``p_t(x) / p_c(x) = d / (1 - d) * n_c / n_t``. The ratio is computed
    from the log-odds, ``exp(log d - log(1 - d)) n_c / n_t`` (probabilities
    are first clipped to ``[1e-12, 1 - 1e-12]``). Its mean over the
    calibration rows estimates ``E_cal[w] = 1``, or, where the target has
    mass outside the calibration set's support, the target's probability of
    that support (less than 1); the weights are not normalised to it.

    The weights only help where the target's features are covered by the
    calibration set. The check of that is the mean of ``density_ratio``
    (near 1) and how well the domain classifier separates the sets (the
    function warns when the mean is below 0.5 or the out-of-fold AUC
    reaches 0.99), not ``effective_sample_size``: when the target lies
    outside the calibration set, every calibration row gets about the same
    tiny ratio, an ESS near ``n_cal``, and since calibrators ignore the
    scale of the weights the weighted fit is the unweighted one. A small
    ESS says something else: a few rows carry most of the weight, so the
    weighted fit is noisy (``clip`` bounds that). A linear domain classifier
    sees only shifts of the mean in its features; a target that differs in
    spread alone gets ratios near 1 (pass a more flexible ``estimator``).

    References
    ----------
    S. Park, O. Bastani, J. Weimer, I. Lee, "Calibrated Prediction with
    Covariate Shift via Unsupervised Domain Adaptation", AISTATS 2020 (CPCS).

    X. Wang, M. Long, J. Wang, M. I. Jordan, "Transferable Calibration with
    Lower Bias and Variance in Domain Adaptation", NeurIPS 2020 (TransCal).

    H. Shimodaira, "Improving predictive inference under covariate shift by
    weighting the log-likelihood function", J. Statist. Plann. Inference,
    2000.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import covariate_shift_weights
    >>> rng = np.random.default_rng(0)
    >>> Xc = rng.normal(0.0, 1.0, size=(2000, 1))
    >>> Xt = rng.normal(1.0, 1.0, size=(2000, 1))
    >>> res = covariate_shift_weights(Xc, Xt)
    >>> true = np.exp(Xc[:, 0] - 0.5)  # N(1, 1) / N(0, 1)
    >>> bool(np.allclose(res.density_ratio[:5], true[:5], rtol=0.15))
    True
    >>> round(res.effective_sample_size)
    783
    """
    _check_same_columns(features_cal, features_target)
    Xc = _check_features(features_cal, "features_cal")
    Xt = _check_features(features_target, "features_target")
    if Xc.shape[1] != Xt.shape[1]:
        raise ValueError(
            f"features_cal has {Xc.shape[1]} features but features_target has "
            f"{Xt.shape[1]}; both need the same features."
        )
    n_c, n_t = Xc.shape[0], Xt.shape[0]
    if min(n_c, n_t) < cv:
        raise ValueError(
            f"cv={cv} folds need at least {cv} rows in each set; got {n_c} "
            f"calibration and {n_t} target rows."
        )
    sparse_input = hasattr(Xc, "tocsr") or hasattr(Xt, "tocsr")
    if sparse_input:
        from scipy import sparse

        X = sparse.vstack([Xc, Xt]).tocsr()
    else:
        X = np.concatenate([Xc, Xt], axis=0)
    domain = np.r_[np.zeros(n_c, dtype=np.int64), np.ones(n_t, dtype=np.int64)]
    if estimator is None:
        _check_standardisable(X, Xc, Xt)
    est = _default_domain_classifier(sparse_input) if estimator is None else clone(estimator)
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    P = cross_val_predict(est, X, domain, cv=folds, method="predict_proba")
    P1 = np.asarray(P, dtype=np.float64)[:, 1]
    d = np.clip(P1[:n_c], 1e-12, 1.0 - 1e-12)
    ratio = np.exp(np.log(d) - np.log1p(-d)) * (n_c / n_t)
    _warn_if_not_covered(float(ratio.mean()), float(roc_auc_score(domain, P1)))
    if clip is None:
        weights, n_clipped = ratio.copy(), 0
    else:
        weights = np.minimum(ratio, float(clip))
        n_clipped = int(np.count_nonzero(ratio > clip))
    ess = float(weights.sum() ** 2 / np.sum(weights**2))
    return CovariateShiftWeights(
        weights=weights,
        density_ratio=ratio,
        effective_sample_size=ess,
        n_clipped=n_clipped,
        clip=None if clip is None else float(clip),
    )
