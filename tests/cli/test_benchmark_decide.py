"""The conclusions of ``skcal benchmark``: recommendation line, summary across sets, pictures."""

import csv
import math
import warnings

import numpy as np
import pytest
from scipy.special import log_softmax
from sklearn.utils import Bunch

from skcal import AutoCalibrator
from skcal.benchmark import _benchmark
from skcal.benchmark._decide import (
    format_recommendation,
    format_summary,
    summarize,
    write_summary_csv,
)


def _run(*args, **kwargs):
    # the BCa interval of add_intervals divides inf by inf (a RuntimeWarning)
    # when a difference to the best method is 0 on nearly every resample (equal
    # accuracies on these synthetic sets): a metrics matter, not the rows tested
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _benchmark.run_benchmark(*args, **kwargs)


def _set(name, n=600, k=3, scale=4.0, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=2 * n)
    Z = scale * (np.eye(k)[y] + rng.normal(size=(2 * n, k)))
    return Bunch(name=name, logits_val=Z[:n], y_val=y[:n], logits_test=Z[n:],
                 y_test=y[n:], n_classes=k, info={})


def test_format_recommendation_lines():
    rec = dict(method="matrix", within_noise=["temperature"], nll=0.2208,
               nll_uncalibrated=0.4301, delta=-0.2093, low=-0.22, high=-0.20)
    assert format_recommendation(rec) == (
        "Recommended: matrix — test NLL 0.2208 vs 0.4301 uncalibrated "
        "(-0.209 [-0.220, -0.200]); among AutoCalibrator's candidates, temperature is "
        "within one standard error in cross-validation on the calibration split")
    rec.update(method="identity", within_noise=[], nll=0.4301)
    assert format_recommendation(rec).startswith(
        "Recommended: no calibration — test NLL 0.4301")


def _row(d, m, nll, brier, ece, worse=False):
    return dict(dataset=d, method=m, nll=nll, brier=brier, ece=ece, worse=worse)


def test_summarize_matches_hand_computation():
    rows = [
        _row("a", "uncalibrated", 1.0, 0.5, 0.10), _row("a", "temperature", 0.8, 0.4, 0.02),
        _row("a", "isotonic", 0.9, 0.45, 0.01),
        _row("b", "uncalibrated", 0.5, 0.3, 0.05), _row("b", "temperature", 0.45, 0.28, 0.03),
        _row("b", "isotonic", 0.6, 0.31, 0.01, worse=True),
        _row("c", "uncalibrated", 0.3, 0.2, 0.04), _row("c", "temperature", 0.3, 0.2, 0.04),
        _row("c", "isotonic", 0.25, 0.19, 0.02),
    ]
    out = {s["method"]: s for s in summarize(rows, n_resamples=200)}
    iso, ts = out["isotonic"], out["temperature"]
    # NLL ranks: a: ts 1, iso 2, unc 3; b: ts 1, unc 2, iso 3; c: iso 1, ts/unc 2.5
    assert iso["mean_rank_nll"] == pytest.approx((2 + 3 + 1) / 3)
    assert ts["mean_rank_nll"] == pytest.approx((1 + 1 + 2.5) / 3)
    assert iso["win_rate_vs_uncalibrated"] == pytest.approx(2 / 3)
    assert ts["win_rate_vs_uncalibrated"] == pytest.approx((1 + 1 + 0.5) / 3)  # a tie is 1/2
    assert iso["win_rate_vs_temperature"] == pytest.approx(1 / 3)
    assert math.isnan(ts["win_rate_vs_temperature"])  # not against itself
    diffs = np.array([0.1, -0.1, 0.05])
    assert iso["phi_nll"] == pytest.approx(diffs.mean())
    assert iso["phi_nll_ci"] == pytest.approx(1.96 * diffs.std(ddof=1) / np.sqrt(3))
    assert iso["phi_brier"] == pytest.approx(np.mean([0.05, -0.01, 0.01]))
    assert iso["n_worse_nll"] == 1 and ts["n_worse_nll"] == 0
    lo, hi = iso["win_rate_vs_uncalibrated_low"], iso["win_rate_vs_uncalibrated_high"]
    assert 0 <= lo <= 2 / 3 <= hi <= 1
    # ECE ranks isotonic first everywhere: 3 sets, so mean ECE rank 1
    assert iso["mean_rank_ece"] == pytest.approx(1.0)
    text = format_summary(list(out.values()))
    assert max(map(len, text.splitlines())) <= 120


