"""Row-chunked metrics: same answers as a plain float64 computation, errors found
in late chunks, and bounded memory (issue 4)."""

import gc
import re
import tracemalloc

import numpy as np
import pytest

from skcal import metrics as M

N, K = 5000, 300  # float32: 6 MB, several 1 MiB float64 chunks


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    Z = (3.0 * rng.standard_normal((N, K))).astype(np.float32)
    Z[np.arange(N), rng.integers(0, K, N)] += 6.0  # confident, often right
    y = rng.integers(0, K, N)
    y[: N // 2] = Z[: N // 2].argmax(1)
    E = np.exp(Z.astype(np.float64) - Z.max(1, keepdims=True))
    P = (E / E.sum(1, keepdims=True)).astype(np.float32)
    w = rng.random(N)
    return y, Z, P, w


def _reference_proba(X, input_type):
    """Plain float64 probabilities (and log-probabilities) of the whole matrix."""
    X = np.asarray(X, dtype=np.float64)
    if input_type == "probabilities":
        return X, np.log(X)
    A = X - X.max(1, keepdims=True)
    LP = A - np.log(np.exp(A).sum(1, keepdims=True))
    return np.exp(LP), LP


def _reference_bins(s, o, w, n_bins, strategy):
    """(weight, score sum, target sum) per bin, by the documented bin rules."""
    if strategy == "uniform":
        # (m/M, (m+1)/M], 0 in the first bin; within 2**-21 of an edge is on it
        t = s * n_bins
        r = np.rint(t)
        t = np.where((np.abs(t - r) <= 2.0**-21 * r) & (r >= 1), r, t)
        ids = np.clip(np.ceil(t).astype(int) - 1, 0, n_bins - 1)
        nb = n_bins
    else:
        edges = np.unique(np.quantile(s, np.linspace(0, 1, n_bins + 1),
                                      method="inverted_cdf"))
        ids = np.searchsorted(edges[1:-1], s, side="left")
        nb = edges.shape[0] - 1
    tot = np.bincount(ids, w, nb)
    return tot, np.bincount(ids, w * s, nb), np.bincount(ids, w * o, nb)


def _reference_error(s, o, w, n_bins, strategy, norm):
    tot, ss, os_ = _reference_bins(s, o, w, n_bins, strategy)
    keep = tot > 0
    gap = np.abs(os_[keep] - ss[keep]) / tot[keep]
    frac = tot[keep] / tot[keep].sum()
    return {"l1": np.sum(frac * gap), "l2": np.sqrt(np.sum(frac * gap**2)),
            "max": np.max(gap)}[norm]


def _as(backend, *arrays):
    if backend == "numpy":
        return arrays
    torch = pytest.importorskip("torch")
    return tuple(None if a is None else torch.from_numpy(np.ascontiguousarray(a))
                 for a in arrays)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("input_type", ["logits", "probabilities"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_error_many_chunks_matches_float64_reference(
    data, backend, input_type, strategy
):
    y, Z, P, w = data
    X = Z if input_type == "logits" else P
    Pr, LPr = _reference_proba(X, input_type)
    # unit weights for equal-mass bins (np.quantile is the unit-weight rule)
    wr = w if strategy == "uniform" else np.ones(N)
    yb, Xb, wb = _as(backend, y, X, w if strategy == "uniform" else None)
    conf = Pr.max(1)
    correct = (LPr.argmax(1) == y).astype(float)
    for norm in ("l1", "l2", "max"):
        got = M.calibration_error(yb, Xb, strategy=strategy, norm=norm,
                                  sample_weight=wb, input_type=input_type)
        ref = _reference_error(conf, correct, wr, 15, strategy, norm)
        assert got == pytest.approx(ref, rel=1e-10, abs=1e-13)
    onehot = (y[:, None] == np.arange(K)).astype(float)
    # every class (one sort per class for equal-mass bins): 50 classes, still
    # 2 MB of float64 (two chunks), keep the test fast
    k50 = 50
    X50 = X[:, :k50] if input_type == "logits" else (
        P[:, :k50] / P[:, :k50].sum(1, keepdims=True))
    y50 = y % k50
    P50, _ = _reference_proba(X50, input_type)
    ref_cw = np.mean([
        _reference_error(P50[:, k], (y50 == k).astype(float), wr, 10, strategy, "l1")
        for k in range(k50)
    ])
    y50b, X50b = _as(backend, y50, X50)
    got_cw = M.calibration_error(y50b, X50b, kind="classwise", n_bins=10,
                                 strategy=strategy, sample_weight=wb,
                                 input_type=input_type)
    assert got_cw == pytest.approx(ref_cw, rel=1e-10, abs=1e-13)
    got_k = M.calibration_error(yb, Xb, kind="classwise", class_index=7,
                                strategy=strategy, sample_weight=wb,
                                input_type=input_type)
    assert got_k == pytest.approx(
        _reference_error(Pr[:, 7], onehot[:, 7], wr, 15, strategy, "l1"),
        rel=1e-10, abs=1e-13)
    curve = M.reliability_curve(yb, Xb, strategy=strategy, sample_weight=wb,
                                input_type=input_type)
    tot, ss, os_ = _reference_bins(conf, correct, wr, 15, strategy)
    keep = tot > 0
    np.testing.assert_allclose(curve.prob_pred, ss[keep] / tot[keep], rtol=1e-10)
    np.testing.assert_allclose(curve.prob_true, os_[keep] / tot[keep],
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(curve.bin_weight, tot[keep] / tot.sum(), rtol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("input_type", ["logits", "probabilities"])
def test_scores_many_chunks_match_float64_reference(data, backend, input_type):
    y, Z, P, w = data
    X = Z if input_type == "logits" else P
    Pr, LPr = _reference_proba(X, input_type)
    onehot = (y[:, None] == np.arange(K)).astype(float)
    yb, Xb, wb = _as(backend, y, X, w)
    brier = np.average(((Pr - onehot) ** 2).sum(1), weights=w)
    nll = -np.average(LPr[np.arange(N), y], weights=w)
    assert M.brier_score(yb, Xb, sample_weight=wb, input_type=input_type) == (
        pytest.approx(brier, rel=1e-12))
    assert M.negative_log_likelihood(yb, Xb, sample_weight=wb,
                                     input_type=input_type) == (
        pytest.approx(nll, rel=1e-12))
    assert M.negative_log_likelihood(yb, Xb, input_type=input_type) == (
        pytest.approx(-LPr[np.arange(N), y].mean(), rel=1e-12))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_binary_1d_many_chunks_match_float64_reference(backend):
    rng = np.random.default_rng(3)
    n = 300_000  # 1-D float64: several 2-column chunks
    s = rng.standard_normal(n) * 2
    y = (rng.random(n) < 1 / (1 + np.exp(-s))).astype(int)
    p1 = 1 / (1 + np.exp(-s))
    yb, sb = _as(backend, y, s)
    assert M.negative_log_likelihood(yb, sb, input_type="logits") == pytest.approx(
        np.mean(np.logaddexp(0, np.where(y == 1, -s, s))), rel=1e-12)
    assert M.brier_score(yb, sb, input_type="logits") == pytest.approx(
        np.mean((p1 - y) ** 2), rel=1e-10)
    ref = _reference_error(p1, y.astype(float), np.ones(n), 15, "uniform", "l1")
    assert M.calibration_error(yb, sb, kind="binary", input_type="logits") == (
        pytest.approx(ref, rel=1e-9, abs=1e-13))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_bad_values_in_a_late_chunk_are_reported(data, backend):
    y, Z, P, _ = data
    late = N - 7
    cases = []
    Zn = Z.copy(); Zn[late, 5] = np.nan
    cases.append((Zn, "logits", "contains NaN"))
    Zi = Z.copy(); Zi[late, 5] = np.inf
    cases.append((Zi, "logits", "contains infinity"))
    Zm = Z.copy(); Zm[late, 5] = -np.inf
    cases.append((Zm, "logits", r"-inf logits"))
    Pn = P.copy(); Pn[late, 5] = np.nan
    cases.append((Pn, "probabilities", "contains NaN"))
    for X, input_type, match in cases:
        yb, Xb = _as(backend, y, X)
        for metric in (M.expected_calibration_error, M.brier_score,
                       M.negative_log_likelihood):
            with pytest.raises(ValueError, match=match):
                metric(yb, Xb, input_type=input_type)

    P64 = P.astype(np.float64)
    P64 /= P64.sum(1, keepdims=True)
    Ps = P64.copy(); Ps[late] *= 0.9
    yb, Xb = _as(backend, y, Ps)
    with pytest.raises(ValueError) as exc:
        M.brier_score(yb, Xb)
    msg = str(exc.value)
    # the float64 row sum (its last digit depends on the summation order)
    assert re.search(rf"row {late} sums to 0\.(9|8999999\d*)\. ", msg), msg
    assert "np." not in msg
    Pneg = P64.copy(); Pneg[late, 3] = -0.0065; Pneg[late, 4] += 0.0065
    yb, Xb = _as(backend, y, Pneg)
    with pytest.raises(ValueError) as exc:
        M.expected_calibration_error(yb, Xb)
    msg = str(exc.value)
    assert "found values such as -0.0065" in msg and "np." not in msg


def _traced_peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_numpy_metrics_peak_memory_is_a_small_fraction_of_the_input():
    rng = np.random.default_rng(0)
    n, k = 200_000, 50
    Z = rng.standard_normal((n, k), dtype=np.float32)  # 40 MB
    y = rng.integers(0, k, n)
    E = np.exp(Z - Z.max(1, keepdims=True))
    P = E / E.sum(1, keepdims=True)
    del E
    calls = [
        lambda: M.expected_calibration_error(y, Z, input_type="logits"),
        lambda: M.expected_calibration_error(y, Z, input_type="logits",
                                             strategy="quantile"),
        lambda: M.calibration_error(y, P, kind="classwise"),
        lambda: M.negative_log_likelihood(y, Z, input_type="logits"),
        lambda: M.brier_score(y, P),
        lambda: M.reliability_curve(y, P),
    ]
    for call in calls:
        assert _traced_peak(call) < 0.3 * Z.nbytes
