"""AutoCalibrator and IdentityCalibrator, against a plain re-implementation of the rule."""

import pickle
import re
import warnings

import numpy as np
import pytest
from scipy.special import log_softmax, softmax
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score

from skcal import (
    AutoCalibrator,
    IdentityCalibrator,
    MatrixScaler,
    PlattScaler,
    TemperatureScaler,
    VectorScaler,
)
from skcal.base import BaseCalibrator
from skcal.meta._auto import default_candidates, one_se_choice


def _logits(n, k, scale, seed=0, calibrated=False):
    rng = np.random.default_rng(seed)
    if calibrated:  # labels drawn from softmax(Z): Z is calibrated by construction
        Z = rng.normal(size=(n, k)) * scale
        u = rng.uniform(size=(n, 1))
        y = (softmax(Z, axis=1).cumsum(axis=1) < u).sum(axis=1)
        return Z, np.minimum(y, k - 1)
    y = rng.integers(0, k, size=n)
    return scale * (np.eye(k)[y] + rng.normal(size=(n, k))), y


def _brier(est, X, y):
    P = est.predict_proba(X)
    return -np.mean(((P - np.eye(P.shape[1])[y]) ** 2).sum(axis=1))


def _plain_rule(cands, Z, y, cv, scoring):
    """The documented rule, written out with scikit-learn's cross_val_score."""
    losses = np.array([-cross_val_score(clone(c), Z, y, cv=cv, scoring=scoring)
                       for c in cands])
    b = int(np.argmin(losses.mean(axis=1)))
    for i in range(len(cands)):
        d = losses[i] - losses[b]  # paired over the same folds
        if d.mean() <= d.std(ddof=1) / np.sqrt(d.size):
            return i, -losses.mean(axis=1)


@pytest.mark.parametrize("k, scale, seed", [(2, 3.0, 0), (2, 0.7, 1), (3, 4.0, 2), (4, 1.0, 3)])
@pytest.mark.parametrize("scoring", ["nll", "brier"])
def test_auto_matches_plain_one_se_rule(k, scale, seed, scoring):
    Z, y = _logits(240, k, scale, seed)
    cands = [IdentityCalibrator(), TemperatureScaler(), VectorScaler()]
    cv = StratifiedKFold(4, shuffle=True, random_state=seed)
    ref_index, ref_scores = _plain_rule(
        cands, Z, y, cv, "neg_log_loss" if scoring == "nll" else _brier
    )
    auto = AutoCalibrator(cands, cv=cv, scoring=scoring).fit(Z, y)
    np.testing.assert_allclose(auto.cv_results_["mean_test_score"], ref_scores, rtol=1e-9)
    assert auto.best_index_ == ref_index
    assert auto.best_name_ == ["identity", "temperature", "vector"][ref_index]
    ref = clone(cands[ref_index]).fit(Z, y)
    np.testing.assert_allclose(auto.predict_proba(Z), ref.predict_proba(Z), atol=1e-12)


def test_one_se_choice_hand_example():
    # differences to the best (0.30) are 0.2 and 0.19 on every fold: no spread
    assert one_se_choice([[0.50, 0.52, 0.48], [0.49, 0.51, 0.47], [0.30, 0.31, 0.29]]) == 2
    # row 0 minus row 1: (-0.01, 0.03, 0.01), mean 0.01 <= sd 0.02 / sqrt(3) = 0.0115
    assert one_se_choice([[0.50, 0.60, 0.40], [0.51, 0.57, 0.39]]) == 0
    # a consistent gain of 0.01 on every fold is beyond noise (sd 0)
    assert one_se_choice([[0.50, 0.60, 0.40], [0.49, 0.59, 0.39]]) == 1
    assert one_se_choice([[np.nan, 1.0], [0.4, 0.5]]) == 1
    assert one_se_choice([[np.nan, 1.0], [np.nan, 0.5]]) == 0
    with pytest.raises(ValueError, match="n_splits >= 2"):
        one_se_choice([[0.5], [0.4]])