def test_win_rate_counts_numerical_noise_as_a_tie():
    """Two solvers of one problem whose NLLs differ by 1e-9 tie (half a win);
    a difference of 1e-3 still wins, an infinite NLL still loses."""
    rows = []
    for d, gap in (("a", 1e-9), ("b", 1e-9), ("c", -1e-3)):
        rows += [_row(d, "uncalibrated", 0.6, 0.3, 0.1),
                 _row(d, "temperature", 0.4, 0.2, 0.05),
                 _row(d, "probmetrics-temperature", 0.4 + gap, 0.2, 0.05),
                 _row(d, "sklearn-isotonic", math.inf, 0.2, 0.05)]
    out = {s["method"]: s for s in summarize(rows, n_resamples=50)}
    # ties on a and b (0.5 each, not 0: the NLL is 1e-9 higher), a win on c
    assert out["probmetrics-temperature"]["win_rate_vs_temperature"] == pytest.approx(
        (0.5 + 0.5 + 1) / 3)
    assert out["sklearn-isotonic"]["win_rate_vs_temperature"] == 0.0
    # the NLL rank ties them too: 1.5 each on a and b, then 1 and 2 on c
    assert out["probmetrics-temperature"]["mean_rank_nll"] == pytest.approx((1.5 + 1.5 + 1) / 3)
    assert out["temperature"]["mean_rank_nll"] == pytest.approx((1.5 + 1.5 + 2) / 3)
    assert out["sklearn-isotonic"]["mean_rank_nll"] == 4.0
    rows = [_row("a", "uncalibrated", 0.6, 0.3, 0.1),
            _row("a", "temperature", 0.4, 0.2, 0.05),
            _row("a", "x", 0.4 - 1e-9, 0.2, 0.05), _row("a", "y", math.inf, 0.2, 0.05),
            _row("a", "z", math.inf, 0.2, 0.05)]
    out = {s["method"]: s for s in summarize(rows, n_resamples=50)}
    assert out["x"]["win_rate_vs_temperature"] == 0.5  # not 1: 1e-9 lower is noise
    assert out["y"]["win_rate_vs_temperature"] == 0.0
    assert out["x"]["mean_rank_nll"] == out["temperature"]["mean_rank_nll"] == 1.5
    assert out["y"]["mean_rank_nll"] == out["z"]["mean_rank_nll"] == 4.5  # two infs tie
    assert "relative 1e-06" in " ".join(format_summary(list(out.values())).split())


def test_ece_rank_counts_numerical_noise_as_a_tie():
    """ECEs within the NLLs' relative TIE_RTOL share a rank, as the NLLs do
    (main ranked the two solvers' ECEs 0.1052396270 / 0.1052396277 apart, and
    one got "ECE: higher"); the footnote says so (fx37 b)."""
    ece = {"temperature": 0.1052396270, "probmetrics-temperature": 0.1052396277,
           "uncalibrated": 0.2, "x": 0.1052, "y": 0.1053}
    rows = [_row(d, m, 0.5, 0.2, e) for d in ("a", "b") for m, e in ece.items()]
    out = {s["method"]: s for s in summarize(rows, n_resamples=50)}
    # x 1, temperature / probmetrics-temperature 2.5 each, y 4, uncalibrated 5
    assert out["temperature"]["mean_rank_ece"] == 2.5
    assert out["probmetrics-temperature"]["mean_rank_ece"] == 2.5
    assert out["x"]["mean_rank_ece"] == 1.0 and out["y"]["mean_rank_ece"] == 4.0
    # a difference above the tolerance still ranks
    rows = [_row("a", "p", 0.5, 0.2, 0.1), _row("a", "q", 0.5, 0.2, 0.1 * (1 + 1e-5))]
    out = {s["method"]: s for s in summarize(rows, n_resamples=50)}
    assert (out["p"]["mean_rank_ece"], out["q"]["mean_rank_ece"]) == (1.0, 2.0)
    text = " ".join(format_summary(list(out.values())).split())
    assert "NLLs (and ECEs) equal to a relative 1e-06 share a rank" in text


