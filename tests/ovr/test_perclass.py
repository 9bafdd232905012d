"""The per-class family (beta, histogram, scaling-binning, BBQ, spline, Venn-Abers) against independent references.

Every reference is the paper's definition written plainly here (brute force on
small sets, SciPy solves) or the peer package that defines the method.
"""

import warnings

import numpy as np
import pytest
from scipy.interpolate import BSpline
from scipy.optimize import minimize
from scipy.special import expit, gammaln, log_expit
from sklearn.isotonic import IsotonicRegression

from _helpers import quiet
from skcal import (
    BBQCalibrator,
    BetaCalibrator,
    HistogramCalibrator,
    ScalingBinningCalibrator,
    SplineCalibrator,
    VennAbersCalibrator,
)
from skcal.datasets import load_logits

ALL = [BetaCalibrator, HistogramCalibrator, ScalingBinningCalibrator, BBQCalibrator,
       SplineCalibrator, VennAbersCalibrator]


def _binary(n=400, seed=0, scale=3.0, shift=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = scale * (2 * y - 1 + rng.normal(size=n)) + shift
    return s, y


# --------------------------------------------------------------------- beta
def _beta_features(s, parameters):
    x1, x2 = log_expit(s), -log_expit(-s)
    if parameters == "abm":
        return np.column_stack([x1, x2, np.ones_like(s)]), 2
    if parameters == "am":
        return np.column_stack([s, np.ones_like(s)]), 1
    return np.column_stack([x1 + np.log(2), x2 - np.log(2)]), 2


def _bounded_logistic_ref(X, y, w, n_bounded):
    """The constrained MLE by SciPy's L-BFGS-B at high precision."""
    def F(th):
        f = X @ th
        return np.dot(w, np.logaddexp(0, f) - y * f) / w.sum()

    def G(th):
        return X.T @ (w * (expit(X @ th) - y)) / w.sum()

    bounds = [(0, None)] * n_bounded + [(None, None)] * (X.shape[1] - n_bounded)
    r = minimize(F, np.full(X.shape[1], 0.1), jac=G, method="L-BFGS-B", bounds=bounds,
                 options=dict(ftol=1e-15, gtol=1e-11, maxiter=20000))
    return r.x, F


@pytest.mark.parametrize("parameters", ["abm", "am", "ab"])
@pytest.mark.parametrize("case", ["plain", "skewed", "b_at_bound"])
def test_beta_matches_bounded_scipy_solve(parameters, case):
    s, y = _binary(600, seed=1)
    if case == "skewed":
        s = s ** 3 / 20.0
    if case == "b_at_bound":  # data from a = 1, b = -0.8: the constraint b >= 0 is active
        rng = np.random.default_rng(1)
        s = rng.uniform(-6, 6, 600)
        f = log_expit(s) + 0.8 * log_expit(-s) + 1.0
        y = (rng.random(600) < expit(f)).astype(int)
    w = np.random.default_rng(2).uniform(0.2, 2.0, s.size)
    est = quiet(BetaCalibrator(parameters=parameters).fit, s, y, sample_weight=w)
    X, nb = _beta_features(s, parameters)
    ref, F = _bounded_logistic_ref(X, y.astype(float), w, nb)
    got = {"abm": [est.a_, est.b_, est.c_], "am": [est.a_, est.c_],
           "ab": [est.a_, est.b_]}[parameters]
    assert est.a_ >= 0 and est.b_ >= 0
    assert F(np.array(got)) <= F(ref) + 1e-12  # at least as good as the reference optimum
    np.testing.assert_allclose(got, ref, atol=2e-5)
    if case == "b_at_bound" and parameters != "am":
        assert est.b_ == 0.0 and est.a_ > 0


def test_beta_matches_betacal():
    betacal = pytest.importorskip("betacal")
    s, y = _binary(800, seed=3)
    p = expit(s)
    for parameters in ("abm", "am", "ab"):
        est = BetaCalibrator(parameters=parameters).fit(s, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = betacal.BetaCalibration(parameters=parameters).fit(p, y)
            q_ref = ref.predict(p)
        warnings.resetwarnings()  # betacal switches warnings off globally
        # betacal's LogisticRegression stops at lbfgs' default tolerance
        np.testing.assert_allclose(est.predict_proba(s)[:, 1], q_ref, atol=2e-4)
        np.testing.assert_allclose([est.a_, est.b_], ref.calibrator_.map_[:2], rtol=2e-3)


def _multiclass_beta_data(n=20_000, k=4, seed=7):
    """float32 logits; class 0's labels follow a beta map with b < 0 (its bound b >= 0 is active)."""
    rng = np.random.default_rng(seed)
    Z = (2.0 * rng.normal(size=(n, k))).astype(np.float32)
    Zd = Z.astype(np.float64)
    P = np.exp(Zd - Zd.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    q0 = expit(1.2 * np.log(P[:, 0]) + 0.8 * np.log1p(-P[:, 0]) + 0.5)
    cum = np.cumsum(P[:, 1:], axis=1)
    other = 1 + np.minimum((cum < rng.random(n)[:, None] * cum[:, -1:]).sum(1), k - 2)
    y = np.where(rng.random(n) < q0, 0, other)
    return Z, y


@pytest.mark.parametrize("parameters,weighted", [("abm", True),
                                                 ("am", False), ("ab", False)])
def test_beta_multiclass_batched_fit_matches_bounded_scipy_solve(parameters, weighted, monkeypatch):
    """float32 logits with many rows take the batched float32 solver (all classes per pass)."""
    from skcal.ovr import _beta, _beta_ovr

    # the batched solver from 20,000 rows (40,000 by default), with every
    # level of its warm start (every 16th and every 2nd row)
    monkeypatch.setattr(_beta, "BATCH_MIN_ROWS", 20_000)
    calls = []
    monkeypatch.setattr(_beta, "fit_beta_ovr32",
                        lambda *a, **k: calls.append(1) or _beta_ovr.fit_beta_ovr32(*a, **k))
    Z, y = _multiclass_beta_data()
    w = np.random.default_rng(3).uniform(0.2, 2.0, y.size) if weighted else None
    est = quiet(BetaCalibrator(parameters=parameters).fit, Z, y, sample_weight=w)
    # one-vs-rest scores from the float32 logits, in float64, written plainly
    Zd = Z.astype(np.float64)
    L = np.log(np.exp(Zd - Zd.max(1, keepdims=True)).sum(1, keepdims=True)) + Zd.max(1, keepdims=True)
    logp = Zd - L
    S = logp - np.log(-np.expm1(logp))
    ww = np.ones(y.size) if w is None else w
    for k in range(Z.shape[1]):
        X, nb = _beta_features(S[:, k], parameters)
        ref, F = _bounded_logistic_ref(X, (y == k).astype(float), ww, nb)
        got = {"abm": [est.a_[k], est.b_[k], est.c_[k]], "am": [est.a_[k], est.c_[k]],
               "ab": [est.a_[k], est.b_[k]]}[parameters]
        assert est.a_[k] >= 0 and est.b_[k] >= 0
        # the features are computed in float32 (relative rounding ~1e-7): the
        # optimum moves by about that, the loss by far less
        assert F(np.array(got)) <= F(ref) + 1e-10
        np.testing.assert_allclose(got, ref, atol=2e-5 * max(1.0, np.abs(ref).max()))
    if parameters != "am":  # class 0's data come from b = -0.8: the bound is active
        assert est.b_[0] == 0.0 and est.a_[0] > 0
    assert calls


def test_beta_uninformative_and_constant_scores_give_base_rate_with_warning():
    s, y = _binary(300, seed=4)
    w = np.ones_like(s)
    for X in (-s, np.full_like(s, 0.7)):  # decreasing relation / constant
        with pytest.warns(UserWarning, match="base rate"):
            est = BetaCalibrator().fit(X, y)
        np.testing.assert_allclose(est.predict_proba(X)[:, 1], y.mean(), rtol=1e-12)
        assert est.a_ == est.b_ == 0.0
    del w


# ---------------------------------------------------------------- histogram
@pytest.mark.parametrize("smoothing", [None, "laplace", 4.0])
def test_histogram_equal_mass_matches_definition(smoothing):
    s, y = _binary(100, seed=5)
    est = HistogramCalibrator(n_bins=10, smoothing=smoothing).fit(s, y)
    order = np.argsort(s)
    chunks = np.array_split(order, 10)  # 100 distinct scores: 10 bins of 10
    base = y.mean()
    for c in chunks:
        m, n = y[c].sum(), c.size
        ref = {None: m / n, "laplace": (m + 1) / (n + 2)}.get(
            smoothing, (m + 4.0 * base) / (n + 4.0) if smoothing == 4.0 else None)
        np.testing.assert_allclose(est.predict_proba(s[c])[:, 1], ref, rtol=1e-12)


def test_histogram_uniform_bins_and_empty_bin_rule():
    rng = np.random.default_rng(6)
    p = np.concatenate([rng.uniform(0.0, 0.3, 50), rng.uniform(0.7, 1.0, 50)])
    y = (rng.random(100) < p).astype(int)
    s = np.log(p) - np.log1p(-p)
    est = HistogramCalibrator(n_bins=10, strategy="uniform", smoothing=None).fit(s, y)
    b = np.minimum((p * 10).astype(int), 9)
    freq = {k: y[b == k].mean() for k in np.unique(b)}
    for k, f in freq.items():
        np.testing.assert_allclose(est.bin_probabilities_[k], f)
    # bins 3..6 are empty: nearest non-empty bin (2 or 7), mean of both at 4.5
    np.testing.assert_allclose(est.bin_probabilities_[3], freq[2])
    np.testing.assert_allclose(est.bin_probabilities_[6], freq[7])
    # netcal's HistogramBinning on the same probabilities (non-empty bins)
    netcal = pytest.importorskip("netcal.binning")
    ref = netcal.HistogramBinning(bins=10).fit(p, y)
    got = est.predict_proba(s)[:, 1]
    np.testing.assert_allclose(got, ref.transform(p), atol=1e-12)


def test_histogram_ties_are_never_split():
    s = np.repeat(np.arange(5.0), [50, 1, 1, 1, 47])
    y = np.arange(s.size) % 2
    est = HistogramCalibrator(n_bins=10, smoothing=None).fit(s, y)
    assert est.bin_edges_.size < 9  # merged bins
    for v in np.unique(s):
        assert np.unique(est.predict_proba(s[s == v])[:, 1]).size == 1


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
def test_histogram_n_bins_far_beyond_the_samples_is_refused_at_fit(strategy):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), np.arange(50) % 3
    est = HistogramCalibrator(n_bins=10**6, strategy=strategy)
    with pytest.raises(ValueError, match=r"n_bins=1000000 is more than both the 50 samples"):
        est.fit(X, y)
    assert not hasattr(est, "bin_edges_")
    # up to the metrics' floor of 10,000 bins, more bins than rows still fit
    fitted = HistogramCalibrator(n_bins=100, strategy=strategy).fit(X, y)
    assert len(fitted.bin_edges_) == 3


# ----------------------------------------------------------- scaling-binning
def test_scaling_binning_matches_definition():
    s, y = _binary(500, seed=7)
    est = ScalingBinningCalibrator(n_bins=10).fit(s, y)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    X = np.column_stack([s, np.ones_like(s)])
    ab, _ = _bounded_logistic_ref(X, t, np.ones_like(s), 0)
    np.testing.assert_allclose([est.a_, est.b_], ab, rtol=1e-6)
    g = expit(X @ ab)
    for c in np.array_split(np.argsort(s), 10):
        np.testing.assert_allclose(est.predict_proba(s[c])[:, 1], g[c].mean(), rtol=1e-6)


def test_scaling_binning_multiclass_matches_definition():
    """Multiclass: all Platt steps in the same passes (batched solver), then the bins per class."""
    Z, y = _multiclass_beta_data(n=3000, k=3)
    est = ScalingBinningCalibrator(n_bins=10).fit(Z.astype(np.float64), y)
    Zd = Z.astype(np.float64)
    L = np.log(np.exp(Zd - Zd.max(1, keepdims=True)).sum(1, keepdims=True)) + Zd.max(1, keepdims=True)
    logp = Zd - L
    S = logp - np.log(-np.expm1(logp))  # one-vs-rest log-odds, written plainly
    for k in range(3):
        s, t = S[:, k], (y == k).astype(int)
        n_pos, n_neg = t.sum(), (1 - t).sum()
        tt = np.where(t == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
        X = np.column_stack([s, np.ones_like(s)])
        ab, _ = _bounded_logistic_ref(X, tt, np.ones_like(s), 0)
        np.testing.assert_allclose([est.a_[k], est.b_[k]], ab, rtol=1e-6)
        g = expit(X @ ab)
        means = [g[c].mean() for c in np.array_split(np.argsort(s), 10)]  # 300 distinct scores per bin
        np.testing.assert_allclose(est.bin_probabilities_[k], means, rtol=1e-6)


# --------------------------------------------------------------------- BBQ
def test_bbq_matches_bayesian_average_of_definition():
    rng = np.random.default_rng(8)
    n = 60
    s = rng.normal(size=n) * 2
    y = (rng.random(n) < expit(s)).astype(int)
    est = BBQCalibrator().fit(s, y)
    ss, ys = np.sort(s), y[np.argsort(s)]
    x = np.linspace(-6, 6, 101)
    r = n ** (1 / 3)
    preds, lms = [], []
    for B in range(max(1, int(np.floor(r / 10))), int(min(np.ceil(n / 5), np.ceil(10 * r))) + 1):
        bins = np.array_split(np.arange(n), B) if n % B == 0 else None
        # equal mass: bin b closes at the first index reaching b n / B
        cuts = sorted({int(np.ceil(b * n / B - 1e-9)) - 1 for b in range(1, B)} - {n - 1})
        starts, stops = [0] + [c + 1 for c in cuts], [c + 1 for c in cuts] + [n]
        edges = [(ss[c] + ss[c + 1]) / 2 for c in cuts]
        pe = [0.0] + list(expit(edges)) + [1.0]
        nb, lm, vals = len(starts), 0.0, []
        for i, (a, b) in enumerate(zip(starts, stops)):
            N, m = b - a, ys[a:b].sum()
            pm = (pe[i] + pe[i + 1]) / 2
            al, be = 2 / nb * pm, 2 / nb * (1 - pm)
            lm += (gammaln(2 / nb) - gammaln(N + 2 / nb) + gammaln(m + al) - gammaln(al)
                   + gammaln(N - m + be) - gammaln(be))
            vals.append((m + al) / (N + al + be))
        del bins
        lms.append(lm)
        preds.append(np.array(vals)[np.searchsorted(edges, x, side="right")])
    wts = np.exp(np.array(lms) - max(lms))
    ref = (wts[:, None] * np.array(preds)).sum(0) / wts.sum()
    np.testing.assert_allclose(est.predict_proba(x)[:, 1], ref, rtol=1e-12)


# ------------------------------------------------------------------ spline
def _spline_ref(s, y, knots_u, mu, sd, lam, monotone=False):
    u = (s - mu) / sd
    t = np.r_[[u.min()] * 4, knots_u, [u.max()] * 4]
    p = t.size - 4
    X = BSpline.design_matrix(u, t, 3).toarray()
    # roughness penalty by 10-point Gauss-Legendre per knot interval
    kn = np.unique(t)
    g, gw = np.polynomial.legendre.leggauss(10)
    xq = ((kn[1:] + kn[:-1])[:, None] / 2 + (kn[1:] - kn[:-1])[:, None] / 2 * g).ravel()
    wq = ((kn[1:] - kn[:-1])[:, None] / 2 * gw).ravel()
    D2 = BSpline(t, np.eye(p), 3).derivative(2)(xq)
    P = (D2 * wq[:, None]).T @ D2

    n_pos, n_neg = y.sum(), (1 - y).sum()
    y = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))  # Platt's targets

    def F(th):
        f = X @ th
        return np.mean(np.logaddexp(0, f) - y * f) + lam / 2 * th @ P @ th

    def G(th):
        return X.T @ (expit(X @ th) - y) / y.size + lam * P @ th

    r = minimize(F, np.zeros(p), jac=G, method="L-BFGS-B",
                 options=dict(ftol=1e-15, gtol=1e-10, maxiter=50000))
    return X @ r.x


def test_spline_single_penalty_matches_scipy_solve():
    s, y = _binary(400, seed=9)
    s = s + 0.05 * s ** 2  # a curved relation
    est = SplineCalibrator(n_knots=5, penalties=[1e-2]).fit(s, y)
    mu, sd = s.mean(), s.std()
    knots_u = (est.knots_[1:-1] - mu) / sd
    ref = _spline_ref(s, y, knots_u, mu, sd, 1e-2)
    got = est.transform(s)[:, 1] - est.transform(s)[:, 0]
    np.testing.assert_allclose(got, ref, atol=2e-5)


def test_spline_large_penalty_is_platt():
    s, y = _binary(300, seed=10)
    est = SplineCalibrator(penalties=[1e5]).fit(s, y)
    X = np.column_stack([s, np.ones_like(s)])
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))  # Platt's targets
    ab, _ = _bounded_logistic_ref(X, t, np.ones_like(s), 0)
    f = est.transform(s)[:, 1] - est.transform(s)[:, 0]
    np.testing.assert_allclose(f, X @ ab, atol=1e-3)
    # beyond the calibration range the map continues linearly
    far = np.array([s.max() + 10, s.max() + 20])
    ff = est.transform(far)[:, 1] - est.transform(far)[:, 0]
    np.testing.assert_allclose(ff[1] - ff[0], 10 * ab[0], rtol=1e-3)


