"""``skcal fit`` / ``skcal apply`` / ``skcal report`` as a user runs them."""

import json
import re
import warnings

import numpy as np
import pytest
from scipy.special import log_softmax, softmax

from _helpers import temperature_reference
from skcal.cli import main

pytest.importorskip("skops")
pa = pytest.importorskip("pyarrow")

NAMES = ["ant", "bee", "cat"]


@pytest.fixture(scope="module")
def logits():
    rng = np.random.default_rng(0)
    n, K = 900, 3
    y = rng.integers(0, K, n)
    Z = rng.normal(size=(n, K)) * 2.0
    Z[np.arange(n), y] += 2.0
    return Z * 2.5, y


def _write(path, Z, y, *, text=True, extra=None):
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    cols = {**(extra or {}), **{NAMES[k]: Z[:, k] for k in range(Z.shape[1])}}
    if y is not None:
        cols["label"] = np.array(NAMES)[y] if text else y
    t = pa.table(cols)
    if str(path).endswith(".csv"):
        pacsv.write_csv(t, path)
    else:
        pq.write_table(t, path)


def _err(capsys):
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err  # one line, no traceback
    return err


@pytest.mark.parametrize("fmt", ["csv", "parquet", "npz", "npy"])
def test_fit_apply_round_trip(tmp_path, logits, fmt, capsys):
    import skops.io as sio

    Z, y = logits
    cal, new = tmp_path / f"cal.{fmt}", tmp_path / f"new.{fmt}"
    if fmt in ("csv", "parquet"):
        _write(cal, Z[:600], y[:600])
        _write(new, Z[600:], None)
    elif fmt == "npz":
        np.savez(cal, logits=Z[:600].astype(np.float32), y=y[:600])
        np.savez(new, logits=Z[600:])
    else:
        cal, new = tmp_path / "cal_logits.npy", tmp_path / "new_logits.npy"
        np.save(cal, Z[:600])
        np.save(tmp_path / "cal_labels.npy", y[:600])
        np.save(new, Z[600:])
    model = tmp_path / "ts.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    from skcal.io import trusted_types

    ts = sio.load(model, trusted=trusted_types())
    assert abs(ts.temperature_ - temperature_reference(Z[:600], y[:600])) < 1e-5
    out = tmp_path / "out.csv"
    assert main(["apply", str(model), "--data", str(new), "--output", str(out)]) == 0
    import pyarrow.csv as pacsv

    t = pacsv.read_csv(out)
    expected_cols = NAMES if fmt in ("csv", "parquet") else ["0", "1", "2"]
    assert t.column_names == expected_cols
    P = np.column_stack([t.column(c).to_numpy() for c in expected_cols])
    np.testing.assert_allclose(P, softmax(Z[600:] / ts.temperature_, axis=1), atol=1e-12)


def test_apply_reorders_named_columns_and_log_proba(tmp_path, logits):
    Z, y = logits
    cal, new = tmp_path / "cal.parquet", tmp_path / "new.parquet"
    _write(cal, Z, y)
    # same classes, columns in another order: matched by name
    import pyarrow.parquet as pq

    perm = [2, 0, 1]
    pq.write_table(pa.table({NAMES[k]: Z[:50, k] for k in perm}), new)
    model = tmp_path / "vs.skops"
    assert main(["fit", "--data", str(cal), "--method", "vector", "--output", str(model)]) == 0
    out = tmp_path / "out.npz"
    assert main(["apply", str(model), "--data", str(new), "--output", str(out),
                 "--log-proba"]) == 0
    import skcal.io

    vs = skcal.io.load(model)
    with np.load(out) as f:
        assert f["classes"].tolist() == NAMES
        ref = log_softmax(Z[:50] * vs.coef_ + vs.intercept_, axis=1)
        np.testing.assert_allclose(f["log_proba"], ref, atol=1e-10)


def test_fit_params_and_methods(tmp_path, logits):
    Z, y = logits
    cal = tmp_path / "cal.npz"
    np.savez(cal, logits=Z, y=y)
    for method in ("platt", "isotonic", "VectorScaler"):
        out = tmp_path / f"{method}.skops"
        assert main(["fit", "--data", str(cal), "--method", method, "--output", str(out)]) == 0
    out = tmp_path / "p.skops"
    assert main(["fit", "--data", str(cal), "--method", "platt", "--param",
                 "target_smoothing=False", "--param", "max_iter=300",
                 "--output", str(out)]) == 0
    import skcal.io

    p = skcal.io.load(out)
    assert p.target_smoothing is False and p.max_iter == 300


def test_fit_calibrator_parameters_by_method_name(tmp_path, logits):
    # found by a fresh-user run: --param calibrator=isotonic and
    # --param candidates=[...] were refused ("must be an skcal calibrator, got str")
    import skcal
    import skcal.io

    Z, y = logits
    cal = tmp_path / "cal.npz"
    np.savez(cal, logits=Z, y=y)
    out = tmp_path / "s.skops"
    assert main(["fit", "--data", str(cal), "--method", "smoothed", "--param",
                 "calibrator=beta", "--output", str(out)]) == 0
    sm = skcal.io.load(out)
    assert type(sm.calibrator).__name__ == "BetaCalibrator"
    ref = skcal.SmoothedCalibrator(skcal.BetaCalibrator()).fit(Z, y)
    np.testing.assert_allclose(sm.predict_proba(Z), ref.predict_proba(Z), rtol=1e-12)
    assert main(["fit", "--data", str(cal), "--method", "auto", "--param",
                 "candidates=['temperature', 'IsotonicScaler']", "--output", str(out)]) == 0
    auto = skcal.io.load(out)
    assert [type(c).__name__ for c in auto.candidates] == ["TemperatureScaler",
                                                           "IsotonicScaler"]
    assert auto.best_name_ in ("temperature", "isotonic")


def test_fit_knows_the_benchmark_and_autocalibrator_method_names(tmp_path, logits, capsys):
    """The names the benchmark recommends and AutoCalibrator.best_name_ gives
    (smoothed-isotonic, ...) are --method names and candidates= names too,
    fitting the same configured wrapper (fresh36 #6)."""
    import skcal
    import skcal.io

    Z, y = logits
    cal = tmp_path / "cal.npz"
    np.savez(cal, logits=Z, y=y)
    out = tmp_path / "s.skops"
    for method, wrapper, inner in [
        ("smoothed-isotonic", skcal.SmoothedCalibrator, skcal.IsotonicScaler),
        ("top-versus-all-platt", skcal.TopVersusAllCalibrator, skcal.PlattScaler),
        ("top-versus-all-isotonic", skcal.TopVersusAllCalibrator, skcal.IsotonicScaler),
    ]:
        assert main(["fit", "--data", str(cal), "--method", method, "--output",
                     str(out)]) == 0
        assert capsys.readouterr().out.startswith(f"fitted {wrapper.__name__} on 900 rows")
        got = skcal.io.load(out)
        assert type(got) is wrapper and type(got.calibrator) is inner
        ref = wrapper(inner()).fit(Z, y)
        np.testing.assert_allclose(got.predict_proba(Z), ref.predict_proba(Z), rtol=1e-12)
    assert main(["fit", "--data", str(cal), "--method", "auto", "--param",
                 "candidates=['temperature', 'smoothed-isotonic']", "--output",
                 str(out)]) == 0
    auto = skcal.io.load(out)
    assert [type(c).__name__ for c in auto.candidates] == ["TemperatureScaler",
                                                           "SmoothedCalibrator"]
    assert type(auto.candidates[1].calibrator).__name__ == "IsotonicScaler"
    capsys.readouterr()
    assert main(["fit", "--data", str(cal), "--method", "smoothed-isotonic", "--param",
                 "calibrator=beta", "--output", str(out)]) == 2
    assert _err(capsys) == (
        "skcal fit: error: --method smoothed-isotonic is SmoothedCalibrator over "
        "IsotonicScaler, its calibrator fixed: --param calibrator does not apply to "
        "it; use --method smoothed with --param calibrator")


def _fitted_temperature(tmp_path, Z, y):
    """``(test.csv, ts.skops)``: rows 600: as a test file, TS fitted by the CLI on rows :600."""
    cal, test = tmp_path / "cal.csv", tmp_path / "test.csv"
    _write(cal, Z[:600], y[:600])
    _write(test, Z[600:], y[600:])
    model = tmp_path / "ts.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    return test, model


def test_report(tmp_path, logits, capsys):
    Z, y = logits
    test, model = _fitted_temperature(tmp_path, Z, y)
    rep = tmp_path / "rep"
    assert main(["report", "--data", str(test), "--model", str(model), "--output",
                 str(rep), "--n-bootstrap", "30"]) == 0
    for f in ("report.md", "metrics.csv", "metrics.json", "reliability.png"):
        assert (rep / f).stat().st_size > 0
    m = json.loads((rep / "metrics.json").read_text())
    # independent reference: plain NumPy NLL and accuracy
    Zt, yt = Z[600:], y[600:]
    nll0 = -log_softmax(Zt, axis=1)[np.arange(len(yt)), yt].mean()
    assert m["uncalibrated"]["nll"]["value"] == pytest.approx(nll0, rel=1e-9)
    T = temperature_reference(Z[:600], y[:600])
    nll1 = -log_softmax(Zt / T, axis=1)[np.arange(len(yt)), yt].mean()
    assert m["TemperatureScaler"]["nll"]["value"] == pytest.approx(nll1, rel=1e-5)
    acc = (Zt.argmax(axis=1) == yt).mean()
    assert m["TemperatureScaler"]["accuracy"]["value"] == pytest.approx(acc)
    for res in m.values():
        for v in res.values():
            # BCa intervals of the report contain their estimate
            assert v["low"] <= v["value"] <= v["high"]
    # the flag of each interval (metrics.json, metrics.csv, report.md, terminal) is
    # confidence_interval's beyond_resamples for the same rows and seed
    from skcal.metrics import confidence_interval

    P1 = softmax(Zt / T, axis=1)
    ci = confidence_interval("ece", yt, P1, method="BCa", n_resamples=30, random_state=0,
                             kind="top-label", n_bins=15)
    assert (m["TemperatureScaler"]["ece"]["low"], m["TemperatureScaler"]["ece"]["high"]) \
        == pytest.approx((ci.low, ci.high), rel=1e-5)
    assert m["TemperatureScaler"]["ece"]["beyond_resamples"] is ci.beyond_resamples
    csv = (rep / "metrics.csv").read_text().splitlines()
    assert csv[0] == "model,metric,value,low,high,beyond_resamples"
    flagged = [r for r, res in m.items() for k, v in res.items() if v["beyond_resamples"]]
    md, out = (rep / "report.md").read_text(), capsys.readouterr().out
    for text in (md, out):
        assert ("~: BCa puts an end beyond the resamples" in text) == bool(flagged)
        assert text.count("]~") == len(flagged)
    # without a model: only the uncalibrated rows
    rep2 = tmp_path / "rep2"
    assert main(["report", "--data", str(test), "--output", str(rep2),
                 "--n-bootstrap", "0"]) == 0
    text = (rep2 / "metrics.json").read_text()
    assert list(json.loads(text)) == ["uncalibrated"]
    # strict JSON: no bootstrap interval is null, not a bare NaN
    m = json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in metrics.json"))
    nll = m["uncalibrated"]["nll"]
    assert nll["low"] is None and nll["high"] is None and nll["value"] > 0


