"""Tests for skcal.metrics: binned calibration errors and the reliability curve.

Reference values are hand-computed on tiny inputs, computed by the plain
Python loops below (an independent implementation of the definitions), or
taken from scikit-learn's ``calibration_curve``.
"""

import math
import subprocess
import sys

import numpy as np
import pytest
from conftest import load_shared
from sklearn.calibration import calibration_curve

from _helpers import softmax
from skcal.metrics import (
    calibration_error,
    expected_calibration_error,
    maximum_calibration_error,
    reliability_curve,
    rms_calibration_error,
)

# --------------------------------------------------------------------------
# independent references (plain Python loops over samples and bins)


def _loop_uniform_bin(s, n_bins):
    """Bin m holds m/M < s <= (m+1)/M; 0 in bin 0."""
    for m in range(n_bins):
        if s <= (m + 1) / n_bins:
            return m
    return n_bins - 1


def _loop_binned_error(scores, outcomes, weights, n_bins, norm):
    sums = {}
    for s, o, w in zip(scores, outcomes, weights):
        b = _loop_uniform_bin(float(s), n_bins)
        acc = sums.setdefault(b, [0.0, 0.0, 0.0])
        acc[0] += w
        acc[1] += w * s
        acc[2] += w * o
    total = sum(v[0] for v in sums.values() if v[0] > 0)
    gaps = [(v[0] / total, abs(v[2] / v[0] - v[1] / v[0])) for v in sums.values()
            if v[0] > 0]
    if norm == "l1":
        return sum(f * g for f, g in gaps)
    if norm == "l2":
        return math.sqrt(sum(f * g * g for f, g in gaps))
    return max(g for _, g in gaps)


def _loop_error(y, proba, kind, n_bins, norm, weights=None):
    n, k = proba.shape
    weights = [1.0] * n if weights is None else list(weights)
    if kind == "top-label":
        conf, correct = [], []
        for i in range(n):
            row = list(proba[i])
            j = row.index(max(row))
            conf.append(row[j])
            correct.append(1.0 if j == y[i] else 0.0)
        return _loop_binned_error(conf, correct, weights, n_bins, norm)
    if kind == "binary":
        return _loop_binned_error(
            [proba[i][1] for i in range(n)], [float(y[i] == 1) for i in range(n)],
            weights, n_bins, norm,
        )
    errs = [
        _loop_binned_error([proba[i][c] for i in range(n)],
                           [float(y[i] == c) for i in range(n)], weights, n_bins, norm)
        for c in range(k)
    ]
    return sum(errs) / k


@pytest.fixture
def tiny():
    """4 samples, 3 classes; top-label confidences 0.7, 0.6, 0.8, 0.45."""
    proba = np.array(
        [[0.7, 0.2, 0.1], [0.3, 0.6, 0.1], [0.1, 0.1, 0.8], [0.2, 0.35, 0.45]]
    )
    y = np.array([0, 2, 2, 1])
    return y, proba


@pytest.fixture
def random_multiclass(rng):
    z = rng.normal(scale=2.0, size=(400, 4))
    proba = softmax(z)
    y = np.array([rng.choice(4, p=p) for p in softmax(0.6 * z)])
    return y, proba, z


# --------------------------------------------------------------------------
# hand-computed values


def test_top_label_norms_tiny_hand_computed(tiny):
    y, proba = tiny
    # 5 bins of width 0.2: 0.45 and 0.6 (an edge: lower bin) in (0.4, 0.6],
    # 0.7 and 0.8 (an edge) in (0.6, 0.8]. Bin (0.4, 0.6]: conf 0.525, acc 0;
    # bin (0.6, 0.8]: conf 0.75, acc 1; each holds half the samples.
    assert calibration_error(y, proba, n_bins=5) == pytest.approx(0.3875, abs=1e-12)
    assert expected_calibration_error(y, proba, n_bins=5) == pytest.approx(0.3875)
    assert rms_calibration_error(y, proba, n_bins=5) == pytest.approx(
        math.sqrt(0.5 * 0.525**2 + 0.5 * 0.25**2), abs=1e-12
    )
    assert maximum_calibration_error(y, proba, n_bins=5) == pytest.approx(
        0.525, abs=1e-12
    )


