"""Input validation and the label -> column rule shared by calibrators and metrics."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from _helpers import quiet_fit, softmax, temperature_reference
from skcal import TemperatureScaler, VectorScaler
from skcal.utils._labels import _unique_inverse, resolve_classes
from skcal.utils.validation import check_sample_weight, check_scores, max_abs_logit


def test_check_scores_binary_vector_becomes_two_logit_columns():
    Z, n_cols = check_scores(np.array([-1.5, 0.0, 2.0]))
    assert n_cols == 1
    np.testing.assert_array_equal(Z, [[0, -1.5], [0, 0], [0, 2.0]])


def test_check_scores_probabilities_zero_becomes_log_tiny():
    P = np.array([[1.0, 0.0], [0.25, 0.75]])
    Z, _ = check_scores(P, input_type="probabilities")
    assert Z[0, 1] == np.log(np.finfo(np.float64).tiny)
    np.testing.assert_allclose(Z[1], np.log([0.25, 0.75]))
    Z32, _ = check_scores(P.astype(np.float32), input_type="probabilities")
    assert Z32.dtype == np.float32 and np.isfinite(Z32).all()


def test_check_scores_float16_rows_within_their_tolerance():
    P = np.array([[0.333, 0.333, 0.333]], dtype=np.float16)  # sums to 0.999 in float16
    check_scores(P, input_type="probabilities")
    with pytest.raises(ValueError, match="sums to"):
        check_scores(P.astype(np.float64), input_type="probabilities")


@pytest.mark.parametrize(
    "dtype, ok, bad", [(np.float64, 1e100, 1e101), (np.float32, 1e15, 1e16)]
)
def test_check_scores_logit_magnitude_bound_per_dtype(dtype, ok, bad):
    assert max_abs_logit(dtype) >= ok
    check_scores(np.array([[0.0, ok]], dtype=dtype))
    with pytest.raises(ValueError, match="magnitude"):
        check_scores(np.array([[0.0, -bad]], dtype=dtype))


def test_check_scores_reports_nan_before_infinity():
    with pytest.raises(ValueError, match="NaN"):
        check_scores(np.array([[np.nan, np.inf], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="infinity"):
        check_scores(np.array([[0.0, -np.inf], [0.0, 1.0]]))


def test_check_scores_torch_matches_numpy():
    torch = pytest.importorskip("torch")
    X = np.array([[0.1, 0.9], [0.5, 0.5]])
    Zn, _ = check_scores(X, input_type="probabilities")
    Zt, _ = check_scores(torch.from_numpy(X), input_type="probabilities")
    np.testing.assert_allclose(Zt.numpy(), Zn)
    with pytest.raises(ValueError, match="NaN"):
        check_scores(torch.tensor([[float("nan"), 1.0]]))
    with pytest.raises(ValueError, match="magnitude"):
        check_scores(torch.tensor([[0.0, 1e101]], dtype=torch.float64))


def test_check_sample_weight_errors():
    with pytest.raises(ValueError, match="negative"):
        check_sample_weight([1.0, -1.0], 2)
    with pytest.raises(ValueError, match="every weight is zero"):
        check_sample_weight([0.0, 0.0], 2)
    with pytest.raises(ValueError, match="NaN"):
        check_sample_weight([np.nan, 1.0], 2)
    np.testing.assert_array_equal(check_sample_weight(2.0, 3), [2.0, 2.0, 2.0])


def test_resolve_classes_integer_labels_with_zero_fix_columns():
    classes, y_enc, missing = resolve_classes(np.array([0, 2, 2, 0]), 4)
    np.testing.assert_array_equal(classes, [0, 1, 2, 3])
    np.testing.assert_array_equal(y_enc, [0, 2, 2, 0])
    np.testing.assert_array_equal(missing, [1, 3])


@pytest.mark.parametrize("y", [[1, 2, 4, 1], ["a", "b", "a", "c"], [0.5, 1.5, 0.5, 2.5]])
def test_resolve_classes_ambiguous_labels_raise(y):
    with pytest.raises(ValueError, match="ambiguous"):
        resolve_classes(np.array(y), 4)


@pytest.mark.parametrize("y", [
    np.array([True, False, True]), np.ones(4, bool), np.array([0, 1, 1, 0], np.uint8),
    np.array([-1, 1, 1, -1]), np.array([-2, 0, 2, -2]), np.array([0, 2, 2, 5]), np.array([7, 7]),
    np.array([5, 6, 5], np.int8), np.array([0, 10**6]), np.array([2**63 + 1, 2**63 + 2], np.uint64),
    np.array([-2**63, 0]), np.array(["b", "a", "b"]),
])
def test_unique_inverse_is_numpys_unique(y):
    """The counting routes give np.unique's classes (dtype and order) and inverse."""
    classes, inverse = _unique_inverse(y)
    ref_classes, ref_inverse = np.unique(y, return_inverse=True)
    assert classes.dtype == ref_classes.dtype and inverse.dtype == np.int64
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(inverse, ref_inverse)


