"""torch path of every calibrator and metric: same answers as numpy, devices follow data.

Runs on CPU torch always (skipped when torch is not installed); the same
tests run on CUDA under ``@pytest.mark.gpu`` and skip without a GPU.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

torch = pytest.importorskip("torch")

import skcal  # noqa: E402
from skcal.utils.discovery import all_calibrators  # noqa: E402
from skcal import metrics  # noqa: E402
from skcal._backend import _torch  # noqa: E402
from skcal import TemperatureScaler  # noqa: E402

#: Every calibrator of the registry (a new one is covered automatically).
CALIBRATORS = [cls for _, cls in all_calibrators()]

#: Fitted attributes that are not parameters of the map.
_NOT_PARAMS = {"classes_", "n_features_in_", "feature_names_in_", "n_iter_"}

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=[
            pytest.mark.gpu,
            pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
        ],
    ),
]

RTOL = {np.float64: 1e-6, np.float32: 1e-4}


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(params=CALIBRATORS, ids=lambda c: c.__name__)
def calibrator(request):
    return request.param


@pytest.fixture(scope="module")
def logits():
    """Over-confident 4-class logits with a class bias (every method has work to do)."""
    rng = np.random.default_rng(0)
    n, k = 2000, 4
    y = rng.integers(0, k, size=n)
    Z = 4.0 * (2.0 * np.eye(k)[y] + rng.normal(size=(n, k))) + np.array([0.0, 1.0, -1.0, 0.5])
    w = rng.uniform(0.5, 2.0, size=n)
    return Z, y, w


def _skip_missing_kernels(cls):
    if cls.__name__ == "VectorScaler" and not hasattr(_torch, "vector_nll_grad"):
        pytest.xfail("vector_* kernels are not yet in skcal._backend._torch")


def _params(est):
    """Every fitted float parameter (public attribute ending in ``_``) of ``est``."""
    out = {}
    for a, v in vars(est).items():
        if not a.endswith("_") or a.startswith("_") or a in _NOT_PARAMS:
            continue
        if isinstance(v, float) or (
            isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating)
        ):
            out[a] = np.atleast_1d(np.asarray(v, dtype=np.float64))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_torch_fit_matches_numpy(calibrator, dtype, weighted, device, logits):
    _skip_missing_kernels(calibrator)
    Z, y, w = logits
    Z = Z.astype(dtype)
    sw = w if weighted else None
    ref = calibrator().fit(Z, y, sample_weight=sw)
    Zt = torch.from_numpy(Z).to(device)
    got = calibrator().fit(Zt, torch.from_numpy(y), sample_weight=sw)
    for name, value in _params(ref).items():
        np.testing.assert_allclose(_params(got)[name], value, rtol=RTOL[dtype],
                                   atol=RTOL[dtype] * 1e-2, err_msg=name)
    P_ref = ref.predict_proba(Z)
    P = got.predict_proba(Zt)
    assert isinstance(P, torch.Tensor) and P.device.type == device
    assert P.dtype == (torch.float64 if dtype == np.float64 else torch.float32)
    np.testing.assert_allclose(P.cpu().numpy(), P_ref, rtol=RTOL[dtype] * 10,
                               atol=RTOL[dtype] * 1e-1)
    LP = got.transform(Zt)
    assert isinstance(LP, torch.Tensor) and LP.device.type == device
    np.testing.assert_array_equal(got.predict(Zt).cpu().numpy(), ref.predict(Z))


def test_backend_torch_on_numpy_input_returns_numpy(calibrator, logits):
    _skip_missing_kernels(calibrator)
    Z, y, _ = logits
    ref = calibrator().fit(Z, y)
    est = calibrator(backend="torch").fit(Z, y)
    P = est.predict_proba(Z)
    assert isinstance(P, np.ndarray) and P.dtype == np.float64
    np.testing.assert_allclose(P, ref.predict_proba(Z), rtol=1e-6, atol=1e-9)
    assert isinstance(est.transform(Z), np.ndarray)


def test_torch_fitted_calibrator_pickles_and_predicts_numpy(calibrator, device, logits):
    _skip_missing_kernels(calibrator)
    Z, y, _ = logits
    Zt = torch.from_numpy(Z).to(device)
    est = calibrator().fit(Zt, torch.from_numpy(y).to(device))
    for name, value in _params(est).items():
        assert isinstance(getattr(est, name), (float, np.ndarray)), name
    clone(est)  # parameters only, no tensors
    est2 = pickle.loads(pickle.dumps(est))
    P = est2.predict_proba(Z)
    assert isinstance(P, np.ndarray)
    np.testing.assert_allclose(P, est.predict_proba(Zt).cpu().numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_tensors_give_finite_normalised_rows(calibrator, dtype, device, logits):
    _skip_missing_kernels(calibrator)
    Z, y, _ = logits
    Zt = torch.from_numpy(Z).to(device=device, dtype=getattr(torch, dtype))
    est = calibrator().fit(Zt, y)
    P = est.predict_proba(Zt)
    assert P.dtype == torch.float32 and P.device.type == device
    assert bool(torch.isfinite(P).all())
    np.testing.assert_allclose(P.sum(1).double().cpu().numpy(), 1.0, atol=1e-5)
    # the fit on the half tensor matches the fit on its exact float32 values
    ref = calibrator().fit(Zt.float().cpu().numpy(), y)
    for name, value in _params(ref).items():
        np.testing.assert_allclose(_params(est)[name], value, rtol=1e-4, atol=1e-6,
                                   err_msg=name)


def test_half_input_is_not_upcast_as_a_whole():
    """The kernels keep a 16-bit tensor as is (no full-size float copy)."""
    rng = np.random.default_rng(1)
    Z = torch.from_numpy(rng.normal(size=(50, 3)).astype(np.float32)).to(torch.bfloat16)
    y = torch.from_numpy(rng.integers(0, 3, 50))
    m, zy = _torch.row_max_and_true(Z, y)
    assert m.dtype == torch.float64
    np.testing.assert_array_equal(m.numpy(), Z.float().numpy().max(1))
    F, G, H = _torch.temperature_nll_derivs(Z, y, None, 0.5)
    ref = _torch.temperature_nll_derivs(Z.double(), y, None, 0.5)
    np.testing.assert_allclose((F, G, H), ref, rtol=1e-5)


# ------------------------------------------------------------------- metrics
METRICS = [
    ("negative_log_likelihood", {}),
    ("brier_score", {}),
    ("expected_calibration_error", {}),
    ("expected_calibration_error", {"kind": "classwise"}),
    ("calibration_error", {"norm": "max", "strategy": "quantile"}),
]


@pytest.mark.parametrize("name,kwargs", METRICS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_metrics_torch_match_numpy(name, kwargs, dtype, device, logits):
    Z, y, w = logits
    P = np.exp(Z - Z.max(1, keepdims=True))
    P = (P / P.sum(1, keepdims=True)).astype(dtype)
    fn = getattr(metrics, name)
    ref = fn(y, P, sample_weight=w, **kwargs)
    got = fn(torch.from_numpy(y).to(device), torch.from_numpy(P).to(device),
             sample_weight=torch.from_numpy(w).to(device), **kwargs)
    assert float(got) == pytest.approx(float(ref), rel=RTOL[dtype], abs=1e-12)


# ----------------------------------------------- deferred range check (predict)
def _large_logits():
    """4.4 MB of float32 logits: above the size whose range check is deferred."""
    rng = np.random.default_rng(3)
    n, k = 11_000, 100
    y = rng.integers(0, k, size=n)
    Z = (3.0 * np.eye(k)[y] + rng.normal(size=(n, k))).astype(np.float32)
    return Z, y


@pytest.fixture(scope="module")
def large_fitted():
    Z, y = _large_logits()
    fitted = {}
    for cls in (skcal.TemperatureScaler, skcal.VectorScaler, skcal.EnsembleTemperatureScaler,
                skcal.BiasCorrectedTemperatureScaler, skcal.PlattScaler):
        fitted[cls.__name__] = cls().fit(Z[:3000], y[:3000])
    return Z, fitted


@pytest.mark.parametrize("name", ["TemperatureScaler", "VectorScaler",
                                  "EnsembleTemperatureScaler", "PlattScaler"])
@pytest.mark.parametrize("method", ["predict_proba", "predict_log_proba"])
@pytest.mark.parametrize("bad, message", [(np.nan, "NaN"), (-np.inf, "infinity"),
                                          (np.inf, "infinity"), (1e30, "magnitude")])
@pytest.mark.parametrize("row", [0, -1])
def test_predict_on_large_tensor_still_rejects_bad_logits(large_fitted, name, method, bad,
                                                          message, row):
    # the check runs on the chunks the kernel reads: a bad entry in the first,
    # a middle or the last chunk is reported like the immediate check does
    Z, fitted = large_fitted
    Zt = torch.from_numpy(Z.copy())
    Zt[row, 7] = float(bad)
    with pytest.raises(ValueError, match=message):
        getattr(fitted[name], method)(Zt)


@pytest.mark.parametrize("name", ["TemperatureScaler", "VectorScaler",
                                  "BiasCorrectedTemperatureScaler"])
def test_predict_on_large_tensor_checks_range_without_a_separate_pass(large_fitted, name,
                                                                      monkeypatch):
    Z, fitted = large_fitted
    Zt = torch.from_numpy(Z)
    shapes = []
    real = torch.aminmax

    def spy(t, *args, **kwargs):
        shapes.append(tuple(t.shape))
        return real(t, *args, **kwargs)

    monkeypatch.setattr(torch, "aminmax", spy)
    P = fitted[name].predict_proba(Zt)
    # every call is on a row chunk (the kernel's), none on the whole tensor;
    # the chunks cover every row once, plus the documented probability
    # detection sample (the first PREDICT_PROBABILITY_CHECK_ROWS rows)
    from skcal.utils.validation import PREDICT_PROBABILITY_CHECK_ROWS

    assert shapes and all(s[0] < Z.shape[0] for s in shapes)
    sample = min(PREDICT_PROBABILITY_CHECK_ROWS, Z.shape[0])
    assert sum(s[0] for s in shapes) == Z.shape[0] + sample
    monkeypatch.setattr(torch, "aminmax", real)
    expected = fitted[name].predict_proba(Z)
    np.testing.assert_allclose(P.numpy(), expected, rtol=1e-5, atol=1e-7)


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


def test_normalize_probabilities_reads_a_tensor_as_its_numpy_copy():
    from skcal.utils.validation import normalize_probabilities

    P = torch.tensor([[0.7, 0.2, 0.0997], [0.5, 0.25, 0.25]], dtype=torch.float64)
    out = normalize_probabilities(P)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    A = P.numpy()
    np.testing.assert_array_equal(out.numpy(), normalize_probabilities(A))
    np.testing.assert_allclose(out.numpy(), A / A.sum(axis=1, keepdims=True), rtol=1e-15)
    assert normalize_probabilities(P.to(torch.bfloat16)).dtype == torch.float32
    # the NumPy input's errors (a 1-D tensor raised IndexError, a bool one passed)
    for bad, msg in [
        (torch.tensor([0.5, 0.5]), "2D array"),
        (torch.tensor([[True, False]]), "boolean"),
        (torch.tensor([[float("nan"), 1.0]]), "NaN"),
    ]:
        with pytest.raises(ValueError, match=msg):
            normalize_probabilities(bad)
