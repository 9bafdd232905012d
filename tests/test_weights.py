"""Sample weights: the one weight policy (skcal.utils._weights).

Integer weights fit like repeated rows, and only the ratios of the weights
matter, priors included (they count rows of :func:`weight_unit`).
"""

import numpy as np
import pytest

from skcal.utils._weights import class_weight_units, weight_unit


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [5e-324, 1e-300, 1e-30, 1e35, 1e300])
@pytest.mark.parametrize("cls", ["TemperatureScaler", "VectorScaler", "IsotonicScaler"])
def test_weighted_mean_fits_ignore_the_scale_of_the_weights(cls, scale, dtype, backend):
    """Their objective is a weighted mean: weights c * w fit exactly like w."""
    if backend == "torch":
        pytest.importorskip("torch")
    import skcal
    from skcal.datasets import load_cifar10_resnet20

    d = load_cifar10_resnet20()
    X, y = d.logits_val[:2000].astype(dtype), d.y_val[:2000]
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    if scale == 5e-324:
        w = np.ones(len(y))  # the smallest subnormal, equal weights
    Xb = X
    if backend == "torch":
        import torch

        Xb = torch.from_numpy(X)
    ref = getattr(skcal, cls)().fit(Xb, y, sample_weight=w)
    got = getattr(skcal, cls)().fit(Xb, y, sample_weight=w * scale)
    P_ref, P_got = (np.asarray(m.predict_proba(Xb)) for m in (ref, got))
    np.testing.assert_allclose(P_got, P_ref, rtol=0, atol=1e-9)


@pytest.mark.parametrize("scale", [5e-324, 1e-300, 1e300])
def test_platt_without_smoothing_ignores_the_scale_of_the_weights(scale):
    from skcal import PlattScaler

    rng = np.random.default_rng(0)
    s = 2.0 * rng.standard_normal(3000)
    y = (rng.random(3000) < 1 / (1 + np.exp(-s))).astype(int)
    w = np.ones(3000) if scale == 5e-324 else rng.uniform(0.5, 2.0, 3000)
    ref = PlattScaler(target_smoothing=False).fit(s, y, sample_weight=w)
    got = PlattScaler(target_smoothing=False).fit(s, y, sample_weight=w * scale)
    assert (got.a_, got.b_) == pytest.approx((ref.a_, ref.b_), rel=1e-9)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("scale", [5e-324, 1e-300, 1e300])
def test_metrics_ignore_the_scale_of_the_weights(scale, backend):
    from skcal import metrics

    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 1000)
    P = rng.dirichlet(np.ones(4), 1000)
    w = np.ones(1000) if scale == 5e-324 else rng.uniform(0.5, 2.0, 1000)
    if backend == "torch":
        torch = pytest.importorskip("torch")
        P = torch.from_numpy(P)
    for fn, kw in [
        (metrics.expected_calibration_error, {}),
        (metrics.expected_calibration_error, {"kind": "classwise", "strategy": "quantile"}),
        (metrics.brier_score, {}),
        (metrics.negative_log_likelihood, {}),
    ]:
        ref = fn(y, P, sample_weight=w, **kw)
        assert fn(y, P, sample_weight=w * scale, **kw) == pytest.approx(ref, rel=1e-12)


def test_weight_unit_counts_rows_of_the_smallest_whole_data_set():
    from math import gcd

    from skcal.utils._weights import weight_unit

    rng = np.random.default_rng(20)
    s = np.repeat(rng.normal(size=30), 2)  # every score twice ...
    t = np.arange(60) % 2 == 0  # ... once with each label: no common factor
    assert weight_unit(s, t, None) == 1.0
    assert weight_unit(np.r_[s, s], np.r_[t, t], None) == 2.0  # an exact copy
    w = rng.integers(0, 5, 60).astype(float)
    w[:2] = 1.0
    tot = {}
    for si, ti, wi in zip(s, t, w):
        if wi:
            tot[(si, ti)] = tot.get((si, ti), 0) + int(wi)
    d = 0
    for v in tot.values():
        d = gcd(d, v)
    for c in (1.0, 1e-300, 1 / 3, 7.0, 1e250):
        np.testing.assert_allclose(weight_unit(s, t, c * w), c * d, rtol=1e-13)
    # class weights 1 : 3.7 stand for 10 and 37 copies
    np.testing.assert_allclose(weight_unit(s, t, np.where(t, 1.0, 3.7)), 0.1, rtol=1e-13)
    # weights not proportional to whole numbers: each row counts once
    f = rng.uniform(0.2, 3.0, 60)
    for c in (1.0, 1e-300, 1e250):
        np.testing.assert_allclose(weight_unit(s, t, c * f), c * f.mean(), rtol=1e-13)