def test_resolve_classes_explicit_classes_order_and_unseen():
    classes, y_enc, missing = resolve_classes(np.array(["b", "c"]), 3, ["c", "a", "b"])
    np.testing.assert_array_equal(y_enc, [2, 0])
    np.testing.assert_array_equal(missing, ["a"])
    with pytest.raises(ValueError, match="not among"):
        resolve_classes(np.array(["b", "z"]), 3, ["c", "a", "b"])
    with pytest.raises(ValueError, match="distinct"):
        resolve_classes(np.array(["b"]), 2, ["b", "b"])


def test_calibrator_integer_labels_without_zero_are_ambiguous():
    """The user guide's rule (issue 24, item 5): integer labels are column indices
    only when they include 0. Labels 1..3 for 4 columns could be 0..3 without 0
    or 1..4 without 4: ask instead of guessing; 0..2 are columns 0..2."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(90, 4))
    y = np.arange(90) % 3 + 1
    with pytest.raises(ValueError, match=r"labels in 1\.\.3 \(without 0\) for 4 columns"):
        TemperatureScaler().fit(Z, y)
    with pytest.warns(UserWarning, match=r"Classes \[3\] never occur"):
        ts = TemperatureScaler().fit(Z, y - 1)
    np.testing.assert_array_equal(ts.classes_, [0, 1, 2, 3])
    with pytest.raises(ValueError, match="ambiguous"):
        TemperatureScaler().fit(Z, y + 1)
    with pytest.warns(UserWarning, match="never occur"):
        ts = TemperatureScaler(classes=[1, 2, 3, 4]).fit(Z, y)
    np.testing.assert_array_equal(ts.classes_, [1, 2, 3, 4])


def test_labels_1_to_9_for_10_columns_raise_the_documented_error():
    """docs/user_guide/index.rst: labels 1..9 for 10 columns are a ValueError asking for classes=."""
    from skcal.utils.discovery import all_calibrators

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 10))
    y = rng.integers(1, 10, 200)
    for name, cls in all_calibrators():
        with pytest.raises(ValueError, match=r"1\.\.9 \(without 0\).*pass \w+\(classes=\[\.\.\.\]\)"):
            cls().fit(Z, y)
    ts = TemperatureScaler(classes=np.arange(1, 11)).fit(Z, y)
    np.testing.assert_array_equal(ts.classes_, np.arange(1, 11))


@pytest.mark.parametrize("row", [0, 70_000, 149_999])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_scores_finds_nonfinite_in_any_chunk(row, bad):
    """The range check reads large inputs in row chunks; a bad value in any chunk is found."""
    X = np.zeros((150_000, 4), dtype=np.float32)  # 2.4 MB: several chunks
    X[row, 3] = bad
    with pytest.raises(ValueError, match="NaN" if np.isnan(bad) else "infinity"):
        check_scores(X)
    # and a finite extreme value in a late chunk is seen by the magnitude check
    X[row, 3] = 1e30
    with pytest.raises(ValueError, match="magnitude"):
        check_scores(X)
    s = np.zeros(600_000, dtype=np.float32)  # 1-D binary scores, 2.4 MB
    s[4 * row] = bad
    with pytest.raises(ValueError, match="NaN" if np.isnan(bad) else "infinity"):
        check_scores(s)


@pytest.mark.parametrize(
    "y",
    [
        np.arange(12) % 5,
        np.array([7, 3, 3, 9], dtype=np.int32),        # gaps: remapped to 0..2
        np.array([0, 2, 2], dtype=np.uint8),
        np.array([4, 1_000_000, 4]),                   # too sparse: sorted path
        np.array([-1, 2, -1]),                         # negative: sorted path
        np.array(["b", "a", "b"]),
    ],
)
def test_unique_inverse_equals_numpy_unique(y):
    from skcal.utils._labels import _unique_inverse

    classes, inv = _unique_inverse(y)
    ref_classes, ref_inv = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(classes, ref_classes)
    assert classes.dtype == ref_classes.dtype
    np.testing.assert_array_equal(inv, ref_inv)


@pytest.mark.parametrize(
    "classes, match",
    [
        ([0, 1, 2, None], "cannot be compared"),
        ([0, "1", 2, 3], "mixes text labels and numbers"),
        ([0, 1, 2, 2], "distinct labels"),
    ],
)
def test_bad_classes_parameter_is_named(classes, match):
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ValueError, match=match):
        TemperatureScaler(classes=classes).fit(X, np.arange(20) % 4)


def test_error_messages_show_plain_numbers():
    with pytest.raises(ValueError, match=r"only one class \(0\)"):
        TemperatureScaler().fit(np.zeros((5, 2)), np.zeros(5, dtype=np.int64))


def test_two_dimensional_sample_weight_is_rejected():
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.arange(20) % 3
    with pytest.raises(ValueError, match="sample_weight must be 1-D"):
        TemperatureScaler().fit(X, y, sample_weight=np.ones((20, 1)))


def test_get_feature_names_out_checks_input_features():
    X = np.random.default_rng(0).normal(size=(20, 3))
    ts = TemperatureScaler().fit(X, np.arange(20) % 3)
    assert ts.get_feature_names_out().tolist() == [f"temperaturescaler_{k}" for k in range(3)]
    with pytest.raises(ValueError):
        ts.get_feature_names_out(["a", "b"])  # 2 names for 3 input columns


@pytest.mark.parametrize("convert", [lambda X: X.astype(str), lambda X: X > 0,
                                     lambda X: X.astype(bytes), lambda X: X + 1j],
                         ids=["text", "bool", "bytes", "complex"])
def test_non_numeric_scores_are_rejected_not_parsed(convert):
    # found by a fresh-user run: "1.5" strings were parsed and booleans cast
    from skcal import TemperatureScaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = rng.integers(0, 3, 50)
    with pytest.raises(ValueError, match="Input X holds .* values; skcal expects numeric"):
        TemperatureScaler().fit(convert(X), y)
    with pytest.raises(ValueError, match="sample_weight holds text"):
        TemperatureScaler().fit(X, y, sample_weight=np.ones(50).astype(str))


def test_non_numeric_input_message_names_the_argument_to_convert():
    # the remedy named X.astype(float) for a boolean sample_weight too
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = rng.integers(0, 3, 50)
    with pytest.raises(ValueError) as err:
        TemperatureScaler().fit(X, y, sample_weight=np.ones(50, dtype=bool))
    assert str(err.value) == (
        "Input sample_weight holds boolean values; skcal expects numeric weights. "
        "Convert them explicitly (e.g. sample_weight.astype(float)) if that is what they are."
    )
    with pytest.raises(ValueError, match=r"\(e\.g\. X\.astype\(float\)\)"):
        TemperatureScaler().fit(X > 0, y)
    from skcal.utils.validation import normalize_probabilities

    with pytest.raises(ValueError, match=r"\(e\.g\. P\.astype\(float\)\)"):
        normalize_probabilities(X > 0)


def test_many_classes_for_few_rows_is_not_called_a_regression():
    # scikit-learn's "unique classes > 50% of the samples" heuristic does not
    # apply: the classes are the columns of the logits
    import warnings

    from skcal import TemperatureScaler

    rng = np.random.default_rng(0)
    n, k = 300, 200
    y = np.arange(n) % k
    Z = rng.normal(size=(n, k))
    Z[np.arange(n), y] += 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TemperatureScaler().fit(Z, y)


# ------------------------------------------------ 16-bit probabilities (issue 24, item 2)
def _log_as_documented(P16):
    """log of float16 values in float64, an exact 0 replaced by float32's tiny (the
    documented clip of check_scores for 16-bit input, whose logs are float32)."""
    return np.log(np.maximum(P16.astype(np.float64), np.finfo(np.float32).tiny))


def test_float16_probabilities_are_logged_in_float32_not_floored():
    """float16 holds probabilities down to 6e-8 (subnormals): none is floored
    at its smallest normal number 6.1e-5, and the log has float32 precision."""
    P = np.array([[1e-7, 3e-6, 5e-5, 1 - 5.31e-5], [0.25, 0.25, 0.25, 0.25]])
    P16 = P.astype(np.float16)
    Z, _ = check_scores(P16, input_type="probabilities")
    assert Z.dtype == np.float32
    # independent reference: log of the same (float16-rounded) values in float64
    np.testing.assert_allclose(Z, np.log(P16.astype(np.float64)), rtol=1e-6)
    z1, _ = check_scores(P16[:, 2], input_type="probabilities")  # one binary column
    np.testing.assert_allclose(z1[:, 1], np.log(P16[:, 2].astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(z1[:, 0], np.log1p(-P16[:, 2].astype(np.float64)), rtol=1e-6)
    torch = pytest.importorskip("torch")
    for tdt in (torch.float16, torch.bfloat16):
        T = torch.as_tensor(P).to(tdt)
        Zt, _ = check_scores(T, input_type="probabilities")
        assert Zt.dtype == torch.float32
        np.testing.assert_allclose(Zt.numpy(), np.log(T.double().numpy()), rtol=1e-6)


def test_temperature_on_float16_cifar10_probabilities_equals_float64():
    """The bundled CIFAR-10 set: T and test NLL of float16 probabilities are those
    of the same values in float64 (main floored them: T 1.4695 instead of 1.6807)."""
    from skcal.datasets import load_cifar10_resnet20
    from skcal.utils.validation import normalize_probabilities

    d = load_cifar10_resnet20()
    P16 = softmax(d.logits_val.astype(np.float64)).astype(np.float16)
    # reference: the same values in float64, given as their logs (softmax(log p)
    # renormalises the rows, as the probability path does)
    ref = TemperatureScaler().fit(_log_as_documented(P16), d.y_val)
    t16 = TemperatureScaler(input_type="probabilities").fit(P16, d.y_val)
    assert ref.temperature_ == pytest.approx(1.6807, abs=1e-4)
    assert t16.temperature_ == pytest.approx(ref.temperature_, rel=1e-5)
    # float16 cast to float32: refused as probabilities (rows sum to 0.99967)
    # until renormalised explicitly; then the same temperature
    with pytest.raises(ValueError, match="normalize_probabilities"):
        TemperatureScaler(input_type="probabilities").fit(P16.astype(np.float32), d.y_val)
    t32 = TemperatureScaler(input_type="probabilities").fit(
        normalize_probabilities(P16.astype(np.float32)), d.y_val)
    assert t32.temperature_ == pytest.approx(ref.temperature_, rel=1e-5)


def _registry():
    from skcal.utils.discovery import all_calibrators

    return [pytest.param(cls, id=name) for name, cls in all_calibrators()]


@pytest.mark.parametrize("cls", _registry())
def test_every_calibrator_float16_probabilities_match_float64(cls):
    """float16 storage changes nothing beyond its rounding: float16 values are
    exact in float32 and float64, so a fit on them differs from the float64 fit
    on the same values only by float32 arithmetic (the float32 == float64
    property's 2e-4)."""
    import warnings

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 300)
    y[:4] = np.arange(4)
    Z = 4.0 * (1.5 * np.eye(4)[y] + rng.normal(size=(300, 4)))
    P = np.maximum(softmax(Z), 2e-7)  # no exact 0 (PlattScaler treats those apart)
    P16 = (P / P.sum(axis=1, keepdims=True)).astype(np.float16)
    assert P16.min() > 0 and (P16 < 6.1e-5).mean() > 0.05  # many subnormal float16 values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = cls().fit(_log_as_documented(P16), y)
        est = cls(input_type="probabilities").fit(P16, y)
        Pref = ref.predict_proba(_log_as_documented(P16))
        P = est.predict_proba(P16)
    assert P.dtype == np.float32
    np.testing.assert_allclose(P, Pref, atol=2e-4)


