"""Tests of VectorScaler against an independently written reference solve."""

import warnings

import numpy as np
import pytest
from conftest import load_shared
from _helpers import inverse_temperature_reference
from numpy.testing import assert_allclose
from scipy.optimize import approx_fprime, minimize
from scipy.special import logsumexp, softmax
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from skcal.scaling import _vector
from skcal._backend import _numpy as xp_np
from skcal import VectorScaler


# --------------------------------------------------------------- reference
def reference_objective(theta, Z, y, sw, alpha, beta=1.0):
    """Penalised mean NLL and its gradient, written from the formula (float64):
    the penalty ``alpha/2 (||w / beta - 1||^2 + ||b||^2)`` acts after the
    temperature ``1 / beta``."""
    Z = np.asarray(Z, dtype=np.float64)
    n, k = Z.shape
    w, b = theta[:k], theta[k:]
    sw = np.ones(n) if sw is None else np.asarray(sw, dtype=np.float64)
    A = Z * w[None, :] + b[None, :]
    Y = np.eye(k)[y]
    nll = (sw * (logsumexp(A, axis=1) - np.sum(A * Y, axis=1))).sum() / sw.sum()
    R = (softmax(A, axis=1) - Y) * sw[:, None] / sw.sum()
    f = nll + 0.5 * alpha * (np.sum((w / beta - 1) ** 2) + np.sum(b**2))
    g_w = (R * Z).sum(axis=0) + alpha * (w / beta - 1) / beta
    g = np.concatenate([g_w, R.sum(axis=0) + alpha * b])
    return f, g


def reference_fit(Z, y, sw=None, alpha=0.0):
    """High-precision BFGS solve of the same objective; b centred if alpha == 0."""
    k = Z.shape[1]
    beta = inverse_temperature_reference(Z, y, sw) if alpha > 0 else 1.0
    theta0 = np.concatenate([np.full(k, beta), np.zeros(k)])
    res = minimize(
        reference_objective,
        theta0,
        args=(Z, y, sw, alpha, beta),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-11, "maxiter": 10000},
    )
    w, b = res.x[:k], res.x[k:]
    if alpha == 0:
        b = b - b.mean()
    return w, b, res.fun