def test_spline_cv_picks_the_penalty_with_the_lowest_held_out_loss():
    s, y = _binary(500, seed=11)
    est = SplineCalibrator(penalties=[1e-6, 1e-2, 1e2]).fit(s, y)
    assert est.penalty_ == [1e-6, 1e-2, 1e2][int(np.argmin(est.cv_loss_))]


# -------------------------------------------------------------- Venn-Abers
def _va_brute(s, y, w, x, unit=1.0):
    p = []
    for lab in (0, 1):
        ir = IsotonicRegression(out_of_bounds="clip").fit(
            np.append(s, x), np.append(y, lab).astype(float), np.append(w, unit))
        p.append(ir.predict([x])[0])
    return p


def _row_unit(w):
    """One row for integer weights: the gcd of the positive weights (the rule of weight_unit)."""
    return float(np.gcd.reduce(w[w > 0].astype(int)))


def test_venn_abers_matches_brute_force_isotonic_fits():
    rng = np.random.default_rng(12)
    for trial in range(40):
        n = int(rng.integers(1, 15))
        s = rng.integers(0, 6, n).astype(float)  # ties
        y = (rng.random(n) < 0.5).astype(int)
        w = rng.integers(1, 4, n).astype(float) if trial % 2 else np.ones(n)
        if len(np.unique(y)) < 2:
            continue
        est = VennAbersCalibrator().fit(s, y, sample_weight=w)
        x = np.arange(-1.0, 7.0, 0.5)
        p0, p1 = est.predict_interval(x)
        unit = _row_unit(w)  # the test point weighs one row
        ref = np.array([_va_brute(s, y, w, xi, unit) for xi in x])
        np.testing.assert_allclose(p0, ref[:, 0], atol=1e-12)
        np.testing.assert_allclose(p1, ref[:, 1], atol=1e-12)
        np.testing.assert_allclose(est.predict_proba(x)[:, 1], p1 / (1 - p0 + p1), rtol=1e-12)


