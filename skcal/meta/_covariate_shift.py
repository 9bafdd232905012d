"""Importance weights for calibration under covariate shift.

:func:`covariate_shift_weights` estimates the density ratio
``w(x) = p_target(x) / p_cal(x)`` from a domain classifier, for the rows of
a calibration set, to be passed as ``sample_weight`` to any calibrator
(CPCS, Park et al. 2020; TransCal, Wang et al. 2020).
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
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
        calibration set is worth (``n_cal`` for equal weights).
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


def _default_domain_classifier():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


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
        ``make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))``:
        a logistic model of the log density ratio, exact when both
        distributions are Gaussians with one covariance.
    cv : int >= 2, default=5
        The domain classifier's probabilities for the calibration rows are
        out-of-fold (:func:`sklearn.model_selection.cross_val_predict` over
        stratified folds of the pooled rows), so that no row's weight comes
        from a classifier fitted on that row (which would over-state how
        recognisable each calibration row is).
    clip : float >= 1 or None, default=20.0
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
        or the two have different numbers of features; if either set has
        fewer than ``cv`` rows.

    Notes
    -----
    With ``n_c`` calibration and ``n_t`` target rows pooled, the classifier
    estimates ``d(x) = P(target | x) = n_t p_t(x) / (n_t p_t(x) + n_c p_c(x))``,
    so ``p_t(x) / p_c(x) = d / (1 - d) * n_c / n_t``. The ratio is computed
    from the log-odds, ``exp(log d - log(1 - d)) n_c / n_t`` (probabilities
    are first clipped to ``[1e-12, 1 - 1e-12]``). Its mean over the
    calibration rows estimates ``E_cal[w] = 1``. The weights only help where
    the target's features are covered by the calibration set; a small
    ``effective_sample_size`` says they are not.

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
    Xc = check_array(features_cal, accept_sparse="csr", input_name="features_cal")
    Xt = check_array(features_target, accept_sparse="csr", input_name="features_target")
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
    if hasattr(Xc, "tocsr"):
        from scipy import sparse

        X = sparse.vstack([Xc, Xt]).tocsr()
    else:
        X = np.concatenate([Xc, Xt], axis=0)
    domain = np.r_[np.zeros(n_c, dtype=np.int64), np.ones(n_t, dtype=np.int64)]
    est = _default_domain_classifier() if estimator is None else clone(estimator)
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    P = cross_val_predict(est, X, domain, cv=folds, method="predict_proba")
    d = np.clip(np.asarray(P, dtype=np.float64)[:n_c, 1], 1e-12, 1.0 - 1e-12)
    ratio = np.exp(np.log(d) - np.log1p(-d)) * (n_c / n_t)
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
