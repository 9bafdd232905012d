"""Tests for the skcal.metrics scorers inside scikit-learn model selection."""

import numpy as np
import pytest
import sklearn.metrics
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_val_score,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcal.metrics import (
    brier_score,
    calibration_error,
    expected_calibration_error,
    get_scorer,
    get_scorer_names,
    neg_brier_score_scorer,
    neg_expected_calibration_error_scorer,
    neg_log_likelihood_scorer,
    negative_log_likelihood,
)

SKCAL_NAMES = [
    "neg_expected_calibration_error",
    "neg_rms_calibration_error",
    "neg_maximum_calibration_error",
    "neg_classwise_calibration_error",
    "neg_brier_score",
    "neg_log_likelihood",
]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(X.shape[0])[:400]
    return X[idx] / 16.0, y[idx]


def _model():
    return LogisticRegression(C=0.02, max_iter=300)


def test_cross_val_score_equals_manual_folds(digits):
    X, y = digits
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    res = cross_validate(
        _model(), X, y, cv=cv,
        scoring={
            "ece": neg_expected_calibration_error_scorer,
            "brier": neg_brier_score_scorer,
            "nll": neg_log_likelihood_scorer,
        },
    )
    got = {k: res[f"test_{k}"] for k in ("ece", "brier", "nll")}
    # cross_val_score takes the scorer objects too
    np.testing.assert_allclose(
        cross_val_score(_model(), X, y, cv=cv,
                        scoring=neg_expected_calibration_error_scorer),
        got["ece"],
    )
    for fold, (train, test) in enumerate(cv.split(X, y)):
        est = clone(_model()).fit(X[train], y[train])
        proba = est.predict_proba(X[test])
        assert got["ece"][fold] == pytest.approx(
            -expected_calibration_error(y[test], proba), abs=1e-12
        )
        assert got["brier"][fold] == pytest.approx(-brier_score(y[test], proba))
        assert got["nll"][fold] == pytest.approx(
            -negative_log_likelihood(y[test], proba)
        )
        # and the NLL scorer agrees with scikit-learn's own neg_log_loss
        assert got["nll"][fold] == pytest.approx(
            sklearn.metrics.get_scorer("neg_log_loss")(est, X[test], y[test]),
            rel=1e-9,
        )


def test_grid_search_with_skcal_scorers(digits):
    X, y = digits
    scoring = {name: get_scorer(name) for name in SKCAL_NAMES}
    search = GridSearchCV(
        _model(), {"C": [0.005, 0.05]}, scoring=scoring,
        refit="neg_expected_calibration_error", cv=3,
    )
    search.fit(X, y)
    for name in SKCAL_NAMES:
        scores = search.cv_results_[f"mean_test_{name}"]
        assert np.all(np.isfinite(scores)) and np.all(scores <= 0)
    ece = search.cv_results_["mean_test_neg_expected_calibration_error"]
    best = int(np.argmax(ece))
    assert search.best_params_ == search.cv_results_["params"][best]


def test_scorer_on_binary_classifier_with_string_labels():
    X, y = load_breast_cancer(return_X_y=True)
    labels = np.array(["benign", "malignant"])[1 - y]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    scores = cross_val_score(model, X, labels, cv=3,
                             scoring=get_scorer("neg_brier_score"))
    # manual: classes_ sorted, scikit-learn passes P(classes_[1])
    cv = StratifiedKFold(n_splits=3)
    for fold, (train, test) in enumerate(cv.split(X, labels)):
        est = clone(model).fit(X[train], labels[train])
        p = est.predict_proba(X[test])[:, 1]
        expected = sklearn.metrics.brier_score_loss(
            labels[test], p, pos_label=est.classes_[1]
        )
        assert scores[fold] == pytest.approx(-expected, abs=1e-12)


@pytest.fixture(scope="module")
def text_binary():
    X, y = load_breast_cancer(return_X_y=True)
    labels = np.array(["benign", "malignant"])[1 - y]
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1))
    return model.fit(X[:300], labels[:300]), X, labels


@pytest.mark.parametrize("name", [
    "neg_expected_calibration_error", "neg_rms_calibration_error",
    "neg_maximum_calibration_error", "neg_debiased_calibration_error",
    "neg_smooth_calibration_error", "neg_brier_score", "neg_log_likelihood",
])
def test_every_scorer_on_text_binary_labels(name, text_binary):
    # the scorer passes pos_label=classes_[1] for text labels; the debiased and
    # smooth errors did not take pos_label (a TypeError in every CV fold)
    from skcal.metrics._scorers import _METRICS

    model, X, labels = text_binary
    got = get_scorer(name)(model, X[300:], labels[300:])
    p = model.predict_proba(X[300:])[:, 1]
    want = _METRICS[name](labels[300:], np.stack([1 - p, p], axis=1))
    assert got == pytest.approx(-want, rel=1e-12, abs=1e-15)


def test_get_scorer_kwargs_and_fallback(digits):
    X, y = digits
    est = _model().fit(X, y)
    proba = est.predict_proba(X)
    scorer = get_scorer("neg_expected_calibration_error", n_bins=5,
                        strategy="quantile")
    assert scorer(est, X, y) == pytest.approx(
        -calibration_error(y, proba, n_bins=5, strategy="quantile")
    )
    cw = get_scorer("neg_classwise_calibration_error")
    assert cw(est, X, y) == pytest.approx(
        -calibration_error(y, proba, kind="classwise")
    )
    # other names go to scikit-learn
    assert get_scorer("accuracy")(est, X, y) == pytest.approx(est.score(X, y))
    with pytest.raises(ValueError):
        get_scorer("no_such_scorer")
    with pytest.raises(ValueError, match="only accepted"):
        get_scorer("accuracy", n_bins=3)


def test_names_and_no_monkey_patching(digits):
    names = get_scorer_names()
    assert len(names) == len(set(names))
    sk_names = sklearn.metrics.get_scorer_names()
    for name in SKCAL_NAMES:
        assert name in names
        if name != "neg_brier_score":
            assert name not in sk_names
    assert "neg_log_loss" in names
    # scikit-learn's own neg_brier_score is untouched, and equals ours
    sk = sklearn.metrics.get_scorer("neg_brier_score")
    assert sk._score_func is sklearn.metrics.brier_score_loss
    X, y = digits
    est = _model().fit(X, y)
    assert get_scorer("neg_brier_score")(est, X, y) == pytest.approx(sk(est, X, y))
