"""Intervals, debiased / smooth ECE, calibration tests and decompositions.

Every value is compared with an independent reference: the peer packages
(relplot, uncertainty-calibration, MAPIE, scipy.stats.bootstrap,
scipy.stats.binomtest, scikit-learn's IsotonicRegression) or a plain
implementation written here.
"""

import warnings

import numpy as np
import pytest
import scipy.stats
from conftest import load_shared
from scipy.special import softmax

from skcal import metrics as M


def _binary(rng, n, power=1.0):
    p = rng.uniform(0.02, 0.98, size=n)
    y = (rng.uniform(size=n) < p**power).astype(int)
    return y, p


def _multiclass(rng, n, K, temp=1.5):
    Z = rng.normal(size=(n, K)) * 2
    P = softmax(Z, axis=1)
    Q = softmax(Z / temp, axis=1)
    y = (Q.cumsum(1) > rng.uniform(size=(n, 1))).argmax(1)
    return y, P


# --------------------------------------------------------------------------
# smooth ECE against relplot
# --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [20, 300, 4000])
@pytest.mark.parametrize("power", [1.0, 2.0])
def test_smooth_ece_matches_relplot_random(n, power):
    relplot = pytest.importorskip("relplot")
    rng = np.random.default_rng(n)
    y, p = _binary(rng, n, power)
    value, sigma = M.smooth_calibration_error(y, p, kind="binary",
                                              return_bandwidth=True)
    ref, ref_sigma = relplot.smECE(p, y, return_width=True)
    assert sigma == ref_sigma
    assert abs(value - ref) < 1e-6


@pytest.mark.parametrize("name", ["cifar10_lenet5_netcal", "imdb_cv_labelerrors",
                                  "sst2_gpt2_zeroshot"])
def test_smooth_ece_matches_relplot_real(name):
    relplot = pytest.importorskip("relplot")
    d = load_shared(name)
    P = softmax(d["logits_test"].astype(np.float64), axis=1)
    conf, correct = relplot.multiclass_logits_to_confidences(P, d["y_test"], probs=True)
    ref = relplot.smECE(conf, correct)
    value = M.smooth_calibration_error(d["y_test"], d["logits_test"],
                                       input_type="logits")
    assert abs(value - ref) < 1e-6


def test_smooth_ece_weights_are_repetitions(rng):
    y, p = _binary(rng, 300, 1.5)
    w = rng.integers(0, 4, size=300)
    rep = np.repeat(np.arange(300), w)
    a = M.smooth_calibration_error(y, p, kind="binary", sample_weight=w)
    b = M.smooth_calibration_error(y[rep], p[rep], kind="binary")
    assert a == pytest.approx(b, rel=1e-10, abs=1e-12)


def test_smooth_reliability_curve_is_kernel_regression(rng):
    y, p = _binary(rng, 2000, 2.0)
    curve = M.smooth_reliability_curve(y, p, kind="binary", n_points=51)
    # where scores are dense, the smoothed frequency tracks p**2 (the truth),
    # and it is the kernel regression of the outcomes (plain reference)
    mid = (curve.x > 0.2) & (curve.x < 0.8)
    assert np.max(np.abs(curve.prob_true[mid] - curve.x[mid] ** 2)) < 0.08
    assert np.trapezoid(curve.density, curve.x) == pytest.approx(1.0)
    s = curve.bandwidth
    t0 = curve.x[25]  # reflections at 0 and 1 of a plain Gaussian kernel
    k = (np.exp(-(t0 - p) ** 2 / (2 * s * s)) + np.exp(-(t0 + p) ** 2 / (2 * s * s))
         + np.exp(-(t0 - (2 - p)) ** 2 / (2 * s * s)))
    assert curve.prob_true[25] == pytest.approx(np.sum(k * y) / np.sum(k), abs=2e-3)
    assert curve.smooth_ece == pytest.approx(
        M.smooth_calibration_error(y, p, kind="binary"))


# --------------------------------------------------------------------------
# debiased L2 calibration error against uncertainty-calibration
# --------------------------------------------------------------------------


