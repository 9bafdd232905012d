"""torch tensors in skcal.metrics: equal to the NumPy path (torch kernels and CPU views)."""

import math

import numpy as np
import pytest
from conftest import load_shared

torch = pytest.importorskip("torch")

from skcal.metrics import (  # noqa: E402
    brier_score,
    calibration_error,
    negative_log_likelihood,
    reliability_curve,
)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(autouse=True, params=["numpy-view", "torch-kernels"])
def cpu_route(request, monkeypatch):
    # CPU tensors go through NumPy views by default; the torch kernels (which
    # serve accelerators) are checked on the CPU too, with no view offered.
    if request.param == "torch-kernels":
        from skcal._backend import _torch

        monkeypatch.setattr(_torch, "numpy_view", lambda a: None)
    return request.param


@pytest.fixture
def data(rng):
    z = rng.normal(scale=2.5, size=(500, 6))
    e = np.exp(z - z.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    y = rng.integers(0, 6, size=500)
    w = rng.uniform(0.0, 2.0, size=500)
    return y, p, z, w


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["top-label", "classwise"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("weighted", [False, True])
def test_calibration_error_torch_equals_numpy(data, device, kind, strategy, norm,
                                              weighted):
    y, p, z, w = data
    w = w if weighted else None
    kw = dict(kind=kind, strategy=strategy, norm=norm, n_bins=10)
    ref = calibration_error(y, p, sample_weight=w, **kw)
    tw = None if w is None else torch.tensor(w, device=device)
    got = calibration_error(torch.tensor(y, device=device),
                            torch.tensor(p, device=device), sample_weight=tw, **kw)
    assert isinstance(got, float)
    assert got == pytest.approx(ref, abs=1e-6)
    got_logits = calibration_error(y, torch.tensor(z, device=device),
                                   input_type="logits", sample_weight=w, **kw)
    assert got_logits == pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_scores_torch_equal_numpy(data, device):
    y, p, z, w = data
    tp, tz = torch.tensor(p, device=device), torch.tensor(z, device=device)
    for f in (brier_score, negative_log_likelihood):
        assert f(y, tp) == pytest.approx(f(y, p), abs=1e-6)
        assert f(y, tp, sample_weight=w) == pytest.approx(f(y, p, sample_weight=w),
                                                          abs=1e-6)
        assert f(y, tz, input_type="logits") == pytest.approx(
            f(y, z, input_type="logits"), abs=1e-6
        )
    # binary 1-D tensors
    yb = (y > 2).astype(int)
    s = z[:, 0] - z[:, 1]
    ts = torch.tensor(s, device=device)
    for f in (brier_score, negative_log_likelihood):
        assert f(yb, ts, input_type="logits") == pytest.approx(
            f(yb, s, input_type="logits"), abs=1e-6
        )
    zero = torch.tensor([[0.5, 0.5], [1.0, 0.0]], device=device)
    assert negative_log_likelihood([0, 1], zero) == math.inf


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_reliability_curve_torch_equals_numpy(data, device, strategy):
    y, p, _, w = data
    kw = dict(kind="class", class_index=3, strategy=strategy, n_bins=8,
              n_bootstrap=20, random_state=0, sample_weight=w)
    ref = reliability_curve(y, p, **kw)
    got = reliability_curve(y, torch.tensor(p, device=device), **kw)
    for key in ref:
        assert isinstance(got[key], np.ndarray)
        np.testing.assert_allclose(got[key], ref[key], atol=1e-6, err_msg=key)


def test_float32_tensor_edges_match_numpy():
    edges = torch.arange(1, 15, dtype=torch.float64) / 15
    curve = reliability_curve(torch.ones(14, dtype=torch.int64),
                              edges.to(torch.float32), kind="binary", n_bins=15,
                              labels=[0, 1])
    np.testing.assert_array_equal(curve.bin_index, np.arange(14))


def test_tensor_validation_errors():
    with pytest.raises(ValueError, match="NaN"):
        calibration_error([0, 1], torch.tensor([[0.5, float("nan")], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="sum to 1"):
        calibration_error([0, 1], torch.tensor([[0.5, 0.6], [0.5, 0.5]]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibration_error([0, 1], torch.tensor([[1.5, -0.5], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="samples"):
        calibration_error([0, 1, 1], torch.tensor([[0.5, 0.5], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="empty"):
        calibration_error([], torch.empty((0, 2)))


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["cifar10_densenet40_guo", "pathmnist_resnet50"])
def test_real_logits_torch_equals_numpy(name):
    d = load_shared(name)
    z, y = d["logits_test"], d["y_test"]
    tz = torch.from_numpy(z)
    for kind in ("top-label", "classwise"):
        for strategy in ("uniform", "quantile"):
            ref = calibration_error(y, z, kind=kind, strategy=strategy,
                                    input_type="logits")
            got = calibration_error(torch.from_numpy(y), tz, kind=kind,
                                    strategy=strategy, input_type="logits")
            assert got == pytest.approx(ref, abs=1e-6)
    for f in (brier_score, negative_log_likelihood):
        assert f(y, tz, input_type="logits") == pytest.approx(
            f(y, z, input_type="logits"), abs=1e-6
        )
