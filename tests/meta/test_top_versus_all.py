"""TopVersusAllCalibrator against the paper's definition (Le Coz et al. 2024)."""

import warnings

import numpy as np
import pytest
from scipy.special import softmax

from skcal import (
    HistogramCalibrator,
    IsotonicScaler,
    PlattScaler,
    TopVersusAllCalibrator,
)
from skcal.utils.discovery import all_calibrators


def _data(n=600, k=10, scale=2.0, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    Z = scale * (1.2 * np.eye(k)[y] + rng.normal(size=(n, k)))
    return Z, y


def _paper_tva(binary, Z_cal, y_cal, Z):
    """The paper's top-versus-all, written from its definition.

    The binary calibrator is fitted on the confidence ``c = max softmax(z)``
    (a probability) with label ``1[argmax = y]``; the calibrated confidence
    replaces ``c`` and the other classes share ``1 - c'`` in proportion.
    """
    P_cal = softmax(Z_cal, axis=1)
    correct = (P_cal.argmax(axis=1) == y_cal).astype(int)
    g = binary.set_params(input_type="probabilities").fit(P_cal.max(axis=1), correct)
    P = softmax(Z, axis=1)
    top = P.argmax(axis=1)
    c = P.max(axis=1)
    c_new = g.predict_proba(c)[:, 1]
    out = P * ((1 - c_new) / (1 - c))[:, None]
    out[np.arange(len(c)), top] = c_new
    return out


@pytest.mark.parametrize("binary", [PlattScaler, IsotonicScaler])
def test_tva_matches_paper_definition(binary):
    Z, y = _data()
    ref = _paper_tva(binary(), Z[:400], y[:400], Z[400:])
    tva = TopVersusAllCalibrator(binary()).fit(Z[:400], y[:400])
    P = tva.predict_proba(Z[400:])
    rows = np.arange(200)
    top = Z[400:].argmax(axis=1)
    # the top class gets the paper's calibrated confidence where it is above
    # 1/K (isotonic gives its lowest block 1e-6; raised, see the test below)
    ok = ref[rows, top] > 0.1 + 1e-6
    assert ok.sum() > 150
    np.testing.assert_allclose(P[rows, top][ok], ref[rows, top][ok], rtol=1e-7)
    # where the paper's proportional shares keep the top class on top, the
    # whole vector is the paper's
    keeps = np.all(ref <= ref[rows, top][:, None], axis=1) & ok
    assert 20 < keeps.sum() < 200
    np.testing.assert_allclose(P[keeps], ref[keeps], rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert tva.top1_accuracy_ == pytest.approx(np.mean(Z[:400].argmax(1) == y[:400]))


def test_tva_calibrates_the_confidence():
    # over-confident logits: the calibrated mean confidence meets the accuracy
    Z, y = _data(n=4000, scale=4.0)
    P0 = softmax(Z, axis=1)
    acc = np.mean(P0.argmax(1) == y)
    assert P0.max(axis=1).mean() > acc + 0.1
    P = TopVersusAllCalibrator().fit(Z, y).predict_proba(Z)
    assert P.max(axis=1).mean() == pytest.approx(acc, abs=0.01)


@pytest.mark.parametrize("name, cls", all_calibrators(), ids=[n for n, _ in all_calibrators()])
def test_tva_keeps_argmax_for_every_registered_calibrator(name, cls):
    Z, y = _data(n=300, k=5, scale=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tva = TopVersusAllCalibrator(cls()).fit(Z, y)
    P = tva.predict_proba(Z)
    np.testing.assert_array_equal(P.argmax(axis=1), Z.argmax(axis=1))
    np.testing.assert_array_equal(tva.predict(Z), Z.argmax(axis=1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-10)


def test_tva_mixes_the_other_shares_only_as_far_as_needed():
    # over-confident logits with many near ties: proportional shares would
    # lift the runner-up above the calibrated confidence
    Z, y = _data(n=3000, k=20, scale=3.0)
    tva = TopVersusAllCalibrator().fit(Z, y)
    P = tva.predict_proba(Z)
    P0 = softmax(Z, axis=1)
    n, k = P.shape
    rows, top = np.arange(n), Z.argmax(axis=1)
    c_cal = tva.calibrator_.predict_proba(np.log(P0.max(1)) - np.log1p(-P0.max(1)))[:, 1]
    np.testing.assert_allclose(P[rows, top], c_cal, rtol=1e-9)
    shares = P0 * ((1 - c_cal) / (1 - P0.max(1)))[:, None]
    shares[rows, top] = 0
    conflict = shares.max(axis=1) > c_cal
    assert conflict.mean() > 0.2
    S = np.sort(P, axis=1)
    # there the runner-up sits exp(-1e-6) below the top class ...
    np.testing.assert_allclose(S[conflict, -1] / S[conflict, -2], np.exp(1e-6), rtol=1e-9)
    # ... and each other share is (1 - a) p_k / (1 - c) + a / (K - 1), one a per row
    rest = np.ones_like(P, dtype=bool)
    rest[rows, top] = False
    q = (P[rest].reshape(n, k - 1) / (1 - c_cal)[:, None])
    r = (P0[rest].reshape(n, k - 1) / (1 - P0.max(1))[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (q - r) / (1 / (k - 1) - r)
    np.testing.assert_allclose(a[conflict], a[conflict][:, :1] * np.ones((1, k - 1)), rtol=1e-6)
    np.testing.assert_allclose(q[~conflict], r[~conflict], rtol=1e-9)


def test_tva_raises_a_confidence_below_one_over_k():
    # rows whose top-1 is always wrong get c' = 1e-6 from isotonic regression
    rng = np.random.default_rng(3)
    k, n = 5, 1000
    Z = rng.normal(size=(n, k))
    y = Z.argmax(axis=1)
    low = np.sort(softmax(Z, 1), 1)[:, -1] < 0.35
    y[low] = (y[low] + 1) % k
    tva = TopVersusAllCalibrator(IsotonicScaler()).fit(Z, y)
    P = tva.predict_proba(Z[low])
    s_low = -np.log(k - 1) + 1e-6
    np.testing.assert_allclose(P.max(axis=1), 1 / (1 + np.exp(-s_low)), rtol=1e-12)
    # the other classes share the rest evenly
    S = np.sort(P, axis=1)
    even = np.broadcast_to(((1 - S[:, -1]) / (k - 1))[:, None], S[:, :-1].shape)
    np.testing.assert_allclose(S[:, :-1], even, rtol=1e-9)
    np.testing.assert_array_equal(P.argmax(axis=1), Z[low].argmax(axis=1))


def test_tva_binary_is_symmetric_in_the_score():
    rng = np.random.default_rng(1)
    s = rng.normal(size=500) * 3
    y = (s + 2 * rng.normal(size=500) > 0).astype(int)
    tva = TopVersusAllCalibrator().fit(s, y)
    P, Pm = tva.predict_proba(s), tva.predict_proba(-s)
    np.testing.assert_allclose(P[:, 1], Pm[:, 0], rtol=1e-12)
    assert (P.max(axis=1) >= 0.5).all()


def test_tva_warns_when_every_prediction_is_correct():
    Z, y = _data(n=200, k=3, scale=30.0)
    keep = Z.argmax(1) == y
    with pytest.warns(UserWarning, match="top-1 prediction of the calibration set is correct"):
        TopVersusAllCalibrator(IsotonicScaler()).fit(Z[keep], y[keep])


def test_tva_errors():
    Z, y = _data(n=50, k=3)
    with pytest.raises(ValueError, match="on the TopVersusAllCalibrator"):
        TopVersusAllCalibrator(PlattScaler(input_type="probabilities")).fit(Z, y)


def test_tva_torch_follows_input():
    torch = pytest.importorskip("torch")
    Z, y = _data(n=300, k=4)
    tva = TopVersusAllCalibrator().fit(Z, y)
    Zt = torch.from_numpy(Z.astype(np.float32))
    P = tva.predict_proba(Zt)
    assert isinstance(P, torch.Tensor) and P.dtype == torch.float32
    np.testing.assert_allclose(P.numpy(), tva.predict_proba(Z), atol=1e-5)


def test_top_versus_all_rows_sum_to_one_for_huge_logits():
    # before the per-row shift, A - log_rest cancelled: sums 4.59 at -1e30, 0.96 at 1e15
    from skcal import TopVersusAllCalibrator
    from skcal.datasets import make_logits

    X, y = make_logits(300, 4)
    c = TopVersusAllCalibrator().fit(X, y)
    ref = c.predict_proba(X[:5])
    for v in (-1e30, -1e10, 1e15):
        P = c.predict_proba(np.full((3, 4), v))
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(P, c.predict_proba(np.zeros((3, 4))), atol=1e-12)
    np.testing.assert_allclose(c.predict_proba(X[:5] + 1e6), ref, atol=1e-6)


def _mix_and_low_cases():
    """(fitted TvA, logits): one set whose rows need the even-share mixing, one
    whose confidences are raised to about 1 / K (both branches of the map)."""
    Z, y = _data(n=3000, k=20, scale=3.0)
    yield "mix", TopVersusAllCalibrator().fit(Z, y), Z
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(1000, 5))
    y = Z.argmax(axis=1)
    low = np.sort(softmax(Z, 1), 1)[:, -1] < 0.35
    y[low] = (y[low] + 1) % 5
    yield "low", TopVersusAllCalibrator(IsotonicScaler()).fit(Z, y), Z
    s = rng.normal(size=500) * 3
    yb = (s + 2 * rng.normal(size=500) > 0).astype(int)
    yield "binary", TopVersusAllCalibrator(PlattScaler()).fit(s, yb), s


def test_tva_to_torch_equals_predict_proba_on_both_branches():
    torch = pytest.importorskip("torch")
    for name, tva, Z in _mix_and_low_cases():
        ref = tva.predict_log_proba(Z)
        out = tva.to_torch(dtype=torch.float64)(torch.from_numpy(Z)).numpy()
        np.testing.assert_allclose(np.exp(out), np.exp(ref), rtol=0, atol=1e-12, err_msg=name)
        # log(1 - c') of the isotonic map's c' near 1: its own export agrees
        # with predict_proba to ~1e-8 relative there
        np.testing.assert_allclose(out, ref, rtol=1e-8, atol=1e-12, err_msg=name)
        np.testing.assert_array_equal(out.argmax(axis=1), ref.argmax(axis=1))
        out32 = tva.to_torch()(torch.from_numpy(Z.astype(np.float32))).exp().numpy()
        np.testing.assert_allclose(out32, tva.predict_proba(Z.astype(np.float32)),
                                   rtol=0, atol=1e-6, err_msg=name)


def test_tva_to_onnx_equals_predict_proba_on_both_branches():
    ort = pytest.importorskip("onnxruntime")
    from skcal.onnx import to_onnx

    for name, tva, Z in _mix_and_low_cases():
        X = Z if Z.ndim == 2 else Z[:, None]
        sess = ort.InferenceSession(to_onnx(tva, dtype="float64").SerializeToString())
        P, LP = sess.run(None, {sess.get_inputs()[0].name: X})
        np.testing.assert_allclose(LP, tva.predict_log_proba(Z), rtol=1e-8, atol=1e-11,
                                   err_msg=name)
        np.testing.assert_allclose(P, tva.predict_proba(Z), rtol=0, atol=1e-12, err_msg=name)


def test_tva_export_refused_without_a_closed_form_inner_map():
    pytest.importorskip("torch")
    Z, y = _data(n=300, k=4)
    tva = TopVersusAllCalibrator(HistogramCalibrator()).fit(Z, y)
    with pytest.raises(NotImplementedError, match="HistogramCalibrator has no closed-form"):
        tva.to_torch()


def test_top_versus_all_one_row_raises_no_probability_warning():
    """The inner calibrator's input is the wrapper's own score: one or two
    rows of it in [0, 1] are no sign that the user passed probabilities."""
    from skcal.datasets import load_agnews_gpt2
    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    d = load_agnews_gpt2()
    tva = TopVersusAllCalibrator().fit(d.logits_val, d.y_val)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProbabilitiesAsLogitsWarning)
        P1 = tva.predict_proba(d.logits_test[:1])
    np.testing.assert_allclose(P1, tva.predict_proba(d.logits_test[:5])[:1], rtol=1e-12)


def test_smoothed_warns_once_for_probability_like_input():
    from skcal import SmoothedCalibrator
    from skcal.datasets import load_agnews_gpt2
    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    d = load_agnews_gpt2()
    s = SmoothedCalibrator().fit(d.logits_val, d.y_val)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s.predict_proba(np.full((3, 4), 0.25))
    assert [w.category for w in caught] == [ProbabilitiesAsLogitsWarning]