def _uniform_bins_ref(cal):
    return cal.utils.get_equal_prob_bins


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_debiased_matches_uncertainty_calibration_binary(seed):
    cal = pytest.importorskip("calibration")
    rng = np.random.default_rng(seed)
    y, p = _binary(rng, 1500, 1.4)
    ours = M.debiased_calibration_error(y, p, kind="binary", strategy="uniform",
                                        n_bins=10)
    ref = cal.lower_bound_scaling_ce(p, y, p=2, debias=True, num_bins=10,
                                     binning_scheme=_uniform_bins_ref(cal))
    assert ours == pytest.approx(ref, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("kind,mode", [("top-label", "top-label"),
                                       ("classwise", "marginal")])
def test_debiased_matches_uncertainty_calibration_multiclass(kind, mode):
    cal = pytest.importorskip("calibration")
    rng = np.random.default_rng(5)
    y, P = _multiclass(rng, 3000, 6)
    ours = M.debiased_calibration_error(y, P, kind=kind, strategy="uniform")
    ref = cal.lower_bound_scaling_ce(P, y, p=2, debias=True, num_bins=15,
                                     binning_scheme=_uniform_bins_ref(cal), mode=mode)
    assert ours == pytest.approx(ref, rel=1e-10)


def test_debiased_quantile_plain_reference(rng):
    y, p = _binary(rng, 777, 1.3)
    edges = np.quantile(p, np.linspace(0, 1, 9))
    ids = np.clip(np.searchsorted(edges, p, side="left") - 1, 0, 7)
    total = 0.0
    for m in range(8):
        sel = ids == m
        nm = sel.sum()
        if nm < 2:
            continue
        acc, conf = y[sel].mean(), p[sel].mean()
        total += nm / 777 * ((acc - conf) ** 2 - acc * (1 - acc) / (nm - 1))
    ref = np.sqrt(max(total, 0))
    got = M.debiased_calibration_error(y, p, kind="binary", n_bins=8)
    assert got == pytest.approx(ref)


def test_debiased_below_plugin_and_weights_are_repetitions(rng):
    y, P = _multiclass(rng, 1000, 4, temp=1.0)  # calibrated
    plugin = M.rms_calibration_error(y, P, strategy="quantile")
    assert M.debiased_calibration_error(y, P) < plugin
    w = rng.integers(0, 3, size=1000)
    rep = np.repeat(np.arange(1000), w)
    a = M.debiased_calibration_error(y, P, sample_weight=w, strategy="uniform")
    b = M.debiased_calibration_error(y[rep], P[rep], strategy="uniform")
    assert a == pytest.approx(b, rel=1e-9)


# --------------------------------------------------------------------------
# calibration tests against MAPIE and the papers' formulas
# --------------------------------------------------------------------------


@pytest.mark.parametrize("power", [1.0, 1.3])
def test_cumulative_tests_match_mapie(power):
    mc = pytest.importorskip("mapie.metrics.calibration")
    rng = np.random.default_rng(7)
    y, p = _binary(rng, 800, power)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ks_ref = mc.kolmogorov_smirnov_statistic(y, p)
        ku_ref = mc.kuiper_statistic(y, p)
        ksp_ref = mc.kolmogorov_smirnov_p_value(y, p)
        kup_ref = mc.kuiper_p_value(y, p)
        sp_ref = mc.spiegelhalter_statistic(y, p)
    ks = M.kolmogorov_smirnov_calibration_test(y, p, kind="binary")
    ku = M.kuiper_calibration_test(y, p, kind="binary")
    sp = M.spiegelhalter_test(y, p, kind="binary")
    # MAPIE jitters the scores by a relative 1e-8 before sorting
    assert ks.statistic == pytest.approx(ks_ref, rel=1e-6)
    assert ks.pvalue == pytest.approx(ksp_ref, rel=1e-5)
    # MAPIE's Kuiper range omits C_0 = 0 (the paper's path starts at 0)
    order = np.argsort(p)
    c = np.cumsum(y[order] - p[order]) / p.shape[0]
    sigma = np.sqrt(np.sum(p * (1 - p))) / p.shape[0]
    assert (c.max() - c.min()) / sigma == pytest.approx(ku_ref, rel=1e-6)
    full = (max(c.max(), 0) - min(c.min(), 0)) / sigma
    assert ku.statistic == pytest.approx(full, rel=1e-12)
    if c.max() > 0 > c.min():  # the path crosses 0: same statistic
        assert ku.pvalue == pytest.approx(kup_ref, rel=1e-5)
    assert sp.statistic == pytest.approx(sp_ref, rel=1e-12)
    # two-sided here, one-sided (1 - Phi(Z)) in MAPIE
    assert sp.pvalue == pytest.approx(2 * scipy.stats.norm.sf(abs(sp_ref)), rel=1e-12)


def test_cumulative_tests_plain_definition(rng):
    y, p = _binary(rng, 300)
    order = np.argsort(p)
    c = np.concatenate([[0.0], np.cumsum(y[order] - p[order]) / 300])
    sigma = np.sqrt(np.sum(p * (1 - p))) / 300
    ks = M.kolmogorov_smirnov_calibration_test(y, p, kind="binary")
    ku = M.kuiper_calibration_test(y, p, kind="binary")
    assert ks.statistic == pytest.approx(np.abs(c).max() / sigma, rel=1e-12)
    assert ku.statistic == pytest.approx((c.max() - c.min()) / sigma, rel=1e-12)


def test_brownian_tail_probabilities_by_quadrature():
    """sup|B| and range of B on [0, 1]: both series against direct integration."""
    from scipy.integrate import quad

    from skcal.metrics._calibration_tests import _bm_range_sf, _sup_abs_bm_sf

    def range_density(r):  # Feller (1951): 8 sum (-1)^(k-1) k^2 phi(k r)
        k = np.arange(1, 200)
        return 8 * np.sum((-1.0) ** (k - 1) * k**2 * scipy.stats.norm.pdf(k * r))

    for x in [0.9, 1.2, 1.49, 1.51, 2.0, 3.0]:
        ref = quad(range_density, x, 40, limit=200)[0]
        assert _bm_range_sf(x) == pytest.approx(ref, rel=1e-6)
    for x in [0.5, 0.99, 1.01, 2.0, 4.0, 6.0]:
        k = np.arange(0, 200)
        theta = 1 - 4 / np.pi * np.sum((-1.0) ** k / (2 * k + 1) * np.exp(
            -((2 * k + 1) ** 2) * np.pi**2 / (8 * x * x)))
        if x < 3:
            assert _sup_abs_bm_sf(x) == pytest.approx(theta, rel=1e-9)
    # tail: reflection principle bound P(sup|B| >= x) <= 4 Phi_bar(x), and ~ it
    assert _sup_abs_bm_sf(6.0) == pytest.approx(4 * scipy.stats.norm.sf(6.0), rel=1e-6)


def test_tests_detect_miscalibration_and_weights_are_repetitions(rng):
    p = rng.uniform(0.02, 0.98, size=3000)
    y = (rng.uniform(size=3000) < 0.5 + 0.6 * (p - 0.5)).astype(int)  # over-confident
    for test in (M.spiegelhalter_test, M.kolmogorov_smirnov_calibration_test,
                 M.kuiper_calibration_test):
        assert test(y, p, kind="binary").pvalue < 1e-6
        w = rng.integers(0, 3, size=3000)
        rep = np.repeat(np.arange(3000), w)
        a = test(y, p, kind="binary", sample_weight=w)
        b = test(y[rep], p[rep], kind="binary")
        assert a.statistic == pytest.approx(b.statistic, rel=1e-10)
    y, p = _binary(rng, 3000, 1.0)
    assert M.spiegelhalter_test(y, p, kind="binary").pvalue > 1e-3


# --------------------------------------------------------------------------
# bootstrap intervals against scipy.stats.bootstrap
# --------------------------------------------------------------------------


_CASES = [
    ("ece", {"kind": "top-label"}),
    ("rmsce", {"kind": "top-label", "strategy": "quantile"}),
    ("mce", {"kind": "classwise", "class_index": 1, "n_bins": 5}),
    ("ece", {"kind": "classwise"}),
    ("mce", {"kind": "classwise", "strategy": "quantile"}),
    ("debiased_calibration_error", {"kind": "classwise", "strategy": "uniform",
                                    "n_bins": 4}),
    ("brier", {}),
    ("nll", {}),
    ("accuracy", {}),
]


@pytest.mark.parametrize("metric,params", _CASES)
def test_bca_equals_scipy_bca(metric, params):
    """Our O(n) jackknife BCa equals scipy's BCa (its own O(n^2) jackknife)."""
    from skcal.metrics._intervals import _build

    rng = np.random.default_rng(11)
    y, P = _multiclass(rng, 150, 3, temp=3.0)
    ours = M.confidence_interval(metric, y, P, method="BCa", n_resamples=300,
                                 random_state=4, **params)
    stat, _ = _build(metric, y, P, None, "probabilities", None, params)
    ref = scipy.stats.bootstrap(
        (np.arange(150),), lambda i, axis=-1: stat(i), vectorized=True,
        n_resamples=300, method="BCa", rng=np.random.default_rng(4),
    )
    assert ours.low == pytest.approx(ref.confidence_interval.low, rel=1e-9, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, rel=1e-9, abs=1e-12)


def _loop_metric(metric, params):
    """The public metric function, for a plain per-resample loop."""
    return {
        "ece": lambda y, P: M.expected_calibration_error(y, P, **params),
        "rmsce": lambda y, P: M.rms_calibration_error(y, P, **params),
        "brier": lambda y, P: M.brier_score(y, P),
        "nll": lambda y, P: M.negative_log_likelihood(y, P),
        "accuracy": lambda y, P: float(np.mean(P.argmax(1) == y)),
        "debiased_calibration_error": lambda y, P: M.debiased_calibration_error(
            y, P, **params),
    }[metric]


@pytest.mark.parametrize("metric,params", [
    ("ece", {"kind": "top-label", "n_bins": 10}),
    ("ece", {"kind": "classwise", "n_bins": 10}),
    ("rmsce", {"kind": "top-label", "n_bins": 10}),
    ("debiased_calibration_error", {"strategy": "uniform", "n_bins": 10}),
    ("brier", {}), ("nll", {}), ("accuracy", {}),
])
def test_percentile_interval_is_resampled_metric(metric, params):
    """Same resampled rows as scipy draws, metric recomputed by the public function.

    Uniform bins are the same on every resample, so the fixed-bin bootstrap
    equals recomputing the metric on the resampled rows.
    """
    rng = np.random.default_rng(3)
    y, P = _multiclass(rng, 120, 3)
    func = _loop_metric(metric, params)
    ours = M.confidence_interval(metric, y, P, n_resamples=200, random_state=8,
                                 **params)
    ref = scipy.stats.bootstrap(
        (np.arange(120),), lambda i: func(y[i], P[i]), vectorized=False,
        n_resamples=200, method="percentile", rng=np.random.default_rng(8),
    )
    assert ours.estimate == pytest.approx(func(y, P), rel=1e-12, abs=1e-15)
    assert ours.low == pytest.approx(ref.confidence_interval.low, rel=1e-9)
    assert ours.high == pytest.approx(ref.confidence_interval.high, rel=1e-9)


@pytest.mark.parametrize("metric,params", _CASES)
def test_interval_estimate_equals_metric(metric, params):
    rng = np.random.default_rng(2)
    y, P = _multiclass(rng, 400, 2)
    res = M.confidence_interval(metric, y, P, n_resamples=50, random_state=0, **params)
    if metric == "mce":
        ref = M.maximum_calibration_error(y, P, **params)
    elif metric == "rmsce":
        ref = M.rms_calibration_error(y, P, **params)
    else:
        ref = _loop_metric(metric, params)(y, P)
    assert res.estimate == pytest.approx(ref, rel=1e-12, abs=1e-15)
    assert res.low <= res.high


def test_interval_deterministic_float32_torch_and_batch(rng):
    y, P = _multiclass(rng, 500, 4)
    a = M.confidence_interval("ece", y, P, random_state=0, n_resamples=200)
    b = M.confidence_interval("ece", y, P, random_state=0, n_resamples=200, batch=7)
    c = M.confidence_interval("ece", y, P.astype(np.float32), random_state=0,
                              n_resamples=200)
    assert (a.low, a.high) == (b.low, b.high)
    assert c.low == pytest.approx(a.low, abs=1e-6)
    assert c.high == pytest.approx(a.high, abs=1e-6)
    torch = pytest.importorskip("torch")
    t = M.confidence_interval("ece", torch.as_tensor(y), torch.as_tensor(P),
                              random_state=0, n_resamples=200)
    assert (t.low, t.high) == pytest.approx((a.low, a.high), abs=1e-12)


def test_paired_difference(rng):
    y, P = _multiclass(rng, 600, 3)
    Q = softmax(np.log(P) / 1.5, axis=1)
    d = M.paired_difference_interval("nll", y, P, Q, random_state=1, n_resamples=300)
    assert d.estimate == pytest.approx(
        M.negative_log_likelihood(y, P) - M.negative_log_likelihood(y, Q))
    a = M.confidence_interval("nll", y, P, random_state=1, n_resamples=300)
    b = M.confidence_interval("nll", y, Q, random_state=1, n_resamples=300)
    np.testing.assert_allclose(d.bootstrap_distribution,
                               a.bootstrap_distribution - b.bootstrap_distribution)
    assert d.high - d.low < (a.high - a.low) + (b.high - b.low)


def test_interval_errors(rng):
    y, p = _binary(rng, 50)
    with pytest.raises(ValueError, match="metric must be one of"):
        M.confidence_interval("f1", y, p)
    with pytest.raises(ValueError, match="'method' parameter of confidence_interval"):
        M.confidence_interval("ece", y, p, method="bca")
    with pytest.raises(ValueError, match="n_resamples"):
        M.confidence_interval("ece", y, p, n_resamples=1)
    with pytest.raises(ValueError, match="confidence_level"):
        M.confidence_interval("ece", y, p, confidence_level=1.0)
    with pytest.raises(TypeError, match="does not take"):
        M.confidence_interval("brier", y, p, n_bins=3)
    with pytest.raises(ValueError, match="at least 2 samples"):
        M.confidence_interval("brier", [1], [0.3])


# --------------------------------------------------------------------------
# binomial per-bin intervals
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method,scipy_method", [("clopper-pearson", "exact"),
                                                 ("wilson", "wilson")])
