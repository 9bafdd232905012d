"""covariate_shift_weights: density ratios against known ones, clipping and ESS by hand."""

import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import InvalidParameterError

from skcal import TemperatureScaler, covariate_shift_weights


class _LogitIsFirstFeature(ClassifierMixin, BaseEstimator):
    """A 'domain classifier' whose log-odds of "target" is the first feature."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        d = 1 / (1 + np.exp(-np.asarray(X)[:, 0]))
        return np.column_stack([1 - d, d])


def test_weights_match_the_true_ratio_of_two_gaussians():
    rng = np.random.default_rng(0)
    mu = np.array([0.8, -0.5])
    Xc = rng.normal(size=(4000, 2))
    Xt = rng.normal(size=(3000, 2)) + mu
    res = covariate_shift_weights(Xc, Xt, clip=None)
    true = np.exp(Xc @ mu - mu @ mu / 2)  # N(mu, I) / N(0, I)
    central = (true > 0.1) & (true < 10)
    rel = np.abs(res.density_ratio[central] / true[central] - 1)
    assert np.median(rel) < 0.05 and rel.max() < 0.3
    # E_cal[w] = 1
    assert res.density_ratio.mean() == pytest.approx(1.0, abs=0.05)
    np.testing.assert_array_equal(res.weights, res.density_ratio)
    assert res.n_clipped == 0 and res.clip is None


def test_clipping_sample_size_correction_and_ess_by_hand():
    # d / (1 - d) = exp(x0); n_cal / n_target = 5 / 10 halves it
    x0 = np.log([1.0, 2.0, 4.0, 8.0, 100.0])
    Xc = np.column_stack([x0, np.zeros(5)])
    Xt = np.zeros((10, 2))
    with pytest.warns(UserWarning, match="average 11.5"):  # far above 1: see below
        res = covariate_shift_weights(Xc, Xt, estimator=_LogitIsFirstFeature(), clip=20.0)
    np.testing.assert_allclose(res.density_ratio, [0.5, 1.0, 2.0, 4.0, 50.0], rtol=1e-12)
    np.testing.assert_allclose(res.weights, [0.5, 1.0, 2.0, 4.0, 20.0], rtol=1e-12)
    assert res.n_clipped == 1 and res.clip == 20.0
    # Kish: (sum w)^2 / sum w^2 = 27.5^2 / 421.25
    assert res.effective_sample_size == pytest.approx(27.5**2 / 421.25, rel=1e-12)


def test_equal_distributions_give_weights_near_one():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 3))
    res = covariate_shift_weights(X[:1000], X[1000:])
    assert np.abs(res.weights - 1).mean() < 0.06 and np.abs(res.weights - 1).max() < 0.35
    assert res.effective_sample_size > 0.98 * 1000


def test_weights_move_a_calibrator_towards_the_target():
    # the classifier is over-confident only where x > 0, which the target favours
    rng = np.random.default_rng(2)
    n = 6000
    x = rng.normal(size=n)
    y = rng.integers(0, 2, n)
    margin = np.where(y == 1, 1.0, -1.0) + rng.normal(size=n)
    scale = np.where(x > 0, 4.0, 1.0)  # logits too sharp for x > 0
    s = scale * margin * 2  # true log-odds of margin is 2 * margin
    cal, tgt = x < 1.0, rng.random(n) < 1 / (1 + np.exp(-3 * x))
    w = covariate_shift_weights(x[cal, None], x[tgt, None]).weights
    t_plain = TemperatureScaler().fit(s[cal], y[cal]).temperature_
    t_weighted = TemperatureScaler().fit(s[cal], y[cal], sample_weight=w).temperature_
    t_target = TemperatureScaler().fit(s[tgt], y[tgt]).temperature_
    assert abs(t_weighted - t_target) < 0.5 * abs(t_plain - t_target)


def test_covariate_shift_weights_errors():
    X = np.zeros((20, 2))
    with pytest.raises(ValueError, match="3 features but features_target has 2"):
        covariate_shift_weights(np.zeros((20, 3)), X)
    with pytest.raises(ValueError, match="NaN"):
        covariate_shift_weights(np.full((20, 2), np.nan), X)
    with pytest.raises(ValueError, match="at least 5 rows"):
        covariate_shift_weights(X[:3], X)
    with pytest.raises(InvalidParameterError, match="clip"):
        covariate_shift_weights(X, X, clip=0.5)
    with pytest.raises(InvalidParameterError, match="estimator"):
        covariate_shift_weights(X, X, estimator="logistic")


def test_no_overlap_warns_with_the_mean_ratio_and_the_auc():
    # the target lies 100 sd away: every calibration row gets the same tiny
    # ratio, so the ESS is near n_cal and cannot be the coverage check
    rng = np.random.default_rng(0)
    Xc = rng.normal(size=(500, 3))
    Xt = rng.normal(1, 1, size=(300, 3)) + 100
    with pytest.warns(UserWarning, match="does not cover the target") as rec:
        res = covariate_shift_weights(Xc, Xt)
    msg = str(rec[0].message)
    mean = res.density_ratio.mean()
    assert mean < 0.01 and f"average {mean:.3g} over the calibration rows" in msg
    assert "out-of-fold AUC 1.000" in msg
    assert res.effective_sample_size > 0.99 * 500 and res.n_clipped == 0


def test_coverage_warning_thresholds():
    # unit Gaussians 2 sd apart overlap (no warning); 3.5 sd apart do not:
    # mean ratio ~0.2 and out-of-fold AUC Phi(3.5 / sqrt 2) ~ 0.993
    import warnings

    rng = np.random.default_rng(0)
    Xc, Z = rng.normal(size=(500, 3)), rng.normal(size=(300, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        covariate_shift_weights(Xc, Z + 2 / np.sqrt(3))
    with pytest.warns(UserWarning, match=r"average 0\.\d+ .* and .* AUC 0\.99"):
        covariate_shift_weights(Xc, Z + 3.5 / np.sqrt(3))
    # a mean far above 1 is the classifier's error: ratios [0.5, 1, 2, 4, 50]
    x0 = np.log([1.0, 2.0, 4.0, 8.0, 100.0])
    with pytest.warns(UserWarning, match="average 11.5 .* over-confident"):
        covariate_shift_weights(
            np.column_stack([x0, np.zeros(5)]), np.zeros((10, 2)),
            estimator=_LogitIsFirstFeature(),
        )


def test_one_dimensional_and_overflowing_features_are_named():
    rng = np.random.default_rng(0)
    Xc, Xt = rng.normal(size=(500, 3)), rng.normal(size=(300, 3))
    with pytest.raises(ValueError, match=r"features_cal must be 2-D.*shape \(500,\).*reshape\(-1, 1\)"):
        covariate_shift_weights(Xc[:, 0], Xt)
    with pytest.raises(ValueError, match=r"features_target must be 2-D.*shape \(300,\)"):
        covariate_shift_weights(Xc, Xt[:, 0])
    big = float(np.abs(Xt).max()) * 1e200
    with pytest.raises(ValueError, match=re.escape(f"features_target holds values up to {big:.3g} in magnitude")):
        covariate_shift_weights(Xc, Xt * 1e200)
    with pytest.raises(ValueError, match=r"features_cal holds values up to 3.9e\+200 .* overflows"):
        covariate_shift_weights(Xc * 1e200, Xt * 1e200)
    # a custom domain classifier may handle them: not refused (d = 1/2, so
    # every ratio is n_cal / n_target)
    res = covariate_shift_weights(Xc * 1e200, Xt * 1e200, estimator=_HalfHalf())
    np.testing.assert_allclose(res.weights, 500 / 300, rtol=1e-12)


class _HalfHalf(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.full((X.shape[0], 2), 0.5)


def test_sparse_features_with_the_default_classifier():
    """Sparse features (one or both sets) work with the default domain
    classifier (its scaler does not centre them) and give the dense weights
    up to the penalty's dependence on the centring."""
    from scipy import sparse

    from skcal import covariate_shift_weights

    rng = np.random.default_rng(0)
    Xc, Xt = rng.normal(size=(200, 3)), rng.normal(0.5, 1.0, (150, 3))
    dense = covariate_shift_weights(Xc, Xt).weights
    for a, b in ((sparse.csr_matrix(Xc), sparse.csr_matrix(Xt)), (sparse.csr_matrix(Xc), Xt)):
        got = covariate_shift_weights(a, b).weights
        np.testing.assert_allclose(got, dense, rtol=1e-2)


def test_data_frames_with_other_column_orders_are_refused():
    """Columns are paired by position: two frames whose columns differ (or come
    in another order) are refused with the remedy, not silently misaligned."""
    pd = pytest.importorskip("pandas")
    from skcal import covariate_shift_weights

    rng = np.random.default_rng(0)
    Xc = pd.DataFrame(rng.normal(size=(200, 3)), columns=list("abc"))
    Xt = pd.DataFrame(rng.normal(0.5, 1.0, (150, 3)), columns=list("abc"))
    with pytest.raises(ValueError, match=r"another order: reorder it"):
        covariate_shift_weights(Xc, Xt[list("cba")])
    with pytest.raises(ValueError, match=r"other columns"):
        covariate_shift_weights(Xc, Xt.rename(columns={"a": "z"}))
    np.testing.assert_allclose(covariate_shift_weights(Xc, Xt[list("abc")]).weights,
                               covariate_shift_weights(Xc.to_numpy(), Xt.to_numpy()).weights)
