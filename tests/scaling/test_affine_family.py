"""Matrix scaling, Dirichlet calibration, BCTS, NBVS and ETS against independent SciPy solves.

Every reference below is written here from the objective's definition (log-sum-exp
in float64, analytic gradient, ``scipy.optimize.minimize`` to ``gtol=1e-12``); it
shares no code with skcal. Fits must reach the reference objective to relative 1e-6.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_softmax, logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from skcal import (
    BiasCorrectedTemperatureScaler,
    DirichletCalibrator,
    EnsembleTemperatureScaler,
    MatrixScaler,
    NoBiasVectorScaler,
    StructuredVectorScaler,
)

from conftest import load_shared
from _helpers import inverse_temperature_reference

RTOL = 1e-6


# ------------------------------------------------------------ references
def _nll_grad(A, y, sw):
    """Weighted mean NLL of softmax(A) and dNLL/dA (float64)."""
    n = len(y)
    sw = np.ones(n) if sw is None else sw
    lse = logsumexp(A, axis=1)
    f = np.sum(sw * (lse - A[np.arange(n), y])) / sw.sum()
    R = np.exp(A - lse[:, None])
    R[np.arange(n), y] -= 1.0
    return f, R * (sw / sw.sum())[:, None]


def ref_affine(X, y, sw, structure, intercept, C, R, cb):
    """min over (W, b) of NLL(softmax(W x + b)) + sum C (W - R)^2 + sum cb b^2."""
    k = X.shape[1]
    nw = {"full": k * k, "diagonal": k, "scalar": 1}[structure]

    def unpack(t):
        if structure == "full":
            W = t[:nw].reshape(k, k)
        elif structure == "diagonal":
            W = np.diag(t[:nw])
        else:
            W = t[0] * np.eye(k)
        b = t[nw:] if intercept else np.zeros(k)
        return W, b

    def fun(t):
        W, b = unpack(t)
        f, G = _nll_grad(X @ W.T + b, y, sw)
        gW = G.T @ X
        Wd = W if structure == "full" else np.diag(W)
        pen = np.sum(C * (Wd - R) ** 2) + (np.sum(cb * b * b) if intercept else 0.0)
        gpen = 2 * C * (Wd - R)
        if structure == "full":
            gw = (gW + gpen).ravel()
        elif structure == "diagonal":
            gw = np.diag(gW) + gpen
        else:
            gw = np.array([np.trace(gW) + gpen.sum()])
        g = np.concatenate([gw, G.sum(0) + 2 * cb * b]) if intercept else gw
        return f + pen, g

    t0 = np.concatenate(
        [
            {"full": np.eye(k).ravel(), "diagonal": np.ones(k), "scalar": np.ones(1)}[structure],
            np.zeros(k if intercept else 0),
        ]
    )
    best = None
    for method in ("L-BFGS-B", "BFGS"):
        res = minimize(
            fun, t0, jac=True, method=method,
            options={"gtol": 1e-12, "maxiter": 20000}
            | ({"ftol": 1e-16, "maxcor": 50} if method == "L-BFGS-B" else {}),
        )
        if best is None or res.fun < best:
            best = res.fun
    return best


def objective(X, y, sw, W, b, C, R, cb, structure):
    f, _ = _nll_grad(X @ W.T + b, y, sw)
    Wd = W if structure == "full" else np.diag(W)
    return f + np.sum(C * (Wd - R) ** 2) + np.sum(cb * b * b)


def ref_temperature(Z, y, sw=None):
    """1/T of temperature scaling by bounded scalar minimisation (float64)."""
    res = minimize_scalar(
        lambda beta: _nll_grad(beta * Z, y, sw)[0], bounds=(1e-4, 100.0),
        method="bounded", options={"xatol": 1e-12},
    )
    return res.x


def penalty_arrays(reg, structure, k, n, lam, mu):
    """The documented penalties, written out independently."""
    full = structure == "full"
    off = ~np.eye(k, dtype=bool)
    if reg == "odir":
        C = np.where(off, lam / (k * (k - 1)), 0.0) if full else np.zeros(k)
        return C, np.zeros_like(C), np.full(k, mu / k)
    if reg == "l2":
        C = np.full((k, k) if full else k, lam / k**2)
        return C, np.zeros_like(C), np.full(k, mu / k)
    if reg == "sms":
        if full:
            C = np.where(off, lam * k * (k - 1) / n, lam * k / n)
            R = np.eye(k)
        else:
            C, R = np.full(k, lam * k / n), np.ones(k)
        return C, R, np.full(k, mu * k / n)
    C = np.zeros((k, k) if full else k)
    return C, np.zeros_like(C), np.zeros(k)


@pytest.fixture
def synthetic():
    rng = np.random.default_rng(0)
    n, k = 400, 4
    y = rng.integers(0, k, n)
    Z = 3.0 * (np.eye(k)[y] + rng.normal(size=(n, k))) + rng.normal(size=k)
    sw = rng.uniform(0.5, 2.0, n)
    return Z, y, sw


def _check(f, ref):
    assert f <= ref + RTOL * abs(ref), (f, ref)
    assert abs(f - ref) <= RTOL * abs(ref), (f, ref)


# ------------------------------------------------------------ matrix / Dirichlet
@pytest.mark.parametrize("reg", ["odir", "l2", "none", "sms"])
@pytest.mark.parametrize("cls", [MatrixScaler, DirichletCalibrator])
def test_full_map_matches_scipy(synthetic, cls, reg):
    Z, y, sw = synthetic
    k = Z.shape[1]
    est = cls(reg=reg, reg_lambda=0.3, reg_mu=0.1).fit(Z, y, sample_weight=sw)
    if reg == "sms":
        beta = est.feature_scale_
        np.testing.assert_allclose(beta, ref_temperature(Z, y, sw), rtol=1e-5)
        X = log_softmax(beta * Z, axis=1)
    else:
        X = log_softmax(Z, axis=1) if cls is DirichletCalibrator else Z
    C, R, cb = penalty_arrays(reg, "full", k, sw.sum() / sw.mean(), 0.3, 0.1)  # n in rows
    f = objective(X, y, sw, est.coef_, est.intercept_, C, R, cb, "full")
    _check(f, ref_affine(X, y, sw, "full", True, C, R, cb))


@pytest.mark.parametrize("param", ["diagonal", "fixed_diagonal"])
@pytest.mark.parametrize("reg", ["odir", "l2"])
def test_dirichlet_parametrizations_match_scipy(synthetic, param, reg):
    Z, y, sw = synthetic
    k = Z.shape[1]
    est = DirichletCalibrator(parametrization=param, reg=reg, reg_lambda=0.2, reg_mu=0.05)
    est.fit(Z, y, sample_weight=sw)
    W = est.coef_
    assert np.count_nonzero(W - np.diag(np.diag(W))) == 0
    if param == "fixed_diagonal":
        assert np.ptp(np.diag(W)) == 0
    X = log_softmax(Z, axis=1)
    structure = "diagonal" if param == "diagonal" else "scalar"
    C, R, cb = penalty_arrays(reg, "diagonal", k, sw.sum() / sw.mean(), 0.2, 0.05)  # n in rows
    f = objective(X, y, sw, W, est.intercept_, C, R, cb, "diagonal")
    _check(f, ref_affine(X, y, sw, structure, True, C, R, cb))


@pytest.mark.parametrize("structure", ["full", "diagonal"])
@pytest.mark.parametrize("log_features", [False, True])
def test_trust_ncg_path_matches_scipy(structure, log_features):
    # the many-class solver (Hessian-vector products), forced on a small problem
    from skcal._backend import _numpy
    from skcal.scaling._affine import fit_affine
    from skcal.scaling._matrix import affine_penalty

    rng = np.random.default_rng(1)
    n, k = 500, 6
    y = rng.integers(0, k, n)
    Z = 2.5 * (np.eye(k)[y] + rng.normal(size=(n, k)))
    C, R, cb = penalty_arrays("odir" if structure == "full" else "l2", structure, k, n, 0.1, 0.1)
    pen = affine_penalty("odir" if structure == "full" else "l2", structure, k, n, 0.1, 0.1)
    W, b, *_ = fit_affine(
        Z, y, None, _numpy, structure=structure, intercept=True, penalty=pen,
        log_features=log_features, w_start=0.5, solver="trust-ncg",
    )
    X = log_softmax(Z, axis=1) if log_features else Z
    Wm = W if structure == "full" else np.diag(W)
    f = objective(X, y, None, Wm, b, C, R, cb, structure)
    _check(f, ref_affine(X, y, None, structure, True, C, R, cb))


def test_torch_backend_matches_numpy(synthetic):
    torch = pytest.importorskip("torch")
    Z, y, sw = synthetic
    for est in (MatrixScaler(reg="odir", reg_lambda=0.1), DirichletCalibrator(reg_lambda=0.1),
                BiasCorrectedTemperatureScaler(), EnsembleTemperatureScaler()):
        P = est.fit(Z, y, sample_weight=sw).predict_proba(Z)
        Pt = est.fit(torch.from_numpy(Z), torch.from_numpy(y),
                     sample_weight=torch.from_numpy(sw)).predict_proba(torch.from_numpy(Z))
        assert isinstance(Pt, torch.Tensor)
        np.testing.assert_allclose(Pt.numpy(), P, atol=1e-8)


def test_unpenalised_separable_warns():
    rng = np.random.default_rng(0)
    y = np.arange(60) % 3
    Z = 10.0 * np.eye(3)[y] + 0.1 * rng.normal(size=(60, 3))
    with pytest.warns(ConvergenceWarning, match="separate|max_iter|no decrease"):
        MatrixScaler(reg="none", max_iter=30).fit(Z, y)


def test_reg_auto_equals_gridsearchcv(synthetic):
    Z, y, _ = synthetic
    grid = [1e-3, 1e-1, 10.0]
    auto = DirichletCalibrator(reg="l2", reg_lambda="auto", reg_grid=grid, n_splits=4).fit(Z, y)
    gs = GridSearchCV(
        DirichletCalibrator(reg="l2"), {"reg_lambda": grid},
        cv=StratifiedKFold(4, shuffle=True, random_state=0),
    ).fit(Z, y)
    assert auto.reg_lambda_ == gs.best_params_["reg_lambda"] == auto.reg_mu_
    # cv_results_ is the mean held-out NLL: the negative of GridSearchCV's score
    np.testing.assert_allclose(
        auto.cv_results_["mean_test_nll"], -gs.cv_results_["mean_test_score"], rtol=1e-3
    )
    refit = DirichletCalibrator(reg="l2", reg_lambda=auto.reg_lambda_).fit(Z, y)
    np.testing.assert_allclose(auto.predict_proba(Z), refit.predict_proba(Z), atol=1e-12)


# ------------------------------------------------------------ BCTS / NBVS
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_bcts_matches_scipy(synthetic, alpha):
    Z, y, sw = synthetic
    k = Z.shape[1]
    est = BiasCorrectedTemperatureScaler(alpha=alpha).fit(Z, y, sample_weight=sw)
    beta = inverse_temperature_reference(Z, y, sw)
    C, R, cb = np.full(k, alpha / 2 / k / beta**2), np.full(k, beta), np.full(k, alpha / 2)
    W = np.eye(k) / est.temperature_
    f = objective(Z, y, sw, W, est.intercept_, C, R, cb, "diagonal")
    _check(f, ref_affine(Z, y, sw, "scalar", True, C, R, cb))


@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_nbvs_matches_scipy(synthetic, alpha):
    Z, y, sw = synthetic
    k = Z.shape[1]
    est = NoBiasVectorScaler(alpha=alpha).fit(Z, y, sample_weight=sw)
    beta = inverse_temperature_reference(Z, y, sw)
    C, R, cb = np.full(k, alpha / 2 / beta**2), np.full(k, beta), np.zeros(k)
    f = objective(Z, y, sw, np.diag(est.coef_), np.zeros(k), C, R, cb, "diagonal")
    _check(f, ref_affine(Z, y, sw, "diagonal", False, C, R, cb))


@pytest.mark.parametrize("value", [-2.0, 3.0])
def test_nbvs_constant_scores_documented_bound(value):
    # analytic reference: with one common row z, p_k = r_k on the classes with
    # z_k != 0 and the zero-score classes share the rest equally
    rng = np.random.default_rng(0)
    k, n = 4, 400
    y = rng.choice(k, size=n, p=[0.4, 0.3, 0.2, 0.1])
    row = np.zeros(k)
    row[0], row[2] = value, 0.5 * value
    Z = np.tile(row, (n, 1))
    r = np.bincount(y, minlength=k) / n
    expected = r.copy()
    expected[[1, 3]] = (1.0 - r[0] - r[2]) / 2
    with pytest.warns(UserWarning, match="base rate"):
        est = NoBiasVectorScaler(alpha=0.0).fit(Z, y)
    np.testing.assert_allclose(est.predict_proba(Z[:1])[0], expected, atol=1e-7)
    # when the zero-score classes have equal frequencies the base rate is reached, silently
    y2 = np.repeat([0, 1, 2, 3], [160, 80, 80, 80])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = NoBiasVectorScaler(alpha=0.0).fit(Z, y2)
    np.testing.assert_allclose(est.predict_proba(Z[:1])[0], [0.4, 0.2, 0.2, 0.2], atol=1e-7)


# ------------------------------------------------------------ ETS
def ref_ets_weights_objective(Z, y, beta, sw=None):
    """min over the simplex of -mean log(w1 p_TS + w2 p_raw + w3 / K) (SLSQP, float64)."""
    n, k = Z.shape
    q = np.column_stack([
        np.exp(log_softmax(beta * Z, axis=1)[np.arange(n), y]),
        np.exp(log_softmax(Z, axis=1)[np.arange(n), y]),
        np.full(n, 1.0 / k),
    ])
    sw = np.ones(n) if sw is None else sw

    def f(w):
        return -np.sum(sw * np.log(q @ w)) / sw.sum()

    best = np.inf
    for w0 in np.eye(3) * 0.98 + 0.02 / 3:
        res = minimize(f, w0, method="SLSQP", bounds=[(0, 1)] * 3,
                       constraints={"type": "eq", "fun": lambda w: w.sum() - 1},
                       options={"ftol": 1e-15, "maxiter": 1000})
        best = min(best, f(np.clip(res.x, 0, 1) / np.clip(res.x, 0, 1).sum()))
    return best, f


@pytest.mark.parametrize("scale", [0.3, 3.0, 30.0])
def test_ets_matches_scipy(scale):
    rng = np.random.default_rng(2)
    n, k = 600, 5
    y = rng.integers(0, k, n)
    Z = scale * (np.eye(k)[y] + rng.normal(size=(n, k)))
    sw = rng.uniform(0.5, 2.0, n)
    est = EnsembleTemperatureScaler().fit(Z, y, sample_weight=sw)
    beta = 1.0 / est.temperature_
    np.testing.assert_allclose(beta, ref_temperature(Z, y, sw), rtol=1e-6)
    w = est.weights_
    assert np.all(w >= 0) and abs(w.sum() - 1) < 1e-12
    ref, f = ref_ets_weights_objective(Z, y, beta, sw)
    _check(f(w), ref)
    np.testing.assert_array_equal(est.predict(Z), Z.argmax(axis=1))
    # predict_proba is the documented mixture
    P = (w[0] * np.exp(log_softmax(beta * Z, axis=1)) + w[1] * np.exp(log_softmax(Z, axis=1))
         + w[2] / k)
    np.testing.assert_allclose(est.predict_proba(Z), P, atol=1e-12)


@pytest.mark.parametrize("c", [1e-8, 1e-3, 1e4, 1e6])
def test_ets_temperature_is_equivariant_and_weights_optimal_at_any_scale(c):
    # fit(c * Z): T scales by c (the temperature bounds are relative to the
    # logits' scale); the weights are not invariant, by definition (the raw
    # softmax(c z) component changes with c), but stay the NLL optimum
    rng = np.random.default_rng(5)
    n, k = 600, 4
    y = rng.integers(0, k, n)
    Z = 3.0 * (np.eye(k)[y] + rng.normal(size=(n, k)))
    t1 = EnsembleTemperatureScaler().fit(Z, y).temperature_
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = EnsembleTemperatureScaler().fit(c * Z, y)
    np.testing.assert_allclose(est.temperature_ / c, t1, rtol=1e-6)
    # the reference: the scale-1 optimum (exactly 1/c times that of c * Z)
    np.testing.assert_allclose(c / est.temperature_, ref_temperature(Z, y, None), rtol=1e-6)
    ref, f = ref_ets_weights_objective(c * Z, y, 1.0 / est.temperature_)
    _check(f(est.weights_), ref)


# ------------------------------------------------------------ real sets
@pytest.mark.shared_data
@pytest.mark.parametrize(
    "name", ["agnews_gpt2_zeroshot", "pathmnist_resnet50", "cifar10_resnet20_chenyaofo",
             "sst2_gpt2_zeroshot"],
)
def test_real_sets_match_scipy(name):
    d = load_shared(name)
    Z = d["logits_val"].astype(np.float64)[:2000]  # 2,000 rows: a fast reference
    y = d["y_val"][:2000]
    k = Z.shape[1]
    n = len(y)
    # "l2": strictly convex with a finite optimum. (ODIR leaves the diagonal
    # free: on pathmnist one class is separated by its own logit and the ODIR
    # optimum is at infinity -- see test_odir_divergence_warns.)
    for cls, reg, X in (
        (MatrixScaler, "l2", Z),
        (DirichletCalibrator, "l2", log_softmax(Z, axis=1)),
    ):
        est = cls(reg=reg, reg_lambda=0.01, reg_mu=0.01).fit(Z, y)
        C, R, cb = penalty_arrays(reg, "full", k, n, 0.01, 0.01)
        f = objective(X, y, None, est.coef_, est.intercept_, C, R, cb, "full")
        _check(f, ref_affine(X, y, None, "full", True, C, R, cb))
    est = BiasCorrectedTemperatureScaler(alpha=0.0).fit(Z, y)
    f = objective(Z, y, None, np.eye(k) / est.temperature_, est.intercept_,
                  np.zeros(k), np.ones(k), np.zeros(k), "diagonal")
    _check(f, ref_affine(Z, y, None, "scalar", True, np.zeros(k), np.ones(k), np.zeros(k)))
    est = EnsembleTemperatureScaler().fit(Z, y)
    ref, fw = ref_ets_weights_objective(Z, y, 1.0 / est.temperature_)
    _check(fw(est.weights_), ref)


@pytest.mark.shared_data
def test_real_sms_many_classes_matches_scipy():
    # 30 classes of a real 100-class set: 930 parameters, the trust-region path
    d = load_shared("cifar100_resnet20_chenyaofo")
    keep = d["y_val"] < 30
    Z, y = d["logits_val"][keep][:, :30].astype(np.float64), d["y_val"][keep]
    k, n = Z.shape[1], len(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MatrixScaler().fit(Z, y)
    X = log_softmax(est.feature_scale_ * Z, axis=1)
    C, R, cb = penalty_arrays("sms", "full", k, n, 1.0, 1.0)
    f = objective(X, y, None, est.coef_, est.intercept_, C, R, cb, "full")
    _check(f, ref_affine(X, y, None, "full", True, C, R, cb))


@pytest.mark.shared_data
def test_odir_divergence_warns():
    # ODIR does not penalise the diagonal: a class separated by its own logit
    # sends its diagonal entry to infinity (pathmnist, class 1)
    d = load_shared("pathmnist_resnet50")
    with pytest.warns(ConvergenceWarning, match="infinity"):
        MatrixScaler(reg="odir", reg_lambda=0.01).fit(d["logits_val"], d["y_val"])


# ------------------------------------------------------------ many classes, weak penalty
def ref_newton_full(X, y, C, cb):
    """Damped Newton with the dense float64 Hessian (written here from the definition).

    min over (W, b) of mean NLL(softmax(W x + b)) + sum C W^2 + sum cb b^2;
    the Hessian is ``mean_i (diag(p_i) - p_i p_i^T) kron (x^_i x^^T_i)`` with
    ``x^ = (x, 1)``. Stops when the Newton decrement is below 1e-20.
    """
    from scipy.linalg import cho_factor, cho_solve

    n, k = X.shape
    Xh = np.hstack([X, np.ones((n, 1))])
    m = k + 1
    pen = np.concatenate([np.broadcast_to(C, (k, k)), cb[:, None]], axis=1).ravel()

    def fgh(t, hess):
        A = Xh @ t.reshape(k, m).T
        lse = logsumexp(A, axis=1)
        f = np.mean(lse - A[np.arange(n), y]) + pen @ (t * t)
        P = np.exp(A - lse[:, None])
        R = P.copy()
        R[np.arange(n), y] -= 1.0
        g = (R.T @ Xh).ravel() / n + 2 * pen * t
        if not hess:
            return f, g, None
        S = P[:, :, None] * np.eye(k)[None] - P[:, :, None] * P[:, None, :]
        XX = Xh[:, :, None] * Xh[:, None, :]
        H = (S.reshape(n, k * k).T @ XX.reshape(n, m * m)) / n
        H = H.reshape(k, k, m, m).transpose(0, 2, 1, 3).reshape(k * m, k * m)
        H[np.diag_indices_from(H)] += 2 * pen
        return f, g, H

    t = np.hstack([np.eye(k), np.zeros((k, 1))]).ravel()
    f, g, H = fgh(t, True)
    for _ in range(200):
        d = -cho_solve(cho_factor(H), g)
        dec = -float(g @ d)
        if dec < 1e-20:
            break
        s = 1.0
        while True:
            f2, _, _ = fgh(t + s * d, False)
            if f2 <= f - 1e-4 * s * dec or s < 1e-12:
                break
            s *= 0.5
        t = t + s * d
        f, g, H = fgh(t, True)
    return f


@pytest.fixture
def count_hessp(monkeypatch):
    """Counts the trust region's Hessian-vector products (its conjugate-gradient steps)."""
    from skcal._backend import _matrix as mk

    calls = [0]
    orig = mk.HessianSample.hessp

    def counted(self, *args):
        calls[0] += 1
        return orig(self, *args)

    monkeypatch.setattr(mk.HessianSample, "hessp", counted)
    return calls