def test_report_figure_shows_bin_counts(tmp_path, logits, monkeypatch):
    """reliability.png is drawn by the benchmark's small multiples: one panel
    per row of the report, each with a histogram whose bars are labelled with
    the rows per bin (summing to the test rows) and keep their x tick labels."""
    pytest.importorskip("matplotlib")
    import skcal.benchmark._decide as decide

    figs = []
    real = decide.plot_reliability_panels
    monkeypatch.setattr(decide, "plot_reliability_panels",
                        lambda *a, **k: figs.append(real(*a, **k)) or figs[-1])
    Z, y = logits
    test, model = _fitted_temperature(tmp_path, Z, y)
    assert main(["report", "--data", str(test), "--model", str(model), "--output",
                 str(tmp_path / "rep"), "--n-bootstrap", "0", "--n-bins", "8"]) == 0
    (fig,) = figs
    hists = [ax for ax in fig.axes if ax.get_visible() and ax.get_yscale() == "log"]
    assert len(hists) == 2  # uncalibrated and TemperatureScaler
    for hax in hists:
        counts = [int(t.get_text()) for t in hax.texts if t.get_text()]
        assert sum(counts) == len(y) - 600
        assert hax.xaxis.get_tick_params()["labelbottom"]


def _bad_paths(tmp_path, logits):
    Z, y = logits
    good = tmp_path / "good.csv"
    _write(good, Z[:100], y[:100])
    with_id = tmp_path / "with_id.csv"
    _write(with_id, Z[:100], y[:100], extra={"id": np.arange(100)})
    _write(tmp_path / "new_id.csv", Z[:100], None, extra={"id": np.arange(100)})
    (tmp_path / "nonnum.csv").write_text("a,b,label\n1,x,0\n2,3,1\n")
    (tmp_path / "empty_cell.csv").write_text("a,b,label\n1,,0\n2,3,1\n")
    (tmp_path / "nan.csv").write_text("a,b,label\n1,nan,0\n2,3,1\n")
    (tmp_path / "header_only.csv").write_text("a,b,label\n")
    (tmp_path / "zero.csv").write_text("")
    (tmp_path / "ragged.csv").write_text("a,b,label\n1,2\n2,3,1\n")
    (tmp_path / "one_class.csv").write_text("a,b,label\n1,2,0\n2,3,0\n")
    (tmp_path / "bad_label.csv").write_text("a,b,label\n1,2,0\n2,3,7\n")
    (tmp_path / "fake.parquet").write_text("nope")
    (tmp_path / "x.txt").write_text("a,b")
    np.savez(tmp_path / "k4.npz", logits=np.zeros((5, 4)))
    model = tmp_path / "m.skops"
    assert main(["fit", "--data", str(good), "--method", "temperature",
                 "--output", str(model)]) == 0
    return good, model


BAD_FIT = [
    (["--data", "{d}/missing.csv"], "no such file"),
    (["--data", "{d}/x.txt"], "unsupported file type"),
    (["--data", "{d}/fake.parquet"], "not a readable parquet"),
    (["--data", "{d}/nonnum.csv"], "column 'b'"),
    (["--data", "{d}/empty_cell.csv"], "empty value"),
    (["--data", "{d}/nan.csv"], "non-finite"),
    (["--data", "{d}/header_only.csv"], "no rows"),
    (["--data", "{d}/zero.csv"], "empty CSV"),
    (["--data", "{d}/ragged.csv"], "Expected 3 columns"),
    (["--data", "{d}/one_class.csv"], "one class only"),
    (["--data", "{d}/bad_label.csv"], "class indices 0..1"),
    (["--data", "{d}/with_id.csv"], "column(s) 'id' look like a row index"),
    (["--data", "{d}/with_id.csv", "--logit-columns", "ant,bee,cat"], "column 'id' is neither"),
    (["--data", "{d}/good.csv", "--logit-columns", "ant,zzz"],
     "--logit-columns entry 'zzz' is not a column"),
    (["--data", "{d}/good.csv", "--label-column", "lbl"],
     "--label-column 'lbl' is not a column"),
    # the label column skipped: said so, not "the header needs a 'label' column"
    # while listing 'label' among the columns (fresh36 #9)
    (["--data", "{d}/good.csv", "--ignore-columns", "label"],
     "good.csv: no label column: --ignore-columns skips 'label', the label column; drop "
     "it from --ignore-columns, or name the label column with --label-column"),
    (["--data", "{d}/good.csv", "--ignore-columns", "label", "--label-column", "label"],
     "good.csv: --label-column 'label' is also in --ignore-columns; drop it from one of "
     "them"),
    (["--data", "{d}/good.csv", "--method", "nope"], "unknown method 'nope'"),
    (["--data", "{d}/good.csv", "--param", "max_iter=-1"], "max_iter"),
    (["--data", "{d}/good.csv", "--param", "foo=1"], "Invalid parameter 'foo'"),
    (["--data", "{d}/good.csv", "--param", "foo"], "expected KEY=VALUE"),
    (["--data", "{d}/good.csv", "--method", "smoothed", "--param", "calibrator=nope"],
     "--param calibrator: unknown method 'nope'"),
    # a parameter of an inner calibrator left at its default None (chosen in
    # fit) was an AttributeError traceback (fresh36 #2)
    (["--data", "{d}/good.csv", "--method", "smoothed", "--param", "calibrator__clip=None"],
     "--param calibrator__clip: calibrator is None (its default, chosen in fit), so it "
     "has no parameters to set; name it as well, e.g. --param calibrator=isotonic"),
    (["--data", "{d}/good.csv", "--method", "top-versus-all", "--param",
      "calibrator__clip=None"], "--param calibrator__clip: calibrator is None"),
    (["--data", "{d}/good.csv", "--method", "auto", "--param", "candidates__0=None"],
     "--param candidates__0: candidates is None (its default, chosen in fit)"),
    (["--data", "{d}/good.csv", "--method", "auto", "--param", "candidates=['temperature']",
      "--param", "candidates__0=None"],
     "--param candidates__0: candidates is a list, not one calibrator"),
    # found by a fresh-user run: the feature column was read as a class logit
    (["--data", "{d}/good.csv", "--method", "local-temperature", "--param",
      "n_extra_features=1"], "cannot pass extra features"),
    (["--data", "{d}/good.csv", "--param", "tol=1e-6", "--param", "tol=1e-8"],
     "--param tol is given more than once"),
    (["--data", "{d}/good.csv", "--method", "platt", "--method", "beta"],
     "--method is given more than once"),
    (["--data", "{d}/good.csv", "--output={d}/a.skops", "--output", "{d}/b.skops"],
     "--output is given more than once"),
    (["--data", "{d}/good.csv", "--output", "{d}/m.pkl"], "must end in .skops"),
    (["--data", "{d}/good.csv", "--output", "{d}/no/dir/m.skops"], "does not exist"),
]


@pytest.mark.parametrize("args, message", BAD_FIT)
def test_fit_bad_input_one_line_exit_2(tmp_path, logits, capsys, args, message):
    _bad_paths(tmp_path, logits)
    capsys.readouterr()
    d = str(tmp_path)
    args = [a.format(d=d) for a in args]
    if "--method" not in args:
        args += ["--method", "temperature"]
    if "--output" not in args:
        args += ["--output", f"{d}/out.skops"]
    assert main(["fit", *args]) == 2
    err = _err(capsys)
    assert err.startswith("skcal fit: error:") and message in err


BAD_APPLY = [
    (["{d}/missing.skops", "--data", "{d}/good.csv", "--output", "{d}/o.csv"], "no such model"),
    (["{d}/good.csv", "--data", "{d}/good.csv", "--output", "{d}/o.csv"], "not a loadable"),
    (["{d}/m.skops", "--data", "{d}/k4.npz", "--output", "{d}/o.csv"], "4 logit columns"),
    (["{d}/m.skops", "--data", "{d}/good.csv", "--output", "{d}/o.txt"], "unsupported output"),
    (["{d}/m.skops", "--data", "{d}/good.csv", "--output", "{d}/no/o.csv"], "does not exist"),
    (["{d}/m.skops", "--data", "{d}/missing.csv", "--output", "{d}/o.csv"], "no such file"),
    (["{d}/m.skops", "--data", "{d}/new_id.csv", "--output", "{d}/o.csv"],
     "column(s) 'id' look like a row index"),
]


@pytest.mark.parametrize("args, message", BAD_APPLY)
def test_apply_bad_input_one_line_exit_2(tmp_path, logits, capsys, args, message):
    _bad_paths(tmp_path, logits)
    capsys.readouterr()
    assert main(["apply", *[a.format(d=str(tmp_path)) for a in args]]) == 2
    err = _err(capsys)
    assert err.startswith("skcal apply: error:") and message in err