def test_binomial_interval_matches_binomtest(method, scipy_method):
    for k, n in [(0, 5), (3, 5), (5, 5), (17, 40), (1, 1000)]:
        ref = scipy.stats.binomtest(k, n).proportion_ci(0.9, method=scipy_method)
        low, high = M.binomial_interval(k, n, confidence_level=0.9, method=method)
        assert float(low) == pytest.approx(ref.low, abs=1e-12)
        assert float(high) == pytest.approx(ref.high, abs=1e-12)


def test_binomial_interval_jeffreys():
    low, high = M.binomial_interval([0, 4, 10], [10, 10, 10], method="jeffreys")
    # equal-tailed Beta(k + 1/2, n - k + 1/2) posterior interval, ends 0 / 1 kept
    assert low[0] == 0 and high[2] == 1
    assert low[1] == pytest.approx(scipy.stats.beta(4.5, 6.5).ppf(0.025))
    assert high[1] == pytest.approx(scipy.stats.beta(4.5, 6.5).ppf(0.975))
    assert high[0] == pytest.approx(scipy.stats.beta(0.5, 10.5).ppf(0.975))


def test_reliability_curve_binomial_band_pure_bins_and_weights(rng):
    y = np.array([0] * 6 + [1] * 6)
    p = np.array([0.05] * 6 + [0.95] * 6)
    c = M.reliability_curve(y, p, kind="binary", n_bins=10, interval="clopper-pearson")
    assert np.all(c.prob_true_high - c.prob_true_low > 0.3)  # pure bins keep width
    boot = M.reliability_curve(y, p, kind="binary", n_bins=10, n_bootstrap=200,
                               random_state=0)
    assert np.all(boot.prob_true_high - boot.prob_true_low == 0)  # collapses
    y, p = _binary(rng, 200)
    w = rng.integers(0, 4, size=200)
    rep = np.repeat(np.arange(200), w)
    a = M.reliability_curve(y, p, kind="binary", interval="wilson", sample_weight=w)
    b = M.reliability_curve(y[rep], p[rep], kind="binary", interval="wilson")
    np.testing.assert_allclose(a.prob_true_low, b.prob_true_low, rtol=1e-10)
    with pytest.raises(ValueError, match="either interval or n_bootstrap"):
        M.reliability_curve(y, p, kind="binary", interval="wilson", n_bootstrap=5)


