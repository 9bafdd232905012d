"""The metric tester: every public metric x numpy / torch / dask x its arguments.

In the spirit of torchmetrics' ``MetricTester``: each case runs one public
metric of :mod:`skcal.metrics` with one set of arguments on every backend of
``conftest.BACKENDS`` and checks

1. the backend's result against the NumPy result (same arguments), and
2. the NumPy result against an independent reference written here (a plain
   loop over bins, scikit-learn's ``log_loss`` / ``brier_score_loss``,
   ``scipy.stats.binomtest``, scikit-learn's isotonic regression), or, where
   no short reference exists, against the metric of the rows repeated as
   many times as their integer weight (``sample_weight`` = repetition).

An argument that a backend does not support must raise a clear error there,
never be ignored: :func:`test_every_public_metric_has_a_case` fails when a
public metric has no case here.
"""

import numpy as np
import pytest
import scipy.stats
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import brier_score_loss, log_loss

from skcal import metrics as M

# --------------------------------------------------------------------------
# independent references
# --------------------------------------------------------------------------


def _event(d, kind, class_index=None, pos_label=None, binary=False):
    """``(score, outcome)`` of an event, from the definitions (no skcal code)."""
    if binary:
        y, P = d["yb"], d["P2"]
        col = 1 if pos_label in (None, "pos") else 0
        return P[:, col], (y == ("pos" if col == 1 else "neg")).astype(float)
    y, P = d["y"], d["P"]
    if kind == "top-label":
        return P.max(axis=1), (P.argmax(axis=1) == y).astype(float)
    return P[:, class_index], (y == class_index).astype(float)


def _ref_bin_ids(s, w, n_bins, strategy):
    """Right-closed bins; equal-mass: inverted-CDF quantile edges, or one bin per
    distinct value when there are at most ``n_bins`` of them."""
    if strategy == "uniform":
        return np.clip(np.ceil(s * n_bins).astype(int) - 1, 0, n_bins - 1)
    keep = w > 0
    values = np.unique(s[keep])
    if values.shape[0] <= n_bins:
        return np.searchsorted(values, s)
    edges = np.unique(np.quantile(s[keep], np.linspace(0, 1, n_bins + 1),
                                  method="inverted_cdf", weights=w[keep]))
    return np.searchsorted(edges[1:-1], s, side="left")


def _ref_bins(s, o, w, n_bins, strategy):
    """``[(W_m, mean score, mean outcome, rows)]`` of the non-empty bins, in order."""
    w = np.ones_like(s) if w is None else w
    ids = _ref_bin_ids(s, w, n_bins, strategy)
    out = []
    for m in range(n_bins):
        sel = ids == m
        W = w[sel].sum()
        if W > 0:
            out.append((W, np.dot(w[sel], s[sel]) / W, np.dot(w[sel], o[sel]) / W,
                        int(sel.sum()), np.dot(w[sel], o[sel])))
    return out


def _ref_ce(s, o, w, n_bins, strategy, norm):
    bins = _ref_bins(s, o, w, n_bins, strategy)
    total = sum(b[0] for b in bins)
    gaps = [abs(b[2] - b[1]) for b in bins]
    if norm == "l1":
        return sum(b[0] * g for b, g in zip(bins, gaps)) / total
    if norm == "l2":
        return np.sqrt(sum(b[0] * g**2 for b, g in zip(bins, gaps)) / total)
    return max(gaps)


def _ref_debiased_sq(s, o, w, n_bins, strategy):
    bins = _ref_bins(s, o, w, n_bins, strategy)
    total = sum(b[0] for b in bins)
    sq = 0.0
    for W, conf, acc, _, _ in bins:  # W is a number of samples (frequency weights)
        if W >= 2:
            sq += W / total * ((acc - conf) ** 2 - acc * (1 - acc) / (W - 1))
    return max(sq, 0.0)


def _ref_curve(s, o, w, n_bins, strategy):
    bins = _ref_bins(s, o, w, n_bins, strategy)
    total = sum(b[0] for b in bins)
    return {
        "prob_pred": [b[1] for b in bins], "prob_true": [b[2] for b in bins],
        "bin_weight": [b[0] / total for b in bins],
        "bin_count": [b[3] for b in bins],
    }


def _ref_spiegelhalter(s, o, w):
    w = np.ones_like(s) if w is None else w
    z = np.sum(w * (o - s) * (1 - 2 * s)) / np.sqrt(
        np.sum(w * (1 - 2 * s) ** 2 * s * (1 - s)))
    return {"statistic": z, "pvalue": 2 * scipy.stats.norm.sf(abs(z))}