def test_normalize_probabilities_is_explicit_and_checked():
    from skcal.utils.validation import normalize_probabilities

    P = np.array([[0.5, 0.2495, 0.25], [0.1, 0.1, 0.7993]], dtype=np.float32)
    out = normalize_probabilities(P)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, P.astype(np.float64) / P.astype(np.float64).sum(1)[:, None],
                               rtol=1e-7)
    np.testing.assert_allclose(out.sum(axis=1), 1, atol=1e-7)
    assert normalize_probabilities(P.astype(np.float64)).dtype == np.float64
    assert normalize_probabilities(P.astype(np.float16)).dtype == np.float32
    with pytest.raises(ValueError, match="further from 1 than atol=0.01"):
        normalize_probabilities([[0.5, 0.4], [0.5, 0.5]])
    with pytest.raises(ValueError, match="outside"):
        normalize_probabilities([[1.004, -0.004]])
    with pytest.raises(ValueError, match="at least 2 columns"):
        normalize_probabilities([[1.0], [1.0]])
    with pytest.raises(ValueError, match="atol"):
        normalize_probabilities(P, atol=0)
    torch = pytest.importorskip("torch")
    t = normalize_probabilities(torch.as_tensor(P, dtype=torch.float16))
    assert t.dtype == torch.float32
    np.testing.assert_allclose(t.sum(dim=1).numpy(), 1, atol=1e-6)


