"""Degenerate bins: few distinct scores, one-row bins of the debiased error, its
interval at 0, and the equal-mass bin rule against Kumar et al.'s reference."""

import warnings

import numpy as np
import pytest

from skcal import metrics as M

# --------------------------------------------------------------------------
# equal-mass bins with at most n_bins distinct scores: one bin per value
# --------------------------------------------------------------------------


def _per_value_ece(s, o):
    """ECE with one bin per distinct score (plain loop)."""
    total = 0.0
    for v in np.unique(s):
        sel = s == v
        total += sel.sum() * abs(o[sel].mean() - v)
    return total / s.shape[0]


@pytest.mark.parametrize("scores,counts", [
    ([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], [1] * 7),
    ([0.1, 0.1, 0.3, 0.5, 0.5, 0.5, 0.9], [2, 1, 3, 1]),
])
def test_quantile_few_distinct_scores_one_bin_per_value(scores, counts, backend):
    s = np.array(scores)
    o = np.array([0, 1, 0, 1, 1, 0, 1])
    kw = dict(kind="binary", strategy="quantile", n_bins=10)
    with backend.context():
        curve = M.reliability_curve(o, backend.convert(s), **kw)
        ece = M.expected_calibration_error(o, backend.convert(s), **kw)
    np.testing.assert_array_equal(curve.bin_count, counts)
    np.testing.assert_allclose(curve.prob_pred, np.unique(s))
    assert ece == pytest.approx(_per_value_ece(s, o), rel=1e-12)
    # the edges separate the values: each value lies in its own (lo, hi] bin
    edges = curve.bin_edges
    assert edges.shape[0] == len(counts) + 1
    assert np.all(np.diff(edges) > 0)


def test_quantile_seven_values_ten_bins_was_merged():
    # the inverted-CDF edges of 7 distinct values at 10 levels are the values
    # 0..6 minus one: the smallest two values shared the first bin (ECE 0.3857)
    s = np.linspace(0.1, 0.7, 7)
    o = np.array([0, 1, 0, 1, 1, 0, 1])
    got = M.expected_calibration_error(o, s, kind="binary", strategy="quantile",
                                       n_bins=10)
    merged = (2 * abs(0.5 - 0.15) + sum(abs(o[i] - s[i]) for i in range(2, 7))) / 7
    assert got == pytest.approx(np.mean(np.abs(o - s)))
    assert got != pytest.approx(merged)


def test_quantile_many_distinct_scores_keep_inverted_cdf_edges(rng):
    s = rng.uniform(size=50)
    w = rng.integers(1, 4, size=50).astype(float)
    o = (rng.uniform(size=50) < s).astype(int)
    curve = M.reliability_curve(o, s, kind="binary", strategy="quantile", n_bins=6,
                                sample_weight=w)
    ref = np.unique(np.quantile(s, np.linspace(0, 1, 7), method="inverted_cdf",
                                weights=w))
    np.testing.assert_allclose(curve.bin_edges, ref)


# --------------------------------------------------------------------------
# debiased error: one-row bins, basic interval
# --------------------------------------------------------------------------


def test_debiased_one_row_bin_warns_and_counts_zero():
    # uniform bins of width 0.25: one row in (0, 0.25], the rest above 0.5
    s = np.array([0.1, 0.6, 0.6, 0.7, 0.7, 0.9, 0.9, 0.95])
    o = np.array([1, 0, 1, 1, 0, 1, 1, 1])
    with pytest.warns(UserWarning, match="1 non-empty bin.*fewer than 2 samples"):
        got = M.debiased_calibration_error(o, s, kind="binary", strategy="uniform",
                                           n_bins=4)
    sq = 0.0
    for lo, hi in [(0.5, 0.75), (0.75, 1.0)]:  # the bins of >= 2 rows
        sel = (s > lo) & (s <= hi)
        n, acc, conf = sel.sum(), o[sel].mean(), s[sel].mean()
        sq += n / 8 * ((acc - conf) ** 2 - acc * (1 - acc) / (n - 1))
    assert got == pytest.approx(np.sqrt(max(sq, 0.0)), rel=1e-12)