def test_top_label_tiny_float32_same_bins(tiny):
    y, proba = tiny
    # 0.6 and 0.8 are not representable; their float32 roundings must stay in
    # the same bins as the float64 values.
    got = calibration_error(y, proba.astype(np.float32), n_bins=5)
    assert got == pytest.approx(0.3875, abs=1e-6)


def test_classwise_tiny_hand_computed(tiny):
    y, proba = tiny
    # n_bins=2. class 0: bins {.3,.1,.2 | 0,0,0} gap .2 and {.7 | 1} gap .3
    #   -> .75*.2 + .25*.3 = .225
    # class 1: {.2,.1,.35 | 0,0,1} gap |1/3 - .65/3| and {.6 | 0} gap .6 -> .2375
    # class 2: {.1,.1,.45 | 0,1,0} gap |1/3 - .65/3| and {.8 | 1} gap .2 -> .1375
    got = calibration_error(y, proba, kind="classwise", n_bins=2)
    assert got == pytest.approx((0.225 + 0.2375 + 0.1375) / 3, abs=1e-12)
    got_max = calibration_error(y, proba, kind="classwise", n_bins=2, norm="max")
    assert got_max == pytest.approx((0.3 + 0.6 + 0.2) / 3, abs=1e-12)


def test_binary_kind_tiny_hand_computed():
    y = [0, 1, 1, 1]
    p1 = [0.2, 0.3, 0.7, 0.9]
    # bins (0, .5]: conf .25, freq .5; (.5, 1]: conf .8, freq 1
    assert calibration_error(y, p1, kind="binary", n_bins=2) == pytest.approx(
        0.5 * 0.25 + 0.5 * 0.2
    )
    curve = reliability_curve(y, p1, kind="binary", n_bins=2)
    np.testing.assert_allclose(curve.prob_pred, [0.25, 0.8])
    np.testing.assert_allclose(curve.prob_true, [0.5, 1.0])
    np.testing.assert_allclose(curve.bin_weight, [0.5, 0.5])
    np.testing.assert_array_equal(curve.bin_count, [2, 2])
    np.testing.assert_array_equal(curve.bin_index, [0, 1])
    np.testing.assert_allclose(curve.bin_edges, [0.0, 0.5, 1.0])
    # the same problem as two columns
    two_col = np.column_stack([1 - np.array(p1), p1])
    assert calibration_error(y, two_col, kind="binary", n_bins=2) == pytest.approx(
        0.225
    )


def test_top_label_of_1d_binary_uses_max_of_p_and_1_minus_p():
    # confidences .8 (pred 0, y 0), .7 (pred 0, y 1), .7 (pred 1, y 1), .9
    y = [0, 1, 1, 1]
    p1 = [0.2, 0.3, 0.7, 0.9]
    curve = reliability_curve(y, p1, n_bins=2)
    np.testing.assert_allclose(curve.prob_pred, [0.775])
    np.testing.assert_allclose(curve.prob_true, [0.75])


def test_quantile_tiny_hand_computed():
    # inverted CDF: cumulative fractions of .1 .2 .3 .4 are 1/4 .. 1; the
    # median edge is the first score reaching 1/2, i.e. 0.2
    y = [0, 1, 0, 1]
    p1 = [0.4, 0.1, 0.3, 0.2]
    curve = reliability_curve(y, p1, kind="binary", n_bins=2, strategy="quantile")
    np.testing.assert_allclose(curve.bin_edges, [0.1, 0.2, 0.4])
    np.testing.assert_allclose(curve.prob_pred, [0.15, 0.35])
    np.testing.assert_allclose(curve.prob_true, [1.0, 0.0])
    err = calibration_error(y, p1, kind="binary", n_bins=2, strategy="quantile")
    assert err == pytest.approx(0.5 * 0.85 + 0.5 * 0.35)


