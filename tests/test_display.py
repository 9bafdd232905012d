"""Tests for skcal.display.ReliabilityDisplay (rendered with the Agg backend)."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import load_iris  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from skcal.display import ReliabilityDisplay  # noqa: E402
from skcal.metrics import reliability_curve  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def iris_model():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = LogisticRegression(C=0.05, max_iter=500).fit(X, names)
    return model, X, names


@pytest.fixture
def preds(rng):
    z = rng.normal(scale=2.0, size=(300, 3))
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    y = rng.integers(0, 3, size=300)
    return y, p


def test_from_predictions_draws_reliability_curve(preds):
    y, p = preds
    disp = ReliabilityDisplay.from_predictions(y, p, n_bins=10, name="raw")
    curve = reliability_curve(y, p, n_bins=10)
    np.testing.assert_array_equal(disp.line_.get_xdata(), curve.prob_pred)
    np.testing.assert_array_equal(disp.line_.get_ydata(), curve.prob_true)
    assert disp.ax_.figure is disp.figure_
    assert disp.line_.get_label() == "raw"
    np.testing.assert_array_equal(disp.ref_line_.get_xydata(), [[0, 0], [1, 1]])
    assert disp.ax_.get_xlabel().startswith("Confidence")
    assert disp.hist_ax_ is None and disp.band_ is None


def test_from_estimator_uses_classes_and_predict_proba(iris_model):
    model, X, y = iris_model
    disp = ReliabilityDisplay.from_estimator(model, X, y, n_bins=5,
                                             strategy="quantile")
    curve = reliability_curve(y, model.predict_proba(X), n_bins=5,
                              strategy="quantile", labels=model.classes_)
    np.testing.assert_allclose(disp.line_.get_xydata(),
                               np.column_stack([curve.prob_pred, curve.prob_true]))
    assert disp.line_.get_label() == "LogisticRegression"


def test_class_view_labels_and_data(iris_model):
    model, X, y = iris_model
    disp = ReliabilityDisplay.from_estimator(model, X, y, kind="class",
                                             class_index=2, n_bins=8)
    p = model.predict_proba(X)[:, 2]
    # one-vs-rest by hand: equal-width bins (m/8, (m+1)/8]
    ids = np.clip(np.ceil(p * 8).astype(int) - 1, 0, 7)
    hit = (y == "virginica").astype(float)
    xs = [p[ids == m].mean() for m in range(8) if np.any(ids == m)]
    ys = [hit[ids == m].mean() for m in range(8) if np.any(ids == m)]
    np.testing.assert_allclose(disp.line_.get_xdata(), xs)
    np.testing.assert_allclose(disp.line_.get_ydata(), ys)
    assert "virginica" in disp.ax_.get_xlabel()


def test_histogram_panel_heights_are_bin_weights(preds):
    y, p = preds
    disp = ReliabilityDisplay.from_predictions(y, p, n_bins=10, show_histogram=True)
    curve = reliability_curve(y, p, n_bins=10)
    heights = [bar.get_height() for bar in disp.hist_]
    lefts = [bar.get_x() for bar in disp.hist_]
    widths = [bar.get_width() for bar in disp.hist_]
    np.testing.assert_allclose(heights, curve.bin_weight)
    np.testing.assert_allclose(lefts, curve.bin_edges[curve.bin_index])
    np.testing.assert_allclose(widths, 0.1)
    assert disp.hist_ax_ is not disp.ax_
    assert disp.hist_ax_.figure is disp.figure_


def test_several_calibrators_on_one_axes_share_one_diagonal(preds):
    y, p = preds
    _, ax = plt.subplots()
    d1 = ReliabilityDisplay.from_predictions(y, p, ax=ax, name="raw")
    sharp = p**2 / (p**2).sum(1, keepdims=True)
    d2 = ReliabilityDisplay.from_predictions(y, sharp, ax=ax, name="sharpened",
                                             show_histogram=True)
    d3 = ReliabilityDisplay.from_predictions(y, p, ax=ax, name="again",
                                             show_histogram=True,
                                             hist_ax=d2.hist_ax_)
    assert d1.ax_ is d2.ax_ is d3.ax_ is ax
    assert d3.hist_ax_ is d2.hist_ax_
    assert d1.ref_line_ is d2.ref_line_
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert labels == ["Perfectly calibrated", "raw", "sharpened", "again"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == labels


def test_plot_from_constructor_and_kwargs():
    disp = ReliabilityDisplay(prob_true=np.array([0.2, 0.9]),
                              prob_pred=np.array([0.3, 0.8]), estimator_name="m")
    out = disp.plot(name="other", ref_line=False, color="red", marker="o")
    assert out is disp
    assert disp.ref_line_ is None
    assert disp.line_.get_label() == "other"
    assert disp.line_.get_color() == "red" and disp.line_.get_marker() == "o"
    with pytest.raises(ValueError, match="show_histogram"):
        disp.plot(show_histogram=True)


def test_bootstrap_band_is_drawn(preds):
    y, p = preds
    disp = ReliabilityDisplay.from_predictions(y, p, n_bins=5, n_bootstrap=50,
                                               random_state=0)
    curve = reliability_curve(y, p, n_bins=5, n_bootstrap=50, random_state=0)
    assert disp.band_ is not None
    np.testing.assert_allclose(disp.prob_true_low, curve.prob_true_low)
    verts = disp.band_.get_paths()[0].vertices
    assert verts[:, 1].min() == pytest.approx(np.nanmin(curve.prob_true_low))


def test_never_writes_files(preds, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    y, p = preds
    ReliabilityDisplay.from_predictions(y, p, show_histogram=True)
    assert list(tmp_path.iterdir()) == []


def test_from_estimator_errors(preds):
    y, p = preds
    with pytest.raises(NotFittedError):
        ReliabilityDisplay.from_estimator(LogisticRegression(), p, y)
    with pytest.raises(ValueError, match="class_index"):
        reliability_curve(y, p, kind="class")
    # without class_index the display draws a grid of classes instead
    grid = ReliabilityDisplay.from_predictions(y, p, kind="class")
    assert len(grid.displays_) == min(4, p.shape[1] if p.ndim == 2 else 2)
    plt.close("all")


def test_from_estimator_shares_from_predictions_keywords(iris_model):
    # the keywords (and their defaults) of from_predictions but input_type and
    # labels, which come from the estimator: passing them is refused by name
    import inspect

    model, X, y = iris_model
    est = inspect.signature(ReliabilityDisplay.from_estimator).parameters
    pred = inspect.signature(ReliabilityDisplay.from_predictions).parameters
    assert list(est)[:3] == ["estimator", "X", "y"]
    assert {k: v.default for k, v in list(est.items())[3:]} == {
        k: v.default for k, v in list(pred.items())[2:]
        if k not in ("input_type", "labels")
    }
    for key in ("input_type", "labels"):
        with pytest.raises(TypeError, match=f"no {key}="):
            ReliabilityDisplay.from_estimator(model, X, y, **{key: None})


@pytest.mark.shared_data
def test_from_estimator_with_skcal_calibrator_before_and_after():
    from conftest import load_shared

    skcal = pytest.importorskip("skcal")
    if not hasattr(skcal, "TemperatureScaler"):
        pytest.skip("TemperatureScaler is not available yet")
    d = load_shared("cifar10_densenet40_guo")
    ts = skcal.TemperatureScaler().fit(d["logits_val"], d["y_val"])
    _, ax = plt.subplots()
    before = ReliabilityDisplay.from_predictions(
        d["y_test"], d["logits_test"], input_type="logits", ax=ax, name="raw"
    )
    after = ReliabilityDisplay.from_estimator(ts, d["logits_test"], d["y_test"],
                                              ax=ax)
    assert after.line_.get_label() == "TemperatureScaler"
    # the drawn points give the ECE: 5.50 % before, 0.95 % after (README)
    def drawn_ece(disp):
        gap = np.abs(disp.line_.get_ydata() - disp.line_.get_xdata())
        return 100 * np.sum(disp.bin_weight * gap)

    assert round(drawn_ece(before), 2) == 5.50
    assert drawn_ece(after) == pytest.approx(0.95, abs=0.02)


def test_markers_differ_histogram_shares_x_range_and_counts(preds):
    y, p = preds
    fig, ax = plt.subplots()
    a = ReliabilityDisplay.from_predictions(y, p, ax=ax, show_histogram=True,
                                            show_counts=True, name="a")
    b = ReliabilityDisplay.from_predictions(y, p, ax=ax, show_histogram=True,
                                            hist_ax=a.hist_ax_, name="b")
    assert a.line_.get_marker() != b.line_.get_marker()
    assert a.hist_ax_.get_xlim() == ax.get_xlim()
    counts = [int(t.get_text()) for t in a.count_texts_]
    assert counts == a.bin_count.tolist() and sum(counts) == len(y)
    plt.close(fig)


def test_binomial_band_and_smooth_curve(preds):
    from skcal.metrics import reliability_curve, smooth_reliability_curve

    y, p = preds
    disp = ReliabilityDisplay.from_predictions(y, p, interval="wilson", smooth=True)
    curve = reliability_curve(y, p, interval="wilson")
    np.testing.assert_allclose(disp.prob_true_low, curve.prob_true_low)
    sm = smooth_reliability_curve(y, p)
    shown = np.isfinite(disp.line_.get_ydata())
    np.testing.assert_allclose(disp.line_.get_ydata()[shown], sm.prob_true[shown])
    # the documented rule: drawn exactly where about 10 or more rows lie within one
    # bandwidth, n * density * 2 * bandwidth >= 10
    # and only over the mesh points spanning the scores (one step past each end at most)
    lo, hi = sm.score_range
    step = sm.x[1] - sm.x[0]
    np.testing.assert_array_equal(shown, (len(y) * sm.density * 2 * sm.bandwidth >= 10)
                                  & (sm.x > lo - step) & (sm.x < hi + step))
    assert disp.points_ is not None and "smECE" in disp.line_.get_label()
    plt.close(disp.figure_)


def test_classwise_grid_shows_most_frequent_classes():
    rng = np.random.default_rng(0)
    y = rng.choice(5, size=600, p=[0.05, 0.4, 0.25, 0.2, 0.1])
    P = rng.dirichlet(np.ones(5), size=600)
    disp = ReliabilityDisplay.from_predictions(y, P, kind="classwise",
                                               n_classes_shown=3, show_histogram=True)
    assert [d.class_label for d in disp.displays_] == [1, 2, 3]
    assert disp.axes_.size == 3
    with pytest.raises(ValueError, match="n_classes_shown"):
        ReliabilityDisplay.from_predictions(y, P, kind="classwise", n_classes_shown=0)
    plt.close("all")


def test_each_bin_interval_is_drawn_as_a_bar_also_for_an_isolated_bin():
    """fresh34: the band alone (fill_between over the bins) tapers to nothing at
    an isolated one-row bin, so its 0 or 1 looked certain; each bin's Wilson
    interval is now also a vertical bar."""
    from scipy.stats import binomtest

    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(0.8, 1.0, 400), [0.55]])  # one row in its bin
    y = (rng.uniform(size=p.size) < p).astype(int)
    y[-1] = 0  # that row's top-label prediction (class 1) is wrong: a plunge to 0
    disp = ReliabilityDisplay.from_predictions(y, p, interval="wilson", n_bins=10)
    segs = disp.interval_bars_.get_segments()
    assert len(segs) == len(disp.prob_pred)
    first = segs[int(np.argmin(disp.prob_pred))]
    assert first[0][0] == first[1][0] == pytest.approx(0.55)  # a vertical bar at the bin
    ci = binomtest(0, 1).proportion_ci(0.95, method="wilson")
    assert (first[0][1], first[1][1]) == pytest.approx((ci.low, ci.high))
    assert ci.high - ci.low > 0.7  # the width the band alone did not show
    # no interval: no bars
    assert ReliabilityDisplay.from_predictions(y, p).interval_bars_ is None


def test_smooth_curve_of_a_confident_model_is_drawn_where_rows_are():
    """fresh34: the rule "density >= 5% of its peak" drew a confident model's
    smoothed curve only on [0.95, 1], hiding a quarter of the rows; the curve is
    now drawn wherever it averages about 10 rows, which leaves out only a few."""
    rng = np.random.default_rng(0)
    n = 5000
    conf = np.where(rng.uniform(size=n) < 0.75, rng.uniform(0.97, 1.0, n),
                    rng.uniform(0.5, 0.97, n))  # most rows near 1, a quarter spread
    y = (rng.uniform(size=n) < conf).astype(int)
    disp = ReliabilityDisplay.from_predictions(y, conf, smooth=True)
    x = disp.line_.get_xdata()[np.isfinite(disp.line_.get_ydata())]
    hidden = np.count_nonzero((conf < x.min()) | (conf > x.max()))
    assert (conf < 0.95).mean() > 0.2
    assert hidden < 0.01 * n  # under 1% of the rows fall outside the drawn range
    plt.close(disp.figure_)


def test_smooth_curve_stops_at_the_scores_range_with_a_wide_bandwidth():
    """fresh34b: with a wide bandwidth (a badly calibrated model) the kernel's
    tails passed the density rule, and the curve was drawn over [0, 1] for
    scores in [0.28, 0.995]."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.28, 0.995, 2000)
    y = (rng.uniform(size=p.size) < 0.5).astype(int)  # far from calibrated
    disp = ReliabilityDisplay.from_predictions(y, p, kind="binary", smooth=True)
    x = disp.line_.get_xdata()[np.isfinite(disp.line_.get_ydata())]
    step = 1 / 200  # the mesh of 201 points
    assert p.min() - step < x.min() <= p.min() and p.max() <= x.max() < p.max() + step
    plt.close(disp.figure_)


