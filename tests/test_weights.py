"""Sample weights: the one weight policy (skcal.utils._weights).

Integer weights fit like repeated rows, and only the ratios of the weights
matter, priors included (they count rows of :func:`weight_unit`).
"""

import numpy as np
import pytest

from skcal.utils._weights import weight_unit, weighted_rows


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


def test_weight_unit_is_the_weight_of_one_row():
    """1 without weights; the gcd of whole numbers; c for c * (whole numbers
    of gcd 1, at most 16); else the mean."""
    rng = np.random.default_rng(20)
    assert weight_unit(None) == 1.0
    w = rng.integers(0, 5, 60).astype(float)
    w[:2] = 1.0
    for c in (1.0, 1e-300, 1 / 3, 7.0, 1e250):
        np.testing.assert_allclose(weight_unit(c * w), c, rtol=1e-13)
    # class weights 1 : 3.7 count each row once (not as 10 and 37 copies)
    t = np.arange(60) % 2 == 0
    np.testing.assert_allclose(weight_unit(np.where(t, 1.0, 3.7)), 2.35, rtol=1e-13)
    # a common factor is read as a scale: weights 2, 4, 6 are 1, 2, 3
    np.testing.assert_allclose(weight_unit(np.array([2.0, 4.0, 6.0, 0.0])), 2.0, rtol=1e-15)
    # counts above 16 in fractional weights: each row counts once
    np.testing.assert_allclose(weight_unit(np.array([0.05, 1.0])), 0.525, rtol=1e-15)
    np.testing.assert_allclose(weight_unit(np.array([1.0, 20.0])), 1.0, rtol=1e-15)
    # whole numbers without a 1: their gcd (2 and 3 are themselves, 6 and 9 are 2 and 3)
    np.testing.assert_allclose(weight_unit(np.array([2.0, 3.0, 0.0, 3.0])), 1.0, rtol=1e-15)
    np.testing.assert_allclose(weight_unit(np.array([6.0, 9.0, 9.0])), 3.0, rtol=1e-15)
    # weights not proportional to whole numbers: each row counts once
    f = rng.uniform(0.2, 3.0, 60)
    for c in (1.0, 1e-300, 1e250):
        np.testing.assert_allclose(weight_unit(c * f), c * f.mean(), rtol=1e-13)


def test_fractional_weights_count_their_rows_however_they_round():
    """Class-balanced weights, or weights of 1 with one changed by 1e-3, are not
    read as copies of a fine common step: they count the rows they have."""
    from sklearn.utils.class_weight import compute_sample_weight

    y = np.r_[np.zeros(456, int), np.ones(454, int)]
    w = compute_sample_weight("balanced", y)  # 455/456 and 455/454
    assert weighted_rows(w, 910) == pytest.approx(910.0, rel=1e-12)
    assert weighted_rows(np.round(w, 6), 910) == pytest.approx(910.0, rel=1e-12)
    for last in (1.001, 1.00001, 0.001, 1e-17):
        s = np.ones(600)
        s[-1] = last
        assert weighted_rows(s, 600) == pytest.approx(600.0, rel=1e-12)
    s[-1] = 2.0  # a whole number: one row twice
    assert weighted_rows(s, 600) == pytest.approx(601.0, rel=1e-12)
    s[-1] = 1.5  # the scaled counts 2 and 3 (at most 16): every row twice, one thrice
    assert weighted_rows(s, 600) == pytest.approx(1201.0, rel=1e-12)
    s = np.random.default_rng(0).lognormal(0, 1, 600)
    s[0] = 1e-17  # importance weights with one tiny weight still count their rows
    assert weighted_rows(s, 600) == pytest.approx(600.0, rel=1e-12)


@pytest.mark.parametrize("name", ["PlattScaler", "HistogramCalibrator", "MatrixScaler",
                                  "VennAbersCalibrator"])
