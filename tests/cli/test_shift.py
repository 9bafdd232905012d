"""``skcal benchmark --label-shift / --shift-data`` and skcal._shift."""

import numpy as np
import pytest

from _helpers import nll, temperature_reference
from skcal.benchmark._shift import label_shift_indices, with_label_shift
from skcal.cli import main
from skcal.datasets import load_logits

SET = "agnews_gpt2_zeroshot"


def _table_row(text, section_start, method):
    """The cells of ``method``'s row in the section that starts with ``section_start``."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(section_start))
    for ln in lines[start + 1:]:
        if not ln.strip():
            break
        if ln.split()[0] == method:
            return ln.split()
    raise AssertionError(f"no {method} row under {section_start!r}")


def test_label_shift_indices_follow_drawn_priors():
    y = np.repeat(np.arange(4), [500, 300, 200, 400])
    idx, pri = label_shift_indices(y, 0.5, random_state=3)
    assert len(np.unique(idx)) == len(idx)  # without replacement
    counts = np.bincount(y[idx], minlength=4)
    n = len(idx)
    np.testing.assert_allclose(counts / n, pri, atol=4 / n)
    # the largest subsample: some class is used up entirely
    assert np.any(counts == np.bincount(y))
    idx2, pri2 = label_shift_indices(y, 0.5, random_state=3)
    np.testing.assert_array_equal(idx, idx2)
    assert not np.array_equal(label_shift_indices(y, 0.5, random_state=4)[1], pri)
    with pytest.raises(ValueError, match="> 0"):
        label_shift_indices(y, 0.0)


def test_cli_label_shift_matches_independent_computation(capsys):
    rc = main(["benchmark", "--fast", "--dataset", SET, "--methods", "temperature",
               "--label-shift", "0.5", "--shift-draws", "3", "--seed", "1", "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0
    d = load_logits(SET)
    draws = [with_label_shift(d, 0.5, random_state=1, draw=k) for k in range(3)]
    assert len({len(s.y_test) for s in draws}) == 3  # independent draws
    assert "Under shift" in out and "3 draw(s)" in out
    assert "label shift" not in out.split("Under shift")[0]  # summarised, not listed
    T = temperature_reference(d.logits_val, d.y_val)
    row = _table_row(out, f"{SET}: fitted on", "temperature")
    got, got_shift, change, sd = map(float, row[1:5])
    shifted = [nll(s.logits_test, s.y_test, T) for s in draws]
    assert got == pytest.approx(nll(d.logits_test, d.y_test, T), abs=1e-4)
    assert got_shift == pytest.approx(np.mean(shifted), abs=1e-4)
    assert change == pytest.approx(got_shift - got, abs=2e-4)
    assert sd == pytest.approx(np.std(shifted, ddof=1), abs=1e-4)


def test_cli_shift_data_file(tmp_path, capsys):
    d = load_logits(SET)
    # a "shifted" file: the same model's test logits made twice as confident
    path = tmp_path / "shifted.npz"
    np.savez(path, logits=2.0 * d.logits_test, y=d.y_test)
    rc = main(["benchmark", "--fast", "--dataset", SET, "--methods", "temperature",
               "--shift-data", str(path), "--quiet", "--output", str(tmp_path / "o")])
    out = capsys.readouterr().out
    assert rc == 0
    T = temperature_reference(d.logits_val, d.y_val)
    row = _table_row(out, f"{SET}: fitted on", "temperature")
    # every row of the file is the shifted test set
    assert float(row[2]) == pytest.approx(nll(2.0 * d.logits_test, d.y_test, T), abs=1e-4)
    assert f"{len(d.y_test)} rows" in out
    md = (tmp_path / "o" / "benchmark.md").read_text()
    assert "## Under shift" in md
    assert len(list((tmp_path / "o").glob("reliability_*.png"))) == 2


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--dataset", "sst2_gpt2_zeroshot", "--shift-data", "X"], "exactly one data set"),
        (["--shift-data", "BINARY"], "classes"),
        (["--label-shift", "0"], "positive"),
        (["--label-shift", "nan"], "positive"),
        (["--label-shift", "1", "--shift-draws", "0"], ">= 1"),
    ],
)
def test_cli_shift_usage_errors_exit_2(tmp_path, capsys, extra, match):
    d = load_logits("sst2_gpt2_zeroshot")
    binary = tmp_path / "b.npz"
    np.savez(binary, logits=d.logits_test, y=d.y_test)
    extra = [str(binary) if e in ("X", "BINARY") else e for e in extra]
    rc = main(["benchmark", "--fast", "--dataset", SET, "--methods", "temperature",
               "--quiet", *extra])
    assert rc == 2
    assert match in capsys.readouterr().err


def _named_csv(path, Z, y, names):
    """A CSV of logit columns ``names`` and text labels ``names[y]``."""
    lines = [",".join([*names, "label"])]
    lines += [",".join([*map(repr, map(float, z)), names[k]]) for z, k in zip(Z, y)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def named_files(tmp_path):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 3)) * 2
    y = (Z + rng.normal(size=Z.shape) * 2).argmax(axis=1)
    Z[:, 0] += 1.0  # a bias that vector scaling corrects and temperature cannot
    return tmp_path, Z, y, _named_csv(tmp_path / "cal.csv", Z, y, ["a", "b", "c"])


def test_cli_shift_data_with_other_class_names_is_refused(named_files, capsys):
    tmp_path, Z, y, cal = named_files
    other = _named_csv(tmp_path / "pqr.csv", Z, y, ["p", "q", "r"])
    rc = main(["benchmark", "--no-peers", "--quiet", "--data", cal, "--shift-data", other,
               "--methods", "temperature", "--resamples", "0"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "pqr.csv: the logit columns do not match those the calibrators were fitted on" in err
    assert "missing ['a', 'b', 'c'], extra ['p', 'q', 'r']" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_shift_data_columns_are_matched_by_name(named_files, capsys):
    tmp_path, Z, y, cal = named_files
    same = _named_csv(tmp_path / "same.csv", Z, y, ["a", "b", "c"])
    perm = [2, 0, 1]  # columns c, a, b: the same data, reordered
    moved = _named_csv(tmp_path / "moved.csv", Z[:, perm], np.argsort(perm)[y],
                       ["c", "a", "b"])
    rows = {}
    for name, path in (("same", same), ("moved", moved)):
        rc = main(["benchmark", "--no-peers", "--quiet", "--data", cal, "--shift-data", path,
                   "--methods", "vector", "--resamples", "0"])
        assert rc == 0
        rows[name] = _table_row(capsys.readouterr().out, "cal: fitted on", "vector")
    assert rows["moved"] == rows["same"]


def test_cli_shift_data_named_columns_against_a_bundled_set(tmp_path, capsys):
    """A bundled set has no column names: a shift CSV's named columns are
    refused, as skcal apply refuses them for a model fitted on an .npz, unless
    --logit-columns lists them in class order (then taken by position, which
    the column options, now applying to --shift-data, allow)."""
    d = load_logits(SET)
    Z, y = np.asarray(d.logits_test), np.asarray(d.y_test)
    names = [f"c{k}" for k in range(Z.shape[1])]
    path = tmp_path / "shifted.csv"
    rows = [",".join([*names, "label"])]
    rows += [",".join([*map(repr, map(float, z)), str(k)]) for z, k in zip(2.0 * Z, y)]
    path.write_text("\n".join(rows) + "\n")
    argv = ["benchmark", "--fast", "--dataset", SET, "--methods", "temperature",
            "--shift-data", str(path), "--quiet", "--resamples", "0"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the calibrators were fitted without column names" in err
    assert main([*argv, "--logit-columns", ",".join(names)]) == 0
    T = temperature_reference(d.logits_val, d.y_val)
    row = _table_row(capsys.readouterr().out, f"{SET}: fitted on", "temperature")
    assert float(row[2]) == pytest.approx(nll(2.0 * Z, y, T), abs=1e-4)
