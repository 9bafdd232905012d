"""Tests for skcal.metrics.brier_score and negative_log_likelihood."""

import math

import numpy as np
import pytest
from conftest import load_shared
from sklearn.metrics import brier_score_loss, log_loss

from _helpers import softmax
from skcal.metrics import brier_score, negative_log_likelihood


@pytest.fixture
def multiclass(rng):
    z = rng.normal(scale=2.0, size=(300, 5))
    y = rng.integers(0, 5, size=300)
    return y, softmax(z), z


# --------------------------------------------------------------------------
# Brier


def test_brier_multiclass_hand_computed():
    y = [0, 2]
    p = [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]
    # (.25 + .09 + .04 + .01 + .01 + .04) / 2
    assert brier_score(y, p) == pytest.approx(0.22)
    assert brier_score(y, p, scale_by_half=True) == pytest.approx(0.11)
    assert brier_score(y, p, sample_weight=[3, 1]) == pytest.approx(
        (3 * 0.38 + 0.06) / 4
    )


def test_brier_binary_hand_computed():
    # mean of (p1 - y)^2 = (.01 + .01 + .04 + .09) / 4
    assert brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]) == pytest.approx(0.0375)
    two_col = [[0.9, 0.1], [0.1, 0.9], [0.2, 0.8], [0.7, 0.3]]
    assert brier_score([0, 1, 1, 0], two_col) == pytest.approx(0.0375)
    assert brier_score([0, 1, 1, 0], two_col, scale_by_half=False) == pytest.approx(
        0.075
    )


def test_brier_binary_matches_sklearn(rng):
    p1 = rng.uniform(size=200)
    y = np.where(rng.uniform(size=200) < p1, "spam", "ham")
    w = rng.uniform(size=200)
    expected = brier_score_loss(y, p1, pos_label="spam", sample_weight=w)
    assert brier_score(y, p1, sample_weight=w, pos_label="spam") == pytest.approx(
        expected, abs=1e-14
    )
    with pytest.raises(ValueError, match="pos_label"):  # issue 16: not silently
        brier_score(y, p1, sample_weight=w)
    two_col = np.column_stack([1 - p1, p1])
    assert brier_score(y, two_col, sample_weight=w) == pytest.approx(expected)


def test_brier_multiclass_matches_sklearn(multiclass, rng):
    y, p, _ = multiclass
    w = rng.uniform(size=y.shape[0])
    expected = brier_score_loss(y, p, labels=np.arange(5), sample_weight=w)
    assert brier_score(y, p, sample_weight=w) == pytest.approx(expected, abs=1e-14)


def test_brier_logits_equal_probabilities(multiclass):
    y, p, z = multiclass
    assert brier_score(y, z, input_type="logits") == pytest.approx(
        brier_score(y, p), abs=1e-14
    )


def test_brier_invalid_scale_by_half():
    with pytest.raises(ValueError, match="scale_by_half"):
        brier_score([0, 1], [0.2, 0.8], scale_by_half="yes")


@pytest.mark.shared_data
def test_brier_and_nll_reproduce_shared_data_readme():
    data = load_shared("cifar10_densenet40_guo")
    z, y = data["logits_test"], data["y_test"]
    # README figures: Brier 0.1274 (sum over classes), NLL 0.4301
    assert round(brier_score(y, z, input_type="logits"), 4) == 0.1274
    assert round(negative_log_likelihood(y, z, input_type="logits"), 4) == 0.4301


# --------------------------------------------------------------------------
# NLL


def test_nll_hand_computed():
    y = [0, 1, 1]
    p = [[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]]
    expected = -(math.log(0.5) + math.log(0.8) + math.log(0.1)) / 3
    assert negative_log_likelihood(y, p) == pytest.approx(expected, abs=1e-14)
    assert negative_log_likelihood(y, [0.5, 0.8, 0.1]) == pytest.approx(expected)
    got_w = negative_log_likelihood(y, p, sample_weight=[1, 0, 3])
    assert got_w == pytest.approx(-(math.log(0.5) + 3 * math.log(0.1)) / 4)


def test_nll_zero_probability_on_true_class_is_inf():
    y = [0, 1]
    p = [[0.5, 0.5], [1.0, 0.0]]
    assert negative_log_likelihood(y, p) == math.inf
    assert negative_log_likelihood(y, [0.5, 0.0]) == math.inf


def test_nll_zero_probability_with_zero_weight_is_ignored():
    y = [0, 1]
    p = [[0.5, 0.5], [1.0, 0.0]]
    got = negative_log_likelihood(y, p, sample_weight=[1.0, 0.0])
    assert got == pytest.approx(math.log(2))


def test_nll_zero_probability_on_other_class_is_finite():
    # one class in y_true: the columns must be named (shared label rule)
    assert negative_log_likelihood([0], [[1.0, 0.0, 0.0]], labels=[0, 1, 2]) == 0.0