def test_quantile_edges_are_numpy_inverted_cdf_and_commute_with_repetition(rng):
    # issue 16: the equal-mass rule must give the bins of the repeated rows
    p1 = rng.uniform(size=37)
    y = rng.integers(0, 2, size=37)
    w = rng.integers(0, 4, size=37)
    w[0] = 1
    for n_bins in (2, 3, 5, 10):
        curve = reliability_curve(y, p1, kind="binary", n_bins=n_bins,
                                  strategy="quantile", sample_weight=w)
        ref = np.unique(np.quantile(p1, np.linspace(0, 1, n_bins + 1),
                                    method="inverted_cdf", weights=w))
        ref[0], ref[-1] = p1[w > 0].min(), p1[w > 0].max()
        np.testing.assert_array_equal(curve.bin_edges, np.unique(ref))
        rep = reliability_curve(np.repeat(y, w), np.repeat(p1, w), kind="binary",
                                n_bins=n_bins, strategy="quantile")
        np.testing.assert_array_equal(curve.bin_edges, rep.bin_edges)
        np.testing.assert_allclose(curve.prob_true, rep.prob_true, rtol=1e-12)
        np.testing.assert_allclose(curve.prob_pred, rep.prob_pred, rtol=1e-12)


def test_weighted_tiny_hand_computed(tiny):
    y, proba = tiny
    w = [1.0, 3.0, 0.0, 2.0]  # conf .7 / .6 / .8 / .45
    # bin (.4,.6]: weight 5, conf (3*.6 + 2*.45)/5 = .54, acc 0
    # bin (.6,.8]: weight 1 (the .8 sample has weight 0), conf .7, acc 1
    got = calibration_error(y, proba, n_bins=5, sample_weight=w)
    assert got == pytest.approx(5 / 6 * 0.54 + 1 / 6 * 0.3)
    curve = reliability_curve(y, proba, n_bins=5, sample_weight=w)
    np.testing.assert_array_equal(curve.bin_count, [2, 2])
    np.testing.assert_allclose(curve.bin_weight, [5 / 6, 1 / 6])


def test_perfect_and_worst_predictions():
    y = np.array([0, 1, 2, 1])
    onehot = np.eye(3)[y]
    assert calibration_error(y, onehot) == 0.0
    assert calibration_error(y, onehot, kind="classwise") == 0.0
    wrong = np.eye(3)[(y + 1) % 3]
    assert calibration_error(y, wrong) == 1.0
    assert maximum_calibration_error(y, wrong) == 1.0


# --------------------------------------------------------------------------
# bin rules


def test_zero_in_first_bin_and_one_in_last_bin():
    curve = reliability_curve([0, 1], [0.0, 1.0], kind="binary", n_bins=10)
    np.testing.assert_array_equal(curve.bin_index, [0, 9])
    assert curve.bin_edges.shape == (11,)
    np.testing.assert_allclose(curve.prob_pred, [0.0, 1.0])


@pytest.mark.parametrize("n_bins", [3, 5, 10, 15, 20, 100])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_interior_edges_fall_in_lower_bin_for_both_dtypes(n_bins, dtype):
    k = np.arange(1, n_bins)
    values = (k / n_bins).astype(dtype)
    curve = reliability_curve(np.ones(k.shape[0], dtype=int), values,
                              kind="binary", n_bins=n_bins, labels=[0, 1])
    # one sample per bin: value k/M lands in bin k-1 = (k-1)/M .. k/M
    np.testing.assert_array_equal(curve.bin_index, k - 1)


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_float32_and_float64_edge_values_give_same_ece(n_bins, rng):
    edges = np.arange(1, n_bins) / n_bins
    p1 = np.concatenate([edges, rng.uniform(size=50)])
    y = rng.integers(0, 2, size=p1.shape[0])
    e64 = calibration_error(y, p1, kind="binary", n_bins=n_bins)
    e32 = calibration_error(y, p1.astype(np.float32), kind="binary", n_bins=n_bins)
    assert e32 == pytest.approx(e64, abs=1e-6)


def test_values_just_off_an_edge_are_binned_by_value():
    eps = 1e-4
    curve = reliability_curve([1, 1], [0.5 - eps, 0.5 + eps], kind="binary",
                              n_bins=2)
    np.testing.assert_array_equal(curve.bin_index, [0, 1])


def test_quantile_all_tied_scores_one_bin():
    curve = reliability_curve([0, 1, 1, 0, 1], [0.5] * 5, kind="binary",
                              n_bins=10, strategy="quantile")
    np.testing.assert_allclose(curve.bin_edges, [0.5, 0.5])
    np.testing.assert_allclose(curve.prob_true, [0.6])
    assert calibration_error([0, 1, 1, 0, 1], [0.5] * 5, kind="binary",
                             strategy="quantile") == pytest.approx(0.1)


