"""Regression tests of the bugs reported in issue 16 (one test group per bug)."""

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skcal import TemperatureScaler


# ---------------------------------------------------------------- bug 1
@pytest.mark.parametrize(
    "Z, y, dtype",
    [
        ([[0.0, -1000.0], [0.0, 0.0]], [0, 1], np.float64),
        ([[0.0, -1.0], [0.0, 0.0]], [0, 1], np.float32),
        ([[0.0, -1.0], [0.0, 0.0]], [0, 1], np.float64),
        ([[5, 0, 0], [0, 0, 0], [1, 1, 1]], [0, 1, 2], np.float32),
        ([[5, 0, 0], [0, 0, 0], [1, 1, 1]], [0, 1, 2], np.float64),
    ],
)
def test_temperature_separable_except_tied_rows_goes_to_small_T(Z, y, dtype):
    Z = np.asarray(Z, dtype=dtype)
    n_tied = sum(len(set(r)) == 1 for r in Z.tolist())
    # the infimum of the NLL: saturated rows give 0, tied rows log K each
    nll_limit = n_tied * math.log(Z.shape[1]) / len(y)
    with pytest.warns(ConvergenceWarning, match="separate the calibration set") as rec:
        ts = TemperatureScaler().fit(Z, y)
    assert not any("uninformative" in str(w.message) for w in rec)
    assert not any("max_iter" in str(w.message) for w in rec)
    assert ts.temperature_ == pytest.approx(1e-6)
    assert -ts.score(Z, y) == pytest.approx(nll_limit, rel=1e-6)


def test_temperature_all_rows_tied_still_goes_to_large_T():
    Z = np.zeros((4, 3))
    with pytest.warns(ConvergenceWarning, match="uninformative"):
        ts = TemperatureScaler().fit(Z, [0, 1, 2, 0])
    assert ts.temperature_ >= 1e6


def test_temperature_forest_like_log_probabilities():
    # -708 entries (log of exact zeros) plus exact ties, as forests and kNN give
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 3, n)
    Z = np.full((n, 3), -708.0)
    Z[np.arange(n), y] = 0.0
    Z[::5] = np.log(1 / 3)  # ties
    with pytest.warns(ConvergenceWarning, match="separate"):
        ts = TemperatureScaler().fit(Z, y)
    expected = len(Z[::5]) * math.log(3) / n
    assert -ts.score(Z, y) == pytest.approx(expected, rel=1e-9)


# ---------------------------------------------------------------- bug 2
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_temperature_predict_is_argmax_of_near_tied_float32_logits(backend):
    if backend == "torch":
        pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    Z = (rng.normal(size=(200, 2)) + 0.5 * np.eye(2)[y]).astype(np.float32)
    ts = TemperatureScaler(backend=backend).fit(Z, y)
    X = np.array([[0.1, 0.10000001], [0.10000001, 0.1]], dtype=np.float32)
    assert X[0, 1] > X[0, 0]
    np.testing.assert_array_equal(ts.predict(X), [1, 0])
    # a big temperature rounds both probabilities to 0.5: predict_proba ties
    ts.temperature_ = 1e3
    np.testing.assert_array_equal(ts.predict(X), [1, 0])


# ---------------------------------------------------------------- bug 8
def test_integer_labels_missing_class_0_need_classes():
    # The documented rule (docs/user_guide/index.rst): integer labels are
    # column indices only when they include 0; labels 1, 2 for 3 columns
    # (0..2 with class 0 absent, or 1..3 with 3 absent) are a ValueError
    # asking for classes=, and with classes= they fit, with a warning.
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax
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
    Zm, ym = L[m], y[m]

    def nll(log_t):
        return -log_softmax(Zm / np.exp(log_t), axis=1)[np.arange(len(ym)), ym].mean()

    t_ref = np.exp(minimize_scalar(nll, bounds=(-5, 5), method="bounded",
                                   options={"xatol": 1e-10}).x)
    assert b.temperature_ == pytest.approx(t_ref, rel=1e-5)
    # labels >= K are ambiguous as well
    with pytest.raises(ValueError, match="classes="):
        TemperatureScaler().fit(L[m], y[m] + 1)


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


# ---------------------------------------------------------------- bug 6
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


# ---------------------------------------------------------------- bug 7
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


# ---------------------------------------------------------------- constant scores
def test_temperature_constant_rows_warn_that_base_rate_is_out_of_reach():
    y = np.r_[np.zeros(20, int), np.ones(30, int), np.full(50, 2)]
    Z = np.tile([1.0, 0.0, 3.0], (100, 1))
    with pytest.warns(UserWarning, match="base rate"):
        TemperatureScaler().fit(Z, y)