@pytest.mark.shared_data
def test_dirichlet_default_many_classes_matches_newton(count_hessp):
    # 25 classes of the real cifar100 set, the default L2 penalty (1e-2 / K^2
    # per entry): 650 parameters on the trust-region path, NLL flat along the
    # 26 softmax shifts up to that tiny weight. Solved to the dense-Newton
    # optimum with a few hundred Hessian products (the Jacobi-preconditioned
    # solver without the closed-form shifts took 3,579 at the same 13 iterations).
    d = load_shared("cifar100_resnet20_chenyaofo")
    k = 25
    keep = d["y_val"] < k
    Z, y = d["logits_val"][keep][:, :k].astype(np.float64), d["y_val"][keep]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = DirichletCalibrator(reg="l2", reg_lambda=1e-2).fit(Z, y)
    assert est.n_iter_ <= 30
    assert count_hessp[0] <= 1000, count_hessp[0]
    X = log_softmax(Z, axis=1)
    C, R, cb = penalty_arrays("l2", "full", k, len(y), 1e-2, 1e-2)
    f = objective(X, y, None, est.coef_, est.intercept_, C, R, cb, "full")
    _check(f, ref_newton_full(X, y, C, cb))
    # the optimum's softmax-shift conditions (sum_k W_kj = 0, sum_k b_k = 0)
    assert np.abs(est.coef_.sum(axis=0)).max() <= 1e-8 * np.abs(est.coef_).max()
    assert abs(est.intercept_.sum()) <= 1e-8 * np.abs(est.intercept_).max()


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.parametrize("cls", [DirichletCalibrator, MatrixScaler])
def test_full_map_100_classes_converges(cls, count_hessp):
    # the reported failure: DirichletCalibrator() (L2, 1e-6 per entry) on the
    # real 5,000 x 100 set ran over 10 minutes without converging (tens of
    # thousands of Hessian products); MatrixScaler(reg="l2") likewise.
    d = load_shared("cifar100_resnet20_chenyaofo")
    Z, y = d["logits_val"], d["y_val"]
    est = cls(reg="l2", reg_lambda=1e-2) if cls is DirichletCalibrator else cls(reg="l2")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.set_params(max_iter=50).fit(Z, y)
    assert est.n_iter_ <= 50
    assert count_hessp[0] <= 3000, count_hessp[0]
    # stationarity, checked here in float64 in the original (W, b)
    k = Z.shape[1]
    X = log_softmax(Z.astype(np.float64), axis=1) if cls is DirichletCalibrator else Z.astype(
        np.float64
    )
    C, R, cb = penalty_arrays("l2", "full", k, len(y), est.reg_lambda_, est.reg_mu_)

    def grad(W, b):
        _, G = _nll_grad(X @ W.T + b, y, None)
        return np.concatenate([(G.T @ X + 2 * C * W).ravel(), G.sum(0) + 2 * cb * b])

    g_fit = np.linalg.norm(grad(est.coef_, est.intercept_))
    beta = ref_temperature(Z.astype(np.float64), y)
    g_start = np.linalg.norm(grad(beta * np.eye(k), np.zeros(k)))
    assert g_fit <= 1e-4 * g_start, (g_fit, g_start)