def test_ece_note_equal_mean_ranks_share_a_place():
    """Two methods with the same mean ECE rank share their place (1.5 each), as
    equal NLLs share a rank: the name does not break the tie (finding 10)."""
    nll = {"uncalibrated": 0.1, "temperature": 0.2, "quadratic": 0.3, "beta": 0.4,
           "z": 0.5, "w": 0.6}
    ece = {"uncalibrated": 0.05, "temperature": 0.06, "quadratic": 0.01, "beta": 0.01,
           "z": 0.07, "w": 0.02}
    rows = [_row("a", m, nll[m], 0.2, ece[m]) for m in nll]
    out = {s["method"]: s for s in summarize(rows, n_resamples=50)}
    assert out["beta"]["mean_rank_ece"] == out["quadratic"]["mean_rank_ece"] == 1.5
    # places by NLL 1..6; by ECE: quadratic and beta 1.5, w 3, uncalibrated 4,
    # temperature 5, z 6; a note where they differ by 3 or more
    # (beta: 4 - 1.5 = 2.5, no note; by name it would be 4 - 1 = 3, "higher")
    flags = {m: s["ece_flag"] for m, s in out.items()}
    assert flags == {"uncalibrated": "ECE: lower", "temperature": "ECE: lower",
                     "quadratic": "", "beta": "", "z": "", "w": "ECE: higher"}


def test_benchmark_recommendation_is_autocalibrators_choice(tmp_path):
    sets = [_set("s0", seed=0), _set("s1", k=2, scale=1.0, seed=1)]
    lines = []
    rows = _run(
        sets, ["temperature", "vector"], peers=False, n_resamples=100, n_repeats=1,
        recommend=True, log=lines.append,
    )
    assert len(lines) == 2 and lines[0].startswith("[1/2] s0: 4 methods in ")
    for d in sets:
        mine = [r for r in rows if r["dataset"] == d.name]
        assert [r["method"] for r in mine] == ["uncalibrated", "auto", "temperature", "vector"]
        auto = mine[1]
        ref = AutoCalibrator().fit(d.logits_val, d.y_val)  # independent refit
        assert auto["recommended"] == ref.best_name_
        assert auto["recommendation"].startswith("Recommended: ")
        lp = log_softmax(np.asarray(ref.predict_log_proba(d.logits_test)), axis=1)
        nll = -lp[np.arange(len(d.y_test)), d.y_test].mean()
        assert auto["nll"] == pytest.approx(nll, rel=1e-9)
        assert auto["nll_change"] == pytest.approx(nll - mine[0]["nll"], rel=1e-9)
        assert auto["nll_change_low"] <= auto["nll_change"] <= auto["nll_change_high"]
    recs = {r["dataset"]: r["recommendation"] for r in rows if "recommendation" in r}
    table = _benchmark.format_table(rows, "text", wide=False, recommendations=recs)
    assert max(map(len, table.splitlines())) <= 120
    blocks = table.split("\n\n")
    assert blocks[0].splitlines()[1].startswith("Recommended: ")
    summary = summarize(rows, n_resamples=100)
    write_summary_csv(summary, tmp_path / "s.csv")
    with open(tmp_path / "s.csv", newline="") as fh:
        read = list(csv.DictReader(fh))
    assert {r["method"] for r in read} == {"uncalibrated", "auto", "temperature", "vector"}
    assert all("np." not in v for r in read for v in r.values())


