"""Tests of CalibratedClassifier: sklearn API checks, agreement with
sklearn's CalibratedClassifierCV, real over-confident models, model selection,
labels and sample-weight routing.

Every reference value comes from scikit-learn (CalibratedClassifierCV,
log_loss, cross-validation done by hand) or from arithmetic on the inputs,
never from the estimator under test.
"""

import math
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning, UnsetMetadataPassedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    LeaveOneOut,
    StratifiedKFold,
    cross_val_score,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from _helpers import softmax
from skcal import (
    CalibratedClassifier,
    ClassifierLogits,
    IsotonicScaler,
    PlattScaler,
    TemperatureScaler,
    VectorScaler,
)
from skcal.metrics import neg_log_likelihood_scorer


# ----------------------------------------------------------------- fixtures
def _three_way_split(X, y, seed=0):
    """Stratified train / calibration / test split, 40 / 30 / 30 %."""
    rng = np.random.default_rng(seed)
    train, cal, test = [], [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        a, b = int(0.4 * len(idx)), int(0.7 * len(idx))
        train.append(idx[:a])
        cal.append(idx[a:b])
        test.append(idx[b:])
    return [np.sort(np.concatenate(p)) for p in (train, cal, test)]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    tr, ca, te = _three_way_split(X, y)
    return X[tr], y[tr], X[ca], y[ca], X[te], y[te]


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    tr, ca, te = _three_way_split(X, y)
    return X[tr], y[tr], X[ca], y[ca], X[te], y[te]


@pytest.fixture(scope="module")
def digits_mlp(fitted_models):
    """A small MLP fitted on the digits training part (over-confident)."""
    return fitted_models("digits", "mlp")


def _scaled(clf):
    return make_pipeline(StandardScaler(), clf)


def _uncalibrated_proba(clf, X):
    """The model's own probabilities; margins read as logits for an SVM."""
    if hasattr(clf, "predict_proba"):
        return clf.predict_proba(X)
    S = clf.decision_function(X)
    if S.ndim == 1:
        S = np.column_stack([np.zeros_like(S), S])
    return softmax(S)


# ------------------------------------------------------ scikit-learn checks
@parametrize_with_checks(
    [
        # The default: LinearSVC (decision_function), 5-fold ensemble.
        CalibratedClassifier(),
        # predict_proba path (calibrator input_type="probabilities"), one
        # calibrator on out-of-fold outputs.
        CalibratedClassifier(GaussianNB(), cv=3, ensemble=False),
    ]
)
def test_calibrated_sklearn_compatible(estimator, check):
    # No check is excluded. The toy data of the checks is often separable,
    # so the temperature legitimately reaches its bounds and warns.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


# ------------------------------------------- agreement with scikit-learn
# sklearn's binary sigmoid/isotonic calibrate the 1-D decision function s, and
# so do PlattScaler / IsotonicScaler (the binary log-odds of classes_[1] is s).
# sklearn's binary temperature turns s into the logits (-s, s), i.e. log-odds
# 2s, while skcal uses (0, s): the families {sigmoid(c s) : c > 0} are the
# same, so the NLL-optimal *probabilities* agree (T_skcal = T_sklearn / 2).
# Tolerances: isotonic is exact (same PAV fit on the same scores); Platt: both
# fit (A, B) on Platt's smoothed targets, sklearn with L-BFGS (gtol 1e-6),
# skcal with Newton; temperature: sklearn's Brent search (xatol 64 eps on
# log beta) vs skcal's Newton (rtol 1e-10 on beta).
BINARY_PAIRS = [
    ("sigmoid", PlattScaler(), 1e-6),
    ("isotonic", IsotonicScaler(clip=None), 1e-12),
    ("temperature", TemperatureScaler(), 1e-7),
]


@pytest.mark.parametrize("method, calibrator, atol", BINARY_PAIRS)
@pytest.mark.parametrize("model", ["linear_svc", "rbf_svc"])
def test_calibrated_binary_decision_function_matches_sklearn(
    cancer, method, calibrator, atol, model
):
    Xtr, ytr, Xc, yc, Xte, _yte = cancer
    clf = LinearSVC() if model == "linear_svc" else SVC()
    clf = _scaled(clf).fit(Xtr, ytr)
    ref = CalibratedClassifierCV(FrozenEstimator(clf), method=method).fit(Xc, yc)
    ours = CalibratedClassifier(FrozenEstimator(clf), calibrator).fit(Xc, yc)
    assert ours.response_method_ == "decision_function"
    np.testing.assert_allclose(
        ours.predict_proba(Xte), ref.predict_proba(Xte), atol=atol
    )
    np.testing.assert_array_equal(ours.predict(Xte), ref.predict(Xte))


def test_calibrated_temperature_binary_is_half_sklearn_temperature(cancer):
    # sklearn's logits (-s, s) have log-odds 2s: its T is twice ours.
    Xtr, ytr, Xc, yc, _, _ = cancer
    clf = _scaled(LinearSVC()).fit(Xtr, ytr)
    ref = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature").fit(Xc, yc)
    T_sklearn = 1.0 / float(ref.calibrated_classifiers_[0].calibrators[0].beta_)
    ours = CalibratedClassifier(FrozenEstimator(clf)).fit(Xc, yc)
    T_ours = ours.calibrated_classifiers_[0].calibrator.temperature_
    assert T_ours == pytest.approx(T_sklearn / 2, rel=1e-6)


@pytest.mark.parametrize(
    "model, response",
    [("linear_svc", "decision_function"), ("mlp", "predict_proba")],
)
def test_calibrated_temperature_multiclass_matches_sklearn(
    digits, fitted_models, model, response
):
    # Multiclass temperature scaling is the same model in both libraries. For
    # predict_proba, sklearn takes log(p + 1e-12) and skcal log(max(p, tiny));
    # they differ only where p ~ 1e-12, which the MLP's rows barely have.
    _, _, Xc, yc, Xte, _ = digits
    clf = fitted_models("digits", model)
    ref = CalibratedClassifierCV(FrozenEstimator(clf), method="temperature").fit(Xc, yc)
    ours = CalibratedClassifier(FrozenEstimator(clf), TemperatureScaler()).fit(Xc, yc)
    assert ours.response_method_ == response
    np.testing.assert_allclose(
        ours.predict_proba(Xte), ref.predict_proba(Xte), atol=1e-6
    )


@pytest.mark.parametrize("ensemble", [True, False])
def test_calibrated_cross_validation_matches_sklearn(cancer, ensemble):
    # Same deterministic folds and estimator: same fold models, same
    # out-of-fold scores, so the same calibrated probabilities.
    Xtr, ytr, _, _, Xte, _ = cancer
    cv = StratifiedKFold(3)
    est = _scaled(LinearSVC())
    ref = CalibratedClassifierCV(est, method="sigmoid", cv=cv, ensemble=ensemble)
    ours = CalibratedClassifier(est, PlattScaler(), cv=cv, ensemble=ensemble)
    ref.fit(Xtr, ytr)
    ours.fit(Xtr, ytr)
    assert len(ours.calibrated_classifiers_) == (3 if ensemble else 1)
    np.testing.assert_allclose(
        ours.predict_proba(Xte), ref.predict_proba(Xte), atol=1e-6
    )


def test_calibrated_isotonic_predict_proba_matches_sklearn_on_calibration_points(
    digits, digits_mlp
):
    # IsotonicScaler fits on the one-vs-rest log-odds of p, sklearn on p: an
    # increasing transform of the same scores, so the same PAV fit. At the
    # calibration points (the knots) the fitted values, hence the
    # renormalised probabilities, are equal; between knots the two libraries
    # interpolate in different spaces (log-odds vs probability).
    _Xtr, _ytr, Xc, yc, _, _ = digits
    clf = digits_mlp
    ref = CalibratedClassifierCV(FrozenEstimator(clf), method="isotonic").fit(Xc, yc)
    ours = CalibratedClassifier(FrozenEstimator(clf), IsotonicScaler(clip=None))
    ours.fit(Xc, yc)
    np.testing.assert_allclose(
        ours.predict_proba(Xc), ref.predict_proba(Xc), atol=1e-12
    )


# ---------------------------------------------- real over-confident models
OVERCONFIDENT = {
    "random_forest": lambda: RandomForestClassifier(30, random_state=0),
    "mlp": lambda: MLPClassifier((32,), max_iter=300, random_state=0),
    "gaussian_nb": GaussianNB,
    "linear_svc": lambda: _scaled(LinearSVC()),
    "rbf_svc": lambda: _scaled(SVC()),
}
# (dataset, model) pairs whose test NLL calibration lowers. Left out: the
# forest on breast_cancer, which is not over-confident there (test NLL 0.129
# before; 0.258 after temperature scaling, whose fit on log-probabilities is
# dominated by the forest's exact 0/1 probabilities, clipped to log(tiny)).
REAL_CASES = [
    (d, m)
    for d in ("digits", "cancer")
    for m in OVERCONFIDENT
    if (d, m) != ("cancer", "random_forest")
]


@pytest.fixture(scope="module")
def fitted_models(digits, cancer):
    """Cache of models fitted on the training part, keyed by (dataset, model)."""
    cache = {}

    def get(dataset, name):
        if (dataset, name) not in cache:
            Xtr, ytr = (digits if dataset == "digits" else cancer)[:2]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                cache[dataset, name] = OVERCONFIDENT[name]().fit(Xtr, ytr)
        return cache[dataset, name]

    return get


def _check_nll_lowered(model, clf_before, Xte, yte):
    before = log_loss(
        yte, _uncalibrated_proba(clf_before, Xte), labels=clf_before.classes_
    )
    P = model.predict_proba(Xte)
    after = log_loss(yte, P, labels=model.classes_)
    assert after < before
    # score() is the unclipped mean log-likelihood (-inf if a true class gets
    # probability 0, which a forest's exact zeros with T < 1 can produce).
    with np.errstate(divide="ignore"):
        expected = np.mean(
            np.log(P[np.arange(len(yte)), np.searchsorted(model.classes_, yte)])
        )
    assert model.score(Xte, yte) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("dataset, name", REAL_CASES)
def test_calibrated_frozen_temperature_lowers_test_nll(
    request, fitted_models, dataset, name
):
    # Fitted model + temperature fitted on a separate calibration part (30 %).
    _, _, Xc, yc, Xte, yte = request.getfixturevalue(dataset)
    clf = fitted_models(dataset, name)
    model = CalibratedClassifier(FrozenEstimator(clf), TemperatureScaler()).fit(Xc, yc)
    _check_nll_lowered(model, clf, Xte, yte)


@pytest.mark.parametrize(
    "dataset, name",
    [
        ("digits", "random_forest"),
        ("digits", "gaussian_nb"),
        ("digits", "rbf_svc"),
        ("cancer", "gaussian_nb"),
        ("cancer", "linear_svc"),
    ],
)
@pytest.mark.parametrize(
    "calibrator",
    [TemperatureScaler(), IsotonicScaler()],
    ids=["temperature", "isotonic"],
)
def test_calibrated_cross_validated_lowers_test_nll(
    request, fitted_models, dataset, name, calibrator
):
    # 3-fold ensemble on train + calibration parts (70 %). Isotonic needs this
    # much data: on the 30 % calibration part alone it over-fits.
    Xtr, ytr, Xc, yc, Xte, yte = request.getfixturevalue(dataset)
    X, y = np.concatenate([Xtr, Xc]), np.concatenate([ytr, yc])
    model = CalibratedClassifier(OVERCONFIDENT[name](), calibrator, cv=3).fit(X, y)
    _check_nll_lowered(model, fitted_models(dataset, name), Xte, yte)


def test_calibrated_gaussian_nb_nll_figures(digits):
    # GaussianNB is grossly over-confident on digits; a cross-validated
    # temperature fixes most of it. Reference: sklearn's log_loss.
    Xtr, ytr, Xc, yc, Xte, yte = digits
    X = np.concatenate([Xtr, Xc])
    y = np.concatenate([ytr, yc])
    raw = log_loss(yte, GaussianNB().fit(X, y).predict_proba(Xte), labels=np.arange(10))
    model = CalibratedClassifier(GaussianNB(), TemperatureScaler(), cv=3).fit(X, y)
    cal = log_loss(yte, model.predict_proba(Xte))
    assert raw > 2.0
    assert cal < 0.5 * raw


# ------------------------------------------------------- model selection
def _manual_cv_log_loss(scores, y, calibrator, cv):
    """Mean test log loss of ``calibrator`` over ``cv``, done by hand."""
    losses = []
    for train, test in cv.split(scores, y):
        cal = sklearn.base.clone(calibrator).fit(scores[train], y[train])
        losses.append(
            log_loss(y[test], cal.predict_proba(scores[test]), labels=np.unique(y))
        )
    return float(np.mean(losses))


def test_grid_search_over_calibrators_and_alpha(digits):
    Xtr, ytr, Xc, yc, _, _ = digits
    clf = _scaled(LinearSVC()).fit(Xtr, ytr)
    grid = [
        {"calibrator": [TemperatureScaler(), PlattScaler(), IsotonicScaler()]},
        {"calibrator": [VectorScaler()], "calibrator__alpha": [1e-4, 1e-2, 1.0]},
    ]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        CalibratedClassifier(FrozenEstimator(clf)), grid, scoring="neg_log_loss", cv=cv
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(Xc, yc)
    # Independent reference: fit each calibrator on the decision function of
    # each training fold by hand and average sklearn's log_loss on the test folds.
    S = clf.decision_function(Xc)
    candidates = [TemperatureScaler(), PlattScaler(), IsotonicScaler()] + [
        VectorScaler(alpha=a) for a in (1e-4, 1e-2, 1.0)
    ]
    expected = [-_manual_cv_log_loss(S, yc, c, cv) for c in candidates]
    np.testing.assert_allclose(
        search.cv_results_["mean_test_score"], expected, rtol=1e-9
    )
    best = int(np.argmax(expected))
    assert search.best_index_ == best
    # The refitted best model is usable as a classifier.
    assert search.predict_proba(Xc[:3]).shape == (3, 10)


def test_grid_search_default_scoring_is_log_likelihood(cancer):
    # With no `scoring`, GridSearchCV uses score() = mean log-likelihood, the
    # same numbers as scoring="neg_log_loss" (no probabilities at 0 or 1 here).
    Xtr, ytr, Xc, yc, _, _ = cancer
    clf = GaussianNB().fit(Xtr, ytr)
    grid = {"calibrator": [TemperatureScaler(), PlattScaler(), IsotonicScaler()]}
    est = CalibratedClassifier(FrozenEstimator(clf))
    default = GridSearchCV(est, grid, cv=3).fit(Xc, yc)
    nll = GridSearchCV(est, grid, cv=3, scoring="neg_log_loss").fit(Xc, yc)
    np.testing.assert_allclose(
        default.cv_results_["mean_test_score"],
        nll.cv_results_["mean_test_score"],
        rtol=1e-7,
    )


def test_cross_val_score_neg_log_loss_and_skcal_scorer(digits):
    Xtr, ytr, Xc, yc, _, _ = digits
    X, y = np.concatenate([Xtr, Xc]), np.concatenate([ytr, yc])
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    model = CalibratedClassifier(GaussianNB(), TemperatureScaler(), cv=3)
    calibrated = cross_val_score(model, X, y, scoring="neg_log_loss", cv=cv)
    raw = cross_val_score(GaussianNB(), X, y, scoring="neg_log_loss", cv=cv)
    assert np.all(calibrated > raw)
    skcal_scores = cross_val_score(
        model, X, y, scoring=neg_log_likelihood_scorer, cv=cv
    )
    np.testing.assert_allclose(skcal_scores, calibrated, rtol=1e-7)


def test_calibrated_inside_pipeline(cancer):
    Xtr, ytr, _, _, Xte, _yte = cancer
    pipe = make_pipeline(
        StandardScaler(), CalibratedClassifier(LinearSVC(), PlattScaler(), cv=3)
    )
    pipe.fit(Xtr, ytr)
    ref = CalibratedClassifierCV(
        LinearSVC(), method="sigmoid", cv=StratifiedKFold(3)
    ).fit(StandardScaler().fit(Xtr).transform(Xtr), ytr)
    np.testing.assert_allclose(
        pipe.predict_proba(Xte),
        ref.predict_proba(pipe[0].transform(Xte)),
        atol=1e-6,
    )


# ---------------------------------------------------- fitting semantics
def test_calibrated_names_missing_labels_and_their_rows():
    # was numpy's "'<' not supported between instances of 'NoneType' and 'str'"
    X = np.random.default_rng(0).normal(size=(60, 2))
    y = np.array(["no", "yes"], dtype=object)[np.arange(60) % 2]
    y[[3, 8]] = None
    with pytest.raises(ValueError, match=r"^y contains missing label\(s\) None at row\(s\) "
                       r"\[3, 8\]: every row needs a class label"):
        CalibratedClassifier(LogisticRegression()).fit(X, y)


def test_calibrated_frozen_is_not_refitted(cancer):
    Xtr, ytr, Xc, yc, _, _ = cancer
    clf = _scaled(LogisticRegression()).fit(Xtr, ytr)
    coef = clf[-1].coef_.copy()
    model = CalibratedClassifier(FrozenEstimator(clf), cv=LeaveOneOut()).fit(Xc, yc)
    # ensemble="auto" -> False for a FrozenEstimator: one calibrator on all of
    # Xc, cv unused (LeaveOneOut would be refused if it were used).
    assert len(model.calibrated_classifiers_) == 1
    assert model.calibrated_classifiers_[0].estimator.estimator is clf
    np.testing.assert_array_equal(clf[-1].coef_, coef)
    # The calibrator saw exactly the decision function of the frozen model on Xc.
    T = model.calibrated_classifiers_[0].calibrator.temperature_
    s = clf.decision_function(Xc)
    p = 1 / (1 + np.exp(-s / T))
    np.testing.assert_allclose(model.predict_proba(Xc)[:, 1], p, rtol=1e-12)


def test_calibrated_frozen_with_ensemble_true_uses_folds(cancer):
    Xtr, ytr, Xc, yc, _, _ = cancer
    clf = _scaled(LogisticRegression()).fit(Xtr, ytr)
    model = CalibratedClassifier(FrozenEstimator(clf), ensemble=True, cv=4).fit(Xc, yc)
    assert len(model.calibrated_classifiers_) == 4
    # Each calibrator is fitted on its test fold only.
    s = clf.decision_function(Xc)
    Ts = []
    for _, test in StratifiedKFold(4).split(Xc, yc):
        Ts.append(TemperatureScaler().fit(s[test], yc[test]).temperature_)
    got = [p.calibrator.temperature_ for p in model.calibrated_classifiers_]
    np.testing.assert_allclose(got, Ts, rtol=1e-12)


def test_calibrated_ensemble_false_refits_on_all_data(cancer):
    Xtr, ytr, _, _, Xte, _ = cancer
    model = CalibratedClassifier(_scaled(LogisticRegression()), cv=3, ensemble=False)
    model.fit(Xtr, ytr)
    full = _scaled(LogisticRegression()).fit(Xtr, ytr)
    pair = model.calibrated_classifiers_[0]
    np.testing.assert_allclose(
        pair.estimator.decision_function(Xte), full.decision_function(Xte), rtol=1e-10
    )
    assert model.n_features_in_ == Xtr.shape[1]


def test_calibrated_predict_proba_binary_uses_probabilities(cancer):
    # GaussianNB has no decision_function: the calibrator gets predict_proba
    # with input_type="probabilities" (cloned; the user's instance is unchanged).
    Xtr, ytr, Xc, yc, Xte, _ = cancer
    clf = GaussianNB().fit(Xtr, ytr)
    user_cal = TemperatureScaler()
    model = CalibratedClassifier(FrozenEstimator(clf), user_cal).fit(Xc, yc)
    assert model.response_method_ == "predict_proba"
    cal = model.calibrated_classifiers_[0].calibrator
    assert cal.input_type == "probabilities" and user_cal.input_type == "logits"
    # By hand: logits log(max(p, tiny)), then softmax(z / T).
    T = cal.temperature_
    Z = np.log(np.maximum(clf.predict_proba(Xte), np.finfo(np.float64).tiny))
    np.testing.assert_allclose(model.predict_proba(Xte), softmax(Z / T), rtol=1e-10)


def test_calibrated_overrides_calibrator_input_type(cancer):
    Xtr, ytr, Xc, yc, Xte, _ = cancer
    clf = _scaled(LinearSVC()).fit(Xtr, ytr)
    a = CalibratedClassifier(
        FrozenEstimator(clf), TemperatureScaler(input_type="probabilities")
    )
    b = CalibratedClassifier(FrozenEstimator(clf), TemperatureScaler())
    np.testing.assert_array_equal(
        a.fit(Xc, yc).predict_proba(Xte), b.fit(Xc, yc).predict_proba(Xte)
    )


def test_calibrated_string_labels(digits):
    Xtr, ytr, Xc, yc, Xte, _ = digits
    names = np.array(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    )
    m_int = CalibratedClassifier(GaussianNB(), VectorScaler(), cv=3).fit(Xtr, ytr)
    m_str = CalibratedClassifier(GaussianNB(), VectorScaler(), cv=3).fit(
        Xtr, names[ytr]
    )
    np.testing.assert_array_equal(m_str.classes_, np.sort(names))
    # Columns follow the sorted string labels.
    order = np.argsort(names)
    np.testing.assert_allclose(
        m_str.predict_proba(Xte),
        m_int.predict_proba(Xte)[:, order],
        rtol=1e-9,
        atol=1e-12,
    )
    np.testing.assert_array_equal(m_str.predict(Xte), names[m_int.predict(Xte)])
    assert m_str.score(Xc, names[yc]) == pytest.approx(m_int.score(Xc, yc), rel=1e-9)


def test_calibrated_string_labels_binary_frozen(cancer):
    Xtr, ytr, Xc, yc, Xte, _yte = cancer
    lab = np.array(["malignant", "benign"])
    clf = _scaled(LinearSVC()).fit(Xtr, lab[ytr])
    ref = CalibratedClassifierCV(FrozenEstimator(clf), method="sigmoid").fit(
        Xc, lab[yc]
    )
    ours = CalibratedClassifier(FrozenEstimator(clf), PlattScaler()).fit(Xc, lab[yc])
    np.testing.assert_array_equal(ours.classes_, ["benign", "malignant"])
    np.testing.assert_allclose(
        ours.predict_proba(Xte), ref.predict_proba(Xte), atol=1e-6
    )


# --------------------------------------------------------- sample weights
def test_calibrated_integer_weights_equal_repetition(cancer):
    Xtr, ytr, Xc, yc, Xte, _ = cancer
    clf = _scaled(LinearSVC()).fit(Xtr, ytr)
    w = np.random.default_rng(0).integers(0, 4, size=len(yc))
    # Platt's smoothing prior counts rows (issue 16): repetition holds without it
    for cal in (TemperatureScaler(), PlattScaler(target_smoothing=False),
                IsotonicScaler()):
        a = CalibratedClassifier(FrozenEstimator(clf), cal).fit(Xc, yc, sample_weight=w)
        b = CalibratedClassifier(FrozenEstimator(clf), cal).fit(
            np.repeat(Xc, w, axis=0), np.repeat(yc, w)
        )
        np.testing.assert_allclose(
            a.predict_proba(Xte), b.predict_proba(Xte), atol=1e-8
        )


class _RecordingLR(LogisticRegression):
    """LogisticRegression that records the sample_weight its fit received."""

    received = []

    def fit(self, X, y, sample_weight=None):
        type(self).received.append(
            None if sample_weight is None else np.asarray(sample_weight)
        )
        return super().fit(X, y, sample_weight=sample_weight)


def test_calibrated_sample_weight_without_routing(cancer):
    Xtr, ytr = cancer[:2]
    Xtr = StandardScaler().fit_transform(Xtr)
    w = 1.0 + np.arange(len(ytr)) % 3
    _RecordingLR.received = []
    est = _RecordingLR()
    CalibratedClassifier(est, cv=KFold(3), ensemble=True).fit(Xtr, ytr, sample_weight=w)
    for rec, (train, _) in zip(_RecordingLR.received, KFold(3).split(Xtr)):
        np.testing.assert_array_equal(rec, w[train])
    # An estimator whose fit has no sample_weight: the calibrator only, with a warning.
    with pytest.warns(UserWarning, match="does not accept sample_weight"):
        CalibratedClassifier(KNeighborsClassifier(), cv=3).fit(
            Xtr, ytr, sample_weight=w
        )


def test_calibrated_sample_weight_with_metadata_routing(cancer):
    Xtr, ytr = cancer[:2]
    Xtr = StandardScaler().fit_transform(Xtr)
    w = 1.0 + np.random.default_rng(0).integers(0, 3, size=len(ytr))
    groups = np.arange(len(ytr)) % 3
    with sklearn.config_context(enable_metadata_routing=True):
        # Requested: the estimator gets the weights of each training fold.
        _RecordingLR.received = []
        est = _RecordingLR().set_fit_request(sample_weight=True)
        model = CalibratedClassifier(est, PlattScaler(), cv=GroupKFold(3))
        model.fit(Xtr, ytr, sample_weight=w, groups=groups)
        splits = list(GroupKFold(3).split(Xtr, ytr, groups))
        assert len(_RecordingLR.received) == 3
        for rec, (train, test) in zip(_RecordingLR.received, splits):
            np.testing.assert_array_equal(rec, w[train])
            # groups went to the splitter: each test fold is one group.
            assert len(np.unique(groups[test])) == 1
        # The calibrator of each fold got the weights of its test fold.
        s0 = model.calibrated_classifiers_[0].estimator.decision_function(
            Xtr[splits[0][1]]
        )
        test0 = splits[0][1]
        ref = PlattScaler().fit(s0, ytr[test0], sample_weight=w[test0])
        unweighted = PlattScaler().fit(s0, ytr[test0])
        cal0 = model.calibrated_classifiers_[0].calibrator
        assert (cal0.a_, cal0.b_) == (ref.a_, ref.b_)
        assert cal0.a_ != unweighted.a_
        # Declined: the estimator gets none, the calibrator still does.
        _RecordingLR.received = []
        est = _RecordingLR().set_fit_request(sample_weight=False)
        CalibratedClassifier(est, cv=3).fit(Xtr, ytr, sample_weight=w)
        assert all(r is None for r in _RecordingLR.received)
        # Not set: sklearn's routing error.
        with pytest.raises(UnsetMetadataPassedError):
            CalibratedClassifier(_RecordingLR(), cv=3).fit(Xtr, ytr, sample_weight=w)


# ------------------------------------------------------------------ errors
def test_calibrated_errors(cancer, digits):
    Xtr, ytr, Xc, yc, _, _ = cancer
    with pytest.raises(ValueError, match="least populated class"):
        CalibratedClassifier(GaussianNB(), cv=5).fit(
            Xtr[:12], np.r_[np.zeros(9), np.ones(3)]
        )
    with pytest.raises(ValueError, match="LeaveOneOut"):
        CalibratedClassifier(GaussianNB(), cv=LeaveOneOut()).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="1 class"):
        CalibratedClassifier(GaussianNB()).fit(Xtr, np.zeros(len(ytr)))
    # A one-vs-one decision function has K(K-1)/2 columns, not one per class.
    dXtr, dytr, dXc, dyc, _, _ = digits
    ovo = SVC(decision_function_shape="ovo").fit(dXtr, dytr)
    with pytest.raises(ValueError, match="one-vs-one"):
        CalibratedClassifier(FrozenEstimator(ovo)).fit(dXc, dyc)
    # Calibration labels that the frozen model does not know.
    clf = GaussianNB().fit(Xtr, ytr)
    with pytest.raises(ValueError, match="classes_"):
        CalibratedClassifier(FrozenEstimator(clf)).fit(Xc, yc + 1)
    # ensemble=False needs test folds that cover every sample once.
    half = [(np.arange(0, 100), np.arange(100, 200))]
    with pytest.raises(ValueError, match="partition"):
        CalibratedClassifier(GaussianNB(), cv=half, ensemble=False).fit(
            Xtr[:200], ytr[:200]
        )