def make_vector_data(rng, n, k=4):
    """Data drawn from a vector-scaling model with known (w, b)."""
    w_true = np.linspace(0.5, 1.5, k)
    b_true = np.linspace(-1.0, 1.0, k)
    b_true -= b_true.mean()
    Z = 2.0 * rng.normal(size=(n, k))
    P = softmax(Z * w_true + b_true, axis=1)
    y = (P.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    return Z, y, w_true, b_true


@pytest.fixture(scope="module")
def synth():
    return make_vector_data(np.random.default_rng(42), 20000)


# ----------------------------------------------------------------- kernels
def test_vector_kernels_match_finite_differences_of_reference():
    rng = np.random.default_rng(1)
    n, k = 300, 5
    Z = (3 * rng.normal(size=(n, k))).astype(np.float32)
    y = rng.integers(0, k, n)
    sw = rng.uniform(0.1, 2.0, n)
    w, b = rng.uniform(0.5, 2.0, k), rng.normal(size=k)
    theta = np.concatenate([w, b])
    f_ref, g_ref = reference_objective(theta, Z, y, sw, 0.0)
    f, gw, gb = xp_np.vector_nll_grad(Z, y, sw, w, b)
    assert_allclose(f, f_ref, rtol=1e-12)
    g_fd = approx_fprime(
        theta, lambda t: reference_objective(t, Z, y, sw, 0.0)[0], 1e-7
    )
    assert_allclose(np.concatenate([gw, gb]), g_fd, atol=1e-6)
    # Hessian: central differences of the reference gradient.
    eps = 1e-6
    H_fd = np.column_stack(
        [
            (
                reference_objective(theta + eps * e, Z, y, sw, 0.0)[1]
                - reference_objective(theta - eps * e, Z, y, sw, 0.0)[1]
            )
            / (2 * eps)
            for e in np.eye(2 * k)
        ]
    )
    # float64 logits: the Hessian in float64
    _, _, _, H = xp_np.vector_nll_hess(Z.astype(np.float64), y, sw, w, b)
    assert_allclose(H, H_fd, atol=1e-7)
    # float32 logits: its Q^T Q term is taken in float32 per chunk (it only
    # shapes Newton's direction), so it matches to single precision
    _, _, _, H32 = xp_np.vector_nll_hess(Z, y, sw, w, b)
    assert_allclose(H32, H_fd, rtol=0, atol=2e-6 * np.abs(H_fd).max())
    assert not np.array_equal(H32, H)
    v = rng.normal(size=2 * k)
    hw, hb = xp_np.vector_nll_hessp(Z, y, sw, w, b, v[:k], v[k:])
    assert_allclose(np.concatenate([hw, hb]), H_fd @ v, atol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("weighted", [False, True])
def test_vector_block_kernel_matches_finite_differences(backend, weighted):
    # The many-class solver's pass: objective, gradient and the per-class
    # 2 x 2 Hessian blocks, against the reference objective's finite differences.
    rng = np.random.default_rng(5)
    n, k = 3000, 7
    Z = (3 * rng.normal(size=(n, k))).astype(np.float32)
    y = rng.integers(0, k, n)
    sw = rng.uniform(0.1, 2.0, n) if weighted else None
    w, b = rng.uniform(0.5, 2.0, k), rng.normal(size=k)
    theta = np.concatenate([w, b])
    f_ref, g_ref = reference_objective(theta, Z, y, sw, 0.0)
    eps = 1e-6
    H_fd = np.column_stack([
        (reference_objective(theta + eps * e, Z, y, sw, 0.0)[1]
         - reference_objective(theta - eps * e, Z, y, sw, 0.0)[1]) / (2 * eps)
        for e in np.eye(2 * k)
    ])
    idx = np.arange(k)
    h_ww, h_wb, h_bb = H_fd[idx, idx], H_fd[idx, idx + k], H_fd[idx + k, idx + k]
    if backend == "torch":
        torch = pytest.importorskip("torch")
        from skcal._backend import _torch as xp

        args = (torch.from_numpy(Z), torch.from_numpy(y),
                None if sw is None else torch.from_numpy(sw))
    else:
        xp, args = xp_np, (Z, y, sw)
    for single in (True, False):
        f, gw, gb, blocks = xp.vector_nll_grad_blocks(*args, w, b, single=single)
        tol = 1e-6 if single else 1e-12
        assert_allclose(f, f_ref, rtol=tol)
        assert_allclose(np.concatenate([gw, gb]), g_ref, atol=tol * 10)
        # float32 sweeps: the blocks (the step's preconditioner) carry the
        # cancellation of p z^2 - (p z)^2 at single precision
        btol = 1e-4 if single else 1e-6
        for got, ref in zip(blocks, (h_ww, h_wb, h_bb)):
            assert_allclose(got, ref, rtol=btol, atol=btol * 1e-2)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_vector_torch_kernels_match_numpy(dtype, rtol):
    torch = pytest.importorskip("torch")
    from skcal._backend import _torch as xp_t

    rng = np.random.default_rng(2)
    n, k = 2000, 6
    Z = (3 * rng.normal(size=(n, k))).astype(dtype)
    y = rng.integers(0, k, n)
    sw = rng.uniform(0.1, 2.0, n)
    w, b = rng.uniform(0.5, 2.0, k), rng.normal(size=k)
    Zt, yt, swt = torch.from_numpy(Z), torch.from_numpy(y), torch.from_numpy(sw)
    # torch may compute float32 input in float32 (sums in float64): the
    # tolerance is relative to the size of the entries.
    for ref, got in zip(
        xp_np.vector_nll_hess(Z, y, sw, w, b), xp_t.vector_nll_hess(Zt, yt, swt, w, b)
    ):
        assert_allclose(got, ref, rtol=rtol, atol=rtol * np.abs(ref).max())
    ref = xp_np.vector_nll_grad(Z, y, None, w, b)[1]
    got = xp_t.vector_nll_grad(Zt, yt, None, w, b)[1]
    assert_allclose(got, ref, rtol=rtol, atol=rtol * np.abs(ref).max())
    v = rng.normal(size=2 * k)
    for ref, got in zip(
        xp_np.vector_nll_hessp(Z, y, sw, w, b, v[:k], v[k:]),
        xp_t.vector_nll_hessp(Zt, yt, swt, w, b, v[:k], v[k:]),
    ):
        assert_allclose(got, ref, rtol=rtol, atol=rtol * np.abs(ref).max())


# ------------------------------------------------------------------ solver
def test_vector_synthetic_matches_reference_and_truth(synth):
    Z, y, w_true, b_true = synth
    vs = VectorScaler(alpha=0).fit(Z, y)
    w_ref, b_ref, _ = reference_fit(Z, y)
    assert_allclose(vs.coef_, w_ref, rtol=1e-6, atol=1e-7)
    assert_allclose(vs.intercept_, b_ref, atol=1e-6)
    # n = 20000 draws from the model: the MLE is within a few standard errors.
    assert_allclose(vs.coef_, w_true, atol=0.05)
    assert_allclose(vs.intercept_, b_true, atol=0.05)
    assert vs.coef_.dtype == np.float64 and vs.intercept_.dtype == np.float64
    assert vs.scale_ is vs.coef_ and vs.bias_ is vs.intercept_
    assert 1 <= vs.n_iter_ <= 20


def test_vector_trust_ncg_path_matches_reference(synth, monkeypatch):
    Z, y, _, _ = synth
    monkeypatch.setattr(_vector, "FULL_HESSIAN_MAX_CLASSES", 2)
    vs = VectorScaler(alpha=1e-3, tol=1e-16).fit(Z[:5000], y[:5000])
    w_ref, b_ref, _ = reference_fit(Z[:5000], y[:5000], alpha=1e-3)
    assert_allclose(vs.coef_, w_ref, rtol=1e-6)
    assert_allclose(vs.intercept_, b_ref, atol=1e-6)


@pytest.mark.parametrize("name", ["cifar10_resnet20_chenyaofo", "agnews_gpt2_zeroshot"])
def test_vector_real_sets_match_reference(name):
    d = load_shared(name)
    Z, y = d["logits_val"], d["y_val"]
    vs = VectorScaler().fit(Z, y)  # default alpha=1e-4
    w_ref, b_ref, f_ref = reference_fit(Z, y, alpha=1e-4)
    theta = np.concatenate([vs.coef_, vs.intercept_])
    f, _ = reference_objective(theta, Z, y, None, 1e-4, inverse_temperature_reference(Z, y))
    assert f <= f_ref + 1e-10
    assert_allclose(vs.coef_, w_ref, rtol=1e-5, atol=1e-5)
    assert_allclose(vs.intercept_, b_ref, atol=1e-5)


def test_vector_binary_scores_match_reference():
    d = load_shared("sst2_gpt2_zeroshot")
    s, y = d["scores_val"], d["y_val"]
    vs = VectorScaler(alpha=0).fit(s, y)
    Z = np.column_stack([np.zeros_like(s), s])
    _, b_ref, _ = reference_fit(Z, y)
    # Column 0 is all zeros: its scale is not identified and stays at 1.
    assert vs.coef_[0] == 1.0
    # The identified map: log-odds = w_1 s + (b_1 - b_0).
    w_ref1 = reference_fit(Z, y)[0][1]
    assert_allclose(vs.coef_[1], w_ref1, rtol=1e-6)
    assert_allclose(vs.intercept_, b_ref, atol=1e-6)
    assert vs.predict_proba(s).shape == (len(s), 2)


# --------------------------------------------------------------- penalty
def test_vector_alpha_moves_fit_toward_identity(synth):
    Z, y, _, _ = synth
    Z, y = Z[:3000], y[:3000]
    dist = []
    for alpha in [0.0, 1e-2, 1e-1, 1.0]:
        vs = VectorScaler(alpha=alpha).fit(Z, y)
        dist.append(np.linalg.norm(np.r_[vs.coef_ - 1, vs.intercept_]))
        if alpha > 0:
            w_ref, b_ref, _ = reference_fit(Z, y, alpha=alpha)
            assert_allclose(vs.coef_, w_ref, rtol=1e-6)
            assert_allclose(vs.intercept_, b_ref, atol=1e-6)
            # Stationarity of the penalised objective forces sum(b) = 0.
            assert abs(vs.intercept_.sum()) < 1e-8
    assert all(a > b for a, b in zip(dist, dist[1:]))
    # A huge penalty pins the map to temperature scaling (it acts after T).
    vs = VectorScaler(alpha=1e6).fit(Z, y)
    assert_allclose(vs.coef_, inverse_temperature_reference(Z, y), rtol=1e-5)
    assert_allclose(vs.intercept_, 0.0, atol=1e-5)


def test_vector_gridsearch_over_alpha(synth):
    Z, y, _, _ = synth
    gs = GridSearchCV(VectorScaler(), {"alpha": [0.0, 1e-2, 10.0]}, cv=3)
    gs.fit(Z[:3000], y[:3000])
    scores = gs.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)
    # Data are drawn from a vector-scaling model far from identity:
    # the strong penalty must lose.
    assert gs.best_params_["alpha"] != 10.0
    assert scores[2] < scores[0]


# ------------------------------------------------------------- invariances
def test_vector_sample_weight_equals_repetition(synth):
    Z, y, _, _ = synth
    Z, y = Z[:600], y[:600]
    reps = np.random.default_rng(3).integers(0, 4, len(y))
    a = VectorScaler().fit(Z, y, sample_weight=reps.astype(float))
    b = VectorScaler().fit(np.repeat(Z, reps, axis=0), np.repeat(y, reps))
    assert_allclose(a.coef_, b.coef_, rtol=1e-8)
    assert_allclose(a.intercept_, b.intercept_, atol=1e-8)


def test_vector_weighted_fit_matches_weighted_reference(synth):
    Z, y, _, _ = synth
    Z, y = Z[:1000], y[:1000]
    sw = np.random.default_rng(4).uniform(0.1, 3.0, len(y))
    vs = VectorScaler(alpha=1e-3).fit(Z, y, sample_weight=sw)
    w_ref, b_ref, _ = reference_fit(Z, y, sw=sw, alpha=1e-3)
    assert_allclose(vs.coef_, w_ref, rtol=1e-6)
    assert_allclose(vs.intercept_, b_ref, atol=1e-6)


def test_vector_float32_equals_float64():
    d = load_shared("cifar10_densenet40_guo")
    Z32, y = d["logits_val"], d["y_val"]
    a = VectorScaler().fit(Z32, y)
    b = VectorScaler().fit(Z32.astype(np.float64), y)
    assert_allclose(a.coef_, b.coef_, rtol=1e-6)
    assert_allclose(a.intercept_, b.intercept_, atol=1e-6)
    assert not np.allclose(a.coef_, 1.0)  # a real fit, not a no-op


def test_vector_string_labels_same_fit(synth):
    Z, y, _, _ = synth
    Z, y = Z[:1000], y[:1000]
    names = np.array(["ant", "bee", "cat", "dog"])
    a = VectorScaler().fit(Z, y)
    b = VectorScaler().fit(Z, names[y])
    assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert_allclose(a.intercept_, b.intercept_, atol=1e-12)
    assert list(b.predict(Z[:20])) == list(names[a.predict(Z[:20])])


def test_vector_torch_backend_matches_numpy(synth):
    torch = pytest.importorskip("torch")
    Z, y, _, _ = synth
    Z, y = Z[:2000].astype(np.float32), y[:2000]
    a = VectorScaler().fit(Z, y)
    b = VectorScaler().fit(torch.from_numpy(Z), torch.from_numpy(y))
    assert_allclose(b.coef_, a.coef_, rtol=1e-6)
    assert_allclose(b.intercept_, a.intercept_, atol=1e-6)
    P = b.predict_proba(torch.from_numpy(Z))
    assert isinstance(P, torch.Tensor)
    assert_allclose(P.numpy(), a.predict_proba(Z), atol=1e-6)


# ------------------------------------------------------------- edge cases
def test_vector_absent_class_warns_and_stays_finite(synth):
    Z, y, _, _ = synth
    keep = y != 2
    Z, y = Z[keep][:2000], y[keep][:2000]
    with pytest.warns(UserWarning, match="never occur"):
        vs = VectorScaler().fit(Z, y)
    assert np.all(np.isfinite(vs.coef_)) and np.all(np.isfinite(vs.intercept_))
    assert vs.intercept_[2] < -3  # the absent class is pushed down, finitely
    with pytest.warns(ConvergenceWarning, match="no finite minimiser"):
        with pytest.warns(UserWarning, match="never occur"):
            vs0 = VectorScaler(alpha=0).fit(Z, y)
    assert np.all(np.isfinite(vs0.coef_)) and np.all(np.isfinite(vs0.intercept_))
    P = vs0.predict_proba(Z)
    assert np.all(np.isfinite(P)) and P[:, 2].max() < 1e-3
    assert_allclose(P.sum(axis=1), 1.0)


def test_vector_separable_set_warns_without_penalty():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 3, 300)
    Z = 2.0 * np.eye(3)[y] + 0.1 * rng.normal(size=(300, 3))
    with pytest.warns(ConvergenceWarning, match="separate"):
        vs = VectorScaler(alpha=0).fit(Z, y)
    assert np.all(np.isfinite(vs.coef_))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        vs = VectorScaler(alpha=1e-4).fit(Z, y)
    # Penalised: a unique finite optimum, where the gradient of the reference
    # objective vanishes.
    theta = np.concatenate([vs.coef_, vs.intercept_])
    assert np.abs(reference_objective(theta, Z, y, None, 1e-4)[1]).max() < 1e-7


