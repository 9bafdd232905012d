"""skcal.metrics input rules: label -> column mapping, 16-bit tolerance,
``kind`` names, scorer keywords and -inf logits."""

import math
import re
import warnings

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from skcal import TemperatureScaler
from skcal.metrics import (
    PROBA_SUM_TOL,
    brier_score,
    calibration_error,
    expected_calibration_error,
    get_scorer,
    negative_log_likelihood,
    reliability_curve,
)

# --------------------------------------------------------------------------
# label -> column mapping (shared rule with the calibrators)

# labels {1, 2, 3, 4}; class 4 never occurs in y_true
_Y_1234 = np.array([1, 2, 3])
_P_1234 = np.array(
    [[0.7, 0.1, 0.1, 0.1], [0.2, 0.5, 0.2, 0.1], [0.1, 0.1, 0.6, 0.2]]
)


def test_integer_labels_without_zero_are_ambiguous():
    # the user guide's rule (issue 24, item 5): integer labels are column
    # indices only when they include 0; labels 1..3 of a 4-column y_prob could
    # be columns 1..3 or classes 1..4 without 4
    for func in (negative_log_likelihood, brier_score, calibration_error):
        with pytest.raises(ValueError, match=r"1\.\.3 \(without 0\).*labels="):
            func(_Y_1234, _P_1234)
    # a label >= K cannot be a column index: still ambiguous
    for func in (negative_log_likelihood, brier_score, calibration_error):
        with pytest.raises(ValueError, match="labels="):
            func(_Y_1234 + 1, _P_1234)


def test_absent_class_with_explicit_labels_gives_hand_values():
    labels = [1, 2, 3, 4]
    nll = negative_log_likelihood(_Y_1234, _P_1234, labels=labels)
    assert nll == pytest.approx(-(math.log(0.7) + math.log(0.5) + math.log(0.6)) / 3)
    # Brier: sum over the 4 columns, mean over rows
    rows = [
        0.3**2 + 3 * 0.1**2,
        0.2**2 + 0.5**2 + 0.2**2 + 0.1**2,
        0.1**2 + 0.1**2 + 0.4**2 + 0.2**2,
    ]
    assert brier_score(_Y_1234, _P_1234, labels=labels) == pytest.approx(
        sum(rows) / 3
    )


def test_metrics_and_calibrators_follow_the_same_label_rule():
    logp = np.log(_P_1234)
    with pytest.raises(ValueError, match="classes="):
        TemperatureScaler().fit(logp, _Y_1234 + 1)
    with pytest.raises(ValueError, match=r"without 0.*classes="):
        TemperatureScaler().fit(logp, _Y_1234)  # 0..3 or 1..4: ambiguous
    # integers that include 0: columns are 0..3 for both
    y = np.array([0, 2, 2])
    nll = negative_log_likelihood(y, _P_1234)
    assert nll == pytest.approx(-(math.log(0.7) + math.log(0.2) + math.log(0.6)) / 3)
    with pytest.warns(UserWarning, match="never occur"):
        TemperatureScaler().fit(logp, y)  # accepted; classes 1 and 3 absent


def test_non_integer_float_labels_are_refused_like_the_calibrators():
    """Fractional labels were mapped in sorted order by the metrics (fresh38)."""
    y = np.arange(4.0)
    P = np.full((4, 4), 0.1) + 0.6 * np.eye(4)
    assert negative_log_likelihood(y, P) == pytest.approx(-math.log(0.7))
    with pytest.raises(ValueError, match=r"non-integer numbers \(e\.g\. 0\.5\)"):
        negative_log_likelihood(y + 0.5, P)
    with pytest.raises(ValueError, match="Unknown label type"):
        TemperatureScaler().fit(np.log(P), y + 0.5)


