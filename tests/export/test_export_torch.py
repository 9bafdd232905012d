"""``to_torch()``: every calibrator with a closed form, as a torch module.

The calibrators are discovered from ``skcal``'s public names, so a calibrator
added later that implements the ``_torch_spec`` hook is covered here.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import skcal  # noqa: E402
from skcal.base import BaseCalibrator  # noqa: E402


from _helpers import EXPORTABLE, IDS, STEP_MAPS as _STEP_MAPS  # noqa: E402

#: (n_classes, input shape): multiclass, binary 2-column, binary 1-D score.
CASES = [(5, "2d"), (2, "2d"), (2, "1d")]


def _fit(cls, n_classes, shape, input_type="logits", seed=0, n=600):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    Z = rng.normal(size=(n, n_classes)) * 2.0
    Z[np.arange(n), y] += 2.5  # informative, over-confident logits
    Z = (Z * 1.5).astype(np.float32)
    if shape == "1d":
        Z = (Z[:, 1] - Z[:, 0]).astype(np.float32)
    if input_type == "probabilities":
        Zs = Z if Z.ndim == 2 else np.stack([np.zeros_like(Z), Z], axis=1)
        P = np.exp(Zs - Zs.max(axis=1, keepdims=True))
        P = (P / P.sum(axis=1, keepdims=True)).astype(np.float32)
        Z = P if shape == "2d" else P[:, 1].copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # separable toy sets may warn
        est = cls(input_type=input_type).fit(Z, y)
    return est, Z


def _check_close(out, est, Z):
    """Module output vs transform / predict_proba of the fitted calibrator."""
    ref = est.transform(Z)
    P = est.predict_proba(Z)
    assert out.shape == ref.shape
    assert out.dtype == torch.float32
    out = out.detach().numpy()
    # probabilities to 1e-6 absolute
    np.testing.assert_allclose(np.exp(out), P, rtol=0, atol=1e-6)
    # log-probabilities to 1e-6 relative to max(1, |log p|) (float32 spacing
    # of a log-probability of -20 is 2e-6), -inf where transform has -inf
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(np.isfinite(out), finite)
    err = np.abs(out[finite] - ref[finite]) / np.maximum(1.0, np.abs(ref[finite]))
    assert err.max(initial=0.0) <= 1e-6


def test_exportable_calibrators_found():
    names = set(IDS)
    assert {"TemperatureScaler", "VectorScaler", "PlattScaler", "IsotonicScaler"} <= names


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
@pytest.mark.parametrize("n_classes, shape", CASES)
def test_to_torch_matches_transform(cls, n_classes, shape):
    est, Z = _fit(cls, n_classes, shape)
    m = est.to_torch()
    assert isinstance(m, torch.nn.Module) and not m.training
    # fitted parameters are buffers, not trainable parameters
    assert not list(m.parameters()) and list(m.buffers())
    _check_close(m(torch.from_numpy(Z)), est, Z)
    # float64 input is cast to the module's dtype
    out64 = m(torch.from_numpy(np.asarray(Z, dtype=np.float64)))
    assert out64.dtype == torch.float32


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
@pytest.mark.parametrize("shape", ["2d", "1d"])
def test_to_torch_probabilities_input(cls, shape):
    n_classes = 4 if shape == "2d" else 2
    est, P = _fit(cls, n_classes, shape, input_type="probabilities")
    out = est.to_torch()(torch.from_numpy(P))
    if cls.__name__ in _STEP_MAPS:
        # torch's and NumPy's float32 log of p may differ by one ulp; a score
        # that close to a jump of the step function (or on a steep segment
        # between two close CIR centres) moves by up to a few 1e-5
        np.testing.assert_allclose(
            out.exp().numpy(), est.predict_proba(P), rtol=0,
            atol=2e-5 if cls.__name__ == "IsotonicScaler" else 5e-5,
        )
        return
    _check_close(out, est, P)


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
def test_to_torch_float64_module(cls):
    est, Z = _fit(cls, 4, "2d")
    Z64 = Z.astype(np.float64)
    out = est.to_torch(dtype=torch.float64)(torch.from_numpy(Z64)).numpy()
    np.testing.assert_allclose(np.exp(out), est.predict_proba(Z64), rtol=0, atol=1e-12)


def test_temperature_module_is_plain_log_softmax():
    # independent reference: the formula of Guo et al. (2017), Eq. 9
    est, Z = _fit(skcal.TemperatureScaler, 5, "2d")
    x = torch.from_numpy(Z).double()
    ref = torch.log_softmax(x / est.temperature_, dim=1)
    out = est.to_torch(dtype=torch.float64)(x)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)


def test_isotonic_module_matches_numpy_interp():
    # independent reference: np.interp on the fitted knots (binary case)
    est, Z = _fit(skcal.IsotonicScaler, 2, "2d")
    ir = est.calibrators_[0]
    s = Z[:, 1].astype(np.float64) - Z[:, 0]
    q = np.interp(s, ir.X_thresholds_, ir.y_thresholds_)
    out = est.to_torch(dtype=torch.float64)(torch.from_numpy(Z)).exp().numpy()
    np.testing.assert_allclose(out[:, 1], q, rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
def test_to_torch_export(cls):
    est, Z = _fit(cls, 5, "2d")
    m = est.to_torch()
    x = torch.from_numpy(Z)
    batch = torch.export.Dim("batch", min=2)
    ep = torch.export.export(m, (x,), dynamic_shapes=({0: batch},))
    _check_close(ep.module()(x[:37]), est, Z[:37])


def _compile_works():
    try:
        f = torch.compile(lambda t: t * 2.0, backend="aot_eager")
        return bool(f(torch.ones(2)).sum() == 4.0)
    except Exception:  # no C compiler or inductor backend on this build
        return False


@pytest.mark.parametrize("cls", EXPORTABLE, ids=IDS)
def test_to_torch_compile_fullgraph(cls):
    # Dynamo traces the whole forward without a graph break (aot_eager: no
    # C compiler needed, fast); the inductor build is checked once below.
    if not _compile_works():
        pytest.skip("torch.compile is not available on this build")
    est, Z = _fit(cls, 3, "2d", n=200)
    torch._dynamo.reset()  # one compiled forward per module class: no recompile limit
    compiled = torch.compile(est.to_torch(), backend="aot_eager", fullgraph=True)
    _check_close(compiled(torch.from_numpy(Z)), est, Z)


def test_to_torch_compile_inductor():
    if not _compile_works():
        pytest.skip("torch.compile is not available on this build")
    est, Z = _fit(skcal.TemperatureScaler, 3, "2d", n=200)
    compiled = torch.compile(est.to_torch(), fullgraph=True)
    try:
        out = compiled(torch.from_numpy(Z))
    except torch._dynamo.exc.BackendCompilerFailed as exc:  # e.g. no C compiler
        pytest.skip(f"inductor cannot compile on this machine: {exc}")
    _check_close(out, est, Z)


def test_to_torch_not_implemented_message():
    class NoClosedForm(skcal.TemperatureScaler):
        _torch_spec = BaseCalibrator._torch_spec

    est = NoClosedForm().fit(np.array([[0.0, 1.0], [1.0, 0.0]] * 5), [1, 0] * 5)
    with pytest.raises(NotImplementedError, match="NoClosedForm has no closed-form"):
        est.to_torch()


def test_to_torch_not_fitted():
    from sklearn.exceptions import NotFittedError

    for cls in EXPORTABLE:
        with pytest.raises(NotFittedError):
            cls().to_torch()


def test_module_device_and_dtype_move():
    est, Z = _fit(skcal.VectorScaler, 3, "2d")
    m = est.to_torch().to(torch.float64)
    out = m(torch.from_numpy(Z).double())
    assert out.dtype == torch.float64
    np.testing.assert_allclose(
        out.exp().numpy(), est.predict_proba(Z.astype(np.float64)), atol=1e-6
    )


@pytest.mark.parametrize(
    "make",
    [lambda: skcal.MatrixScaler(reg="sms"),
     lambda: skcal.DirichletCalibrator(reg="l2", reg_lambda=0.0, reg_mu=0.0),
     lambda: skcal.EnsembleTemperatureScaler()],
    ids=["matrix-sms", "dirichlet-unregularised", "ets"],
)
def test_to_torch_non_default_maps(make):
    # log-softmax features with a scale (SMS), and a mixture whose weights are
    # all positive on over-confident logits
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 500)
    Z = (3.0 * (rng.normal(size=(500, 4)) + 2.0 * np.eye(4)[y])).astype(np.float32)
    noisy = rng.random(500) < 0.3  # label noise: the mixture uses all three terms
    y = np.where(noisy, rng.integers(0, 4, 500), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(Z, y)
    if isinstance(est, skcal.EnsembleTemperatureScaler):
        assert (est.weights_ > 0.1).all()
    _check_close(est.to_torch()(torch.from_numpy(Z)), est, Z)
    if isinstance(est, skcal.MatrixScaler):
        assert est.feature_scale_ is not None and est.feature_scale_ != 1.0
    try:
        import onnxruntime as ort

        from skcal.onnx import to_onnx
    except ImportError:
        return
    sess = ort.InferenceSession(to_onnx(est).SerializeToString())
    P = sess.run(None, {sess.get_inputs()[0].name: Z})[0]
    np.testing.assert_allclose(P, est.predict_proba(Z), rtol=0, atol=1e-6)


@pytest.mark.parametrize("top_k", [0, 3])
def test_local_temperature_network_exports(top_k):
    # rows with feature 1 are over-confident, rows with feature 0 are not:
    # the fitted network (local_ True) must be exported, extra feature included
    rng = np.random.default_rng(0)
    n, K = 3000, 4
    y = rng.integers(0, K, n)
    f = rng.integers(0, 2, n).astype(float)
    Z = rng.normal(size=(n, K)) + 1.5 * np.eye(K)[y]
    Z *= np.where(f == 1, 4.0, 1.0)[:, None]
    X = np.hstack([Z, f[:, None]]).astype(np.float32)
    est = skcal.LocalTemperatureScaler(n_extra_features=1, top_k=top_k,
                                       max_iter=300).fit(X, y)
    assert est.local_
    T = est.temperatures(X)
    assert T[f == 1].mean() > 2.0 * T[f == 0].mean()
    out = est.to_torch()(torch.from_numpy(X))
    np.testing.assert_allclose(np.exp(out.detach().numpy()), est.predict_proba(X),
                               rtol=0, atol=1e-6)
    try:
        import onnxruntime as ort

        from skcal.onnx import to_onnx
    except ImportError:
        return
    sess = ort.InferenceSession(to_onnx(est).SerializeToString())
    P = sess.run(None, {sess.get_inputs()[0].name: X})[0]
    np.testing.assert_allclose(P, est.predict_proba(X), rtol=0, atol=1e-6)


def _registry_fits(Z, y):
    """Every registered calibrator fitted on ``(Z, y)`` (warnings silenced)."""
    from skcal.utils.discovery import all_calibrators

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [(name, cls().fit(Z, y)) for name, cls in all_calibrators()]


def test_to_torch_equals_predict_proba_on_close_thresholds(close_thresholds):
    """Across the registry: the module (float32 by default, and float64) equals
    predict_proba on float64 scores 1e-9 apart, or the export is refused."""
    Z, y = close_thresholds
    refused = []
    for name, est in _registry_fits(Z, y):
        try:
            m32 = est.to_torch()
        except NotImplementedError:
            refused.append(name)
            continue
        ref = est.predict_proba(Z)
        X = torch.from_numpy(Z)
        got32 = m32(X).exp().numpy()
        assert got32.dtype == np.float32
        np.testing.assert_allclose(got32, ref, rtol=0, atol=2e-5, err_msg=name)
        # float64: binary scores z_1 - z_0 are exact; the one-vs-rest scores
        # agree with NumPy's to a few ulps, which a 1e-9-wide isotonic segment
        # (slope ~1e8) magnifies to ~1e-8
        got64 = est.to_torch(dtype=torch.float64)(X).exp().numpy()
        atol = 1e-12 if Z.shape[1] == 2 else 1e-7
        np.testing.assert_allclose(got64, ref, rtol=0, atol=atol, err_msg=name)
    # the step maps with no closed-form export refuse it (no silent approximation)
    assert {"HistogramCalibrator", "BBQCalibrator", "VennAbersCalibrator"} <= set(refused)
    assert "IsotonicScaler" not in refused


def test_float32_step_map_with_merged_knots_is_refused():
    from skcal.torch import OneVsRestInterpolation

    kw = dict(n_classes=2, input_type="logits", n_features_in=1, device=None)
    with pytest.raises(ValueError, match="cannot tell apart"):
        OneVsRestInterpolation(x=[[0.0, 1.0, 1.0 + 1e-9]], y=[[0.0, 0.5, 1.0]],
                               dtype=torch.float32, **kw)
    # bfloat16 keeps 8 mantissa bits: 1 and 1.001 merge there though float32 tells them apart
    with pytest.raises(ValueError, match="bfloat16 cannot tell apart"):
        OneVsRestInterpolation(x=[[0.0, 1.0, 1.001]], y=[[0.0, 0.5, 1.0]],
                               dtype=torch.bfloat16, **kw)
    OneVsRestInterpolation(x=[[0.0, 1.0, 1.001]], y=[[0.0, 0.5, 1.0]], dtype=torch.float32, **kw)
    m = OneVsRestInterpolation(x=[[0.0, 1.0, 1.0 + 1e-9]], y=[[0.0, 0.5, 1.0]],
                               dtype=torch.float32, work_dtype=torch.float64, **kw)
    s = torch.tensor([1.0 + 5e-10], dtype=torch.float64)
    assert m(s).exp()[0, 1].item() == pytest.approx(0.75, abs=1e-6)


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


def test_deployment_guide_lists_exactly_the_calibrators_that_do_not_export():
    """The guide's no-export list is the registry's (main omitted
    TopVersusAllCalibrator; issue 24 leftovers, item j)."""
    import re
    from pathlib import Path

    from skcal.utils.discovery import all_calibrators

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 3)) * 2
    y = (Z + rng.gumbel(size=Z.shape)).argmax(axis=1)
    refused = set()
    for name, cls in all_calibrators():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls().fit(Z, y)
        try:
            est.to_torch()
        except NotImplementedError:
            refused.add(name)
    guide = (Path(__file__).parents[2] / "docs" / "user_guide" / "deployment.rst").read_text()
    para = " ".join(guide.split("These calibrators do not export")[1].split(
        ":class:`~skcal.SmoothedCalibrator`")[0].split())
    assert set(re.findall(r":class:`~skcal\.(\w+)`", para)) == refused
    # the wrappers export exactly when their inner calibrator does
    with pytest.raises(NotImplementedError):
        skcal.SmoothedCalibrator(skcal.HistogramCalibrator()).fit(Z, y).to_torch()
    skcal.SmoothedCalibrator(skcal.TemperatureScaler()).fit(Z, y).to_torch()
    assert not hasattr(skcal.CalibratedEnsemble, "to_torch")
    assert not hasattr(skcal.GroupedCalibrator, "to_torch")
