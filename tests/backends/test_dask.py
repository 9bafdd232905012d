"""Calibrators on dask arrays and a dask.distributed cluster (started here).

Parity: every calibrator of the registry fitted on a dask array (row blocks
on 2 worker processes, sums tree-reduced) against the NumPy path, with uneven
chunks, a single chunk and one-row chunks; plus an independent SciPy
reference for the temperature, a worker killed mid-fit, lazy outputs and the
blockwise validation errors.
"""

import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from skcal import PlattScaler, TemperatureScaler, VectorScaler  # noqa: E402
from skcal._backend import _dask  # noqa: E402
from skcal.utils.discovery import all_calibrators  # noqa: E402

CALIBRATORS = [cls for _, cls in all_calibrators()]
#: Calibrators whose fit runs on dask arrays; the others must say so clearly.
DASK_FIT = [cls for cls in CALIBRATORS if cls._dask_fit]
RTOL = 1e-9


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 worker processes with 1 thread each.

    No dashboard, no worker profiler and no work stealing: on a loaded
    machine (the tests share 2 cores) their threads and messages cost more
    than the tiny test jobs.
    """
    import dask

    quiet = {
        "distributed.worker.profile.enabled": False,
        "distributed.scheduler.work-stealing": False,
    }
    with dask.config.set(quiet):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit="1GiB",
        )
        c = distributed.Client(cluster)
        yield c
        c.close()
        cluster.close()


@pytest.fixture
def distributed_passes(monkeypatch):
    """Force every pass onto the cluster (no local copy of small arrays)."""
    monkeypatch.setattr(_dask, "LOCAL_MAX_BYTES", 0)
    _dask.clear_cache()
    yield
    _dask.clear_cache()


def _data(n, k, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    Z = 3.0 * (np.eye(k)[y] + rng.normal(size=(n, k)))
    Z[:, 0] += 0.7  # a class bias, for vector scaling
    return Z.astype(dtype), y


def _fitted(est):
    """Numeric fitted attributes (trailing underscore), flattened to float arrays."""
    out = {}
    for name, v in vars(est).items():
        if not name.endswith("_") or name.startswith("_") or name == "n_iter_":
            continue
        if name in ("classes_", "n_features_in_"):
            continue
        if isinstance(v, (float, int, np.floating, np.ndarray)):
            if np.asarray(v).dtype.kind == "f":
                out[name] = np.asarray(v, dtype=np.float64)
        elif isinstance(v, list):  # per-class maps (e.g. isotonic knots)
            vals = []
            for m in v:
                for a in vars(m).values() if hasattr(m, "__dict__") else np.atleast_1d(m):
                    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                        vals.append(a.ravel())
                    elif isinstance(a, (float, np.floating)):
                        vals.append(np.array([a]))
            if vals:
                out[name] = np.concatenate(vals)
    return out


def _assert_same_fit(ref, est):
    a, b = _fitted(ref), _fitted(est)
    # IdentityCalibrator has no parameter: its predictions are compared instead
    assert a.keys() == b.keys() and (a or type(ref).__name__ == "IdentityCalibrator"), (
        a.keys(), b.keys())
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=RTOL, atol=1e-12, err_msg=name)


UNEVEN = (120, 13, 1, 140, 26)
#: Calibrators fitted with every chunking (uneven, a single chunk, one-row
#: chunks, binary float32 under the local-copy rule): a solver with
#: distributed Newton passes and a per-class map (gather rule); IsotonicScaler
#: and VectorScaler all but one-row chunks. The others: uneven chunks with
#: weights (the same code paths).
FULL_MATRIX = ("TemperatureScaler", "PlattScaler", "IsotonicScaler")


def test_dask_fit_supported_or_clear_error(client):
    # every calibrator of the registry: fit on dask arrays, or a clear error;
    # every one predicts lazily on a dask array once fitted on NumPy (the
    # predictions of all of them computed in one job)
    import dask

    Z, y = _data(300, 3)
    Zd = da.from_array(Z, chunks=(100, 3))
    refs, lazy = [], []
    for cls in CALIBRATORS:
        if not cls._dask_fit:
            with pytest.raises(ValueError, match="does not run on dask arrays"):
                cls().fit(Zd, y)
        ref = cls().fit(Z, y)
        P = ref.predict_proba(Zd)
        assert isinstance(P, da.Array) and P.chunks[0] == Zd.chunks[0], cls.__name__
        refs.append(ref)
        lazy.append(P)
    for ref, P in zip(refs, dask.compute(*lazy)):
        np.testing.assert_allclose(P, ref.predict_proba(Z), rtol=1e-12,
                                   err_msg=type(ref).__name__)


def _parity_fits(cls):
    """The NumPy and dask fits of :func:`test_dask_fit_matches_numpy` for ``cls``.

    Uneven chunks with weights (chunked differently: rechunked) for every
    calibrator; a single chunk and one-row chunks for FULL_MATRIX. Returns
    ``{case: (numpy fit, dask fit)}`` and the dask predictions (computed in
    one job) with the NumPy ones.
    """
    import dask

    fits = {}
    Z, y = _data(300, 4)
    w = np.random.default_rng(2).uniform(0.2, 3.0, 300)
    Zd = da.from_array(Z, chunks=(UNEVEN, 4))
    est = cls().fit(Zd, da.from_array(y, chunks=(UNEVEN,)),
                    sample_weight=da.from_array(w, chunks=100))
    ref = cls().fit(Z, y, sample_weight=w)
    fits["uneven, weighted"] = (ref, est)
    P = est.predict_proba(Zd)
    lazy = (isinstance(P, da.Array) and P.chunks[0] == Zd.chunks[0])
    P, labels = dask.compute(P, est.predict(Zd))  # one job
    preds = (lazy, P, labels, ref.predict_proba(Z), ref.predict(Z))
    if cls.__name__ in FULL_MATRIX + ("VectorScaler",):
        # a single chunk, unweighted
        fits["single chunk"] = (
            cls().fit(Z, y), cls().fit(da.from_array(Z, chunks=(300, 4)), y)
        )
    if cls.__name__ in FULL_MATRIX and cls.__name__ != "IsotonicScaler":
        # one-row chunks, weighted (12 noisy rows: few Newton steps)
        rng = np.random.default_rng(2)
        y = rng.integers(0, 3, 12)
        Z = np.eye(3)[y] + 1.5 * rng.normal(size=(12, 3))
        w = w[:12]
        fits["one-row chunks, weighted"] = (
            cls().fit(Z, y, sample_weight=w),
            cls().fit(da.from_array(Z, chunks=(1, 3)), y,
                      sample_weight=da.from_array(w, chunks=5)),
        )
    return fits, preds


@pytest.fixture(scope="module")
def parity_fits(client):
    """:func:`_parity_fits` of every calibrator of DASK_FIT, run concurrently.

    One client thread per calibrator, every pass on the cluster
    (``LOCAL_MAX_BYTES = 0``): the cluster serves their small jobs side by
    side instead of one round trip after another. A calibrator's exception is
    kept and raised by its test.
    """
    from concurrent.futures import ThreadPoolExecutor

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_dask, "LOCAL_MAX_BYTES", 0)
        _dask.clear_cache()
        with ThreadPoolExecutor(len(DASK_FIT)) as ex:
            futures = {cls: ex.submit(_parity_fits, cls) for cls in DASK_FIT}
        _dask.clear_cache()
    return {
        cls: f.exception() if f.exception() is not None else f.result()
        for cls, f in futures.items()
    }


@pytest.mark.parametrize("cls", DASK_FIT, ids=lambda c: c.__name__)
def test_dask_fit_matches_numpy(parity_fits, cls):
    # every calibrator that fits on dask: parameters to relative 1e-9, lazy
    # predictions with the row chunks of the input, same probabilities/labels
    got = parity_fits[cls]
    if isinstance(got, BaseException):
        raise got
    fits, (lazy, P, labels, P_ref, labels_ref) = got
    for case, (ref, est) in fits.items():
        try:
            _assert_same_fit(ref, est)
        except AssertionError as e:
            raise AssertionError(f"{case}: {e}") from None
    assert lazy
    np.testing.assert_allclose(P, P_ref, rtol=RTOL, atol=1e-13)
    np.testing.assert_array_equal(labels, labels_ref)


@pytest.mark.parametrize(
    "cls", [c for c in DASK_FIT if c.__name__ in FULL_MATRIX + ("VectorScaler",)],
    ids=lambda c: c.__name__,
)
def test_dask_fit_binary_float32(client, cls):
    # 1-D binary float32 scores, default (local copy of a small array) rule
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 1000)
    s = (4.0 * (2 * y - 1) + 3 * rng.normal(size=1000)).astype(np.float32)
    ref = cls().fit(s, y)
    est = cls().fit(da.from_array(s, chunks=300), da.from_array(y, chunks=300))
    _assert_same_fit(ref, est)
    P = est.predict_proba(da.from_array(s, chunks=300))
    assert P.dtype == np.float32
    np.testing.assert_allclose(P.compute(), ref.predict_proba(s), rtol=1e-6)


def test_temperature_dask_against_scipy(client, distributed_passes):
    # warm start on the cluster (20,000 rows, strided subsamples) and an
    # independent high-precision SciPy solve of the NLL in beta = 1/T
    Z, y = _data(20000, 5, seed=4)
    est = TemperatureScaler().fit(da.from_array(Z, chunks=7000), y)

    def f(beta):
        A = beta * Z
        return np.mean(logsumexp(A, axis=1) - A[np.arange(len(y)), y])

    res = minimize_scalar(f, bounds=(0.01, 10), method="bounded",
                          options={"xatol": 1e-13})
    assert est.temperature_ == pytest.approx(1.0 / res.x, rel=1e-7)


def test_temperature_dask_local_warm_start(client, monkeypatch):
    # warm start from one local subsample (LOCAL_MAX_BYTES between the levels)
    Z, y = _data(20000, 5, seed=4)
    ref = TemperatureScaler().fit(Z, y)
    monkeypatch.setattr(_dask, "LOCAL_MAX_BYTES", 200_000)
    _dask.clear_cache()
    est = TemperatureScaler().fit(da.from_array(Z, chunks=3000), y)
    assert est.temperature_ == pytest.approx(ref.temperature_, rel=RTOL)


def test_vector_dask_trust_region_many_classes(client, distributed_passes, monkeypatch):
    # above FULL_HESSIAN_MAX_CLASSES: gradient and Hessian-vector passes
    from skcal.scaling import _vector

    k = 3
    monkeypatch.setattr(_vector, "FULL_HESSIAN_MAX_CLASSES", k - 1)
    Z, y = _data(800, k, seed=5)
    ref = VectorScaler().fit(Z, y)
    est = VectorScaler().fit(da.from_array(Z, chunks=(300, k)), y)
    _assert_same_fit(ref, est)


def test_dask_probabilities_and_outputs_lazy(client):
    Z, y = _data(900, 3, seed=6)
    P = np.exp(Z - logsumexp(Z, axis=1, keepdims=True))
    ref = VectorScaler(input_type="probabilities").fit(P, y)
    Pd = da.from_array(P, chunks=(250, 3))
    est = VectorScaler(input_type="probabilities").fit(Pd, y)
    _assert_same_fit(ref, est)
    for method in ("predict_log_proba", "transform"):
        out = getattr(est, method)(Pd)
        assert isinstance(out, da.Array) and out.chunks[0] == Pd.chunks[0]
        np.testing.assert_allclose(out.compute(), getattr(ref, method)(P), rtol=1e-12)
    assert est.score(Pd, y) == pytest.approx(ref.score(P, y), rel=1e-12)
    # fitted parameters are plain NumPy: a dask-fitted scaler predicts NumPy
    np.testing.assert_allclose(est.predict_proba(P), ref.predict_proba(P), rtol=1e-12)


def test_dask_bad_values_raise_at_compute(client):
    Z, y = _data(600, 3)
    Z[450, 1] = np.nan
    Zd = da.from_array(Z, chunks=(200, 3))
    with pytest.raises(ValueError, match="NaN"):
        TemperatureScaler().fit(Zd, y)
    P = np.full((600, 3), 0.4)
    with pytest.raises(ValueError, match="sum"):
        VectorScaler(input_type="probabilities").fit(da.from_array(P, chunks=200), y)
    with pytest.raises(ValueError, match="negative"):
        TemperatureScaler().fit(da.from_array(_data(600, 3)[0], chunks=200), y,
                                sample_weight=da.from_array(-np.ones(600), chunks=200))
    with pytest.raises(ValueError, match="different numbers of samples"):
        TemperatureScaler().fit(da.from_array(_data(600, 3)[0], chunks=200), y[:-1])
    with pytest.raises(ValueError, match="torch"):
        TemperatureScaler(backend="torch").fit(da.from_array(_data(600, 3)[0]), y)


def test_gather_limit_is_a_clear_error(client, monkeypatch):
    Z, y = _data(300, 3)
    monkeypatch.setattr(_dask, "GATHER_MAX_ROWS", 100)
    with pytest.raises(ValueError, match="GATHER_MAX_ROWS"):
        PlattScaler().fit(da.from_array(Z, chunks=100), y)


# `import skcal` imports neither dask nor distributed: tested in
# tests/metrics/test_calibration_error.py (one interpreter for all optional
# dependencies).


# ------------------------------------------------------------------ metrics
def _metric_cases():
    from skcal import metrics as M

    def ce(kind, strategy):
        return dict(kind=kind, strategy=strategy, norm="l2", n_bins=7)

    return [
        ("brier-probabilities", M.brier_score, {}, "probabilities"),
        ("nll-logits", M.negative_log_likelihood, {}, "logits"),
        ("ce-top-label-uniform", M.calibration_error, ce("top-label", "uniform"),
         "probabilities"),
        ("ce-classwise-uniform", M.calibration_error, ce("classwise", "uniform"),
         "logits"),
        ("ce-top-label-quantile", M.calibration_error, ce("top-label", "quantile"),
         "logits"),
        ("ce-classwise-quantile", M.calibration_error, ce("classwise", "quantile"),
         "probabilities"),
    ]


@pytest.mark.parametrize("case", _metric_cases(), ids=lambda c: c[0])
def test_dask_metrics_match_numpy(client, case):
    # uneven chunks (with a one-row chunk) for every metric, a single chunk
    # for half of them; one-row chunks throughout: the test below
    name, metric, kw, input_type = case
    Z, y = _data(400, 3, seed=8)
    X = Z if input_type == "logits" else np.exp(Z - logsumexp(Z, axis=1, keepdims=True))
    w = np.random.default_rng(9).uniform(0, 2, 400)
    ref = metric(y, X, sample_weight=w, input_type=input_type, **kw)
    single = "classwise" in name or "nll" in name
    chunkings = [(150, 1, 200, 49)] + ([400] if single else [])
    for chunks in chunkings:
        got = metric(
            da.from_array(y, chunks=(chunks,)), da.from_array(X, chunks=(chunks, 3)),
            sample_weight=da.from_array(w, chunks=(chunks,)), input_type=input_type, **kw,
        )
        assert got == pytest.approx(ref, rel=1e-12)


def test_dask_metrics_one_row_chunks_and_curve(client):
    from skcal.metrics import expected_calibration_error, reliability_curve

    rng = np.random.default_rng(10)
    y = rng.integers(0, 2, 10)
    p = rng.uniform(size=10)
    pd = da.from_array(p, chunks=1)
    assert expected_calibration_error(y, pd, n_bins=4) == pytest.approx(
        expected_calibration_error(y, p, n_bins=4), rel=1e-12
    )
    ref = reliability_curve(y, p, kind="binary", n_bins=4)
    got = reliability_curve(y, pd, kind="binary", n_bins=4)
    for key in ref:
        np.testing.assert_allclose(got[key], ref[key], rtol=1e-12)
    # a binary ECE by hand: |mean(y) - mean(p)| per equal-width bin
    bins = np.minimum((p * 4).astype(int), 3)
    hand = sum(
        abs(y[bins == m].mean() - p[bins == m].mean()) * (bins == m).mean()
        for m in range(4) if (bins == m).any()
    )
    assert expected_calibration_error(y, pd, kind="binary", n_bins=4) == pytest.approx(
        hand, rel=1e-12
    )
    with pytest.raises(ValueError, match="bootstrap"):
        reliability_curve(y, pd, n_bootstrap=10)
    bad = p.copy()
    bad[7] = 1.5
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        expected_calibration_error(y, da.from_array(bad, chunks=3))


@pytest.mark.parametrize("est", [TemperatureScaler(), VectorScaler(), PlattScaler()],
                         ids=lambda e: type(e).__name__)
def test_grouped_calibrator_on_dask(client, distributed_passes, est):
    # the global fit and each group's fit on its lazily selected rows (uneven
    # blocks, one of one row): parameters equal the NumPy GroupedCalibrator's,
    # and the predictions are lazy with the same values
    from skcal import GroupedCalibrator

    rng = np.random.default_rng(12)
    Z, y = _data(2400, 3, seed=11)
    g = rng.choice(["a", "b", "c"], 2400)
    g[:20] = "z"  # too small: falls back
    Z *= np.where(g == "b", 3.0, 1.0)[:, None]  # groups need different maps
    w = rng.uniform(0.2, 3.0, 2400)
    ref = GroupedCalibrator(est, min_group_size=50).fit(Z, y, w, groups=g)
    chunks = (700, 13, 1, 900, 786)
    got = GroupedCalibrator(est, min_group_size=50).fit(
        da.from_array(Z, chunks=(chunks, 3)), da.from_array(y, chunks=chunks),
        sample_weight=w, groups=da.from_array(g, chunks=chunks),
    )
    assert got.fallback_groups_.tolist() == ["z"]
    assert sorted(got.calibrators_) == ["a", "b", "c"]
    _assert_same_fit(ref.global_calibrator_, got.global_calibrator_)
    for k in "abc":
        _assert_same_fit(ref.calibrators_[k], got.calibrators_[k])
    P = got.predict_proba(da.from_array(Z, chunks=(250, 3)), groups=g)
    assert isinstance(P, da.Array)
    np.testing.assert_allclose(P.compute(), ref.predict_proba(Z, groups=g), rtol=1e-12)
    labels = got.predict(da.from_array(Z, chunks=(250, 3)), groups=g)
    assert isinstance(labels, da.Array)
    np.testing.assert_array_equal(labels.compute(), ref.predict(Z, groups=g))


def test_grouped_dask_warm_start_subsamples(monkeypatch):
    # the temperature's warm starts (their row thresholds lowered here) on
    # each group's lazily selected rows (interleaved across uneven blocks),
    # subsamples local, whole sets not: every fit equals its NumPy fit
    from skcal import GroupedCalibrator
    from skcal.scaling import _temperature

    monkeypatch.setattr(_temperature, "WARM_START_MIN_ROWS", 200)
    monkeypatch.setattr(_temperature, "WARM_START_ROWS", 250)
    monkeypatch.setattr(_dask, "LOCAL_MAX_BYTES", 30_000)
    _dask.clear_cache()
    rng = np.random.default_rng(15)
    n = 1900
    Z, y = _data(n, 3, seed=16)
    g = rng.choice([10, 20], n, p=[0.55, 0.45])
    Z *= np.where(g == 20, 2.0, 1.0)[:, None]
    w = rng.uniform(0.5, 2.0, n)
    ref = GroupedCalibrator(TemperatureScaler(), min_group_size=1).fit(Z, y, w, groups=g)
    chunks = (600, 1, 500, n - 1101)
    got = GroupedCalibrator(TemperatureScaler(), min_group_size=1).fit(
        da.from_array(Z, chunks=(chunks, 3)), da.from_array(y, chunks=chunks),
        da.from_array(w, chunks=chunks), groups=da.from_array(g, chunks=chunks),
    )
    _assert_same_fit(ref.global_calibrator_, got.global_calibrator_)
    for key in (10, 20):
        _assert_same_fit(ref.calibrators_[key], got.calibrators_[key])


def test_dask_fit_survives_killed_worker(client, distributed_passes, tmp_path):
    # a worker process is killed (SIGKILL) while it runs a block of the fit's
    # first pass over the logits: its tasks are retried on the other worker
    # (the nanny restarts the dead one) and the fit gives the same answer
    Z, y = _data(1000, 4, seed=7)
    ref = TemperatureScaler().fit(Z, y)
    marker_dir = str(tmp_path)

    def slow_block(b):
        # (defined here: pickled by value, so the workers need not import
        # this test module) until the kill: leaves its worker's pid behind,
        # then takes 0.2 s; afterwards (the retried and later passes) no delay
        if not os.path.exists(os.path.join(marker_dir, "killed")):
            open(os.path.join(marker_dir, str(os.getpid())), "w").close()
            time.sleep(0.2)
        return b

    Zd = da.from_array(Z, chunks=(250, 4)).map_blocks(
        slow_block, dtype=Z.dtype, meta=np.empty((0, 0), Z.dtype)
    )
    client_pid = os.getpid()
    killed, done = [], threading.Event()

    def kill():
        while not done.is_set():
            pids = [
                p for p in os.listdir(tmp_path) if p.isdigit() and int(p) != client_pid
            ]
            if pids:  # a worker is inside a slow block now
                os.kill(int(pids[0]), signal.SIGKILL)
                killed.append(int(pids[0]))
                open(os.path.join(marker_dir, "killed"), "w").close()
                return
            time.sleep(0.01)

    t = threading.Thread(target=kill)
    t.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = TemperatureScaler().fit(Zd, y)
    finally:
        done.set()
        t.join()
    assert killed  # the kill happened during the fit
    _assert_same_fit(ref, est)