# ---------------------------------------------------------------- probabilities read as logits
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


# ---------------------------------------------------------------- pickles
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


# ---------------------------------------------------------------- bugs 4 and 9 (CLI / loader)
def _csv_frame(n=300, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    L = 3.0 * np.eye(3)[y] + 1.5 * rng.normal(size=(n, 3))
    df = pd.DataFrame(L, columns=["a", "b", "c"])
    df["label"] = np.array(["a", "b", "c"])[y]
    return df


def test_csv_with_pandas_index_column_is_an_error_naming_it(tmp_path):
    from skcal.datasets import load_logits_file

    df = _csv_frame()
    f = tmp_path / "f.csv"
    df.to_csv(f)  # pandas' default: an unnamed index column first
    with pytest.raises(ValueError, match=r"column\(s\) '' look like a row index"):
        load_logits_file(f)
    d = load_logits_file(f, ignore_columns=[""])
    assert d.n_classes == 3
    with pytest.raises(ValueError, match="column '' is neither the label column nor one of"):
        load_logits_file(f, logit_columns=["a", "b", "c"], label_column="label")
    d2 = load_logits_file(f, logit_columns=["a", "b", "c"], label_column="label",
                          ignore_columns=[""])
    np.testing.assert_array_equal(d.logits_val, d2.logits_val)
    named = tmp_path / "named.csv"
    df.rename_axis("id").to_csv(named)
    with pytest.raises(ValueError, match="'id' look like a row index"):
        load_logits_file(named)
    numbered = tmp_path / "numbered.csv"
    df.assign(rownum=np.arange(len(df)))[["rownum", "a", "b", "c", "label"]].to_csv(
        numbered, index=False
    )
    with pytest.raises(ValueError, match="'rownum' holds the row numbers"):
        load_logits_file(numbered)


def test_cli_csv_index_column_exit_2_and_selected_columns_run(tmp_path, capsys):
    from skcal.cli import main

    df = _csv_frame()
    f = tmp_path / "f.csv"
    df.to_csv(f)
    assert main(["benchmark", "--data", str(f), "--fast", "--quiet",
                 "--methods", "temperature", "--repeats", "1"]) == 2
    assert "row index" in capsys.readouterr().err
    assert main(["benchmark", "--data", str(f), "--fast", "--quiet",
                 "--methods", "temperature", "--repeats", "1",
                 "--ignore-columns", ""]) == 0
    out = capsys.readouterr().out
    assert "K=3" in out and "median of 1" not in out and "one timed run" in out


def test_csv_split_does_not_depend_on_column_order(tmp_path):
    from skcal.datasets import load_logits_file

    df = _csv_frame()
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    df.to_csv(a, index=False)
    df[["c", "a", "b", "label"]].to_csv(b, index=False)
    da, db = load_logits_file(a), load_logits_file(b)
    # the same rows in each split; the columns permuted with the classes
    np.testing.assert_array_equal(da.logits_val, db.logits_val[:, [1, 2, 0]])
    names_a = np.asarray(da.info["classes"])[da.y_val]
    names_b = np.asarray(db.info["classes"])[db.y_val]
    np.testing.assert_array_equal(names_a, names_b)


def test_single_column_binary_csv_and_text_labels_npz(tmp_path):
    from skcal.datasets import load_logits_file

    rng = np.random.default_rng(0)
    s = rng.normal(size=50)
    f = tmp_path / "bin.csv"
    f.write_text("score,label\n" + "\n".join(f"{v},{int(v > 0)}" for v in s) + "\n")
    d = load_logits_file(f)
    assert d.n_classes == 2
    np.testing.assert_array_equal(d.logits_val[:, 0], 0.0)
    g = tmp_path / "t.npz"
    y = rng.integers(0, 3, 60)
    np.savez(g, logits=rng.normal(size=(60, 3)), y=np.array(["x", "y", "z"])[y])
    d = load_logits_file(g)
    assert d.info["classes"] == ["x", "y", "z"]
    assert sorted(np.unique(np.r_[d.y_val, d.y_test]).tolist()) == [0, 1, 2]


def test_benchmark_times_are_median_of_repeats_after_warm_up(monkeypatch):
    from skcal.benchmark import _benchmark as bm
    from skcal.datasets import load_logits

    calls = []
    real = bm._timed_run

    def spy(make, data):
        out = real(make, data)
        calls.append(out[1])
        return out

    monkeypatch.setattr(bm, "_timed_run", spy)
    d = load_logits("cifar10_resnet20_chenyaofo")
    rows = bm.run_benchmark([d], ["temperature"], peers=False, n_repeats=3)
    row = [r for r in rows if r["method"] == "temperature"][0]
    # uncalibrated and temperature: one warm-up and three timed runs each
    assert len(calls) == 8
    assert row["fit_time_s"] == pytest.approx(float(np.median(calls[5:8])))
    assert "median of 3" in bm.timing_note(3)


# ---------------------------------------------------------------- bug 3
def _multiclass_brier(y, P, K):
    return float(np.sum((np.eye(K)[y] - P) ** 2) / len(y))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_platt_on_forest_probabilities_passes_sklearn_multiclass_test(seed):
    # scikit-learn's test_calibration_multiclass, the random-forest half
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.datasets import make_blobs
    from sklearn.ensemble import RandomForestClassifier

    from skcal import CalibratedClassifier, PlattScaler

    X, y = make_blobs(n_samples=500, n_features=100, random_state=seed, centers=10,
                      cluster_std=15.0)
    y[y > 2] = 2
    Xtr, ytr, Xte, yte = X[::2], y[::2], X[1::2], y[1::2]
    clf = RandomForestClassifier(n_estimators=30, random_state=42).fit(Xtr, ytr)
    uncal = _multiclass_brier(yte, clf.predict_proba(Xte), 3)
    for ensemble in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = CalibratedClassifier(clf, PlattScaler(), cv=5, ensemble=ensemble)
            P = ours.fit(Xtr, ytr).predict_proba(Xte)
            ref = CalibratedClassifierCV(clf, method="sigmoid", cv=5,
                                         ensemble=ensemble).fit(Xtr, ytr)
        got = _multiclass_brier(yte, P, 3)
        R = ref.predict_proba(Xte)
        sk = _multiclass_brier(yte, R, 3)
        assert got < 1.1 * uncal
        # the forest's probabilities have exact zeros: "auto" fits the sigmoid on
        # the probabilities, scikit-learn's model; the two solvers agree to
        # scikit-learn's L-BFGS tolerance (Brier 0.2400 / 0.2265 at seed 0)
        assert got <= sk + 1e-6
        np.testing.assert_allclose(P, R, atol=1e-5)
        assert all(c.calibrator.score_scale_ == "probability"
                   for c in ours.calibrated_classifiers_)


def test_platt_logits_are_never_floored():
    from skcal import PlattScaler

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    Z = 800.0 * (np.eye(3)[y] - 0.5) + rng.normal(size=(200, 3))
    m = PlattScaler().fit(Z, y)
    assert m.log_floor_ is None and m.score_scale_ == "log_odds"
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)  # many exact zeros
    mp = PlattScaler(input_type="probabilities", score_scale="log_odds").fit(P, y)
    assert mp.log_floor_ == pytest.approx(np.log(P[P > 0].min() / 2))
    ma = PlattScaler(input_type="probabilities").fit(P, y)
    assert ma.log_floor_ is None and ma.score_scale_ == "probability"