def test_venn_abers_fractional_weights_match_brute_force():
    rng = np.random.default_rng(13)
    s, y = rng.normal(size=30), rng.integers(0, 2, 30)
    w = rng.uniform(0.1, 3.0, 30)
    est = VennAbersCalibrator().fit(s, y, sample_weight=w)
    x = np.linspace(-3, 3, 25)
    p0, p1 = est.predict_interval(x)
    # weights not proportional to whole numbers: the test point weighs their mean
    ref = np.array([_va_brute(s, y, w, xi, w.mean()) for xi in x])
    np.testing.assert_allclose(np.c_[p0, p1], ref, atol=1e-12)


def test_cvap_matches_fold_definition():
    s, y = _binary(80, seed=14)
    est = VennAbersCalibrator(method="cvap", n_folds=4).fit(s, y)
    x = np.linspace(-8, 8, 9)
    rank = np.searchsorted(np.unique(s), s)
    P0, P1 = [], []
    for f in range(4):
        keep = rank % 4 != f
        pr = np.array([_va_brute(s[keep], y[keep], np.ones(keep.sum()), xi) for xi in x])
        P0.append(pr[:, 0])
        P1.append(pr[:, 1])
    g1 = np.prod(P1, 0) ** 0.25
    g0 = np.prod(1 - np.array(P0), 0) ** 0.25
    np.testing.assert_allclose(est.predict_proba(x)[:, 1], g1 / (g0 + g1), rtol=1e-10)
    lo, hi = est.predict_interval(x)
    p = est.predict_proba(x)[:, 1]
    assert np.all(lo <= p + 1e-15) and np.all(p <= hi + 1e-15)