def test_benchmark_pictures_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    from skcal.benchmark._decide import (
        plot_nll_change,
        plot_recommended_reliability,
        plot_win_rates,
    )

    sets = [_set("s0"), _set("s1", seed=2)]
    rows = _run(sets, ["temperature"], peers=False, n_resamples=50, n_repeats=1,
                recommend=True, keep_proba=True)
    mine = [r for r in rows if r["dataset"] == "s0"]
    fig = plot_recommended_reliability(mine, sets[0].y_test, tmp_path / "r.png")
    assert len(fig.axes) >= 4  # two panels (diagram + counts) per method
    plot_nll_change(mine, tmp_path / "n.png")
    plot_win_rates(summarize(rows, n_resamples=50), tmp_path / "w.png")
    for f in ("r.png", "n.png", "w.png"):
        assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reliability_panels_count_every_row_and_label_every_lowest_histogram(tmp_path):
    """Four panels on a 3-column grid: every histogram is labelled with its bins'
    counts (summing to the rows) and keeps its confidence tick labels, also the
    two above the empty cells of the second row."""
    pytest.importorskip("matplotlib")
    from scipy.special import softmax

    from skcal.benchmark._decide import plot_reliability_panels

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    panels = [(f"m{i}", softmax((i + 1) * rng.normal(size=(400, 3)), axis=1), 1.0, 0.1,
               i == 0) for i in range(4)]
    fig = plot_reliability_panels(panels, y, tmp_path / "p.png", n_bins=8)
    hists = [ax for ax in fig.axes if ax.get_visible() and ax.get_xlabel() == "confidence"]
    assert len(hists) == 4
    for ax in hists:
        counts = [int(t.get_text()) for t in ax.texts if t.get_text()]
        assert sum(counts) == 400
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert labels and ax.xaxis.get_tick_params()["labelbottom"]
    assert len({ax.get_ylim() for ax in hists}) == 1  # one row-count scale
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sklearn_sets_are_out_of_fold_predictions(tmp_path, monkeypatch):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split
    from sklearn.naive_bayes import GaussianNB

    from skcal.benchmark._sklearn_sets import sklearn_sets

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    d, = sklearn_sets(["breast_cancer_nb"])
    X, y = load_breast_cancer(return_X_y=True)
    P = cross_val_predict(GaussianNB(), X, y, method="predict_proba",
                          cv=StratifiedKFold(5, shuffle=True, random_state=0))
    i_val, i_test = train_test_split(np.arange(len(y)), test_size=0.5, stratify=y,
                                     random_state=0)
    np.testing.assert_allclose(d.logits_val, np.log(np.maximum(P[i_val], 1e-12)))
    np.testing.assert_array_equal(d.y_test, y[i_test])
    assert (tmp_path / "skcal" / "sklearn_breast_cancer_nb_0_v1.npz").exists()
    again, = sklearn_sets(["breast_cancer_nb"])  # from the cache
    np.testing.assert_array_equal(again.logits_test, d.logits_test)
    with pytest.raises(ValueError, match="unknown scikit-learn set"):
        sklearn_sets(["iris_nb"])


