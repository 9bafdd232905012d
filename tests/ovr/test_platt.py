"""PlattScaler against independent references (SciPy, scikit-learn); edge cases."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator

from _helpers import multiclass_brier
from skcal import PlattScaler
from skcal._backend._ovr import ovr_column, ovr_log_odds, ovr_row_stats
from skcal.ovr._platt import fit_platt, fit_platt_ovr

from conftest import load_shared


# ------------------------------------------------------------------ references
def reference_platt(s, y, w=None, smoothing=True):
    """Independent solve: SciPy BFGS on the (smoothed-target) cross-entropy.

    Written from the definition in Platt (1999) with ``np.logaddexp``; the
    score is divided by its largest magnitude for conditioning and the slope
    mapped back. Returns (A, B) of ``P(y=1) = sigmoid(A s + B)``.
    """
    s = np.asarray(s, dtype=np.float64)
    y = np.asarray(y, dtype=bool)
    w = np.ones(len(s)) if w is None else np.asarray(w, dtype=np.float64)
    # Platt's prior counts rows (the one weight policy): whole weights with a
    # weight-1 row count their sums, other weights one row per mean weight
    whole = np.all(w == np.round(w)) and np.any(w == 1)
    unit = 1.0 if whole else w[w > 0].mean()
    npos, nneg = w[y].sum() / unit, w[~y].sum() / unit
    if smoothing:
        t = np.where(y, (npos + 1) / (npos + 2), 1 / (nneg + 2))
    else:
        t = y.astype(float)
    c = np.abs(s).max()
    x = s / c

    def fun(ab):
        f = ab[0] * x + ab[1]
        loss = np.sum(w * (np.logaddexp(0, f) - t * f))
        r = w * (expit(f) - t)
        return loss, np.array([r @ x, r.sum()])

    res = minimize(fun, [0.0, 0.0], jac=True, method="BFGS", options={"gtol": 1e-11})
    return res.x[0] / c, res.x[1]


def reference_ovr_log_odds(Z):
    """``z_k - logsumexp_{j != k} z_j`` by brute force (one deletion per entry)."""
    Z = np.asarray(Z, dtype=np.float64)
    return np.column_stack(
        [
            Z[:, j] - logsumexp(np.delete(Z, j, axis=1), axis=1)
            for j in range(Z.shape[1])
        ]
    )


class ScoreClassifier(ClassifierMixin, BaseEstimator):
    """A 'fitted classifier' whose decision_function is the first column of X."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def decision_function(self, X):
        return np.asarray(X)[:, 0]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


def sklearn_calibrated(s, y, method, sample_weight=None):
    clf = ScoreClassifier().fit(s[:, None], y)
    cal = CalibratedClassifierCV(FrozenEstimator(clf), method=method)
    return cal.fit(s[:, None], y, sample_weight=sample_weight)


def top_label_ece(P, y, n_bins=15):
    """Top-label ECE with equal-width bins on (0, 1] (Guo et al. 2017), by loop."""
    conf = P.max(axis=1)
    correct = P.argmax(axis=1) == y
    ece = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        m = (conf > lo) & (conf <= hi)
        if m.any():
            ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return ece


def mean_nll(P, y):
    return -np.mean(np.log(P[np.arange(len(y)), y]))


@pytest.fixture
def binary_scores(rng):
    """Over-confident, biased binary log-odds (a known affine miscalibration)."""
    n = 2000
    f_true = rng.normal(0.3, 2.0, size=n)
    y = (rng.random(n) < expit(f_true)).astype(int)
    s = 3.0 * (f_true - 0.3) + 1.0  # true map: sigmoid(s / 3 - 1/3 + 0.3)
    return s, y


# ---------------------------------------------------------------- binary fits
@pytest.mark.parametrize("smoothing", [True, False])
def test_platt_binary_matches_scipy_reference(binary_scores, smoothing):
    s, y = binary_scores
    ps = PlattScaler(target_smoothing=smoothing).fit(s, y)
    A, B = reference_platt(s, y, smoothing=smoothing)
    assert ps.a_ == pytest.approx(A, rel=1e-6)
    assert ps.b_ == pytest.approx(B, rel=1e-6, abs=1e-8)
    assert isinstance(ps.a_, float) and isinstance(ps.n_iter_, int)
    assert 1 <= ps.n_iter_ <= 20
    # the known miscalibration is recovered (approximately, n = 2000)
    assert ps.a_ == pytest.approx(1 / 3, rel=0.1)
    # predict_proba is sigmoid(A s + B), computed here from the definition
    P = ps.predict_proba(s)
    np.testing.assert_allclose(P[:, 1], expit(A * s + B), rtol=1e-6)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)