def test_weight_unit_of_rows_and_of_classes():
    """Rows of logits (whole-vector methods) and per-class score blocks follow one rule."""
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(40, 3))
    y = rng.integers(0, 3, 40)
    assert weight_unit(Z, y, None) == 1.0
    assert weight_unit(np.r_[Z, Z, Z], np.r_[y, y, y], None) == 3.0
    # the same rows with another label are other rows
    assert weight_unit(np.r_[Z, Z], np.r_[y, (y + 1) % 3], None) == 1.0
    w = rng.integers(1, 4, 40) * 2.0
    w[0] = 2.0
    assert weight_unit(Z, y, w) == 2.0
    assert weight_unit(Z, y, 5e-300 * w) == pytest.approx(1e-299, rel=1e-13)
    # tied extremes (the O(n) shortcut cannot decide): the sort decides
    s = np.r_[np.full(4, 9.0), rng.normal(size=20)]
    t = np.r_[np.ones(4, bool), rng.random(20) < 0.5]
    s2, t2 = np.r_[s, s], np.r_[t, t]
    assert weight_unit(s2, t2, None) == 2.0
    assert weight_unit(np.r_[s2, 0.5], np.r_[t2, True], None) == 1.0
    S = np.stack([s2, -s2, 2 * s2])
    yk = np.where(t2, 0, 1)
    got = class_weight_units([(0, 2, S[:2]), (2, 3, S[2:])], yk, None)
    want = [weight_unit(S[k], yk == k, None) for k in range(3)]
    np.testing.assert_array_equal(got, want)
    wk = rng.integers(0, 3, s2.size).astype(float)
    wk[:3] = 1.0
    got = class_weight_units([(0, 3, S)], yk, 0.25 * wk)
    want = [weight_unit(S[k], yk == k, 0.25 * wk) for k in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-15)


def _platt_reference(s, y, w):
    """A plain float64 SciPy solve of scikit-learn's weighted Platt objective.

    Targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)`` with ``N+-`` the
    weighted class totals (scikit-learn's ``_sigmoid_calibration``), the
    weighted cross-entropy minimised by BFGS to a gradient of 1e-12.
    """
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    n_pos, n_neg = w[y].sum(), w[~y].sum()
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def f(theta):
        z = theta[0] * s + theta[1]
        loss = -(w * (t * log_expit(z) + (1 - t) * log_expit(-z))).sum() / w.sum()
        r = w * (expit(z) - t) / w.sum()
        return loss, np.array([r @ s, r.sum()])

    res = minimize(f, np.zeros(2), jac=True, method="BFGS", options={"gtol": 1e-12})
    return res.x


def test_platt_integer_weights_are_repeated_rows_and_sklearn_weighted_sums():
    """Platt's prior counts rows: integer weights = repetition = scikit-learn's weighted sums."""
    from sklearn.calibration import _sigmoid_calibration

    from skcal import PlattScaler

    rng = np.random.default_rng(7)
    s = 3.0 * rng.standard_normal(80)
    y = rng.random(80) < 1 / (1 + np.exp(-s))
    w = rng.integers(0, 5, 80)
    w[:2] = 1  # one row of weight 1: the unit is 1
    ref = _platt_reference(s, y, w.astype(float))
    fit = PlattScaler().fit(s, y, sample_weight=w)
    np.testing.assert_allclose([fit.a_, fit.b_], ref, rtol=1e-8)
    rep = PlattScaler().fit(np.repeat(s, w), np.repeat(y, w))
    np.testing.assert_allclose([rep.a_, rep.b_], ref, rtol=1e-8)
    a, b = _sigmoid_calibration(s, y.astype(float), sample_weight=w.astype(float))
    np.testing.assert_allclose([fit.a_, fit.b_], [-a, -b], rtol=1e-4)
    # rescaled (or normalised) weights fit alike: the prior still counts rows
    for c in (1e-3, 1.0 / w.sum(), 250.0):
        got = PlattScaler().fit(s, y, sample_weight=c * w)
        np.testing.assert_allclose([got.a_, got.b_], ref, rtol=1e-8)


def test_multiclass_platt_counts_rows_per_class():
    """The batched one-vs-rest fit counts each class's rows like the per-class fit."""
    from skcal import PlattScaler
    from skcal.ovr._platt import fit_platt

    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 90)
    Z = 2.0 * (np.eye(3)[y] + rng.normal(size=(90, 3)))
    w = rng.integers(0, 4, 90).astype(float)
    w[:3] = 1.0
    Z2, y2, w2 = np.r_[Z, Z], np.r_[y, y], np.r_[w, w]  # an exact copy: unit 2
    est = PlattScaler().fit(Z2, y2, sample_weight=7.0 * w2)
    Zs = Z - Z.max(1, keepdims=True)
    lse = np.log(np.exp(Zs).sum(1))
    for k in range(3):
        p = np.exp(Zs[:, k] - lse)
        sk = np.log(p) - np.log1p(-p)
        A, B, _, _ = fit_platt(sk, y == k, w)
        ref = _platt_reference(sk, y == k, w)
        np.testing.assert_allclose([A, B], ref, rtol=1e-7)
        np.testing.assert_allclose([est.a_[k], est.b_[k]], ref, rtol=1e-7)