def test_venn_abers_matches_venn_abers_package():
    va = pytest.importorskip("venn_abers")
    s, y = _binary(300, seed=15)
    s = np.round(s, 1)  # ties between calibration and test scores
    x = np.round(np.linspace(-9, 9, 181), 1)
    est = VennAbersCalibrator().fit(s, y)
    ref = va.VennAbers().fit(np.c_[1 - expit(s), expit(s)], y)
    p_ref, p01 = ref.predict_proba(np.c_[1 - expit(x), expit(x)])
    p0, p1 = est.predict_interval(x)
    np.testing.assert_allclose(np.c_[p0, p1], p01, atol=1e-12)
    np.testing.assert_allclose(est.predict_proba(x), p_ref, atol=1e-12)


def test_venn_abers_multiclass_interval_shapes():
    rng = np.random.default_rng(16)
    y = rng.integers(0, 3, 200)
    Z = 3 * (np.eye(3)[y] + rng.normal(size=(200, 3)))
    est = VennAbersCalibrator().fit(Z, y)
    p0, p1 = est.predict_interval(Z[:7])
    assert p0.shape == p1.shape == (7, 3) and np.all(p0 <= p1)


# -------------------------------------------------------------- invariants
MONOTONE = [BetaCalibrator(), ScalingBinningCalibrator(), VennAbersCalibrator(),
            VennAbersCalibrator(method="cvap"), SplineCalibrator(monotone=True)]