def test_auto_keeps_identity_on_calibrated_logits():
    Z, y = _logits(2000, 3, 2.0, seed=5, calibrated=True)
    auto = AutoCalibrator().fit(Z, y)
    assert auto.best_name_ == "identity"
    np.testing.assert_allclose(auto.predict_proba(Z), softmax(Z, axis=1), rtol=1e-12)


def test_auto_picks_temperature_on_overconfident_logits():
    Z, y = _logits(1500, 5, 4.0, seed=6)
    auto = AutoCalibrator().fit(Z, y)
    res = auto.cv_results_
    assert list(res["candidate"]) == ["identity", "temperature", "vector",
                                      "structured-vector", "matrix", "smoothed-isotonic"]
    assert auto.best_name_ == "temperature"
    # identity is far beyond noise here: the rule must not keep it
    assert res["mean_test_score"][0] < res["mean_test_score"][1] - 0.1
    assert isinstance(auto.best_calibrator_, TemperatureScaler)
    assert auto.best_score_ == res["mean_test_score"][auto.best_index_]
    assert set(res["rank_test_score"]) == {1, 2, 3, 4, 5, 6}
    assert (res["mean_fit_time"] > 0).all() and res["split4_test_score"].shape == (6,)


def test_auto_choice_ignores_row_order():
    Z, y = _logits(300, 3, 2.5, seed=7)
    perm = np.random.default_rng(0).permutation(300)
    a = AutoCalibrator().fit(Z, y)
    b = AutoCalibrator().fit(Z[perm], y[perm])
    np.testing.assert_allclose(a.cv_results_["mean_test_score"],
                               b.cv_results_["mean_test_score"], rtol=1e-9)
    assert a.best_name_ == b.best_name_


def test_default_candidates_by_size():
    names = lambda n, k: [m for m, _ in default_candidates(n, k)]  # noqa: E731
    assert names(10, 2) == ["identity", "temperature"]
    assert names(100, 2) == ["identity", "temperature", "platt", "beta"]
    assert names(500, 2)[-1] == "smoothed-isotonic"
    assert names(199, 10) == ["identity", "temperature"]
    assert names(200, 10) == ["identity", "temperature", "vector", "structured-vector"]
    assert names(550, 10) == ["identity", "temperature", "vector", "structured-vector",
                              "matrix"]
    assert names(1000, 10)[-1] == "smoothed-isotonic"


def test_auto_uses_fewer_folds_for_a_small_class_and_raises_for_one_row():
    Z, y = _logits(40, 2, 2.0)
    y[:] = 0
    y[:3] = 1
    with pytest.warns(UserWarning, match=r"uses 3 folds instead of cv=5: class 1 has 3 of 40"):
        auto = AutoCalibrator().fit(Z, y)
    assert auto.n_splits_ == 3
    ref = AutoCalibrator(cv=3).fit(Z, y)  # the same folds, no warning
    np.testing.assert_array_equal(auto.cv_results_["mean_test_score"],
                                  ref.cv_results_["mean_test_score"])
    y[1:3] = 0
    with pytest.raises(ValueError, match=r"at least 2 rows of every class.*class 1 has 1 of 40"):
        AutoCalibrator().fit(Z, y)


@pytest.mark.parametrize("k", [2, 4])
def test_auto_integer_weights_are_repeated_rows_choice_included(k):
    # the folds split the repeated rows: the cross-validation, the choice and
    # the refit equal those on the repeated data, row order aside
    Z, y = _logits(300, k, 2.5, seed=11)
    w = np.random.default_rng(0).integers(0, 4, size=300)
    weighted = AutoCalibrator().fit(Z, y, sample_weight=w)
    perm = np.random.default_rng(1).permutation(int(w.sum()))
    Zr, yr = np.repeat(Z, w, axis=0)[perm], np.repeat(y, w)[perm]
    repeated = AutoCalibrator().fit(Zr, yr)
    for key in ("mean_test_score", "std_test_score"):
        np.testing.assert_allclose(weighted.cv_results_[key], repeated.cv_results_[key],
                                   rtol=1e-6, atol=1e-9)
    assert weighted.best_name_ == repeated.best_name_
    np.testing.assert_allclose(weighted.predict_proba(Z), repeated.predict_proba(Z),
                               rtol=1e-6, atol=1e-9)
    # rescaling every weight changes nothing
    scaled = AutoCalibrator().fit(Z, y, sample_weight=0.5 * w)
    np.testing.assert_allclose(scaled.cv_results_["mean_test_score"],
                               weighted.cv_results_["mean_test_score"], rtol=1e-9)


