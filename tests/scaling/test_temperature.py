"""TemperatureScaler against an independent high-precision solve and its edge cases."""

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import logsumexp, softmax
from sklearn.exceptions import ConvergenceWarning

from skcal import TemperatureScaler
from skcal.datasets import make_logits
from skcal.scaling._temperature import TEMPERATURE_MAX, TEMPERATURE_MIN

from conftest import SHARED_SETS, load_shared


def reference_temperature(Z, y, w=None):
    """Independent solve: root of dNLL/dbeta by Brent's method in float64.

    Written from the definition with SciPy's ``softmax`` (no chunking, no
    row-max reuse, no Newton): ``dNLL/dbeta = mean_w(sum_k p_k z_k - z_y)``.
    """
    Z = np.asarray(Z, dtype=np.float64)
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    zy = Z[np.arange(len(y)), y]

    def grad(beta):
        P = softmax(beta * Z, axis=1)
        return np.sum(w * ((P * Z).sum(axis=1) - zy)) / w.sum()

    beta = brentq(grad, 1e-4, 1e4, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return 1.0 / beta


def nll(P, y):
    return -np.mean(np.log(P[np.arange(len(y)), y]))


@pytest.mark.parametrize("name", SHARED_SETS)
def test_temperature_matches_high_precision_solve_on_real_sets(name):
    d = load_shared(name)
    ts = TemperatureScaler().fit(d["logits_val"], d["y_val"])
    T_ref = reference_temperature(d["logits_val"], d["y_val"])
    assert ts.temperature_ == pytest.approx(T_ref, rel=5e-7)  # issue 2: 1e-6
    # argmax never changes
    P = ts.predict_proba(d["logits_test"])
    np.testing.assert_array_equal(P.argmax(1), d["logits_test"].argmax(1))


# temperatures published in ../shared/data/README.md (3 decimals)
_PUBLISHED_T = {
    "cifar10_densenet40_guo": 2.883,
    "cifar100_densenetbc100_netcal": 2.129,
    "cifar10_lenet5_netcal": 1.387,
    "imdb_cv_labelerrors": 1.739,
}


@pytest.mark.parametrize("name", sorted(_PUBLISHED_T))
def test_temperature_matches_published_value(name):
    d = load_shared(name)
    ts = TemperatureScaler().fit(d["logits_val"], d["y_val"])
    assert round(ts.temperature_, 3) == _PUBLISHED_T[name]
    before = nll(softmax(d["logits_test"].astype(float), axis=1), d["y_test"])
    after = nll(ts.predict_proba(d["logits_test"]), d["y_test"])
    assert after < before


def test_temperature_recovers_known_temperature(rng):
    n, k, T0 = 40000, 5, 2.5
    Z = 6.0 * rng.normal(size=(n, k))
    P = softmax(Z / T0, axis=1)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    ts = TemperatureScaler().fit(Z, y)
    assert ts.temperature_ == pytest.approx(T0, rel=0.03)
    assert ts.temperature_ == pytest.approx(reference_temperature(Z, y), rel=5e-7)
    assert ts.n_iter_ <= 12


def test_temperature_sample_weight_matches_weighted_reference(rng):
    Z = 3 * rng.normal(size=(500, 4))
    y = rng.integers(0, 4, 500)
    Z[np.arange(500), y] += 3
    w = rng.random(500) * 3
    ts = TemperatureScaler().fit(Z, y, sample_weight=w)
    assert ts.temperature_ == pytest.approx(reference_temperature(Z, y, w), rel=5e-7)


def test_temperature_objective_is_minimal(rng):
    """The NLL at the fitted T is below the NLL at nearby temperatures."""
    Z = 4 * rng.normal(size=(800, 3))
    y = rng.integers(0, 3, 800)
    Z[np.arange(800), y] += 4
    T = TemperatureScaler().fit(Z, y).temperature_

    def f(t):
        return np.mean(logsumexp(Z / t, axis=1) - Z[np.arange(800), y] / t)

    assert f(T) <= min(f(T * (1 + 1e-4)), f(T * (1 - 1e-4)))


def test_temperature_probability_input_equals_logit_input(rng):
    Z = 5 * rng.normal(size=(300, 3))
    y = rng.integers(0, 3, 300)
    a = TemperatureScaler().fit(Z, y)
    b = TemperatureScaler(input_type="probabilities").fit(softmax(Z, axis=1), y)
    assert b.temperature_ == pytest.approx(a.temperature_, rel=1e-9)
    np.testing.assert_allclose(
        b.predict_proba(softmax(Z, axis=1)), a.predict_proba(Z), atol=1e-12
    )


def test_temperature_anti_informative_logits_hit_upper_bound(rng):
    Z = rng.normal(size=(300, 3))
    y = Z.argmin(1)  # the logits point away from the truth: optimum at beta < 0
    with pytest.warns(ConvergenceWarning, match="anti-informative"):
        ts = TemperatureScaler().fit(Z, y)
    scale = max(1.0, (Z.max(1) - Z[np.arange(300), y]).max())
    assert ts.temperature_ == pytest.approx(TEMPERATURE_MAX * scale, rel=1e-12)
    P = ts.predict_proba(Z)
    assert np.isfinite(P).all()
    np.testing.assert_array_equal(P.argmax(1), Z.argmax(1))


def test_temperature_uninformative_logits_hit_upper_bound(rng):
    # every row appears once with each label: the optimum is beta -> 0 (T -> inf)
    base = rng.normal(size=(50, 3))
    Z = np.repeat(base, 3, axis=0)
    y = np.tile(np.arange(3), 50)
    with pytest.warns(ConvergenceWarning, match="uninformative"):
        ts = TemperatureScaler().fit(Z, y)
    scale = max(1.0, (Z.max(1) - Z[np.arange(150), y]).max())
    assert ts.temperature_ == pytest.approx(TEMPERATURE_MAX * scale, rel=1e-12)


def test_temperature_separable_data_hits_lower_bound(rng):
    Z = rng.normal(size=(200, 3))
    y = Z.argmax(1)
    Z[np.arange(200), y] += 5.0  # margin: NLL decreases as T -> 0
    with pytest.warns(ConvergenceWarning, match="separate"):
        ts = TemperatureScaler().fit(Z, y)
    assert ts.temperature_ == TEMPERATURE_MIN
    P = ts.predict_proba(Z)
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(1), 1)