# --------------------------------------------------------------------------
# decompositions
# --------------------------------------------------------------------------


def _corp_reference(s, o, score):
    from sklearn.isotonic import IsotonicRegression

    fit = IsotonicRegression(y_min=0, y_max=1).fit(s, o).predict(s)
    base = np.full_like(s, o.mean())
    S, R, U = score(s, o).mean(), score(fit, o).mean(), score(base, o).mean()
    return S - R, U - R, U


def _bs(p, o):
    return (p - o) ** 2


def _ll(p, o):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(o == 1, np.log(np.where(p > 0, p, 1)),
                         np.log(np.where(p < 1, 1 - p, 1)))


@pytest.mark.parametrize("func,score", [(M.brier_decomposition, _bs),
                                        (M.log_loss_decomposition, _ll)])
def test_corp_matches_isotonic_reference(func, score, rng):
    y, p = _binary(rng, 500, 1.5)
    p = np.round(p, 2)  # ties
    d = func(y, p, kind="binary")
    mcb, dsc, unc = _corp_reference(p, y.astype(float), score)
    assert d.miscalibration == pytest.approx(mcb, rel=1e-9, abs=1e-12)
    assert d.discrimination == pytest.approx(dsc, rel=1e-9)
    assert d.uncertainty == pytest.approx(unc, rel=1e-12)
    assert d.score == pytest.approx(d.miscalibration - d.discrimination + d.uncertainty,
                                    abs=1e-14)
    assert d.miscalibration >= 0 and d.discrimination >= 0


