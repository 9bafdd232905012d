"""DataFrame column names are the classes' names: recorded in fit, checked later."""

import numpy as np
import pytest

import skcal

pd = pytest.importorskip("pandas")

_NAMES = ["TemperatureScaler", "VectorScaler", "PlattScaler", "IsotonicScaler"]


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 400)
    Z = 3.0 * (np.eye(4)[y] + rng.normal(size=(400, 4)))
    return pd.DataFrame(Z, columns=list("abcd")), y


@pytest.mark.parametrize("name", _NAMES)
def test_feature_names_recorded_and_reordered_columns_rejected(name, frame):
    df, y = frame
    est = getattr(skcal, name)().fit(df, y)
    np.testing.assert_array_equal(est.feature_names_in_, list("abcd"))
    # the same frame predicts like its plain array
    np.testing.assert_array_equal(est.predict_proba(df), est.predict_proba(df.values))
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict_proba(df[list("dcba")])  # swapped columns would swap the classes
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict_proba(df.rename(columns={"a": "z"}))


def test_array_input_has_no_feature_names(frame):
    df, y = frame
    est = skcal.TemperatureScaler().fit(df.values, y)
    assert not hasattr(est, "feature_names_in_")


def _named_frame():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 2000)
    Z = 2.0 * rng.standard_normal((2000, 3))
    Z[np.arange(2000), y] += 1.5
    names = np.array(["cat", "dog", "emu"])
    return pd.DataFrame(Z, columns=names.tolist()), names[y], y


@pytest.mark.parametrize("name", _NAMES)
def test_columns_named_by_the_labels_are_matched_by_name(name):
    """Columns in another order than the sorted labels still belong to their own class."""
    df, ys, _ = _named_frame()
    shuffled = df[["dog", "emu", "cat"]]
    ref = getattr(skcal, name)().fit(df, ys)
    est = getattr(skcal, name)().fit(shuffled, ys)
    assert list(est.classes_) == ["dog", "emu", "cat"]
    # the same calibration, column for column
    np.testing.assert_allclose(est.predict_proba(shuffled),
                               ref.predict_proba(df)[:, [1, 2, 0]], atol=1e-7)
    assert est.score(shuffled, ys) == pytest.approx(ref.score(df, ys), rel=1e-7)


def test_integer_named_columns_and_conflicting_classes():
    df, _, y = _named_frame()
    dfi = pd.DataFrame(df.values, columns=["0", "1", "2"])[["2", "0", "1"]]
    est = skcal.TemperatureScaler().fit(dfi, y)
    assert est.classes_.tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="same labels in another order"):
        skcal.TemperatureScaler(classes=[0, 1, 2]).fit(dfi, y)


def test_metrics_match_dataframe_columns_by_label_name():
    from skcal.metrics import expected_calibration_error, negative_log_likelihood

    rng = np.random.default_rng(1)
    labels = np.array(list("abcd"))
    y = labels[rng.integers(0, 4, 1000)]
    P = pd.DataFrame(rng.dirichlet(np.ones(4), 1000), columns=list("abcd"))
    rev = P[list("dcba")]
    # independent reference: log of the true label's column, looked up by name
    ref = -np.mean(np.log(P.to_numpy()[np.arange(1000), np.searchsorted(labels, y)]))
    assert negative_log_likelihood(y, rev) == pytest.approx(ref, rel=1e-12)
    assert expected_calibration_error(y, rev, kind="classwise") == pytest.approx(
        expected_calibration_error(y, P, kind="classwise"), rel=1e-12)
    with pytest.raises(ValueError, match="same labels in another order"):
        negative_log_likelihood(y, rev, labels=list("abcd"))


def test_labels_that_name_columns_only_up_to_case_are_refused():
    # positional matching would be a silent guess: "Dog" would become "cat"
    df, ys, _ = _named_frame()
    upper = df.rename(columns=str.capitalize)[["Dog", "Cat", "Emu"]]
    with pytest.raises(ValueError, match="only when case and spaces are ignored"):
        skcal.TemperatureScaler().fit(upper, ys)
    partial = df.rename(columns={"emu": "eel"})
    with pytest.raises(ValueError, match=r"Some labels of y name score columns \(\['cat', 'dog'\]\)"):
        skcal.PlattScaler().fit(partial, ys)
    # names unrelated to the labels: matched by position (sorted labels), as arrays
    plain = pd.DataFrame(df.values, columns=["s0", "s1", "s2"])
    est = skcal.TemperatureScaler().fit(plain, ys)
    assert est.classes_.tolist() == ["cat", "dog", "emu"]