def test_temperature_max_iter_warns(rng):
    Z = 5 * rng.normal(size=(300, 3))
    y = rng.integers(0, 3, 300)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        ts = TemperatureScaler(max_iter=1).fit(Z, y)
    assert ts.n_iter_ == 1


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_temperature_extreme_logits_are_finite(dtype, rng):
    Z = rng.normal(size=(400, 4))
    y = rng.integers(0, 4, 400)
    Z[np.arange(400), y] += 1.0
    Z = (Z / np.abs(Z).max() * 1e4).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ts = TemperatureScaler().fit(Z, y)
    assert 0 < ts.temperature_ < np.inf
    P = ts.predict_proba(Z)
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(1), 1, atol=1e-6)
    np.testing.assert_array_equal(P.argmax(1), Z.astype(np.float64).argmax(1))


def test_temperature_float32_fits_like_float64_on_real_data():
    d = load_shared("cifar10_densenet40_guo")
    Z32 = d["logits_val"]
    t32 = TemperatureScaler().fit(Z32, d["y_val"]).temperature_
    t64 = TemperatureScaler().fit(Z32.astype(np.float64), d["y_val"]).temperature_
    assert t32 == pytest.approx(t64, rel=1e-7)
    assert t32 != 1.0


def test_temperature_binary_scores(rng):
    s = 4 * rng.normal(size=500)
    y = (rng.random(500) < 1 / (1 + np.exp(-s / 3))).astype(int)
    ts = TemperatureScaler().fit(s, y)
    Z = np.column_stack([np.zeros(500), s])
    assert ts.temperature_ == pytest.approx(reference_temperature(Z, y), rel=5e-7)
    assert ts.temperature_ == pytest.approx(3, rel=0.25)
    P = ts.predict_proba(s)
    np.testing.assert_allclose(P[:, 1], 1 / (1 + np.exp(-s / ts.temperature_)), rtol=1e-12)