def test_binned_brier_is_murphy_plus_within_bin_terms(rng):
    y, p = _binary(rng, 1000, 1.3)
    d = M.brier_decomposition(y, p, kind="binary", method="binned", n_bins=10)
    ids = np.minimum((p * 10).astype(int), 9)
    rel = res = wbv = wbc = 0.0
    obar = y.mean()
    for m in range(10):
        sel = ids == m
        if not sel.any():
            continue
        f, o = p[sel], y[sel]
        nk = sel.sum() / 1000
        rel += nk * (f.mean() - o.mean()) ** 2
        res += nk * (o.mean() - obar) ** 2
        wbv += np.sum((f - f.mean()) ** 2) / 1000
        wbc += 2 * np.sum((f - f.mean()) * (o - o.mean())) / 1000
    assert d.reliability == pytest.approx(rel, rel=1e-10)
    assert d.discrimination == pytest.approx(res, rel=1e-10)
    assert d.uncertainty == pytest.approx(obar * (1 - obar), rel=1e-12)
    assert d.miscalibration == pytest.approx(rel + wbv - wbc, rel=1e-9)
    assert d.score == pytest.approx(M.brier_score(y, p), rel=1e-12)


def test_classwise_decomposition_sums_to_brier_and_weights(rng):
    y, P = _multiclass(rng, 400, 4)
    d = M.brier_decomposition(y, P)
    assert d.score == pytest.approx(M.brier_score(y, P), rel=1e-12)
    w = rng.integers(0, 3, size=400)
    rep = np.repeat(np.arange(400), w)
    a = M.log_loss_decomposition(y, P, sample_weight=w)
    b = M.log_loss_decomposition(y[rep], P[rep])
    for k in ("score", "miscalibration", "discrimination", "uncertainty"):
        assert a[k] == pytest.approx(b[k], rel=1e-10)
    y2, p2 = _binary(rng, 300)
    assert M.log_loss_decomposition(y2, p2).score == pytest.approx(
        M.negative_log_likelihood(y2, p2), rel=1e-12)