def test_single_class_2d_integer_label_is_a_column_index():
    # a single integer class 0 names its column; another one (here 2 of 3
    # columns) could name any column, as labels without 0 (issue 24, item 5)
    got = negative_log_likelihood([0, 0], [[0.9, 0.1], [0.8, 0.2]])
    assert got == pytest.approx(-(math.log(0.9) + math.log(0.8)) / 2)
    with pytest.raises(ValueError, match="single label 2 for 3 columns"):
        negative_log_likelihood([2, 2], [[0.1, 0.2, 0.7], [0.2, 0.2, 0.6]])
    got = negative_log_likelihood([2, 2], [[0.1, 0.2, 0.7], [0.2, 0.2, 0.6]],
                                  labels=[0, 1, 2])
    assert got == pytest.approx(-(math.log(0.7) + math.log(0.6)) / 2)
    with pytest.raises(ValueError, match="labels="):
        negative_log_likelihood([3, 3], [[0.9, 0.1], [0.8, 0.2]])
    with pytest.raises(ValueError, match="labels="):
        negative_log_likelihood(["a", "a"], [[0.9, 0.1], [0.8, 0.2]])
    got = negative_log_likelihood([0, 0], [[0.9, 0.1], [0.8, 0.2]], labels=[0, 1])
    assert got == pytest.approx(-(math.log(0.9) + math.log(0.8)) / 2)


@pytest.mark.parametrize("label", [0, 1, -1, True])
def test_binary_1d_single_label_like_sklearn(label):
    # y_prob is P(label 1); sklearn accepts a fold with one of 0/1/-1 only
    p1 = np.array([0.9, 0.8])
    y = np.array([label, label])
    positive = label == 1
    expected = np.mean((p1 - positive) ** 2)
    assert brier_score(y, p1) == pytest.approx(expected)
    assert brier_score(y, p1) == pytest.approx(brier_score_loss(y, p1))


def test_binary_1d_single_string_label_needs_labels():
    with pytest.raises(ValueError, match="labels="):
        brier_score(["spam", "spam"], [0.9, 0.8])
    assert brier_score(["spam", "spam"], [0.9, 0.8], labels=["ham", "spam"]) == (
        pytest.approx((0.01 + 0.04) / 2)
    )


# --------------------------------------------------------------------------
# 16-bit probabilities


def _float16_rows():
    rng = np.random.default_rng(0)
    z = rng.normal(scale=2.0, size=(400, 10))
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    p16 = p.astype(np.float16)
    dev = np.abs(p16.astype(np.float64).sum(1) - 1)
    assert dev.max() > PROBA_SUM_TOL  # the case that used to be rejected
    return rng.integers(0, 10, size=400), p16


def test_float16_probabilities_accepted_and_computed_in_float64():
    y, p16 = _float16_rows()
    p = p16.astype(np.float64)
    expected = -np.mean(np.log(p[np.arange(len(y)), y]))
    assert negative_log_likelihood(y, p16) == pytest.approx(expected, rel=1e-12)
    onehot = np.eye(10)[y]
    assert brier_score(y, p16) == pytest.approx(
        np.mean(((p - onehot) ** 2).sum(1)), rel=1e-12
    )
    expected_calibration_error(y, p16)


def test_16bit_tolerance_is_not_unlimited_and_float32_keeps_1e4():
    bad16 = np.array([[0.5, 0.47], [0.5, 0.5]], dtype=np.float16)  # sums 0.97
    with pytest.raises(ValueError, match="within 0.01"):
        negative_log_likelihood([0, 1], bad16)
    bad32 = np.array([[0.5, 0.499], [0.5, 0.5]], dtype=np.float32)  # sums 0.999
    with pytest.raises(ValueError, match="within 0.0001"):
        negative_log_likelihood([0, 1], bad32)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_torch_16bit_probabilities_accepted(dtype_name):
    torch = pytest.importorskip("torch")
    y, p16 = _float16_rows()
    p = torch.from_numpy(p16.astype(np.float64)).to(getattr(torch, dtype_name))
    p_np = p.to(torch.float64).numpy()
    dev = np.abs(p_np.sum(1) - 1)
    assert dev.max() > PROBA_SUM_TOL
    expected = -np.mean(np.log(p_np[np.arange(len(y)), y]))
    assert negative_log_likelihood(torch.from_numpy(y), p) == pytest.approx(
        expected, rel=1e-12
    )


# --------------------------------------------------------------------------
# kind names shared by calibration_error and reliability_curve

_Y_K = np.array([0, 1, 2, 2])
_P_K = np.array(
    [[0.8, 0.1, 0.1], [0.3, 0.5, 0.2], [0.2, 0.1, 0.7], [0.3, 0.3, 0.4]]
)