# ------------------------------- one probabilities-as-logits rule (issue 24, item 4)
@pytest.mark.parametrize("cls", _registry())
def test_every_calibrator_warns_for_binary_probabilities_read_as_log_odds(cls):
    """A 1-D or one-column score with every value in [0, 1] is the two-column
    [1 - p, p] (rows summing to 1): the same warning as the 2-column form."""
    import warnings

    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(0)
    p = rng.uniform(0.02, 0.98, 300)
    y = (rng.uniform(size=300) < p).astype(int)
    for X in (p, p[:, None], np.c_[1 - p, p]):
        with pytest.warns(ProbabilitiesAsLogitsWarning, match="looks like probabilities"):
            cls().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        warnings.filterwarnings("ignore", category=UserWarning, message="(?!X looks)")
        est = cls(input_type="probabilities").fit(p, y)  # said so: no warning
        cls().fit(4 * (p - 0.5), y)  # log-odds outside [0, 1]: no warning
    # the probability reading of the 1-D score is that of its two columns
    ref = cls(input_type="probabilities").fit(np.c_[1 - p, p], y)
    np.testing.assert_allclose(est.predict_proba(p), ref.predict_proba(np.c_[1 - p, p]),
                               atol=1e-9)


def test_binary_probabilities_warning_for_torch_dask_and_the_cli():
    from skcal._cli_calibrate import scores_as_logits
    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(1)
    p = rng.uniform(size=200)
    y = (rng.uniform(size=200) < p).astype(int)
    torch = pytest.importorskip("torch")
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        TemperatureScaler().fit(torch.as_tensor(p), y)
    da = pytest.importorskip("dask.array")
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        TemperatureScaler().fit(da.from_array(p, chunks=100), y)
    # skcal benchmark / report without --input-type: the same rule
    P = np.c_[1 - p, p]
    assert scores_as_logits(P, None, "f.npz")[1]
    assert not scores_as_logits(P, "logits", "f.npz")[1]
    assert not scores_as_logits(np.log(P), None, "f.npz")[1]


