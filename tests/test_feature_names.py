"""DataFrame column names are the classes' names: recorded in fit, checked later."""

import warnings

import numpy as np
import pytest

from _helpers import quiet_fit
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
    """Columns in another order than the sorted labels still belong to their own class;
    ``classes_`` is sorted (as scikit-learn's) and the output follows it."""
    df, ys, _ = _named_frame()
    shuffled = df[["dog", "emu", "cat"]]
    ref = getattr(skcal, name)().fit(df, ys)
    est = getattr(skcal, name)().fit(shuffled, ys)
    assert list(est.classes_) == ["cat", "dog", "emu"]
    # the same calibration, column for column, in classes_ order
    np.testing.assert_allclose(est.predict_proba(shuffled), ref.predict_proba(df), atol=1e-7)
    assert est.score(shuffled, ys) == pytest.approx(ref.score(df, ys), rel=1e-7)


def test_integer_named_columns_and_conflicting_classes():
    df, _, y = _named_frame()
    dfi = pd.DataFrame(df.values, columns=["0", "1", "2"])[["2", "0", "1"]]
    est = skcal.TemperatureScaler().fit(dfi, y)
    assert est.classes_.tolist() == [0, 1, 2]
    ref = skcal.TemperatureScaler().fit(df.values, y)
    np.testing.assert_allclose(est.predict_proba(dfi), ref.predict_proba(df.values), atol=1e-12)
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


# ------------------------------------------- sorted classes_, for every estimator
def _all_calibrators():
    from skcal.utils.discovery import all_calibrators

    return [pytest.param(cls, id=name) for name, cls in all_calibrators()]