# the frozen base classifier ignores sample_weight; the calibrator (compared) uses it
@pytest.mark.filterwarnings("ignore:Since FrozenEstimator:UserWarning")
def test_platt_binary_weighted_prior_counts_rows(binary_scores, rng):
    # Platt's targets count rows (scale invariant): for weights that are not
    # proportional to whole numbers one row weighs the mean weight
    # (skcal.utils._weights.weight_unit); the reference is a plain scipy solve
    from scipy.optimize import minimize
    from scipy.special import log_expit

    s, y = binary_scores
    w = rng.uniform(0.5, 2.0, size=len(s))
    n1 = float(np.sum(w[y == 1])) / w.mean()
    n0 = float(np.sum(w[y != 1])) / w.mean()
    t = np.where(y == 1, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))

    def loss(p):
        f = p[0] * s + p[1]
        return -np.sum(w * (t * log_expit(f) + (1 - t) * log_expit(-f))) / w.sum()

    ref = minimize(loss, [1.0, 0.0], method="BFGS", options={"gtol": 1e-12}).x
    for scale in (1.0, 1e-6, 1e6):
        ps = PlattScaler().fit(s, y, sample_weight=scale * w)
        assert ps.a_ == pytest.approx(ref[0], rel=1e-5)
        assert ps.b_ == pytest.approx(ref[1], rel=1e-5, abs=1e-6)


def test_platt_binary_matches_sklearn_sigmoid(binary_scores, rng):
    s, y = binary_scores
    for sw in (None,):
        ps = PlattScaler().fit(s, y, sample_weight=sw)
        cal = sklearn_calibrated(s, y, "sigmoid", sample_weight=sw)
        # sklearn's map is 1 / (1 + exp(a s + b)): the signs are flipped
        sk = cal.calibrated_classifiers_[0].calibrators[0]
        assert ps.a_ == pytest.approx(-sk.a_, rel=1e-4)
        assert ps.b_ == pytest.approx(-sk.b_, rel=1e-4, abs=1e-5)
        np.testing.assert_allclose(
            ps.predict_proba(s), cal.predict_proba(s[:, None]), atol=1e-5
        )


def test_platt_hand_computed_symmetric_example():
    # s = [-1, 1] with labels [0, 1], unit weights, smoothed targets t- = 1/3, t+ = 2/3.
    # By symmetry B = 0 and sigmoid(A) = 2/3, i.e. A = log 2.
    ps = PlattScaler().fit([-1.0, 1.0], [0, 1])
    assert ps.a_ == pytest.approx(np.log(2.0), rel=1e-10)
    assert ps.b_ == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(
        ps.predict_proba([-1.0, 1.0])[:, 1], [1 / 3, 2 / 3], rtol=1e-10
    )


def test_platt_2d_logits_equal_1d_scores(binary_scores, rng):
    s, y = binary_scores
    z0 = rng.normal(size=len(s)) * 10
    Z = np.column_stack([z0, z0 + s])
    a = PlattScaler().fit(s, y)
    b = PlattScaler().fit(Z, y)
    assert b.a_ == pytest.approx(a.a_, rel=1e-10)
    assert b.b_ == pytest.approx(a.b_, rel=1e-10)
    np.testing.assert_allclose(b.predict_proba(Z), a.predict_proba(s), rtol=1e-10)


def test_platt_probability_input_equals_log_odds(binary_scores):
    s, y = binary_scores
    p1 = expit(s)
    a = PlattScaler().fit(s, y)
    b = PlattScaler(input_type="probabilities").fit(np.column_stack([1 - p1, p1]), y)
    assert b.a_ == pytest.approx(a.a_, rel=1e-6)
    assert b.b_ == pytest.approx(a.b_, rel=1e-6, abs=1e-8)


# ------------------------------------------------------- separable and large
def test_platt_separable_with_smoothing_is_finite_and_exact():
    s = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ps = PlattScaler().fit(s, y)
    A, B = reference_platt(s, y)
    assert ps.a_ == pytest.approx(A, rel=1e-6)
    assert ps.b_ == pytest.approx(B, abs=1e-8)
    # t+ = 4/5 and t- = 1/5; the fit interpolates them, so it stays well inside (0, 1)
    P = ps.predict_proba(s)[:, 1]
    assert 0.05 < P.min() and P.max() < 0.95


@pytest.mark.parametrize("scale", [1.0, 1e5])
def test_platt_separable_without_smoothing_warns_and_stays_finite(scale):
    s = scale * np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(ConvergenceWarning, match="separate"):
        ps = PlattScaler(target_smoothing=False).fit(s, y)
    assert np.isfinite(ps.a_) and np.isfinite(ps.b_) and ps.a_ > 0
    P = ps.predict_proba(s)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # a steep sigmoid: the calibration loss is tiny and the labels are recovered
    assert mean_nll(P, y) < 1e-6
    np.testing.assert_array_equal(ps.predict(s), y)