def test_nll_logits_stable_for_huge_logits():
    z = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 0.0]])
    y = [0, 0]
    # log-softmax of the true class: row 0 -log(1 + e^-1000 + e^-2000) = 0,
    # row 1 -1000 - log(1 + 2 e^-1000) = -1000
    assert negative_log_likelihood(
        y, z, input_type="logits", labels=[0, 1, 2]
    ) == pytest.approx(500.0)
    s = np.array([800.0, -800.0])
    assert negative_log_likelihood([1, 1], s, input_type="logits") == pytest.approx(
        400.0
    )


def test_nll_matches_sklearn_log_loss(multiclass, rng):
    y, p, _ = multiclass
    w = rng.uniform(size=y.shape[0])
    expected = log_loss(y, p, sample_weight=w, labels=np.arange(5))
    assert negative_log_likelihood(y, p, sample_weight=w) == pytest.approx(
        expected, rel=1e-12
    )


def test_nll_binary_matches_sklearn_log_loss(rng):
    p1 = rng.uniform(0.01, 0.99, size=200)
    y = np.where(rng.uniform(size=200) < p1, "yes", "no")
    # log_loss takes the second sorted label as positive silently; skcal asks
    assert negative_log_likelihood(y, p1, pos_label="yes") == pytest.approx(
        log_loss(y, p1), rel=1e-12
    )
    assert negative_log_likelihood(y, 1 - p1, pos_label="no") == pytest.approx(
        log_loss(y, p1), rel=1e-12
    )


def test_nll_logits_equal_log_of_softmax(multiclass):
    y, p, z = multiclass
    assert negative_log_likelihood(y, z, input_type="logits") == pytest.approx(
        negative_log_likelihood(y, p), rel=1e-12
    )


def test_scores_invariances(multiclass, rng):
    y, p, _ = multiclass
    perm = rng.permutation(y.shape[0])
    names = np.array(list("vwxyz"))
    w = rng.integers(0, 3, size=y.shape[0])
    rep = np.repeat(np.arange(y.shape[0]), w)
    for f in (brier_score, negative_log_likelihood):
        ref = f(y, p)
        assert f(y[perm], p[perm]) == pytest.approx(ref, rel=1e-12)
        assert f(names[y], p) == pytest.approx(ref, rel=1e-12)
        assert f(y, p, sample_weight=w) == pytest.approx(f(y[rep], p[rep]), rel=1e-12)
        p32 = p.astype(np.float32)
        assert f(y, p32) == f(y, p32.astype(np.float64))


@pytest.mark.shared_data
def test_20news_exact_zeros_give_inf_but_logits_do_not():
    data = load_shared("20news_cv_labelerrors")
    y, probs = data["y_test"], data["probs_test"]
    if probs.dtype == np.float64:
        assert negative_log_likelihood(y, probs) == math.inf
    else:  # float32 zeros: the warning names exact zeros and underflow
        with pytest.warns(UserWarning, match="exact zeros"):
            assert negative_log_likelihood(y, probs) == math.inf
    assert math.isfinite(
        negative_log_likelihood(y, data["logits_test"], input_type="logits")
    )


@pytest.mark.parametrize("func", [brier_score, negative_log_likelihood])
def test_scores_validate_input(func):
    with pytest.raises(ValueError, match="sum to 1"):
        func([0, 1], [[0.2, 0.2], [0.5, 0.5]])
    with pytest.raises(ValueError, match="NaN"):
        func([0, 1], [[np.nan, 0.2], [0.5, 0.5]])
    with pytest.raises(ValueError, match="samples"):
        func([0, 1, 1], [[0.8, 0.2], [0.5, 0.5]])


def test_nll_warns_when_float32_probabilities_underflow_to_zero():
    """A true-class probability of exactly 0 in float32 input is an exact zero or
    an underflow (below ~1e-45): the inf is returned with a warning naming both
    causes; the float64 / log-probability readings are finite and agree."""
    import warnings

    from scipy.special import log_softmax

    from skcal.metrics import negative_log_likelihood

    z = np.array([[0.0, -300.0, 0.0], [1.0, 0.0, 0.0]])
    y = np.array([1, 0])
    ref = -log_softmax(z, axis=1)[np.arange(2), y].mean()  # plain SciPy reference
    p32 = np.exp(log_softmax(z, axis=1)).astype(np.float32)
    assert p32[0, 1] == 0
    with pytest.warns(UserWarning, match=r"float32 .*exact zeros.*honest value.*underflowed"
                      r".*below ~1e-45.*predict_log_proba") as rec:
        assert negative_log_likelihood(y, p32, labels=[0, 1, 2]) == np.inf
    # the warning points at the caller's line, not at skcal's wrappers
    assert [r.filename for r in rec] == [__file__]
    with pytest.warns(UserWarning, match=r"float16 cannot hold values below ~6e-08"):
        assert negative_log_likelihood(y, p32.astype(np.float16), labels=[0, 1, 2]) == np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert negative_log_likelihood(
            y, log_softmax(z, axis=1).astype(np.float32), input_type="logits"
        ) == pytest.approx(ref, rel=1e-6)
        # float64 zero: a genuine 0, inf without a warning (no clipping)
        assert negative_log_likelihood([1], [[1.0, 0.0]], labels=[0, 1]) == np.inf