def test_class_and_classwise_are_the_same_kind():
    # column 2: scores .1 .2 .7 .4, outcomes 0 0 1 1; bins (0, .5], (.5, 1]
    # bin 1: conf (.1 + .2 + .4) / 3, acc 1/3, gap .1; bin 2: .7 vs 1, gap .3
    expected = 0.75 * 0.1 + 0.25 * 0.3
    for kind in ("classwise", "class"):
        got = calibration_error(_Y_K, _P_K, kind=kind, class_index=2, n_bins=2)
        assert got == pytest.approx(expected)
        curve = reliability_curve(_Y_K, _P_K, kind=kind, class_index=2, n_bins=2)
        np.testing.assert_allclose(curve.prob_pred, [0.7 / 3, 0.7])
        np.testing.assert_allclose(curve.prob_true, [1 / 3, 1.0])
    assert calibration_error(_Y_K, _P_K, kind="class", n_bins=2) == pytest.approx(
        calibration_error(_Y_K, _P_K, kind="classwise", n_bins=2)
    )


def test_class_index_rules():
    with pytest.raises(ValueError, match="only used with kind='classwise'"):
        calibration_error(_Y_K, _P_K, kind="top-label", class_index=0)
    with pytest.raises(ValueError, match="class_index"):
        reliability_curve(_Y_K, _P_K, kind="classwise")
    with pytest.raises(ValueError, match="class_index"):
        calibration_error(_Y_K, _P_K, kind="classwise", class_index=3)


# --------------------------------------------------------------------------
# scorer keywords checked when the scorer is created


def test_get_scorer_rejects_unknown_keyword_at_creation():
    with pytest.raises(TypeError, match="'nbins'.*n_bins"):
        get_scorer("neg_expected_calibration_error", nbins=3)
    with pytest.raises(TypeError, match="'kind'"):
        get_scorer("neg_classwise_calibration_error", kind="top-label")
    with pytest.raises(TypeError, match="'n_bins'"):
        get_scorer("neg_log_likelihood", n_bins=3)
    get_scorer("neg_expected_calibration_error", n_bins=3, strategy="quantile")
    get_scorer("neg_brier_score", scale_by_half=False)


# --------------------------------------------------------------------------
# -inf logits


def test_minus_inf_logits_rejected_with_advice():
    z = np.array([[0.0, -np.inf], [np.log(0.3), np.log(0.7)]])
    with pytest.raises(ValueError, match=r"-inf logits \(log of 0\).*input_type='probabilities'"):
        negative_log_likelihood([0, 1], z, input_type="logits")
    # the advised route gives the value
    got = negative_log_likelihood([0, 1], np.exp(z), input_type="probabilities")
    assert got == pytest.approx(-math.log(0.7) / 2)
    # +inf stays a plain "infinity" error
    with pytest.raises(ValueError, match="contains infinity"):
        negative_log_likelihood([0, 1], -z, input_type="logits")


def test_minus_inf_logits_rejected_torch():
    torch = pytest.importorskip("torch")
    z = torch.tensor([[0.0, -math.inf], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"-inf logits"):
        calibration_error([0, 1], z, input_type="logits")


def test_n_bins_far_beyond_the_samples_is_rejected():
    import numpy as np

    from skcal.metrics import expected_calibration_error, reliability_curve

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 1000)
    P = rng.dirichlet(np.ones(4), 1000)
    with pytest.raises(ValueError, match="n_bins=1000000000 is more than both the 1000 samples and 10000"):
        expected_calibration_error(y, P, n_bins=10**9)
    with pytest.raises(ValueError, match="more than both the 1000 samples"):
        reliability_curve(y, P, n_bins=20_000)
    # up to 10,000 bins (or the sample count) is allowed
    assert 0 <= expected_calibration_error(y, P, n_bins=5_000) <= 1


def test_metric_messages_show_plain_numbers():
    import numpy as np

    from skcal.metrics import expected_calibration_error, reliability_curve

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 100)
    P = rng.dirichlet(np.ones(4), 100)
    with pytest.raises(ValueError, match=r"Got -3 instead\.$"):
        expected_calibration_error(y, P, n_bins=np.int64(-3))
    with pytest.raises(ValueError, match=r"got 4\.$"):
        expected_calibration_error(y, P, kind="classwise", class_index=np.int64(4))
    with pytest.raises(ValueError, match=r"Got 1\.5 instead\.$"):
        reliability_curve(y, P, n_bootstrap=5, confidence_level=np.float64(1.5))