def _ref_corp_brier(s, o, w):
    w = np.ones_like(s) if w is None else w
    iso = IsotonicRegression(y_min=0, y_max=1).fit(s, o, sample_weight=w).predict(s)
    base = np.average(o, weights=w)

    def bs(q):
        return np.average((q - o) ** 2, weights=w)

    return {"score": bs(s), "miscalibration": bs(s) - bs(iso),
            "discrimination": bs(np.full_like(s, base)) - bs(iso),
            "uncertainty": bs(np.full_like(s, base))}


# --------------------------------------------------------------------------
# the cases: (id, metric, arguments(data, weighted) -> (y, y_prob, kwargs), reference)
# --------------------------------------------------------------------------


def _multi(d, logits=False, **kw):
    if logits:
        kw["input_type"] = "logits"
    return d["y"], d["Z"] if logits else d["P"], kw


def _binary(d, one_d=True, **kw):
    return d["yb"], d["p"] if one_d else d["P2"], kw


def _binned_case(func, norm, kind, strategy, binary=False, one_d=True, logits=False,
                 pos_label=None, class_index=None, n_bins=7):
    kw = {"kind": kind, "strategy": strategy, "n_bins": n_bins}
    if class_index is not None:
        kw["class_index"] = class_index
    if binary:
        kw["pos_label"] = "pos" if pos_label is None else pos_label

    def args(d):
        if binary:
            return _binary(d, one_d, **kw)
        return _multi(d, logits, **kw)

    def ref(d, w):
        s, o = _event(d, kind, class_index, kw.get("pos_label"), binary)
        if norm == "debiased":
            return np.sqrt(_ref_debiased_sq(s, o, w, n_bins, strategy))
        if norm == "curve":
            return _ref_curve(s, o, w, n_bins, strategy)
        return _ref_ce(s, o, w, n_bins, strategy, norm)

    return func, args, ref