def test_platt_softmax_probabilities_fit_like_their_logits():
    # no exact zeros: "auto" keeps the log-odds, so probabilities and logits of
    # the same model give the same map
    from skcal import PlattScaler

    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 300)
    Z = 2.0 * np.eye(3)[y] + rng.normal(size=(300, 3))
    P = np.exp(Z) / np.exp(Z).sum(1, keepdims=True)
    a = PlattScaler().fit(Z, y)
    b = PlattScaler(input_type="probabilities").fit(P, y)
    assert b.score_scale_ == "log_odds"
    np.testing.assert_allclose(b.a_, a.a_, rtol=1e-8)
    np.testing.assert_allclose(b.predict_proba(P), a.predict_proba(Z), atol=1e-10)


@pytest.mark.parametrize("K", [2, 3])
def test_platt_probability_scale_matches_sklearn_sigmoid(K):
    # scikit-learn's _sigmoid_calibration on the probability column itself,
    # with the same Platt targets: an independent solver of the same problem
    from sklearn.calibration import _sigmoid_calibration

    from skcal import PlattScaler

    rng = np.random.default_rng(K)
    y = rng.integers(0, K, 400)
    votes = rng.multinomial(20, np.full(K, 1.0 / K), size=400) + 15 * np.eye(K, dtype=int)[y]
    P = votes / votes.sum(1, keepdims=True)
    sure = rng.random(400) < 0.3  # unanimous votes: exact 0s and 1s
    P[sure] = np.eye(K)[rng.integers(0, K, sure.sum())]
    m = PlattScaler(input_type="probabilities", score_scale="probability").fit(P, y)
    cols = [1] if K == 2 else range(K)
    for j, k in enumerate(cols):
        a, b = _sigmoid_calibration(P[:, k], (y == k).astype(float))
        # scikit-learn's map is 1 / (1 + exp(a f + b))
        np.testing.assert_allclose(np.atleast_1d(m.a_)[j], -a, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.atleast_1d(m.b_)[j], -b, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- bug 5
@pytest.mark.parametrize("K", [2, 3])
def test_platt_weight_scale_invariance(K):
    from skcal import PlattScaler

    rng = np.random.default_rng(0)
    y = rng.integers(0, K, 300)
    Z = 3.0 * np.eye(K)[y] + rng.normal(size=(300, K))
    a = PlattScaler().fit(Z, y)
    for w in (np.full(300, 1 / 300), np.full(300, 1e-300), np.full(300, 1e300)):
        b = PlattScaler().fit(Z, y, sample_weight=w)
        np.testing.assert_allclose(b.predict_proba(Z), a.predict_proba(Z), atol=1e-12)
    w = rng.uniform(0.1, 3.0, 300)
    c = PlattScaler().fit(Z, y, sample_weight=w)
    d = PlattScaler().fit(Z, y, sample_weight=w / w.sum())
    np.testing.assert_allclose(c.a_, d.a_, rtol=1e-9)


# ---------------------------------------------------------------- torch paths of the fixes
def test_torch_quantile_bins_and_tied_rows_match_numpy():
    torch = pytest.importorskip("torch")
    from skcal.metrics import calibration_error, reliability_curve

    rng = np.random.default_rng(0)
    P = rng.dirichlet([1, 1, 1], size=50)
    y = rng.integers(0, 3, 50)
    w = rng.integers(0, 4, 50).astype(float)
    w[0] = 1
    for kind in ("top-label", "classwise"):
        a = calibration_error(y, P, kind=kind, strategy="quantile", n_bins=7,
                              sample_weight=w)
        b = calibration_error(torch.as_tensor(y), torch.as_tensor(P), kind=kind,
                              strategy="quantile", n_bins=7,
                              sample_weight=torch.as_tensor(w))
        assert b == pytest.approx(a, rel=1e-12)
    c = reliability_curve(torch.as_tensor(y), torch.as_tensor(P), strategy="quantile",
                          n_bins=7, sample_weight=torch.as_tensor(w))
    r = reliability_curve(np.repeat(y, w.astype(int)), np.repeat(P, w.astype(int), 0),
                          strategy="quantile", n_bins=7)
    np.testing.assert_array_equal(c.bin_edges, r.bin_edges)
    Z = torch.tensor([[0.0, -1000.0], [0.0, 0.0]], dtype=torch.float64)
    with pytest.warns(ConvergenceWarning, match="separate"):
        ts = TemperatureScaler().fit(Z, torch.tensor([0, 1]))
    assert ts.temperature_ == pytest.approx(1e-6)


def _vote_probabilities(K, n=300, seed=0, trees=30):
    """Forest-like probabilities: vote fractions with exact 0s and 1s."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    p = np.full((n, K), 0.3 / K) + 0.7 * np.eye(K)[y]
    votes = np.array([rng.multinomial(trees, row) for row in p])
    return (votes / trees).astype(np.float32), y


@pytest.mark.parametrize("score_scale", ["auto", "log_odds"])
@pytest.mark.parametrize("K, shape", [(4, "2d"), (2, "2d"), (2, "1d")])
def test_platt_on_votes_exports_like_predict_proba(score_scale, K, shape):
    # the probability scale and the log floor are part of the exported map
    torch = pytest.importorskip("torch")
    from skcal import PlattScaler

    P, y = _vote_probabilities(K)
    X = P[:, 1].copy() if shape == "1d" else P
    est = PlattScaler(input_type="probabilities", score_scale=score_scale).fit(X, y)
    assert (est.score_scale_ == "probability") == (score_scale == "auto")
    assert (est.log_floor_ is not None) == (score_scale == "log_odds")
    Xt, _ = _vote_probabilities(K, seed=1)
    Xt = Xt[:, 1].copy() if shape == "1d" else Xt
    ref = est.predict_proba(Xt)
    out = est.to_torch()(torch.as_tensor(Xt)).exp().detach().numpy()
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-6)
    try:
        import onnxruntime as ort

        from skcal.onnx import to_onnx
    except ImportError:
        return
    sess = ort.InferenceSession(to_onnx(est).SerializeToString())
    got = sess.run(None, {sess.get_inputs()[0].name: Xt.reshape(len(Xt), -1)})[0]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6)
