"""ONNX export (skcal.onnx.to_onnx) and skl2onnx conversion, run by onnxruntime."""

import warnings

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import skcal  # noqa: E402
from skcal.base import BaseCalibrator  # noqa: E402


from _helpers import EXPORTABLE, IDS, STEP_MAPS as _STEP_MAPS  # noqa: E402


def _data(n_classes, shape, input_type="logits", n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    Z = rng.normal(size=(n, n_classes)) * 3.0
    Z[np.arange(n), y] += 3.0
    Z = Z.astype(np.float32)
    if input_type == "probabilities":
        P = np.exp(Z - Z.max(axis=1, keepdims=True))
        Z = (P / P.sum(axis=1, keepdims=True)).astype(np.float32)
        if shape == "1d":
            Z = Z[:, 1].copy()
    elif shape == "1d":
        Z = Z[:, 1] - Z[:, 0]
    return Z, y


def _run(model, X):
    sess = ort.InferenceSession(model.SerializeToString())
    return sess.run(None, {sess.get_inputs()[0].name: X})


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
@pytest.mark.parametrize(
    "n_classes, shape, input_type",
    [(5, "2d", "logits"), (2, "2d", "logits"), (2, "1d", "logits"),
     (4, "2d", "probabilities")],
)
@pytest.mark.parametrize("opset", [17, 18])
def test_to_onnx_matches_predict_proba(cls, n_classes, shape, input_type, opset):
    from skcal.onnx import to_onnx

    Z, y = _data(n_classes, shape, input_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(input_type=input_type).fit(Z, y)
    P, LP = _run(to_onnx(est, opset=opset), Z.reshape(len(Z), -1))
    assert P.dtype == np.float32 and P.shape == (len(Z), n_classes)
    if cls.__name__ in _STEP_MAPS and input_type == "probabilities":
        # onnxruntime's and NumPy's float32 log(p) may differ by one ulp; a
        # score that close to a jump of the step function (or on a steep
        # segment between two close CIR centres) moves by a few 1e-5
        atol = 2e-5 if cls.__name__ == "IsotonicScaler" else 5e-5
        np.testing.assert_allclose(P, est.predict_proba(Z), rtol=0, atol=atol)
        return
    np.testing.assert_allclose(P, est.predict_proba(Z), rtol=0, atol=1e-6)
    ref = est.predict_log_proba(Z)
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(np.isfinite(LP), fin)
    np.testing.assert_allclose(LP[fin], ref[fin], rtol=1e-6, atol=1e-6)


def test_to_onnx_temperature_plain_softmax():
    # independent reference: softmax(z / T) in float64
    from skcal.onnx import to_onnx

    Z, y = _data(4, "2d")
    est = skcal.TemperatureScaler().fit(Z, y)
    A = Z.astype(np.float64) / est.temperature_
    ref = np.exp(A - A.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(_run(to_onnx(est), Z)[0], ref, rtol=0, atol=1e-6)


def test_to_onnx_not_implemented():
    from skcal.onnx import to_onnx

    class NoClosedForm(skcal.TemperatureScaler):
        _torch_spec = BaseCalibrator._torch_spec

    Z, y = _data(3, "2d")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = NoClosedForm().fit(Z, y)
    with pytest.raises(NotImplementedError, match="no closed-form"):
        to_onnx(est)


# ----------------------------------------------------------------- skl2onnx
skl2onnx = pytest.importorskip("skl2onnx")


@pytest.fixture(scope="module")
def registered():
    from skcal.onnx import register_skl2onnx

    return register_skl2onnx()


def _tabular(n_classes, n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32)
    t = 1.5 * X[:, 0] + X[:, 1] + rng.normal(size=n)
    y = np.digitize(t, np.quantile(t, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, np.array(["ant", "bee", "cat", "dog"])[y]


def test_register_names(registered):
    assert set(IDS) <= set(registered)
    assert {"CalibratedClassifier", "ClassifierLogits"} <= set(registered)


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("response_method", ["decision_function", "predict_proba"])
def test_pipeline_converts_as_a_whole(registered, cls, n_classes, response_method):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _tabular(n_classes)
    pipe = make_pipeline(
        StandardScaler(),
        skcal.ClassifierLogits(LogisticRegression(), response_method=response_method),
        cls(input_type="logits"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    # float64 graph: the whole pipeline equals scikit-learn's output
    X64 = X.astype(np.float64)
    onx = skl2onnx.to_onnx(pipe, X64[:1], options={"zipmap": False})
    label, P = _run(onx, X64)
    np.testing.assert_allclose(P, pipe.predict_proba(X64), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(label, pipe.predict(X64))
    # float32 graph: the classifier's float32 rounding passes through the map
    onx32 = skl2onnx.to_onnx(pipe, X[:1], options={"zipmap": False})
    label32, P32 = _run(onx32, X)
    tol = 1e-4 if cls.__name__ in _STEP_MAPS else 1e-5  # steep steps magnify
    np.testing.assert_allclose(P32, pipe.predict_proba(X), rtol=0, atol=tol)


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
def test_calibrated_classifier_converts(registered, cls):
    from sklearn.naive_bayes import GaussianNB

    X, y = _tabular(3)
    cc = skcal.CalibratedClassifier(GaussianNB(), calibrator=cls(), cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cc.fit(X, y)
    X64 = X.astype(np.float64)
    label, P = _run(skl2onnx.to_onnx(cc, X64[:1], options={"zipmap": False}), X64)
    np.testing.assert_allclose(P, cc.predict_proba(X64), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(label, cc.predict(X64))


def test_zipmap_output(registered):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X, y = _tabular(3)
    pipe = make_pipeline(
        skcal.ClassifierLogits(LogisticRegression()), skcal.TemperatureScaler()
    ).fit(X, y)
    label, probs = _run(skl2onnx.to_onnx(pipe, X[:1]), X[:5])
    ref = pipe.predict_proba(X[:5])
    assert [sorted(d) for d in probs] == [["ant", "bee", "cat"]] * 5
    np.testing.assert_allclose(
        [[d[c] for c in ("ant", "bee", "cat")] for d in probs], ref, atol=1e-5
    )


def test_frozen_classifier_pipeline(registered):
    """The documented pattern, ClassifierLogits(FrozenEstimator(clf)), converts."""
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X, y = _tabular(3)
    X = X.astype(np.float64)
    clf = LogisticRegression().fit(X[::2], y[::2])
    pipe = make_pipeline(
        skcal.ClassifierLogits(FrozenEstimator(clf)), skcal.TemperatureScaler()
    ).fit(X[1::2], y[1::2])
    label, P = _run(skl2onnx.to_onnx(pipe, X[:1], options={"zipmap": False}), X)
    # reference: the classifier's own logits over the fitted temperature
    Z = X @ clf.coef_.T + clf.intercept_
    ref = np.exp(Z / pipe[-1].temperature_)
    np.testing.assert_allclose(P, ref / ref.sum(axis=1, keepdims=True), atol=1e-9)


def test_to_onnx_equals_predict_proba_on_close_thresholds(close_thresholds):
    """Across the registry: the float64 graph equals predict_proba on float64
    scores 1e-9 apart, the float32 graph equals it on the same float32 values;
    a calibrator without a closed form refuses both exports."""
    from skcal.onnx import to_onnx
    from skcal.utils.discovery import all_calibrators

    Z, y = close_thresholds
    Z32 = Z.astype(np.float32)
    for name, cls in all_calibrators():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls().fit(Z, y)
        try:
            model64 = to_onnx(est, dtype="float64")
        except NotImplementedError:
            torch = pytest.importorskip("torch")  # noqa: F841
            with pytest.raises(NotImplementedError):
                est.to_torch()
            continue
        P, LP = _run(model64, Z)
        assert P.dtype == np.float64
        # binary scores z_1 - z_0 are exact in both; onnxruntime's one-vs-rest
        # log-odds agree with NumPy's to ~1e-12, which a 1e-9-wide isotonic
        # segment (slope ~1e8) magnifies to ~1e-4 (before the fix: 0.5)
        atol = 1e-9 if Z.shape[1] == 2 else 1e-3
        np.testing.assert_allclose(P, est.predict_proba(Z), rtol=0, atol=atol, err_msg=name)
        P32, _ = _run(to_onnx(est), Z32)
        assert P32.dtype == np.float32
        np.testing.assert_allclose(P32, est.predict_proba(Z32), rtol=0, atol=2e-5,
                                   err_msg=name)


def test_to_onnx_dtype_is_checked():
    from skcal.onnx import to_onnx

    est = skcal.TemperatureScaler().fit(*_data(3, "2d"))
    with pytest.raises(ValueError, match="dtype must be"):
        to_onnx(est, dtype="float16")


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
@pytest.mark.parametrize("input_type", ["logits", "probabilities"])
def test_to_onnx_binary_1d_input_equals_predict_proba(cls, input_type):
    """1-D binary scores, as predict_proba takes them: binary_1d=True gives a
    graph input of shape (N,) (main refused 1-D input; issue 24 leftovers, f)."""
    from skcal.onnx import to_onnx

    Z, y = _data(2, "1d", input_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(input_type=input_type).fit(Z, y)
    model = to_onnx(est, binary_1d=True)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param for d in dims] == ["N"]
    P, LP = _run(model, Z)
    atol = 5e-5 if cls.__name__ in _STEP_MAPS and input_type == "probabilities" else 1e-6
    np.testing.assert_allclose(P, est.predict_proba(Z), rtol=0, atol=atol)
    two = np.c_[-Z, Z] if input_type == "logits" else np.c_[1 - Z, Z]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est2 = cls(input_type=input_type).fit(two, y)
    with pytest.raises(ValueError, match="binary_1d=True needs"):
        to_onnx(est2, binary_1d=True)


def test_huge_logits_graph_saturates_predict_proba_follows_dtype_rule():
    """What docs/user_guide/deployment.rst says about a row of 1e30."""
    from skcal.onnx import to_onnx

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    Z = rng.normal(size=(300, 3)) + 2.0 * np.eye(3)[y]
    ts = skcal.TemperatureScaler().fit(Z, y)
    row = np.array([[1e30, 0.0, 0.0]])
    sess = ort.InferenceSession(to_onnx(ts).SerializeToString())
    graph = sess.run(["probabilities"], {"X": row.astype(np.float32)})[0]
    np.testing.assert_allclose(graph, [[1.0, 0.0, 0.0]], atol=1e-7)
    np.testing.assert_allclose(ts.predict_proba(row), [[1.0, 0.0, 0.0]], atol=1e-15)
    with pytest.raises(ValueError, match=r"magnitude 1e\+30.*1e\+15 for float32"):
        ts.predict_proba(row.astype(np.float32))
    with pytest.raises(ValueError, match=r"1e\+100 for float64"):
        ts.predict_proba(np.array([[1e101, 0.0, 0.0]]))


@pytest.mark.parametrize("input_type", ["logits", "probabilities"])
def test_to_onnx_float64_one_score_in_reversed_class_order(input_type):
    """One binary score with ``classes=[1, 0]`` in a float64 graph: the reorder's
    ``1 - p`` constant is float64 too (it was float32, and onnxruntime refused
    the graph)."""
    from skcal.onnx import to_onnx

    Z, y = _data(2, "1d", input_type)
    Z = Z.astype(np.float64).reshape(-1, 1)
    est = skcal.PlattScaler(classes=[1, 0], input_type=input_type).fit(Z, y)
    assert est._column_order_ is not None
    P, LP = _run(to_onnx(est, dtype="float64"), Z)
    np.testing.assert_allclose(P, est.predict_proba(Z), rtol=0, atol=1e-12)
    np.testing.assert_allclose(LP, est.predict_log_proba(Z), rtol=0, atol=1e-10)
