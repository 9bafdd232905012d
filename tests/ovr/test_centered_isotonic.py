"""CenteredIsotonicScaler against a brute-force centered isotonic regression written here."""

import numpy as np
import pytest
from scipy.special import log_softmax, logsumexp

from skcal import CenteredIsotonicScaler, IsotonicScaler
from skcal.ovr._centered_isotonic import _sorted_with_targets, centered_isotonic_knots


def _brute_force_cir(s, t, w):
    """CIR from its definition: min-max isotonic values, blocks, weighted centres, linear interpolation."""
    xs = sorted(set(s.tolist()))
    W = np.array([w[s == x].sum() for x in xs])
    Y = np.array([(w * t)[s == x].sum() for x in xs])
    m = len(xs)
    # isotonic regression: g_i = max_{j <= i} min_{k >= i} mean(j..k)  (Barlow et al. 1972)
    CW, CY = np.concatenate([[0], np.cumsum(W)]), np.concatenate([[0], np.cumsum(Y)])
    with np.errstate(divide="ignore", invalid="ignore"):
        M = (CY[None, 1:] - CY[:-1, None]) / (CW[None, 1:] - CW[:-1, None])  # M[j, k] = mean(j..k)
    g = np.array([M[: i + 1, i:].min(axis=1).max() for i in range(m)])
    pts = []
    blocks = []
    i = 0
    while i < m:
        j = i
        while j + 1 < m and g[j + 1] == g[i]:
            j += 1
        blocks.append((i, j))
        i = j + 1
    for bi, (i, j) in enumerate(blocks):
        v = g[i]
        centre = float(np.dot(W[i:j + 1], xs[i:j + 1]) / W[i:j + 1].sum())
        if v in (0.0, 1.0):
            pts += [(xs[i], v), (xs[j], v)]
            continue
        if bi == 0:
            pts.append((xs[i], v))
        pts.append((centre, v))
        if bi == len(blocks) - 1:
            pts.append((xs[j], v))
    px = np.array([p[0] for p in pts])
    py = np.array([p[1] for p in pts])
    return lambda q: np.interp(q, px, py)


@pytest.fixture
def tied():
    """Scores with many ties and non-monotone local rates, with integer weights."""
    rng = np.random.default_rng(5)
    s = np.round(rng.normal(size=300), 1)
    t = (rng.random(300) < 1 / (1 + np.exp(-2 * s))).astype(float)
    w = rng.integers(1, 4, size=300).astype(float)
    return s, t, w


def test_cir_matches_brute_force(tied):
    s, t, w = tied
    ref = _brute_force_cir(s, t, w)
    grid = np.linspace(s.min() - 1, s.max() + 1, 2001)
    est = CenteredIsotonicScaler(clip=None).fit(s, t, sample_weight=w)
    np.testing.assert_allclose(est.predict_proba(grid)[:, 1], ref(grid), atol=1e-12)
    x, y = centered_isotonic_knots(s, t, w)
    assert np.all(np.diff(x) > 0)
    np.testing.assert_allclose(y, ref(x), atol=1e-12)


def test_cir_hand_example():
    # PAVA: [0, .5, .5, 1]; blocks {0} (value 0), {1, 2} (centre 1.5), {3} (value 1)
    s = np.array([0.0, 1.0, 2.0, 3.0])
    t = np.array([0.0, 1.0, 0.0, 1.0])
    x, y = centered_isotonic_knots(s, t)
    np.testing.assert_array_equal(x, [0.0, 1.5, 3.0])
    np.testing.assert_array_equal(y, [0.0, 0.5, 1.0])
    est = CenteredIsotonicScaler(clip=None).fit(s, t)
    np.testing.assert_allclose(est.predict_proba(s)[:, 1], [0, 1 / 3, 2 / 3, 1])
    # isotonic ties the two middle scores; CIR does not
    iso = IsotonicScaler(clip=None).fit(s, t).predict_proba(s)[:, 1]
    assert iso[1] == iso[2]


def test_cir_strictly_increasing_between_centres(tied):
    s, t, w = tied
    est = CenteredIsotonicScaler().fit(s, t, sample_weight=w)
    x, y = est.calibrators_[0].X_thresholds_, est.calibrators_[0].y_thresholds_
    d = np.diff(y)
    rising = np.flatnonzero(d > 0)
    # flat only at the ends (extreme score to first / last centre, 0- and 1-blocks, the clip)
    assert np.all(d[rising[0]:rising[-1] + 1] > 0)
    assert rising[0] <= 2 and rising[-1] >= len(d) - 3
    assert len(x) > 8
    p = est.predict_proba(np.sort(s))[:, 1]
    assert np.all(np.diff(p) >= 0)


