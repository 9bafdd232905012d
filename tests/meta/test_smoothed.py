"""SmoothedCalibrator: the mixture (1 - lam) p + lam / K against its definition."""

import re
import warnings

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from _helpers import quiet_fit
from skcal import IsotonicScaler, SmoothedCalibrator, TemperatureScaler
from skcal.meta._smoothed import mixture_weight


def _data(n=400, k=3, scale=4.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    Z = scale * (np.eye(k)[y] + rng.normal(size=(n, k)))
    return Z, y


@pytest.mark.parametrize("pseudo_count", [1.0, 3.0, 0.25])
def test_smoothed_matches_mixture_definition(pseudo_count):
    # reference: the inner calibrator fitted on its own, mixed by hand
    Z, y = _data()
    n, k = Z.shape
    P = IsotonicScaler(clip=None).fit(Z, y).predict_proba(Z)
    lam = pseudo_count / (n + pseudo_count)
    expected = (1 - lam) * P + lam / k
    sm = SmoothedCalibrator(IsotonicScaler(clip=None), pseudo_count=pseudo_count).fit(Z, y)
    assert sm.mix_weight_ == pytest.approx(lam, rel=1e-15)
    np.testing.assert_allclose(sm.predict_proba(Z), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        sm.predict_log_proba(Z), np.log(expected), rtol=1e-12, atol=1e-12
    )


def test_smoothed_default_is_calarena_mix_and_laplace_is_add_one():
    # probmetrics 1.3 MixtureCalibrator: lam = output_constant / (n + 1), constant 1
    Z, y = _data(n=199)
    assert SmoothedCalibrator().fit(Z, y).mix_weight_ == pytest.approx(1 / 200, rel=1e-15)
    # pseudo_count = K is add-one smoothing of every class: (n p + 1) / (n + K)
    P = IsotonicScaler(clip=None).fit(Z, y).predict_proba(Z)
    sm = SmoothedCalibrator(IsotonicScaler(clip=None), pseudo_count=3).fit(Z, y)
    np.testing.assert_allclose(sm.predict_proba(Z), (199 * P + 1) / (199 + 3), rtol=1e-12)


def test_smoothed_never_outputs_zero_or_one():
    # separable rows: unclipped isotonic gives exact 0 and 1
    Z, y = _data(scale=20.0)
    inner = IsotonicScaler(clip=None).fit(Z, y).predict_proba(Z)
    assert (inner == 0).any() and (inner == 1).any()
    sm = SmoothedCalibrator(IsotonicScaler(clip=None)).fit(Z, y)
    P = sm.predict_proba(Z)
    lam, k = sm.mix_weight_, 3
    assert P.min() == pytest.approx(lam / k, rel=1e-12)
    assert P.max() == pytest.approx(1 - lam * (k - 1) / k, rel=1e-12)
    assert np.isfinite(sm.predict_log_proba(Z)).all()


def test_smoothed_parametric_map_is_recovered_in_the_limit():
    Z, y = _data(n=2000)
    P_ts = TemperatureScaler().fit(Z, y).predict_proba(Z)
    exact = SmoothedCalibrator(TemperatureScaler(), pseudo_count=0).fit(Z, y)
    np.testing.assert_allclose(exact.predict_proba(Z), P_ts, rtol=1e-14, atol=1e-16)
    gaps = []
    for n in (200, 2000):
        sm = SmoothedCalibrator(TemperatureScaler()).fit(Z[:n], y[:n])
        P = sm.predict_proba(Z)
        P_ref = TemperatureScaler().fit(Z[:n], y[:n]).predict_proba(Z)
        gap = np.abs(P - P_ref).max()
        # |p' - p| = lam |1/K - p| <= lam (1 - 1/K)
        assert gap <= sm.mix_weight_ * (1 - 1 / 3) + 1e-15
        gaps.append(gap)
    assert gaps[1] < gaps[0] / 5


def test_smoothed_weights_count_as_rows():
    Z, y = _data(n=300)
    # equal weights are a scale: n = 300 rows whatever their value
    for c in (2.0, 1e-3):
        sm = SmoothedCalibrator(pseudo_count=1.0).fit(Z, y, sample_weight=np.full(300, c))
        assert sm.mix_weight_ == pytest.approx(1 / 301, rel=1e-13)
    w = np.arange(300) % 3
    rep = SmoothedCalibrator().fit(np.repeat(Z, w, axis=0), np.repeat(y, w))
    wtd = SmoothedCalibrator().fit(Z, y, sample_weight=w)
    assert wtd.mix_weight_ == pytest.approx(rep.mix_weight_, rel=1e-15)
    np.testing.assert_allclose(wtd.predict_proba(Z), rep.predict_proba(Z), atol=1e-12)


def _heldout_log_p(Z, y, cv):
    """Out-of-fold log-probability of the true class, interleaved folds (reference)."""
    n = len(y)
    out = np.empty(n)
    for f in range(cv):
        test = np.arange(n) % cv == f
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iso = IsotonicScaler(clip=None, classes=np.arange(3)).fit(Z[~test], y[~test])
        with np.errstate(divide="ignore"):
            LP = np.log(iso.predict_proba(Z[test]))
        out[test] = LP[np.arange(test.sum()), y[test]]
    return out


def test_smoothed_cv_minimises_heldout_nll():
    Z, y = _data(n=500, scale=6.0)
    cv = 5
    sm = quiet_fit(SmoothedCalibrator(IsotonicScaler(clip=None), pseudo_count="cv", cv=cv), Z, y)
    log_p = _heldout_log_p(Z, y, cv)
    assert np.isinf(log_p).any()  # unsmoothed isotonic fails on held-out rows

    def nll(lam):
        return -np.mean(np.log((1 - lam) * np.exp(log_p) + lam / 3))

    m = 500 * (cv - 1) / cv  # rows each fold's calibrator was fitted on
    a = sm.pseudo_count_
    lam_cv = a / (m + a)
    grid = np.geomspace(1e-8, 0.5, 4001)
    best = min(nll(g) for g in grid)
    assert nll(lam_cv) <= best + 1e-12
    assert sm.mix_weight_ == pytest.approx(a / (500 + a), rel=1e-12)


def test_smoothed_group_splitter_error_names_the_list_of_splits_route():
    from sklearn.model_selection import GroupKFold, PredefinedSplit

    Z, y = _data(n=300)
    groups = np.arange(300) // 6
    with pytest.raises(ValueError, match=re.escape(
            "SmoothedCalibrator: cv=GroupKFold(...) needs groups, which fit does not take. "
            "Pass the splits instead: cv=list(GroupKFold(...).split(X, y, groups)).")):
        SmoothedCalibrator(IsotonicScaler(), pseudo_count="cv", cv=GroupKFold(3)).fit(Z, y)
    splits = list(GroupKFold(3).split(Z, y, groups))
    fold = np.empty(300, dtype=int)
    for f, (_, test) in enumerate(splits):
        fold[test] = f
    a = quiet_fit(SmoothedCalibrator(IsotonicScaler(), pseudo_count="cv", cv=splits), Z, y)
    b = quiet_fit(SmoothedCalibrator(IsotonicScaler(), pseudo_count="cv",
                                     cv=PredefinedSplit(fold)), Z, y)
    assert a.pseudo_count_ == b.pseudo_count_ and a.pseudo_count_ > 0


def test_mixture_weight_ends_and_reference():
    # perfect predictions: no smoothing
    assert mixture_weight(np.zeros(10), 4) == 0.0
    # always-wrong zero probabilities: everything on the uniform
    assert mixture_weight(np.full(10, -np.inf), 4) == 1.0
    # nine rows with p = 0.99, one with p = 0, K = 10: the NLL's derivative
    # 9 * 0.89 / (0.99 - 0.89 lam) - 1 / lam vanishes at lam = 0.99 / 8.9
    with np.errstate(divide="ignore"):
        log_p = np.log([0.99] * 9 + [0.0])
    assert mixture_weight(log_p, 10) == pytest.approx(0.99 / 8.9, abs=1e-9)
    with pytest.raises(ValueError, match="log-probabilities"):
        mixture_weight([0.5], 2)


def test_smoothed_errors():
    Z, y = _data(n=40)
    with pytest.raises(ValueError, match="input_type='probabilities' on the SmoothedCalibrator"):
        SmoothedCalibrator(IsotonicScaler(input_type="probabilities")).fit(Z, y)
    with pytest.raises(ValueError, match="at least 10 rows"):
        SmoothedCalibrator(pseudo_count="cv", cv=5).fit(Z[:8], y[:8])
    with pytest.raises(InvalidParameterError, match="pseudo_count"):
        SmoothedCalibrator(pseudo_count=-1.0).fit(Z, y)
    with pytest.raises(InvalidParameterError, match="calibrator"):
        SmoothedCalibrator(calibrator="isotonic").fit(Z, y)


def test_smoothed_torch_follows_input():
    torch = pytest.importorskip("torch")
    Z, y = _data()
    sm = SmoothedCalibrator(TemperatureScaler()).fit(Z, y)
    Zt = torch.from_numpy(Z)
    P = sm.predict_proba(Zt)
    assert isinstance(P, torch.Tensor) and P.dtype == torch.float64
    np.testing.assert_allclose(P.numpy(), sm.predict_proba(Z), rtol=1e-10)
    fitted_on_torch = SmoothedCalibrator(TemperatureScaler()).fit(Zt, torch.from_numpy(y))
    np.testing.assert_allclose(fitted_on_torch.predict_proba(Z), sm.predict_proba(Z), rtol=1e-8)


def test_smoothed_exports_through_its_calibrator():
    torch = pytest.importorskip("torch")
    Z, y = _data()
    sm = SmoothedCalibrator(TemperatureScaler(), pseudo_count=30.0).fit(Z, y)
    out = sm.to_torch(dtype=torch.float64)(torch.from_numpy(Z)).numpy()
    # reference: the temperature's softmax mixed by hand
    T = sm.calibrator_.temperature_
    E = np.exp(Z / T - (Z / T).max(axis=1, keepdims=True))
    ref = (1 - sm.mix_weight_) * E / E.sum(axis=1, keepdims=True) + sm.mix_weight_ / 3
    np.testing.assert_allclose(np.exp(out), ref, rtol=1e-12)
    from skcal import HistogramCalibrator

    hist = SmoothedCalibrator(HistogramCalibrator()).fit(Z, y)
    with pytest.raises(NotImplementedError, match="HistogramCalibrator has no closed-form"):
        hist.to_torch()


def test_smoothed_isotonic_matches_probmetrics_isotonic_mix():
    # the peer: probmetrics 1.3's "isotonic-mix" (MixtureCalibrator, lam = 1 / (n + 1))
    pytest.importorskip("probmetrics")
    from probmetrics.calibrators import get_calibrator
    from scipy.special import softmax

    Z, y = _data(n=300, scale=2.0)
    peer = get_calibrator("isotonic", calibrate_with_mixture=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P_peer = peer.fit(softmax(Z, axis=1), y).predict_proba(softmax(Z, axis=1))
    P = SmoothedCalibrator(IsotonicScaler(clip=None)).fit(Z, y).predict_proba(Z)
    np.testing.assert_allclose(P, np.asarray(P_peer, dtype=np.float64), atol=1e-6)


def test_cv_pseudo_count_counts_rows_whatever_one_weight():
    """pseudo_count='cv' reads its a in rows, as n: raising one row's weight
    from 1 to 100 (fractional weights: each row counts once) changes a a little,
    not by a factor of 100 (it summed weights scaled to a maximum of 1)."""
    import warnings

    from skcal import SmoothedCalibrator
    from skcal.datasets import load_cifar10_resnet20

    d = load_cifar10_resnet20()
    X, y = d.logits_val[:1500], d.y_val[:1500]
    a = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for big in (1.0, 100.5):
            w = np.ones(len(y))
            w[0] = big
            a.append(SmoothedCalibrator(pseudo_count="cv").fit(X, y, sample_weight=w).pseudo_count_)
    assert np.isfinite(a[0]) and a[0] > 0
    assert a[1] == pytest.approx(a[0], rel=0.3)
