"""IsotonicScaler against hand-computed PAVA values and scikit-learn; edge cases."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.isotonic import IsotonicRegression

from skcal import IsotonicScaler

from conftest import load_shared
from ovr.test_platt import (
    mean_nll,
    reference_ovr_log_odds,
    sklearn_calibrated,
    top_label_ece,
)


class ProbaClassifier(ClassifierMixin, BaseEstimator):
    """A 'fitted classifier' with predict_proba = softmax(X), no decision_function."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return softmax(np.asarray(X, dtype=np.float64), axis=1)

    def predict(self, X):
        return self.classes_[np.argmax(X, axis=1)]


@pytest.fixture
def binary_scores(rng):
    n = 1500
    f_true = rng.normal(0.3, 2.0, size=n)
    y = (rng.random(n) < expit(f_true)).astype(int)
    return 3.0 * f_true + 1.0, y


@pytest.fixture
def multiclass_logits(rng):
    n, k = 1200, 4
    y = rng.integers(0, k, size=n)
    Z = 3.0 * (1.5 * np.eye(k)[y] + rng.normal(size=(n, k)))
    return Z, y


# ------------------------------------------------------------- hand computed
def test_isotonic_hand_computed_pava_and_out_of_range():
    # PAVA on targets [0, 1, 0, 1] pools the middle pair: [0, 1/2, 1/2, 1]
    iso = IsotonicScaler(clip=None).fit([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1])
    P = iso.predict_proba([1.0, 2.0, 2.5, 3.0, 4.0])
    np.testing.assert_allclose(P[:, 1], [0.0, 0.5, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(P[:, 0], 1.0 - P[:, 1])
    # between knots: linear (1.5 -> 1/4); outside the range: the end values, never NaN
    P = iso.predict_proba([1.5, -1e4, 1e4, -1e100, 1e100])
    np.testing.assert_allclose(P[:, 1], [0.25, 0.0, 1.0, 0.0, 1.0])
    # beyond skcal's documented logit range (1e100): a clear error, not a guess
    with pytest.raises(ValueError, match="magnitude"):
        iso.predict_proba([1.5, 1e300])


def test_isotonic_hand_computed_weights():
    # weights [1, 3, 1, 1] on targets [0, 1, 0, 1]: the pool {2, 3} has mean 3/4
    # (no violation with 1 at s=4), and s=1 stays 0
    iso = IsotonicScaler(clip=None).fit(
        [1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], sample_weight=[1, 3, 1, 1]
    )
    np.testing.assert_allclose(
        iso.predict_proba([1.0, 2.0, 3.0, 4.0])[:, 1], [0, 0.75, 0.75, 1]
    )


def test_isotonic_clip_bounds_probabilities():
    eps = 0.01
    iso = IsotonicScaler(clip=eps).fit([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1])
    P = iso.predict_proba([-5.0, 1.0, 2.0, 4.0, 9.0])
    np.testing.assert_allclose(P[:, 1], [eps, eps, 0.5, 1 - eps, 1 - eps])
    assert P.min() >= eps and P.max() <= 1 - eps


def test_isotonic_default_clip_is_1e_minus_6(binary_scores, multiclass_logits):
    s, y = binary_scores
    P = IsotonicScaler().fit(s, y).predict_proba(np.array([-1e4, 0.0, 1e4]))
    np.testing.assert_allclose(P[:, 1], [1e-6, P[1, 1], 1 - 1e-6])
    Z, y = multiclass_logits
    P = IsotonicScaler().fit(Z, y).predict_proba(Z)
    # after renormalisation every probability is at least eps / (K (1 - eps)) > 0
    assert P.min() >= 1e-6 / (4 * (1 - 1e-6)) * (1 - 1e-9) and P.max() < 1


# ------------------------------------------------------------------- sklearn
@pytest.mark.filterwarnings("ignore:Since FrozenEstimator:UserWarning")
def test_isotonic_binary_matches_calibrated_classifier_cv(binary_scores, rng):
    s, y = binary_scores
    w = rng.integers(0, 3, size=len(s)).astype(float)
    s_new = np.concatenate([s, rng.normal(0, 8, size=500), [-1e4, 1e4]])
    for sw in (None, w):
        iso = IsotonicScaler(clip=None).fit(s, y, sample_weight=sw)
        cal = sklearn_calibrated(s, y, "isotonic", sample_weight=sw)
        np.testing.assert_allclose(
            iso.predict_proba(s_new),
            cal.predict_proba(s_new[:, None]),
            rtol=1e-12,
            atol=1e-15,
        )


def test_isotonic_multiclass_matches_independent_ovr_fits(multiclass_logits):
    Z, y = multiclass_logits
    iso = IsotonicScaler(clip=None).fit(Z, y)
    assert len(iso.calibrators_) == 4
    S = reference_ovr_log_odds(Z[:200])
    S_fit = reference_ovr_log_odds(Z)
    Q = np.column_stack(
        [
            IsotonicRegression(out_of_bounds="clip")
            .fit(S_fit[:, k], y == k)
            .predict(S[:, k])
            for k in range(4)
        ]
    )
    P = iso.predict_proba(Z[:200])
    np.testing.assert_allclose(P, Q / Q.sum(axis=1, keepdims=True), rtol=1e-10)


def test_isotonic_multiclass_matches_sklearn_on_calibration_points(multiclass_logits):
    # sklearn fits on softmax probabilities, skcal on one-vs-rest log-odds: an
    # increasing transform of the score, so the fitted values at the calibration
    # points coincide.
    Z, y = multiclass_logits
    iso = IsotonicScaler(clip=None).fit(Z, y)
    cal = CalibratedClassifierCV(
        FrozenEstimator(ProbaClassifier().fit(Z, y)), method="isotonic"
    )
    cal.fit(Z, y)
    np.testing.assert_allclose(
        iso.predict_proba(Z), cal.predict_proba(Z), rtol=1e-9, atol=1e-12
    )


# ---------------------------------------------------------------- invariants
def test_isotonic_is_monotone(binary_scores, multiclass_logits):
    s, y = binary_scores
    grid = np.linspace(-3 * np.abs(s).max(), 3 * np.abs(s).max(), 2001)
    p1 = IsotonicScaler(clip=None).fit(s, y).predict_proba(grid)[:, 1]
    assert np.all(np.diff(p1) >= 0)
    assert p1[0] == 0.0 and p1[-1] == 1.0
    Z, y = multiclass_logits
    iso = IsotonicScaler(clip=None).fit(Z, y)
    for cal in iso.calibrators_:
        assert np.all(np.diff(cal.predict(np.linspace(-50, 50, 2001))) >= 0)
    # raising one class's logit (others fixed) raises its one-vs-rest log-odds and
    # lowers the others', so its renormalised probability never decreases
    base = np.zeros((301, 4))
    base[:, 1] = np.linspace(-30, 30, 301)
    P = iso.predict_proba(base)
    assert np.all(np.diff(P[:, 1]) >= -1e-12)


def test_isotonic_all_zero_row_falls_back_to_uniform():
    # each class has positives at one-vs-rest log-odds ~0.1 and negatives at ~-0.1 and
    # ~-24, so each map is 0 on [-24, -0.1]; a uniform row has log-odds -log 2 for
    # every class.
    Z = np.array(
        [
            [4, 3.9, -20],
            [4, -20, 3.9],
            [3.9, 4, -20],
            [-20, 4, 3.9],
            [3.9, -20, 4],
            [-20, 3.9, 4],
        ]
    )
    y = np.array([0, 0, 1, 1, 2, 2])
    iso = IsotonicScaler(clip=None).fit(Z, y)
    X = np.array([[0.0, 0.0, 0.0], [4, 3.9, -20], [1.0, 1.0, 1.0]])
    P = iso.predict_proba(X)
    assert not np.isnan(P).any()
    np.testing.assert_allclose(P[0], [1 / 3, 1 / 3, 1 / 3])
    np.testing.assert_allclose(
        P[1], [1, 0, 0], atol=1e-12
    )  # log-odds (0.1, -0.1, -24) -> (1, 0, 0)
    np.testing.assert_allclose(P[2], [1 / 3, 1 / 3, 1 / 3])
    # with clip the row is not all-zero: equal clipped values -> uniform, none is 0
    Pc = IsotonicScaler(clip=1e-3).fit(Z, y).predict_proba(X)
    np.testing.assert_allclose(Pc[0], [1 / 3, 1 / 3, 1 / 3])
    assert Pc.min() > 0 and Pc.max() < 1


def test_isotonic_extreme_and_half_precision_logits(multiclass_logits):
    Z, y = multiclass_logits
    iso = IsotonicScaler(clip=None).fit(Z, y)
    X = np.array(
        [[1e4, -1e4, 0.0, 5.0], [-1e4, -1e4, -1e4, -1e4], [0.0, 0.0, 0.0, 1e4]]
    )
    for dtype in (np.float16, np.float32, np.float64):
        P = iso.predict_proba(X.astype(dtype))
        assert np.all(np.isfinite(P)) and np.all(P >= 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-6)


def test_isotonic_sample_weight_equals_repetition(multiclass_logits, rng):
    Z, y = multiclass_logits
    w = rng.integers(0, 4, size=len(y))
    a = IsotonicScaler(clip=None).fit(Z, y, sample_weight=w)
    b = IsotonicScaler(clip=None).fit(np.repeat(Z, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(
        a.predict_proba(Z), b.predict_proba(Z), rtol=1e-10, atol=1e-14
    )


def test_isotonic_string_labels_and_shift_invariance(multiclass_logits, rng):
    Z, y = multiclass_logits
    names = np.array(["ant", "bee", "cat", "dog"])
    a = IsotonicScaler(clip=None).fit(Z, y)
    b = IsotonicScaler(clip=None).fit(Z + 50 * rng.normal(size=(len(Z), 1)), names[y])
    c = IsotonicScaler(input_type="probabilities", clip=None).fit(softmax(Z, axis=1), y)
    np.testing.assert_array_equal(b.classes_, names)
    np.testing.assert_allclose(
        b.predict_proba(Z), a.predict_proba(Z), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        c.predict_proba(softmax(Z, axis=1)), a.predict_proba(Z), atol=1e-9
    )
    np.testing.assert_array_equal(b.predict(Z), names[a.predict(Z)])


def test_isotonic_float32_matches_float64(multiclass_logits):
    Z, y = multiclass_logits
    Z32 = Z.astype(np.float32)
    a = IsotonicScaler(clip=None).fit(Z32.astype(np.float64), y)
    b = IsotonicScaler(clip=None).fit(Z32, y)
    P = b.predict_proba(Z32)
    assert P.dtype == np.float32
    np.testing.assert_allclose(P, a.predict_proba(Z32.astype(np.float64)), atol=1e-6)


def test_isotonic_clone_and_pickle_round_trip(multiclass_logits):
    Z, y = multiclass_logits
    iso = IsotonicScaler(clip=1e-4).fit(Z, y)
    assert clone(iso).get_params() == iso.get_params()
    again = pickle.loads(pickle.dumps(iso))
    np.testing.assert_array_equal(again.predict_proba(Z), iso.predict_proba(Z))


def test_isotonic_rejects_bad_clip():
    with pytest.raises(ValueError, match="clip"):
        IsotonicScaler(clip=0.5).fit([1.0, 2.0], [0, 1])


# --------------------------------------------------------------------- torch
@pytest.mark.parametrize("binary", [True, False])
def test_isotonic_torch_matches_numpy(binary_scores, multiclass_logits, binary, rng):
    torch = pytest.importorskip("torch")
    X, y = binary_scores if binary else multiclass_logits
    X = X.astype(np.float32)
    a = IsotonicScaler(clip=None).fit(X, y)
    b = IsotonicScaler(clip=None).fit(torch.from_numpy(X), torch.from_numpy(y))
    for ca, cb in zip(a.calibrators_, b.calibrators_):
        np.testing.assert_array_equal(ca.X_thresholds_, cb.X_thresholds_)
    # new points, including out-of-range ones, interpolated on the tensor's device
    Xn = np.concatenate([X, 5 * X[:200], -5 * X[:200]]).astype(np.float32)
    P = b.predict_proba(torch.from_numpy(Xn))
    assert (
        isinstance(P, torch.Tensor)
        and P.dtype == torch.float32
        and P.device.type == "cpu"
    )
    assert not torch.isnan(P).any()
    np.testing.assert_allclose(P.numpy(), a.predict_proba(Xn), atol=1e-6)
    # the accelerator code path (torch ops throughout), run here on the CPU;
    # predict_proba itself evaluates CPU tensors through NumPy
    Zn = np.column_stack([np.zeros(len(Xn)), Xn]) if binary else Xn  # logits [0, s]
    P_dev = b._chunk(torch.from_numpy(Zn.astype(np.float64)), log=False)
    assert isinstance(P_dev, torch.Tensor)
    np.testing.assert_allclose(P_dev.numpy(), a.predict_proba(Xn), atol=1e-6)


# ----------------------------------------------------------------- real data
@pytest.mark.parametrize(
    "name",
    [
        "cifar10_densenet40_guo",
        "cifar100_densenetbc100_netcal",
        "imdb_cv_labelerrors",
        "sst2_gpt2_zeroshot",
    ],
)
def test_isotonic_improves_real_sets(name):
    d = load_shared(name)
    y = d["y_test"]
    P0 = softmax(d["logits_test"].astype(np.float64), axis=1)
    P = (
        IsotonicScaler(clip=1e-4)
        .fit(d["logits_val"], d["y_val"])
        .predict_proba(d["logits_test"])
    )
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-5)
    assert mean_nll(P, y) < mean_nll(P0, y) - 0.02
    assert top_label_ece(P, y) < 0.7 * top_label_ece(P0, y)


def test_isotonic_clip_keeps_log_loss_finite_on_real_set():
    # 20news has test rows whose true class gets probability 0 from a plain isotonic fit
    d = load_shared("20news_cv_labelerrors")
    y = d["y_test"]
    plain = IsotonicScaler(clip=None).fit(d["logits_val"], d["y_val"])
    clipped = IsotonicScaler(clip=1e-4).fit(d["logits_val"], d["y_val"])
    with np.errstate(divide="ignore"):
        assert plain.score(d["logits_test"], y) == -np.inf
    score = clipped.score(d["logits_test"], y)
    assert np.isfinite(score) and -score < 1.0
    P = clipped.predict_proba(d["logits_test"])
    assert P.min() > 0 and P.max() < 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e5, 1e30, 1e100])
def test_isotonic_huge_logit_scales_match_independent_fits(
    multiclass_logits, scale, dtype
):
    # Up to |logit| = 1e100 (float32: its whole range): the fit equals
    # independent isotonic fits on brute-force one-vs-rest log-odds, and rows
    # are finite and sum to 1 without any warning, for huge and ordinary input.
    Z, y = multiclass_logits
    s = (min(scale, 1e15) if dtype == np.float32 else scale) / np.abs(Z).max()
    X = (Z * s).astype(dtype)
    eps = 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        iso = IsotonicScaler(clip=eps).fit(X, y)
        P = iso.predict_proba(X)
        P_unit = iso.predict_proba(Z.astype(dtype))
    S = reference_ovr_log_odds(X)
    Q = np.column_stack(
        [
            IsotonicRegression(out_of_bounds="clip", y_min=eps, y_max=1 - eps)
            .fit(S[:, k], y == k)
            .predict(S[:, k])
            for k in range(4)
        ]
    )
    np.testing.assert_allclose(P, Q / Q.sum(axis=1, keepdims=True), rtol=1e-6)
    for R in (P, P_unit):
        assert np.all(np.isfinite(R)) and np.all(R > 0)
        np.testing.assert_allclose(R.sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("clip", [None, 1e-6])
def test_isotonic_multiclass_fit_is_sklearns_fit_exactly(rng, clip):
    # The multiclass fit sorts score values (no argsort) and runs scikit-learn's
    # PAVA on the group means: the knots must be exactly those of
    # IsotonicRegression.fit on the brute-force one-vs-rest scores, with tied
    # scores (repeated rows) and scores closer than finfo.resolution (1e-15),
    # which scikit-learn merges by its chained rule.
    n, k = 3000, 5
    y = rng.integers(0, k, size=n)
    Z = 3.0 * (1.5 * np.eye(k)[y] + rng.normal(size=(n, k)))
    Z[100:400] = Z[:300]  # ties
    Z[500] = Z[501]
    Z[500, 2] = np.nextafter(Z[501, 2], np.inf)  # class 2: scores 1 ulp apart
    iso = IsotonicScaler(clip=clip).fit(Z, y)
    S = reference_ovr_log_odds(Z)
    eps = 0.0 if clip is None else clip
    for j in range(k):
        ref = IsotonicRegression(out_of_bounds="clip", y_min=eps, y_max=1 - eps)
        ref.fit(S[:, j], (y == j).astype(float))
        cal = iso.calibrators_[j]
        np.testing.assert_allclose(cal.X_thresholds_, ref.X_thresholds_, rtol=1e-13)
        np.testing.assert_array_equal(cal.y_thresholds_, ref.y_thresholds_)
        assert (cal.X_min_, cal.X_max_) == pytest.approx((ref.X_min_, ref.X_max_), rel=1e-13)
        np.testing.assert_allclose(cal.predict(S[:, j]), ref.predict(S[:, j]), rtol=1e-12)


def test_isotonic_wide_chunked_predict_is_np_interp(rng):
    """Many classes and rows (several transpose tiles and row chunks, partial last
    tiles): predict_proba / predict_log_proba equal np.interp of each class's knots
    at its one-vs-rest score, renormalised, to 1e-12 (the scores themselves are
    checked against a brute-force logsumexp in test_platt; knots 1e-4 apart turn
    their 1e-15 differences into 1e-8 here, so this test takes the kernel's)."""
    from skcal._backend._ovr import ovr_log_odds

    n, k = 2000, 160
    Z = 3.0 * rng.normal(size=(n, k))
    y = rng.integers(0, k, size=n)
    iso = IsotonicScaler().fit(Z, y)
    iso._predict_chunk_bytes = 1 << 20  # several row chunks
    S = ovr_log_odds(Z)
    np.testing.assert_allclose(S, reference_ovr_log_odds(Z), rtol=1e-12, atol=1e-12)
    Q = np.column_stack([np.interp(S[:, j], c.X_thresholds_, c.y_thresholds_)
                         for j, c in enumerate(iso.calibrators_)])
    P_ref = Q / Q.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(iso.predict_proba(Z), P_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(iso.predict_log_proba(Z), np.log(P_ref), rtol=1e-12, atol=0)


def test_interp_table_equals_np_interp_bit_for_bit(rng):
    # the grid lookup of the multiclass NumPy prediction: NumPy's values exactly,
    # for clustered knots (many in one cell), flat and steep segments, points at
    # the knots, between them and beyond both ends
    from skcal._backend._numpy import InterpTable, interp_work

    for m in (2, 3, 7, 50, 400):
        xk = np.sort(rng.normal(scale=5.0, size=m))
        xk[m // 2:] = xk[m // 2] + np.cumsum(rng.random(m - m // 2) * 1e-9)  # a cluster
        xk = np.unique(xk)
        yk = np.sort(rng.choice([0.0, 0.25, 1 / 3, 0.5, 1.0], size=xk.size))
        table = InterpTable(xk, yk)
        assert table.ok
        x = np.concatenate([
            rng.normal(scale=8.0, size=5000), xk, np.nextafter(xk, -np.inf),
            np.nextafter(xk, np.inf), [-1e100, 1e100, xk[0], xk[-1]],
        ])
        got = table(x.copy(), interp_work(x.size))
        np.testing.assert_array_equal(got, np.interp(x, xk, yk))
    # one knot: NumPy's kernel (a constant)
    table = InterpTable([0.5], [0.25])
    assert not table.ok
    np.testing.assert_array_equal(table(np.array([-1.0, 0.5, 2.0]), interp_work(3)), 0.25)


def test_isotonic_numpy_predict_matches_chunked_reference(rng):
    # ovr_interp_rows (work arrays reused, grid lookup, chunk by chunk) against
    # ovr_log_odds + np.interp + renormalisation on the whole input
    from skcal._backend._ovr import ovr_interp_rows, ovr_log_odds

    n, k = 3000, 6
    y = rng.integers(0, k, size=n)
    Z = 3.0 * (2.0 * np.eye(k)[y] + rng.normal(size=(n, k)))
    iso = IsotonicScaler(clip=None).fit(Z, y)
    X = np.concatenate([Z, 1.7 * Z[:500], np.zeros((3, k))])
    S = ovr_log_odds(X)
    Q = np.column_stack([np.interp(S[:, j], c.X_thresholds_, c.y_thresholds_)
                         for j, c in enumerate(iso.calibrators_)])
    den = Q.sum(axis=1, keepdims=True)
    ref = np.divide(Q, den, out=np.full_like(Q, 1.0 / k), where=den > 0)
    for chunk in (None, 8 * k * 7):  # one chunk; chunks of 7 rows
        P = ovr_interp_rows(X, iso._knots(), chunk_bytes=chunk)
        np.testing.assert_array_equal(P, ref)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(
                ovr_interp_rows(X, iso._knots(), log=True, chunk_bytes=chunk), np.log(ref))
        X32 = X.astype(np.float32)
        P32 = ovr_interp_rows(X32, iso._knots(), mix=(0.75, 0.05), chunk_bytes=chunk)
        assert P32.dtype == np.float32
        # the mixture in float32, as on the whole unmixed float32 output
        plain = ovr_interp_rows(X32, iso._knots(), chunk_bytes=chunk)
        np.testing.assert_array_equal(P32, plain * np.float32(0.75) + np.float32(0.05))
    np.testing.assert_array_equal(iso.predict_proba(X), ref)