def test_vector_max_iter_warns(synth):
    Z, y, _, _ = synth
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        vs = VectorScaler(max_iter=1).fit(Z[:1000], y[:1000])
    assert vs.n_iter_ == 1


def test_vector_rejects_negative_alpha(synth):
    Z, y, _, _ = synth
    with pytest.raises(ValueError, match="alpha"):
        VectorScaler(alpha=-1.0).fit(Z[:100], y[:100])


def test_vector_extreme_logits_give_valid_probabilities():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 500)
    Z = 1e4 * (np.eye(3)[y] + 0.3 * rng.normal(size=(500, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        vs = VectorScaler().fit(Z, y)
    for dtype in (np.float16, np.float32, np.float64):
        P = vs.predict_proba(np.clip(Z, -6e4, 6e4).astype(dtype))
        assert np.all(np.isfinite(P))
        assert_allclose(P.sum(axis=1), 1.0, rtol=1e-5)


def test_vector_clone_keeps_params():
    vs = VectorScaler(alpha=0.3, tol=1e-8, max_iter=7)
    assert clone(vs).get_params() == vs.get_params()


# ------------------------------------------------------------ real effect
@pytest.mark.parametrize(
    "name",
    [
        "cifar10_densenet40_guo",
        "cifar10_resnet20_chenyaofo",
        "cifar10_vgg16_kumar",
        "cifar10_lenet5_netcal",
    ],
)
def test_vector_lowers_test_nll_on_cifar(name):
    d = load_shared(name)
    vs = VectorScaler().fit(d["logits_val"], d["y_val"])
    Zt, yt = d["logits_test"], d["y_test"]
    P0 = softmax(Zt.astype(np.float64), axis=1)
    before = -np.mean(np.log(P0[np.arange(len(yt)), yt]))
    after = -vs.score(Zt, yt)
    assert after < before - 0.02


# ------------------------------------------------------- huge logit magnitudes
@pytest.mark.parametrize("solver", ["newton", "trust-ncg"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e5, 1e30, 1e100])
def test_vector_huge_logit_scales_fit_like_unit_scale(
    scale, dtype, solver, monkeypatch
):
    # The unpenalised fit is equivariant: w(c Z) = w(Z) / c, b(c Z) = b(Z).
    # Up to |logit| = 1e100 (float32: its whole range) the fit must reach the
    # independent reference solve of the unit-scale problem, without any
    # warning (formerly: the identity map, max_iter or a failed line search).
    if solver == "trust-ncg":
        monkeypatch.setattr(_vector, "FULL_HESSIAN_MAX_CLASSES", 2)
    Z, y, _, _ = make_vector_data(np.random.default_rng(3), 2000)
    # c: the factor that makes max |X| = scale (at most 1e15 for float32: its accepted range)
    scale = (min(scale, 1e15) if dtype == np.float32 else scale) / np.abs(Z).max()
    X = (Z * scale).astype(dtype)
    w_ref, b_ref, _ = reference_fit(X.astype(np.float64) / scale, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vs = VectorScaler(alpha=0, tol=1e-16).fit(X, y)
        vs_pen = VectorScaler().fit(X, y)
        outputs = [
            m.predict_proba(A)
            for m in (vs, vs_pen)
            for A in (X, Z.astype(dtype))
        ]
    assert_allclose(vs.coef_ * scale, w_ref, rtol=1e-6)
    assert_allclose(vs.intercept_, b_ref, atol=1e-6)
    # The default penalty is negligible at this scale, not a failure.
    f_ref = reference_objective(np.concatenate([w_ref, b_ref]), Z, y, None, 0.0)[0]
    f_pen = xp_np.nll(X, y, scale=vs_pen.coef_, bias=vs_pen.intercept_)
    assert f_pen == pytest.approx(f_ref, rel=1e-3)
    for P in outputs:
        assert np.all(np.isfinite(P)) and np.all(P >= 0)
        assert_allclose(P.sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("scale", [1e5, 1e6])
def test_vector_real_set_at_large_scale_equals_unit_scale(scale):
    # Formerly stopped at the identity map (test NLL inf) with a line-search
    # warning; temperature scaling handles this scale, so must vector scaling.
    d = load_shared("cifar10_resnet20_chenyaofo")
    Z, y = d["logits_val"], d["y_val"]
    w_ref, b_ref, _ = reference_fit(Z, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vs = VectorScaler(alpha=0).fit(Z.astype(np.float64) * scale, y)
    assert_allclose(vs.coef_ * scale, w_ref, rtol=1e-5)
    assert_allclose(vs.intercept_, b_ref, atol=1e-5)
    nll_test = xp_np.nll(
        d["logits_test"].astype(np.float64) * scale,
        d["y_test"],
        scale=vs.coef_,
        bias=vs.intercept_,
    )
    assert np.isfinite(nll_test) and nll_test < 0.25


def test_user_guide_vector_figures_are_those_of_vector_scaler_today():
    # docs/user_guide/index.rst (bundled sets) and llm.rst (SST-2 / AG News):
    # the "vector" cells recomputed, so a change of the fit cannot leave them stale
    import re
    from pathlib import Path

    from skcal.datasets import load_logits
    from skcal.metrics import expected_calibration_error, negative_log_likelihood

    docs = Path(__file__).resolve().parents[2] / "docs" / "user_guide"
    if not docs.is_dir():
        pytest.skip("docs not present")
    got = {}
    for name in ("cifar10_resnet20_chenyaofo", "agnews_gpt2_zeroshot", "sst2_gpt2_zeroshot"):
        d = load_logits(name)
        P = VectorScaler().fit(d.logits_val, d.y_val).predict_proba(d.logits_test)
        got[name] = (negative_log_likelihood(d.y_test, P),
                     100 * expected_calibration_error(d.y_test, P),
                     100 * np.mean(P.argmax(axis=1) == d.y_test))
    for line in (docs / "index.rst").read_text().splitlines():
        m = re.match(r"``(\w+)``.*?(?:\s{2,}\S+ / \S+){2}\s{2,}(\S+) / (\S+)", line)
        if m and m.group(1) in got:
            nll, ece, _ = got.pop(m.group(1))
            assert (m.group(2), m.group(3)) == (f"{nll:.3f}", f"{ece:.2f}"), line
    assert not got, f"rows not found in index.rst: {sorted(got)}"
    row = next(ln for ln in (docs / "llm.rst").read_text().splitlines()
               if ln.startswith("vector "))
    cells = re.split(r"\s{2,}", row.strip())[1:]
    for cell, name in zip(cells, ("sst2_gpt2_zeroshot", "agnews_gpt2_zeroshot")):
        d = load_logits(name)
        P = VectorScaler().fit(d.logits_val, d.y_val).predict_proba(d.logits_test)
        acc = 100 * np.mean(P.argmax(axis=1) == d.y_test)
        ece = 100 * expected_calibration_error(d.y_test, P)
        assert cell == f"{acc:.1f} / {negative_log_likelihood(d.y_test, P):.3f} / {ece:.1f}"