@pytest.mark.parametrize("est", MONOTONE, ids=lambda e: repr(e))
def test_monotone_maps_are_monotone(est):
    s, y = _binary(400, seed=17)
    s = np.where(s > 2, s + np.sin(3 * s) * 2, s)  # a wiggly relation
    quiet(est.fit, s, y)
    x = np.linspace(s.min() - 5, s.max() + 5, 2001)
    q = est.predict_proba(x)[:, 1]
    assert np.all(np.diff(q) >= -1e-12)


@pytest.mark.parametrize(
    "est",
    [BetaCalibrator(), SplineCalibrator(n_knots=8, penalties=[1e-3, 1.0]),
     HistogramCalibrator(smoothing=None)],
    ids=lambda e: repr(e),
)
def test_weight_scale_invariance(est):
    rng = np.random.default_rng(18)
    y = rng.integers(0, 3, 300)
    Z = 3 * (np.eye(3)[y] + rng.normal(size=(300, 3)))
    w = rng.uniform(0.1, 2.0, 300)
    P = quiet(est.fit, Z, y, sample_weight=w).predict_proba(Z)
    for c in (1e-6, 1e6):
        np.testing.assert_allclose(
            quiet(est.fit, Z, y, sample_weight=c * w).predict_proba(Z), P, atol=1e-9)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_lowers_test_nll_on_bundled_overconfident_sets(cls):
    for name in ("sst2_gpt2_zeroshot", "cifar10_resnet20_chenyaofo"):
        if cls is SplineCalibrator and name.startswith("cifar"):
            continue  # ~10 s on two cores; covered by benchmarks/bench_perclass_quality.py
        d = load_logits(name)
        Zt = d.logits_test.astype(np.float64)
        lp = Zt - Zt.max(1, keepdims=True)
        lp -= np.log(np.exp(lp).sum(1, keepdims=True))
        before = -lp[np.arange(len(d.y_test)), d.y_test].mean()
        est = quiet(cls().fit, d.logits_val.astype(np.float64), d.y_val)
        P = est.predict_proba(Zt)
        after = -np.log(P[np.arange(len(d.y_test)), d.y_test]).mean()
        assert after < before, (name, before, after)