def test_platt_scores_of_magnitude_1e5(binary_scores):
    s, y = binary_scores
    big = 1e5 * s / np.abs(s).max()  # |s| up to 1e5
    ps = PlattScaler().fit(big, y)
    A, B = reference_platt(big, y)
    assert ps.a_ == pytest.approx(A, rel=1e-6)
    assert ps.b_ == pytest.approx(B, rel=1e-6, abs=1e-8)
    # the fit is equivariant: scaling s by c divides A by c
    small = PlattScaler().fit(s, y)
    assert ps.a_ * 1e5 / np.abs(s).max() == pytest.approx(small.a_, rel=1e-8)
    assert ps.b_ == pytest.approx(small.b_, rel=1e-8)
    P = ps.predict_proba(np.array([-1e5, 0.0, 1e5]))
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_platt_max_iter_warns(binary_scores):
    s, y = binary_scores
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        ps = PlattScaler(max_iter=1).fit(s, y)
    assert ps.n_iter_ == 1


# ------------------------------------------------------------------ multiclass
@pytest.fixture
def multiclass_logits(rng):
    n, k = 1500, 4
    y = rng.integers(0, k, size=n)
    Z = 4.0 * (2.0 * np.eye(k)[y] + rng.normal(size=(n, k)))  # over-confident
    return Z, y


def test_ovr_log_odds_matches_brute_force(rng):
    for scale in (1.0, 50.0, 1e4):
        Z = scale * rng.normal(size=(40, 5))
        Z[0] = [3.0, 3.0, 3.0, 1.0, 1.0]  # ties at the maximum
        np.testing.assert_allclose(
            ovr_log_odds(Z), reference_ovr_log_odds(Z), rtol=1e-12, atol=1e-12
        )
    Z = rng.normal(size=(10, 2))
    np.testing.assert_array_equal(ovr_log_odds(Z)[:, 1], Z[:, 1] - Z[:, 0])


def test_platt_multiclass_one_vs_rest_matches_reference(multiclass_logits):
    Z, y = multiclass_logits
    ps = PlattScaler().fit(Z, y)
    S = reference_ovr_log_odds(Z)
    assert ps.a_.shape == ps.b_.shape == (4,)
    assert isinstance(ps.n_iter_, int) and 1 <= ps.n_iter_ <= 20
    assert ps.a_.dtype == np.float64
    for k in range(4):
        A, B = reference_platt(S[:, k], y == k)
        assert ps.a_[k] == pytest.approx(A, rel=1e-6)
        assert ps.b_[k] == pytest.approx(B, rel=1e-6, abs=1e-8)
    # renormalised one-vs-rest sigmoids, from the definition
    Q = expit(S * ps.a_ + ps.b_)
    P = ps.predict_proba(Z)
    np.testing.assert_allclose(P, Q / Q.sum(axis=1, keepdims=True), rtol=1e-9)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)


def test_platt_multiclass_shift_invariant_and_probability_input(multiclass_logits, rng):
    Z, y = multiclass_logits
    shifted = Z + rng.normal(size=(len(Z), 1)) * 100
    logp = Z - logsumexp(Z, axis=1, keepdims=True)
    a = PlattScaler().fit(Z, y)
    b = PlattScaler().fit(shifted, y)
    c = PlattScaler(input_type="probabilities").fit(np.exp(logp), y)
    np.testing.assert_allclose(b.a_, a.a_, rtol=1e-9)
    np.testing.assert_allclose(c.a_, a.a_, rtol=1e-6)
    np.testing.assert_allclose(c.b_, a.b_, rtol=1e-6, atol=1e-8)


def test_platt_extreme_logits_give_valid_rows(multiclass_logits):
    Z, y = multiclass_logits
    ps = PlattScaler().fit(Z, y)
    X = np.array(
        [[1e4, -1e4, 0.0, 5.0], [-1e4, -1e4, -1e4, -1e4], [0.0, 0.0, 0.0, 1e4]]
    )
    for dtype in (np.float16, np.float32, np.float64):
        P = ps.predict_proba(X.astype(dtype))
        assert np.all(np.isfinite(P)) and np.all(P >= 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-5)


# ------------------------------------------------------------------ invariants
def test_platt_sample_weight_equals_repetition(multiclass_logits, rng):
    # issue 16: Platt's smoothing prior counts rows (scale invariance), so
    # weights equal repetition only for the plain maximum-likelihood fit
    Z, y = multiclass_logits
    Z, y = Z[:300], y[:300]
    w = rng.integers(0, 4, size=len(y))
    a = PlattScaler(target_smoothing=False).fit(Z, y, sample_weight=w)
    b = PlattScaler(target_smoothing=False).fit(
        np.repeat(Z, w, axis=0), np.repeat(y, w)
    )
    np.testing.assert_allclose(a.a_, b.a_, rtol=1e-8)
    np.testing.assert_allclose(a.b_, b.b_, rtol=1e-8, atol=1e-10)