def test_local_temperature_extra_features_warn_for_probability_columns():
    """The logit columns before LocalTemperatureScaler's extra features follow the same rule."""
    from skcal import LocalTemperatureScaler
    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(3), 200)
    y = rng.integers(0, 3, 200)
    F = rng.normal(size=(200, 2))
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        LocalTemperatureScaler(n_extra_features=2, max_iter=5).fit(np.c_[P, F], y)
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        LocalTemperatureScaler(n_extra_features=2, max_iter=5).fit(np.c_[P[:, 1], F], y > 0)


def test_integer_labels_missing_class_0_need_classes():
    # The documented rule (docs/user_guide/index.rst): integer labels are
    # column indices only when they include 0; labels 1, 2 for 3 columns
    # (0..2 with class 0 absent, or 1..3 with 3 absent) are a ValueError
    # asking for classes=, and with classes= they fit, with a warning.
    from sklearn.model_selection import KFold, cross_val_score

    rng = np.random.default_rng(0)
    y = np.sort(rng.integers(0, 3, 120))  # sorted: KFold's first fold holds the 0s
    L = 2.0 * np.eye(3)[y] + rng.normal(size=(120, 3))
    m = y > 0
    with pytest.raises(ValueError, match=r"include 0.*classes="):
        TemperatureScaler().fit(L[m], y[m])
    with pytest.raises(ValueError, match="classes="):
        cross_val_score(TemperatureScaler(), L, y, cv=KFold(3), error_score="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        scores = cross_val_score(TemperatureScaler(classes=[0, 1, 2]), L, y, cv=KFold(3),
                                 error_score="raise")
    assert np.all(np.isfinite(scores))
    # fitted on rows of classes 1, 2 only: classes_ are 0..2 and the temperature
    # is the NLL-optimal one with the labels as column indices (1-D search)
    with pytest.warns(UserWarning, match="never occur"):
        b = TemperatureScaler(classes=[0, 1, 2]).fit(L[m], y[m])
    np.testing.assert_array_equal(b.classes_, [0, 1, 2])
    t_ref = temperature_reference(L[m], y[m])
    assert b.temperature_ == pytest.approx(t_ref, rel=1e-5)
    # labels >= K are ambiguous as well
    with pytest.raises(ValueError, match="classes="):
        TemperatureScaler().fit(L[m], y[m] + 1)


def _binary_logits():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    Z = rng.normal(size=(200, 2)) + 1.5 * np.eye(2)[y]
    Z[:, 0] += 3.0  # a per-row offset that the log-odds do not see
    return Z, y


def test_vector_scaler_rejects_switch_between_two_columns_and_log_odds():
    from skcal import VectorScaler

    Z, y = _binary_logits()
    s = Z[:, 1] - Z[:, 0]
    two = VectorScaler().fit(Z, y)
    with pytest.raises(ValueError, match="parameters per column"):
        two.predict_proba(s)
    one = VectorScaler().fit(s, y)
    with pytest.raises(ValueError, match="Pass a 1-D score vector, as in fit"):
        one.predict_proba(Z)
    assert one.predict_proba(s).shape == (200, 2)


@pytest.mark.parametrize("name", ["TemperatureScaler", "PlattScaler", "IsotonicScaler"])
def test_log_odds_calibrators_accept_the_switch_consistently(name):
    import skcal

    Z, y = _binary_logits()
    s = Z[:, 1] - Z[:, 0]
    two = getattr(skcal, name)().fit(Z, y)
    one = getattr(skcal, name)().fit(s, y)
    # a map of the log-odds alone: the four combinations agree
    for m in (two, one):
        np.testing.assert_allclose(m.predict_proba(s), m.predict_proba(Z), atol=1e-12)
    np.testing.assert_allclose(two.predict_proba(Z), one.predict_proba(s), atol=1e-9)


@pytest.mark.parametrize("name", ["TemperatureScaler", "VectorScaler", "PlattScaler",
                                  "IsotonicScaler", "MatrixScaler", "HistogramCalibrator"])
