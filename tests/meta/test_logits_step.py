"""Tests of ClassifierLogits, the Pipeline step that outputs a classifier's logits.

References are computed by hand (X @ coef.T + intercept, log of fixed
probabilities) or by scikit-learn (CalibratedClassifierCV, log_loss).
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcal import (
    ClassifierLogits,
    IsotonicScaler,
    PlattScaler,
    TemperatureScaler,
    VectorScaler,
)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0  # pixel intensities in [0, 1]: LogisticRegression converges fast
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, test_size=0.6, random_state=0, stratify=y
    )
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, test_size=0.5, random_state=0, stratify=y_rest
    )
    return X_train, X_cal, X_test, y_train, y_cal, y_test


class _FixedProba(ClassifierMixin, BaseEstimator):
    """Classifier whose predict_proba returns a fixed array (for hand checks)."""

    def __init__(self, proba=None):
        self.proba = proba

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.asarray(self.proba)


@parametrize_with_checks(
    [ClassifierLogits(GaussianNB()), ClassifierLogits(LinearSVC())]
)
def test_classifier_logits_sklearn_compatible(estimator, check):
    check(estimator)


def test_classifier_logits_decision_function_by_hand(cancer):
    X_train, X_test, y_train, _ = cancer
    clf = LogisticRegression().fit(X_train, y_train)
    step = ClassifierLogits(FrozenEstimator(clf)).fit(X_train, y_train)
    assert step.response_method_ == "decision_function"
    Z = step.transform(X_test)
    # A binary decision function is one column: the log-odds of classes_[1].
    assert Z.shape == (len(X_test), 1)
    np.testing.assert_allclose(
        Z[:, 0], X_test @ clf.coef_[0] + clf.intercept_[0], rtol=1e-12
    )
    np.testing.assert_array_equal(step.classes_, [0, 1])
    np.testing.assert_array_equal(step.get_feature_names_out(), ["classifierlogits_1"])


def test_classifier_logits_multiclass_decision_function(digits):
    X_train, _, X_test, y_train, _, _ = digits
    clf = LogisticRegression(max_iter=200).fit(X_train, y_train)
    Z = ClassifierLogits(FrozenEstimator(clf)).fit(X_train, y_train).transform(X_test)
    np.testing.assert_allclose(Z, X_test @ clf.coef_.T + clf.intercept_, rtol=1e-12)


def test_classifier_logits_log_proba_and_zero_clipping():
    P = np.array([[0.0, 1.0], [0.25, 0.75], [0.5, 0.5]])
    step = ClassifierLogits(_FixedProba(P)).fit(np.zeros((3, 1)), [0, 1, 1])
    assert step.response_method_ == "predict_proba"
    Z = step.transform(np.zeros((3, 1)))
    tiny = np.finfo(np.float64).tiny  # log(tiny) = -708.396...
    expected = [[np.log(tiny), 0.0], [np.log(0.25), np.log(0.75)], [np.log(0.5)] * 2]
    np.testing.assert_allclose(Z, expected, rtol=1e-15)
    assert Z[0, 0] == pytest.approx(-708.3964185322641)
    # float32 probabilities: float32 tiny, log = -87.336...
    step32 = ClassifierLogits(_FixedProba(P.astype(np.float32))).fit(
        np.zeros((3, 1)), [0, 1, 1]
    )
    Z32 = step32.transform(np.zeros((3, 1)))
    assert Z32.dtype == np.float32
    assert Z32[0, 0] == pytest.approx(-87.33654, rel=1e-6)
    assert np.isfinite(Z32).all()


def test_classifier_logits_response_method_option(cancer):
    X_train, X_test, y_train, _ = cancer
    clf = LogisticRegression().fit(X_train, y_train)
    step = ClassifierLogits(FrozenEstimator(clf), response_method="predict_proba")
    Z = step.fit(X_train, y_train).transform(X_test)
    np.testing.assert_allclose(Z, np.log(clf.predict_proba(X_test)), rtol=1e-12)
    with pytest.raises(AttributeError, match="decision_function"):
        ClassifierLogits(GaussianNB(), response_method="decision_function").fit(
            X_train, y_train
        )


def test_classifier_logits_unfrozen_estimator_is_cloned_and_fitted(cancer):
    X_train, X_test, y_train, _ = cancer
    clf = LogisticRegression()
    step = ClassifierLogits(clf).fit(X_train, y_train)
    assert not hasattr(clf, "coef_")  # the user's instance is not touched
    ref = LogisticRegression().fit(X_train, y_train)
    np.testing.assert_allclose(
        step.transform(X_test)[:, 0], ref.decision_function(X_test), rtol=1e-12
    )
    assert step.n_features_in_ == X_train.shape[1]


def test_classifier_logits_ovo_decision_function_is_refused(digits):
    X_train, _, X_test, y_train, _, _ = digits
    ovo = SVC(decision_function_shape="ovo").fit(X_train, y_train)
    step = ClassifierLogits(FrozenEstimator(ovo)).fit(X_train, y_train)
    with pytest.raises(ValueError, match=r"one-vs-one decision function \(45 columns"):
        step.transform(X_test)


@pytest.mark.parametrize("method", ["temperature", "sigmoid", "isotonic"])
def test_pipeline_calibrates_fitted_model_like_sklearn(cancer, method):
    # make_pipeline(ClassifierLogits(FrozenEstimator(clf)), calibrator) is
    # sklearn's CalibratedClassifierCV(FrozenEstimator(clf), method=...) for
    # a binary decision function (see test_calibrated.py for tolerances).
    X_train, X_rest, y_train, y_rest = cancer
    X_cal, X_test, y_cal, _y_test = train_test_split(
        X_rest, y_rest, test_size=0.5, random_state=0, stratify=y_rest
    )
    clf = LinearSVC().fit(X_train, y_train)
    coef = clf.coef_.copy()
    calibrator = {
        "temperature": TemperatureScaler(),
        "sigmoid": PlattScaler(),
        "isotonic": IsotonicScaler(clip=None),
    }[method]
    model = make_pipeline(ClassifierLogits(FrozenEstimator(clf)), calibrator)
    model.fit(X_cal, y_cal)
    np.testing.assert_array_equal(clf.coef_, coef)  # not refitted
    ref = CalibratedClassifierCV(FrozenEstimator(clf), method=method).fit(X_cal, y_cal)
    np.testing.assert_allclose(
        model.predict_proba(X_test), ref.predict_proba(X_test), atol=1e-6
    )
    np.testing.assert_array_equal(model.classes_, [0, 1])
    np.testing.assert_array_equal(model.predict(X_test), ref.predict(X_test))


def test_pipeline_behaves_as_classifier(digits):
    X_train, X_cal, X_test, y_train, y_cal, y_test = digits
    names = np.array([f"digit {i}" for i in range(10)])
    clf = GaussianNB().fit(X_train, names[y_train])
    model = make_pipeline(ClassifierLogits(FrozenEstimator(clf)), TemperatureScaler())
    model.fit(X_cal, names[y_cal])
    P = model.predict_proba(X_test)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(model.classes_, names)
    # Temperature scaling keeps the model's predicted class.
    np.testing.assert_array_equal(model.predict(X_test), clf.predict(X_test))
    # score() = mean log-likelihood = -log_loss, and lower than the raw NLL.
    nll = log_loss(names[y_test], P, labels=names)
    assert model.score(X_test, names[y_test]) == pytest.approx(-nll, rel=1e-9)
    assert nll < log_loss(names[y_test], clf.predict_proba(X_test), labels=names)


def test_pipeline_grid_search_over_calibrator_step(digits):
    X_train, X_cal, _, y_train, y_cal, _ = digits
    clf = LogisticRegression(max_iter=200).fit(X_train, y_train)
    pipe = make_pipeline(ClassifierLogits(FrozenEstimator(clf)), TemperatureScaler())
    grid = {"temperaturescaler": [TemperatureScaler(), VectorScaler(alpha=1e-2)]}
    search = GridSearchCV(pipe, grid, cv=3, scoring="neg_log_loss").fit(X_cal, y_cal)
    # Reference by hand on the step's logits (the decision function).
    S = clf.decision_function(X_cal)
    expected = []
    for cal in grid["temperaturescaler"]:
        losses = [
            log_loss(
                y_cal[te],
                type(cal)(**cal.get_params())
                .fit(S[tr], y_cal[tr])
                .predict_proba(S[te]),
                labels=np.arange(10),
            )
            for tr, te in StratifiedKFold(3).split(S, y_cal)
        ]
        expected.append(-np.mean(losses))
    np.testing.assert_allclose(
        search.cv_results_["mean_test_score"], expected, rtol=1e-9
    )


def test_classifier_logits_warns_when_calibration_set_lacks_non_range_classes():
    """Labels {0, 2, 5} with 5 absent: the next step cannot map labels to columns."""
    import warnings as _w

    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from skcal import ClassifierLogits

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = np.array([0, 2, 5])[rng.integers(0, 3, 600)]
    X[:, 0] += y
    clf = LogisticRegression().fit(X[:300], y[:300])
    cal = y[300:] != 5
    with pytest.warns(UserWarning, match="cannot tell which column"):
        ClassifierLogits(FrozenEstimator(clf)).fit(X[300:][cal], y[300:][cal])
    # classes 0..K-1: the calibrators' own rule is right, no warning
    y2 = np.searchsorted([0, 2, 5], y)
    clf2 = LogisticRegression().fit(X[:300], y2[:300])
    with _w.catch_warnings():
        _w.simplefilter("error")
        ClassifierLogits(FrozenEstimator(clf2)).fit(X[300:][cal], y2[300:][cal])


def test_classifier_logits_warns_when_a_fitted_estimator_is_refit(cancer):
    """A fitted, not frozen classifier is refitted on the calibration rows: warn."""
    import warnings

    X_train, X_test, y_train, y_test = cancer
    clf = LogisticRegression().fit(X_train, y_train)
    with pytest.warns(UserWarning, match="FrozenEstimator"):
        step = ClassifierLogits(clf).fit(X_test, y_test)
    # it was refitted on the rows given (reference: a fresh fit on them)
    ref = LogisticRegression().fit(X_test, y_test)
    np.testing.assert_allclose(step.estimator_.coef_, ref.coef_, rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ClassifierLogits(FrozenEstimator(clf)).fit(X_test, y_test)
        ClassifierLogits(LogisticRegression()).fit(X_test, y_test)


def test_pipeline_with_pandas_output_matches_columns_to_text_classes_by_name():
    """set_output(transform="pandas"): ClassifierLogits' columns carry the class names,
    so text labels need no sorted-order guess and an absent class keeps its column."""
    import warnings as _w

    pytest.importorskip("pandas")
    from skcal.exceptions import LabelsInSortedOrderWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 4))
    k = rng.integers(0, 3, 900)
    X[:, 0] += 2 * k
    names = np.array(["virginica", "setosa", "versicolor"])[k]  # sorted != first seen
    clf = LogisticRegression().fit(X[:300], names[:300])

    def pipe(pandas):
        p = make_pipeline(ClassifierLogits(FrozenEstimator(clf)),
                          VectorScaler(classes=None if pandas else clf.classes_))
        return p.set_output(transform="pandas") if pandas else p

    with _w.catch_warnings():
        _w.simplefilter("error", LabelsInSortedOrderWarning)
        by_name = pipe(True).fit(X[300:], names[300:])
    ref = pipe(False).fit(X[300:], names[300:])
    np.testing.assert_allclose(by_name.predict_proba(X[:50]), ref.predict_proba(X[:50]),
                               rtol=1e-10, atol=1e-12)
    # a class absent from the calibration set: matched by name, kept as a column
    cal = names[300:] != "setosa"
    with pytest.warns(UserWarning, match="never occur in the calibration set"):
        by_name = pipe(True).fit(X[300:][cal], names[300:][cal])
    with pytest.warns(UserWarning, match="never occur in the calibration set"):
        ref = pipe(False).fit(X[300:][cal], names[300:][cal])
    assert list(by_name.classes_) == ["setosa", "versicolor", "virginica"]
    np.testing.assert_allclose(by_name.predict_proba(X[:50]), ref.predict_proba(X[:50]),
                               rtol=1e-10, atol=1e-12)


def test_classifier_logits_refuses_a_calibrator_as_its_estimator():
    rng = np.random.default_rng(0)
    Z, y = rng.normal(size=(60, 3)), np.arange(60) % 3
    for est in (TemperatureScaler(), FrozenEstimator(TemperatureScaler().fit(Z, y))):
        with pytest.raises(ValueError, match=r"is a calibrator, not a classifier: "
                           r"ClassifierLogits .*make_pipeline\(ClassifierLogits\("
                           r"FrozenEstimator\(clf\)\), TemperatureScaler\(\)\)"):
            ClassifierLogits(est).fit(Z, y)
