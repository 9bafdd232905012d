"""The shared logistic evaluator (skcal.ovr._logistic) against direct NumPy formulas."""

import numpy as np
import pytest
from scipy.special import expit

from skcal.ovr._logistic import DenseDesign, log1p_small, logistic_evaluator, softplus


def _ulps(out, ref):
    """``|out - ref|`` in float64 ulps of ``ref`` (a long-double reference)."""
    return np.abs(out - ref) / np.spacing(np.maximum(ref.astype(np.float64), 5e-324))


@pytest.mark.skipif(np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
                    reason="np.longdouble is float64 here: no higher-precision reference")
def test_log1p_small_and_softplus_within_two_ulps_of_long_double():
    # Against np.longdouble, not NumPy's float64 log1p / logaddexp: those are
    # themselves within ~1 ulp, and which way they round depends on the CPU's
    # SIMD loops. log1p_small is within ~1 ulp; softplus adds exp's rounding
    # (d softplus / de <= 1 relative) and the final addition: at most 2 ulps.
    rng = np.random.default_rng(0)
    e = np.concatenate([rng.random(20_000), np.exp(-rng.uniform(0, 745, 20_000)),
                        [0.0, 1.0, 5e-324, 1e-300, 2.0**-53, 2.0**-52, 1e-17, 1e-8]])
    out = log1p_small(e, e + 1.0, np.empty_like(e), np.empty_like(e))
    assert _ulps(out, np.log1p(e.astype(np.longdouble))).max() <= 2.0
    f = np.concatenate([rng.normal(scale=30, size=1000), [-800.0, 800.0, 0.0]])
    fl = f.astype(np.longdouble)
    ref = np.maximum(fl, 0) + np.log1p(np.exp(-np.abs(fl)))
    assert _ulps(softplus(f), ref).max() <= 2.0


@pytest.mark.parametrize("weighted", [False, True])
def test_evaluator_matches_direct_formulas_with_an_implicit_intercept(weighted):
    rng = np.random.default_rng(1)
    n = 5000
    R = rng.normal(size=(2, n))
    t = rng.random(n)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    th = np.array([[0.7, -0.3, 0.4]])
    X = np.column_stack([R.T, np.ones(n)])
    W = np.full(n, 1.0 / n) if w is None else w / w.sum()
    f = X @ th[0]
    p = expit(f)
    ref = ((W * (np.logaddexp(0.0, f) - t * f)).sum(), X.T @ (W * (p - t)),
           (X * (W * p * (1 - p))[:, None]).T @ X)
    for design in (DenseDesign.from_rows(R, intercept=True), DenseDesign(X)):
        assert design.shape == (n, 3)
        F, g, H = logistic_evaluator(design, t, w)(None, th)
        np.testing.assert_allclose(F[0], ref[0], rtol=1e-14)
        np.testing.assert_allclose(g[0], ref[1], rtol=1e-12, atol=1e-16)
        np.testing.assert_allclose(H[0], ref[2], rtol=1e-12)