def _cases():
    C = {}
    for norm, func in [("l1", M.expected_calibration_error),
                       ("l2", M.rms_calibration_error),
                       ("max", M.maximum_calibration_error)]:
        C[f"{func.__name__}-top-uniform"] = _binned_case(func, norm, "top-label",
                                                         "uniform")
        C[f"{func.__name__}-top-quantile-logits"] = _binned_case(
            func, norm, "top-label", "quantile", logits=True)
    for strategy in ("uniform", "quantile"):
        C[f"calibration_error-binary-1d-pos-{strategy}"] = _binned_case(
            M.calibration_error, "l1", "binary", strategy, binary=True)
        C[f"calibration_error-binary-2col-neg-{strategy}"] = _binned_case(
            M.calibration_error, "l1", "binary", strategy, binary=True, one_d=False,
            pos_label="neg")
        C[f"calibration_error-class1-{strategy}"] = _binned_case(
            M.calibration_error, "l1", "classwise", strategy, class_index=1)
        C[f"debiased-binary-neg-{strategy}"] = _binned_case(
            M.debiased_calibration_error, "debiased", "binary", strategy,
            binary=True, one_d=False, pos_label="neg", n_bins=4)
        C[f"reliability_curve-binary-neg-{strategy}"] = _binned_case(
            M.reliability_curve, "curve", "binary", strategy, binary=True,
            one_d=False, pos_label="neg")
    C["debiased-top-quantile"] = _binned_case(
        M.debiased_calibration_error, "debiased", "top-label", "quantile", n_bins=4)

    def ce_classwise_all(d, w):  # mean over classes of the per-class ECE
        return np.mean([_ref_ce(*_event(d, "classwise", k), w, 5, "uniform", "l1")
                        for k in range(3)])

    C["calibration_error-classwise-all"] = (
        M.calibration_error,
        lambda d: _multi(d, kind="classwise", n_bins=5), ce_classwise_all)

    def brier_multi(d, w):
        onehot = np.eye(3)[d["y"]]
        return np.average(((d["P"] - onehot) ** 2).sum(axis=1), weights=w)

    C["brier_score-multiclass"] = (M.brier_score, lambda d: _multi(d), brier_multi)
    C["brier_score-binary-pos"] = (
        M.brier_score, lambda d: _binary(d, pos_label="pos"),
        lambda d, w: brier_score_loss(d["yb"], d["p"], pos_label="pos",
                                      sample_weight=w))
    C["brier_score-binary-2col"] = (
        M.brier_score, lambda d: _binary(d, False),
        lambda d, w: brier_score_loss(d["yb"] == "pos", d["p"], sample_weight=w))
    C["nll-logits"] = (
        M.negative_log_likelihood, lambda d: _multi(d, logits=True),
        lambda d, w: log_loss(d["y"], d["P"], sample_weight=w, labels=[0, 1, 2]))
    # text labels named by `labels` in the reverse order of the sorted ones
    C["nll-labels-reversed"] = (
        M.negative_log_likelihood,
        lambda d: (np.array(["x", "y", "z"])[d["y"]], d["P"][:, ::-1],
                   {"labels": ["z", "y", "x"]}),
        lambda d, w: log_loss(d["y"], d["P"], sample_weight=w, labels=[0, 1, 2]))
    C["ece-classwise-labels-reversed"] = (
        M.calibration_error,
        lambda d: (np.array(["x", "y", "z"])[d["y"]], d["P"][:, ::-1],
                   {"labels": ["z", "y", "x"], "kind": "classwise", "class_index": 0,
                    "n_bins": 5}),
        lambda d, w: _ref_ce(*_event(d, "classwise", 2), w, 5, "uniform", "l1"))
    C["nll-binary-pos"] = (
        M.negative_log_likelihood, lambda d: _binary(d, pos_label="pos"),
        lambda d, w: log_loss(d["yb"] == "pos", d["p"], sample_weight=w))
    C["spiegelhalter-binary-neg"] = (
        M.spiegelhalter_test, lambda d: _binary(d, False, kind="binary",
                                                pos_label="neg"),
        lambda d, w: _ref_spiegelhalter(*_event(d, "binary", None, "neg", True), w))
    C["spiegelhalter-top"] = (
        M.spiegelhalter_test, lambda d: _multi(d, logits=True),
        lambda d, w: _ref_spiegelhalter(*_event(d, "top-label"), w))
    C["brier_decomposition-binary-neg"] = (
        M.brier_decomposition, lambda d: _binary(d, False, kind="binary",
                                                 pos_label="neg"),
        lambda d, w: _ref_corp_brier(*_event(d, "binary", None, "neg", True), w))
    # no short independent reference: checked against the repeated rows
    C["ks-top"] = (M.kolmogorov_smirnov_calibration_test, lambda d: _multi(d), None)
    C["kuiper-class2"] = (M.kuiper_calibration_test,
                          lambda d: _multi(d, kind="classwise", class_index=2), None)
    C["smooth_ece-binary-neg"] = (
        M.smooth_calibration_error, lambda d: _binary(d, kind="binary", pos_label="neg"),
        None)
    C["smooth_reliability_curve-top"] = (
        M.smooth_reliability_curve, lambda d: _multi(d, logits=True, n_points=9), None)
    C["log_loss_decomposition-classwise"] = (
        M.log_loss_decomposition, lambda d: _multi(d, method="binned", n_bins=5), None)
    return C


CASES = _cases()


def _assert_same(got, want, rtol=1e-9, atol=1e-12):
    """Floats, or every numeric field of a Bunch / dict, equal within tolerance."""
    if isinstance(want, dict):
        for key, value in want.items():
            if isinstance(value, str):
                assert got[key] == value, key
            else:
                np.testing.assert_allclose(np.asarray(got[key], dtype=float),
                                           np.asarray(value, dtype=float),
                                           rtol=rtol, atol=atol, err_msg=key)
        return
    np.testing.assert_allclose(float(got), float(want), rtol=rtol, atol=atol)


def _run(func, y, y_prob, kw, backend, w=None):
    with backend.context():
        return func(y, backend.convert(y_prob), sample_weight=backend.convert(w), **kw)


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("case", list(CASES), ids=str)
def test_metric_matches_numpy_and_reference(case, weighted, backend, metric_data):
    func, args, ref = CASES[case]
    d = metric_data
    y, y_prob, kw = args(d)
    w = d["w"] if weighted else None
    want = func(y, y_prob, sample_weight=w, **kw)
    got = _run(func, y, y_prob, kw, backend, w)
    _assert_same(got, want)
    if backend.name != "numpy":
        return
    if ref is not None:
        _assert_same(want, ref(d, w), rtol=1e-9)
    if weighted:  # integer weights = repeated rows (bin_count counts rows)
        rep = d["rep"]
        repeated = func(y[rep], y_prob[rep], **kw)
        if isinstance(want, dict):
            want = {k: v for k, v in want.items() if k != "bin_count"}
        _assert_same(repeated, want, rtol=1e-9)