def test_quantile_ties_few_distinct_values_one_bin_each(rng):
    p1 = np.array([0.2] * 30 + [0.9] * 3 + [0.95])
    y = rng.integers(0, 2, size=p1.shape[0])
    curve = reliability_curve(y, p1, kind="binary", n_bins=10, strategy="quantile")
    assert np.all(np.diff(curve.bin_edges) > 0)
    assert curve.bin_count.sum() == p1.shape[0]
    assert np.all(curve.bin_count > 0)
    # 3 distinct values and 10 bins: one bin per value (midpoint edges); the
    # inverted-CDF edges 0.2, 0.9, 0.95 would have merged 0.2 and 0.9
    np.testing.assert_allclose(curve.bin_edges, [0.2, 0.55, 0.925, 0.95])
    np.testing.assert_array_equal(curve.bin_count, [30, 3, 1])
    np.testing.assert_allclose(curve.prob_true, [y[:30].mean(), y[30:33].mean(), y[33]])


def test_quantile_single_sample():
    curve = reliability_curve([1], [0.3], kind="binary", n_bins=5,
                              strategy="quantile", labels=[0, 1])
    np.testing.assert_allclose(curve.prob_pred, [0.3])
    np.testing.assert_allclose(curve.prob_true, [1.0])


def test_quantile_bins_have_equal_weight(rng):
    p1 = rng.uniform(size=1000)
    y = rng.integers(0, 2, size=1000)
    w = rng.uniform(0.5, 2.0, size=1000)
    curve = reliability_curve(y, p1, kind="binary", n_bins=10, strategy="quantile",
                              sample_weight=w)
    assert curve.bin_weight.shape == (10,)
    np.testing.assert_allclose(curve.bin_weight, 0.1, atol=0.01)


def test_quantile_unit_weights_equal_no_weights(random_multiclass):
    y, proba, _ = random_multiclass
    a = calibration_error(y, proba, strategy="quantile", kind="classwise")
    b = calibration_error(y, proba, strategy="quantile", kind="classwise",
                          sample_weight=np.ones(y.shape[0]))
    assert a == pytest.approx(b, abs=1e-12)


# --------------------------------------------------------------------------
# agreement with independent implementations


@pytest.mark.parametrize("kind", ["top-label", "classwise"])
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("n_bins", [1, 7, 15])
def test_matches_loop_reference_multiclass(random_multiclass, kind, norm, n_bins):
    y, proba, _ = random_multiclass
    expected = _loop_error(y, proba, kind, n_bins, norm)
    got = calibration_error(y, proba, kind=kind, n_bins=n_bins, norm=norm)
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("kind", ["top-label", "classwise"])
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_matches_loop_reference_weighted(random_multiclass, rng, kind, norm):
    y, proba, _ = random_multiclass
    w = rng.uniform(0.0, 3.0, size=y.shape[0])
    expected = _loop_error(y, proba, kind, 10, norm, weights=w)
    got = calibration_error(y, proba, kind=kind, n_bins=10, norm=norm,
                            sample_weight=w)
    assert got == pytest.approx(expected, abs=1e-12)


def test_binary_matches_loop_reference(rng):
    p1 = rng.beta(2, 3, size=300)
    y = (rng.uniform(size=300) < p1**0.8).astype(int)
    proba = np.column_stack([1 - p1, p1])
    for norm in ("l1", "l2", "max"):
        assert calibration_error(y, p1, kind="binary", norm=norm) == pytest.approx(
            _loop_error(y, proba, "binary", 15, norm), abs=1e-12
        )


# Equal-mass bins: scikit-learn's edges are linear quantiles, which do not
# commute with repetition; skcal's inverted-CDF edges are tested against NumPy.
@pytest.mark.parametrize("strategy", ["uniform"])
@pytest.mark.parametrize("n_bins", [2, 5, 10, 23])
def test_binary_curve_matches_sklearn_calibration_curve(rng, strategy, n_bins):
    p1 = rng.beta(0.7, 0.9, size=517)
    y = (rng.uniform(size=517) < p1).astype(int)
    prob_true, prob_pred = calibration_curve(y, p1, n_bins=n_bins, strategy=strategy)
    curve = reliability_curve(y, p1, kind="binary", n_bins=n_bins, strategy=strategy)
    np.testing.assert_allclose(curve.prob_true, prob_true, rtol=1e-12)
    np.testing.assert_allclose(curve.prob_pred, prob_pred, rtol=1e-12)


