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