def test_calibrated_classifier_logits_pipeline_equivalence(digits, digits_mlp):
    # CalibratedClassifier(FrozenEstimator(clf), cal) and
    # make_pipeline(ClassifierLogits(FrozenEstimator(clf)), cal) are the same model.
    _Xtr, _ytr, Xc, yc, Xte, _ = digits
    clf = digits_mlp
    a = CalibratedClassifier(FrozenEstimator(clf), VectorScaler()).fit(Xc, yc)
    b = make_pipeline(ClassifierLogits(FrozenEstimator(clf)), VectorScaler()).fit(
        Xc, yc
    )
    np.testing.assert_allclose(a.predict_proba(Xte), b.predict_proba(Xte), rtol=1e-10)


@pytest.mark.parametrize("ensemble", [True, False])
def test_calibrated_classifier_fold_lacking_a_class_warns_not_raises(ensemble):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold

    from skcal import CalibratedClassifier

    rng = np.random.default_rng(0)
    n = 150
    y = rng.integers(0, 3, n)
    y[:45] = rng.integers(1, 3, 45)  # class 0 absent from the first 45 rows
    y[100:] = rng.integers(1, 3, 50)  # ... and from the last 50
    X = rng.normal(size=(n, 2)) + 2.0 * np.eye(3)[y][:, :2]
    # fold 2's training rows (0..49 and 100..149) hold 5 or so rows of class 0 at most
    cv = [(np.r_[0:45, 100:150], np.r_[45:100]), (np.r_[45:150], np.r_[0:45]),
          (np.r_[0:100], np.r_[100:150])]
    y_cv = y.copy()
    y_cv[45:50] = 1  # now the first training fold has no class 0
    with pytest.warns(UserWarning, match="lacks the classes"):
        model = CalibratedClassifier(
            LogisticRegression(), cv=cv, ensemble=ensemble
        ).fit(X, y_cv)
    P = model.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    if ensemble:
        # the fold without class 0 gives it probability 0; the others do not
        pair = model.calibrated_classifiers_[0]
        assert np.all(pair.predict_proba(X)[:, 0] == 0)
        assert np.all(P[:, 0] > 0)


