"""End-to-end tests of ``skcal benchmark`` (skcal.cli and skcal.benchmark)."""

import csv
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

from _helpers import csv_frame, nll
from skcal.benchmark import _benchmark, _peers
from skcal.cli import main
from skcal.metrics import confidence_interval
from skcal.datasets import load_logits

SET = "agnews_gpt2_zeroshot"


def _top_label_ece(logits, y, n_bins=15):
    """Straightforward ECE: loop over 15 equal-width bins (a, b]."""
    p = np.exp(log_softmax(np.asarray(logits, dtype=np.float64), axis=1))
    conf, hit = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        m = (conf > lo) & (conf <= hi)
        if m.any():
            total += m.sum() / len(y) * abs(hit[m].mean() - conf[m].mean())
    return total


def _read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast CLI run on the AG News set with the temperature scaler."""
    pytest.importorskip("skcal.metrics")
    out = tmp_path_factory.mktemp("bench")
    rc = main(["benchmark", "--fast", "--dataset", SET, "--methods", "temperature",
               "--quiet", "--output", str(out)])
    return rc, out


def test_cli_fast_table_matches_independent_computation(fast_run):
    rc, out = fast_run
    assert rc == 0
    rows = _read_csv(out / "benchmark.csv")
    assert [r["method"] for r in rows] == ["uncalibrated", "auto", "temperature"]
    d = load_logits(SET)
    unc, _, ts = rows
    # Uncalibrated row: NLL, ECE and accuracy from plain formulas.
    assert float(unc["nll"]) == pytest.approx(nll(d.logits_test, d.y_test), rel=1e-9)
    assert float(unc["ece"]) == pytest.approx(
        _top_label_ece(d.logits_test, d.y_test), rel=1e-9
    )
    assert float(unc["accuracy"]) == pytest.approx(0.4232, abs=5e-5)  # README
    # Temperature row: fit T ourselves by a 1-D search on the calibration NLL.
    res = minimize_scalar(
        lambda t: nll(d.logits_val / t, d.y_val), bounds=(0.05, 20),
        method="bounded", options={"xatol": 1e-8},
    )
    z = d.logits_test / res.x
    assert res.x == pytest.approx(1.362, abs=1e-3)  # README: T = 1.362
    assert float(ts["nll"]) == pytest.approx(nll(z, d.y_test), abs=1e-6)
    assert float(ts["ece"]) == pytest.approx(_top_label_ece(z, d.y_test), abs=1e-4)
    assert float(ts["nll"]) == pytest.approx(1.1029, abs=5e-5)  # README
    for r in rows:
        assert r["status"] in ("ok", "ok (chose matrix)") and float(r["fit_time_s"]) >= 0


def test_cli_fast_matches_python_api(fast_run):
    import skcal
    from skcal.metrics import brier_score, expected_calibration_error

    _, out = fast_run
    ts = _read_csv(out / "benchmark.csv")[2]
    d = load_logits(SET)
    p = skcal.TemperatureScaler().fit(d.logits_val, d.y_val).predict_proba(d.logits_test)
    assert float(ts["brier"]) == pytest.approx(brier_score(d.y_test, p), rel=1e-6)
    assert float(ts["classwise_ece"]) == pytest.approx(
        expected_calibration_error(d.y_test, p, kind="classwise", n_bins=15), rel=1e-6
    )


def test_cli_fast_writes_markdown_and_png(fast_run):
    _, out = fast_run
    md = (out / "benchmark.md").read_text()
    assert f"### {SET}" in md and "| uncalibrated |" in md
    png = out / f"reliability_{SET}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_console_script_subprocess(tmp_path):
    pytest.importorskip("skcal.metrics")
    exe = Path(sys.executable).with_name("skcal")
    if not exe.exists():
        pytest.skip("console script 'skcal' not installed in this environment")
    proc = subprocess.run(
        [str(exe), "benchmark", "--fast", "--dataset", "sst2_gpt2_zeroshot",
         "--methods", "temperature", "--wide"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("sst2_gpt2_zeroshot (K=2, 910 calibration / 911 test")
    assert lines[1].startswith("Recommended: platt — test NLL 0.3323 vs 0.6271")
    del lines[1]
    while lines[1].startswith("    "):  # the recommendation's wrapped continuation
        del lines[1]
    assert lines[1].split()[:4] == ["method", "library", "NLL", "dNLL"]
    body = [ln.split() for ln in lines[3:6]]
    assert [b[0] for b in body] == ["uncalibrated", "auto", "temperature"]
    d = load_logits("sst2_gpt2_zeroshot")
    # NLL [low, high]  dNLL  ECE [low, high] ...: the estimates are numbers 0 and 4
    nums = re.findall(r"[+-]?\d+\.\d+", lines[3])
    assert nums[0] == f"{nll(d.logits_test, d.y_test):.4f}"
    assert nums[3] == "+0.0000"  # the uncalibrated row's own dNLL
    assert nums[4] == f"{100 * _top_label_ece(d.logits_test, d.y_test):.2f}"
    assert float(nums[1]) <= float(nums[0]) <= float(nums[2])
    assert "Traceback" not in proc.stderr


def _npz(path, **arrays):
    np.savez(path, **arrays)
    return str(path)


@pytest.mark.parametrize(
    "kind, match",
    [
        ("missing", "no such file"),
        ("format", "unsupported file type"),
        ("shape", "has 3 rows but y_val has 2"),
        ("keys", "missing keys"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys, kind, match):
    if kind == "missing":
        path = str(tmp_path / "absent.npz")
    elif kind == "format":
        path = str(tmp_path / "logits.txt")
        Path(path).write_text("1 2 3\n")
    elif kind == "shape":
        path = _npz(tmp_path / "s.npz", logits_val=np.zeros((3, 2)), y_val=[0, 1],
                    logits_test=np.zeros((2, 2)), y_test=[0, 1])
    else:
        path = _npz(tmp_path / "k.npz", scores=np.zeros(3))
    rc = main(["benchmark", "--data", path, "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("skcal benchmark: error:")
    assert match in err and "Traceback" not in err


def test_cli_unknown_method_exits_2(capsys):
    assert main(["benchmark", "--methods", "nope", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown method(s) nope" in err


def test_cli_missing_file_subprocess(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "skcal.cli", "benchmark", "--data",
         str(tmp_path / "absent.npz")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "no such file" in proc.stderr and proc.stdout == ""


def test_cli_closed_stdout_pipe_exits_quietly(tmp_path):
    """``skcal benchmark | head``: a reader that closes the pipe early ends the
    command with status 141 (128 + SIGPIPE) and no traceback (finding 11)."""
    rng = np.random.default_rng(0)
    path = _npz(tmp_path / "single.npz", logits=rng.normal(size=(400, 3)),
                y=rng.integers(0, 3, 400))
    proc = subprocess.Popen(
        [sys.executable, "-m", "skcal", "benchmark", "--data", path, "--methods",
         "temperature", "--resamples", "0", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before the table is printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_cli_no_subcommand_is_usage_error(capsys):
    assert main([]) == 2
    assert "usage: skcal" in capsys.readouterr().err


def test_user_npz_is_split_deterministically(tmp_path):
    """A single-set file is split by --seed; same seed, same numbers."""
    pytest.importorskip("skcal.metrics")
    d = load_logits(SET)
    f = _npz(tmp_path / "mine.npz", logits=d.logits_test, y=d.y_test)
    runs = []
    for seed in (3, 3, 4):
        out = tmp_path / f"o{len(runs)}"
        assert main(["benchmark", "--data", f, "--no-peers", "--methods",
                     "temperature", "--seed", str(seed), "--quiet",
                     "--output", str(out)]) == 0
        runs.append([(r["method"], r["nll"], r["ece"])
                     for r in _read_csv(out / "benchmark.csv")])
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert runs[0][0][0] == "uncalibrated"


def test_peer_crash_becomes_error_row(monkeypatch):
    pytest.importorskip("skcal.metrics")

    class Boom:
        def fit(self, logits, y):
            raise RuntimeError("peer exploded\non two lines")

        def predict_proba(self, logits):  # pragma: no cover
            raise AssertionError

    class Missing:
        def __init__(self):
            raise _peers.PeerUnavailable("not installed")

    monkeypatch.setitem(_peers.PEERS, "netcal-temperature", ("netcal", lambda rs: Boom()))
    monkeypatch.setitem(_peers.PEERS, "netcal-isotonic", ("netcal", lambda rs: Missing()))
    rows = _benchmark.run_benchmark(
        [load_logits("sst2_gpt2_zeroshot")],
        ["netcal-temperature", "netcal-isotonic"],
    )
    assert [r["method"] for r in rows] == [
        "uncalibrated", "netcal-temperature", "netcal-isotonic",
    ]
    assert rows[1]["status"] == "error: RuntimeError: peer exploded on two lines"
    assert math.isnan(rows[1]["nll"])
    assert rows[2]["status"] == "not installed"
    text = _benchmark.format_table(rows)
    assert "error: RuntimeError: peer exploded" in text and "not installed" in text


def test_probmetrics_dirichlet_without_dirichletcal_names_it(monkeypatch):
    """No skcal extra installs dirichletcal; the row's status says it is the
    missing package and how to get it, in full and in the compact table."""
    pytest.importorskip("probmetrics.calibrators")
    monkeypatch.setitem(sys.modules, "dirichletcal", None)  # import fails
    with pytest.raises(_peers.PeerUnavailable) as info:
        _peers.PEERS["probmetrics-dirichlet"][1](0)
    assert str(info.value) == (
        "needs dirichletcal, not installed (pip install dirichletcal, on "
        "Python >= 3.12; it pulls jax)"
    )
    rows = _benchmark.run_benchmark([load_logits("sst2_gpt2_zeroshot")],
                                    ["probmetrics-dirichlet"], n_resamples=0)
    assert rows[1]["status"] == str(info.value)
    assert "needs dirichletcal" in _benchmark.format_table(rows, wide=False)


def test_sklearn_passthrough_peer_equals_platt_fit():
    """sklearn's sigmoid on the pass-through logits is Platt (1999) scaling of
    the log-odds z1 - z0, with Platt's smoothed targets; fit it here with scipy."""
    pytest.importorskip("sklearn.frozen")
    from scipy.optimize import minimize
    from scipy.special import expit

    d = load_logits("sst2_gpt2_zeroshot")
    peer = _peers.PEERS["sklearn-sigmoid"][1](0).fit(d.logits_val, d.y_val)
    p = peer.predict_proba(d.logits_test)
    s_val = (d.logits_val[:, 1] - d.logits_val[:, 0]).astype(np.float64)
    s_test = (d.logits_test[:, 1] - d.logits_test[:, 0]).astype(np.float64)
    n_pos = d.y_val.sum()
    n_neg = len(d.y_val) - n_pos
    t = np.where(d.y_val == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(ab):
        q = expit(ab[0] * s_val + ab[1])
        return -np.sum(t * np.log(q) + (1 - t) * np.log1p(-q))

    ab = minimize(loss, [1.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
    # sklearn stops its L-BFGS at its own tolerance: agreement to 1e-4.
    np.testing.assert_allclose(p[:, 1], expit(ab[0] * s_test + ab[1]), atol=1e-4)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_passthrough_classifier_returns_logits():
    clf = _peers.LogitPassthroughClassifier().fit(np.zeros((2, 3)))
    z = np.array([[1.0, -2.0, 0.5]])
    np.testing.assert_array_equal(clf.decision_function(z), z)
    np.testing.assert_array_equal(clf.predict(z), [0])
    b = _peers.LogitPassthroughClassifier().fit(np.zeros((2, 2)))
    np.testing.assert_array_equal(b.decision_function(np.array([[1.0, 3.5]])), [2.5])


def _one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("skcal benchmark: error:")
    assert "Traceback" not in err
    return err


def test_cli_single_class_calibration_split_exits_2(tmp_path, capsys):
    rng = np.random.default_rng(0)
    f = _npz(tmp_path / "zeros.npz", logits=rng.normal(size=(40, 3)),
             y=np.zeros(40, dtype=int))
    assert main(["benchmark", "--data", f, "--quiet"]) == 2
    err = _one_line_error(capsys)
    assert "zeros.npz: the calibration split holds labels of one class only (0)" in err


def test_cli_single_class_calibration_split_names_the_text_label(tmp_path, capsys):
    # the label as the file writes it, not its column index (0)
    rows = ["label,split,cat,dog"]
    for i in range(1, 21):
        rows += [f"cat,val,0.{i},-0.{i}", f"dog,test,-0.{i},0.{i}", f"cat,test,0.{i},-0.{i}"]
    f = tmp_path / "split.csv"
    f.write_text("\n".join(rows) + "\n")
    assert main(["benchmark", "--data", str(f), "--quiet"]) == 2
    err = _one_line_error(capsys)
    assert ("split.csv: the calibration split holds labels of one class only ('cat'); "
            "calibration needs at least 2 classes") in err


def test_cli_every_method_failing_exits_2(monkeypatch, capsys):
    """If no calibration method can be fitted, the data set is bad input."""
    pytest.importorskip("skcal.metrics")

    def boom(self, logits, y):
        raise ValueError("cannot fit this")

    monkeypatch.setattr(_benchmark._Skcal, "fit", boom)
    rc = main(["benchmark", "--fast", "--dataset", "sst2_gpt2_zeroshot",
               "--methods", "temperature,platt", "--quiet"])
    assert rc == 2
    err = _one_line_error(capsys)
    assert ("no calibration method could be fitted on sst2_gpt2_zeroshot: "
            "ValueError: cannot fit this") in err


def test_cli_peer_crash_alone_exits_0(monkeypatch, capsys):
    pytest.importorskip("skcal.metrics")

    class Boom:
        def fit(self, logits, y):
            raise RuntimeError("peer exploded")

    monkeypatch.setitem(_peers.PEERS, "netcal-temperature", ("netcal", lambda rs: Boom()))
    rc = main(["benchmark", "--dataset", "sst2_gpt2_zeroshot", "--quiet",
               "--methods", "temperature,netcal-temperature", "--wide"])
    out = capsys.readouterr()
    assert rc == 0 and out.err == ""
    assert "error: RuntimeError: peer exploded" in out.out


def test_failed_datasets_ignores_skipped_and_unavailable():
    def row(ds, method, library, status):
        return dict(dataset=ds, method=method, library=library, status=status)

    rows = [
        row("a", "uncalibrated", "-", "ok"),
        row("a", "temperature", "skcal", "error: ValueError: x"),
        row("a", "netcal-vector", "netcal", "skipped (slow)"),
        row("a", "probmetrics-vector", "probmetrics", "not installed"),
        row("b", "uncalibrated", "-", "ok"),
        row("b", "temperature", "skcal", "ok (convergence warning)"),
        row("b", "sklearn-sigmoid", "scikit-learn", "error: IndexError: y"),
        row("c", "uncalibrated", "-", "ok"),
        row("c", "netcal-vector", "netcal", "skipped (slow)"),
    ]
    assert _benchmark.failed_datasets(rows) == {"a": "error: ValueError: x"}


@pytest.mark.parametrize("seed, match", [
    ("-1", "skcal benchmark: error: --seed must be an integer in 0..2**32-1, got -1"),
    ("1.5", "argument --seed: must be an integer in 0..2**32-1, got '1.5'"),
    (str(2**32), "skcal benchmark: error: --seed must be an integer in 0..2**32-1, "
     f"got {2**32}"),
])
def test_cli_bad_seed_is_usage_error(capsys, seed, match):
    assert main(["benchmark", "--fast", "--seed", seed]) == 2
    err = capsys.readouterr().err
    assert match in err and "random_state" not in err


def test_cli_output_without_matplotlib_writes_tables_and_skips_pngs(
    monkeypatch, tmp_path, capsys
):
    # issue 16: the Markdown/CSV are written, the PNGs skipped with a notice.
    # None in sys.modules makes `import matplotlib` raise ImportError.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "out"
    rc = main(["benchmark", "--fast", "--quiet", "--methods", "temperature",
               "--repeats", "1", "--output", str(out)])
    assert rc == 0
    err = capsys.readouterr().err
    assert "matplotlib is not installed" in err and "skipped" in err
    assert sorted(p.name for p in out.iterdir()) == [
        "benchmark.csv", "benchmark.md", "benchmark_summary.csv"]


def test_cli_text_labels_csv(tmp_path, capsys):
    """String labels in the CSV label column run end to end."""
    pytest.importorskip("skcal.metrics")
    rng = np.random.default_rng(0)
    lines = ["z_bird,z_cat,label"]
    for i in range(40):
        lab = ("bird", "cat")[i % 2]
        lines.append(f"{rng.normal() + (i % 2 == 0)},{rng.normal()},{lab}")
    f = tmp_path / "animals.csv"
    f.write_text("\n".join(lines) + "\n")
    assert main(["benchmark", "--data", str(f), "--no-peers", "--methods",
                 "temperature", "--quiet"]) == 0
    assert "animals (K=2, 20 calibration / 20 test rows)" in capsys.readouterr().out


def test_inf_nll_row_gets_note(monkeypatch):
    """A method giving a true class probability exactly 0 has NLL = inf and a
    note that says why."""
    pytest.importorskip("skcal.metrics")

    class Hard:  # one-hot on the argmax: a wrong argmax gives the true class 0
        def fit(self, logits, y):
            return self

        def predict_proba(self, logits):
            return np.eye(logits.shape[1])[np.argmax(logits, axis=1)]

    monkeypatch.setitem(_peers.PEERS, "netcal-isotonic", ("netcal", lambda rs: Hard()))
    d = load_logits("sst2_gpt2_zeroshot")
    rows = _benchmark.run_benchmark([d], ["temperature", "netcal-isotonic"])
    assert np.mean(np.argmax(d.logits_test, axis=1) != d.y_test) > 0  # some wrong
    hard = rows[2]
    assert hard["nll"] == math.inf
    assert hard["status"] == "ok (NLL inf: a true class got probability 0)"
    assert rows[1]["status"] == "ok" and math.isfinite(rows[1]["nll"])
    line = [ln for ln in _benchmark.format_table(rows).splitlines()
            if ln.startswith("netcal-isotonic")][0]
    assert line.split()[2] == "inf"
    assert line.endswith("NLL inf: a true class got probability 0")
    assert "ok (" not in line


def test_reliability_png_shows_every_method_with_bin_counts(tmp_path):
    """Peers are drawn too; the legend sits outside the axes and the lower
    panel, on the same x-range, carries the uncalibrated model's bin counts."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("skcal.metrics")
    from scipy.special import softmax

    from skcal.metrics import reliability_curve

    d = load_logits("sst2_gpt2_zeroshot")
    proba = softmax(np.asarray(d.logits_test, dtype=float), axis=1)
    rows = [
        dict(dataset=d.name, method=m, library=lib, ece=0.01 * i, proba=proba)
        for i, (m, lib) in enumerate([("uncalibrated", "-"), ("temperature", "skcal"),
                                      ("sklearn-sigmoid", "scikit-learn")])
    ]
    fig = _benchmark.plot_reliability(rows, d.y_test, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax, hist_ax = fig.axes
    assert ax.get_legend() is None  # nothing drawn over the curves
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == ["Perfectly calibrated", "uncalibrated (ECE 0.00%)",
                     "temperature (ECE 1.00%)", "sklearn-sigmoid (ECE 2.00%)"]
    assert hist_ax.get_xlim() == ax.get_xlim()
    curve = reliability_curve(d.y_test, proba, n_bins=15)
    shown = sorted(int(t.get_text()) for t in hist_ax.texts if t.get_text())
    assert shown == sorted(curve.bin_count.tolist())
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).y1 <= hist_ax.get_window_extent(
        renderer).y0
    a, h = ax.get_window_extent(renderer), hist_ax.get_window_extent(renderer)
    assert a.x0 == pytest.approx(h.x0, abs=1) and a.x1 == pytest.approx(h.x1, abs=1)


def test_add_intervals_match_metrics_and_paired_bootstrap():
    """Intervals equal confidence_interval(method="BCa")'s; '*' marks follow an
    independent paired_difference_interval call with the same seed."""
    from scipy.special import softmax

    from skcal.metrics import confidence_interval, paired_difference_interval

    d = load_logits("sst2_gpt2_zeroshot")
    z = np.asarray(d.logits_test, dtype=float)
    probas = {"a": softmax(z, axis=1), "b": softmax(z / 2, axis=1),
              "c": softmax(z / 1.9, axis=1)}
    rows = [{**dict.fromkeys(_benchmark.COLUMNS, math.nan),
             **dict(dataset=d.name, method=m, library="-", proba=p, status="ok",
                    nll=float(-np.mean(np.log(p[np.arange(len(p)), d.y_test]))))}
            for m, p in probas.items()]
    _benchmark.add_intervals(rows, d.y_test, n_resamples=300, random_state=5)
    labels = np.arange(2)
    for r in rows:
        ci = confidence_interval("nll", d.y_test, r["proba"], n_resamples=300,
                                 random_state=5, labels=labels, method="BCa")
        assert (r["nll_low"], r["nll_high"]) == pytest.approx((ci.low, ci.high))
        assert math.isnan(r["ece_low"]) and r["ece_best"] == ""
    best = min(rows, key=lambda r: r["nll"])
    assert best["nll_best"] is True
    for r in rows:
        if r is best:
            continue
        diff = paired_difference_interval("nll", d.y_test, r["proba"], best["proba"],
                                          n_resamples=300, random_state=5,
                                          labels=labels, method="BCa")
        assert r["nll_best"] == (diff.low <= 0 <= diff.high)
    assert [r["nll_best"] for r in rows].count(True) >= 1
    table = _benchmark.format_table(rows)
    assert "paired bootstrap" in table and "]*" in table


def test_cli_version(capsys):
    import skcal

    assert main(["--version"]) == 0

    assert capsys.readouterr().out.strip() == f"skcal {skcal.__version__}"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--methods", ""], "--methods is empty"),
        (["--methods", " , "], "--methods is empty"),
        (["--methods", "temperature,,platt"], "--methods has an empty name in 'temperature,,platt'"),
        (["--methods", "temperature,"], "--methods has an empty name"),
        (["--methods", "temperature,vector,temperature"],
         "--methods names temperature more than once"),
        (["--dataset", "sst2_gpt2_zeroshot", "--dataset", "sst2_gpt2_zeroshot"],
         "--dataset names sst2_gpt2_zeroshot more than once"),
        (["--resamples", "10", "--resamples", "20"], "--resamples is given more than once"),
        (["--methods", "sklearn-sigmoid", "--no-peers"],
         "--no-peers excludes the peer method(s) sklearn-sigmoid"),
        (["--methods", "temperature,probmetrics-vector", "--fast"],
         "--fast excludes the peer method(s) probmetrics-vector"),
    ],
)
def test_cli_contradictory_or_empty_methods_exit_2(argv, match, capsys):
    assert main(["benchmark", "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--label-column", "foo"], "--label-column applies to the files of --data or "
         "--shift-data, and "
         "none is given (the bundled and --sklearn-sets data sets have no columns to "
         "choose); drop --label-column or give a file"),
        (["--logit-columns", "a,b"], "--logit-columns applies to the files of --data"),
        (["--ignore-columns", "foo"], "--ignore-columns applies to the files of --data"),
        (["--sklearn-sets", "--ignore-columns", "foo"],
         "--ignore-columns applies to the files of --data"),
        (["--input-type", "probabilities"], "--input-type applies to the files of --data "
         "or --shift-data, and none is given (the bundled and --sklearn-sets data sets "
         "hold logits)"),
        (["--shift-draws", "3"], "--shift-draws counts the draws of --label-shift, which "
         "is not given; add --label-shift ALPHA or drop --shift-draws"),
        (["--full"], "--fast and --full contradict each other"),
    ],
)
def test_cli_benchmark_options_left_without_effect_exit_2(argv, message, capsys):
    """An option that the others leave nothing to act on is refused, not ignored
    (fresh36 #7): one line, before any fit."""
    assert main(["benchmark", "--fast", "--quiet", "--methods", "temperature",
                 "--resamples", "0", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"skcal benchmark: error: {message}\n" or (
        captured.err.startswith(f"skcal benchmark: error: {message}")
        and captured.err.count("\n") == 1)


def test_cli_class_absent_from_calibration_split_is_reported(tmp_path, capsys):
    rng = np.random.default_rng(0)
    y_val = rng.integers(0, 3, 300)  # class 3 never occurs here
    y_test = rng.integers(0, 4, 300)
    f = _npz(tmp_path / "gap.npz",
             logits_val=3 * (np.eye(4)[y_val] + rng.normal(size=(300, 4))), y_val=y_val,
             logits_test=3 * (np.eye(4)[y_test] + rng.normal(size=(300, 4))), y_test=y_test)
    assert main(["benchmark", "--data", f, "--no-peers", "--quiet", "--wide"]) == 0
    out, err = capsys.readouterr()
    assert "gap: class(es) [3] of the test split never occur in the calibration split" in err
    rows = [line for line in out.splitlines() if line.startswith(("vector", "platt"))]
    assert len(rows) == 2
    assert all("classes absent from the calibration split" in r for r in rows)


def test_benchmark_reads_parquet_like_csv(tmp_path, capsys):
    """``--data x.parquet`` is read with the CSV rules (split, text labels,
    ignored columns), giving the arrays the same CSV gives."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from skcal.datasets import load_logits_file

    rng = np.random.default_rng(1)
    n = 60
    Z = rng.normal(size=(n, 3))
    names = np.array(["emu", "cat", "dog"])
    y = rng.integers(0, 3, n)
    cols = {"row": np.arange(5, 5 + n), "dog": Z[:, 2], "cat": Z[:, 1], "emu": Z[:, 0],
            "label": names[y], "split": np.where(np.arange(n) < 40, "val", "test")}
    t = pa.table(cols)
    pacsv.write_csv(t, tmp_path / "x.csv")
    pq.write_table(t, tmp_path / "x.parquet")
    kw = dict(ignore_columns=["row"])
    a = load_logits_file(tmp_path / "x.csv", **kw)
    b = load_logits_file(tmp_path / "x.parquet", **kw)
    for k in ("logits_val", "y_val", "logits_test", "y_test"):
        np.testing.assert_array_equal(a[k], b[k])
    # independent reference: the text labels name the columns dog, cat, emu
    np.testing.assert_array_equal(b.logits_val, Z[:40][:, [2, 1, 0]])
    np.testing.assert_array_equal(b.y_val, np.array([2, 1, 0])[y[:40]])
    # integer labels, no split column: split here, as for a CSV
    pq.write_table(pa.table({"a": Z[:, 0], "b": Z[:, 1], "c": Z[:, 2], "y": y}),
                   tmp_path / "i.parquet")
    pacsv.write_csv(pa.table({"a": Z[:, 0], "b": Z[:, 1], "c": Z[:, 2], "y": y}),
                    tmp_path / "i.csv")
    a, b = load_logits_file(tmp_path / "i.csv"), load_logits_file(tmp_path / "i.parquet")
    np.testing.assert_array_equal(a.logits_test, b.logits_test)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert main(["benchmark", "--data", str(tmp_path / "i.parquet"), "--no-peers",
                 "--methods", "temperature", "--resamples", "0", "--repeats", "1",
                 "--quiet"]) == 0
    assert "i (K=3, 30 calibration / 30 test rows)" in capsys.readouterr().out
    # duplicate --logit-columns entries are named first
    assert main(["benchmark", "--data", str(tmp_path / "i.parquet"), "--quiet",
                 "--logit-columns", "a,a,b"]) == 2
    err = capsys.readouterr().err
    assert "'a'" in err and "more than once" in err


def test_cli_quiet_silences_peer_progress_bars(monkeypatch, capsys):
    """Peers' own tqdm bars (netcal draws one per fit) stay off with --quiet."""
    pytest.importorskip("skcal.metrics")
    tqdm = pytest.importorskip("tqdm")
    import tqdm.std

    from scipy.special import softmax

    class Chatty:
        def fit(self, logits, y):
            for _ in tqdm.tqdm(range(50), file=sys.stderr):
                pass
            return self

        def predict_proba(self, logits):
            return softmax(logits, axis=1)

    original = tqdm.std.tqdm.__dict__["__init__"]
    monkeypatch.setitem(_peers.PEERS, "netcal-temperature", ("netcal", lambda rs: Chatty()))
    rc = main(["benchmark", "--dataset", "sst2_gpt2_zeroshot", "--quiet",
               "--resamples", "0", "--repeats", "1",
               "--methods", "temperature,netcal-temperature", "--wide"])
    out = capsys.readouterr()
    assert rc == 0 and out.err == ""
    assert tqdm.std.tqdm.__dict__["__init__"] is original  # restored


_HEAVY = ("torch", "sklearn", "matplotlib", "dask", "pandas", "pyarrow")


def _imported_after(code):
    """Heavy modules in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = (
        f"{code}\nimport sys\n"
        f"print(','.join(m for m in {_HEAVY!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_cli_version_and_help_import_no_heavy_module(argv):
    # main had `skcal --version` import torch and scikit-learn (~4.4 s per call)
    code = (
        "import contextlib, io\nfrom skcal.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    main({argv!r})"
    )
    assert _imported_after(code) == ""


def test_import_skcal_is_light_and_discovery_needs_no_import():
    # README: `import skcal; skcal.utils.discovery.all_calibrators()`
    loaded = _imported_after(
        "import skcal, sys\nassert 'sklearn' not in sys.modules\nnames = [n for n, _ in skcal.utils.discovery.all_calibrators()]\n"
        "assert 'TemperatureScaler' in names and 'PlattScaler' in names, names"
    )
    assert "torch" not in loaded and "matplotlib" not in loaded and "dask" not in loaded
    import skcal

    assert skcal.TemperatureScaler is skcal.scaling.TemperatureScaler
    with pytest.raises(AttributeError, match="no attribute 'NoSuchScaler'"):
        skcal.NoSuchScaler  # noqa: B018


def test_cli_benchmark_input_type_probabilities(tmp_path, capsys):
    # main: a probability file was read as logits with no warning (NLL 1.26, not 1.13)
    from scipy.special import softmax

    d = load_logits(SET)
    P = {s: softmax(np.asarray(d[f"logits_{s}"], dtype=np.float64), axis=1)
         for s in ("val", "test")}
    path = tmp_path / "proba.npz"
    np.savez(path, logits_val=P["val"], y_val=d.y_val, logits_test=P["test"],
             y_test=d.y_test)
    base = ["benchmark", "--data", str(path), "--methods", "temperature", "--no-peers",
            "--resamples", "0", "--repeats", "1", "--quiet"]
    assert main(base + ["--output", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert err.count("skcal benchmark: warning:") == 1  # one per file
    assert "--input-type probabilities" in err
    assert main(base + ["--input-type", "probabilities", "--output", str(tmp_path / "b")]) == 0
    assert "warning" not in capsys.readouterr().err
    by_method = {r["method"]: r for r in _read_csv(tmp_path / "b" / "benchmark.csv")}
    unc, ts = by_method["uncalibrated"], by_method["temperature"]
    yt = d.y_test
    assert float(unc["nll"]) == pytest.approx(
        -np.log(P["test"][np.arange(len(yt)), yt]).mean(), rel=1e-9)
    assert float(ts["nll"]) == pytest.approx(1.1029, abs=5e-5)  # as on the logits (README)


def _plain_top_label_ece(idx, conf, hit, n_bins=15):
    """Top-label ECE of the rows ``idx`` (..., n): a plain loop over bins, vectorised
    over resamples (scipy.stats.bootstrap's ``vectorized`` convention)."""
    idx = np.atleast_2d(idx)
    c, h = conf[idx], hit[idx]
    total = np.zeros(idx.shape[0])
    for b in range(n_bins):
        m = (c > b / n_bins) & (c <= (b + 1) / n_bins)
        cnt = m.sum(axis=1)
        gap = np.abs(np.where(m, h - c, 0.0).sum(axis=1))
        total += gap / idx.shape[1]
    return total if total.size > 1 else total[0]


def test_benchmark_and_report_ece_interval_is_bca_and_holds_the_estimate():
    # main: the benchmark's percentile interval of a calibrated model's ECE lay
    # above its own estimate (BBQ: 1.26 outside [1.34, 3.23]); report used BCa
    from scipy.stats import bootstrap

    from skcal.metrics._intervals import _BATCH_ELEMENTS

    rng = np.random.default_rng(8)
    n = 2000
    p = np.exp(log_softmax(rng.normal(size=(n, 3)) * 2, axis=1))
    y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)  # calibrated
    conf, hit = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    est = _plain_top_label_ece(np.arange(n), conf, hit)
    ref = bootstrap((np.arange(n),), lambda i, axis=-1: _plain_top_label_ece(i, conf, hit),
                    n_resamples=300, vectorized=True, method="BCa",
                    rng=np.random.default_rng(0),
                    batch=max(1, min(300, _BATCH_ELEMENTS // n)))  # skcal's batch
    pct = bootstrap((np.arange(n),), lambda i, axis=-1: _plain_top_label_ece(i, conf, hit),
                    n_resamples=300, vectorized=True, method="percentile",
                    rng=np.random.default_rng(0))
    assert pct.confidence_interval.low > est  # the failure mode of main's benchmark
    rows = [{**dict.fromkeys(_benchmark.COLUMNS, math.nan),
             **dict(dataset="d", method="m", library="-", proba=p, status="ok", ece=est)}]
    _benchmark.add_intervals(rows, y, n_resamples=300, random_state=0)
    assert rows[0]["ece_low"] <= est <= rows[0]["ece_high"]
    assert (rows[0]["ece_low"], rows[0]["ece_high"]) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), rel=1e-6)
    # skcal report: the same function, the same interval for the same seed
    from skcal._cli_calibrate import _with_intervals

    value, low, high, beyond = _with_intervals(y, p, 15, 300, 0)["ece"]
    assert value == pytest.approx(est, rel=1e-9)
    assert (low, high) == pytest.approx((rows[0]["ece_low"], rows[0]["ece_high"]))
    assert beyond is rows[0]["ece_beyond"]


def test_cli_benchmark_binary_probability_file(tmp_path, capsys):
    # main: a one-column probability file became logits [0, p] in the reader:
    # no warning without --input-type, and "row ... sums to 0.0027" with it
    rng = np.random.default_rng(5)
    s = rng.normal(size=600) * 2.0
    y = (rng.random(600) < 1 / (1 + np.exp(-s))).astype(np.int64)
    p = 1 / (1 + np.exp(-1.8 * s))
    path = tmp_path / "binary.npz"
    np.savez(path, logits_val=p[:300], y_val=y[:300], logits_test=p[300:], y_test=y[300:])
    base = ["benchmark", "--data", str(path), "--methods", "temperature", "--no-peers",
            "--resamples", "0", "--repeats", "1", "--quiet"]
    capsys.readouterr()
    assert main(base + ["--output", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert err.count("skcal benchmark: warning:") == 1 and "--input-type probabilities" in err
    assert main(base + ["--input-type", "probabilities", "--output", str(tmp_path / "b")]) == 0
    assert "warning" not in capsys.readouterr().err
    by_method = {r["method"]: r for r in _read_csv(tmp_path / "b" / "benchmark.csv")}
    logp = np.log(np.column_stack([1 - p, p]))
    rows = np.arange(300)

    def nll(Z, yy):
        return -log_softmax(Z, axis=1)[np.arange(len(yy)), yy].mean()

    assert float(by_method["uncalibrated"]["nll"]) == pytest.approx(
        nll(logp[300:], y[300:]), rel=1e-9)
    # temperature: the NLL-optimal T on the calibration rows (bounded 1-D search)
    t = math.exp(minimize_scalar(lambda lt: nll(logp[rows] / math.exp(lt), y[:300]),
                                 bounds=(-5, 5), method="bounded",
                                 options={"xatol": 1e-10}).x)
    assert t > 1.3
    assert float(by_method["temperature"]["nll"]) == pytest.approx(
        nll(logp[300:] / t, y[300:]), rel=1e-6)


def test_cli_csv_index_column_exit_2_and_selected_columns_run(tmp_path, capsys):
    from skcal.cli import main

    df = csv_frame()
    f = tmp_path / "f.csv"
    df.to_csv(f)
    assert main(["benchmark", "--data", str(f), "--fast", "--quiet",
                 "--methods", "temperature", "--repeats", "1"]) == 2
    assert "row index" in capsys.readouterr().err
    assert main(["benchmark", "--data", str(f), "--fast", "--quiet",
                 "--methods", "temperature", "--repeats", "1",
                 "--ignore-columns", ""]) == 0
    out = capsys.readouterr().out
    assert "K=3" in out and "median of 1" not in out and "one timed run" in out


def test_benchmark_times_are_median_of_repeats_after_warm_up(monkeypatch):
    from skcal.benchmark import _benchmark as bm
    from skcal.datasets import load_logits

    calls = []
    real = bm._timed_run

    def spy(make, data):
        out = real(make, data)
        calls.append(out[1])
        return out

    monkeypatch.setattr(bm, "_timed_run", spy)
    d = load_logits("cifar10_resnet20_chenyaofo")
    rows = bm.run_benchmark([d], ["temperature"], peers=False, n_repeats=3)
    row = [r for r in rows if r["method"] == "temperature"][0]
    # uncalibrated and temperature: one warm-up and three timed runs each
    assert len(calls) == 8
    assert row["fit_time_s"] == pytest.approx(float(np.median(calls[5:8])))
    assert "median of 3" in bm.timing_note(3)


def test_benchmark_wrapped_methods_are_the_wrappers_fitted_directly():
    import skcal
    from skcal.metrics import negative_log_likelihood

    d = load_logits("agnews_gpt2_zeroshot")
    names = list(_benchmark.WRAPPED_METHODS)
    assert set(names) <= set(_benchmark.available_methods(peers=False))
    rows = _benchmark.run_benchmark([d], names, n_repeats=1)
    by_name = {r["method"]: r for r in rows}
    direct = {
        "smoothed-isotonic": skcal.SmoothedCalibrator(skcal.IsotonicScaler()),
        "top-versus-all-platt": skcal.TopVersusAllCalibrator(skcal.PlattScaler()),
        "top-versus-all-isotonic": skcal.TopVersusAllCalibrator(skcal.IsotonicScaler()),
    }
    assert set(direct) == set(names)
    for name, est in direct.items():
        P = est.fit(d.logits_val, d.y_val).predict_proba(d.logits_test)
        ref = negative_log_likelihood(d.y_test, np.asarray(P, np.float64))
        assert by_name[name]["library"] == "skcal" and by_name[name]["status"] == "ok"
        assert by_name[name]["nll"] == pytest.approx(ref, rel=1e-6), name


def test_default_benchmark_has_a_row_for_every_default_autocalibrator_candidate():
    from skcal.meta._auto import default_candidates

    names = {n for k in (2, 10) for n, _ in default_candidates(100_000, k)}
    names.discard("identity")  # the "uncalibrated" row
    assert names <= set(_benchmark.DEFAULT_METHODS)


@pytest.mark.parametrize("argv, match", [
    (["--logit-columns", "a,,b"], "argument --logit-columns: empty name in 'a,,b'"),
    (["--repeats", "x"], "argument --repeats: must be an integer in 1..100, got 'x'"),
    (["--shift-draws", "x"], "argument --shift-draws: must be an integer >= 1, got 'x'"),
])
def test_cli_benchmark_bad_numbers_and_column_lists_are_usage_errors(capsys, argv, match):
    # the argparse types shared with fit / apply / report: exit 2, the value named
    assert main(["benchmark", "--fast", *argv]) == 2
    assert match in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--repeats", "0"], "--repeats must be an integer in 1..100, got 0"),
    (["--resamples", "1"], "--resamples must be 0 or an integer >= 2, got 1"),
    (["--shift-draws", "0"], "--shift-draws must be an integer >= 1, got 0"),
    (["--label-shift", "inf"], "--label-shift must be a positive number, got inf"),
    (["--label-shift", "nan"], "--label-shift must be a positive number, got nan"),
])
def test_cli_benchmark_numbers_out_of_range_are_one_line_errors(capsys, argv, message):
    # as --n-bins of skcal report: one line (main: argparse's usage block first)
    assert main(["benchmark", "--fast", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"skcal benchmark: error: {message}"


def test_benchmark_says_probabilities_as_logits_once_per_set(tmp_path, capsys):
    """A probability file read as logits: one warning line for the set, not the
    raw warning of every fit of AutoCalibrator's search (main: 27 of them;
    issue 24 leftovers, item h)."""
    import warnings

    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(1200, 3)) * 2
    y = (Z + rng.gumbel(size=Z.shape)).argmax(axis=1)
    P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    f = tmp_path / "p.npz"
    np.savez(f, logits_val=P[:600], y_val=y[:600], logits_test=P[600:], y_test=y[600:])
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["benchmark", "--data", str(f), "--no-peers", "--methods",
                     "temperature,vector"]) == 0
    err = capsys.readouterr().err
    assert not [w for w in caught if issubclass(w.category, ProbabilitiesAsLogitsWarning)]
    lines = [ln for ln in err.splitlines() if "look like probabilities" in ln
             or "looks like probabilities" in ln]
    assert len(lines) == 1 and lines[0].startswith("skcal benchmark: warning: ")


def test_python_dash_m_skcal_help():
    proc = subprocess.run([sys.executable, "-m", "skcal", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "benchmark" in proc.stdout


def test_benchmark_resamples_0_shows_point_dnll(capsys):
    d = load_logits("sst2_gpt2_zeroshot")
    assert main(["benchmark", "--fast", "--dataset", "sst2_gpt2_zeroshot",
                 "--methods", "temperature", "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.split()[:1] == ["temperature"])
    base = nll(d.logits_test, d.y_test)
    # dNLL is the third cell: NLL(temperature) - NLL(uncalibrated), a number
    cells = row.split()
    assert re.fullmatch(r"[+-]\d+\.\d{4}!?", cells[2]), row
    assert abs(float(cells[2].rstrip("!")) - (float(cells[1]) - base)) < 2e-4


def test_benchmark_auto_is_compared_when_its_choice_has_no_row():
    """--methods without the method auto chose: auto gets its own interval and
    '*' (it had none, and the '*' went to the best of the other rows)."""
    d = load_logits("cifar10_resnet20_chenyaofo")
    rows = _benchmark.run_benchmark([d], methods=["temperature"], peers=False,
                                    n_resamples=50, recommend=True, n_repeats=1)
    by = {r["method"]: r for r in rows}
    auto = by["auto"]
    assert auto["recommended"] not in by  # its choice has no row of its own
    assert auto["nll_low"] < auto["nll"] < auto["nll_high"]
    best = min((r for r in rows if np.isfinite(r["nll"])), key=lambda r: r["nll"])
    assert best["nll_best"] is True
    assert [r["nll_best"] for r in rows].count(True) >= 1
    for r in rows:
        assert r["nll_best"] in (True, False)


def test_benchmark_methods_take_auto_and_skcal_fit_names(capsys):
    """--methods auto is the always-shown AutoCalibrator row (no error); skcal
    fit's names smoothed / top-versus-all run the rows of the wrappers at their
    default inner calibrator; --help says both (fresh36 #6)."""
    argv = ["benchmark", "--fast", "--dataset", "sst2_gpt2_zeroshot", "--resamples", "0"]
    assert main([*argv, "--methods", "smoothed,auto,top-versus-all"]) == 0
    out = capsys.readouterr().out
    shown = [ln.split()[0] for ln in out.splitlines()
             if ln.split()[:1] and ln.split()[0] in (
                 "uncalibrated", "auto", "smoothed-isotonic", "top-versus-all-platt")]
    assert shown == ["uncalibrated", "auto", "smoothed-isotonic", "top-versus-all-platt"]
    rows = _benchmark.run_benchmark([load_logits("sst2_gpt2_zeroshot")],
                                    methods=["smoothed-isotonic"], peers=False,
                                    n_repeats=1)
    row = next(ln for ln in out.splitlines() if ln.startswith("smoothed-isotonic"))
    assert row.split()[1] == f"{rows[1]['nll']:.4f}"
    assert main([*argv, "--methods", "smoothed,smoothed-isotonic"]) == 2
    assert capsys.readouterr().err == (
        "skcal benchmark: error: --methods names smoothed-isotonic more than once "
        "(smoothed is skcal fit's name of smoothed-isotonic)\n")
    assert main(["benchmark", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "'uncalibrated' and 'auto' (AutoCalibrator, whose choice is the " \
           "Recommended line) are always shown first" in text


def _calibrated_row_with_intervals():
    """``(rows, ci)``: one benchmark row of a calibrated binary model (3,000 rows)
    with its 200-resample intervals, and ``confidence_interval``'s BCa of its ECE
    on the same resamples (flagged ``beyond_resamples``)."""
    rng = np.random.default_rng(0)
    n = 3000
    p = rng.uniform(0.5, 1.0, n)
    P = np.column_stack([p, 1 - p])
    y = (rng.uniform(size=n) > p).astype(int)  # calibrated: flagged ECE interval
    rows = [{**dict.fromkeys(_benchmark.COLUMNS, math.nan),
             **dict(dataset="d", method="m", library="-", proba=P, status="ok")}]
    from skcal.benchmark._benchmark import _metrics

    rows[0].update(_metrics(y, P, _benchmark.N_BINS))
    _benchmark.add_intervals(rows, y, n_resamples=200, random_state=0)
    ci = confidence_interval("ece", y, P, method="BCa", n_resamples=200, random_state=0,
                             kind="top-label", n_bins=_benchmark.N_BINS)
    return rows, ci


def test_benchmark_tables_mark_intervals_the_resamples_do_not_back():
    """fresh34: the Markdown table showed a calibrated model's ECE as
    "0.70 [0.62, 0.70]*" with nothing saying the BCa interval was degenerate;
    the flagged intervals carry BEYOND_MARK and the note under the table says
    what it means, only where a shown interval has the mark."""
    rows, ci = _calibrated_row_with_intervals()
    assert ci.beyond_resamples is True and rows[0]["ece_beyond"] is True
    assert rows[0]["nll_beyond"] is False
    wide = _benchmark.format_table(rows, "markdown", wide=True)
    assert f"{100 * rows[0]['ece_high']:.2f}]{_benchmark.BEYOND_MARK}" in wide
    assert _benchmark.BEYOND_NOTE in wide
    # the compact table shows no ECE interval: neither mark nor note
    compact = _benchmark.format_table(rows, "text", wide=False)
    assert "]" + _benchmark.BEYOND_MARK not in compact
    assert _benchmark.BEYOND_NOTE not in compact.replace("\n", " ")


def test_benchmark_csv_holds_the_beyond_flags(tmp_path):
    """fx34c: benchmark.csv lacked the <metric>_beyond flags that add_intervals
    sets (the tables' '~'): each is a column next to its <metric>_best, True
    for the calibrated model's ECE interval that confidence_interval flags."""
    rows, ci = _calibrated_row_with_intervals()
    assert ci.beyond_resamples is True
    _benchmark.write_csv(rows, tmp_path / "b.csv")
    with open(tmp_path / "b.csv", newline="") as fh:
        header = next(csv.reader(fh))
    read, = _read_csv(tmp_path / "b.csv")
    for m in _benchmark.INTERVAL_METRICS:
        assert header[header.index(f"{m}_best") + 1] == f"{m}_beyond"
    assert read["ece_beyond"] == "True"
    assert read["nll_beyond"] == "False"
    assert float(read["ece_high"]) == pytest.approx(ci.high, rel=1e-9)


def test_benchmark_auto_row_takes_its_twins_beyond_flags(tmp_path):
    """Where AutoCalibrator's choice has its own row, auto's intervals are that
    row's, and so are its <metric>_beyond flags (a row default of NaN would
    mark every auto interval '~' and write NaN to benchmark.csv)."""
    d = load_logits("cifar10_resnet20_chenyaofo")
    rows = _benchmark.run_benchmark([d], methods=["temperature", "matrix"], peers=False,
                                    n_resamples=200, recommend=True, n_repeats=1)
    by = {r["method"]: r for r in rows}
    assert by["auto"]["recommended"] == "matrix"  # README
    for m in _benchmark.INTERVAL_METRICS:
        assert by["matrix"][f"{m}_beyond"] in (True, False)
        assert by["auto"][f"{m}_beyond"] is by["matrix"][f"{m}_beyond"]
    table = _benchmark.format_table(rows, wide=True).splitlines()
    auto, matrix = (next(ln for ln in table if ln.split()[:1] == [m])
                    for m in ("auto", "matrix"))
    nll_cell = r"\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]\S*"
    assert re.findall(nll_cell, auto) == re.findall(nll_cell, matrix)
    _benchmark.write_csv(rows, tmp_path / "b.csv")
    read = {r["method"]: r for r in _read_csv(tmp_path / "b.csv")}
    assert read["matrix"]["nll_beyond"] in ("True", "False")
    assert read["auto"]["nll_beyond"] == read["matrix"]["nll_beyond"]


def test_benchmark_footer_names_the_percentile_interval_of_dnll():
    """fx34c: the footer called every interval BCa, but dNLL's '!' (and the
    recommendation's interval) come from a percentile paired bootstrap: the
    numbers equal scipy's percentile interval of the paired NLL difference for
    the same resamples, and the footer says so."""
    from scipy.special import softmax
    from scipy.stats import bootstrap

    from skcal.benchmark._decide import add_uncalibrated_comparison
    from skcal.metrics._intervals import _BATCH_ELEMENTS

    d = load_logits("sst2_gpt2_zeroshot")
    z, y = np.asarray(d.logits_test, dtype=float), np.asarray(d.y_test)
    probas = {"uncalibrated": softmax(z, axis=1), "t": softmax(z / 1.5, axis=1)}
    rows = [{**dict.fromkeys(_benchmark.COLUMNS, math.nan),
             **dict(dataset=d.name, method=m, library="-", proba=p, status="ok",
                    nll=float(-np.mean(np.log(p[np.arange(len(y)), y]))))}
            for m, p in probas.items()]
    _benchmark.add_intervals(rows, y, n_resamples=300, random_state=3)
    add_uncalibrated_comparison(rows, y, n_resamples=300, random_state=3)
    n = len(y)
    loss = {m: -np.log(p[np.arange(n), y]) for m, p in probas.items()}
    diff = loss["t"] - loss["uncalibrated"]
    ref = bootstrap((np.arange(n),), lambda i, axis=-1: diff[i].mean(axis=axis),
                    n_resamples=300, vectorized=True, method="percentile",
                    rng=np.random.default_rng(3), batch=max(1, min(300, _BATCH_ELEMENTS // n)))
    t = rows[1]
    assert (t["nll_change_low"], t["nll_change_high"]) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), rel=1e-9)
    footer = " ".join(_benchmark.format_table(rows, wide=False).split())
    assert "95% BCa bootstrap interval on the test split" in footer  # the table's cells
    assert ("!: worse beyond noise (its paired interval lies above 0, and the change "
            "does not print as +0.0000); that "
            "interval, like the recommendation's, is a 95% percentile paired "
            "bootstrap.") in footer


def test_benchmark_help_says_which_columns_only_wide_shows(capsys):
    # main: the help promised classwise ECE and predict time, which the default
    # (compact) table does not show; checked against the tables themselves
    assert main(["benchmark", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("report NLL, top-label ECE (15 bins), Brier score, accuracy and fit time "
            "on the test split; --wide adds the library, classwise ECE, predict time "
            "and the intervals of ECE, Brier score and accuracy") in text
    args = ["benchmark", "--dataset", "sst2_gpt2_zeroshot", "--methods", "temperature",
            "--no-peers", "--quiet", "--resamples", "20"]

    def table(extra):
        assert main(args + extra) == 0
        lines = capsys.readouterr().out.splitlines()
        head = next(ln for ln in lines if ln.startswith("method "))
        row = next(ln for ln in lines if ln.startswith("temperature "))
        return re.split(r"\s{2,}", head.strip()), row

    compact, row = table([])
    assert compact == ["method", "NLL", "dNLL", "ECE %", "Brier", "acc %", "fit ms", "note"]
    assert row.count("[") == 1  # the NLL's interval only
    wide, row = table(["--wide"])
    assert [h for h in wide if h not in compact] == ["library", "cw-ECE %", "predict ms"]
    assert row.count("[") == 4  # NLL, ECE, Brier, accuracy


def test_benchmark_output_an_existing_file_is_reports_one_line_error(tmp_path, capsys):
    """`--output FILE` of an existing file: benchmark gives report's one-line
    error (main ended with a raw "[Errno 17] File exists"), before any work,
    and leaves the file alone (fx37 d)."""
    pytest.importorskip("skops")
    taken = tmp_path / "cal.csv"
    taken.write_text("x\n")
    errors = {}
    for argv in (["benchmark", "--fast", "--dataset", "sst2_gpt2_zeroshot",
                  "--resamples", "0"],
                 ["report", "--data", "absent.npz"]):
        assert main([*argv, "--output", str(taken)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        errors[argv[0]] = err
    for command, err in errors.items():
        assert err == (f"skcal {command}: error: --output {taken} exists and is not "
                       "a folder\n")
    assert taken.read_text() == "x\n"