def test_reliability_panels_follow_the_tables_nll_star():
    from skcal.benchmark._decide import MAX_RELIABILITY_PANELS, _shown_panels

    def shown(rows):
        return [r["method"] for r, _ in _shown_panels(rows)]

    def row(method, best, **kw):
        return dict(method=method, nll_best=best, proba=np.zeros((1, 2)), **kw)

    rows = [row("uncalibrated", False),
            row("auto", True, recommended="matrix", within_noise=["platt"]),
            row("temperature", False), row("vector", True), row("matrix", True),
            row("platt", False)]
    # the table's * (test-split paired bootstrap), not AutoCalibrator's list; the
    # starred auto is the recommended matrix's model: one panel for both
    assert shown(rows) == ["uncalibrated", "matrix", "vector"]
    for r in rows:  # no intervals (--resamples 0): AutoCalibrator's candidates
        r["nll_best"] = ""
    assert shown(rows) == ["uncalibrated", "matrix", "platt"]
    many = [row("uncalibrated", False), row("auto", True, recommended="m0")]
    many += [row(f"m{i}", True) for i in range(10)]
    assert len(shown(many)) == MAX_RELIABILITY_PANELS


def test_reliability_panels_show_the_recommended_model_and_a_starred_auto(monkeypatch):
    """fx34c: with --methods lacking AutoCalibrator's choice (matrix, whose only
    row is auto) the PNG had no recommended panel, and a starred auto was left
    out; now auto is the recommended panel, labelled so (where the recommended
    method has its own row, that row is the one panel of that model), and
    MAX_RELIABILITY_PANELS still holds."""
    from skcal.benchmark import _decide

    shown = []
    monkeypatch.setattr(_decide, "plot_reliability_panels",
                        lambda panels, y, path, title=None, n_bins=10: shown.append(
                            [p[0] for p in panels]))
    rng = np.random.default_rng(0)

    def row(method, best, **kw):
        return dict(method=method, nll_best=best, proba=rng.dirichlet(np.ones(3), 5),
                    nll=0.5, ece=0.05, **kw)

    def labels(rows):
        shown.clear()
        _decide.plot_recommended_reliability(rows, np.zeros(5, dtype=int), "unused.png")
        return shown[0]

    # --methods uncalibrated,temperature,isotonic,histogram,vector
    rows = [row("uncalibrated", False),
            row("auto", True, recommended="matrix", within_noise=["vector"]),
            row("temperature", False), row("isotonic", False), row("histogram", False),
            row("vector", True)]
    assert labels(rows) == ["uncalibrated", "auto: matrix (recommended)", "vector"]
    rows[1]["nll_best"] = False  # not starred: still the recommended model
    assert labels(rows) == ["uncalibrated", "auto: matrix (recommended)", "vector"]
    for r in rows:  # no intervals (--resamples 0): AutoCalibrator's candidates
        r["nll_best"] = ""
    assert labels(rows) == ["uncalibrated", "auto: matrix (recommended)", "vector"]
    # the recommended method has its row: a starred auto is that model, not a
    # second, identical panel
    rows = [row("uncalibrated", False),
            row("auto", True, recommended="vector", within_noise=[]),
            row("temperature", True), row("vector", True), row("isotonic", False)]
    assert labels(rows) == ["uncalibrated", "vector (recommended)", "temperature"]
    rows[1]["recommended"] = "identity"
    assert labels(rows) == ["uncalibrated (recommended)", "temperature", "vector"]
    # the cap holds, the recommended panel kept
    many = [row("uncalibrated", False), row("auto", True, recommended="matrix")]
    many += [row(f"m{i}", True) for i in range(10)]
    got = labels(many)
    assert len(got) == _decide.MAX_RELIABILITY_PANELS
    assert got[:4] == ["uncalibrated", "auto: matrix (recommended)", "m0", "m1"]