def test_one_vs_one_decision_function_with_three_classes_is_detected():
    from sklearn.datasets import make_blobs
    from sklearn.frozen import FrozenEstimator
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC

    from skcal import CalibratedClassifier, ClassifierLogits

    X, y = make_blobs(120, centers=3, random_state=0)
    svc = SVC(decision_function_shape="ovo").fit(X, y)
    assert svc.decision_function(X).shape == (120, 3)  # looks like 3 classes
    with pytest.raises(ValueError, match="one-vs-one"):
        CalibratedClassifier(FrozenEstimator(svc)).fit(X, y)
    with pytest.raises(ValueError, match="one-vs-one"):
        CalibratedClassifier(SVC(decision_function_shape="ovo"), cv=3).fit(X, y)
    pipe = make_pipeline(ClassifierLogits(FrozenEstimator(svc)), TemperatureScaler())
    with pytest.raises(ValueError, match="one-vs-one"):
        pipe.fit(X, y)
    # one-vs-rest shape (the default) is calibrated
    ovr = CalibratedClassifier(SVC(), cv=3).fit(X, y)
    assert ovr.score(X, y) > -0.5 > -math.log(3)


@pytest.mark.parametrize("wrap", [lambda c: c, FrozenEstimator])
def test_a_calibrator_given_as_the_estimator_is_refused_by_name(wrap):
    from skcal import PlattScaler

    X, y = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match=r"estimator=.*TemperatureScaler\(\).* is a calibrator, "
                       r"not a classifier.*calibrator=TemperatureScaler\(\)"):
        CalibratedClassifier(wrap(TemperatureScaler()), PlattScaler(), cv=3).fit(X, y)