# --------------------------------------------------------------------------
# probabilities passed with input_type="logits": the calibrators' warning


@pytest.mark.parametrize("metric", [expected_calibration_error, negative_log_likelihood,
                                    brier_score])
def test_probabilities_read_as_logits_warn_like_the_calibrators(metric):
    from scipy.special import softmax

    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    Z = 4.0 * (np.eye(3)[y] + rng.normal(size=(300, 3)))
    P = softmax(Z, axis=1)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="y_prob looks like probab") as rec:
        got = metric(y, P, input_type="logits")
    assert rec[0].filename == __file__
    # the value is still that of P read as logits (softmax(P)), as documented
    assert got == pytest.approx(metric(y, softmax(P, axis=1)), rel=1e-12)
    # 1-D binary scores in [0, 1]: the binary form of the rule
    yb = (y == 1).astype(int)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="binary score"):
        metric(yb, P[:, 1], input_type="logits")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        metric(y, Z, input_type="logits")  # real logits: no warning
        metric(y, P)


@pytest.mark.parametrize("metric", [expected_calibration_error, negative_log_likelihood,
                                    brier_score])
def test_dask_probabilities_read_as_logits_warn_as_numpy(metric):
    da = pytest.importorskip("dask.array")
    from scipy.special import softmax

    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 600)
    Z = 4.0 * (np.eye(3)[y] + rng.normal(size=(600, 3)))
    P = softmax(Z, axis=1)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="y_prob looks like probab") as rec:
        got = metric(da.from_array(y, chunks=200), da.from_array(P, chunks=(200, 3)),
                     input_type="logits")
    assert rec[0].filename == __file__
    assert float(got) == pytest.approx(metric(y, softmax(P, axis=1)), rel=1e-12)
    yb = (y == 1).astype(int)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="binary score"):
        metric(da.from_array(yb, chunks=200), da.from_array(P[:, 1], chunks=200),
               input_type="logits")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        metric(da.from_array(y, chunks=200), da.from_array(Z, chunks=(200, 3)),
               input_type="logits")


@pytest.mark.parametrize("metric", [negative_log_likelihood, brier_score,
                                    expected_calibration_error])
def test_ragged_y_prob_is_named(metric):
    with pytest.raises(ValueError, match="y_prob is ragged: its rows have different"):
        metric([0, 1], [[0.5, 0.5], [1.0]])


def test_one_d_y_prob_with_multiclass_labels_names_the_binary_rule():
    y = np.array([0, 1, 2, 1, 0, 2])
    with pytest.raises(ValueError, match=r"y_true has 3 labels \[0, 1, 2\], but y_prob is "
                       r"1-D.*\(n_samples, n_classes\).*pos_label"):
        negative_log_likelihood(y, np.full(6, 0.4))
    # with the binary view the user names, the same scores are accepted
    assert negative_log_likelihood(y == 2, np.full(6, 0.4), pos_label=True) == pytest.approx(
        -(2 * np.log(0.4) + 4 * np.log(0.6)) / 6)


@pytest.mark.parametrize("metric", [negative_log_likelihood, brier_score,
                                    expected_calibration_error])
def test_pos_label_not_among_two_labels_is_named(metric):
    y, p = [0, 1, 1, 0], [0.2, 0.7, 0.6, 0.4]
    with pytest.raises(ValueError, match=re.escape("pos_label=5 is not one of the labels [0, 1].")):
        metric(y, p, pos_label=5)
    with pytest.raises(ValueError, match=re.escape(
            "pos_label='1' is not one of the labels [0, 1] (pos_label is a str, the labels are int).")):
        metric(y, p, pos_label="1")
    with pytest.raises(ValueError, match=re.escape("pos_label='c' is not one of the labels ['a', 'b'].")):
        metric(np.array(["a", "b", "b", "a"]), p, pos_label="c")
    # one label present: pos_label may be the absent one (all rows negative)
    assert negative_log_likelihood([0, 0], [0.2, 0.4], pos_label=1) == pytest.approx(
        -(np.log(0.8) + np.log(0.6)) / 2)