@pytest.mark.parametrize("scale", [1e7, 1e30, 1e98])
def test_temperature_scales_with_huge_logits(scale, rng):
    """TS is scale-equivariant: T(cZ) = c T(Z), also far beyond the 1e6 bound."""
    Z = 4 * rng.normal(size=(1000, 5))
    y = rng.integers(0, 5, 1000)
    Z[np.arange(1000), y] += 4
    t1 = TemperatureScaler().fit(Z, y).temperature_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ts = TemperatureScaler().fit(Z * scale, y)
    assert ts.temperature_ == pytest.approx(scale * t1, rel=1e-6)
    np.testing.assert_allclose(ts.predict_proba(Z * scale), TemperatureScaler().fit(Z, y).predict_proba(Z), atol=1e-9)


def test_temperature_rejects_weights_whose_sum_overflows(rng):
    Z = rng.normal(size=(50, 3))
    y = np.arange(50) % 3
    with pytest.raises(ValueError, match="overflow"):
        TemperatureScaler().fit(Z, y, sample_weight=np.full(50, 1e307))


def test_warm_start_chain_of_subsamples():
    from skcal.scaling._temperature import _warm_start_strides

    assert _warm_start_strides(7_999) == []
    assert _warm_start_strides(8_000) == [8]          # 1,000 rows
    assert _warm_start_strides(100_000) == [80, 10]   # 1,250 then 10,000 rows
    assert _warm_start_strides(1_000_000) == [256, 32]
    # each level keeps 1/8 .. 1/32 of the rows of the level above
    for n in (8_000, 50_000, 123_457, 10**7):
        s = [1] + _warm_start_strides(n)[::-1]
        assert all(8 <= b // a <= 32 for a, b in zip(s, s[1:]))


def test_temperature_large_set_two_passes_to_reference(rng):
    """Warm start on subsamples + Halley steps: the exact optimum in 2-3 full passes."""
    n, k, T0 = 120_000, 8, 1.7
    Z = 5.0 * rng.normal(size=(n, k))
    P = softmax(Z / T0, axis=1)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    ts = TemperatureScaler().fit(Z, y)
    assert ts.temperature_ == pytest.approx(reference_temperature(Z, y), rel=1e-9)
    assert ts.n_iter_ <= 3


@pytest.mark.parametrize("T0", [0.02, 0.5, 40.0, 3000.0])
def test_temperature_far_from_the_start_converges(T0, rng):
    """From T = 1, optima 50x below to 3000x above are reached (bracket expansion)."""
    n, k = 3_000, 5
    Z = 2.0 * T0 * rng.normal(size=(n, k))
    P = softmax(Z / T0, axis=1)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    ts = TemperatureScaler().fit(Z, y)
    assert ts.temperature_ == pytest.approx(T0, rel=0.2)
    assert ts.temperature_ == pytest.approx(reference_temperature(Z, y), rel=1e-9)
    assert ts.n_iter_ <= 12


@pytest.mark.parametrize(
    "Z, y, dtype",
    [
        ([[0.0, -1000.0], [0.0, 0.0]], [0, 1], np.float64),
        ([[0.0, -1.0], [0.0, 0.0]], [0, 1], np.float32),
        ([[0.0, -1.0], [0.0, 0.0]], [0, 1], np.float64),
        ([[5, 0, 0], [0, 0, 0], [1, 1, 1]], [0, 1, 2], np.float32),
        ([[5, 0, 0], [0, 0, 0], [1, 1, 1]], [0, 1, 2], np.float64),
    ],
)
def test_temperature_separable_except_tied_rows_goes_to_small_T(Z, y, dtype):
    Z = np.asarray(Z, dtype=dtype)
    n_tied = sum(len(set(r)) == 1 for r in Z.tolist())
    # the infimum of the NLL: saturated rows give 0, tied rows log K each
    nll_limit = n_tied * math.log(Z.shape[1]) / len(y)
    with pytest.warns(ConvergenceWarning, match="separate the calibration set") as rec:
        ts = TemperatureScaler().fit(Z, y)
    assert not any("uninformative" in str(w.message) for w in rec)
    assert not any("max_iter" in str(w.message) for w in rec)
    assert ts.temperature_ == pytest.approx(1e-6)
    assert -ts.score(Z, y) == pytest.approx(nll_limit, rel=1e-6)


def test_temperature_all_rows_tied_still_goes_to_large_T():
    Z = np.zeros((4, 3))
    with pytest.warns(ConvergenceWarning, match="uninformative"):
        ts = TemperatureScaler().fit(Z, [0, 1, 2, 0])
    assert ts.temperature_ >= 1e6


def test_temperature_forest_like_log_probabilities():
    # -708 entries (log of exact zeros) plus exact ties, as forests and kNN give
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 3, n)
    Z = np.full((n, 3), -708.0)
    Z[np.arange(n), y] = 0.0
    Z[::5] = np.log(1 / 3)  # ties
    with pytest.warns(ConvergenceWarning, match="separate"):
        ts = TemperatureScaler().fit(Z, y)
    expected = len(Z[::5]) * math.log(3) / n
    assert -ts.score(Z, y) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_temperature_predict_is_argmax_of_near_tied_float32_logits(backend):
    if backend == "torch":
        pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    Z = (rng.normal(size=(200, 2)) + 0.5 * np.eye(2)[y]).astype(np.float32)
    ts = TemperatureScaler(backend=backend).fit(Z, y)
    X = np.array([[0.1, 0.10000001], [0.10000001, 0.1]], dtype=np.float32)
    assert X[0, 1] > X[0, 0]
    np.testing.assert_array_equal(ts.predict(X), [1, 0])
    # a big temperature rounds both probabilities to 0.5: predict_proba ties
    ts.temperature_ = 1e3
    np.testing.assert_array_equal(ts.predict(X), [1, 0])