def test_report_bad_input(tmp_path, logits, capsys):
    good, model = _bad_paths(tmp_path, logits)
    capsys.readouterr()
    assert main(["report", "--data", str(good), "--output", str(good)]) == 2
    assert "not a folder" in _err(capsys)
    assert main(["report", "--data", str(good), "--model", str(tmp_path / "x.skops"),
                 "--output", str(tmp_path / "r")]) == 2
    assert "no such model" in _err(capsys)
    assert main(["report", "--data", str(good), "--output", str(tmp_path / "r"),
                 "--n-bins", "0"]) == 2
    assert "--n-bins" in _err(capsys)
    # more bins than the metrics allow for this many rows: the command's one
    # line (exit 2), not a traceback from inside the metrics
    assert main(["report", "--data", str(good), "--output", str(tmp_path / "r"),
                 "--n-bins", "100000"]) == 2
    assert _err(capsys).startswith(  # _err: one line
        "skcal report: error: --n-bins 100000: n_bins=100000 is more than both the")


def test_skops_model_of_foreign_type_is_refused(tmp_path, logits, capsys):
    from sklearn.linear_model import LogisticRegression

    import skcal.io

    good, _ = _bad_paths(tmp_path, logits)
    path = tmp_path / "lr.skops"
    skcal.io.dump(LogisticRegression().fit([[0.0], [1.0]], [0, 1]), path)
    capsys.readouterr()
    assert main(["apply", str(path), "--data", str(good), "--output",
                 str(tmp_path / "o.csv")]) == 2
    assert "not a skcal calibrator" in _err(capsys)


def test_text_labels_matching_headers_only_up_to_case(tmp_path, logits, capsys):
    import pyarrow.csv as pacsv

    Z, y = logits

    cols = {name.upper(): Z[:, k] for k, name in enumerate(NAMES)}
    cols["label"] = np.array(NAMES)[y]
    path = tmp_path / "case.csv"
    pacsv.write_csv(pa.table(cols), path)
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(tmp_path / "m.skops")]) == 2
    assert "only when case and spaces are ignored" in _err(capsys)
    assert main(["benchmark", "--data", str(path), "--quiet",
                       "--methods", "temperature"]) == 2
    assert "only when case and spaces are ignored" in _err(capsys)


def _write_int(path, Z, y, order):
    """A CSV/Parquet file with the logit columns NAMES[k] for k in ``order``."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    cols = {NAMES[k]: Z[:, k] for k in order}
    if y is not None:
        cols["label"] = y  # integer class indices of the fit file's columns
    t = pa.table(cols)
    (pacsv.write_csv if str(path).endswith(".csv") else pq.write_table)(t, path)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_integer_label_model_matches_columns_by_name(tmp_path, logits, fmt, capsys):
    """Integer labels: the fit file's header is kept and matched by name later."""
    import skcal.io

    Z, y = logits
    cal, new = tmp_path / f"cal.{fmt}", tmp_path / f"new.{fmt}"
    _write_int(cal, Z[:600], y[:600], [0, 1, 2])
    _write_int(new, Z[600:], y[600:], [1, 0, 2])  # bee, ant, cat
    model = tmp_path / "ts.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    ts = skcal.io.load(model)
    assert list(ts.feature_names_in_) == NAMES
    T = temperature_reference(Z[:600], y[:600])
    out = tmp_path / "o.npz"
    assert main(["apply", str(model), "--data", str(new), "--output", str(out)]) == 0
    with np.load(out) as f:
        np.testing.assert_allclose(f["proba"], softmax(Z[600:] / T, axis=1), atol=1e-6)
    rep = tmp_path / "rep"
    assert main(["report", "--data", str(new), "--model", str(model), "--output",
                 str(rep), "--n-bootstrap", "0"]) == 0
    m = json.loads((rep / "metrics.json").read_text())
    Zt, yt = Z[600:], y[600:]
    acc = (Zt.argmax(axis=1) == yt).mean()
    nll0 = -log_softmax(Zt, axis=1)[np.arange(len(yt)), yt].mean()
    nll1 = -log_softmax(Zt / T, axis=1)[np.arange(len(yt)), yt].mean()
    assert m["uncalibrated"]["accuracy"]["value"] == pytest.approx(acc)
    assert m["TemperatureScaler"]["accuracy"]["value"] == pytest.approx(acc)
    assert m["uncalibrated"]["nll"]["value"] == pytest.approx(nll0, rel=1e-9)
    assert m["TemperatureScaler"]["nll"]["value"] == pytest.approx(nll1, rel=1e-5)
    # other names: an error naming the missing and the extra columns
    import pyarrow.csv as pacsv

    odd = tmp_path / "odd.csv"
    pacsv.write_csv(pa.table({"ant": Z[:9, 0], "bee": Z[:9, 1], "emu": Z[:9, 2],
                              "label": y[:9]}), odd)
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(odd), "--output",
                 str(tmp_path / "x.csv")]) == 2
    err = _err(capsys)
    assert "missing" in err and "'cat'" in err and "'emu'" in err
    assert main(["report", "--data", str(odd), "--model", str(model), "--output",
                 str(tmp_path / "r2")]) == 2
    assert "'cat'" in _err(capsys)
    # explicit positional use: --logit-columns naming none of the fitted names
    assert main(["apply", str(model), "--data", str(odd), "--output",
                 str(tmp_path / "x.csv"), "--logit-columns", "ant,bee,emu"]) == 2
    assert "'cat'" in _err(capsys)
    pacsv.write_csv(pa.table({"a": Z[:9, 0], "b": Z[:9, 1], "c": Z[:9, 2],
                              "label": y[:9]}), odd)
    assert main(["apply", str(model), "--data", str(odd), "--output",
                 str(tmp_path / "x.npz"), "--logit-columns", "a,b,c"]) == 0
    with np.load(tmp_path / "x.npz") as f:
        np.testing.assert_allclose(f["proba"], softmax(Z[:9] / T, axis=1), atol=1e-6)
    # a file without names (.npz) stays positional
    np.savez(tmp_path / "new.npz", logits=Z[600:])
    assert main(["apply", str(model), "--data", str(tmp_path / "new.npz"), "--output",
                 str(out)]) == 0
    with np.load(out) as f:
        np.testing.assert_allclose(f["proba"], softmax(Z[600:] / T, axis=1), atol=1e-6)


def test_duplicate_logit_columns_named_first(tmp_path, logits, capsys):
    Z, y = logits
    cal = tmp_path / "cal.csv"
    _write_int(cal, Z[:50], y[:50], [0, 1, 2])
    assert main(["fit", "--data", str(cal), "--method", "temperature", "--output",
                 str(tmp_path / "m.skops"), "--logit-columns", "ant,ant,bee"]) == 2
    err = _err(capsys)
    assert "duplicate" in err and "'ant'" in err and "'cat'" not in err


def test_classes_param_in_another_order_than_named_columns_is_refused(tmp_path, logits, capsys):
    # found by a fresh-user run: --param classes=[...] silently re-labelled
    # the named columns (column 'ant' fitted as class 'bee')
    Z, y = logits
    path = tmp_path / "t.csv"
    _write(path, Z, y)
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--param", "classes=['bee','ant','cat']",
                 "--output", str(tmp_path / "m.skops")]) == 2
    assert "names the logit columns" in _err(capsys)
    # the same order as the columns is accepted
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--param", "classes=['ant','bee','cat']",
                 "--output", str(tmp_path / "m.skops")]) == 0


def test_integer_labels_with_permuted_class_number_headers_match_by_name(tmp_path, logits,
                                                                          capsys):
    # headers '1','0','2' were taken by position on an older main, then refused;
    # the one reader's rule (as the loader's): the column headed k is class k
    import pyarrow.csv as pacsv

    from skcal.io import load

    Z, y = logits
    path = tmp_path / "num.csv"
    pacsv.write_csv(pa.table({"1": Z[:, 1], "0": Z[:, 0], "2": Z[:, 2], "label": y}), path)
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(tmp_path / "m.skops")]) == 0
    ts = load(tmp_path / "m.skops")
    assert ts.temperature_ == pytest.approx(temperature_reference(Z, y), rel=1e-5)
    assert list(ts.feature_names_in_) == ["0", "1", "2"]
    out = tmp_path / "p.npz"
    assert main(["apply", str(tmp_path / "m.skops"), "--data", str(path),
                 "--output", str(out)]) == 0
    np.testing.assert_allclose(np.load(out)["proba"], softmax(Z / ts.temperature_, axis=1),
                               rtol=1e-6, atol=1e-12)


def test_unknown_label_message_has_no_numpy_repr(tmp_path, logits, capsys):
    Z, y = logits
    path = tmp_path / "t.csv"
    _write(path, Z, y)
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(tmp_path / "m.skops")]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.csv"
    labels = np.array(NAMES, dtype=object)[y]
    labels[0] = "fox"
    import pyarrow.csv as pacsv

    pacsv.write_csv(pa.table({**{NAMES[k]: Z[:, k] for k in range(3)}, "label": labels}), bad)
    assert main(["report", "--data", str(bad), "--model", str(tmp_path / "m.skops"),
                 "--output", str(tmp_path / "r"), "--n-bootstrap", "0"]) == 2
    err = _err(capsys)
    assert "'fox'" in err and "np.str_" not in err