def test_nll_change_plot_shows_every_method_of_the_table(tmp_path, monkeypatch):
    """Every row of the table is a y tick of the NLL-change plot, or (no test
    NLL) named under the axis: an infinite change at the right edge, marked
    "NLL inf"; a method without an interval, a point marked "no interval"."""
    pytest.importorskip("matplotlib")
    from skcal.benchmark import _peers
    from skcal.benchmark._decide import plot_nll_change

    class Hard:  # one-hot on the argmax: a wrong argmax gives the true class 0
        def fit(self, logits, y):
            return self

        def predict_proba(self, logits):
            return np.eye(logits.shape[1])[np.argmax(logits, axis=1)]

    def absent(random_state):
        raise _peers.PeerUnavailable("netcal is not installed")

    monkeypatch.setitem(_peers.PEERS, "netcal-isotonic", ("netcal", lambda rs: Hard()))
    monkeypatch.setitem(_peers.PEERS, "netcal-vector", ("netcal", absent))
    d = _set("s0", scale=1.5)
    rows = _run([d], ["temperature", "vector", "netcal-isotonic", "netcal-vector"],
                n_resamples=50, n_repeats=1, recommend=True, keep_proba=True)
    by = {r["method"]: r for r in rows}
    assert by["netcal-isotonic"]["nll"] == math.inf
    assert by["netcal-isotonic"]["nll_change"] == math.inf  # was NaN: not plotted
    line = [ln for ln in _benchmark.format_table(rows, wide=False).splitlines()
            if ln.startswith("netcal-isotonic")][0]
    assert line.split()[1:3] == ["inf", "+inf!"]  # NLL, dNLL (worse: a true class at 0)
    assert by["netcal-isotonic"]["worse"] is True
    assert by["netcal-vector"]["status"] == "netcal is not installed"
    by["vector"]["nll_change_low"] = by["vector"]["nll_change_high"] = math.nan
    fig = plot_nll_change(rows, tmp_path / "n.png")
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    table = [r["method"] for r in rows]
    assert sorted(ticks) == sorted(m for m in table if m != "netcal-vector")
    assert ticks[0] == "netcal-isotonic"  # the infinite change at the bottom
    assert "uncalibrated" in ticks and "auto" in ticks
    assert "Not drawn (no test NLL; see the table's note): netcal-vector" in (
        ax.get_xlabel())
    texts = {t.get_text(): t for t in ax.texts}
    assert texts["NLL inf"].xy == (ax.get_xlim()[1], 0)  # arrow to the right edge
    no_interval = ticks.index("vector")
    assert texts["no interval"].xy == (by["vector"]["nll_change"], no_interval)
    assert (tmp_path / "n.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_win_rates_plot_lists_the_methods_in_the_summary_tables_order(tmp_path):
    """The rows of win_rates.png, top to bottom, are those of the summary table,
    uncalibrated among them (its win rate against temperature scaling; it was
    left out, fresh38 #11); main sorted them by win rate, putting matrix above
    auto and vector above structured-vector where the table has the reverse
    (fx37 e)."""
    pytest.importorskip("matplotlib")
    from skcal.benchmark._decide import plot_win_rates

    nll = {"a": {"uncalibrated": 0.6, "auto": 0.2, "matrix": 0.2, "structured-vector": 0.3,
                 "vector": 0.31, "temperature": 0.4},
           "b": {"uncalibrated": 0.6, "auto": 0.2, "matrix": 0.2, "structured-vector": 0.31,
                 "vector": 0.3, "temperature": 0.4}}
    rows = [_row(d, m, v, 0.2, 0.05) for d in nll for m, v in nll[d].items()]
    summary = summarize(rows, n_resamples=50)
    table = [ln.split()[0] for ln in format_summary(summary).splitlines()[2:2 + len(summary)]]
    assert table == ["auto", "matrix", "structured-vector", "vector", "temperature",
                     "uncalibrated"]
    fig = plot_win_rates(summary, tmp_path / "w.png")
    ax = fig.axes[0]
    ticks = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])  # top first
    assert [t.get_text() for t in ticks] == table
    # each method's markers sit beside its own tick, vs uncalibrated above, vs
    # temperature below; none for a method against itself
    at = {t.get_text(): t.get_position()[1] for t in ticks}
    points = [ln for ln in ax.lines if len(ln.get_ydata()) == 1]
    blue = sorted(ln.get_ydata()[0] for ln in points if ln.get_color() == "tab:blue")
    orange = sorted(ln.get_ydata()[0] for ln in points if ln.get_color() == "tab:orange")
    assert blue == pytest.approx(sorted(v + 0.14 for m, v in at.items()
                                        if m != "uncalibrated"))
    assert orange == pytest.approx(sorted(v - 0.14 for m, v in at.items()
                                          if m != "temperature"))
    uncal = next(ln for ln in points if ln.get_ydata()[0] == pytest.approx(
        at["uncalibrated"] - 0.14))
    assert uncal.get_xdata()[0] == 0.0  # it never beat temperature scaling
    lo, hi = ax.get_ylim()
    assert lo < min(at.values()) - 0.14 and hi > max(at.values()) + 0.14  # not clipped