def test_platt_string_labels_equal_integer_labels(multiclass_logits):
    Z, y = multiclass_logits
    names = np.array(["ant", "bee", "cat", "dog"])
    a = PlattScaler().fit(Z, y)
    b = PlattScaler().fit(Z, names[y])
    np.testing.assert_array_equal(b.classes_, names)
    np.testing.assert_allclose(b.a_, a.a_, rtol=1e-12)
    np.testing.assert_array_equal(b.predict(Z), names[a.predict(Z)])


def test_platt_float32_matches_float64(multiclass_logits):
    Z, y = multiclass_logits
    a = PlattScaler().fit(Z, y)
    b = PlattScaler().fit(Z.astype(np.float32), y)
    np.testing.assert_allclose(b.a_, a.a_, rtol=1e-5)
    P = b.predict_proba(Z.astype(np.float32))
    assert P.dtype == np.float32
    np.testing.assert_allclose(P, a.predict_proba(Z), atol=1e-5)


def test_platt_absent_class_with_explicit_classes(multiclass_logits):
    Z, y = multiclass_logits
    keep = y != 2
    with pytest.warns(UserWarning, match="never occur"):
        ps = PlattScaler(classes=[0, 1, 2, 3]).fit(Z[keep], y[keep])
    # every target of class 2 is t- = 1/(N + 2): the optimum is A = 0, sigmoid(B) = t-
    n = keep.sum()
    assert ps.a_[2] == pytest.approx(0.0, abs=1e-8)
    assert ps.b_[2] == pytest.approx(np.log(1.0 / (n + 1)), rel=1e-8)
    P = ps.predict_proba(Z)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_platt_clone_and_pickle_round_trip(multiclass_logits):
    Z, y = multiclass_logits
    ps = PlattScaler(target_smoothing=False).fit(Z, y)
    assert clone(ps).get_params() == ps.get_params()
    again = pickle.loads(pickle.dumps(ps))
    np.testing.assert_array_equal(again.predict_proba(Z), ps.predict_proba(Z))


# ----------------------------------------------------------------------- torch
@pytest.mark.parametrize("binary", [True, False])
def test_platt_torch_matches_numpy(binary_scores, multiclass_logits, binary):
    torch = pytest.importorskip("torch")
    X, y = binary_scores if binary else multiclass_logits
    X = X.astype(np.float32)
    a = PlattScaler().fit(X, y)
    b = PlattScaler().fit(torch.from_numpy(X), torch.from_numpy(y))
    np.testing.assert_allclose(b.a_, a.a_, rtol=1e-12)
    P = b.predict_proba(torch.from_numpy(X))
    assert (
        isinstance(P, torch.Tensor)
        and P.dtype == torch.float32
        and P.device.type == "cpu"
    )
    np.testing.assert_allclose(P.numpy(), a.predict_proba(X), atol=1e-6)
    LP = b.transform(torch.from_numpy(X))
    np.testing.assert_allclose(LP.numpy(), a.transform(X), atol=1e-5)


# ------------------------------------------------------------------- real data
@pytest.mark.parametrize(
    "name",
    [
        "cifar10_densenet40_guo",
        "cifar100_densenetbc100_netcal",
        "imdb_cv_labelerrors",
        "sst2_gpt2_zeroshot",
    ],
)
def test_platt_improves_real_sets(name):
    d = load_shared(name)
    y = d["y_test"]
    P0 = np.exp(d["logits_test"] - logsumexp(d["logits_test"], axis=1, keepdims=True))
    ps = PlattScaler().fit(d["logits_val"], d["y_val"])
    P = ps.predict_proba(d["logits_test"])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-5)
    assert mean_nll(P, y) < mean_nll(P0, y) - 0.02
    assert top_label_ece(P, y) < 0.7 * top_label_ece(P0, y)
    if "scores_val" in d:  # binary sets: the 1-D score gives the same fit
        ps1 = PlattScaler().fit(d["scores_val"], d["y_val"])
        assert ps1.a_ == pytest.approx(ps.a_, rel=1e-5)
        A, B = reference_platt(d["scores_val"], d["y_val"])
        assert ps1.a_ == pytest.approx(A, rel=1e-5)


# ------------------------------------------------------- huge logit magnitudes
def huge(Z, scale, dtype):
    """``Z`` rescaled to ``max |Z| = scale`` (float32: at most 1e15, its accepted range), as ``dtype``."""
    if dtype == np.float32:
        scale = min(scale, 1e15)
    Z = np.asarray(Z, dtype=np.float64)
    return (Z * (scale / np.abs(Z).max())).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e5, 1e30, 1e100])