def test_venn_abers_interval_follows_torch_input():
    torch = pytest.importorskip("torch")
    s, y = _binary(200, seed=19)
    est = VennAbersCalibrator(method="cvap").fit(s, y)
    p0, p1 = est.predict_interval(torch.from_numpy(s))
    assert isinstance(p0, torch.Tensor) and p0.dtype == torch.float64
    r0, r1 = est.predict_interval(s)
    np.testing.assert_allclose(p0.numpy(), r0, rtol=1e-12)
    np.testing.assert_allclose(p1.numpy(), r1, rtol=1e-12)


def test_spline_on_separated_scores_is_finite_and_platt_like():
    s = np.r_[np.linspace(-3, -0.5, 6), np.linspace(0.5, 3, 6)]
    y = np.r_[np.zeros(6, int), np.ones(6, int)]
    est = SplineCalibrator().fit(s, y)
    p = est.predict_proba(s)[:, 1]
    # smoothed targets 1/8 and 7/8 bound the fit away from 0 and 1
    assert np.all((p > 0.01) & (p < 0.99))


def test_spline_with_one_overwhelming_weight_is_that_rows_constant_map():
    """A weight of 1e300 among ones: the others' share is below eps (NaN before; fresh38)."""
    rng = np.random.default_rng(13)
    X = 2.0 * rng.normal(size=(200, 3))
    y = (X + rng.gumbel(size=(200, 3))).argmax(axis=1)
    for big in (1e300, 1e20):
        w = np.ones(200)
        w[0] = big
        with pytest.warns(UserWarning, match="less than float64's eps of the weight"):
            est = SplineCalibrator().fit(X, y, sample_weight=w)
        P = est.predict_proba(X)
        assert np.isfinite(P).all()
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        assert (P.argmax(axis=1) == y[0]).all()  # a constant map: the heavy row's class