def test_temperature_constant_rows_warn_that_base_rate_is_out_of_reach():
    y = np.r_[np.zeros(20, int), np.ones(30, int), np.full(50, 2)]
    Z = np.tile([1.0, 0.0, 3.0], (100, 1))
    with pytest.warns(UserWarning, match="base rate"):
        TemperatureScaler().fit(Z, y)


@pytest.mark.parametrize("c", [1e-12, 1e-8, 1e-3, 1e3, 1e6])
def test_temperature_bounds_scale_with_logits(c):
    # fit(c * Z) gives c * T: the bounds are relative to the logit scale, so a
    # tiny scale no longer hits a fixed lower bound (with a wrong "separate" warning)
    from skcal.datasets import load_cifar10_resnet20

    d = load_cifar10_resnet20()
    t1 = TemperatureScaler().fit(d.logits_val, d.y_val).temperature_
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        tc = TemperatureScaler().fit(d.logits_val * c, d.y_val).temperature_
    assert tc / c == pytest.approx(t1, rel=1e-6)
    assert 1.5 < t1 < 1.9


def test_temperature_one_extreme_logit_is_named_not_uninformative():
    # informative logits (T about 3) and one wrong-class logit of 1e99: that row
    # alone drives T to its bound, and the warning must say so
    Z, y = make_logits(300, 3, scale=5.0, random_state=0)
    Z[0, (y[0] + 1) % 3] = 1e99
    with pytest.warns(ConvergenceWarning, match=r"1 row\(s\) have extreme logits "
                      r"\(row 0 spans 1e\+99") as rec:
        ts = TemperatureScaler().fit(Z, y)
    assert not any("uninformative" in str(w.message) for w in rec)
    assert ts.temperature_ == pytest.approx(TEMPERATURE_MAX * 1e99, rel=1e-6)
    # without the outlier the same logits fit an ordinary temperature
    assert TemperatureScaler().fit(Z[1:], y[1:]).temperature_ < 10