def test_bcts_above_the_newton_size_uses_the_trust_region():
    # found by a fresh-user run: K + 1 > NEWTON_MAX_PARAMS (512) parameters
    # sent BCTS's scalar structure to the trust region, which refused it
    # ("the scalar structure is solved by Newton's method"): ImageNet-size
    # heads could not be fitted. Reference: L-BFGS on the same objective,
    # written out for a scalar W (w Z + b), to gtol 1e-12.
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    from skcal.scaling._affine import NEWTON_MAX_PARAMS

    rng = np.random.default_rng(0)
    k, n, alpha = NEWTON_MAX_PARAMS + 8, 2600, 0.05
    y = rng.permutation(np.arange(n) % k)
    Z = rng.normal(size=(n, k))
    Z[np.arange(n), y] += 3.0
    Z[:, :40] += 0.7  # a class bias for the intercepts to remove
    est = BiasCorrectedTemperatureScaler(alpha=alpha).fit(Z, y)
    beta = inverse_temperature_reference(Z, y)  # the penalty acts after the temperature

    def fun(t):
        w, b = t[0], t[1:]
        A = w * Z + b
        lse = logsumexp(A, axis=1)
        G = np.exp(A - lse[:, None])
        G[np.arange(n), y] -= 1.0
        G /= n
        d = w / beta - 1
        f = np.mean(lse - A[np.arange(n), y]) + alpha / 2 * d**2 + alpha / 2 * b @ b
        g = np.concatenate([[np.sum(G * Z) + alpha * d / beta], G.sum(0) + alpha * b])
        return f, g

    ref = minimize(fun, np.concatenate([[beta], np.zeros(k)]), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=5000, gtol=1e-12, ftol=1e-16))
    got = fun(np.concatenate([[1.0 / est.temperature_], est.intercept_]))[0]
    _check(got, ref.fun)


@pytest.mark.parametrize("cls", [MatrixScaler, DirichletCalibrator, StructuredVectorScaler])
def test_separating_calibration_set_warns(cls):
    """A calibration set whose logits all rank the true class first: the
    temperature start is at its bound and the map gives some test rows'
    true class probability exactly 0; the fit says so (it was silent)."""
    from skcal.datasets import load_cifar10_resnet20

    d = load_cifar10_resnet20()
    right = np.flatnonzero(d.logits_val.argmax(1) == d.y_val)[:300]
    with pytest.warns(ConvergenceWarning, match="logits separate the calibration set"):
        m = cls().fit(d.logits_val[right], d.y_val[right])
    P = m.predict_proba(d.logits_test)
    assert (P[np.arange(len(P)), d.y_test] == 0).any()  # the consequence it names
    # a set with errors: no such warning
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*separate the calibration set")
        cls().fit(d.logits_val[:300], d.y_val[:300])