def test_report_and_fit_input_type_probabilities(tmp_path, logits, capsys):
    # main: report read probabilities as logits without a word (no --input-type)
    import skops.io as sio

    from skcal.io import load

    Z, y = logits
    P = softmax(Z, axis=1)
    cal, test = tmp_path / "cal.csv", tmp_path / "test.csv"
    _write(cal, P[:600], y[:600])
    _write(test, P[600:], y[600:])
    capsys.readouterr()
    # refused: the numbers of probabilities read as logits would be bogus
    assert main(["report", "--data", str(test), "--output", str(tmp_path / "r0"),
                 "--n-bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert "skcal report: error:" in err and "look like probabilities" in err
    assert "--input-type probabilities" in err and "--input-type logits" in err
    assert not (tmp_path / "r0").exists()
    assert main(["report", "--data", str(test), "--output", str(tmp_path / "r1"),
                 "--n-bootstrap", "0", "--input-type", "probabilities"]) == 0
    assert "warning" not in capsys.readouterr().err
    m = json.loads((tmp_path / "r1" / "metrics.json").read_text())
    Pt, yt = P[600:], y[600:]
    assert m["uncalibrated"]["nll"]["value"] == pytest.approx(
        -np.log(Pt[np.arange(len(yt)), yt]).mean(), rel=1e-9)
    # fit --input-type is the calibrator's input_type; T fitted on log P
    model = tmp_path / "ts.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature", "--input-type",
                 "probabilities", "--output", str(model)]) == 0
    ts = load(model)
    assert ts.input_type == "probabilities"
    assert ts.temperature_ == pytest.approx(temperature_reference(np.log(P[:600]), y[:600]), rel=1e-5)
    assert sio.get_untrusted_types(file=model)  # a real skops file
    # with --model, --input-type must agree with the model's
    assert main(["report", "--data", str(test), "--model", str(model), "--output",
                 str(tmp_path / "r2"), "--input-type", "logits"]) == 2
    assert "fitted with input_type='probabilities'" in _err(capsys)


def test_npz_model_on_named_columns_in_another_order_is_refused(tmp_path, logits, capsys):
    # main: applied by position without a word
    Z, y = logits
    cal = tmp_path / "cal.npz"
    np.savez(cal, logits=Z[:600].astype(np.float32), y=y[:600])
    model = tmp_path / "m.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    new = tmp_path / "new.csv"
    _write(new, Z[600:, [2, 0, 1]], None)  # columns ant, bee, cat hold classes 2, 0, 1
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(new), "--output",
                 str(tmp_path / "o.npz")]) == 2
    err = _err(capsys)
    assert "fitted without column names" in err and "--logit-columns" in err
    # explicit: the listed columns in class order, by position
    assert main(["apply", str(model), "--data", str(new), "--logit-columns", "bee,cat,ant",
                 "--output", str(tmp_path / "o.npz")]) == 0
    T = temperature_reference(Z[:600], y[:600])
    np.testing.assert_allclose(np.load(tmp_path / "o.npz")["proba"],
                               softmax(Z[600:] / T, axis=1), rtol=1e-5, atol=1e-9)


def test_npz_model_on_class_named_columns_and_an_extra_one_names_it(tmp_path, logits,
                                                                    capsys):
    Z, y = logits
    cal = tmp_path / "cal.npz"
    np.savez(cal, logits=Z[:600], y=y[:600])
    model = tmp_path / "m.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    new = tmp_path / "new.csv"
    import pyarrow.csv as pacsv

    pacsv.write_csv(pa.table({**{str(k): Z[600:, k] for k in range(3)},
                              "margin": np.abs(Z[600:]).max(axis=1)}), new)
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(new), "--output",
                 str(tmp_path / "o.npz")]) == 2
    err = _err(capsys)
    assert "column 'margin' is neither the label column nor a class of the model" in err
    assert "--ignore-columns margin" in err


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_extra_numeric_column_is_named_and_can_be_ignored(tmp_path, logits, fmt, capsys):
    # main: 'margin' was read as a 4th class ("Classes [3] never occur")
    Z, y = logits
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    path = tmp_path / f"cal.{fmt}"
    t = pa.table({**{n: Z[:, k] for k, n in enumerate(NAMES)},
                  "margin": np.abs(Z).max(axis=1), "label": y})  # margin after the logits
    pacsv.write_csv(t, path) if fmt == "csv" else pq.write_table(t, path)
    model = tmp_path / "m.skops"
    capsys.readouterr()
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(model)]) == 2
    err = _err(capsys)
    assert "column 'margin' is the logit of no label" in err
    assert "--ignore-columns margin" in err and "classes 0..3" in err
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--ignore-columns", "margin", "--output", str(model)]) == 0
    from skcal.io import load

    ts = load(model)
    assert ts.temperature_ == pytest.approx(temperature_reference(Z, y), rel=1e-5)
    assert list(ts.feature_names_in_) == NAMES
    # apply and report take --ignore-columns too
    assert main(["apply", str(model), "--data", str(path), "--output",
                 str(tmp_path / "o.npz")]) == 2
    assert "margin" in _err(capsys)
    assert main(["apply", str(model), "--data", str(path), "--ignore-columns", "margin",
                 "--output", str(tmp_path / "o.npz")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "o.npz")["proba"],
                               softmax(Z / ts.temperature_, axis=1), rtol=1e-6, atol=1e-12)
    rep = tmp_path / "rep"
    assert main(["report", "--data", str(path), "--ignore-columns", "margin", "--model",
                 str(model), "--output", str(rep), "--n-bootstrap", "0"]) == 0
    m = json.loads((rep / "metrics.json").read_text())
    nll = -log_softmax(Z / ts.temperature_, axis=1)[np.arange(len(y)), y].mean()
    assert m["TemperatureScaler"]["nll"]["value"] == pytest.approx(nll, rel=1e-6)


def test_text_labels_naming_no_column_warn_with_the_mapping(tmp_path, logits, capsys):
    # main: mapped in sorted order without a word
    import pyarrow.csv as pacsv

    Z, y = logits
    path = tmp_path / "t.csv"
    labels = np.array(["zebra", "yak", "xerus"])  # sorted: xerus, yak, zebra
    pacsv.write_csv(pa.table({"s0": Z[:, 0], "s1": Z[:, 1], "s2": Z[:, 2],
                              "label": labels[2 - y]}), path)
    capsys.readouterr()
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(tmp_path / "m.skops")]) == 0
    err = capsys.readouterr().err
    assert "skcal fit: warning:" in err
    assert "xerus -> s0, yak -> s1, zebra -> s2" in err


def test_apply_and_report_warn_when_a_logit_model_gets_probabilities(tmp_path, logits,
                                                                      capsys):
    Z, y = logits
    cal, new = tmp_path / "cal.csv", tmp_path / "new.csv"
    _write(cal, Z[:600], y[:600])
    _write(new, softmax(Z[600:], axis=1), y[600:])
    model = tmp_path / "m.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(new), "--output",
                 str(tmp_path / "o.npz")]) == 0
    assert "skcal apply: warning:" in capsys.readouterr().err
    assert main(["report", "--data", str(new), "--model", str(model), "--output",
                 str(tmp_path / "r"), "--n-bootstrap", "0"]) == 0
    assert "skcal report: warning:" in capsys.readouterr().err
    # logits: no warning
    assert main(["apply", str(model), "--data", str(cal), "--output",
                 str(tmp_path / "o.npz")]) == 0
    assert "warning" not in capsys.readouterr().err
    # one score column (binary log-odds model) given probabilities: the same warning
    s = Z[:, 1] - Z[:, 0]
    bcal, bnew = tmp_path / "bcal.csv", tmp_path / "bnew.csv"
    yb = (y == 1).astype(int)
    _write(bcal, s[:600, None], yb[:600], text=False)
    _write(bnew, 1 / (1 + np.exp(-s[600:, None])), yb[600:], text=False)
    bmodel = tmp_path / "b.skops"
    assert main(["fit", "--data", str(bcal), "--method", "platt", "--output", str(bmodel)]) == 0
    capsys.readouterr()
    assert main(["apply", str(bmodel), "--data", str(bnew), "--output",
                 str(tmp_path / "b.npz")]) == 0
    err = capsys.readouterr().err
    assert "skcal apply: warning:" in err and "one score column, every value in [0, 1]" in err
    with np.load(tmp_path / "b.npz") as out:  # the file's label column keeps its name
        assert "label" in out.files and "y" not in out.files
    assert main(["apply", str(bmodel), "--data", str(bcal), "--output",
                 str(tmp_path / "b.npz")]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.fixture(scope="module")
def binary_proba():
    """A binary model's positive-class probabilities (one column) and labels."""
    rng = np.random.default_rng(3)
    n = 500
    s = rng.normal(size=n) * 2.0
    y = (rng.random(n) < 1 / (1 + np.exp(-s))).astype(np.int64)
    p = 1 / (1 + np.exp(-1.8 * s))  # over-confident
    return p, y


def _write_one_column(path, p, y, fmt):
    if fmt == "npz-1d":
        np.savez(path, logits=p, y=y)
    elif fmt == "npz-column":
        np.savez(path, logits=p[:, None], y=y)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(pa.table({"score": p, "label": y}), path)


@pytest.mark.parametrize("fmt", ["npz-1d", "npz-column", "csv"])
def test_binary_probability_file_fit_apply_report(tmp_path, binary_proba, fmt, capsys):
    # main: the reader turned the one column p into logits [0, p] before any
    # calibrator saw it, so fit gave no warning and --input-type probabilities
    # failed ("row ... sums to 0.0027"); the rule is the calibrators' one: a
    # one-column score is [1 - p, p] read as probabilities, log-odds otherwise
    from skcal.io import load

    p, y = binary_proba
    path = tmp_path / ("f.csv" if fmt == "csv" else "f.npz")
    _write_one_column(path, p, y, fmt)
    P2 = np.column_stack([1 - p, p])
    rows = np.arange(len(y))
    capsys.readouterr()
    # fit without --input-type: read as log-odds, with the warning
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(tmp_path / "l.skops")]) == 0
    err = capsys.readouterr().err
    assert err.count("skcal fit: warning:") == 1 and "looks like probabilities" in err
    # in the CLI's words: the option, not the Python argument
    assert "--input-type probabilities" in err and "input_type=" not in err
    assert load(tmp_path / "l.skops").temperature_ == pytest.approx(
        temperature_reference(np.column_stack([np.zeros_like(p), p]), y), rel=1e-5)
    # fit --input-type probabilities: T fitted on log [1 - p, p]
    model = tmp_path / "p.skops"
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--input-type", "probabilities", "--output", str(model)]) == 0
    assert "warning" not in capsys.readouterr().err
    T = load(model).temperature_
    assert T == pytest.approx(temperature_reference(np.log(P2), y), rel=1e-5)
    assert T > 1.3  # over-confident input: the reading matters
    # apply: softmax(log [1 - p, p] / T), computed here
    out = tmp_path / "o.npz"
    assert main(["apply", str(model), "--data", str(path), "--output", str(out)]) == 0
    np.testing.assert_allclose(np.load(out)["proba"], softmax(np.log(P2) / T, axis=1),
                               rtol=1e-10, atol=1e-12)
    # report: the uncalibrated NLL of [1 - p, p], with and without the model
    nll_p = -np.log(P2[rows, y]).mean()
    for extra, name in ((["--input-type", "probabilities"], "r0"),
                        (["--model", str(model)], "r1")):
        assert main(["report", "--data", str(path), "--output", str(tmp_path / name),
                     "--n-bootstrap", "0", *extra]) == 0
        assert "warning" not in capsys.readouterr().err
        m = json.loads((tmp_path / name / "metrics.json").read_text())
        assert m["uncalibrated"]["nll"]["value"] == pytest.approx(nll_p, rel=1e-9)
    assert m["TemperatureScaler"]["nll"]["value"] == pytest.approx(
        -log_softmax(np.log(P2) / T, axis=1)[rows, y].mean(), rel=1e-9)
    # report without --input-type: refused; --input-type logits reads log-odds p
    assert main(["report", "--data", str(path), "--output", str(tmp_path / "r2"),
                 "--n-bootstrap", "0"]) == 2
    assert "look like probabilities" in capsys.readouterr().err
    assert main(["report", "--data", str(path), "--output", str(tmp_path / "r2"),
                 "--n-bootstrap", "0", "--input-type", "logits"]) == 0
    assert "warning" not in capsys.readouterr().err
    m = json.loads((tmp_path / "r2" / "metrics.json").read_text())
    z = np.column_stack([np.zeros_like(p), p])
    assert m["uncalibrated"]["nll"]["value"] == pytest.approx(
        -log_softmax(z, axis=1)[rows, y].mean(), rel=1e-9)


