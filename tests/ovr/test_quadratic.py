"""QuadraticScaler against an independent SciPy float64 solve and probmetrics' quadratic scaling."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit, log_softmax, logsumexp

from skcal import PlattScaler, QuadraticScaler


def _reference(s, y, w=None, smoothing=True):
    """``min_{a,q,b} mean_w [softplus(f) - t f]``, ``f = a s + q s^2 + b``, by SciPy's exact-Hessian trust region."""
    w = np.ones_like(s) if w is None else w
    y = np.asarray(y, bool)
    # Platt's prior counts rows (:ref:`sample-weights`): one row weighs 1 for
    # unit weights, the mean weight for weights in general position
    unit = 1.0 if np.all(w == 1) else w[w > 0].mean()
    n_pos, n_neg = w[y].sum() / unit, w[~y].sum() / unit
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2)) if smoothing else y * 1.0
    X = np.column_stack([s, s * s, np.ones_like(s)])
    W = w / w.sum()

    def fun(th):
        f = X @ th
        p = expit(f)
        return (W * (np.logaddexp(0, f) - t * f)).sum(), X.T @ (W * (p - t))

    def hess(th):
        p = expit(X @ th)
        return (X * (W * p * (1 - p))[:, None]).T @ X

    res = minimize(fun, np.zeros(3), jac=True, hess=hess, method="trust-exact",
                   options={"gtol": 1e-12, "maxiter": 500})
    return res.x, res.fun


@pytest.fixture
def bent():
    """Scores whose true calibration map is quadratic in the log-odds."""
    rng = np.random.default_rng(0)
    s = rng.normal(scale=2.0, size=3000)
    y = rng.random(3000) < expit(0.6 * s + 0.15 * s * s - 0.4)
    return s, y


@pytest.mark.parametrize("smoothing", [True, False])
def test_quadratic_matches_scipy_solve(bent, smoothing):
    s, y = bent
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(s))
    (a, q, b), f = _reference(s, y, w, smoothing)
    est = QuadraticScaler(target_smoothing=smoothing).fit(s, y, sample_weight=w)
    np.testing.assert_allclose([est.a_, est.q_, est.b_], [a, q, b], rtol=1e-6, atol=1e-8)
    # the fitted bend is the one in the data
    assert est.q_ == pytest.approx(0.15, abs=0.05)
    p = est.predict_proba(s)[:, 1]
    np.testing.assert_allclose(p, expit(a * s + q * s * s + b), rtol=1e-9)


def test_quadratic_improves_on_platt_when_the_map_bends(bent):
    s, y = bent
    tr, te = slice(0, 2000), slice(2000, None)
    nll = lambda e: -np.mean(e.predict_log_proba(s[te])[np.arange(1000), y[te].astype(int)])
    quad = QuadraticScaler().fit(s[tr], y[tr])
    platt = PlattScaler().fit(s[tr], y[tr])
    assert nll(quad) < nll(platt) - 0.005


def test_quadratic_multiclass_is_the_binary_fit_of_each_ovr_column():
    rng = np.random.default_rng(4)
    k, n = 4, 2000
    y = rng.integers(0, k, size=n)
    z = 2.0 * (np.eye(k)[y] + rng.normal(size=(n, k)))
    est = QuadraticScaler(target_smoothing=False).fit(z, y)
    lp = log_softmax(z, axis=1)
    for c in range(k):
        rest = logsumexp(np.delete(lp, c, axis=1), axis=1)
        (a, q, b), _ = _reference(lp[:, c] - rest, y == c, smoothing=False)
        np.testing.assert_allclose([est.a_[c], est.q_[c], est.b_[c]], [a, q, b], rtol=1e-6, atol=1e-8)
    # rows renormalised in log space
    F = est.a_ * (lp - np.log(-np.expm1(lp))) + est.q_ * (lp - np.log(-np.expm1(lp))) ** 2 + est.b_
    L = log_expit(F)
    np.testing.assert_allclose(est.predict_log_proba(z), L - logsumexp(L, axis=1, keepdims=True),
                               atol=1e-9)


def test_quadratic_multiclass_reused_buffers_give_each_class_its_own_fit():
    """From SUMMARY_MIN_ROWS rows the classes' fits share work vectors: each is still its own fit."""
    from skcal._backend._ovr import ovr_log_odds
    from skcal.ovr._quadratic import SUMMARY_MIN_ROWS, fit_quadratic

    rng = np.random.default_rng(5)
    k, n = 3, SUMMARY_MIN_ROWS + 1000
    y = rng.integers(0, k, size=n)
    z = 2.0 * (np.eye(k)[y] + rng.normal(size=(n, k)))
    for smoothing in (True, False):
        est = QuadraticScaler(target_smoothing=smoothing).fit(z, y)
        assert not hasattr(est, "_buffers")
        S = ovr_log_odds(z)
        for c in range(k):
            a, q, b, _, status = fit_quadratic(S[:, c], y == c, target_smoothing=smoothing)
            assert status == "converged"
            np.testing.assert_allclose([est.a_[c], est.q_[c], est.b_[c]], [a, q, b], rtol=1e-12)
    (a, q, b), _ = _reference(S[:, 1], y == 1, smoothing=False)
    np.testing.assert_allclose([est.a_[1], est.q_[1], est.b_[1]], [a, q, b], rtol=1e-6, atol=1e-8)


def test_quadratic_separable_without_smoothing_warns():
    s = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(Warning, match="separate"):
        QuadraticScaler(target_smoothing=False).fit(s, y)
    # positives inside an interval: separable by the parabola, not by a threshold
    s2 = np.linspace(-3, 3, 40)
    with pytest.warns(Warning, match="separate"):
        QuadraticScaler(target_smoothing=False).fit(s2, (np.abs(s2) < 1).astype(int))
    est = QuadraticScaler().fit(s, y)  # smoothed targets: finite optimum
    assert np.isfinite([est.a_, est.q_, est.b_]).all()