def test_cir_clip_is_the_clipped_plain_map():
    rng = np.random.default_rng(1)
    s = rng.normal(scale=3, size=400)
    t = (s + rng.normal(size=400) > 0).astype(float)  # 0- and 1-blocks at the ends
    eps = 0.01
    plain = CenteredIsotonicScaler(clip=None).fit(s, t)
    clipped = CenteredIsotonicScaler(clip=eps).fit(s, t)
    grid = np.linspace(-12, 12, 4001)
    np.testing.assert_allclose(
        clipped.predict_proba(grid)[:, 1], np.clip(plain.predict_proba(grid)[:, 1], eps, 1 - eps),
        atol=1e-12,
    )
    assert plain.predict_proba(grid)[:, 1].min() == 0.0
    assert clipped.predict_proba(grid).min() >= eps


def test_cir_integer_weights_are_repeated_rows(tied):
    s, t, w = tied
    a = CenteredIsotonicScaler().fit(s, t, sample_weight=w)
    rep = np.repeat(np.arange(len(s)), w.astype(int))
    b = CenteredIsotonicScaler().fit(s[rep], t[rep])
    np.testing.assert_allclose(a.calibrators_[0].X_thresholds_, b.calibrators_[0].X_thresholds_, rtol=1e-14)
    np.testing.assert_allclose(a.calibrators_[0].y_thresholds_, b.calibrators_[0].y_thresholds_, rtol=1e-14)


def test_cir_multiclass_maps_and_renormalisation():
    rng = np.random.default_rng(2)
    k, n = 3, 300
    y = rng.integers(0, k, size=n)
    z = 1.5 * (np.eye(k)[y] + rng.normal(size=(n, k)))
    est = CenteredIsotonicScaler(clip=None).fit(z, y)
    lp = log_softmax(z, axis=1)
    Q = np.empty_like(lp)
    for c in range(k):
        sc = lp[:, c] - logsumexp(np.delete(lp, c, axis=1), axis=1)
        Q[:, c] = _brute_force_cir(sc, (y == c).astype(float), np.ones(n))(sc)
    np.testing.assert_allclose(est.predict_proba(z), Q / Q.sum(axis=1, keepdims=True), atol=1e-10)


def test_cir_matches_cir_model_package(tied):
    """probmetrics' CIR is the ``cir-model`` package (not a dependency of skcal)."""
    cir_model = pytest.importorskip("cir_model")
    s, t, w = tied
    peer = cir_model.CenteredIsotonicRegression(out_of_bounds="clip").fit(s, t, sample_weight=w)
    est = CenteredIsotonicScaler(clip=None).fit(s, t, sample_weight=w)
    grid = np.linspace(s.min(), s.max(), 1001)
    np.testing.assert_allclose(est.predict_proba(grid)[:, 1], peer.predict(grid), atol=1e-12)