def test_unnamed_curve_has_a_legend_entry_and_binary_view_of_1d_probabilities(rng):
    # sklearn's CalibrationDisplay view of a 1-D y_prob is kind="binary":
    # the fraction of positives against p, here checked by hand in 5 bins
    p = rng.random(400)
    y = np.where(rng.random(400) < p, "pos", "neg")
    disp = ReliabilityDisplay.from_predictions(y, p, kind="binary", pos_label="pos", n_bins=5)
    assert disp.line_.get_label() == "calibration curve (class pos)"
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert legend == ["Perfectly calibrated", "calibration curve (class pos)"]
    b = np.minimum((p * 5).astype(int), 4)
    np.testing.assert_allclose(disp.prob_true, [np.mean(y[b == k] == "pos") for k in range(5)])
    np.testing.assert_allclose(disp.prob_pred, [p[b == k].mean() for k in range(5)])
    # the default kind stays top-label: the confidence max(p, 1 - p)
    top = ReliabilityDisplay.from_predictions(y, p, pos_label="pos")
    assert top.line_.get_label() == "calibration curve (top-label)"
    assert top.prob_pred.min() >= 0.5


def test_smooth_binary_curve_with_text_labels_takes_pos_label():
    """sh37f: pos_label reached reliability_curve but not the smoothed curve,
    which then called text labels ambiguous."""
    from skcal.metrics import smooth_reliability_curve

    rng = np.random.default_rng(0)
    p = rng.uniform(size=400)
    y = np.where(rng.uniform(size=400) < p, "b", "a")
    disp = ReliabilityDisplay.from_predictions(y, p, kind="binary", pos_label="b", smooth=True)
    ref = smooth_reliability_curve(y, p, kind="binary", pos_label="b")
    drawn = np.isfinite(disp.smooth_prob_true)
    assert drawn.sum() > 50
    np.testing.assert_array_equal(disp.smooth_x, ref.x)
    np.testing.assert_allclose(disp.smooth_prob_true[drawn], ref.prob_true[drawn])
    np.testing.assert_array_equal(disp.line_.get_xdata(), ref.x)
    plt.close(disp.figure_)