def test_quadratic_separable_detection_on_the_binned_fit():
    """From SUMMARY_MIN_ROWS rows the bins decide "not separable" only when they show it."""
    from skcal.ovr._quadratic import SUMMARY_MIN_ROWS

    rng = np.random.default_rng(7)
    n = SUMMARY_MIN_ROWS + 5000
    s = rng.normal(scale=2.0, size=n)
    # separable with ties at the threshold: both classes hold scores exactly 0
    s[:10] = 0.0
    y = (s > 0).astype(int)
    y[:5] = 1
    with pytest.warns(Warning, match="separate"):
        QuadraticScaler(target_smoothing=False).fit(s, y)
    # rows of zero weight on the wrong side do not count
    y2 = (s > 0).astype(int)
    y2[np.argsort(s)[:3]] = 1
    w = np.ones(n)
    w[np.argsort(s)[:3]] = 0.0
    with pytest.warns(Warning, match="separate"):
        QuadraticScaler(target_smoothing=False).fit(s, y2, sample_weight=w)
    # overlapping classes: not separable, no warning, the reference optimum
    y3 = (rng.random(n) < expit(0.6 * s + 0.15 * s * s - 0.4)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = QuadraticScaler(target_smoothing=False).fit(s, y3)
    (a, q, b), _ = _reference(s, y3 == 1, smoothing=False)
    np.testing.assert_allclose([est.a_, est.q_, est.b_], [a, q, b], rtol=1e-6, atol=1e-8)


def test_quadratic_rejects_bad_max_iter(bent):
    s, y = bent
    with pytest.raises(ValueError, match="max_iter"):
        QuadraticScaler(max_iter=0).fit(s, y)


@pytest.mark.slow  # imports probmetrics (torch); the SciPy reference above is the fast check
def test_quadratic_matches_probmetrics_quadratic_scaling(bent):
    """probmetrics 1.3's ``quadratic-scaling`` (unpenalised ``LogisticRegression`` on ``(1, s, s^2)``), same split."""
    pytest.importorskip("probmetrics")
    from probmetrics.calibrators import BinaryLogisticCalibrator

    s, y = bent
    y = y.astype(int)
    tr, te = np.arange(2000), np.arange(2000, 3000)
    P = np.column_stack([1 - expit(s), expit(s)])
    with warnings.catch_warnings():  # scikit-learn >= 1.8 deprecates its penalty=None
        warnings.simplefilter("ignore", FutureWarning)
        peer = BinaryLogisticCalibrator(type="quadratic").fit(P[tr], y[tr])
    ours = QuadraticScaler(target_smoothing=False).fit(s[tr], y[tr])

    def nll(p_true):
        return -np.mean(np.log(p_true))

    for rows in (tr, te):
        p_peer = peer.predict_proba(P[rows])[np.arange(len(rows)), y[rows]]
        p_ours = ours.predict_proba(s[rows])[np.arange(len(rows)), y[rows]]
        # same objective: equal to lbfgs's tolerance, ours never worse on the training rows
        assert nll(p_ours) == pytest.approx(nll(p_peer), abs=1e-4)
    p_peer = peer.predict_proba(P[tr])[np.arange(2000), y[tr]]
    assert nll(ours.predict_proba(s[tr])[np.arange(2000), y[tr]]) <= nll(p_peer) + 1e-12


@pytest.mark.parametrize("smoothing", [True, False])
def test_quadratic_binned_start_tolerance_does_not_change_the_fit(monkeypatch, smoothing):
    """The summary solved to SUMMARY_TOL gives the fit of a summary solved to 1e-14, the SciPy optimum."""
    import skcal.ovr._quadratic as quad

    rng = np.random.default_rng(8)
    n = quad.SUMMARY_MIN_ROWS + 10_000
    s = rng.normal(scale=2.5, size=n)
    y = rng.random(n) < expit(0.6 * s + 0.1 * s * s - 0.3)
    w = rng.uniform(0.5, 2.0, size=n)
    for weights in (None, w):
        a, q, b, _, status = quad.fit_quadratic(s, y, weights, target_smoothing=smoothing)
        assert status == "converged"
        with monkeypatch.context() as m:
            m.setattr(quad, "SUMMARY_TOL", 1e-14)
            tight = quad.fit_quadratic(s, y, weights, target_smoothing=smoothing)
        np.testing.assert_allclose([a, q, b], tight[:3], rtol=1e-9)
        ref, _ = _reference(s, y, weights, smoothing)
        np.testing.assert_allclose([a, q, b], ref, rtol=1e-6, atol=1e-8)


def test_scores_far_from_zero_for_their_spread_warn():
    """q s^2 + a s + b evaluated on scores near 1e8 spread over ~20 cancels
    (probabilities off by ~1e-3, all lost near 1e10): the fit warns with the
    remedy; near 1e5 (exact to ~1e-9) it does not."""
    import warnings

    from skcal import QuadraticScaler

    rng = np.random.default_rng(0)
    s = rng.normal(scale=2.5, size=2000)
    y = (rng.random(2000) < 1 / (1 + np.exp(-(0.6 * s + 0.1 * s * s)))).astype(int)
    with pytest.warns(UserWarning, match=r"far from 0 for their spread .*Subtract a constant"):
        QuadraticScaler().fit(s + 1e8, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = QuadraticScaler().fit(s, y).predict_proba(s)
        got = QuadraticScaler().fit(s + 1e5, y).predict_proba(s + 1e5)
    np.testing.assert_allclose(got, ref, atol=1e-7)