def test_auto_cv_accepts_an_iterable_of_splits():
    Z, y = _logits(200, 3, 3.0)
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    a = AutoCalibrator(cv=cv).fit(Z, y)
    b = AutoCalibrator(cv=list(cv.split(Z, y))).fit(Z, y)
    assert b.n_splits_ == 4
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


def test_auto_group_splitter_error_names_the_list_of_splits_route():
    from sklearn.model_selection import GroupKFold, PredefinedSplit

    Z, y = _logits(240, 3, 3.0)
    groups = np.arange(240) // 8
    with pytest.raises(ValueError, match=re.escape(
            "AutoCalibrator: cv=GroupKFold(...) needs groups, which fit does not take. "
            "Pass the splits instead: cv=list(GroupKFold(...).split(X, y, groups)).")):
        AutoCalibrator(cv=GroupKFold(3)).fit(Z, y)
    splits = list(GroupKFold(3).split(Z, y, groups))
    a = AutoCalibrator(cv=splits).fit(Z, y)
    assert a.n_splits_ == 3
    # the same folds as a splitter that needs no groups
    fold = np.empty(240, dtype=int)
    for f, (_, test) in enumerate(splits):
        assert len(np.intersect1d(groups[test], groups[splits[f][0]])) == 0
        fold[test] = f
    b = AutoCalibrator(cv=PredefinedSplit(fold)).fit(Z, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


class _Broken(TemperatureScaler):
    def _fit(self, Z, y, sample_weight, xp):
        raise RuntimeError("broken on purpose")


def test_auto_failing_candidate_is_reported_and_skipped():
    Z, y = _logits(200, 3, 3.0)
    auto = AutoCalibrator([("broken", _Broken()), TemperatureScaler()]).fit(Z, y)
    assert auto.best_name_ == "temperature"
    assert np.isnan(auto.cv_results_["mean_test_score"][0])
    assert "broken on purpose" in auto.cv_results_["error"][0]
    assert auto.cv_results_["rank_test_score"][0] == 2


def test_auto_identity_when_every_candidate_fails():
    Z, y = _logits(200, 3, 3.0)
    with pytest.warns(UserWarning, match="Every candidate failed.*identity map"):
        auto = AutoCalibrator([_Broken()]).fit(Z, y)
    assert auto.best_name_ == "identity" and auto.best_index_ == -1
    np.testing.assert_allclose(auto.predict_proba(Z), softmax(Z, axis=1), rtol=1e-12)


class _Warner(TemperatureScaler):
    """Warns one message twice in every fit and one that names the row count."""

    def _fit(self, Z, y, sample_weight, xp):
        for _ in range(2):
            warnings.warn("the same in every fold", ConvergenceWarning)
        warnings.warn(f"fitted on {Z.shape[0]} rows", UserWarning)
        return super()._fit(Z, y, sample_weight, xp)


def test_auto_reports_each_distinct_fold_warning_once_with_its_fold_count():
    Z, y = _logits(202, 3, 3.0)
    cv = KFold(5)  # training folds of 161, 161, 162, 162 and 162 rows
    assert [len(tr) for tr, _ in cv.split(Z)] == [161, 161, 162, 162, 162]
    cands = [("warner", _Warner()), ("short", TemperatureScaler(max_iter=1))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        AutoCalibrator(cands, cv=cv).fit(Z, y)
    folds = [(w.category, str(w.message)) for w in caught if "folds of candidate" in str(w.message)]
    stop = "TemperatureScaler stopped after max_iter=1 iterations before reaching tol; increase max_iter."
    assert folds == [
        (ConvergenceWarning, "the same in every fold (in 5 of 5 folds of candidate 'warner')"),
        (UserWarning, "fitted on 161 rows (in 2 of 5 folds of candidate 'warner')"),
        (UserWarning, "fitted on 162 rows (in 3 of 5 folds of candidate 'warner')"),
        (ConvergenceWarning, f"{stop} (in 5 of 5 folds of candidate 'short')"),
    ]
    # the refit of the chosen candidate: each distinct warning once, named as such
    auto_name = next(n for n in ("warner", "short")
                     if any(f"candidate '{n}' on all rows" in str(w.message) for w in caught))
    rest = [str(w.message) for w in caught if "folds of candidate" not in str(w.message)]
    tail = f" (refit of candidate {auto_name!r} on all rows)"
    assert rest == ([m + tail for m in ("the same in every fold", "fitted on 202 rows")]
                    if auto_name == "warner" else [stop + tail])
    # all at the user's call (the candidates' own stacklevel points inside skcal)
    assert all(w.filename == __file__ for w in caught)


def test_auto_fold_warnings_follow_the_callers_filters():
    Z, y = _logits(202, 3, 3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="the same in every fold")
        AutoCalibrator([("warner", _Warner())], cv=KFold(5)).fit(Z, y)
    assert not any("the same" in str(w.message) for w in caught)
    # a warning turned into an error fails the candidate in the folds, as any error
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning)
        warnings.simplefilter("error", ConvergenceWarning)  # first: a UserWarning
        auto = AutoCalibrator([("warner", _Warner()), TemperatureScaler()], cv=KFold(5)).fit(Z, y)
    assert auto.cv_results_["error"][0] == "ConvergenceWarning: the same in every fold"
    assert auto.best_name_ == "temperature"


def test_auto_bad_candidates_and_refit_false():
    Z, y = _logits(200, 3, 3.0)
    with pytest.raises(ValueError, match=r"candidates\[0\] must be an skcal calibrator"):
        AutoCalibrator(["temperature"]).fit(Z, y)
    with pytest.raises(ValueError, match="names must be unique"):
        AutoCalibrator([TemperatureScaler(), TemperatureScaler()]).fit(Z, y)
    auto = AutoCalibrator(refit=False).fit(Z, y)
    assert not hasattr(auto, "best_calibrator_") and auto.best_name_
    with pytest.raises(AttributeError, match="refit=False"):
        auto.predict_proba(Z)


def test_auto_sample_weight_in_scores():
    Z, y = _logits(240, 2, 2.0, seed=8)
    w = np.random.default_rng(1).integers(1, 4, size=240).astype(float)
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    auto = AutoCalibrator([IdentityCalibrator(), PlattScaler()], cv=cv).fit(Z, y, sample_weight=w)
    for i, cand in enumerate([IdentityCalibrator(), PlattScaler()]):
        losses = []
        for tr, te in cv.split(Z, y):
            lp = log_softmax(clone(cand).fit(Z[tr], y[tr], sample_weight=w[tr])
                             .predict_log_proba(Z[te]), axis=1)
            losses.append(-np.average(lp[np.arange(len(te)), y[te]], weights=w[te]))
        np.testing.assert_allclose(auto.cv_results_["mean_test_score"][i], -np.mean(losses),
                                   rtol=1e-9)


def test_auto_nests_in_calibrated_classifier_and_grid_search():
    from sklearn.datasets import load_breast_cancer
    from sklearn.naive_bayes import GaussianNB

    from skcal import CalibratedClassifier

    X, y = load_breast_cancer(return_X_y=True)
    clf = CalibratedClassifier(GaussianNB(), calibrator=AutoCalibrator(cv=3), cv=3).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (len(y), 2) and np.allclose(P.sum(axis=1), 1.0)
    Z, yz = _logits(300, 3, 3.0)
    gs = GridSearchCV(AutoCalibrator(), {"scoring": ["nll", "brier"]}, cv=3).fit(Z, yz)
    assert gs.best_estimator_.best_name_ in {"identity", "temperature", "vector",
                                             "structured-vector", "matrix"}


def test_auto_pickles_and_exports_the_chosen_map():
    torch = pytest.importorskip("torch")
    Z, y = _logits(600, 4, 3.0, seed=9)
    auto = AutoCalibrator().fit(Z, y)
    again = pickle.loads(pickle.dumps(auto))
    np.testing.assert_array_equal(again.predict_proba(Z), auto.predict_proba(Z))
    out = auto.to_torch(dtype=torch.float64)(torch.as_tensor(Z)).numpy()
    np.testing.assert_allclose(out, auto.transform(Z), atol=1e-10)


def test_auto_on_torch_tensors_matches_numpy():
    torch = pytest.importorskip("torch")
    Z, y = _logits(400, 3, 3.0, seed=10)
    a = AutoCalibrator().fit(Z, y)
    b = AutoCalibrator().fit(torch.as_tensor(Z), torch.as_tensor(y))
    assert a.best_name_ == b.best_name_
    np.testing.assert_allclose(a.cv_results_["mean_test_score"],
                               b.cv_results_["mean_test_score"], rtol=1e-6)
    P = b.predict_proba(torch.as_tensor(Z))
    assert isinstance(P, torch.Tensor)
    np.testing.assert_allclose(P.numpy(), a.predict_proba(Z), atol=1e-8)


def test_identity_calibrator_is_softmax():
    Z, y = _logits(50, 3, 2.0)
    np.testing.assert_allclose(IdentityCalibrator().fit(Z, y).predict_log_proba(Z),
                               log_softmax(Z, axis=1), rtol=1e-13)
    P = softmax(Z, axis=1)
    ident = IdentityCalibrator(input_type="probabilities").fit(P, y)
    np.testing.assert_allclose(ident.predict_proba(P), P, rtol=1e-12)


def test_auto_is_a_calibrator_in_the_registry():
    from skcal.utils.discovery import all_calibrators

    found = dict(all_calibrators())
    assert found["AutoCalibrator"] is AutoCalibrator
    assert found["IdentityCalibrator"] is IdentityCalibrator
    assert issubclass(AutoCalibrator, BaseCalibrator)


def test_auto_matrix_candidate_runs_with_explicit_list():
    Z, y = _logits(400, 3, 1.0, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = AutoCalibrator([IdentityCalibrator(), MatrixScaler()]).fit(Z, y)
    assert np.isfinite(auto.cv_results_["mean_test_score"]).all()


def test_auto_fold_warning_filters_are_the_same_in_worker_processes():
    """fresh34b: under simplefilter("error") a warning failed the candidate in
    the folds with n_jobs=1 (another candidate chosen), but joblib's worker
    processes did not have the filter, so with n_jobs=2 the folds passed and
    the re-issued warning raised from fit; the workers now get the caller's
    filters."""
    Z, y = _logits(400, 3, 3.0)
    cands = [("vector-short", VectorScaler(max_iter=2)), ("temp", TemperatureScaler())]
    got = {}
    for n_jobs in (1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            auto = AutoCalibrator(cands, cv=KFold(3), n_jobs=n_jobs).fit(Z, y)
        got[n_jobs] = (auto.best_name_, list(auto.cv_results_["error"]))
    assert got[1] == got[2]
    assert got[1][0] == "temp" and "ConvergenceWarning" in got[1][1][0]


def test_a_candidate_taking_probabilities_is_refused():
    # fresh35b: the candidate's input_type was silently reset to "logits",
    # while SmoothedCalibrator and TopVersusAllCalibrator refuse it
    from skcal import AutoCalibrator, TemperatureScaler

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 3
    with pytest.raises(ValueError, match="input_type='probabilities' on the AutoCalibrator"):
        AutoCalibrator(candidates=[TemperatureScaler(input_type="probabilities")]).fit(X, y)