_NOT_METRICS = {"PROBA_SUM_TOL", "get_scorer", "get_scorer_names",
                "binomial_interval", "confidence_interval",
                "paired_difference_interval"}


def test_every_public_metric_has_a_case():
    covered = {func.__name__ for func, _, _ in CASES.values()}
    public = {name for name in M.__all__
              if name not in _NOT_METRICS and not name.endswith("_scorer")}
    assert public - covered == set()


# --------------------------------------------------------------------------
# reliability_curve: interval, confidence_level, n_bootstrap, random_state
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method,scipy_method", [("clopper-pearson", "exact"),
                                                 ("wilson", "wilson")])
@pytest.mark.parametrize("level", [0.9, 0.5])
def test_reliability_curve_interval_every_backend(method, scipy_method, level,
                                                  backend, metric_data):
    d = metric_data
    kw = dict(kind="binary", pos_label="neg", n_bins=5, interval=method,
              confidence_level=level)
    want = M.reliability_curve(d["yb"], d["P2"], sample_weight=d["w"], **kw)
    got = _run(M.reliability_curve, d["yb"], d["P2"], kw, backend, d["w"])
    _assert_same(got, want)
    # integer weights: the binomial intervals of scipy for every bin
    bins = _ref_bins(*_event(d, "binary", None, "neg", True), d["w"], 5, "uniform")
    for j, (W, _, _, _, hits) in enumerate(bins):
        ci = scipy.stats.binomtest(int(round(hits)), int(round(W))).proportion_ci(
            confidence_level=level, method=scipy_method)
        assert got.prob_true_low[j] == pytest.approx(ci.low, abs=1e-9)
        assert got.prob_true_high[j] == pytest.approx(ci.high, abs=1e-9)


def test_reliability_curve_bootstrap_every_backend(backend, metric_data):
    d = metric_data
    kw = dict(kind="binary", pos_label="neg", n_bins=5, n_bootstrap=50)
    if backend.name == "dask":  # refused, never ignored
        with pytest.raises(ValueError, match="n_bootstrap"):
            _run(M.reliability_curve, d["yb"], d["p"], {**kw, "random_state": 0},
                 backend)
        return
    a = _run(M.reliability_curve, d["yb"], d["p"], {**kw, "random_state": 0}, backend)
    _assert_same(a, M.reliability_curve(d["yb"], d["p"], random_state=0, **kw))
    b = _run(M.reliability_curve, d["yb"], d["p"], {**kw, "random_state": 1}, backend)
    assert not np.allclose(a.prob_true_low, b.prob_true_low)  # the seed is used
    c = _run(M.reliability_curve, d["yb"], d["p"],
             {**kw, "random_state": 0, "confidence_level": 0.5}, backend)
    assert np.all(c.prob_true_high - c.prob_true_low
                  <= a.prob_true_high - a.prob_true_low + 1e-12)
    assert np.any(c.prob_true_high - c.prob_true_low
                  < a.prob_true_high - a.prob_true_low)


# --------------------------------------------------------------------------
# confidence_interval / paired_difference_interval on every backend
# --------------------------------------------------------------------------


@pytest.mark.parametrize("metric,params", [
    ("ece", {"n_bins": 5}),
    ("debiased_calibration_error", {"n_bins": 4}),
    ("nll", {}),
    ("accuracy", {}),
])
@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_confidence_interval_every_backend(metric, params, method, backend,
                                           metric_data):
    d = metric_data
    kw = dict(method=method, n_resamples=40, random_state=3, confidence_level=0.8,
              **params)
    want = M.confidence_interval(metric, d["y"], d["P"], **kw)
    with backend.context():
        got = M.confidence_interval(metric, d["y"], backend.convert(d["P"]), **kw)
    for key in ("estimate", "low", "high", "standard_error"):
        assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-12), key
    assert 0.0 <= got.low <= got.high <= 1.0 or metric == "nll"


def test_paired_difference_interval_every_backend(backend, metric_data):
    d = metric_data
    kw = dict(n_resamples=30, random_state=0, n_bins=5)
    P_b = np.roll(d["P"], 1, axis=1)
    want = M.paired_difference_interval("ece", d["y"], d["P"], P_b, **kw)
    with backend.context():
        got = M.paired_difference_interval("ece", d["y"], backend.convert(d["P"]),
                                           backend.convert(P_b), **kw)
    for key in ("estimate", "low", "high", "estimate_a", "estimate_b"):
        assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-12), key
    assert want.estimate_a == pytest.approx(
        _ref_ce(*_event(d, "top-label"), None, 5, "uniform", "l1"))