@pytest.mark.parametrize("m", [0, 1, 9, 64])
def test_step_lookup_columns_cell_table_matches_searchsorted(m):
    """The batched lookup of the binning maps (cell tables) against one searchsorted per column."""
    from skcal._backend._steps import step_lookup_columns

    rng = np.random.default_rng(m)
    n, K = 3000, 7
    S = 3.0 * rng.normal(size=(n, K))
    edges = [np.sort(3.0 * rng.normal(size=m)) for _ in range(K)]
    if m == 1:
        edges[0] = np.array([0.0])
    if m >= 2:  # edges one ulp apart, and a column of tied edges' neighbours
        edges[1] = np.array([1.0, np.nextafter(1.0, 2.0)] + list(np.linspace(2, 3, m - 2)))
    for j, e in enumerate(edges):  # points on, and one ulp around, every edge
        if m:
            S[:m, j], S[m:2 * m, j] = e, np.nextafter(e, -np.inf)
            S[2 * m:3 * m, j] = np.nextafter(e, np.inf)
    S[0, -1], S[1, -1], S[2, -1], S[3, -1] = np.inf, -np.inf, 1e300, -1e300
    values = [rng.random(m + 1) for _ in range(K)]
    ref = np.stack([np.asarray(v)[np.searchsorted(e, S[:, j], side="right")]
                    for j, (e, v) in enumerate(zip(edges, values))], axis=1)
    np.testing.assert_array_equal(step_lookup_columns(S, edges, values), ref)


def test_histogram_class_absent_from_calibration_set_keeps_positive_probability():
    # found by a fresh-user run: the m-estimate's base rate 0 gave the absent
    # class probability exactly 0 in every bin (infinite log loss)
    import warnings

    from skcal import HistogramCalibrator

    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 3, n)  # class 3 never occurs
    Z = rng.normal(size=(n, 4))
    Z[np.arange(n), y] += 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = HistogramCalibrator().fit(Z, y)
    total = n  # unit weights: counts in rows
    P = est.predict_proba(Z + np.array([0, 0, 0, 5.0]))
    assert P[:, 3].min() > 0
    # the bin value is the m-estimate with the rule-of-succession base rate
    values, counts = est.bin_probabilities_[3], est.bin_weights_[3]
    np.testing.assert_allclose(values, 2.0 * (1.0 / (total + 2.0)) / (counts + 2.0))


def test_scaling_binning_on_anti_informative_scores_warns():
    """A negative Platt slope (scores reversed) is kept -- it is the NLL-better
    map -- but the decreasing map is reported, in the binary and batched paths."""
    rng = np.random.default_rng(21)
    y = rng.integers(0, 2, 400)
    s = -3.0 * (2 * y - 1 + rng.normal(size=400))  # anti-informative log-odds
    with pytest.warns(UserWarning, match="anti-informative"):
        est = ScalingBinningCalibrator().fit(s, y)
    assert est.a_ < 0
    q = est.predict_proba(np.sort(s))[:, 1]
    assert q[0] > q[-1]  # decreasing, as warned
    k = rng.integers(0, 3, 400)
    Z = 3.0 * (np.eye(3)[k] + rng.normal(size=(400, 3)))
    Z[:, 0] *= -1.0
    with pytest.warns(UserWarning, match="class 0: the scores are anti-informative"):
        ScalingBinningCalibrator().fit(Z, k)