def test_platt_huge_logit_scales_match_reference(
    binary_scores, multiclass_logits, scale, dtype
):
    # The accepted range goes up to |logit| = 1e100 (float32: its whole range).
    # Fit on huge logits, predict on huge and on ordinary ones: finite rows that
    # sum to 1, no RuntimeWarning or other warning, and the reference fit.
    s, yb = binary_scores
    Z, y = multiclass_logits
    Xb, X = huge(s, scale, dtype), huge(Z, scale, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pb = PlattScaler().fit(Xb, yb)
        ps = PlattScaler().fit(X, y)
        outputs = [
            pb.predict_proba(Xb),
            pb.predict_proba(s.astype(dtype)),
            ps.predict_proba(X),
            ps.predict_proba(Z.astype(dtype)),
        ]
    A, B = reference_platt(Xb, yb == 1)
    assert pb.a_ == pytest.approx(A, rel=1e-6)
    assert pb.b_ == pytest.approx(B, rel=1e-6, abs=1e-8)
    S = reference_ovr_log_odds(X)
    for k in range(4):
        A, B = reference_platt(S[:, k], y == k)
        assert ps.a_[k] == pytest.approx(A, rel=1e-6)
        assert ps.b_[k] == pytest.approx(B, rel=1e-6, abs=1e-8)
    for P in outputs:
        assert np.all(np.isfinite(P)) and np.all(P >= 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-6)


def test_platt_rejects_logits_beyond_1e100(multiclass_logits):
    Z, y = multiclass_logits
    big = np.where(Z > 0, 1e308, -1e308)
    with pytest.raises(ValueError, match="1e\\+100"):
        PlattScaler().fit(big, y)


# ------------------------------------------------- batched one-vs-rest solver
@pytest.fixture
def small_chunks(monkeypatch):
    """Force many row chunks so that chunk merging is exercised."""
    from skcal._backend import _numpy

    monkeypatch.setattr(_numpy, "CHUNK_BYTES", 1 << 10)


def test_ovr_row_stats_and_columns_match_brute_force(rng, small_chunks):
    Z = 3.0 * rng.normal(size=(300, 6))
    Z[0] = [3.0, 3.0, 3.0, 1.0, 1.0, 1.0]  # ties at the maximum
    Z[1] = [0.0, -900.0, -1000.0, -1e4, -950.0, -2000.0]  # rest underflows exp
    Z[2] = [2e4, 0.0, 1.0, 2.0, 3.0, 4.0]  # arg-max far above all others
    S_ref = reference_ovr_log_odds(Z)
    stats = ovr_row_stats(Z.astype(np.float32).astype(np.float64))
    for k in range(6):
        np.testing.assert_allclose(
            ovr_column(Z, k, ovr_row_stats(Z)), S_ref[:, k], rtol=1e-12, atol=1e-12
        )
    assert stats[0][2] == 0 and stats[0][1] == 0
    np.testing.assert_allclose(ovr_log_odds(Z), S_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("smoothing", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_fit_platt_ovr_equals_per_class_solver(rng, small_chunks, smoothing, weighted):
    # The batched solver takes the same Newton/Armijo steps as fit_platt run on
    # each brute-force one-vs-rest score column, class by class.
    n, k = 400, 5
    y = rng.integers(0, k, size=n)
    Z = 3.0 * (1.5 * np.eye(k)[y] + rng.normal(size=(n, k)))
    Z[:, 4] = np.where(y == 4, 20.0, -20.0)  # class 4 is separable
    w = rng.uniform(0.0, 3.0, size=n) if weighted else None
    S = reference_ovr_log_odds(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        A, B, n_iter, status = fit_platt_ovr(Z, y, w, target_smoothing=smoothing)
        A2, B2, it2, st2 = fit_platt_ovr(
            Z, y, w, target_smoothing=smoothing, max_iter=2
        )
    for j in range(k):
        a, b, it, st = fit_platt(S[:, j], y == j, w, target_smoothing=smoothing)
        assert (n_iter[j], status[j]) == (it, st)
        # a separable class has no optimum: ~27 steps on an almost flat loss,
        # where rounding differences grow to ~1e-8
        rtol = 1e-6 if st == "separable" else 1e-12
        np.testing.assert_allclose([A[j], B[j]], [a, b], rtol=rtol, atol=1e-12)
        a, b, it, st = fit_platt(
            S[:, j], y == j, w, target_smoothing=smoothing, max_iter=2
        )
        assert (it2[j], st2[j]) == (it, st)
        np.testing.assert_allclose([A2[j], B2[j]], [a, b], rtol=1e-9, atol=1e-9)
    assert status[4] == ("converged" if smoothing else "separable")
    assert set(st2[:4]) == {"max_iter"}


@pytest.mark.parametrize("shift", [0.0, -2000.0])
def test_platt_predict_proba_matches_definition_when_sigmoids_underflow(
    multiclass_logits, shift
):
    # shift = -2000 makes every sigmoid(A s + B) underflow to 0 in float64, so
    # predict_proba must renormalise in log space (no 0 / 0).
    Z, y = multiclass_logits
    ps = PlattScaler().fit(Z, y)
    ps.b_ = ps.b_ + shift
    LQ = log_expit(reference_ovr_log_odds(Z) * ps.a_ + ps.b_)
    P_ref = np.exp(LQ - logsumexp(LQ, axis=1, keepdims=True))
    P = ps.predict_proba(Z)
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P, P_ref, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(np.exp(ps.predict_log_proba(Z)), P_ref, rtol=1e-9)


@pytest.mark.parametrize("scale", [1.0, 1e-300])
def test_platt_constant_scores_fit_the_intercept_without_warning(scale):
    """Scores constant up to rounding carry no information: slope 0, and the
    intercept's optimum in closed form (the mean smoothed target), no warning."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 3000)
    X = np.ones((3000, 4)) if scale == 1.0 else scale * rng.normal(size=(3000, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        P = PlattScaler().fit(X, y).predict_proba(X[:1])[0]
    n_pos = np.bincount(y, minlength=4).astype(float)
    n_neg = len(y) - n_pos
    t_pos, t_neg = (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2)
    p = (n_pos * t_pos + n_neg * t_neg) / len(y)   # sigmoid(B) at the optimum
    np.testing.assert_allclose(P, p / p.sum(), rtol=1e-9)


@pytest.mark.parametrize("weighted", [False, True])
def test_fit_platt_ovr_warm_start_keeps_the_optimum(rng, weighted):
    # Above WARM_START_MIN_ROWS the batched solver starts from a subsample's
    # fit; the optimum must still be the full-data one: an independent SciPy
    # solve per class on brute-force one-vs-rest scores, and the cold start.
    from skcal.ovr import _platt

    n, k = _platt.WARM_START_MIN_ROWS + 1_000, 4
    y = rng.integers(0, k, size=n)
    Z = 3.0 * (1.5 * np.eye(k)[y] + rng.normal(size=(n, k)))
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    A, B, n_iter, status = fit_platt_ovr(Z, y, w)
    A0, B0, n_iter0, _ = fit_platt_ovr(Z, y, w, warm_start=False)
    assert set(status) == {"converged"}
    assert n_iter.max() < n_iter0.max()  # the warm start saves full passes
    np.testing.assert_allclose(A, A0, rtol=1e-9)
    np.testing.assert_allclose(B, B0, rtol=1e-9, atol=1e-12)
    S = reference_ovr_log_odds(Z)
    for j in range(k):
        a, b = reference_platt(S[:, j], y == j, w)
        np.testing.assert_allclose([A[j], B[j]], [a, b], rtol=1e-6)


@pytest.mark.parametrize("weighted, scale", [(False, 3.0), (True, 3.0), (False, 40.0)])
def test_fit_platt_ovr_float32_solver_keeps_the_optimum(
    rng, weighted, scale, monkeypatch
):
    # float32 logits with >= WARM_START_MIN_ROWS rows take the float32 solver
    # (float32 evaluations, the subsample's standardisation): its optimum is
    # the float64 one, checked against an independent SciPy solve per class on
    # brute-force float64 one-vs-rest scores of the same float32 logits.
    from skcal.ovr import _platt

    calls = []
    real = _platt._fit_platt_ovr32
    monkeypatch.setattr(
        _platt, "_fit_platt_ovr32", lambda *a: calls.append(real(*a)) or calls[-1]
    )
    n, k = _platt.WARM_START_MIN_ROWS + 1_000, 5
    y = rng.integers(0, k - 1, size=n)
    y[[1, 2, 3, 4, 6]] = k - 1  # a rare class, absent from the subsample
    Z = (scale * (1.5 * np.eye(k)[y] + rng.normal(size=(n, k)))).astype(np.float32)
    Z[:, 0] -= 40.0  # a shifted column: standardisation matters
    if scale > 3.0:
        # ten rows of logits x30: |f| beyond the float32 solver's clip (87) at
        # the optimum, for some classes during the iteration and for all at
        # the end (per-column and whole clipping, float64 loss corrections)
        Z[10:20] *= 30.0
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ps = PlattScaler().fit(Z, y, sample_weight=w)
    assert calls and calls[0] is not None, "the float32 solver was not used"
    S = reference_ovr_log_odds(Z)
    for j in range(k):
        a, b = reference_platt(S[:, j], y == j, w)
        assert ps.a_[j] == pytest.approx(a, rel=1e-6)
        assert ps.b_[j] == pytest.approx(b, rel=1e-6, abs=1e-8)


def test_certified_decrease_implies_armijo(rng):
    # The float32 solver accepts a Newton step without evaluating the loss when
    # t psi(M t) <= 0.9 (M: the step's largest change of f over the rows). The
    # self-concordance bound behind it, checked against float64 losses
    # computed directly: every certified step decreases the loss by at least a
    # tenth of the linear prediction (far more than Armijo's 1e-4).
    from skcal.ovr._platt import _certified_decrease

    n_cert = 0
    for _ in range(300):
        n = int(rng.integers(20, 400))
        u = rng.normal(size=n) * rng.uniform(0.1, 5.0)
        if rng.random() < 0.3:
            u[: int(rng.integers(1, 4))] *= 20.0  # outlying scores
        t = rng.random(n) < rng.uniform(0.02, 0.5)
        a, b = rng.normal() * 3.0, rng.normal() * 3.0

        def loss(a, b):
            f = a * u + b
            return np.mean(np.logaddexp(0.0, f) - t * f)

        p = expit(a * u + b)
        r, q = p - t, p * (1.0 - p)
        g = np.array([np.mean(r * u), np.mean(r)])
        hab = np.mean(q * u)
        H = np.array([[np.mean(q * u * u), hab], [hab, np.mean(q)]])
        d = -np.linalg.solve(H, g)
        slope = float(g @ d)
        M = float(np.max(np.abs(d[0] * u + d[1])))
        for step in (1.0, 0.5, 0.25, 0.125, 1 / 64):
            if _certified_decrease(step, M):
                n_cert += 1
                a1, b1 = a + step * d[0], b + step * d[1]
                assert loss(a1, b1) - loss(a, b) <= 0.1 * step * slope * (1 - 1e-9)
    assert n_cert > 200  # the rule certifies most steps of these problems


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_platt_on_forest_probabilities_passes_sklearn_multiclass_test(seed):
    # scikit-learn's test_calibration_multiclass, the random-forest half
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.datasets import make_blobs
    from sklearn.ensemble import RandomForestClassifier

    from skcal import CalibratedClassifier, PlattScaler

    X, y = make_blobs(n_samples=500, n_features=100, random_state=seed, centers=10,
                      cluster_std=15.0)
    y[y > 2] = 2
    Xtr, ytr, Xte, yte = X[::2], y[::2], X[1::2], y[1::2]
    clf = RandomForestClassifier(n_estimators=30, random_state=42).fit(Xtr, ytr)
    uncal = multiclass_brier(yte, clf.predict_proba(Xte), 3)
    for ensemble in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = CalibratedClassifier(clf, PlattScaler(), cv=5, ensemble=ensemble)
            P = ours.fit(Xtr, ytr).predict_proba(Xte)
            ref = CalibratedClassifierCV(clf, method="sigmoid", cv=5,
                                         ensemble=ensemble).fit(Xtr, ytr)
        got = multiclass_brier(yte, P, 3)
        R = ref.predict_proba(Xte)
        sk = multiclass_brier(yte, R, 3)
        assert got < 1.1 * uncal
        # the forest's probabilities have exact zeros: "auto" fits the sigmoid on
        # the probabilities, scikit-learn's model; the two solvers agree to
        # scikit-learn's L-BFGS tolerance (Brier 0.2400 / 0.2265 at seed 0)
        assert got <= sk + 1e-6
        np.testing.assert_allclose(P, R, atol=1e-5)
        assert all(c.calibrator.score_scale_ == "probability"
                   for c in ours.calibrated_classifiers_)


def test_platt_logits_are_never_floored():
    from skcal import PlattScaler

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    Z = 800.0 * (np.eye(3)[y] - 0.5) + rng.normal(size=(200, 3))
    m = PlattScaler().fit(Z, y)
    assert m.log_floor_ is None and m.score_scale_ == "log_odds"
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)  # many exact zeros
    mp = PlattScaler(input_type="probabilities", score_scale="log_odds").fit(P, y)
    assert mp.log_floor_ == pytest.approx(np.log(P[P > 0].min() / 2))
    ma = PlattScaler(input_type="probabilities").fit(P, y)
    assert ma.log_floor_ is None and ma.score_scale_ == "probability"


def test_platt_softmax_probabilities_fit_like_their_logits():
    # no exact zeros: "auto" keeps the log-odds, so probabilities and logits of
    # the same model give the same map
    from skcal import PlattScaler

    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 300)
    Z = 2.0 * np.eye(3)[y] + rng.normal(size=(300, 3))
    P = np.exp(Z) / np.exp(Z).sum(1, keepdims=True)
    a = PlattScaler().fit(Z, y)
    b = PlattScaler(input_type="probabilities").fit(P, y)
    assert b.score_scale_ == "log_odds"
    np.testing.assert_allclose(b.a_, a.a_, rtol=1e-8)
    np.testing.assert_allclose(b.predict_proba(P), a.predict_proba(Z), atol=1e-10)


@pytest.mark.parametrize("K", [2, 3])
def test_platt_probability_scale_matches_sklearn_sigmoid(K):
    # scikit-learn's _sigmoid_calibration on the probability column itself,
    # with the same Platt targets: an independent solver of the same problem
    from sklearn.calibration import _sigmoid_calibration

    from skcal import PlattScaler

    rng = np.random.default_rng(K)
    y = rng.integers(0, K, 400)
    votes = rng.multinomial(20, np.full(K, 1.0 / K), size=400) + 15 * np.eye(K, dtype=int)[y]
    P = votes / votes.sum(1, keepdims=True)
    sure = rng.random(400) < 0.3  # unanimous votes: exact 0s and 1s
    P[sure] = np.eye(K)[rng.integers(0, K, sure.sum())]
    m = PlattScaler(input_type="probabilities", score_scale="probability").fit(P, y)
    cols = [1] if K == 2 else range(K)
    for j, k in enumerate(cols):
        a, b = _sigmoid_calibration(P[:, k], (y == k).astype(float))
        # scikit-learn's map is 1 / (1 + exp(a f + b))
        np.testing.assert_allclose(np.atleast_1d(m.a_)[j], -a, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.atleast_1d(m.b_)[j], -b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("K", [2, 3])
def test_platt_weight_scale_invariance(K):
    from skcal import PlattScaler

    rng = np.random.default_rng(0)
    y = rng.integers(0, K, 300)
    Z = 3.0 * np.eye(K)[y] + rng.normal(size=(300, K))
    a = PlattScaler().fit(Z, y)
    for w in (np.full(300, 1 / 300), np.full(300, 1e-300), np.full(300, 1e300)):
        b = PlattScaler().fit(Z, y, sample_weight=w)
        np.testing.assert_allclose(b.predict_proba(Z), a.predict_proba(Z), atol=1e-12)
    w = rng.uniform(0.1, 3.0, 300)
    c = PlattScaler().fit(Z, y, sample_weight=w)
    d = PlattScaler().fit(Z, y, sample_weight=w / w.sum())
    np.testing.assert_allclose(c.a_, d.a_, rtol=1e-9)


@pytest.mark.parametrize("scale", [1e-150, 1e-200, 1e-300, 1e50])
def test_platt_binary_scores_of_any_magnitude_fit_the_same_map(scale):
    # the spread of the scores was computed as mean((s - mu)**2), which
    # underflows to 0 below ~1e-160: the scores were read as constant and the
    # fit returned the base rate everywhere, without a warning
    from scipy.optimize import minimize
    from scipy.special import expit

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 2000)
    s = rng.normal(size=2000) + 1.5 * (2 * y - 1)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(p):
        f = p[0] * s + p[1]
        return np.mean(np.logaddexp(0, f) - t * f)

    a, b = minimize(loss, [1.0, 0.0], method="BFGS", options={"gtol": 1e-12}).x
    P = PlattScaler().fit(s * scale, y).predict_proba(s * scale)
    np.testing.assert_allclose(P[:, 1], expit(a * s + b), atol=1e-6)


@pytest.mark.parametrize("name", ["PlattScaler", "IsotonicScaler", "BetaCalibrator"])
def test_multiclass_logits_below_the_one_vs_rest_resolution_warn(name):
    # logits spanning 1e-12 within a row: the one-vs-rest log-odds keep ~4
    # digits in float64 and the maps fit rounding noise; said, not silent
    import skcal

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 600)
    Z = 2.0 * np.eye(3)[y] + rng.normal(size=(600, 3))
    cls = getattr(skcal, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        cls().fit(Z, y)  # ordinary logits: no warning
    with pytest.warns(UserWarning, match="one-vs-rest log-odds"):
        cls().fit(Z * 1e-12, y)
    # the binary score is a plain difference, exact at any scale: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        cls().fit(Z[:, :2] * 1e-12, y % 2)


@pytest.mark.parametrize("name", ["PlattScaler", "QuadraticScaler"])
def test_subnormal_score_spread_is_refused_not_mapped_to_one(name):
    """Scores ~1e-310 need a slope no float64 holds: fit refuses them (it gave
    a_ = inf and probability 1 everywhere); at 1e-300 Platt's fit is the scale-1
    fit (QuadraticScaler's s^2 underflows there: it fits Platt's map)."""
    import skcal

    s = np.array([1.0, 1, 2, 2, 3, 3, 4, 4])
    y = np.array([0, 1, 0, 1, 1, 0, 1, 1])
    with pytest.raises(ValueError, match=r"spread over only 1\.12e-310 .*multiply the scores"):
        getattr(skcal, name)().fit(1e-310 * s, y)
    ref = PlattScaler().fit(s, y).predict_proba(s)
    got = getattr(skcal, name)().fit(1e-300 * s, y).predict_proba(1e-300 * s)
    np.testing.assert_allclose(got, ref, atol=1e-9)
