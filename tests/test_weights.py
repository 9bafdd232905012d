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