def test_binary_curve_matches_sklearn_with_string_labels(rng):
    p1 = rng.uniform(size=200)
    y = np.where(rng.uniform(size=200) < p1, "spam", "ham")
    prob_true, prob_pred = calibration_curve(y, p1, n_bins=8, pos_label="spam")
    curve = reliability_curve(y, p1, kind="binary", n_bins=8, pos_label="spam")
    np.testing.assert_allclose(curve.prob_true, prob_true)
    np.testing.assert_allclose(curve.prob_pred, prob_pred)


def test_ece_is_weighted_gap_of_the_curve(random_multiclass):
    y, proba, _ = random_multiclass
    curve = reliability_curve(y, proba, n_bins=12)
    ece = expected_calibration_error(y, proba, n_bins=12)
    assert ece == pytest.approx(
        np.sum(curve.bin_weight * np.abs(curve.prob_true - curve.prob_pred)),
        abs=1e-14,
    )
    assert curve.bin_count.sum() == y.shape[0]


def test_class_curve_matches_one_vs_rest_binary(random_multiclass):
    y, proba, _ = random_multiclass
    curve = reliability_curve(y, proba, kind="class", class_index=2, n_bins=9)
    prob_true, prob_pred = calibration_curve(y == 2, proba[:, 2], n_bins=9)
    np.testing.assert_allclose(curve.prob_true, prob_true)
    np.testing.assert_allclose(curve.prob_pred, prob_pred)


# --------------------------------------------------------------------------
# invariances