@pytest.mark.parametrize("argv, match", [
    (["report", "--n-bootstrap", "x"],
     "argument --n-bootstrap: must be 0 (no intervals) or an integer >= 2, got 'x'"),
    (["report", "--seed", "1.5"], "argument --seed: must be an integer >= 0, got '1.5'"),
    (["fit", "--logit-columns", "a,,b"], "argument --logit-columns: empty name in 'a,,b'"),
])
def test_bad_numbers_and_column_lists_are_usage_errors(tmp_path, capsys, argv, match):
    # refused by the shared argparse types before any file is read
    args = ["--data", str(tmp_path / "absent.csv"), "--output", str(tmp_path / "o")]
    assert main([*argv[:1], *args, *argv[1:]]) == 2
    assert match in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["report", "--n-bootstrap", "1"],
     "--n-bootstrap must be 0 (no intervals) or an integer >= 2, got 1"),
    (["report", "--seed", "-3"], "--seed must be an integer >= 0, got -3"),
    (["report", "--n-bins", "0"], "--n-bins must be an integer >= 1, got 0"),
])
def test_numbers_out_of_range_are_one_line_errors(tmp_path, capsys, argv, message):
    """A number out of its option's range: one line, as --n-bins says it, before
    any file is read (main: argparse's usage block, then the error)."""
    args = ["--data", str(tmp_path / "absent.csv"), "--output", str(tmp_path / "o")]
    assert main([*argv[:1], *args, *argv[1:]]) == 2
    assert _err(capsys) == f"skcal {argv[0]}: error: {message}"


@pytest.mark.parametrize("text_labels", [False, True])
def test_fit_and_the_python_api_agree_on_a_named_column_no_label_selects(
        tmp_path, capsys, text_labels):
    """A calibration table whose last named column no label selects: `skcal fit`
    and a calibrator fitted on the same DataFrame refuse it by one rule, with
    the same message (each with its own remedies); unnamed columns (.npz, an
    array) are the integer-label rule's absent class, in both (issue 24
    leftovers, item d). On main the Python API fitted column 'd' silently."""
    pd = pytest.importorskip("pandas")
    from skcal import TemperatureScaler

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 4))
    y = rng.integers(0, 3, 300)
    names = list("abcd")
    labels = np.array(names)[y] if text_labels else y
    df = pd.DataFrame(Z, columns=names)
    path = tmp_path / "cal.csv"
    df.assign(label=labels).to_csv(path, index=False)
    capsys.readouterr()
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(tmp_path / "m.skops")]) == 2
    cli_err = _err(capsys)
    with pytest.raises(ValueError) as api:
        TemperatureScaler().fit(df, labels)
    common = str(api.value).split("; if a column")[0]
    assert common.startswith("column 'd' is the logit of no label: the columns")
    assert common in cli_err
    assert "--ignore-columns d" in cli_err and "X.drop(columns=['d'])" in str(api.value)
    # the classes listed explicitly: both fit, class 'd' / 3 absent
    classes = names if text_labels else [0, 1, 2, 3]
    with pytest.warns(UserWarning, match="never occur"):
        est = TemperatureScaler(classes=classes).fit(df, labels)
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--logit-columns", "a,b,c,d", "--output", str(tmp_path / "m.skops")]) == 0
    from skcal.io import load

    assert load(tmp_path / "m.skops").temperature_ == pytest.approx(est.temperature_, rel=1e-6)
    if not text_labels:  # unnamed columns: accepted by both
        np.savez(tmp_path / "cal.npz", logits=Z, y=y)
        assert main(["fit", "--data", str(tmp_path / "cal.npz"), "--method",
                     "temperature", "--output", str(tmp_path / "n.skops")]) == 0
        with pytest.warns(UserWarning, match=r"Classes \[3\] never occur"):
            TemperatureScaler().fit(Z, y)


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_n_bins_has_one_rule_and_one_message(tmp_path, logits, capsys, value):
    """--n-bins and n_bins= say the same thing (main: ">= 0" for -1 and "at
    least 1" for 0; issue 24 leftovers, item i)."""
    from skcal.metrics import expected_calibration_error

    good, _ = _bad_paths(tmp_path, logits)
    capsys.readouterr()
    assert main(["report", "--data", str(good), "--output", str(tmp_path / "r"),
                 "--n-bins", value]) == 2
    if value == "x":  # argparse's own error (after its usage line)
        assert "--n-bins: must be an integer >= 1, got 'x'" in capsys.readouterr().err
    else:
        assert _err(capsys) == (
            f"skcal report: error: --n-bins must be an integer >= 1, got {value}")
        # the public functions: scikit-learn's parameter message, the same rule
        with pytest.raises(ValueError, match=r"'n_bins' .* int in the range \[1, inf\)"):
            expected_calibration_error([0, 1], [[0.5, 0.5], [0.2, 0.8]], n_bins=int(value))
        from skcal.metrics._validation import _check_n_bins

        with pytest.raises(ValueError, match=f"^n_bins must be an integer >= 1, got {value}"):
            _check_n_bins(int(value))


def test_apply_npz_keys_are_the_documented_ones(tmp_path, logits):
    """`apply` writes `proba`, or `log_proba` with --log-proba, and the
    deployment guide and --help say so (main's guide said `proba` for both;
    issue 24 leftovers, item g)."""
    from pathlib import Path

    Z, y = logits
    cal = tmp_path / "cal.parquet"
    _write(cal, Z, y)
    model = tmp_path / "ts.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    keys = {}
    for flag in ([], ["--log-proba"]):
        out = tmp_path / f"o{len(flag)}.npz"
        assert main(["apply", str(model), "--data", str(cal), "--output", str(out),
                     *flag]) == 0
        with np.load(out) as f:
            keys[bool(flag)] = sorted(f.files)
    # (the labels of the input are copied, as documented)
    assert keys == {False: ["classes", "label", "proba"],
                    True: ["classes", "label", "log_proba"]}
    guide = (Path(__file__).parents[2] / "docs" / "user_guide" / "deployment.rst").read_text()
    assert "(keys ``proba``, or ``log_proba`` with ``--log-proba``, and ``classes``)" in \
        " ".join(guide.split())


def test_report_nll_of_float32_logits_is_finite_and_equals_minus_score(tmp_path, logits):
    """float32 logits: predict_proba's float32 output rounds a tiny true-class
    probability to 0; the report's NLL is computed in float64, so it is finite
    and equals the high-precision reference (and -score() of the model)."""
    Z, y = logits
    cal, test = tmp_path / "cal.npz", tmp_path / "test.npz"
    np.savez(cal, logits=Z[:600].astype(np.float32), y=y[:600])
    T = temperature_reference(Z[:600], y[:600])
    # a row whose true class has log-probability ~ -300: 0 in float32
    Zt = np.vstack([Z[600:], [[300.0 * T, 0.0, 0.0]]]).astype(np.float32)
    yt = np.append(y[600:], 1)
    np.savez(test, logits=Zt, y=yt)  # .npz keeps float32
    model = tmp_path / "ts.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    rep = tmp_path / "rep"
    assert main(["report", "--data", str(test), "--model", str(model), "--output",
                 str(rep), "--n-bootstrap", "0"]) == 0
    m = json.loads((rep / "metrics.json").read_text())
    Z64 = Zt.astype(np.float64)
    nll1 = -log_softmax(Z64 / T, axis=1)[np.arange(len(yt)), yt].mean()
    assert np.isfinite(nll1)
    assert m["TemperatureScaler"]["nll"]["value"] == pytest.approx(nll1, rel=1e-5)