# --------------------------------------------------------------------------
# dtypes, torch and scorers
# --------------------------------------------------------------------------


_SCALARS = [
    lambda y, P, **k: M.debiased_calibration_error(y, P, **k),
    lambda y, P, **k: M.smooth_calibration_error(y, P, **k),
    lambda y, P, **k: M.spiegelhalter_test(y, P, **k).statistic,
    lambda y, P, **k: M.kuiper_calibration_test(y, P, **k).statistic,
    lambda y, P, **k: M.brier_decomposition(y, P, **k).miscalibration,
    lambda y, P, **k: M.log_loss_decomposition(
        y, P, method="binned", **k).discrimination,
]


@pytest.mark.parametrize("func", _SCALARS)
def test_float32_and_torch_agree(func, rng):
    y, P = _multiclass(rng, 300, 3)
    ref = func(y, P)
    assert func(y, P.astype(np.float32)) == pytest.approx(ref, rel=1e-4, abs=1e-6)
    torch = pytest.importorskip("torch")
    got = func(torch.as_tensor(y), torch.as_tensor(P))
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-14)
    logits = np.log(P)
    got = func(y, logits, input_type="logits")
    assert got == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_new_scorers_in_cross_validation():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    clf = make_pipeline(StandardScaler(), LogisticRegression())
    for name in ("neg_debiased_calibration_error", "neg_smooth_calibration_error"):
        scores = cross_val_score(clf, X, y, cv=3, scoring=M.get_scorer(name))
        assert np.all(scores <= 0) and np.all(scores > -0.2)