@pytest.mark.parametrize("kind", ["top-label", "classwise"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_invariant_to_sample_order(random_multiclass, rng, kind, strategy):
    y, proba, _ = random_multiclass
    perm = rng.permutation(y.shape[0])
    a = calibration_error(y, proba, kind=kind, strategy=strategy)
    b = calibration_error(y[perm], proba[perm], kind=kind, strategy=strategy)
    assert a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize("kind", ["top-label", "classwise"])
def test_invariant_to_label_encoding(random_multiclass, kind):
    y, proba, _ = random_multiclass
    names = np.array(["cat", "dog", "eel", "fox"])
    a = calibration_error(y, proba, kind=kind)
    assert calibration_error(names[y], proba, kind=kind) == pytest.approx(a)
    # labels given in another order, columns permuted to match
    order = [2, 0, 3, 1]
    got = calibration_error(names[y], proba[:, order], kind=kind,
                            labels=names[order])
    assert got == pytest.approx(a, abs=1e-12)
    assert calibration_error(y + 10, proba, kind=kind) == pytest.approx(a)


@pytest.mark.parametrize("kind", ["top-label", "classwise"])
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_integer_weights_equal_repetition(random_multiclass, rng, kind, norm):
    y, proba, _ = random_multiclass
    w = rng.integers(0, 4, size=y.shape[0])
    rep = np.repeat(np.arange(y.shape[0]), w)
    a = calibration_error(y, proba, kind=kind, norm=norm, sample_weight=w)
    b = calibration_error(y[rep], proba[rep], kind=kind, norm=norm)
    assert a == pytest.approx(b, abs=1e-12)
    ca = reliability_curve(y, proba, sample_weight=w)
    cb = reliability_curve(y[rep], proba[rep])
    np.testing.assert_allclose(ca.prob_true, cb.prob_true, atol=1e-12)
    np.testing.assert_allclose(ca.prob_pred, cb.prob_pred, atol=1e-12)


def test_scaled_weights_do_not_change_the_error(random_multiclass, rng):
    y, proba, _ = random_multiclass
    w = rng.uniform(size=y.shape[0])
    a = calibration_error(y, proba, sample_weight=w, strategy="quantile")
    b = calibration_error(y, proba, sample_weight=7.5 * w, strategy="quantile")
    assert a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize("kind", ["top-label", "classwise"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_float32_equals_float64(random_multiclass, kind, strategy):
    y, _, z = random_multiclass
    z32 = z.astype(np.float32)
    p32 = softmax(z32).astype(np.float32)
    a = calibration_error(y, p32, kind=kind, strategy=strategy)
    b = calibration_error(y, p32.astype(np.float64), kind=kind, strategy=strategy)
    assert a == b
    la = calibration_error(y, z32, kind=kind, strategy=strategy, input_type="logits")
    lb = calibration_error(y, z32.astype(np.float64), kind=kind, strategy=strategy,
                           input_type="logits")
    assert la == lb


def test_logits_equal_softmax_probabilities(random_multiclass):
    y, proba, z = random_multiclass
    for kind in ("top-label", "classwise"):
        a = calibration_error(y, z, kind=kind, input_type="logits")
        assert a == pytest.approx(calibration_error(y, proba, kind=kind), abs=1e-12)


def test_binary_log_odds_equal_probabilities(rng):
    s = rng.normal(scale=3, size=300)
    y = rng.integers(0, 2, size=300)
    p1 = 1 / (1 + np.exp(-s))
    for kind in ("top-label", "binary", "classwise"):
        a = calibration_error(y, s, kind=kind, input_type="logits")
        assert a == pytest.approx(calibration_error(y, p1, kind=kind), abs=1e-12)


def test_lists_and_missing_integer_classes():
    # class 2 never occurs in y_true: integer labels are column indices
    y = [0, 1, 0]
    proba = [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.9, 0.05, 0.05]]
    got = calibration_error(y, proba, n_bins=10)
    # bins: .6 -> (.5,.6], .7 -> (.6,.7], .9 -> (.8,.9]; all correct
    assert got == pytest.approx((0.4 + 0.3 + 0.1) / 3)


# --------------------------------------------------------------------------
# bootstrap


def test_bootstrap_interval_is_reproducible_and_brackets(random_multiclass):
    y, proba, _ = random_multiclass
    c1 = reliability_curve(y, proba, n_bins=5, n_bootstrap=200, random_state=3)
    c2 = reliability_curve(y, proba, n_bins=5, n_bootstrap=200, random_state=3)
    np.testing.assert_array_equal(c1.prob_true_low, c2.prob_true_low)
    np.testing.assert_array_equal(c1.prob_true_high, c2.prob_true_high)
    assert np.all(c1.prob_true_low <= c1.prob_true_high)
    big = c1.bin_count >= 30
    assert np.all(c1.prob_true_low[big] <= c1.prob_true[big])
    assert np.all(c1.prob_true[big] <= c1.prob_true_high[big])
    assert "prob_true_low" not in reliability_curve(y, proba, n_bins=5)


def test_bootstrap_interval_degenerate_bin_and_binomial_width(rng):
    # a bin whose samples are all correct has interval [1, 1]; a bin with
    # n=400 and frequency 0.5 has a 95% interval about +-1.96*sqrt(.25/400)
    p1 = np.concatenate([np.full(50, 0.95), np.full(400, 0.3)])
    y = np.concatenate([np.ones(50, int), np.tile([0, 1], 200)])
    curve = reliability_curve(y, p1, kind="binary", n_bins=2, n_bootstrap=400,
                              random_state=0)
    assert curve.prob_true_low[1] == 1.0 and curve.prob_true_high[1] == 1.0
    half = (curve.prob_true_high[0] - curve.prob_true_low[0]) / 2
    assert half == pytest.approx(1.96 * math.sqrt(0.25 / 450 * 450 / 400), rel=0.2)


# --------------------------------------------------------------------------
# validation


@pytest.mark.parametrize(
    "y_true, y_prob, kwargs, match",
    [
        ([0, 1], [[0.5, np.nan], [0.5, 0.5]], {}, "NaN"),
        ([0, 1], [[0.5, np.inf], [0.5, 0.5]], {"input_type": "logits"}, "infinity"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]], {}, "samples"),
        ([], np.empty((0, 2)), {}, "sample"),
        ([0, 1], [[1.2, -0.2], [0.5, 0.5]], {}, r"\[0, 1\]"),
        ([0, 1], [[0.5, 0.6], [0.5, 0.5]], {}, "sum to 1"),
        ([0, 1], [1.5, 0.5], {}, r"\[0, 1\]"),
        ([0, 1], np.ones((2, 2, 2)) / 2, {}, "dim"),
        ([[0], [1]], [[0.5, 0.5], [0.5, 0.5]], {}, "1-D"),
        ([0, 5, 5], np.full((3, 3), 1 / 3), {}, "labels="),
        (["a", "b"], np.full((2, 3), 1 / 3), {}, "distinct labels"),
        (["a", "c"], [[0.5, 0.5], [0.5, 0.5]], {"labels": ["a", "b"]}, "not among"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"labels": [0, 1, 2]}, "3 labels"),
        ([0, 0], [[0.5, 0.5], [0.5, 0.5]], {"labels": [0, 0]}, "distinct"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"sample_weight": [1, -1]}, "negative"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"sample_weight": [0, 0]}, "sums to 0"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"sample_weight": [1]}, "1 entries"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"sample_weight": [1, np.nan]}, "NaN"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"n_bins": 0}, "n_bins"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"n_bins": 2.5}, "n_bins"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"norm": "l3"}, "norm"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"kind": "per-class"}, "kind"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"strategy": "kmeans"}, "strategy"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.5]], {"input_type": "odds"}, "input_type"),
        ([0, 1, 2], np.full((3, 3), 1 / 3), {"kind": "binary"}, "2 classes"),
        ([0.0, np.nan], [[0.5, 0.5], [0.5, 0.5]], {}, "y_true contains NaN"),
    ],
)
def test_invalid_input_raises_clear_error(y_true, y_prob, kwargs, match):
    with pytest.raises(ValueError, match=match):
        calibration_error(y_true, y_prob, **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kind": "class"}, "class_index"),
        ({"kind": "class", "class_index": 3}, "class_index"),
        ({"kind": "top-label", "class_index": 0}, "only used"),
        ({"kind": "classwise"}, "class_index"),
        ({"kind": "per-class"}, "kind"),
        ({"n_bootstrap": -1}, "n_bootstrap"),
        ({"n_bootstrap": 10, "confidence_level": 1.5}, "confidence_level"),
    ],
)
def test_reliability_curve_invalid_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        reliability_curve([0, 1, 2], np.full((3, 3), 1 / 3), **kwargs)