def test_report_on_float32_logits_with_underflowing_rows_is_finite_and_quiet(tmp_path):
    # 20news: a vector-scaled model gives some true classes a probability that
    # float32 rounds to 0 (the NLL of the float32 probabilities is inf); the
    # report computes it in float64 (= -score), with no raw warning, and every
    # interval contains its estimate
    import warnings

    from conftest import load_shared

    d = load_shared("20news_cv_labelerrors")
    cal, test = tmp_path / "cal.npz", tmp_path / "test.npz"
    np.savez(cal, logits=d["logits_val"], y=d["y_val"])
    np.savez(test, logits=d["logits_test"], y=d["y_test"])
    model = tmp_path / "v.skops"
    assert main(["fit", "--data", str(cal), "--method", "vector",
                 "--output", str(model)]) == 0
    rep = tmp_path / "rep"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["report", "--data", str(test), "--model", str(model),
                     "--output", str(rep), "--n-bootstrap", "30"]) == 0
    m = json.loads((rep / "metrics.json").read_text())
    from skcal import VectorScaler

    ref = VectorScaler().fit(d["logits_val"], d["y_val"])
    v = m["VectorScaler"]["nll"]
    assert v["value"] == pytest.approx(-ref.score(d["logits_test"], d["y_test"]), rel=1e-6)
    for res in m.values():
        for k, v in res.items():
            if np.isfinite(v["value"]):
                assert v["low"] <= v["value"] <= v["high"], k



def test_npz_text_labels_warn_with_the_mapping_like_the_calibrators(tmp_path, logits,
                                                                    capsys):
    # unnamed (.npz) columns: the same rule and message as the calibrators' fit
    Z, y = logits
    path = tmp_path / "t.npz"
    np.savez(path, logits=Z, y=np.array(["zebra", "yak", "xerus"])[2 - y])
    capsys.readouterr()
    assert main(["fit", "--data", str(path), "--method", "temperature",
                 "--output", str(tmp_path / "m.skops")]) == 0
    err = capsys.readouterr().err
    assert "skcal fit: warning:" in err
    assert "name no column (3 unnamed logit columns)" in err
    assert "(xerus -> 0, yak -> 1, zebra -> 2)" in err


def test_apply_on_probabilities_warns_once_in_the_cli_words(tmp_path, logits, capsys):
    # the calibrator's own warning (naming input_type=) does not leak after the CLI's
    Z, y = logits
    cal, new = tmp_path / "cal.npz", tmp_path / "new.npz"
    np.savez(cal, logits=Z[:600], y=y[:600])
    np.savez(new, logits=softmax(Z[600:], axis=1), y=y[600:])
    model = tmp_path / "m.skops"
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["apply", str(model), "--data", str(new), "--output",
                     str(tmp_path / "o.npz")]) == 0
    err = capsys.readouterr().err
    assert err.count("skcal apply: warning:") == 1 and "--input-type probabilities" in err
    assert not [w for w in caught if "looks like probabilities" in str(w.message)]


def test_one_row_with_bootstrap_is_a_one_line_error(tmp_path, logits, capsys):
    """fresh34: one test row with intervals ended in a traceback ("A bootstrap
    interval needs at least 2 samples"); it is now a CLI error naming the remedy,
    and the same file without intervals is reported."""
    Z, y = logits
    one = tmp_path / "one.npz"
    np.savez(one, logits=Z[:1], y=y[:1])
    assert main(["report", "--data", str(one), "--output", str(tmp_path / "r")]) == 2
    assert "1 row; a bootstrap interval needs at least 2 (pass --n-bootstrap 0" in _err(capsys)
    assert main(["report", "--data", str(one), "--output", str(tmp_path / "r"),
                 "--n-bootstrap", "0"]) == 0
    split = tmp_path / "split.npz"
    np.savez(split, logits_val=Z[:300], y_val=y[:300], logits_test=Z[300:301],
             y_test=y[300:301])
    base = ["benchmark", "--data", str(split), "--methods", "temperature", "--no-peers",
            "--repeats", "1", "--quiet"]
    assert main(base) == 2
    assert "the test split has 1 row; a bootstrap interval needs at least 2 " \
        "(pass --resamples 0" in _err(capsys)
    assert main(base + ["--resamples", "0"]) == 0


def test_report_reads_float16_probabilities_with_their_tolerance(tmp_path, logits, capsys):
    """fresh34: report cast float16 probabilities to float64 before checking them, so
    rows summing to 1 within float16's tolerance (1e-2) but not float64's (1e-4) were
    refused, while fit (and the calibrators) accept them."""
    Z, y = logits
    P16 = softmax(Z, axis=1).astype(np.float16)
    off = np.abs(P16.astype(np.float64).sum(axis=1) - 1).max()
    assert 1e-4 < off < 1e-2  # the case: fine for float16, not for float64
    cal, test = tmp_path / "cal.npz", tmp_path / "test.npz"
    np.savez(cal, logits=P16[:600], y=y[:600])
    np.savez(test, logits=P16[600:], y=y[600:])
    model = tmp_path / "pts.skops"
    assert main(["fit", "--data", str(cal), "--input-type", "probabilities", "--method",
                 "temperature", "--output", str(model)]) == 0
    P = P16[600:].astype(np.float64)
    P /= P.sum(axis=1, keepdims=True)
    yt = y[600:]
    nll0 = -np.log(P[np.arange(len(yt)), yt]).mean()
    for extra in (["--input-type", "probabilities"], ["--model", str(model)]):
        rep = tmp_path / extra[0].strip("-")
        assert main(["report", "--data", str(test), "--output", str(rep), "--n-bootstrap",
                     "0", *extra]) == 0
        m = json.loads((rep / "metrics.json").read_text())
        assert m["uncalibrated"]["nll"]["value"] == pytest.approx(nll0, rel=1e-6)


def test_fit_auto_line_names_the_chosen_method(tmp_path, logits, capsys):
    """``skcal fit --method auto`` says which candidate it chose, as
    TemperatureScaler's line gives its temperature; the Python API's
    AutoCalibrator on the same rows chooses the same one."""
    import skcal.io
    from skcal import AutoCalibrator

    Z, y = logits
    cal, model = tmp_path / "cal.npz", tmp_path / "auto.skops"
    np.savez(cal, logits=Z, y=y)
    capsys.readouterr()
    assert main(["fit", "--data", str(cal), "--method", "auto", "--output", str(model)]) == 0
    line = capsys.readouterr().out.strip()
    expected = AutoCalibrator().fit(Z, y).best_name_
    assert skcal.io.load(model).best_name_ == expected
    assert re.fullmatch(
        rf"fitted AutoCalibrator on 900 rows, 3 classes in \S+ s "
        rf"\(best_name_ = {re.escape(expected)}\); wrote {re.escape(str(model))}",
        line,
    ), line
    # report names the chosen candidate beside the class
    rep = tmp_path / "rep"
    assert main(["report", "--data", str(cal), "--model", str(model), "--output", str(rep),
                 "--n-bootstrap", "0"]) == 0
    assert f"| AutoCalibrator ({expected}) |" in (rep / "report.md").read_text()


def test_apply_refuses_to_overwrite_its_input(tmp_path, logits, capsys):
    """--output naming the --data file, in any spelling (also a hard link to
    it), is an error before anything is written; the input is left as it was."""
    import os

    good, model = _bad_paths(tmp_path, logits)
    (tmp_path / "sub").mkdir()
    npz = tmp_path / "new.npz"
    np.savez(npz, logits=logits[0][:20])
    os.link(good, tmp_path / "hard.csv")
    before = good.read_bytes(), npz.read_bytes()
    for data, out in [
        (good, good),
        (good, tmp_path / "sub" / ".." / "good.csv"),
        (good, tmp_path / "hard.csv"),
        (npz, npz),
    ]:
        capsys.readouterr()
        assert main(["apply", str(model), "--data", str(data), "--output", str(out)]) == 2
        assert _err(capsys) == (
            f"skcal apply: error: --output {out} is the --data file {data}: it would "
            "overwrite its input; write to another file"
        )
    assert (good.read_bytes(), npz.read_bytes()) == before
    # another file beside it is written as before
    out = tmp_path / "sub" / "good.csv"
    assert main(["apply", str(model), "--data", str(good), "--output", str(out)]) == 0
    assert out.read_bytes() != good.read_bytes() and good.read_bytes() == before[0]


def _fit_then_apply(tmp_path, data, out, capsys):
    """``(m.skops, apply's stdout)``: temperature scaling fitted on ``data``, applied to it."""
    model = tmp_path / "m.skops"
    assert main(["fit", "--data", str(data), "--method", "temperature",
                 "--output", str(model)]) == 0
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(data), "--output", str(out)]) == 0
    return model, capsys.readouterr().out


def test_apply_and_report_say_they_read_the_test_rows_of_a_split_file(tmp_path, logits,
                                                                       capsys):
    """fresh34: apply on a CSV with a split column wrote only the test rows and did
    not say so; its line (and report's heading) now names the rows read."""
    import pandas as pd

    Z, y = logits
    df = pd.DataFrame(Z[:90], columns=NAMES)
    df["label"] = np.array(NAMES)[y[:90]]
    df["split"] = ["val"] * 60 + ["test"] * 30
    both = tmp_path / "both.csv"
    df.to_csv(both, index=False)
    out = tmp_path / "out.csv"
    model, line = _fit_then_apply(tmp_path, both, out, capsys)
    assert "of 30 rows (the 'test' rows of 90 in both.csv, in file order)" in line
    written = pd.read_csv(out)
    assert len(written) == 30
    assert written["label"].tolist() == df["label"][60:].tolist()  # by position
    rep = tmp_path / "rep"
    assert main(["report", "--data", str(both), "--model", str(model), "--output",
                 str(rep), "--n-bootstrap", "0"]) == 0
    assert "(30 rows, the 'test' rows of 90, 3 classes)" in (rep / "report.md").read_text()
    # a file without a split: no such note
    plain = tmp_path / "plain.csv"
    df.drop(columns="split").to_csv(plain, index=False)
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(plain), "--output", str(out)]) == 0
    assert "of 90 rows, 3 classes" in capsys.readouterr().out