def test_debiased_no_warning_when_every_bin_has_two_rows(rng):
    s = rng.uniform(size=200)
    o = (rng.uniform(size=200) < s).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M.debiased_calibration_error(o, s, kind="binary", n_bins=10)


def test_debiased_basic_interval_stays_non_negative():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)  # calibrated: estimate near 0
    res = M.confidence_interval("debiased_calibration_error", y, p, kind="binary",
                                method="basic", random_state=0, n_resamples=200)
    # unclipped, 2 * estimate - q_high is about -0.086 here
    assert res.low == 0.0
    assert 0.0 <= res.low <= res.high <= 1.0
    assert 2 * res.estimate - np.quantile(res.bootstrap_distribution, 0.975) < 0


# --------------------------------------------------------------------------
# debiased error vs uncertainty-calibration (Kumar et al. 2019)
# --------------------------------------------------------------------------


def _overconfident(n, k, seed):
    rng = np.random.default_rng(seed)
    Z = rng.normal(scale=3.0, size=(n, k))
    q = np.exp(Z / 2 - (Z / 2).max(axis=1, keepdims=True))
    y = np.array([rng.choice(k, p=r / r.sum()) for r in q])
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    return y, P / P.sum(axis=1, keepdims=True)


def _debiased_of_chunks(conf, correct, chunks):
    """The debiased L2 error of the sorted rows cut into ``chunks`` (index arrays)."""
    n, sq = conf.shape[0], 0.0
    for idx in chunks:
        m, acc, cf = idx.shape[0], correct[idx].mean(), conf[idx].mean()
        if m >= 2:
            sq += m / n * ((acc - cf) ** 2 - acc * (1 - acc) / (m - 1))
    return np.sqrt(max(sq, 0.0))


def _two_definitions(y, P, n_bins):
    conf, correct = P.max(axis=1), (P.argmax(axis=1) == y).astype(float)
    order = np.argsort(conf, kind="stable")
    n = conf.shape[0]
    # skcal: inverted-CDF edges, bin j ends at sorted row ceil(j n / M) - 1
    ends = np.ceil(np.arange(1, n_bins + 1) * n / n_bins).astype(int)
    inverted_cdf = np.split(order, ends[:-1])
    # uncertainty-calibration 0.1.4: np.array_split of the sorted rows (the
    # first n % M chunks one row larger), edges at midpoints between chunks
    array_split = np.array_split(order, n_bins)
    return (_debiased_of_chunks(conf, correct, inverted_cdf),
            _debiased_of_chunks(conf, correct, array_split))


def test_debiased_equal_mass_bins_vs_kumar_reference():
    y, P = _overconfident(2000, 5, 0)  # 2000 = 15 * 133 + 5: the rules differ
    ours_def, kumar_def = _two_definitions(y, P, 15)
    got = M.debiased_calibration_error(y, P)  # top-label, 15 equal-mass bins
    assert got == pytest.approx(ours_def, rel=1e-12)
    assert abs(ours_def - kumar_def) > 1e-5  # a 4th-digit difference
    cal = pytest.importorskip("calibration")
    ref = cal.get_calibration_error(P, y, p=2, debias=True, mode="top-label")
    assert ref == pytest.approx(kumar_def, rel=1e-12)


def test_debiased_equal_mass_bins_agree_when_n_is_a_multiple():
    y, P = _overconfident(1500, 4, 1)  # 1500 = 15 * 100: the same bins
    ours_def, kumar_def = _two_definitions(y, P, 15)
    assert ours_def == pytest.approx(kumar_def, rel=1e-12)
    got = M.debiased_calibration_error(y, P)
    assert got == pytest.approx(kumar_def, rel=1e-12)
    cal = pytest.importorskip("calibration")
    ref = cal.get_calibration_error(P, y, p=2, debias=True, mode="top-label")
    assert got == pytest.approx(ref, rel=1e-10)