def test_probabilities_read_as_logits_warn(name):
    import skcal
    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 90)
    P = rng.dirichlet([1, 1, 1], size=90)
    cls = getattr(skcal, name)
    # the default and an explicit "logits" are the same value: both warn
    for est in (cls(), cls(input_type="logits"), pickle.loads(pickle.dumps(cls()))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.warns(ProbabilitiesAsLogitsWarning, match="input_type"):
                m = est.fit(P, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        cls(input_type="probabilities").fit(P, y)
        cls().fit(P * 2.0, y)  # rows sum to 2: not probabilities
        m.predict_proba(np.log(P))  # logits at predict time: no warning
    # probabilities at predict time: the same rule (issue 24 leftovers, item a)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="input_type"):
        m.predict_proba(P)


# ------------------------- the same rule at predict time (issue 24 leftovers, item a)
@pytest.mark.parametrize("cls", _registry())
def test_every_calibrator_warns_at_predict_time_for_probabilities(cls):
    """Fitted on logits, given probabilities (rows on the simplex) at predict
    time: predict_proba, predict_log_proba, transform, predict and score warn,
    by the fit-time rule; logits do not."""
    import warnings

    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(3)
    Z = rng.normal(size=(400, 3)) * 2
    y = (Z + rng.gumbel(size=Z.shape)).argmax(axis=1)
    P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls().fit(Z, y)
    for method in ("predict_proba", "predict_log_proba", "transform", "predict"):
        with pytest.warns(ProbabilitiesAsLogitsWarning, match="looks like probabilities"):
            getattr(est, method)(P)
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        est.score(P, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        est.predict_proba(Z)
        est.score(Z, y)


def test_predict_time_probability_warning_torch_dask_and_first_rows_only():
    from skcal.utils.validation import (
        PREDICT_PROBABILITY_CHECK_ROWS,
        ProbabilitiesAsLogitsWarning,
    )

    rng = np.random.default_rng(4)
    Z = rng.normal(size=(3000, 4)) * 2
    y = (Z + rng.gumbel(size=Z.shape)).argmax(axis=1)
    P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    ts = TemperatureScaler().fit(Z, y)
    with pytest.warns(ProbabilitiesAsLogitsWarning) as rec:
        ts.predict_proba(P)
    assert rec[0].filename == __file__  # points at the caller, not at skcal
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        TemperatureScaler().fit(Z[:, 1] - Z[:, 0], y == 1).predict_proba(P[:, 1])
    torch = pytest.importorskip("torch")
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        ts.predict_proba(torch.as_tensor(P))
    da = pytest.importorskip("dask.array")
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        ts.predict_proba(da.from_array(P, chunks=1000)).compute()
    # documented: only the first rows are judged
    mixed = np.r_[P[:PREDICT_PROBABILITY_CHECK_ROWS], Z[PREDICT_PROBABILITY_CHECK_ROWS:]]
    with pytest.warns(ProbabilitiesAsLogitsWarning):
        ts.predict_proba(mixed)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        ts.predict_proba(np.r_[Z[:1], P])


# ------------------- label-mismatch messages (issue 24 leftovers, item e)
def test_label_mismatch_messages_name_the_offending_labels_and_the_constructor():
    """The labels that do not fit come first (never cut off by a truncated list
    of the classes), and the remedy is the constructor parameter."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 25))
    y = np.r_[np.arange(25), rng.integers(0, 25, 274), 99]
    with pytest.raises(ValueError, match=r"labels \[99\] are not column indices 0\.\.24.*"
                       r"pass TemperatureScaler\(classes=\[\.\.\.\]\)"):
        TemperatureScaler().fit(Z, y)
    classes = list(range(25))
    with pytest.raises(ValueError, match=r"^y contains labels \[99\] that are not among.*"
                       r"in TemperatureScaler\(classes=\[\.\.\.\]\)"):
        TemperatureScaler(classes=classes).fit(Z, y)
    ts = TemperatureScaler().fit(Z, np.r_[y[:-1], 3])
    with pytest.raises(ValueError, match=r"^y contains labels \[99\] that are not among "
                       r"the classes \[0, 1, .*\.\.\. \(25 in all\)"):
        ts.score(Z, y)
    text = np.array(list("abcd"))[rng.integers(0, 4, 300)]
    with pytest.raises(ValueError, match=r"the labels are \['a', 'b', 'c', 'd'\].*"
                       r"VectorScaler\(classes=\[\.\.\.\]\)"):
        VectorScaler().fit(Z[:, :3], text)


def test_tiny_nonnegative_log_odds_are_not_reported_as_probabilities():
    """A binary score in [0, 1] all within 1e-3 of 0 is tiny log-odds (a tiny
    logit scale), not probabilities: no warning; a probability-like score with
    a largest value of 1e-3 or more still warns; 2-column rows summing to 1 warn
    whatever their values."""
    import warnings

    from skcal import PlattScaler
    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(0)
    s = np.abs(rng.normal(size=300))
    y = (rng.uniform(size=300) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        for c in (1e-99, 1e-50, 1e-5):  # 1e-100 and below: refused (underflow)
            X = s / s.max() * c * 0.999
            PlattScaler().fit(X, y).predict_proba(X)
            PlattScaler().fit(X[:, None], y)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="binary score"):
        PlattScaler().fit(s / s.max() * 1e-3, y)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="every row summing"):
        PlattScaler().fit(np.c_[1 - 1e-5 * s / s.max(), 1e-5 * s / s.max()], y)


@pytest.mark.parametrize("as_list", [False, True])
def test_one_row_as_1d_after_multiclass_fit_says_expected_2d(as_list):
    # one sample's logits passed as 1-D: scikit-learn's "Expected 2D array" and
    # the reshape, not "X has 1 features" (a 1-D X is a binary score per row)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, 500)
    Z = 3.0 * (np.eye(10)[y] + rng.normal(size=(500, 10)))
    est = VectorScaler().fit(Z, y)
    row = Z[0].tolist() if as_list else Z[0]
    with pytest.raises(ValueError, match=r"Expected 2D array, got 1D array instead: X has "
                       r"shape \(10,\).*X\.reshape\(1, -1\)"):
        est.predict_proba(row)
    np.testing.assert_array_equal(est.predict_proba(np.reshape(row, (1, -1))),
                                  est.predict_proba(Z[:1]))
    # a binary model still takes 1-D scores; a (n, 1) column keeps the old message
    with pytest.raises(ValueError, match="X has 1 features"):
        est.predict_proba(Z[:3, :1])


# ------------------------------------------ missing labels among object labels
@pytest.mark.parametrize("cls", _registry())
def test_every_calibrator_names_missing_labels_and_their_rows(cls):
    """A ``None`` or NaN among text labels is a missing label, not a sort error
    ("'<' not supported between instances of 'NoneType' and 'str'")."""
    rng = np.random.default_rng(0)
    y = np.array(list("abc"), dtype=object)[np.arange(60) % 3]
    y[[4, 17]] = None
    Z = rng.normal(size=(60, 3))
    with pytest.raises(ValueError, match=r"^y contains missing label\(s\) None at row\(s\) "
                       r"\[4, 17\]: every row needs a class label"):
        cls().fit(Z, y)
    y[17] = np.nan
    with pytest.raises(ValueError, match=r"^y contains missing label\(s\) None, nan at row\(s\) "
                       r"\[4, 17\]"):
        cls().fit(Z, list(y))


def test_missing_labels_in_integers_and_at_score_time():
    y = list(np.arange(30) % 3)
    Z = 2.0 * np.eye(3)[y] + np.random.default_rng(0).normal(size=(30, 3))
    ts = TemperatureScaler().fit(Z, y)
    y[29] = None  # was "Unknown label type: unknown"
    with pytest.raises(ValueError, match=r"missing label\(s\) None at row\(s\) \[29\]"):
        TemperatureScaler().fit(Z, y)
    with pytest.raises(ValueError, match=r"missing label\(s\) None at row\(s\) \[29\]"):
        ts.score(Z, y)
    pd = pytest.importorskip("pandas")
    text = pd.Series(np.array(list("abc"))[np.arange(30) % 3], dtype="string")
    text[[2, 5]] = pd.NA
    with pytest.raises(ValueError, match=r"missing label\(s\) <NA> at row\(s\) \[2, 5\]"):
        TemperatureScaler().fit(Z, text)
    # fresh34b: an empty text label became a class of its own (classes_ ['', 'a', 'b', 'c']
    # on four columns, every label one column off)
    text4 = np.array(list("abc"))[np.arange(30) % 3]
    text4[5] = ""
    Z4 = np.random.default_rng(1).normal(size=(30, 4))
    for labels in (text4, text4.astype(object), list(text4)):
        with pytest.raises(ValueError, match=r"missing label\(s\) '' at row\(s\) \[5\]"):
            TemperatureScaler().fit(Z4, labels)
    # float labels (fresh34b: scikit-learn's "Input y contains NaN" without rows at
    # fit, "labels [nan] ... not among the classes" at score): the same message
    yf = np.where(np.arange(30) == 29, np.nan, np.arange(30) % 3)
    with pytest.raises(ValueError, match=r"missing label\(s\) nan at row\(s\) \[29\]"):
        TemperatureScaler().fit(Z, yf)
    with pytest.raises(ValueError, match=r"missing label\(s\) nan at row\(s\) \[29\]"):
        ts.score(Z, yf)
    nullable = pd.Series(np.arange(30) % 3, dtype="Int64")
    nullable[3] = pd.NA
    with pytest.raises(ValueError, match=r"missing label\(s\) (nan|<NA>) at row\(s\) \[3\]"):
        TemperatureScaler().fit(Z, nullable)


def test_fit_warnings_point_at_the_callers_line():
    """Fixed stacklevels pointed inside skcal or scikit-learn for some paths (a
    meta-estimator's fit runs under scikit-learn's _fit_context wrapper); every
    warning below names this file, through _caller_stacklevel."""
    import warnings

    from sklearn.neighbors import KNeighborsClassifier

    from skcal import CalibratedClassifier, MatrixScaler, TemperatureScaler, VectorScaler
    from skcal.datasets import make_logits

    Z, y = make_logits(300, 3, random_state=0)
    X = np.random.default_rng(0).normal(size=(200, 4))
    calls = [
        lambda: TemperatureScaler().fit(np.ones((50, 3)), np.arange(50) % 3),
        lambda: TemperatureScaler(max_iter=1).fit(Z, y),
        lambda: VectorScaler(classes=[0, 1, 2, 3]).fit(np.c_[Z, Z[:, :1]], y),
        lambda: MatrixScaler(max_iter=2).fit(Z, y),
        lambda: CalibratedClassifier(KNeighborsClassifier()).fit(
            X, (X[:, 0] > 0).astype(int), sample_weight=np.ones(200)),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught
        assert all(w.filename == __file__ for w in caught), [
            (w.filename, str(w.message)[:60]) for w in caught]


@pytest.mark.parametrize("dtype, bound", [(np.float64, 1e-100), (np.float32, 1e-15)])
def test_check_scores_check_underflow_refuses_logits_below_the_reciprocal_bound(dtype, bound):
    assert bound == 1.0 / max_abs_logit(dtype)
    tiny = np.array([[0.0, bound / 4], [bound / 8, 0.0]], dtype=dtype)
    with pytest.raises(ValueError, match="magnitude at most .*Rescale the scores"):
        check_scores(tiny, check_underflow=True)
    # without the flag (predict time, the one-vs-rest family) they are accepted
    Z, _ = check_scores(tiny)
    np.testing.assert_array_equal(Z, tiny)
    # all-zero logits (tied rows) and logits reaching the bound are accepted
    check_scores(np.zeros((2, 3), dtype=dtype), check_underflow=True)
    check_scores(np.array([[0.0, -2 * bound]], dtype=dtype), check_underflow=True)


WHOLE_VECTOR = ["TemperatureScaler", "EnsembleTemperatureScaler", "VectorScaler",
                "BiasCorrectedTemperatureScaler", "NoBiasVectorScaler", "MatrixScaler",
                "DirichletCalibrator", "StructuredVectorScaler", "LocalTemperatureScaler"]


@pytest.mark.parametrize("name", WHOLE_VECTOR)
def test_whole_vector_fits_refuse_underflowing_logits(name):
    import skcal

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(120, 3)) * 3
    y = np.argmax(Z + rng.gumbel(size=Z.shape), axis=1)
    cls = getattr(skcal, name)
    # measured before the check: at logits ~1e-170 (float64) each of these fits
    # returned near-uniform probabilities (TemperatureScaler: T off by ~1e139,
    # after max_iter), BiasCorrectedTemperatureScaler an OverflowError
    with pytest.raises(ValueError, match="magnitude at most"):
        quiet_fit(cls(), Z * 1e-170, y)
    # just above the bound the fit is the fit of the unscaled logits
    P = quiet_fit(cls(), Z, y).predict_proba(Z)
    P_small = quiet_fit(cls(), Z * 1e-99, y).predict_proba(Z * 1e-99)
    np.testing.assert_allclose(P_small, P, atol=1e-6)


def test_underflowing_logits_are_predicted_and_left_to_the_one_vs_rest_family():
    from skcal import PlattScaler

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(60, 3))
    y = np.arange(60) % 3
    est = quiet_fit(TemperatureScaler(), Z, y)
    P = est.predict_proba(Z[:2] * 1e-200)  # predicting on such logits is fine
    np.testing.assert_allclose(P, 1.0 / 3.0, rtol=1e-12)
    # binary Platt is scale-equivariant at any magnitude (tests/ovr/test_platt.py)
    s = Z[:, 0]
    np.testing.assert_allclose(
        PlattScaler().fit(s * 1e-200, y == 0).predict_proba(s * 1e-200),
        PlattScaler().fit(s, y == 0).predict_proba(s), atol=1e-9,
    )


@pytest.mark.parametrize("shape", ["1-D", "one column"])
def test_one_score_per_row_with_more_than_two_labels_says_so(shape):
    """A 1-D (or one-column) X is one binary score per row: with 10 labels the
    error says so, not "there are 2 columns" (the columns X does not have)."""
    from skcal import TemperatureScaler

    s = np.random.default_rng(0).normal(size=100)
    X = s if shape == "1-D" else s[:, None]
    y = np.arange(100) % 10
    with pytest.raises(ValueError, match=r"one score per row .* but y has 10 distinct "
                       r"labels \[0, 1, 2, 3, 4, 5, 6, 7, 8, 9\]\. Pass the logits"):
        TemperatureScaler().fit(X, y)
