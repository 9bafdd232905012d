"""Persistence: skops.io round trips trusting only skcal's types; pickle."""

import json
import pickle
import warnings

import numpy as np
import pytest

import skcal
from skcal import TemperatureScaler
from skcal.base import BaseCalibrator

sio = pytest.importorskip("skops.io")


def _estimators():
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    from skcal.utils.discovery import all_calibrators

    out = [cls() for _, cls in all_calibrators()]
    out.append(skcal.ClassifierLogits(LogisticRegression()))
    out.append(skcal.CalibratedClassifier(GaussianNB(), calibrator=skcal.IsotonicScaler(), cv=3))
    out.append(skcal.CalibratedClassifier(LogisticRegression(), calibrator=skcal.PlattScaler()))
    return out


def _fit(est, labels):
    rng = np.random.default_rng(0)
    y = labels[rng.integers(0, len(labels), 300)]
    if isinstance(est, BaseCalibrator):
        X = rng.normal(size=(300, len(labels))) * 3
        X[np.arange(300), np.searchsorted(labels, y)] += 2.0  # informative
    else:
        X = rng.normal(size=(300, 4))
        X[:, 0] += np.searchsorted(labels, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y), X


def _output(est, X):
    return est.transform(X) if not hasattr(est, "predict_proba") else est.predict_proba(X)


ESTIMATORS = _estimators()
IDS = [f"{type(e).__name__}-{i}" for i, e in enumerate(ESTIMATORS)]


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("labels", [np.array([0, 1, 2]), np.array(["no", "yes"])], ids=["int3", "str2"])
def test_skops_round_trip_trusting_only_skcal(est, labels, tmp_path):
    from skcal.io import dump, load, trusted_types

    est, X = _fit(est, labels)
    path = tmp_path / "model.skops"
    dump(est, path)
    # every type skops does not trust by default is one of skcal's own
    untrusted = sio.get_untrusted_types(file=path)
    assert untrusted and set(untrusted) <= set(trusted_types())
    loaded = load(path)
    assert type(loaded) is type(est)
    np.testing.assert_array_equal(_output(loaded, X), _output(est, X))
    np.testing.assert_array_equal(loaded.classes_, est.classes_)
    # the plain skops call documented in skcal.io
    again = sio.load(path, trusted=trusted_types())
    np.testing.assert_array_equal(_output(again, X), _output(est, X))


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_pickle_round_trip(est):
    est, X = _fit(est, np.array([0, 1, 2]))
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(_output(loaded, X), _output(est, X))


def test_skops_refuses_foreign_types(tmp_path):
    from sklearn.preprocessing import FunctionTransformer

    from skcal.io import dump, load

    path = tmp_path / "evil.skops"
    dump(FunctionTransformer(func=json.dumps), path)  # not one of skcal's types
    with pytest.raises(Exception, match="[Uu]ntrusted"):
        load(path)


def test_trusted_types_are_skcal_only():
    from skcal.io import trusted_types

    names = trusted_types()
    assert all(n.startswith("skcal.") for n in names)
    assert any(n.endswith(".TemperatureScaler") for n in names)
    assert any(n.endswith("._CalibratedPair") for n in names)


def _classifiers():
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier

    return [
        HistGradientBoostingClassifier(max_iter=3, random_state=0),  # TreePredictor
        RandomForestClassifier(n_estimators=3, random_state=0),  # sklearn.tree._tree.Tree
        KNeighborsClassifier(n_neighbors=5),  # KDTree, EuclideanDistance64
    ]


@pytest.mark.parametrize("clf", _classifiers(), ids=lambda c: type(c).__name__)
def test_skops_loads_calibrated_sklearn_classifiers(clf, tmp_path):
    # main: UntrustedTypesFoundException for the classes these models store
    pytest.importorskip("skops")
    from skcal.io import dump, load

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + X[:, 1] + rng.normal(size=120) > 0).astype(int)
    model = skcal.CalibratedClassifier(clf, cv=2).fit(X, y)
    path = tmp_path / "model.skops"
    dump(model, path)
    loaded = load(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    with open(path, "rb") as fh:  # a file object too
        np.testing.assert_array_equal(load(fh).predict_proba(X[:5]), model.predict_proba(X[:5]))


def test_skops_trusts_sklearn_classes_not_functions():
    from skcal.io import _sklearn_classes

    names = [
        "sklearn.tree._tree.Tree",
        "sklearn.datasets.fetch_openml",  # a function: never trusted implicitly
        "numpy.testing.Tester",
        "sklearnx.Evil",
        "sklearn.no_such_module.Thing",
    ]
    assert _sklearn_classes(names) == ["sklearn.tree._tree.Tree"]


def test_pickle_records_skcal_version_and_warns_on_another(monkeypatch):
    import pickle

    import skcal
    from skcal.exceptions import InconsistentVersionWarning

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    ts = TemperatureScaler().fit(rng.normal(size=(50, 2)) + np.eye(2)[y], y)
    blob = pickle.dumps(ts)
    assert ts.__getstate__()["_skcal_version"] == skcal.__version__
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconsistentVersionWarning)
        back = pickle.loads(blob)
    assert back.temperature_ == ts.temperature_
    assert "_skcal_version" not in back.__dict__
    original = skcal.__version__
    monkeypatch.setattr(skcal, "__version__", "0.0.0-other")
    with pytest.warns(InconsistentVersionWarning, match="0.0.0-other") as rec:
        pickle.loads(blob)
    w = rec[0].message
    assert w.original_skcal_version == original
    assert w.current_skcal_version == "0.0.0-other"
    assert w.estimator_name == "TemperatureScaler"