def test_nll_change_side_needs_a_change_that_shows_at_the_printed_precision():
    from skcal.benchmark._decide import nll_change_side

    assert nll_change_side(2e-6, 2e-6, 2e-6) == 0  # an interval of no width, +0.0000
    assert nll_change_side(-2e-6, -2e-6, -2e-6) == 0
    assert nll_change_side(1e-3, 1e-4, 2e-3) == 1
    assert nll_change_side(-1e-3, -2e-3, -1e-4) == -1
    assert nll_change_side(1e-3, -1e-4, 2e-3) == 0  # the interval contains 0
    assert nll_change_side(1e-3, math.nan, math.nan) == 0


def test_benchmark_does_not_flag_an_invisible_change_on_separable_logits():
    """Perfectly separable logits: every row's NLL change is the same few
    micro-nats, so the paired interval has no width and lies above 0; the
    change prints as +0.0000 and is not "worse beyond noise" (fresh38 #5)."""
    rng = np.random.default_rng(0)
    y = np.tile(np.arange(3), 40)
    rng.shuffle(y)
    Z = 50.0 * np.eye(3)[y]
    d = Bunch(name="sep", logits_val=Z[:60], y_val=y[:60], logits_test=Z[60:],
              y_test=y[60:], n_classes=3, info={})
    rows = _run([d], ["isotonic"], n_resamples=200, n_repeats=1, recommend=True,
                keep_proba=True)
    iso = next(r for r in rows if r["method"] == "isotonic")
    assert 0 < iso["nll_change"] < 5e-5 and iso["nll_change_low"] > 0  # the case
    assert iso["worse"] is False
    line = next(ln for ln in _benchmark.format_table(rows, wide=False).splitlines()
                if ln.startswith("isotonic"))
    assert "+0.0000" in line and "!" not in line
    summary = {s["method"]: s for s in summarize(rows, n_resamples=50)}
    assert summary["isotonic"]["n_worse_nll"] == 0


def test_failed_autocalibrator_note_is_shown_in_full():
    """A calibration split with one row of a class: AutoCalibrator's error
    names the class and its rows in the auto footnote of the compact table
    (it was cut to "...but cla..."); the Recommended line points to it."""
    d = _set("one", n=120)
    yv = d.y_val.copy()
    yv[yv == 2] = 1
    yv[0] = 2  # class 2: one calibration row
    d.y_val = yv
    rows = _run([d], ["temperature"], n_resamples=0, n_repeats=1, recommend=True,
                keep_proba=True)
    auto = next(r for r in rows if r["method"] == "auto")
    assert auto["recommendation"] == (
        "Recommended: - (AutoCalibrator failed with a ValueError: see the auto row's note)")
    text = _benchmark.format_table(rows, wide=False,
                                   recommendations={"one": auto["recommendation"]})
    foot = next(ln for ln in text.splitlines() if ln.startswith("  auto: "))
    assert "but class 2 has 1 of 120 rows" in foot and not foot.endswith("...")
    assert "see the auto row's note" in text