def test_rounding_tolerance_of_probability_rows():
    # float32 softmax rows sum to 1 only up to rounding: accepted
    z = np.random.default_rng(1).normal(size=(50, 1000)).astype(np.float32)
    p = (np.exp(z) / np.exp(z).sum(1, keepdims=True)).astype(np.float32)
    calibration_error(np.arange(50), p)


def test_import_does_not_import_torch_matplotlib_or_dask():
    # (one interpreter for the optional dependencies: torch, matplotlib and
    # dask/distributed, which skcal loads only when given a dask array)
    code = (
        "import sys, skcal, skcal.metrics, skcal.display; "
        "print(*[any(m.split('.')[0] == name for m in sys.modules) for name in "
        "('torch', 'matplotlib', 'dask', 'distributed')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["False"] * 4


# --------------------------------------------------------------------------
# acceptance: Guo et al. (2017), DenseNet-40 on CIFAR-10, uncalibrated


@pytest.mark.shared_data
def test_guo_densenet40_cifar10_ece_is_5_50_percent():
    data = load_shared("cifar10_densenet40_guo")
    logits, y = data["logits_test"], data["y_test"]
    # independent computation: float64 softmax, then a loop over the 15 bins
    proba = softmax(logits)
    conf = proba.max(axis=1)
    correct = proba.argmax(axis=1) == y
    n = y.shape[0]
    expected = 0.0
    for m in range(15):
        lo, hi = m / 15, (m + 1) / 15
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            expected += in_bin.sum() / n * abs(correct[in_bin].mean()
                                               - conf[in_bin].mean())
    got = expected_calibration_error(y, logits, input_type="logits", n_bins=15)
    assert 100 * got == pytest.approx(100 * expected, abs=0.005)
    assert round(100 * got, 2) == 5.50
    # from float32 probabilities too
    got_p = expected_calibration_error(y, proba.astype(np.float32))
    assert round(100 * got_p, 2) == 5.50
