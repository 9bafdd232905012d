"""Tests of the shared kernels of skcal._backend (numpy and torch).

Every kernel is compared with an independent reference: scipy's
``log_softmax``/``logsumexp``, plain numpy indexing, and finite differences
for the derivatives.
"""

import inspect
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import log_softmax as sp_log_softmax
from scipy.special import logsumexp

from skcal._backend import _numpy, _shared

SHARED = [
    "chunk_rows",
    "output_dtype",
    "log_softmax",
    "softmax",
    "argmax_rows",
    "mean_log_likelihood",
    "nll",
    "row_max_and_true",
    "temperature_nll_derivs",
]


def _backends():
    out = [pytest.param("numpy", id="numpy")]
    out.append(pytest.param("torch", id="torch"))
    return out


@pytest.fixture(params=_backends())
def xp(request):
    if request.param == "torch":
        pytest.importorskip("torch")
        from skcal._backend import _torch

        return _torch
    return _numpy


def _to(xp, a):
    return xp.from_numpy(np.ascontiguousarray(a)) if xp.name == "torch" else a


def _np(a):
    return a.numpy() if hasattr(a, "numpy") else np.asarray(a)


@pytest.fixture
def data(rng):
    n, k = 1000, 7
    Z = 6.0 * rng.normal(size=(n, k))
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.1, 3.0, size=n)
    return Z, y, w


