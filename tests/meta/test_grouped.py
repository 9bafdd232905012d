"""GroupedCalibrator: one calibrator per group id, global fallback for small groups."""

import numpy as np
import pytest

from _helpers import temperature_reference
from skcal import GroupedCalibrator, PlattScaler, TemperatureScaler


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    g = rng.integers(0, 3, n)
    g[:40] = 7  # a small group
    Z = (1.0 + 2.0 * (g % 3))[:, None] * (np.eye(3)[y] + rng.normal(size=(n, 3)))
    return Z, y, g


def test_grouped_fits_each_group_and_falls_back():
    Z, y, g = _data()
    gc = GroupedCalibrator(TemperatureScaler(), min_group_size=100).fit(Z, y, groups=g)
    assert sorted(gc.calibrators_) == [0, 1, 2]
    assert gc.fallback_groups_.tolist() == [7]
    for k in (0, 2):
        m = g == k
        assert gc.calibrators_[k].temperature_ == pytest.approx(
            temperature_reference(Z[m], y[m]), rel=1e-6
        )
    assert gc.global_calibrator_.temperature_ == pytest.approx(
        temperature_reference(Z, y), rel=1e-6
    )
    # rows of the small group and of an unseen group use the global calibrator
    g2 = g.copy()
    g2[-5:] = 99
    P = gc.predict_proba(Z, groups=g2)
    glob = gc.global_calibrator_.predict_proba(Z)
    np.testing.assert_allclose(P[:40], glob[:40])
    np.testing.assert_allclose(P[-5:], glob[-5:])
    m = g2 == 1
    np.testing.assert_allclose(P[m], gc.calibrators_[1].predict_proba(Z[m]))
    assert gc.predict(Z, groups=g).shape == (3000,)
    assert np.isfinite(gc.score(Z, y, groups=g))


def test_grouped_missing_class_in_group_keeps_all_columns():
    Z, y, g = _data()
    y = y.copy()
    y[(g == 1) & (y == 2)] = 0  # group 1 never has class 2
    gc = GroupedCalibrator(PlattScaler(), min_group_size=100)
    with pytest.warns(UserWarning, match="never occur"):
        gc.fit(Z, y, groups=g)
    assert gc.calibrators_[1].classes_.tolist() == [0, 1, 2]
    assert gc.predict_proba(Z, groups=g).shape == (3000, 3)


def test_grouped_errors():
    Z, y, g = _data()
    with pytest.raises(ValueError, match="groups has"):
        GroupedCalibrator().fit(Z, y, groups=g[:-1])
    with pytest.raises(TypeError):
        GroupedCalibrator().fit(Z, y)
    with pytest.raises(ValueError, match="min_group_size"):
        GroupedCalibrator(min_group_size=0).fit(Z, y, groups=g)


@pytest.mark.parametrize("missing", [np.nan, None])
def test_missing_group_ids_are_named(missing):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = rng.integers(0, 3, 40)
    groups = np.array(["a", "b"] * 20, dtype=object) if missing is None else np.repeat([0.0, 1.0], 20)
    groups[7] = missing
    with pytest.raises(ValueError, match="groups has 1 missing ids .* row 7"):
        GroupedCalibrator().fit(X, y, groups=groups)


def test_dataframe_predict_keeps_column_names_for_every_calibrator():
    pd = pytest.importorskip("pandas")
    import warnings

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 3))
    X[np.arange(300), y] += 2
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    g = np.array(["x"] * 280 + ["y"] * 20)  # "y" is below min_group_size: global fallback
    est = GroupedCalibrator(min_group_size=50).fit(df, y, groups=g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = est.predict_proba(df, groups=g)
        P_new = est.predict_proba(df, groups=np.array(["z"] * 300))
    np.testing.assert_allclose(P[280:], est.global_calibrator_.predict_proba(df.iloc[280:]))
    np.testing.assert_allclose(P_new, est.global_calibrator_.predict_proba(df))
    with pytest.raises(ValueError, match="feature names"):
        est.predict_proba(df[["b", "a", "c"]], groups=g)


@pytest.mark.parametrize("bad", [np.array(["1", "2"] * 20), np.array([True, False] * 20)],
                         ids=["text", "bool"])
def test_group_ids_of_another_type_than_in_fit_are_refused(bad):
    # found by a fresh-user run: '1' (text) silently went to the global
    # calibrator, True matched group 1
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = rng.integers(0, 3, 40)
    est = GroupedCalibrator(min_group_size=5).fit(X, y, groups=np.repeat([1, 2], 20))
    with pytest.raises(ValueError, match="ids but the calibrator was fitted with number ids"):
        est.predict_proba(X, groups=bad)
    # new ids of the same type go to the global calibrator, as documented
    P = est.predict_proba(X, groups=np.full(40, 7))
    np.testing.assert_allclose(P, est.global_calibrator_.predict_proba(X))
