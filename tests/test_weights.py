"""Sample weights: only their ratios matter where the objective is a weighted mean."""

import numpy as np
import pytest


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [5e-324, 1e-300, 1e-30, 1e35, 1e300])
@pytest.mark.parametrize("cls", ["TemperatureScaler", "VectorScaler", "IsotonicScaler"])
def test_weighted_mean_fits_ignore_the_scale_of_the_weights(cls, scale, dtype, backend):
    """Their objective is a weighted mean: weights c * w fit exactly like w."""
    if backend == "torch":
        pytest.importorskip("torch")
    import skcal
    from skcal.datasets import load_cifar10_resnet20

    d = load_cifar10_resnet20()
    X, y = d.logits_val[:2000].astype(dtype), d.y_val[:2000]
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    if scale == 5e-324:
        w = np.ones(len(y))  # the smallest subnormal, equal weights
    Xb = X
    if backend == "torch":
        import torch

        Xb = torch.from_numpy(X)
    ref = getattr(skcal, cls)().fit(Xb, y, sample_weight=w)
    got = getattr(skcal, cls)().fit(Xb, y, sample_weight=w * scale)
    P_ref, P_got = (np.asarray(m.predict_proba(Xb)) for m in (ref, got))
    np.testing.assert_allclose(P_got, P_ref, rtol=0, atol=1e-9)


@pytest.mark.parametrize("scale", [5e-324, 1e-300, 1e300])
def test_platt_without_smoothing_ignores_the_scale_of_the_weights(scale):
    from skcal import PlattScaler

    rng = np.random.default_rng(0)
    s = 2.0 * rng.standard_normal(3000)
    y = (rng.random(3000) < 1 / (1 + np.exp(-s))).astype(int)
    w = np.ones(3000) if scale == 5e-324 else rng.uniform(0.5, 2.0, 3000)
    ref = PlattScaler(target_smoothing=False).fit(s, y, sample_weight=w)
    got = PlattScaler(target_smoothing=False).fit(s, y, sample_weight=w * scale)
    assert (got.a_, got.b_) == pytest.approx((ref.a_, ref.b_), rel=1e-9)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("scale", [5e-324, 1e-300, 1e300])
def test_metrics_ignore_the_scale_of_the_weights(scale, backend):
    from skcal import metrics

    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 1000)
    P = rng.dirichlet(np.ones(4), 1000)
    w = np.ones(1000) if scale == 5e-324 else rng.uniform(0.5, 2.0, 1000)
    if backend == "torch":
        torch = pytest.importorskip("torch")
        P = torch.from_numpy(P)
    for fn, kw in [
        (metrics.expected_calibration_error, {}),
        (metrics.expected_calibration_error, {"kind": "classwise", "strategy": "quantile"}),
        (metrics.brier_score, {}),
        (metrics.negative_log_likelihood, {}),
    ]:
        ref = fn(y, P, sample_weight=w, **kw)
        assert fn(y, P, sample_weight=w * scale, **kw) == pytest.approx(ref, rel=1e-12)