def test_report_of_probabilities_keeps_an_infinite_nll(tmp_path, capsys):
    """fresh34b: without --model, report read probabilities as logits floored at
    the dtype's tiny, so a true class of probability 0 gave a finite NLL (354.2
    for two rows) where --model and negative_log_likelihood give inf."""
    from skcal.metrics import negative_log_likelihood

    P = np.array([[1.0, 0.0], [0.0, 1.0], [0.3, 0.7]])
    y = np.array([0, 0, 1])
    data = tmp_path / "p.npz"
    np.savez(data, logits=P, y=y)
    rep = tmp_path / "r"
    assert main(["report", "--data", str(data), "--input-type", "probabilities",
                 "--output", str(rep), "--n-bootstrap", "0"]) == 0
    m = json.loads((rep / "metrics.json").read_text())
    assert np.isinf(negative_log_likelihood(y, P))
    assert m["uncalibrated"]["nll"]["value"] is None  # inf, written as null
    assert "| uncalibrated | inf |" in (rep / "report.md").read_text()
    # a finite case: the plain NumPy NLL of the renormalised probabilities
    P2 = np.array([[0.6, 0.4], [0.2, 0.8], [0.5, 0.5]]) * 1.00001  # rows off by 1e-5
    np.savez(data, logits=P2, y=y)
    assert main(["report", "--data", str(data), "--input-type", "probabilities",
                 "--output", str(rep), "--n-bootstrap", "0"]) == 0
    Q = P2 / P2.sum(axis=1, keepdims=True)
    ref = -np.log(Q[np.arange(3), y]).mean()
    m = json.loads((rep / "metrics.json").read_text())
    assert m["uncalibrated"]["nll"]["value"] == pytest.approx(ref, rel=1e-12)


def test_npz_split_and_upper_case_suffix(tmp_path, logits, capsys):
    """fresh34b: apply / report on an .npz with the _val and _test keys did not say
    they read its test split; apply --output p.NPZ wrote p.NPZ.npz (np.savez's
    case-sensitive suffix test) while saying p.NPZ."""
    Z, y = logits
    data = tmp_path / "s.npz"
    np.savez(data, logits_val=Z[:600], y_val=y[:600], logits_test=Z[600:], y_test=y[600:])
    out = tmp_path / "p.NPZ"
    model, line = _fit_then_apply(tmp_path, data, out, capsys)
    assert "of 300 rows (the 'test' split in s.npz, in file order)" in line
    assert sorted(q.name for q in tmp_path.iterdir() if q.name.startswith("p.")) == ["p.NPZ"]
    assert np.load(out)["proba"].shape == (300, 3)
    rep = tmp_path / "rep"
    assert main(["report", "--data", str(data), "--model", str(model), "--output", str(rep),
                 "--n-bootstrap", "0"]) == 0
    assert "(300 rows, the 'test' split, 3 classes)" in (rep / "report.md").read_text()
    # fresh35b: --label-column was ignored for this layout (y_val / y_test were read)
    capsys.readouterr()
    assert main(["fit", "--data", str(data), "--label-column", "y_test", "--method",
                 "temperature", "--output", str(model)]) == 2
    assert "--label-column 'y_test' does not apply" in capsys.readouterr().err
    # naming both arrays reads them
    assert main(["fit", "--data", str(data), "--logit-columns", "logits_test",
                 "--label-column", "y_test", "--method", "temperature",
                 "--output", str(model)]) == 0
    import skcal
    import skcal.io

    ref = skcal.TemperatureScaler().fit(Z[600:], y[600:])
    assert skcal.io.load(model).temperature_ == pytest.approx(ref.temperature_, rel=1e-12)


def test_apply_with_an_empty_label_cell_names_the_way_without_labels(tmp_path, logits,
                                                                      capsys):
    """fresh34b: apply refused a file for one empty label cell although its labels
    are optional, naming no way out; the message names --ignore-columns, which
    then writes the probabilities without the label column."""
    Z, y = logits
    test, model = _fitted_temperature(tmp_path, Z, y)
    text = test.read_text().splitlines()
    head = text[0].split(",")
    j = [h.strip('"') for h in head].index("label")
    cells = text[3].split(",")
    cells[j] = ""
    text[3] = ",".join(cells)
    holed = tmp_path / "holed.csv"
    holed.write_text("\n".join(text) + "\n")
    out = tmp_path / "out.csv"
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(holed), "--output", str(out)]) == 2
    assert _err(capsys).endswith(
        "empty value in label column 'label' (line 4): every row needs a label; where "
        "labels are optional (skcal apply) skip the column with --ignore-columns label")
    assert main(["apply", str(model), "--data", str(holed), "--output", str(out),
                 "--ignore-columns", "label"]) == 0
    import pandas as pd

    written = pd.read_csv(out)
    assert list(written.columns) == NAMES and len(written) == 300


def test_apply_wrong_column_count_on_a_one_score_model_says_1d_binary_score(
        tmp_path, capsys):
    # main: "3 logit columns but the model was fitted on 2 (classes [0, 1])"
    # for a model fitted on one score column; the Python API says "fitted on a
    # 1-D binary score"
    import pyarrow.csv as pacsv
    from skcal.io import load

    rng = np.random.default_rng(5)
    s = rng.normal(size=300) * 2.0
    y = (rng.random(300) < 1 / (1 + np.exp(-s))).astype(np.int64)
    cal = tmp_path / "cal.csv"
    pacsv.write_csv(pa.table({"score": s, "label": y}), cal)
    model = tmp_path / "p.skops"
    assert main(["fit", "--data", str(cal), "--method", "platt",
                 "--output", str(model)]) == 0
    Z3 = rng.normal(size=(20, 3))
    np.save(tmp_path / "three.npy", Z3)
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(tmp_path / "three.npy"),
                 "--output", str(tmp_path / "o.npz")]) == 2
    assert _err(capsys) == (
        f"skcal apply: error: {tmp_path / 'three.npy'}: 3 logit columns but the model "
        "was fitted on a 1-D binary score for 2 classes [0, 1]; pass one score "
        "column, as in fit, or 2 columns in class order"
    )
    # the 2 columns the message offers are read as logits [z0, z1]: the log-odds
    np.save(tmp_path / "two.npy", Z3[:, :2])
    assert main(["apply", str(model), "--data", str(tmp_path / "two.npy"),
                 "--output", str(tmp_path / "o.npz")]) == 0
    with np.load(tmp_path / "o.npz") as out:
        np.testing.assert_allclose(
            out["proba"], load(model).predict_proba(Z3[:, 1] - Z3[:, 0]), rtol=1e-12)


def test_apply_named_columns_on_a_one_score_csv_model_does_not_blame_an_npz(
        tmp_path, capsys):
    # main: a model fitted on a CSV's one score column was "fitted without
    # column names (on an .npz / .npy file ...)" when applied to named columns
    import pyarrow.csv as pacsv
    from skcal.io import load

    rng = np.random.default_rng(6)
    s = rng.normal(size=300) * 2.0
    y = (rng.random(300) < 1 / (1 + np.exp(-s))).astype(np.int64)
    cal, new = tmp_path / "cal.csv", tmp_path / "new.csv"
    pacsv.write_csv(pa.table({"score": s, "label": y}), cal)
    Z2 = rng.normal(size=(20, 2))
    pacsv.write_csv(pa.table({"a": Z2[:, 0], "b": Z2[:, 1]}), new)
    model = tmp_path / "p.skops"
    assert main(["fit", "--data", str(cal), "--method", "platt",
                 "--output", str(model)]) == 0
    capsys.readouterr()
    assert main(["apply", str(model), "--data", str(new),
                 "--output", str(tmp_path / "o.npz")]) == 2
    err = _err(capsys)
    assert err.startswith(
        f"skcal apply: error: {new}: the model was fitted on a 1-D binary score "
        "(one score column; classes ['0', '1']), so the logit columns ['a', 'b'] "
        "cannot be matched to its classes by name; list them in class order with "
        "--logit-columns"
    ), err
    assert ".npz" not in err
    # the remedy works: the two columns by position, read as logits
    assert main(["apply", str(model), "--data", str(new), "--logit-columns", "a,b",
                 "--output", str(tmp_path / "o.npz")]) == 0
    with np.load(tmp_path / "o.npz") as out:
        np.testing.assert_allclose(
            out["proba"], load(model).predict_proba(Z2[:, 1] - Z2[:, 0]), rtol=1e-12)