# ------------------- BCa edge cases (issue 24 leftovers, item k)
@pytest.mark.parametrize("metric", ["nll", "brier", "ece", "accuracy"])
def test_bca_of_a_degenerate_difference_is_the_point_interval(metric):
    """Every resample of the paired difference of a model with itself is 0: the
    point interval [0, 0], without the RuntimeWarning of main's 0/0."""
    rng = np.random.default_rng(0)
    P = softmax(rng.normal(size=(200, 3)) * 2, axis=1)
    y = rng.integers(0, 3, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        d = M.paired_difference_interval(metric, y, P, P.copy(), method="BCa",
                                         n_resamples=50, random_state=0)
    assert (d.estimate, d.low, d.high) == (0.0, 0.0, 0.0)
    # resamples all equal, the estimate one rounding away (main: 0/0 in _bca)
    from skcal.metrics._intervals import _bca

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert _bca(np.full(50, 1e-17), 0.0, np.zeros(20), 0.05) == (0.0, 1e-17, False)


def test_bca_interval_always_contains_the_estimate_with_few_resamples():
    """With few resamples BCa can put both ends on one side of the estimate
    (main: ECE intervals excluding it); the documented rule moves the nearer end
    to the estimate, and all resamples on one side give the percentile interval."""
    from skcal.metrics._intervals import _bca

    rng = np.random.default_rng(1)
    P = softmax(rng.normal(size=(120, 3)) * 3, axis=1)
    y = rng.integers(0, 3, 120)
    for seed in range(40):
        for metric in ("ece", "nll"):
            ci = M.confidence_interval(metric, y, P, method="BCa", n_resamples=12,
                                       random_state=seed)
            assert ci.low <= ci.estimate <= ci.high, (metric, seed, ci)
    # the rules on a bootstrap distribution given directly
    theta_b = np.linspace(1.0, 2.0, 9)
    jack = np.linspace(0.0, 1.0, 20)
    low, high, beyond = _bca(theta_b, 0.5, jack, 0.05)
    # every resample above the estimate: percentile ends, the lower one moved
    assert (low, high) == pytest.approx((0.5, float(scipy.stats.quantile(theta_b, 0.975))))
    assert beyond is True
    assert _bca(np.full(30, 0.1), 0.1, np.full(10, 0.1), 0.05) == (0.1, 0.1, False)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_interval_of_infinite_nll_is_nan_without_warnings(method):
    # a true class with probability 0: NLL is inf, no interval is defined
    import warnings

    from skcal.metrics import confidence_interval

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, 200)
    P[0] = 0.0
    P[0, (y[0] + 1) % 3] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = confidence_interval("nll", y, P, method=method, n_resamples=50,
                                 random_state=0)
    assert ci.estimate == np.inf
    assert np.isnan(ci.low) and np.isnan(ci.high) and np.isnan(ci.standard_error)
    assert ci.bootstrap_distribution.shape == (50,)
    assert np.isnan(ci.bootstrap_distribution).all()


