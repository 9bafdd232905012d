"""The intent of scikit-learn's ``sklearn/tests/test_calibration.py`` (1.9), ported to skcal.

Written for skcal's API (our own code, no copy): scikit-learn's
``CalibratedClassifierCV(clf, method=m)`` becomes
``CalibratedClassifier(clf, calibrator)`` with ``m`` mapped to
:class:`~skcal.PlattScaler` ("sigmoid"), :class:`~skcal.IsotonicScaler`
("isotonic") or :class:`~skcal.TemperatureScaler` ("temperature");
``calibration_curve`` becomes :func:`skcal.metrics.reliability_curve` with
``kind="binary"``; ``CalibrationDisplay`` becomes
:class:`skcal.display.ReliabilityDisplay`.

Ported (same intent, skcal's names): test_calibration (Brier improves,
relabelling invariance), test_calibration_default_estimator,
test_calibration_cv_splitter, test_calibration_cv_nfold, test_sample_weight,
test_parallel_execution, test_calibration_multiclass (both halves: LinearSVC
and the 30-tree random forest; issue 16, bug 3), test_calibration_frozen,
test_calibration_ensemble_false (against cross_val_predict + a calibrator
fitted by hand), test_sigmoid_calibration (LibSVM's reference values),
test_temperature_scaling, test_temperature_scaling_input_validation,
test_calibration_curve, test_calibration_nan_imputer, test_calibration_prob_sum,
test_calibration_less_classes (issue 16, bug 8), test_calibration_accepts_ndarray,
test_calibration_dict_pipeline, test_calibration_attributes,
test_calibration_inconsistent_prefit_n_features_in,
test_calibration_votingclassifier, test_calibration_curve_pos_label_error_str,
test_calibration_curve_pos_label, test_calibration_display_pos_label,
test_calibrated_classifier_cv_double_sample_weights_equivalence,
test_calibration_with_sample_weight_estimator,
test_calibration_without_sample_weight_estimator,
test_calibrated_classifier_cv_works_with_large_confidence_scores,
test_float32_predict_proba, test_error_less_class_samples_than_folds.

Not ported, and why:

- test_calibration_method_raises: skcal has no ``method`` string; the
  calibrator is an estimator instance, validated by its own
  ``_parameter_constraints`` (tests/test_common.py).
- test_calibration_zero_probability: it drives the private
  ``_CalibratedClassifier`` with a stub calibrator whose outputs are all 0;
  skcal's one-vs-rest combination of all-zero rows is tested in
  tests/ovr/test_isotonic.py / skcal.ovr (uniform fallback, log-space combination
  for Platt).
- test_sigmoid_calibration_max_abs_prediction_threshold: a private argument
  of scikit-learn's ``_sigmoid_calibration``; skcal standardises the scores
  instead (tests/ovr/test_platt.py checks scores of any magnitude).
- test_calibration_with_fit_params / test_calibration_with_non_sample_aligned_fit_param:
  need scikit-learn's private ``CheckingClassifier``; fit parameters routing
  is tested in tests/meta/test_calibrated.py with a recording classifier.
- test_calibration_display_compute, test_plot_calibration_curve_pipeline,
  test_calibration_display_default_labels, test_calibration_display_label_class_plot,
  test_calibration_display_name_multiple_calls, test_calibration_display_ref_line,
  test_calibration_display_kwargs: the API of ``CalibrationDisplay``
  (``y_prob`` attribute, label texts, name handling); skcal's
  ``ReliabilityDisplay`` has its own tests (tests/test_display.py); only
  ``pos_label`` is ported here, as issue 16 asks.
- test_temperature_scaling_array_api_compliance /
  test_temperature_scaling_array_api_with_str_y_estimator_not_prefit: the array
  API dispatch of scikit-learn; skcal's torch backend is tested in
  tests/backends/test_torch.py and tests/backends/test_backend.py.
- The ``csr_container`` parametrisations: the sparse input goes to the
  classifier (MultinomialNB), not to skcal; one dense run keeps the intent.

Deliberate differences: equal-mass bins in skcal are inverted-CDF quantiles
(issue 16), so the quantile values of test_calibration_curve are skcal's own
(hand-computed); Platt's smoothing prior counts rows (issue 16, bug 5), so
the double-weights equivalence is checked with ``target_smoothing=False`` for
Platt and the default for the others.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_iris, make_blobs, make_classification
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import RandomForestClassifier, VotingClassifier
from sklearn.feature_extraction import DictVectorizer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from _helpers import multiclass_brier, quiet, softmax
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import (
    KFold,
    LeaveOneOut,
    check_cv,
    cross_val_predict,
    cross_val_score,
    train_test_split,
)
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import LabelEncoder, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from skcal import (
    CalibratedClassifier,
    IsotonicScaler,
    PlattScaler,
    TemperatureScaler,
)
from skcal.metrics import reliability_curve

N_SAMPLES = 200
METHODS = {
    "sigmoid": PlattScaler,
    "isotonic": IsotonicScaler,
    "temperature": TemperatureScaler,
}


def _cal(method, **kw):
    return METHODS[method](**kw)


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=N_SAMPLES, n_features=6, random_state=42)


# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
@pytest.mark.parametrize("ensemble", [True, False])
def test_calibration(data, method, ensemble):
    X, y = data
    n = N_SAMPLES // 2
    sw = np.random.RandomState(42).uniform(size=y.size)
    X = X - X.min()
    Xtr, ytr, swtr, Xte, yte = X[:n], y[:n], sw[:n], X[n:], y[n:]
    clf = MultinomialNB().fit(Xtr, ytr, sample_weight=swtr)
    p_clf = clf.predict_proba(Xte)[:, 1]
    with pytest.raises(ValueError):
        CalibratedClassifier(clf, _cal(method), cv=y.size + 1, ensemble=ensemble).fit(X, y)
    model = CalibratedClassifier(clf, _cal(method), cv=5, ensemble=ensemble)
    p_cal = model.fit(Xtr, ytr, sample_weight=swtr).predict_proba(Xte)[:, 1]
    assert brier_score_loss(yte, p_clf) > brier_score_loss(yte, p_cal)
    for relabel in (ytr + 1, 2 * ytr - 1):
        p_rel = model.fit(Xtr, relabel, sample_weight=swtr).predict_proba(Xte)[:, 1]
        assert_allclose(p_cal, p_rel, atol=1e-6)
    p_flip = model.fit(Xtr, (ytr + 1) % 2, sample_weight=swtr).predict_proba(Xte)[:, 1]
    if method == "sigmoid":
        assert_allclose(p_cal, 1 - p_flip, atol=1e-6)
    else:
        assert brier_score_loss(yte, p_clf) > brier_score_loss((yte + 1) % 2, p_flip)


def test_calibration_default_estimator(data):
    X, y = data
    model = CalibratedClassifier(cv=2).fit(X, y)
    assert isinstance(model.calibrated_classifiers_[0].estimator, LinearSVC)
    assert isinstance(model.calibrated_classifiers_[0].calibrator, TemperatureScaler)


@pytest.mark.parametrize("ensemble", [True, False])
def test_calibration_cv_splitter(data, ensemble):
    X, y = data
    model = CalibratedClassifier(cv=KFold(n_splits=5), ensemble=ensemble).fit(X, y)
    assert len(model.calibrated_classifiers_) == (5 if ensemble else 1)


def test_calibration_cv_nfold(data):
    X, y = data
    with pytest.raises(ValueError, match="Requesting 101-fold cross-validation"):
        CalibratedClassifier(cv=KFold(n_splits=101), ensemble=True).fit(X, y)
    with pytest.raises(ValueError, match="LeaveOneOut"):
        CalibratedClassifier(cv=LeaveOneOut(), ensemble=True).fit(X, y)


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
@pytest.mark.parametrize("ensemble", [True, False])
def test_sample_weight(data, method, ensemble):
    X, y = data
    n = N_SAMPLES // 2
    sw = np.random.RandomState(42).uniform(size=len(y))
    model = CalibratedClassifier(LinearSVC(random_state=42), _cal(method), ensemble=ensemble)
    with_w = model.fit(X[:n], y[:n], sample_weight=sw[:n]).predict_proba(X[n:])
    without = model.fit(X[:n], y[:n]).predict_proba(X[n:])
    assert np.linalg.norm(with_w - without) > 0.1


@pytest.mark.parametrize("method", ["sigmoid", "temperature"])
def test_parallel_execution(data, method):
    # the threading backend keeps the n_jobs=2 path without process start-up
    from joblib import parallel_backend

    X, y = data
    Xtr, Xte, ytr, _ = train_test_split(X, y, random_state=42)
    est = make_pipeline(StandardScaler(), LinearSVC(random_state=42))
    par = CalibratedClassifier(est, _cal(method), n_jobs=2)
    seq = CalibratedClassifier(est, _cal(method), n_jobs=1)
    with parallel_backend("threading"):
        P = par.fit(Xtr, ytr).predict_proba(Xte)
    assert_allclose(P, seq.fit(Xtr, ytr).predict_proba(Xte))


def _blobs(seed):
    X, y = make_blobs(n_samples=500, n_features=100, random_state=seed, centers=10,
                      cluster_std=15.0)
    y[y > 2] = 2
    return X[::2], y[::2], X[1::2], y[1::2]


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
@pytest.mark.parametrize("ensemble", [True, False])
@pytest.mark.parametrize("seed", [1])  # scikit-learn runs 0 and 1 (time)
def test_calibration_multiclass_linear_svc(method, ensemble, seed):
    Xtr, ytr, Xte, yte = _blobs(seed)
    clf = LinearSVC(random_state=7).fit(Xtr, ytr)
    model = quiet(CalibratedClassifier(clf, _cal(method), cv=5, ensemble=ensemble).fit,
                   Xtr, ytr)
    P = model.predict_proba(Xte)
    assert_allclose(P.sum(axis=1), 1.0)
    assert 0.65 < clf.score(Xte, yte) < 0.95
    # (skcal's score is the log-likelihood; the accuracy is compared)
    assert accuracy_score(yte, model.predict(Xte)) > 0.95 * clf.score(Xte, yte)
    uncal = multiclass_brier(yte, softmax(clf.decision_function(Xte)), 3)
    assert multiclass_brier(yte, P, 3) < 1.1 * uncal


@pytest.mark.slow
@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
@pytest.mark.parametrize("ensemble", [True, False])
def test_calibration_multiclass_random_forest(method, ensemble):
    # the second half of scikit-learn's test (one seed; Platt, "sigmoid", is
    # also compared with scikit-learn itself in tests/ovr/test_platt.py)
    Xtr, ytr, Xte, yte = _blobs(1)
    clf = RandomForestClassifier(n_estimators=30, random_state=42).fit(Xtr, ytr)
    uncal = multiclass_brier(yte, clf.predict_proba(Xte), 3)
    model = quiet(CalibratedClassifier(clf, _cal(method), cv=5, ensemble=ensemble).fit,
                   Xtr, ytr)
    assert multiclass_brier(yte, model.predict_proba(Xte), 3) < 1.1 * uncal


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
def test_calibration_frozen(method):
    n = 50
    X, y = make_classification(n_samples=3 * n, n_features=6, random_state=42)
    sw = np.random.RandomState(42).uniform(size=y.size)
    X -= X.min()
    clf = MultinomialNB().fit(X[:n], y[:n], sw[:n])
    Xc, yc, swc = X[n:2 * n], y[n:2 * n], sw[n:2 * n]
    Xte, yte = X[2 * n:], y[2 * n:]
    p_clf = clf.predict_proba(Xte)[:, 1]
    model = CalibratedClassifier(FrozenEstimator(clf), _cal(method))
    for w in (swc, None):
        model.fit(Xc, yc, sample_weight=w)
        P = model.predict_proba(Xte)
        assert_array_equal(model.predict(Xte), np.array([0, 1])[np.argmax(P, axis=1)])
        assert brier_score_loss(yte, p_clf) > brier_score_loss(yte, P[:, 1])


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
def test_calibration_ensemble_false(data, method):
    X, y = data
    clf = LinearSVC(random_state=7)
    model = CalibratedClassifier(clf, _cal(method), cv=3, ensemble=False).fit(X, y)
    oof = cross_val_predict(clf, X, y, cv=3, method="decision_function")
    calibrator = _cal(method).fit(oof, y)
    manual = calibrator.predict_proba(clone(clf).fit(X, y).decision_function(X))
    assert_allclose(model.predict_proba(X), manual)


def test_sigmoid_calibration():
    # LibSVM's values (Lin, Lin & Weng's C++ code), as in scikit-learn's test.
    # scikit-learn's map is 1 / (1 + exp(A f + B)): skcal's a_, b_ are -A, -B.
    F = np.array([5, -4, 1.0])
    y = np.array([1, -1, -1])
    A_libsvm, B_libsvm = -0.20261354391187855, 0.65236314980010512
    ps = PlattScaler().fit(F, y)
    assert_allclose([ps.a_, ps.b_], [-A_libsvm, -B_libsvm], atol=1e-3)
    lin = 1.0 / (1.0 + np.exp(A_libsvm * F + B_libsvm))
    assert_allclose(ps.predict_proba(F)[:, 1], lin, atol=1e-3)
    with pytest.raises(ValueError):
        PlattScaler().fit(np.vstack((F, F)), y)  # 2 rows of 3: not 3 samples


@pytest.mark.parametrize("n_classes", [2, 3])  # scikit-learn also runs 5 (time)
@pytest.mark.parametrize("ensemble", [True, False])
def test_temperature_scaling(n_classes, ensemble):
    X, y = make_classification(n_samples=1000, n_features=10, n_informative=10,
                               n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, class_sep=2.0, random_state=42)
    Xtr, Xc, ytr, yc = train_test_split(X, y, random_state=42)
    clf = LogisticRegression(C=np.inf, tol=1e-8, max_iter=200, random_state=0)
    clf = quiet(clf.fit, Xtr, ytr)
    model = CalibratedClassifier(FrozenEstimator(clf), TemperatureScaler(), cv=3,
                                 ensemble=ensemble).fit(Xc, yc)
    for pair in model.calibrated_classifiers_:
        assert pair.calibrator.temperature_ > 0
    if not ensemble:
        assert accuracy_score(yc, model.predict(Xc)) == accuracy_score(yc, clf.predict(Xc))
        s, s_cal = clf.predict_proba(Xc), model.predict_proba(Xc)
        assert log_loss(yc, s_cal) <= log_loss(yc, s)
        if n_classes == 2:
            s, s_cal = s[:, 1], s_cal[:, 1]
        assert_allclose(roc_auc_score(yc, s, multi_class="ovr"),
                        roc_auc_score(yc, s_cal, multi_class="ovr"))
        # a logistic regression's own training set needs T = 1
        ts = TemperatureScaler(input_type="probabilities").fit(clf.predict_proba(Xtr), ytr)
        assert_allclose(ts.temperature_, 1.0, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_temperature_scaling_input_validation(dtype):
    X = np.arange(10).astype(dtype)
    y = np.random.RandomState(0).randint(0, 2, size=X.shape[0])
    a = quiet(TemperatureScaler().fit, X, y)
    b = quiet(TemperatureScaler().fit, X.reshape(-1, 1), y)
    assert_allclose(a.predict_proba(X), b.predict_proba(X.reshape(-1, 1)))


def test_calibration_curve():
    y = np.array([0, 0, 0, 1, 1, 1])
    p = np.array([0.0, 0.1, 0.2, 0.8, 0.9, 1.0])
    c = reliability_curve(y, p, kind="binary", n_bins=2)
    assert_allclose(c.prob_true, [0, 1])
    assert_allclose(c.prob_pred, [0.1, 0.9])
    with pytest.raises(ValueError):
        reliability_curve([1], [-0.1], kind="binary")
    y2 = np.array([0, 0, 0, 0, 1, 1])
    p2 = np.array([0.0, 0.1, 0.2, 0.5, 0.9, 1.0])
    c = reliability_curve(y2, p2, kind="binary", n_bins=2, strategy="quantile")
    # inverted-CDF median: the first score whose cumulative share reaches 1/2
    # is 0.2, so the bins are [0, 0.2] and (0.2, 1] (scikit-learn's linear
    # quantile puts the edge at 0.35 and gets the same two groups)
    assert_allclose(c.bin_edges, [0.0, 0.2, 1.0])
    assert_allclose(c.prob_true, [0, 2 / 3])
    assert_allclose(c.prob_pred, [0.1, 0.8])
    with pytest.raises(ValueError):
        reliability_curve(y2, p2, kind="binary", strategy="percentile")


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
@pytest.mark.parametrize("ensemble", [True, False])
def test_calibration_nan_imputer(method, ensemble):
    X, y = make_classification(n_samples=10, n_features=2, n_informative=2,
                               n_redundant=0, random_state=42)
    X[0, 0] = np.nan
    clf = Pipeline([("imputer", SimpleImputer()),
                    ("rf", RandomForestClassifier(n_estimators=1, random_state=0))])
    model = quiet(CalibratedClassifier(clf, _cal(method), cv=2, ensemble=ensemble).fit,
                   X, y)
    model.predict(X)


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
@pytest.mark.parametrize("ensemble", [True, False])
def test_calibration_prob_sum(method, ensemble):
    X, _ = make_classification(n_samples=10, n_features=5, n_classes=2, random_state=0)
    y = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    model = CalibratedClassifier(LinearSVC(C=1.0, random_state=7), _cal(method),
                                 cv=KFold(n_splits=3), ensemble=ensemble)
    quiet(model.fit, X, y)
    assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("ensemble", [True, False])
def test_calibration_less_classes(ensemble):
    X = np.random.RandomState(0).randn(12, 5)
    y = [0, 0, 0, 1] + [1, 1, 2, 2] + [2, 3, 3, 3]
    model = CalibratedClassifier(DecisionTreeClassifier(random_state=7), PlattScaler(),
                                 cv=KFold(3), ensemble=ensemble)
    with pytest.warns(UserWarning, match="lacks the classes"):
        _fit_keep_user_warnings(model, X, y)
    if ensemble:
        classes = np.arange(4)
        for i, absent in zip([0, 2], [0, 3]):
            P = model.calibrated_classifiers_[i].predict_proba(X)
            assert_array_equal(P[:, absent], 0)
            assert np.all(P[:, classes != absent] > 0)
    else:
        P = model.calibrated_classifiers_[0].predict_proba(X)
        assert_allclose(P.sum(axis=1), 1.0)


def _fit_keep_user_warnings(model, X, y):
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


@pytest.mark.parametrize("shape", [(15, 5, 2), (15, 5, 2, 6)])
def test_calibration_accepts_ndarray(shape):
    X = np.random.RandomState(42).randn(*shape)
    y = [1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0]

    class MockTensorClassifier(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.unique(y)
            return self

        def decision_function(self, X):
            return X.reshape(X.shape[0], -1).sum(axis=1)

    quiet(CalibratedClassifier(MockTensorClassifier()).fit, X, y)


def test_calibration_dict_pipeline():
    X = [{"state": "NY", "age": "adult"}, {"state": "TX", "age": "adult"},
         {"state": "VT", "age": "child"}, {"state": "CT", "age": "adult"},
         {"state": "BR", "age": "child"}]
    y = [1, 0, 1, 1, 0]
    clf = Pipeline([("vectorizer", DictVectorizer()),
                    ("clf", RandomForestClassifier(random_state=0))]).fit(X, y)
    model = quiet(CalibratedClassifier(FrozenEstimator(clf), cv=2).fit, X, y)
    assert_array_equal(model.classes_, clf.classes_)
    assert not hasattr(clf, "n_features_in_")
    assert not hasattr(model, "n_features_in_")
    model.predict(X)
    model.predict_proba(X)


def test_calibration_attributes():
    X, y = make_classification(n_samples=10, n_features=5, n_classes=2, random_state=7)
    model = quiet(CalibratedClassifier(LinearSVC(C=1), cv=2).fit, X, y)
    assert_array_equal(model.classes_, LabelEncoder().fit(y).classes_)
    assert model.n_features_in_ == X.shape[1]


def test_calibration_inconsistent_prefit_n_features_in():
    X, y = make_classification(n_samples=10, n_features=5, n_classes=2, random_state=7)
    clf = LinearSVC(C=1).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but LinearSVC is expecting 5"):
        CalibratedClassifier(FrozenEstimator(clf)).fit(X[:, :3], y)


def test_calibration_votingclassifier():
    X, y = make_classification(n_samples=10, n_features=5, n_classes=2, random_state=7)
    vote = VotingClassifier(
        estimators=[(f"lr{i}", LogisticRegression()) for i in range(3)], voting="soft"
    ).fit(X, y)
    quiet(CalibratedClassifier(FrozenEstimator(vote)).fit, X, y)


@pytest.mark.parametrize("dtype_y_str", [str, object])
def test_calibration_curve_pos_label_error_str(dtype_y_str):
    y1 = np.array(["spam"] * 3 + ["eggs"] * 2, dtype=dtype_y_str)
    y2 = np.random.RandomState(42).randint(0, 2, size=y1.size).astype(float)
    with pytest.raises(ValueError, match="pos_label"):
        reliability_curve(y1, y2, kind="binary")


@pytest.mark.parametrize("dtype_y_str", [str, object])
def test_calibration_curve_pos_label(dtype_y_str):
    y = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1])
    y_str = np.array(["spam", "egg"], dtype=dtype_y_str)[y]
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.65, 0.7, 0.8, 0.9, 1.0])
    # scikit-learn's four bins of width 1/4 hold .1 .2 | .3 .4 | .65 .7 | .8 .9 1
    c = reliability_curve(y, p, kind="binary", n_bins=4)
    assert_allclose(c.prob_true, [0, 0.5, 1, 1])
    c = reliability_curve(y_str, p, kind="binary", n_bins=4, pos_label="egg")
    assert_allclose(c.prob_true, [0, 0.5, 1, 1])
    c = reliability_curve(y, 1 - p, kind="binary", n_bins=4, pos_label=0)
    assert_allclose(c.prob_true, [0, 0, 0.5, 1])
    c = reliability_curve(y_str, 1 - p, kind="binary", n_bins=4, pos_label="spam")
    assert_allclose(c.prob_true, [0, 0, 0.5, 1])
    # two columns and kind="binary": pos_label picks the column
    P = np.column_stack([1 - p, p])
    c = reliability_curve(y_str, P, kind="binary", n_bins=4, pos_label="spam",
                          labels=["spam", "egg"])
    assert_allclose(c.prob_true, [0, 0, 0.5, 1])


@pytest.mark.parametrize("pos_label, expected", [(None, 1), (0, 0), (1, 1)])
def test_calibration_display_pos_label(pos_label, expected):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skcal.display import ReliabilityDisplay

    X, y = load_iris(return_X_y=True)
    X, y = X[y < 2], y[y < 2]
    lr = LogisticRegression().fit(X, y)
    disp = ReliabilityDisplay.from_estimator(lr, X, y, kind="binary", pos_label=pos_label)
    c = reliability_curve(y, lr.predict_proba(X)[:, expected],
                          kind="binary", pos_label=expected if pos_label is not None else None,
                          labels=None if pos_label is not None else [0, 1])
    assert_allclose(disp.prob_true, c.prob_true)
    assert_allclose(disp.prob_pred, c.prob_pred)
    plt.close("all")


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
@pytest.mark.parametrize("ensemble", [True, False])
def test_calibrated_classifier_double_sample_weights_equivalence(method, ensemble):
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:100]
    y = y[:100]
    X2 = np.repeat(X, 2, axis=0)  # interlaced: a 2-fold cv keeps the pairs apart
    y2 = np.repeat(y, 2)
    # Platt's smoothing prior counts rows (issue 16, bug 5)
    kw = {"target_smoothing": False} if method == "sigmoid" else {}
    model = CalibratedClassifier(LogisticRegression(), _cal(method, **kw),
                                 ensemble=ensemble, cv=2)
    a = quiet(clone(model).fit, X, y, sample_weight=np.full(len(y), 2.0))
    b = quiet(clone(model).fit, X2, y2)
    for pa, pb in zip(a.calibrated_classifiers_, b.calibrated_classifiers_):
        assert_allclose(pa.estimator.coef_, pb.estimator.coef_, rtol=1e-6)
    assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)


class _RecordingClassifier(LogisticRegression):
    seen = []

    def fit(self, X, y, sample_weight=None):
        type(self).seen.append(sample_weight)
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("as_list", [True, False])
def test_calibration_with_sample_weight_estimator(data, as_list):
    X, y = data
    sw = [1.0] * N_SAMPLES if as_list else np.ones(N_SAMPLES)
    _RecordingClassifier.seen = []
    CalibratedClassifier(_RecordingClassifier()).fit(X, y, sample_weight=sw)
    assert _RecordingClassifier.seen and all(s is not None for s in _RecordingClassifier.seen)


def test_calibration_without_sample_weight_estimator(data):
    X, y = data

    class NoWeights(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.lr_ = LogisticRegression().fit(X, y)
            self.classes_ = self.lr_.classes_
            return self

        def decision_function(self, X):
            return self.lr_.decision_function(X)

    with pytest.warns(UserWarning, match="does not accept sample_weight"):
        CalibratedClassifier(NoWeights()).fit(X, y, sample_weight=np.ones_like(y))


def test_calibrated_classifier_works_with_large_confidence_scores():
    n, seed = 200, 0
    noise = np.random.default_rng(seed).normal(size=n)
    y = np.array([1] * int(n * 0.67) + [0] * (n - int(n * 0.67)))
    X = 1e5 * y.reshape((-1, 1)) + noise
    clf = SGDClassifier(loss="squared_hinge", tol=1e-2, random_state=seed)
    for train, test in check_cv(3, y, classifier=True).split(X, y):
        scores = quiet(clone(clf).fit, X[train], y[train]).decision_function(X[test])
        assert (scores > 1e4).any()
    sig = quiet(cross_val_score, CalibratedClassifier(clone(clf), PlattScaler(), cv=3),
                 X, y, scoring="roc_auc", cv=3)
    iso = quiet(cross_val_score, CalibratedClassifier(clone(clf), IsotonicScaler(),
                                                       cv=3), X, y, scoring="roc_auc", cv=3)
    assert_allclose(sig, iso)


@pytest.mark.parametrize("use_sample_weight", [True, False])
@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
def test_float32_predict_proba(data, use_sample_weight, method):
    sw = np.ones_like(data[1], dtype=np.float64) if use_sample_weight else None

    class DummyClassifier32(DummyClassifier):
        def predict_proba(self, X):
            return super().predict_proba(X).astype(np.float32)

    quiet(CalibratedClassifier(DummyClassifier32(), _cal(method)).fit, *data,
           sample_weight=sw)
    model = DummyClassifier32().fit(*data, sample_weight=sw)
    quiet(CalibratedClassifier(FrozenEstimator(model), _cal(method)).fit, *data,
           sample_weight=sw)


def test_error_less_class_samples_than_folds():
    X = np.random.RandomState(0).normal(size=(20, 3))
    y = ["a"] * 10 + ["b"] * 10
    quiet(CalibratedClassifier(cv=3).fit, X, y)


def test_isotonic_matches_sklearn_isotonic_regression_on_binary_scores(data):
    # intent of scikit-learn's calibrator choice: the isotonic map is
    # IsotonicRegression(out_of_bounds="clip") on the decision function
    X, y = data
    s = LinearSVC(random_state=0).fit(X, y).decision_function(X)
    ref = IsotonicRegression(out_of_bounds="clip").fit(s, y).predict(s)
    got = IsotonicScaler(clip=0).fit(s, y).predict_proba(s)[:, 1]
    assert_allclose(got, ref, atol=1e-12)