@pytest.mark.parametrize("rare", [True, False])
def test_cir_value_sort_path_matches_brute_force(rare):
    # unweighted boolean targets with a small class (>= 1024 rows, <= 1/8 of
    # them): the knots come from value sorts, not an argsort of the rows
    rng = np.random.default_rng(3)
    s = np.round(rng.normal(size=1500), 2)  # ties
    t = rng.random(1500) < 0.05 * (1 + np.tanh(s))
    if not rare:
        t = ~t  # the negatives are the small class
    assert 0 < min(t.sum(), (~t).sum()) <= 1500 / 8
    ref = _brute_force_cir(s, t.astype(float), np.ones(1500))
    x, y = centered_isotonic_knots(s, t)
    np.testing.assert_allclose(y, ref(x), atol=1e-12)
    grid = np.linspace(s.min() - 1, s.max() + 1, 3001)
    np.testing.assert_allclose(np.interp(grid, x, y), ref(grid), atol=1e-12)
    # the same knots as the argsort path (float targets)
    x2, y2 = centered_isotonic_knots(s, t.astype(float))
    np.testing.assert_allclose(x, x2, rtol=1e-14)
    np.testing.assert_allclose(y, y2, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("share", [0.0, 0.004, 0.05, 0.5, 0.95, 0.996, 1.0])
def test_cir_unit_weight_paths_match_brute_force(ties, share):
    """The unweighted boolean paths (value sorts for a small class, argsort otherwise) against the definition.

    The shares cover a small class of positives and of negatives (value
    sorts), balanced classes (argsort), one class only, and the smaller
    class at the lowest and the highest score (the runs at the ends).
    """
    rng = np.random.default_rng(int(1000 * share) + ties)
    n = 1200
    s = rng.normal(size=n)
    if ties:
        s = np.round(s, 1)
    t = rng.random(n) < share
    if 0 < share < 1:
        t[np.argmin(s)] = t[np.argmax(s)] = share < 0.5  # the smaller class at both ends
    ref = _brute_force_cir(s, t.astype(float), np.ones(n))
    x, y = centered_isotonic_knots(s, t)
    assert np.all(np.diff(x) > 0)
    grid = np.concatenate([np.linspace(s.min() - 1, s.max() + 1, 2001), s])
    np.testing.assert_allclose(np.interp(grid, x, y), ref(grid), atol=1e-12)
    # the weighted (argsort) path with unit weights gives the same knots
    x2, y2 = centered_isotonic_knots(s, t, np.ones(n))
    np.testing.assert_allclose(x, x2, rtol=1e-14)
    np.testing.assert_allclose(y, y2, rtol=1e-14, atol=1e-15)


def test_cir_multiclass_unweighted_equals_per_class_knots():
    """The multiclass fit (one argsort of y, value sorts per class) gives each class's knots exactly."""
    rng = np.random.default_rng(7)
    k, n = 12, 3000
    y = rng.integers(0, k, size=n)
    y[y == 3] = 4  # a class that never occurs
    z = (2.0 * (np.eye(k)[y] + rng.normal(size=(n, k)))).astype(np.float32)
    with pytest.warns(UserWarning, match="never occur"):
        est = CenteredIsotonicScaler(classes=np.arange(k), clip=1e-3).fit(z, y)
    lp = log_softmax(z.astype(np.float64), axis=1)
    for c in range(k):
        sc = lp[:, c] - logsumexp(np.delete(lp, c, axis=1), axis=1)
        x, yk = centered_isotonic_knots(sc, (y == c).astype(float), y_min=1e-3, y_max=1 - 1e-3)
        cal = est.calibrators_[c]
        np.testing.assert_allclose(cal.X_thresholds_, x, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cal.y_thresholds_, yk, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "case", ["distinct", "ulp_neighbours", "zero", "positive", "signed_zeros", "wide"]
)
def test_cir_key_sort_path_and_its_fallbacks_match_brute_force(case):
    """Balanced unweighted classes: scores and targets ordered by one value sort of keys
    carrying the target (also for scores one unit in the last place apart, an exact 0, or
    scores of one sign; sorted as the bits of floats, as int64s with the exact 0), or by
    an argsort where those keys do not fit 64 bits: -0.0 and +0.0 with large scores of
    both signs, or magnitudes from 1e-300 to 1e100 of both signs."""
    rng = np.random.default_rng(11)
    n = 1500
    s = rng.normal(scale=2, size=n)
    if case == "ulp_neighbours":
        s[1::2] = np.nextafter(s[0::2], np.inf)
    elif case == "zero":
        s[:20] = 0.0
    elif case == "positive":
        s = np.abs(s) + 0.5
    elif case == "signed_zeros":
        s[:20] = 0.0
        s[20:40] = -0.0
    elif case == "wide":
        s = np.sign(s) * 10.0 ** rng.uniform(-300, 100, n)
    t = rng.random(n) < 1 / (1 + np.exp(-np.clip(s, -30, 30)))
    sorted_ = _sorted_with_targets(s, t)
    assert (sorted_ is None) == (case in ("signed_zeros", "wide"))
    if sorted_ is not None:  # the value sort: the scores sorted exactly, their own targets
        order = np.lexsort((t, s))
        np.testing.assert_array_equal(sorted_[0], s[order])
        np.testing.assert_array_equal(np.signbit(sorted_[0]), np.signbit(s[order]))
        np.testing.assert_array_equal(sorted_[1], t[order])
    assert n / 8 < t.sum() < 7 * n / 8
    ref = _brute_force_cir(s, t.astype(float), np.ones(n))
    x, y = centered_isotonic_knots(s, t)
    assert np.all(np.diff(x) > 0)
    grid = np.concatenate([np.linspace(s.min() - 1, s.max() + 1, 2001), s])
    np.testing.assert_allclose(np.interp(grid, x, y), ref(grid), atol=1e-12)
    x2, y2 = centered_isotonic_knots(s, t, np.ones(n))  # the weighted (argsort) path
    np.testing.assert_allclose(x, x2, rtol=1e-14)
    np.testing.assert_allclose(y, y2, rtol=1e-14, atol=1e-15)
    # the binary fit reads the score column of the logits [0, s] (a view of its column): same knots
    cal = CenteredIsotonicScaler(clip=None).fit(s, t).calibrators_[0]
    np.testing.assert_array_equal(cal.X_thresholds_, x)
    np.testing.assert_array_equal(cal.y_thresholds_, y)