def test_import_skcal_does_not_import_torch():
    code = (
        "import sys, skcal, skcal.metrics, skcal._backend._numpy;"
        "from skcal import TemperatureScaler;"
        "import numpy as np;"
        "TemperatureScaler().fit(np.eye(3) * 2, [0, 1, 2]);"
        "print('torch' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "False"


def test_backend_modules_share_names_and_signatures():
    torch_mod = pytest.importorskip("skcal._backend._torch", exc_type=ImportError)
    assert _numpy.name == "numpy" and torch_mod.name == "torch"
    public = [
        n for n, f in vars(_numpy).items()
        if inspect.isfunction(f) and not n.startswith("_")
        and f.__module__ in (_numpy.__name__, _shared.__name__)  # not imports
    ]
    assert set(SHARED) <= set(public)
    missing = [n for n in public if not hasattr(torch_mod, n)]
    for n in SHARED:
        assert hasattr(torch_mod, n), f"_torch lacks {n}"
    for n in set(public) - set(missing):
        p_np = list(inspect.signature(getattr(_numpy, n)).parameters)
        p_t = list(inspect.signature(getattr(torch_mod, n)).parameters)
        assert p_t[: len(p_np)] == p_np, n
    assert callable(torch_mod.from_numpy)
    # every kernel has its torch twin but the declared host-only ones
    assert set(missing) == set(_numpy.HOST_ONLY), missing


@pytest.mark.parametrize("n,k,itemsize", [(10, 3, 8), (1000, 1000, 8), (5, 10**7, 4)])
def test_chunk_rows_covers_all_rows_once(n, k, itemsize):
    slices = list(_numpy.chunk_rows(n, k, itemsize))
    rows = np.concatenate([np.arange(n)[s] for s in slices])
    np.testing.assert_array_equal(rows, np.arange(n))


def test_output_dtype_rule(xp):
    if xp.name == "numpy":
        assert xp.output_dtype(np.float64) == np.float64
        assert xp.output_dtype(np.float32) == np.float32
        assert xp.output_dtype(np.float16) == np.float32
    else:
        import torch

        assert xp.output_dtype(torch.float64) == torch.float64
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            assert xp.output_dtype(dt) == torch.float32


@pytest.mark.parametrize("affine", ["none", "scale", "vector"])
def test_log_softmax_matches_scipy(xp, data, affine):
    Z, _, _ = data
    k = Z.shape[1]
    scale = {"none": None, "scale": 0.37, "vector": np.linspace(0.5, 2.0, k)}[affine]
    bias = np.linspace(-1.0, 1.0, k) if affine == "vector" else None
    A = Z * (1.0 if scale is None else scale) + (0.0 if bias is None else bias)
    expected = sp_log_softmax(A, axis=1)
    got = _np(xp.log_softmax(_to(xp, Z), scale=scale, bias=bias))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    P = _np(xp.softmax(_to(xp, Z), scale=scale, bias=bias))
    np.testing.assert_allclose(P, np.exp(expected), rtol=1e-12, atol=1e-15)


def test_log_softmax_extreme_logits_are_finite(xp):
    Z = np.array([[1e4, -1e4, 0.0], [-3e4, -3e4, -3e4]], dtype=np.float32)
    LP = _np(xp.log_softmax(_to(xp, Z)))
    assert LP.dtype == np.float32
    np.testing.assert_allclose(LP[0], [0.0, -2e4, -1e4], rtol=1e-6)
    np.testing.assert_allclose(LP[1], np.log([1 / 3] * 3), rtol=1e-6)


def test_log_softmax_chunked_equals_unchunked(xp, data, monkeypatch):
    Z, _, _ = data
    full = _np(xp.log_softmax(_to(xp, Z), scale=0.5))
    monkeypatch.setattr(xp, "CHUNK_BYTES", 8 * Z.shape[1] * 3)  # 3 rows a chunk
    chunked = _np(xp.log_softmax(_to(xp, Z), scale=0.5))
    np.testing.assert_array_equal(full, chunked)


@pytest.mark.parametrize("weighted", [False, True])
def test_nll_matches_scipy(xp, data, weighted):
    Z, y, w = data
    sw = w if weighted else None
    li = logsumexp(0.8 * Z, axis=1) - 0.8 * Z[np.arange(len(y)), y]
    expected = np.average(li, weights=sw)
    got = xp.nll(_to(xp, Z), _to(xp, y), None if sw is None else _to(xp, sw), scale=0.8)
    assert isinstance(got, float)
    assert got == pytest.approx(expected, rel=1e-12)


def test_mean_log_likelihood_picks_true_entries(xp, data):
    Z, y, w = data
    LP = sp_log_softmax(Z, axis=1)
    expected = np.average(LP[np.arange(len(y)), y], weights=w)
    got = xp.mean_log_likelihood(_to(xp, LP), _to(xp, y), _to(xp, w))
    assert got == pytest.approx(expected, rel=1e-12)


def test_argmax_rows(xp, data):
    Z, _, _ = data
    np.testing.assert_array_equal(_np(xp.argmax_rows(_to(xp, Z))), Z.argmax(axis=1))


@pytest.mark.parametrize("k", [2, 7, 40])  # both row-max code paths (<= / > 32 columns)
def test_row_max_and_true(xp, rng, k):
    Z = rng.normal(size=(300, k)).astype(np.float32)
    y = rng.integers(0, k, size=300)
    m, zy = xp.row_max_and_true(_to(xp, Z), _to(xp, y))
    np.testing.assert_array_equal(_np(m), Z.max(axis=1).astype(np.float64))
    np.testing.assert_array_equal(_np(zy), Z[np.arange(300), y].astype(np.float64))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("beta", [0.05, 0.4, 3.0])
def test_temperature_nll_derivs_match_finite_differences(xp, data, weighted, beta):
    Z, y, w = data
    sw = w if weighted else None

    def f(b):  # independent objective: scipy logsumexp, weighted mean
        li = logsumexp(b * Z, axis=1) - b * Z[np.arange(len(y)), y]
        return np.average(li, weights=sw)

    Zx, yx = _to(xp, Z), _to(xp, y)
    swx = None if sw is None else _to(xp, sw)
    F, G, H = xp.temperature_nll_derivs(Zx, yx, swx, beta)
    eps = 1e-5 * beta
    assert F == pytest.approx(f(beta), rel=1e-12)
    assert G == pytest.approx((f(beta + eps) - f(beta - eps)) / (2 * eps), rel=1e-6, abs=1e-9)
    h_fd = (f(beta + eps) - 2 * f(beta) + f(beta - eps)) / eps**2
    assert H == pytest.approx(h_fd, rel=1e-3)
    # row statistics passed in give the same numbers
    stats = xp.row_max_and_true(Zx, yx)
    assert xp.temperature_nll_derivs(Zx, yx, swx, beta, row_stats=stats) == pytest.approx(
        (F, G, H), rel=1e-14
    )


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_temperature_nll_derivs_low_precision_close_to_float64(xp, data, dtype):
    Z, y, _ = data
    Zl = Z.astype(dtype)
    ref = _numpy.temperature_nll_derivs(Zl.astype(np.float64), y, None, 0.4)
    got = xp.temperature_nll_derivs(_to(xp, Zl), _to(xp, y), None, 0.4)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("beta", [0.05, 0.4, 3.0])
def test_temperature_third_derivative_matches_finite_differences(xp, data, weighted, beta):
    """``third=True`` adds f''' (Halley's step); checked against central differences of f''."""
    Z, y, w = data
    sw = None if not weighted else _to(xp, w)
    Zx, yx = _to(xp, Z), _to(xp, y)
    F, G, H, T3 = xp.temperature_nll_derivs(Zx, yx, sw, beta, third=True)
    assert (F, G, H) == pytest.approx(xp.temperature_nll_derivs(Zx, yx, sw, beta), rel=1e-14)
    # independent f'': weighted mean of the variance of z under scipy's softmax
    def h(b):
        P = np.exp(sp_log_softmax(b * Z, axis=1))
        mu = (P * Z).sum(1)
        return np.average((P * (Z - mu[:, None]) ** 2).sum(1), weights=w if weighted else None)

    eps = 1e-4 * beta
    t_fd = (h(beta + eps) - h(beta - eps)) / (2 * eps)
    assert T3 == pytest.approx(t_fd, rel=1e-5, abs=1e-9)
    assert H == pytest.approx(h(beta), rel=1e-12)


def test_small_helpers_match_numpy_references(xp, data):
    """The array helpers the estimators and metrics call instead of branching."""
    Z, y, _ = data
    Zx = _to(xp, Z)
    rows = np.array([5, 0, 999, 5])
    np.testing.assert_array_equal(_np(xp.take_rows(Zx, rows)), Z[rows])
    np.testing.assert_array_equal(_np(xp.take_columns(Zx, np.array([2, 0]))), Z[:, [2, 0]])
    v = np.linspace(0.5, 1.5, Z.shape[1])
    np.testing.assert_allclose(xp.project_rows(Zx, v), Z @ v, rtol=1e-13, atol=1e-12)
    lo, hi = xp.column_ranges(Zx)
    np.testing.assert_array_equal(lo, Z.min(axis=0))
    np.testing.assert_array_equal(hi, Z.max(axis=0))
    np.testing.assert_allclose(
        _np(xp.logaddexp(Zx, -1.5)), np.log(np.exp(Z) + np.exp(-1.5)), rtol=1e-12
    )
    Z3 = Z.reshape(10, 100, -1)
    np.testing.assert_allclose(
        _np(xp.log_softmax_last(_to(xp, Z3))), sp_log_softmax(Z3, axis=-1), atol=1e-12
    )
    np.testing.assert_allclose(_np(xp.row_sums64(Zx)), Z.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(
        _np(xp.stack_columns([Zx[:, 0], Zx[:, 1]])), Z[:, :2]
    )
    assert xp.any_nan(_to(xp, np.array([0.0, np.nan]))) and not xp.any_nan(Zx)
    view = xp.numpy_view(Zx)
    assert isinstance(view, np.ndarray) and np.shares_memory(view, _np(Zx))
    assert list(xp.take_labels(np.array([1, 0]), np.array(["a", "b"]))) == ["b", "a"]


@pytest.mark.parametrize("where", [None, (1, 3), (40, 0), (40, 3)])
def test_rows_all_equal_against_numpy(xp, where):
    """Whether every row is the same, whichever row and column differ (the first rows
    compared first, then one column, then the whole matrix)."""
    Z = np.tile(np.array([1.5, -2.0, 0.25, 3.0]), (60, 1))
    if where is not None:
        Z[where] += 1e-9
    expected = bool((Z == Z[0]).all())
    assert expected == (where is None)
    assert xp.rows_all_equal(_to(xp, Z)) is expected
    assert xp.rows_all_equal(_to(xp, Z[:1])) is False  # one row: not "every row the same"


def test_numpy_scores_and_labels_fast_paths_equal_scikit_learn_checks(rng):
    """``as_scores`` / ``labels_1d`` skip scikit-learn's checks only where these return
    the array itself (a view for ``column_or_1d``): same values, dtype and memory."""
    from sklearn.utils.validation import check_array, column_or_1d

    for X in (rng.normal(size=50), rng.normal(size=(50, 3)).astype(np.float32),
              rng.normal(size=(50, 4))[:, ::2], np.ones((1, 1), dtype=np.float16)):
        ref = check_array(X, ensure_2d=False, dtype=list(_numpy.FLOAT_DTYPES),
                          ensure_all_finite=False, ensure_min_samples=1)
        out = _numpy.as_scores(X, "X")
        assert out is X and ref is X
    for y in (rng.integers(0, 3, 50), rng.random(50) < 0.5, rng.normal(size=50),
              rng.integers(0, 3, 50).astype(np.uint8)):
        ref = column_or_1d(y, warn=True)
        out = _numpy.labels_1d(y)
        assert out.dtype == ref.dtype and np.shares_memory(out, ref)
        np.testing.assert_array_equal(out, ref)
    # the other inputs still go through scikit-learn's checks (a copy, a conversion, errors)
    strided = rng.integers(0, 3, 100)[::2]
    assert _numpy.labels_1d(strided).flags.c_contiguous
    assert _numpy.as_scores([[0.5, 1.0]], "X").dtype == np.float64
    with pytest.raises(ValueError, match="Input X is empty"):
        _numpy.as_scores(np.zeros((0, 2)), "X")
    with pytest.raises(ValueError, match="dim 3"):
        _numpy.as_scores(np.zeros((2, 2, 2)), "X")