def test_apply_npz_classes_keep_the_model_classes_dtype(tmp_path, logits, capsys):
    """`apply --output X.npz` writes `classes` in the dtype of the model's
    classes_ (main wrote them as text, `<U1`, for integer labels), and `y` in the
    input labels' dtype; --help says so (fx37 a)."""
    import skcal.io
    from skcal.datasets._tables import write_table

    Z, y = logits
    data = tmp_path / "split.npz"
    np.savez(data, logits_val=Z[:600], y_val=y[:600], logits_test=Z[600:], y_test=y[600:])
    text = tmp_path / "text.parquet"
    _write(text, Z, y)
    for src, kind in ((data, "i"), (text, "U")):
        model, out = tmp_path / f"{kind}.skops", tmp_path / f"{kind}.npz"
        assert main(["fit", "--data", str(src), "--method", "platt",
                     "--output", str(model)]) == 0
        assert main(["apply", str(model), "--data", str(src), "--output", str(out)]) == 0
        classes = skcal.io.load(model).classes_
        with np.load(out) as f:
            assert f["classes"].dtype.kind == kind
            assert f["classes"].tolist() == classes.tolist()
            labels = f["y" if kind == "i" else "label"]
            assert labels.dtype.kind == kind
    # an object array: one type keeps it, mixed types fall back to text
    P = np.full((2, 2), 0.5)
    for classes, dtype in (([1, 2], np.dtype(np.int64)), (["a", "b"], np.dtype("<U1")),
                           ([1, "a"], np.dtype("<U21"))):
        write_table(tmp_path / "c.npz", np.array(classes, dtype=object), P)
        with np.load(tmp_path / "c.npz") as f:  # no pickle needed to read it
            assert f["classes"].dtype == dtype
            assert f["classes"].tolist() == [str(c) if dtype.kind == "U" else c
                                             for c in classes]
    capsys.readouterr()
    assert main(["apply", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("calibrated.npz (keys 'proba', or 'log_proba' with --log-proba; "
            "'classes', the model's classes_ in their dtype, text for an object "
            "array of mixed types; the labels, when present, in their dtype)"
            ) in help_text


def test_fit_reads_a_calibration_only_npz(tmp_path, logits, capsys):
    """`fit` reads only the val split, so an .npz with logits_val / y_val alone
    is enough (main asked for the test keys as well); `apply` / `report` read
    only the test split, so logits_test / y_test are enough for them; benchmark,
    which needs both, still asks for the four keys (fx37 c)."""
    import skcal.io

    Z, y = logits
    part = tmp_path / "partial.npz"
    np.savez(part, logits_val=Z[:600], y_val=y[:600])
    model = tmp_path / "p.skops"
    assert main(["fit", "--data", str(part), "--method", "temperature",
                 "--output", str(model)]) == 0
    ts = skcal.io.load(model)
    assert abs(ts.temperature_ - temperature_reference(Z[:600], y[:600])) < 1e-5
    test = tmp_path / "test_only.npz"
    np.savez(test, logits_test=Z[600:], y_test=y[600:])
    out = tmp_path / "o.npz"
    assert main(["apply", str(model), "--data", str(test), "--output", str(out)]) == 0
    with np.load(out) as f:
        np.testing.assert_allclose(f["proba"], ts.predict_proba(Z[600:]))
        np.testing.assert_array_equal(f["y"], y[600:])
    assert main(["report", "--data", str(test), "--model", str(model), "--n-bootstrap",
                 "0", "--output", str(tmp_path / "rep")]) == 0
    capsys.readouterr()
    # a split the command does not read is not enough; each names what it needs
    for argv, need in (
        (["fit", "--data", str(test), "--method", "temperature", "--output",
          str(tmp_path / "x.skops")], "logits_val, y_val"),
        (["apply", str(model), "--data", str(part), "--output", str(out)],
         "logits_test, y_test"),
        (["benchmark", "--data", str(part), "--quiet"],
         "logits_val, y_val, logits_test, y_test"),
    ):
        assert main(argv) == 2
        assert _err(capsys).endswith(f"missing keys; need {need} (or logits, y); found "
                                     + str(sorted(np.load(argv[argv.index("--data") + 1]).files)))


@pytest.mark.parametrize("fmt", ["csv", "parquet", "csv module"])
def test_boolean_labels_are_the_classes_of_two_columns(tmp_path, capsys, monkeypatch, fmt):
    """A label column of True/False: with four logit columns an error that says
    the labels are booleans (main: read as 0/1 silently, then "no row has label
    2"); with two columns the classes 0 and 1, as integer labels; with columns
    named False and True, matched by name (main: by position)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from skcal.datasets import _tables
    from skcal.io import load

    if fmt == "csv module":
        monkeypatch.setattr(_tables, "_has_pyarrow", lambda: False)
    suffix = ".parquet" if fmt == "parquet" else ".csv"
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 4))
    y = (Z[:, 1] - Z[:, 0] + rng.logistic(size=200)) > 0

    def write(name, frame):
        path = tmp_path / f"{name}{suffix}"
        if suffix == ".csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path)
        return path

    def fit(path, name):
        capsys.readouterr()
        status = main(["fit", "--data", str(path), "--method", "temperature",
                       "--output", str(tmp_path / f"{name}.skops")])
        return status, load(tmp_path / f"{name}.skops") if status == 0 else None

    four = write("four", pd.DataFrame(Z, columns=list("abcd")).assign(label=y))
    assert fit(four, "m4")[0] == 2
    assert _err(capsys) == (
        f"skcal fit: error: {four}: label column 'label' holds booleans (True/False), "
        "which are the classes 0 and 1 of two logit columns, but there are 4 logit "
        "columns; use integer labels 0..3 (the column of each row's class) or text "
        "labels naming the logit columns ['a', 'b', 'c', 'd']")
    two = pd.DataFrame(Z[:, :2], columns=["a", "b"])
    _, as_bool = fit(write("two", two.assign(label=y)), "b")
    _, as_int = fit(write("int", two.assign(label=y.astype(int))), "i")
    assert as_bool.temperature_ == as_int.temperature_
    np.testing.assert_array_equal(as_bool.classes_, [0, 1])
    # columns named True, False: True rows are column 0's class, by name
    _, named = fit(write("named", pd.DataFrame(Z[:, :2], columns=["True", "False"])
                         .assign(label=y)), "n")
    _, flipped = fit(write("flip", two.assign(label=(~y).astype(int))), "f")
    assert named.temperature_ == flipped.temperature_
    np.testing.assert_array_equal(named.classes_, ["False", "True"])
    # a report with a model of four classes says the same
    (tmp_path / "m.skops").unlink(missing_ok=True)
    assert main(["fit", "--data", str(write("four_int", pd.DataFrame(
        Z, columns=list("abcd")).assign(label=rng.integers(0, 4, 200)))), "--method",
        "temperature", "--output", str(tmp_path / "m.skops")]) == 0
    capsys.readouterr()
    assert main(["report", "--data", str(four), "--model", str(tmp_path / "m.skops"),
                 "--output", str(tmp_path / "r"), "--n-bootstrap", "0"]) == 2
    assert "label column 'label' holds booleans (True/False)" in _err(capsys)


@pytest.mark.parametrize("command", ["report", "fit", "benchmark"])
def test_bad_probabilities_are_worded_for_the_cli(tmp_path, capsys, command):
    """Logits read with --input-type probabilities: the error names the file and
    --input-type, not input_type= (main: "Input scores holds probabilities
    (input_type='probabilities')..."); the Python API keeps its words."""
    from skcal import TemperatureScaler

    rng = np.random.default_rng(0)
    Z, y = rng.normal(size=(50, 3)), np.arange(50) % 3
    path = tmp_path / "test.csv"
    path.write_text("a,b,c,label\n" + "".join(
        f"{r[0]!r},{r[1]!r},{r[2]!r},{k}\n" for r, k in zip(Z.tolist(), y)))
    sums = tmp_path / "sums.npz"
    np.savez(sums, logits=np.full((50, 3), 0.3), y=y)
    out = {"report": ["--output", str(tmp_path / "r"), "--n-bootstrap", "0"],
           "fit": ["--method", "temperature", "--output", str(tmp_path / "m.skops")],
           "benchmark": ["--methods", "temperature", "--no-peers", "--resamples", "0",
                         "--quiet"]}[command]
    lo, hi = Z.min(), Z.max()
    for data, detail in [
        (path, f"have values outside [0, 1] (min {lo:.6g}, max {hi:.6g}); pass "
         "--input-type logits if they are logits"),
        (sums, "score row 0 (counting from 0) sums to 0.9; every row must sum to 1 "
         "(tolerance 0.0001); pass --input-type logits if they are logits, or "
         "renormalise probabilities rounded to low precision (e.g. stored as float16) "
         "with skcal.utils.validation.normalize_probabilities"),
    ]:
        capsys.readouterr()
        assert main([command, "--data", str(data), "--input-type", "probabilities",
                     *out]) == 2
        assert _err(capsys) == (
            f"skcal {command}: error: {data}: the scores are read as probabilities "
            f"(--input-type probabilities) but {detail}")
    with pytest.raises(ValueError, match=r"^Input X holds probabilities "
                       r"\(input_type='probabilities'\) but has values outside"):
        TemperatureScaler(input_type="probabilities").fit(Z, y)


@pytest.mark.parametrize(
    "method, param, words",
    [
        ("contextual", [], "without --param content_free_logits=... takes the "
         "calibration logits as its content-free inputs (batch calibration) and "
         "ignores the labels"),
        ("contextual", ["--param", "content_free_logits=[[0.1, 0.2, 0.3]]"],
         "took its bias from --param content_free_logits"),
        ("batch", [], "ignores the labels"),
    ],
)
def test_fit_prior_correction_says_the_labels_are_unused(tmp_path, logits, capsys,
                                                         method, param, words):
    Z, y = logits
    cal = tmp_path / "cal.csv"
    _write(cal, Z[:400], y[:400])
    assert main(["fit", "--data", str(cal), "--method", method, *param,
                 "--output", str(tmp_path / "m.skops")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[1].startswith("note: ") and words in out[1]


def test_fit_labelled_method_has_no_labels_note(tmp_path, logits, capsys):
    Z, y = logits
    cal = tmp_path / "cal.csv"
    _write(cal, Z[:400], y[:400])
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(tmp_path / "m.skops")]) == 0
    assert "note:" not in capsys.readouterr().out


@pytest.mark.parametrize("command", ["fit", "apply", "report"])
def test_output_help_says_an_existing_file_is_overwritten(command, capsys):
    assert main([command, "--help"]) == 0
    entry = re.search(r"\n  --output \S+\s+(.*?)(?=\n  -|\n\n|$)",
                      capsys.readouterr().out, re.S)
    assert "overwritten" in " ".join(entry.group(1).split())


def test_fit_apply_report_overwrite_existing_outputs(tmp_path, logits):
    Z, y = logits
    cal, new = tmp_path / "cal.csv", tmp_path / "new.csv"
    _write(cal, Z[:400], y[:400])
    _write(new, Z[400:], y[400:])
    model, out, rep = tmp_path / "m.skops", tmp_path / "out.csv", tmp_path / "rep"
    rep.mkdir()
    for f in (model, out, rep / "report.md"):
        f.write_text("old")
    assert main(["fit", "--data", str(cal), "--method", "temperature",
                 "--output", str(model)]) == 0
    assert main(["apply", str(model), "--data", str(new), "--output", str(out)]) == 0
    assert main(["report", "--data", str(new), "--model", str(model), "--n-bootstrap", "0",
                 "--output", str(rep)]) == 0
    for f in (model, out, rep / "report.md"):
        assert f.read_bytes() != b"old"
