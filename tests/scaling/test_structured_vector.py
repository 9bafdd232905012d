"""StructuredVectorScaler (SVS, Berta et al. 2025) against an independent SciPy float64 solve."""

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_softmax, logsumexp

from skcal import DirichletCalibrator, StructuredVectorScaler


def _nll(A, y, w):
    return float(np.sum(w * (logsumexp(A, axis=1) - A[np.arange(len(y)), y])) / w.sum())


def _svs_reference(z, y, w, lam=1.0, mu=1.0):
    """The stated objective, solved by SciPy from scratch (temperature first, then ``(v, b)``)."""
    n, k = z.shape
    w = np.ones(n) if w is None else np.asarray(w, float)
    ts = minimize_scalar(
        lambda t: _nll(np.exp(t) * z, y, w), bounds=(-8, 4), method="bounded",
        options={"xatol": 1e-12},
    )
    beta = float(np.exp(ts.x))
    phi = log_softmax(beta * z, axis=1)
    N = w.sum()
    Y = np.eye(k)[y]

    def fun(theta):
        v, b = theta[:k], theta[k:]
        A = phi * v + b
        P = np.exp(A - logsumexp(A, axis=1, keepdims=True))
        R = w[:, None] * (P - Y) / N
        f = _nll(A, y, w) + lam * k / N * np.sum((v - 1) ** 2) + mu * k / N * np.sum(b**2)
        g = np.concatenate([
            (R * phi).sum(0) + 2 * lam * k / N * (v - 1),
            R.sum(0) + 2 * mu * k / N * b,
        ])
        return f, g

    res = minimize(fun, np.concatenate([np.ones(k), np.zeros(k)]), jac=True,
                   method="L-BFGS-B", options={"ftol": 0, "gtol": 1e-13, "maxiter": 20000})
    return beta, res.x[:k], res.x[k:], res.fun


def _skewed(k, n):
    rng = np.random.default_rng(3)
    y = rng.integers(0, k, size=n)
    z = 2.5 * (np.eye(k)[y] + 0.9 * rng.normal(size=(n, k))) + np.linspace(-1, 1, k)
    return z, y


@pytest.fixture
def skewed():
    return _skewed(6, 1500)


@pytest.mark.parametrize(
    "k, n, weighted", [(6, 1500, False), (6, 1500, True), (40, 1200, True)]  # K > 32: trust region
)
def test_svs_matches_scipy_solve_of_stated_objective(k, n, weighted):
    z, y = _skewed(k, n)
    w = np.random.default_rng(1).integers(1, 4, size=len(y)).astype(float) if weighted else None
    beta, v, b, fref = _svs_reference(z, y, w)
    est = StructuredVectorScaler().fit(z, y, sample_weight=w)
    assert est.feature_scale_ == pytest.approx(beta, rel=1e-6)
    np.testing.assert_allclose(np.diag(est.coef_), v, atol=2e-6)
    np.testing.assert_allclose(est.intercept_, b, atol=2e-6)
    # off-diagonal stays exactly zero (vector, not matrix, scaling)
    assert np.all(est.coef_[~np.eye(len(v), dtype=bool)] == 0.0)
    # the map shrinks away from temperature scaling on this biased set
    assert np.max(np.abs(b)) > 0.05


def test_svs_penalty_strength_reaches_temperature_scaling(skewed):
    z, y = skewed
    strong = StructuredVectorScaler(reg_lambda=1e8).fit(z, y)
    np.testing.assert_allclose(np.diag(strong.coef_), 1.0, atol=1e-4)
    np.testing.assert_allclose(strong.intercept_, 0.0, atol=1e-4)
    ts = log_softmax(strong.feature_scale_ * z, axis=1)
    np.testing.assert_allclose(strong.predict_log_proba(z), ts, atol=1e-3)


def test_svs_is_the_diagonal_sms_dirichlet_map(skewed):
    z, y = skewed
    a = StructuredVectorScaler(reg_lambda=0.3, reg_mu=2.0).fit(z, y)
    b = DirichletCalibrator(parametrization="diagonal", reg="sms", reg_lambda=0.3, reg_mu=2.0).fit(z, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


def test_svs_equal_weights_are_a_scale_not_a_sample_size(skewed):
    # n counts rows (docs/user_guide/structured_vector.rst): weights of 7 or
    # 0.01 everywhere are the unweighted fit, penalty lambda K / n included
    z, y = skewed
    a = StructuredVectorScaler().fit(z, y)
    for c in (7.0, 0.01):
        b = StructuredVectorScaler().fit(z, y, sample_weight=np.full(len(y), c))
        np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-7)
        np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=0, atol=1e-7)
    # not the solve with n = sum s_i = 7 * 1500 (a 7 times weaker penalty)
    _, v7, b7, _ = _svs_reference(z, y, np.full(len(y), 7.0))
    assert np.abs(np.diag(a.coef_) - v7).max() + np.abs(a.intercept_ - b7).max() > 1e-3


def test_svs_float32_matches_float64(skewed):
    z, y = skewed
    a = StructuredVectorScaler().fit(z, y)
    b = StructuredVectorScaler().fit(z.astype(np.float32), y)
    np.testing.assert_allclose(b.coef_, a.coef_, atol=1e-4)
    np.testing.assert_allclose(b.intercept_, a.intercept_, atol=1e-4)


def test_svs_reg_lambda_rejects_negative(skewed):
    z, y = skewed
    with pytest.raises(ValueError, match="reg_lambda"):
        StructuredVectorScaler(reg_lambda=-1.0).fit(z, y)


@pytest.mark.slow  # imports probmetrics (torch); the SciPy reference above is the fast check
def test_svs_matches_probmetrics_test_nll():
    """Same split, same stated objective: probmetrics 1.3's SVSCalibrator (its torch API on the logits)."""
    pytest.importorskip("probmetrics")
    torch = pytest.importorskip("torch")
    from probmetrics.calibrators import SVSCalibrator
    from probmetrics.distributions import CategoricalLogits

    rng = np.random.default_rng(7)
    k, n = 5, 4000
    y = rng.integers(0, k, size=n)
    z = 3.0 * (np.eye(k)[y] + rng.normal(size=(n, k))) + np.linspace(0, 1.5, k)
    tr, te = np.arange(2000), np.arange(2000, n)
    ours = StructuredVectorScaler().fit(z[tr], y[tr])
    peer = SVSCalibrator(print_init_info=False)
    peer.fit_torch(CategoricalLogits(torch.as_tensor(z[tr])), torch.as_tensor(y[tr]))
    p_peer = peer.predict_proba_torch(CategoricalLogits(torch.as_tensor(z[te]))).get_probs().numpy()
    nll_ours = -np.mean(ours.predict_log_proba(z[te])[np.arange(len(te)), y[te]])
    nll_peer = -np.mean(np.log(p_peer[np.arange(len(te)), y[te]]))
    assert nll_ours == pytest.approx(nll_peer, abs=1e-4)
    # and both improve on the uncalibrated logits (biased by the linspace offset)
    assert nll_ours < -np.mean(log_softmax(z[te], axis=1)[np.arange(len(te)), y[te]]) - 0.01