def test_integer_weights_without_a_one_fit_like_repeated_rows(name):
    """Weights 2 and 3 (no weight-1 row) are rows repeated 2 and 3 times, also
    through fit's relative scaling of the weights (which keeps whole numbers)."""
    import warnings

    import skcal
    from skcal.datasets import load_cifar10_resnet20

    d = load_cifar10_resnet20()
    X, y = d.logits_val[:300].astype(np.float64), d.y_val[:300]
    if name == "VennAbersCalibrator":
        X, y = X[:, 1] - X[:, 0], (y == 1).astype(int)
    m = np.where(np.random.default_rng(3).random(len(y)) < 0.5, 2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = getattr(skcal, name)().fit(X, y, sample_weight=m.astype(float))
        ref = getattr(skcal, name)().fit(np.repeat(X, m, axis=0), np.repeat(y, m))
    np.testing.assert_allclose(got.predict_proba(X[:50]), ref.predict_proba(X[:50]),
                               rtol=0, atol=1e-7)


def test_fractional_weights_near_one_fit_like_no_weights():
    """A prior counted in rows (SVS's penalty, Platt's targets) is continuous in
    weights near 1: one weight of 1.001 among 600 changes the fit by ~1e-3, not
    as if the data were 1000 times larger."""
    import warnings

    from skcal import PlattScaler, StructuredVectorScaler
    from skcal.datasets import load_cifar10_resnet20

    d = load_cifar10_resnet20()
    X, y = d.logits_val[:600], d.y_val[:600]
    w = np.ones(600)
    w[-1] = 1.001
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make in (StructuredVectorScaler, PlattScaler):
            ref = make().fit(X, y).predict_proba(X)
            got = make().fit(X, y, sample_weight=w).predict_proba(X)
            assert np.max(np.abs(got - ref)) < 1e-4


def test_weighted_rows_count_the_rows_the_weights_stand_for():
    """``n`` without weights; integer weights are repeated rows, at any scale."""
    assert weighted_rows(None, 7) == 7.0
    w = np.array([1.0, 3.0, 0.0, 2.0])  # rows 0, 1, 1, 1, 3, 3
    for c in (1.0, 1e-300, 0.25, 1e250):
        np.testing.assert_allclose(weighted_rows(c * w, 4), 6.0, rtol=1e-13)
    # weights not proportional to whole numbers: one row per positive weight
    np.testing.assert_allclose(weighted_rows(np.array([0.3, 1.0, 0.0, np.pi]), 4), 3.0,
                               rtol=1e-13)


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
    est = PlattScaler().fit(Z, y, sample_weight=7.0 * w)
    rep = PlattScaler().fit(np.repeat(Z, w.astype(int), 0), np.repeat(y, w.astype(int)))
    Zs = Z - Z.max(1, keepdims=True)
    lse = np.log(np.exp(Zs).sum(1))
    for k in range(3):
        p = np.exp(Zs[:, k] - lse)
        sk = np.log(p) - np.log1p(-p)
        A, B, _, _ = fit_platt(sk, y == k, w)
        ref = _platt_reference(sk, y == k, w)
        np.testing.assert_allclose([A, B], ref, rtol=1e-7)
        np.testing.assert_allclose([est.a_[k], est.b_[k]], ref, rtol=1e-7)
        np.testing.assert_allclose([rep.a_[k], rep.b_[k]], ref, rtol=1e-7)


@pytest.mark.parametrize("name", ["PlattScaler", "MatrixScaler", "HistogramCalibrator",
                                  "SplineCalibrator"])
def test_prior_of_unweighted_ties_counts_rows(name):
    """Constant scores with class counts 10 : 30 (gcd 10) fit with the prior of
    40 rows, not of 4 (unweighted data are never read as copies)."""
    import warnings

    import skcal

    y = np.r_[np.ones(10, int), np.zeros(30, int)]
    Z = np.tile([0.0, 1.5], (40, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = getattr(skcal, name)().fit(Z, y).predict_proba(Z[:1])[0, 1]
    # within the smoothing of 40 rows of the base rate 0.25 (4 rows: 0.3167)
    assert abs(P - 0.25) <= 1.0 / 40


#: Label-free calibrators (prior from the predictions, not the labels).
_LABEL_FREE = {"BatchCalibrator", "ContextualCalibrator"}


@pytest.mark.parametrize("k", [2, 3])
def test_constant_rows_give_the_weighted_base_rate_or_warn(k):
    """Every registered calibrator on constant rows with weights: the weighted
    base rate (within the smoothing of a prior of n rows), or the documented
    warning of the order-preserving maps, which cannot reach it."""
    import warnings

    from skcal.utils.discovery import all_calibrators

    rng = np.random.default_rng(11)
    n = 120
    y = np.arange(n) % k
    w = rng.uniform(0.2, 3.0, n)
    Z = np.tile(np.r_[0.7, np.zeros(k - 1)], (n, 1))
    base = np.bincount(y, weights=w, minlength=k) / w.sum()
    for name, cls in all_calibrators():
        if name in _LABEL_FREE:
            continue
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            P = cls().fit(Z, y, sample_weight=w).predict_proba(Z[:1])[0]
        if any("base rate" in str(r.message) for r in rec):
            continue
        np.testing.assert_allclose(P, base, atol=1.0 / n, err_msg=name)


def test_vector_scaler_on_constant_binary_rows_is_the_base_rate():
    from skcal import VectorScaler

    y = np.r_[np.ones(30, int), np.zeros(90, int)]
    for Z in (np.tile([0.3, -1.2], (120, 1)), np.full(120, 2.5)):
        for alpha in (0.0, 1e-4):
            est = VectorScaler(alpha=alpha).fit(Z, y)
            np.testing.assert_allclose(est.predict_proba(Z[:2])[:, 1], 0.25, atol=1e-4)