def _text_frame(n=240, seed=0):
    """Logits in sorted-label columns ``cat, dog, emu`` and their text labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    y[:3] = [0, 1, 2]
    Z = 2.0 * rng.standard_normal((n, 3))
    Z[np.arange(n), y] += 2.0
    names = np.array(["cat", "dog", "emu"])
    return pd.DataFrame(Z, columns=names.tolist()), names[y]


_PERM = ["emu", "cat", "dog"]


@pytest.mark.parametrize("cls", _all_calibrators())
def test_every_calibrator_has_sorted_classes_for_any_column_order(cls):
    """Named columns in any order: np.unique-sorted classes_, outputs in that order,
    and scikit-learn's and skcal's scorers agree with score (issue 24, item 1)."""
    from sklearn.metrics import get_scorer, roc_auc_score

    from skcal.metrics import neg_brier_score_scorer, neg_expected_calibration_error_scorer

    df, ys = _text_frame()
    # reference: columns already in sorted order (no reordering anywhere)
    ref = quiet_fit(cls(), df, ys)
    est = quiet_fit(cls(), df[_PERM], ys)
    assert est.classes_.tolist() == ref.classes_.tolist() == ["cat", "dog", "emu"]
    P_ref = ref.predict_proba(df)
    P = est.predict_proba(df[_PERM])
    np.testing.assert_allclose(P, P_ref, atol=1e-6)
    np.testing.assert_array_equal(est.predict(df[_PERM]), ref.predict(df))
    np.testing.assert_allclose(
        np.exp(est.transform(df[_PERM])), P_ref, atol=1e-6)
    score = est.score(df[_PERM], ys)
    # the log-likelihood of each row's own class, looked up by name in ref's output
    own = P_ref[np.arange(len(ys)), np.searchsorted(["cat", "dog", "emu"], ys)]
    assert score == pytest.approx(np.mean(np.log(own)), rel=1e-5)
    assert get_scorer("neg_log_loss")(est, df[_PERM], ys) == pytest.approx(score, rel=1e-5)
    assert get_scorer("roc_auc_ovr")(est, df[_PERM], ys) == pytest.approx(
        roc_auc_score(ys, P_ref, multi_class="ovr"), rel=1e-6)
    assert neg_brier_score_scorer(est, df[_PERM], ys) == pytest.approx(
        neg_brier_score_scorer(ref, df, ys), rel=1e-5)
    assert neg_expected_calibration_error_scorer(est, df[_PERM], ys) == pytest.approx(
        neg_expected_calibration_error_scorer(ref, df, ys), rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("cls", _all_calibrators())
def test_explicit_unsorted_classes_give_sorted_classes(cls):
    """``classes`` names the columns of an array in any order; classes_ is sorted."""
    df, ys = _text_frame(seed=1)
    ref = quiet_fit(cls(), df.to_numpy(), ys)
    est = quiet_fit(cls(classes=_PERM), df[_PERM].to_numpy(), ys)
    assert est.classes_.tolist() == ["cat", "dog", "emu"]
    np.testing.assert_allclose(
        est.predict_proba(df[_PERM].to_numpy()), ref.predict_proba(df.to_numpy()), atol=1e-6)


def test_agnews_named_columns_out_of_order_agree_with_the_scorers():
    """The reproduction of issue 24, item 1 on the bundled AG News set."""
    from sklearn.metrics import get_scorer, log_loss

    from skcal import VectorScaler
    from skcal.datasets import load_agnews_gpt2

    d = load_agnews_gpt2()
    names = np.array(["world", "sports", "business", "scitech"])  # AG News ids 0..3
    cols = ["sports", "world", "scitech", "business"]
    idx = [1, 0, 3, 2]
    Xv = pd.DataFrame(d.logits_val[:, idx].astype(np.float64), columns=cols)
    Xt = pd.DataFrame(d.logits_test[:, idx].astype(np.float64), columns=cols)
    vs = VectorScaler().fit(Xv, names[d.y_val])
    assert vs.classes_.tolist() == ["business", "scitech", "sports", "world"]
    # independent reference: the same fit on integer labels and the source order
    ref = VectorScaler().fit(d.logits_val.astype(np.float64), d.y_val)
    P_ref = ref.predict_proba(d.logits_test.astype(np.float64))[:, [2, 3, 1, 0]]
    np.testing.assert_allclose(vs.predict_proba(Xt), P_ref, atol=1e-6)
    yt = names[d.y_test]
    truth = -log_loss(yt, P_ref, labels=vs.classes_)
    assert vs.score(Xt, yt) == pytest.approx(truth, rel=1e-6)
    assert get_scorer("neg_log_loss")(vs, Xt, yt) == pytest.approx(truth, rel=1e-6)


@pytest.mark.parametrize("name", ["VectorScaler", "IsotonicScaler", "PlattScaler"])
@pytest.mark.parametrize("one_score", [False, True])
def test_exports_and_backends_reorder_columns_like_predict_proba(name, one_score):
    """to_torch / to_onnx / torch / dask take the columns in the same order as predict_proba."""
    torch = pytest.importorskip("torch")
    da = pytest.importorskip("dask.array")
    df, ys = _text_frame(seed=2)
    if one_score:  # a binary score of 'dog' given as the log-odds of classes[1]
        X = (df["dog"] - df["cat"]).to_numpy()
        ys = np.where(ys == "emu", "cat", ys)
        classes = ["emu", "dog"]  # not sorted: sorted, the score is that of classes_[0]
        ys = np.where(ys == "cat", "emu", ys)
        ref = quiet_fit(getattr(skcal, name)(), -X, ys)
    else:
        X = df[_PERM].to_numpy()
        classes = _PERM
        ref = quiet_fit(getattr(skcal, name)(), df.to_numpy(), ys)
    est = quiet_fit(getattr(skcal, name)(classes=classes), X, ys)
    assert est.classes_.tolist() == sorted(classes)
    P = est.predict_proba(X)
    np.testing.assert_allclose(P, ref.predict_proba(-X if one_score else df.to_numpy()),
                               atol=1e-9)
    T = torch.as_tensor(X.copy())
    np.testing.assert_allclose(est.predict_proba(T).numpy(), P, atol=1e-12)
    np.testing.assert_allclose(
        est.predict_proba(da.from_array(X, chunks=100)).compute(), P, atol=1e-12)
    np.testing.assert_allclose(
        est.to_torch(dtype=torch.float64)(T).exp().numpy(), P, atol=1e-9)
    ort = pytest.importorskip("onnxruntime")
    from skcal.onnx import to_onnx

    sess = ort.InferenceSession(to_onnx(est).SerializeToString())
    Xo = X.astype(np.float32).reshape(len(X), -1)
    np.testing.assert_allclose(sess.run(["probabilities"], {"X": Xo})[0], P, atol=1e-5)


@pytest.mark.parametrize("dask_fit", [False, True])
def test_meta_estimators_have_sorted_classes_for_any_column_order(dask_fit):
    from skcal.meta import CalibratedEnsemble, GroupedCalibrator

    df, ys = _text_frame(n=600, seed=3)
    groups = np.random.default_rng(3).integers(0, 2, len(ys))
    ref = GroupedCalibrator(skcal.VectorScaler(), min_group_size=50).fit(
        df, ys, groups=groups)
    if dask_fit:  # every group's fit on its rows of one dask array
        da = pytest.importorskip("dask.array")
        base = skcal.VectorScaler(classes=_PERM)
        X = df[_PERM].to_numpy()
        est = quiet_fit(GroupedCalibrator(base, min_group_size=50),
                         da.from_array(X, chunks=200), ys, groups=groups)
    else:
        X = df[_PERM]
        est = quiet_fit(GroupedCalibrator(skcal.VectorScaler(), min_group_size=50),
                         X, ys, groups=groups)
    assert est.classes_.tolist() == ["cat", "dog", "emu"]
    np.testing.assert_allclose(est.predict_proba(X, groups=groups),
                               ref.predict_proba(df, groups=groups), atol=1e-6)
    ens = CalibratedEnsemble().fit([df[_PERM], df[_PERM]], ys)
    ens_ref = CalibratedEnsemble().fit([df, df], ys)
    assert ens.classes_.tolist() == ["cat", "dog", "emu"]
    np.testing.assert_allclose(ens.predict_proba([df[_PERM], df[_PERM]]),
                               ens_ref.predict_proba([df, df]), atol=1e-9)


def test_cli_fit_apply_report_with_text_columns_out_of_sorted_order(tmp_path):
    """skcal fit on a CSV whose columns are the text labels in unsorted order: apply
    names its columns after the sorted classes_, report's uncalibrated and
    calibrated rows are those of the source order (hand reference)."""
    import json

    from scipy.special import softmax
    from sklearn.metrics import log_loss

    from skcal.cli import main

    pytest.importorskip("matplotlib")
    df, ys = _text_frame(n=400, seed=4)
    df[_PERM].assign(label=ys).to_csv(tmp_path / "val.csv", index=False)
    dft, yt = _text_frame(n=300, seed=5)
    dft[_PERM].assign(label=yt).to_csv(tmp_path / "test.csv", index=False)
    model = str(tmp_path / "m.skops")
    assert main(["fit", "--data", str(tmp_path / "val.csv"), "--method", "vector",
                 "--output", model]) == 0
    assert main(["apply", model, "--data", str(tmp_path / "test.csv"),
                 "--output", str(tmp_path / "out.csv")]) == 0
    ref = skcal.VectorScaler().fit(df.to_numpy(), ys)
    P_ref = ref.predict_proba(dft.to_numpy())
    out = pd.read_csv(tmp_path / "out.csv")
    assert out.columns.tolist()[:3] == ["cat", "dog", "emu"]
    np.testing.assert_allclose(out[["cat", "dog", "emu"]].to_numpy(), P_ref, atol=1e-6)
    assert main(["report", "--model", model, "--data", str(tmp_path / "test.csv"),
                 "--output", str(tmp_path / "rep"), "--n-bootstrap", "0"]) == 0
    res = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    labels = ["cat", "dog", "emu"]
    uncal = log_loss(yt, softmax(dft.to_numpy(), axis=1), labels=labels)
    assert res["uncalibrated"]["nll"]["value"] == pytest.approx(uncal, rel=1e-6)
    assert res["VectorScaler"]["nll"]["value"] == pytest.approx(
        log_loss(yt, P_ref, labels=labels), rel=1e-5)


# ------------------- integer column names (issue 24 leftovers, item b)
@pytest.mark.parametrize("cls", _all_calibrators())
def test_every_calibrator_matches_integer_column_names_by_name(cls):
    """Columns named by the integer labels, reordered ([2, 0, 1]): matched to the
    classes by name in fit (as text names are), the same fit as the sorted frame;
    no feature_names_in_ (scikit-learn records text names only); at predict
    time a frame in another column order is refused, never read by position."""
    df, ys = _text_frame(seed=2)
    y = np.searchsorted(["cat", "dog", "emu"], ys)
    Z = df.to_numpy()
    ref = quiet_fit(cls(), Z, y)
    dfi = pd.DataFrame(Z[:, [2, 0, 1]], columns=[2, 0, 1])
    est = quiet_fit(cls(), dfi, y)
    assert est.classes_.tolist() == [0, 1, 2]
    assert not hasattr(est, "feature_names_in_")
    np.testing.assert_allclose(est.predict_proba(dfi), ref.predict_proba(Z), atol=1e-6)
    assert est.score(dfi, y) == pytest.approx(ref.score(Z, y), rel=1e-5)
    with pytest.raises(ValueError, match=r"another order .*\[2, 0, 1\]"):
        est.predict_proba(pd.DataFrame(Z, columns=[0, 1, 2]))
    with pytest.raises(ValueError, match="not the names seen in fit"):
        est.predict(pd.DataFrame(Z, columns=[0, 1, 5]))
    # an array is read by position, as always (the columns as in fit)
    np.testing.assert_allclose(est.predict_proba(dfi.to_numpy()), est.predict_proba(dfi))


def test_unnamed_array_after_named_fit_warns_it_is_read_in_fit_column_order():
    """Fitted on a frame whose integer names are the labels in another order,
    an array is read by position in fit's column order: warned, naming that
    order (as scikit-learn warns for text names, whose message says the same)."""
    import warnings

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 300)
    Z = 3.0 * (np.eye(4)[y] + rng.normal(size=(300, 4)))
    o = [3, 2, 1, 0]
    est = skcal.VectorScaler().fit(pd.DataFrame(Z, columns=range(4))[o], y)
    with pytest.warns(UserWarning, match=r"read by position, in fit's column order \[3, 2, 1, 0\]"):
        P = est.predict_proba(Z[:, o])
    np.testing.assert_allclose(P, est.predict_proba(pd.DataFrame(Z, columns=range(4))[o]))
    est2 = skcal.VectorScaler().fit(pd.DataFrame(Z, columns=list("abcd")), y)
    with pytest.warns(UserWarning, match=r"feature names.*fit's column order \['a', 'b'"):
        est2.predict_proba(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # named frames and array fits: no warning
        est.predict_proba(pd.DataFrame(Z, columns=range(4))[o])
        skcal.VectorScaler().fit(Z, y).predict_proba(Z)



@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("text", [False, True])
def test_array_fit_refuses_frame_named_by_the_classes_in_another_order(name, text):
    # fit on an array: a frame whose names are the classes (ints, or their text)
    # in another order would be read by position (all classes swapped): refused,
    # as for a reordered frame after a DataFrame fit; fit's order is fine
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 400)
    Z = 3.0 * (np.eye(4)[y] + rng.normal(size=(400, 4)))
    est = quiet_fit(getattr(skcal, name)(), Z, y)
    key = str if text else int
    o = [3, 1, 0, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's "X has feature names, but"
        with pytest.raises(ValueError, match=r"another order than fit's columns "
                           r"\[0, 1, 2, 3\].*reorder the columns of X .*or fit on "
                           r"a DataFrame"):
            est.predict_proba(pd.DataFrame(Z[:, o], columns=[key(c) for c in o]))
        got = est.predict_proba(pd.DataFrame(Z, columns=[key(c) for c in range(4)]))
        # names that are not the classes are read by position, as before
        other = est.predict_proba(pd.DataFrame(Z[:, o], columns=list("wxyz")))
    np.testing.assert_array_equal(got, est.predict_proba(Z))
    np.testing.assert_array_equal(other, est.predict_proba(Z[:, o]))


def test_text_labels_naming_no_column_warn_they_are_matched_in_sorted_order():
    # the rule and message of ``skcal fit``: column k is the k-th sorted label
    from skcal.exceptions import LabelsInSortedOrderWarning

    rng = np.random.default_rng(2)
    names = np.array(["world", "sports", "business", "scitech"])
    y = rng.integers(0, 4, 400)
    Z = 3.0 * (np.eye(4)[y] + rng.normal(size=(400, 4)))
    with pytest.warns(LabelsInSortedOrderWarning,
                      match=r"sorted order \(business -> 0, scitech -> 1, sports -> 2, "
                            r"world -> 3\).*VectorScaler\(classes=\[\.\.\.\]\)") as rec:
        est = skcal.VectorScaler().fit(Z, names[y])
    assert rec[0].filename == __file__
    np.testing.assert_array_equal(est.classes_, sorted(names))
    with pytest.warns(LabelsInSortedOrderWarning, match=r"business -> c0"):
        skcal.VectorScaler().fit(pd.DataFrame(Z, columns=["c0", "c1", "c2", "c3"]), names[y])
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelsInSortedOrderWarning)
        skcal.VectorScaler().fit(Z, y)  # integer labels 0..K-1
        skcal.VectorScaler(classes=names).fit(Z, names[y])
        skcal.VectorScaler().fit(pd.DataFrame(Z, columns=names), names[y])
        yb = (y > 1).astype(int)
        skcal.TemperatureScaler().fit(Z[:, 1] - Z[:, 0], np.array(["no", "yes"])[yb])