def test_bca_end_beyond_the_resamples_is_the_extreme_resample_as_in_scipy():
    """A calibrated model's binned ECE: resamples ~all above the estimate, so BCa's
    lower level is below 1/B; the end is the smallest resample (scipy's answer, the
    documented limitation), and more resamples reach further down."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.uniform(size=4000) < p).astype(int)
    P = np.column_stack([1 - p, p])
    ci = M.confidence_interval("ece", y, P, method="BCa", n_resamples=400, random_state=0)
    dist = ci.bootstrap_distribution
    assert np.mean(dist > ci.estimate) > 0.9  # the upward bias of the binned ECE
    B = dist.shape[0]
    assert dist.min() <= ci.low <= scipy.stats.quantile(np.sort(dist), 1 / B)
    more = M.confidence_interval("ece", y, P, method="BCa", n_resamples=4000, random_state=0)
    assert more.low <= ci.low


def test_bca_flags_an_interval_the_resamples_do_not_back():
    """fresh34: a well-calibrated model's binned ECE got the BCa interval
    [0.0062, 0.0070] around 0.0070 (98% of resamples above it) unflagged;
    ``beyond_resamples`` marks it, from BCa's own levels and quantiles."""
    from scipy.special import ndtr, ndtri

    rng = np.random.default_rng(0)
    n = 3000
    p = rng.uniform(0.5, 1.0, n)  # calibrated top-label confidences
    P = np.column_stack([p, 1 - p])
    y = (rng.uniform(size=n) > p).astype(int)  # class 0 right with probability p
    B = 200
    ece = M.confidence_interval("ece", y, P, method="BCa", n_resamples=B, random_state=0)
    theta_b = ece.bootstrap_distribution
    below = (np.count_nonzero(theta_b < ece.estimate)
             + np.count_nonzero(theta_b <= ece.estimate)) / (2 * B)
    assert below < 0.2  # mostly above: the upward bias of the binned ECE
    # BCa's lower level from the bias correction alone (acceleration ~ 0) is far below 1/B
    z0 = ndtri(below)
    assert ndtr(2 * z0 + ndtri(0.025)) < 1 / B
    assert ece.beyond_resamples is True
    # the NLL of the same rows: a smooth statistic, its resamples around the estimate
    nll = M.confidence_interval("nll", y, P, method="BCa", n_resamples=B, random_state=0)
    assert nll.beyond_resamples is False
    assert nll.low < nll.estimate < nll.high
    # other methods never set it
    pct = M.confidence_interval("ece", y, P, n_resamples=B, random_state=0)
    assert pct.beyond_resamples is False


def test_small_bins_warning_points_at_the_callers_line():
    """The debiased error's small-bin warning named scikit-learn's
    validate_params wrapper as its location (a fixed stacklevel=3)."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20)
    y = (rng.uniform(size=20) < p).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        M.debiased_calibration_error(y, p, n_bins=15)
    small = [w for w in caught if "fewer than 2 samples" in str(w.message)]
    assert len(small) == 1 and small[0].filename == __file__


def test_bca_flag_of_the_smooth_ece_from_scipys_interval():
    """fresh34b: the smooth ECE's BCa (scipy's, no O(n) jackknife) never set
    beyond_resamples; it is set when an end falls short of the second smallest
    or largest resample or the estimate lies outside."""
    rng = np.random.default_rng(0)
    n = 300
    p = rng.uniform(0.5, 1.0, n)
    P = np.column_stack([p, 1 - p])
    y = (rng.uniform(size=n) > p).astype(int)  # calibrated: resamples biased upwards
    ci = M.confidence_interval("smooth_ece", y, P, method="BCa", n_resamples=40,
                               random_state=0)
    tb = np.sort(ci.bootstrap_distribution)
    expected = bool(ci.low < tb[1] or ci.high > tb[-2]
                    or not ci.low <= ci.estimate <= ci.high)
    assert ci.beyond_resamples is expected
    assert expected  # the case: most resamples above the estimate
