"""Tests for skcal.datasets: bundled real logit sets and the user-file loader."""

import re

import numpy as np
import pytest

from _helpers import csv_frame, nll
from skcal.datasets import (
    list_datasets,
    load_agnews_gpt2,
    load_cifar10_resnet20,
    load_logits,
    load_logits_file,
    load_sst2_gpt2,
)

from conftest import load_shared

# (name, K, n_val, n_test, test accuracy %, test NLL) from ../shared/data/README.md
BUNDLED = [
    ("cifar10_resnet20_chenyaofo", 10, 5000, 5000, 92.88, 0.2677),
    ("agnews_gpt2_zeroshot", 4, 3800, 3800, 42.32, 1.1261),
    ("sst2_gpt2_zeroshot", 2, 910, 911, 58.95, 0.6271),
]


def test_list_datasets_names():
    assert list_datasets() == [b[0] for b in BUNDLED]


@pytest.mark.parametrize("name, k, n_val, n_test, acc, want_nll", BUNDLED)
def test_load_logits_shapes_labels_and_published_figures(name, k, n_val, n_test, acc,
                                                          want_nll):
    d = load_logits(name)
    assert d.name == name and d.n_classes == k
    assert d.logits_val.shape == (n_val, k) and d.logits_test.shape == (n_test, k)
    assert d.logits_val.dtype == np.float32 and d.y_val.dtype == np.int64
    assert d.y_val.shape == (n_val,) and d.y_test.shape == (n_test,)
    for y in (d.y_val, d.y_test):
        assert set(np.unique(y)) == set(range(k))  # every class present
    assert np.all(np.isfinite(d.logits_val)) and np.all(np.isfinite(d.logits_test))
    # Independent check against the figures published in the data README.
    test_acc = 100 * np.mean(np.argmax(d.logits_test, axis=1) == d.y_test)
    assert test_acc == pytest.approx(acc, abs=0.005)
    assert nll(d.logits_test, d.y_test) == pytest.approx(want_nll, abs=5e-5)
    assert "MIT" in d.DESCR and "github.com/luferrer/expected_cost" in d.DESCR
    assert "96253fe48a4ab0f5934b252fb38351bd1838aa14" in d.DESCR
    assert "source" in d.info


@pytest.mark.parametrize("name", [b[0] for b in BUNDLED])
def test_bundled_arrays_identical_to_shared_originals(name):
    shared = load_shared(name)
    d = load_logits(name)
    for key in ("logits_val", "y_val", "logits_test", "y_test"):
        assert d[key].dtype == shared[key].dtype
        assert d[key].shape == shared[key].shape
        assert d[key].tobytes() == shared[key].tobytes()


def test_named_loaders_match_load_logits():
    assert load_cifar10_resnet20().name == "cifar10_resnet20_chenyaofo"
    assert load_agnews_gpt2().name == "agnews_gpt2_zeroshot"
    assert load_sst2_gpt2().name == "sst2_gpt2_zeroshot"


def test_bundled_licence_text_present():
    from importlib import resources

    text = (
        resources.files("skcal.datasets") / "data" / "LICENSE_expected_cost.txt"
    ).read_text()
    assert "MIT License" in text and "Copyright (c) 2023 Luciana Ferrer" in text


def test_load_logits_unknown_name():
    with pytest.raises(ValueError, match="unknown bundled data set 'nope'"):
        load_logits("nope")


# ---------------------------------------------------------------- user files


@pytest.fixture
def tiny():
    """12 rows, 3 classes, 4 of each class; hand-made logits."""
    y = np.array([0, 1, 2] * 4)
    logits = np.arange(36, dtype=np.float64).reshape(12, 3) / 10.0
    return logits, y


def test_load_npz_presplit_roundtrip(tmp_path, tiny):
    logits, y = tiny
    f = tmp_path / "m.npz"
    np.savez(f, logits_val=logits[:6], y_val=y[:6], logits_test=logits[6:],
             y_test=y[6:], extra=np.zeros(2))
    d = load_logits_file(f)
    np.testing.assert_array_equal(d.logits_val, logits[:6])
    np.testing.assert_array_equal(d.y_test, y[6:])
    assert d.n_classes == 3 and d.name == "m"


def test_load_npz_single_set_split_stratified_and_seeded(tmp_path, tiny):
    logits, y = tiny
    f = tmp_path / "one.npz"
    np.savez(f, logits=logits, y=y)
    a = load_logits_file(f, random_state=1)
    b = load_logits_file(f, random_state=1)
    c = load_logits_file(f, random_state=2)
    assert len(a.y_val) == 6 and len(a.y_test) == 6
    np.testing.assert_array_equal(np.bincount(a.y_val), [2, 2, 2])  # stratified
    np.testing.assert_array_equal(a.logits_val, b.logits_val)
    assert not np.array_equal(a.logits_val, c.logits_val)
    # Nothing lost or changed: the union of the splits is the original rows.
    both = np.vstack([a.logits_val, a.logits_test])
    order = np.lexsort(both.T[::-1])
    np.testing.assert_array_equal(both[order], logits)
    # Each row keeps its own label (label = row index mod 3 here).
    rows = np.rint(a.logits_val[:, 0] * 10 / 3).astype(int)
    np.testing.assert_array_equal(a.y_val, rows % 3)


def test_load_npy_pair(tmp_path, tiny):
    logits, y = tiny
    np.save(tmp_path / "run_logits.npy", logits)
    np.save(tmp_path / "run_labels.npy", y)
    d = load_logits_file(tmp_path / "run_logits.npy")
    assert d.name == "run" and len(d.y_val) + len(d.y_test) == 12


def test_load_npy_errors(tmp_path, tiny):
    logits, y = tiny
    np.save(tmp_path / "run.npy", logits)
    with pytest.raises(ValueError, match="<stem>_logits.npy"):
        load_logits_file(tmp_path / "run.npy")
    np.save(tmp_path / "x_logits.npy", logits)
    with pytest.raises(FileNotFoundError, match="x_labels.npy"):
        load_logits_file(tmp_path / "x_logits.npy")


def test_load_csv_with_split_column(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text(
        "z0,z1,label,split\n"
        "1.5,-0.5,0,val\n"
        "0.0,2.0,1,val\n"
        "0.25,0.75,1,test\n"
        "3.0,1.0,0,test\n"
    )
    d = load_logits_file(f)
    np.testing.assert_array_equal(d.logits_val, [[1.5, -0.5], [0.0, 2.0]])
    np.testing.assert_array_equal(d.y_val, [0, 1])
    np.testing.assert_array_equal(d.logits_test, [[0.25, 0.75], [3.0, 1.0]])
    np.testing.assert_array_equal(d.y_test, [1, 0])
    assert d.y_val.dtype == np.int64


def test_load_csv_without_split_column(tmp_path):
    # (i + 0.25: a column holding exactly the row numbers 0..n-1 is refused as
    # a row index)
    lines = ["label,a,b,c"] + [f"{i % 3},{i + 0.25},{-(i + 0.25)},0.5" for i in range(10)]
    f = tmp_path / "m.csv"
    f.write_text("\n".join(lines) + "\n")
    d = load_logits_file(f, random_state=0)
    assert d.n_classes == 3 and len(d.y_val) + len(d.y_test) == 10
    # logits columns are the non-label columns, in order: row i is (i, -i, 0.5)
    all_rows = np.vstack([d.logits_val, d.logits_test])
    all_y = np.concatenate([d.y_val, d.y_test])
    np.testing.assert_array_equal(all_rows[:, 1], -all_rows[:, 0])
    np.testing.assert_array_equal(all_y, all_rows[:, 0].astype(int) % 3)


def test_binary_scores_become_two_columns(tmp_path):
    s = np.array([-1.0, 2.0, 0.5, -0.3])
    f = tmp_path / "b.npz"
    np.savez(f, logits_val=s[:2], y_val=[0, 1], logits_test=s[2:], y_test=[1, 0])
    d = load_logits_file(f)
    np.testing.assert_array_equal(d.logits_val, [[0.0, -1.0], [0.0, 2.0]])
    assert d.n_classes == 2


def _npz(tmp_path, **arrays):
    f = tmp_path / "bad.npz"
    np.savez(f, **arrays)
    return f


@pytest.mark.parametrize(
    "arrays, match",
    [
        (dict(logits_val=np.zeros((3, 2))), "missing keys"),
        (dict(logits_val=np.zeros((3, 2)), y_val=[0, 1], logits_test=np.zeros((2, 2)),
              y_test=[0, 1]), "logits_val has 3 rows but y_val has 2"),
        (dict(logits_val=[[0.0, np.nan]], y_val=[0], logits_test=np.zeros((1, 2)),
              y_test=[0]), "non-finite"),
        (dict(logits_val=[[0.0, np.inf]], y_val=[0], logits_test=np.zeros((1, 2)),
              y_test=[0]), "non-finite"),
        (dict(logits_val=np.zeros((2, 2)), y_val=[0, 2], logits_test=np.zeros((2, 2)),
              y_test=[0, 1]), r"must lie in 0..1"),
        (dict(logits_val=np.zeros((2, 2)), y_val=[0, -1], logits_test=np.zeros((2, 2)),
              y_test=[0, 1]), r"must lie in 0..1"),
        (dict(logits_val=np.zeros((2, 2)), y_val=[0.0, 0.5], logits_test=np.zeros((2, 2)),
              y_test=[0, 1]), "integer"),
        (dict(logits_val=np.zeros((2, 3)), y_val=[0, 1], logits_test=np.zeros((2, 2)),
              y_test=[0, 1]), "3 classes but test logits have 2"),
        (dict(logits_val=np.zeros((2, 2, 2)), y_val=[0, 1],
              logits_test=np.zeros((2, 2)), y_test=[0, 1]), "shape"),
        (dict(logits_val=np.zeros((2, 0)), y_val=[0, 0],
              logits_test=np.zeros((2, 0)), y_test=[0, 0]), "at least 1 column"),
    ],
)
def test_load_npz_errors(tmp_path, arrays, match):
    with pytest.raises(ValueError, match=match):
        load_logits_file(_npz(tmp_path, **arrays))


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_logits_file(tmp_path / "absent.npz")


def test_load_unsupported_suffix_and_corrupt_npz(tmp_path):
    (tmp_path / "a.txt").write_text("1,2\n")
    with pytest.raises(ValueError, match="unsupported file type"):
        load_logits_file(tmp_path / "a.txt")
    (tmp_path / "c.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"c.npz: not a valid .npz \(zip\) file"):
        load_logits_file(tmp_path / "c.npz")


def test_object_npz_names_file_and_never_unpickles(tmp_path):
    f = tmp_path / "obj.npz"
    np.savez(f, logits=np.array([[1.0, "a"]], dtype=object), y=np.array([0]))
    with pytest.raises(ValueError, match=r"obj.npz: holds object arrays \(key "
                       r"'logits'.*numeric arrays and never unpickles"):
        load_logits_file(f)


def test_npy_pair_object_or_not_npy(tmp_path):
    np.save(tmp_path / "o_logits.npy", np.array([None, 1.0], dtype=object))
    np.save(tmp_path / "o_labels.npy", np.array([0, 1]))
    with pytest.raises(ValueError, match="o_logits.npy: holds an object array"):
        load_logits_file(tmp_path / "o_logits.npy")
    (tmp_path / "t_logits.npy").write_text("0.1,0.2\n")
    np.save(tmp_path / "t_labels.npy", np.array([0]))
    with pytest.raises(ValueError, match="t_logits.npy: not a valid .npy file"):
        load_logits_file(tmp_path / "t_logits.npy")


def test_load_csv_text_labels_map_to_columns_in_sorted_order(tmp_path):
    # Logit column k belongs to the k-th label in sorted order: ant, bee, cat.
    f = tmp_path / "t.csv"
    f.write_text(
        "z0,z1,z2,label,split\n"
        "1,0,0,cat,val\n"
        "0,1,0,ant,val\n"
        "0,0,1,bee,val\n"
        "2,0,0, ant ,test\n"
        "0,0,2,cat,test\n"
    )
    with pytest.warns(UserWarning, match=r"sorted order \(ant -> z0, bee -> z1, cat -> z2\)"):
        d = load_logits_file(f)
    np.testing.assert_array_equal(d.y_val, [2, 0, 1])
    np.testing.assert_array_equal(d.y_test, [0, 2])
    assert d.y_val.dtype == np.int64 and d.n_classes == 3
    assert d.info["classes"] == ["ant", "bee", "cat"]
    assert "ant, bee, cat" in d.DESCR


def test_load_csv_text_labels_agree_with_calibrator_classes(tmp_path):
    """The CSV rule is the calibrators' rule (skcal.utils._labels.resolve_classes,
    which gives every calibrator its classes_): column k <-> k-th sorted label."""
    from skcal.utils._labels import resolve_classes

    names = np.array(["no", "yes", "maybe"] * 4)
    z = np.arange(36, dtype=np.float64).reshape(12, 3) / 4  # distinct rows
    f = tmp_path / "c.csv"
    f.write_text("a,b,c,label\n" + "".join(
        f"{r[0]},{r[1]},{r[2]},{n}\n" for r, n in zip(z, names)))
    with pytest.warns(UserWarning, match="sorted order"):
        d = load_logits_file(f, random_state=0)
    classes, _, _ = resolve_classes(names, 3)
    all_z = np.vstack([d.logits_val, d.logits_test])
    all_y = np.concatenate([d.y_val, d.y_test])
    for row, k in zip(all_z, all_y):
        i = np.flatnonzero((z == row).all(axis=1))[0]
        assert classes[k] == names[i]


@pytest.mark.parametrize(
    "text, match",
    [
        ("a,b\n1,2\n", "exactly one 'label'"),
        # pyarrow's messages (the csv module's without pyarrow: line 3 / line 2)
        ("a,b,label\n1,2,0\n1,2\n", "line 3 has 2 fields|Expected 3 columns, got 2"),
        ("a,b,label\n1,x,0\n", "non-numeric value 'x' in logit column 'b' "
         r"\(line 2\)|column 'b': .*invalid value 'x'"),
        ("a,b,label\n1,2,0\n3,4,cat\n", "label column 'label' mixes numbers and "
         r"text, e.g. 'cat' \(line 3\)"),
        ("a,b,y\n1,2,x\n3,4,\n", r"empty value in label column 'y' \(line 3\)"),
        ("a,b,label\n1,2,x\n3,4,y\n5,6,z\n", "3 distinct text labels "
         r"\['x', 'y', 'z'\] but there are 2 logit columns"),
        ("a,b,label,split\n1,2,0,train\n", "'val' or 'test'"),
        ("a,b,label\n", "no rows"),
        ("", "empty CSV"),
    ],
)
def test_load_csv_errors(tmp_path, text, match):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_logits_file(f)


def test_csv_text_labels_follow_the_header_names(tmp_path):
    from skcal.datasets import load_logits_file

    rows = ["label,dog,cat"] + [
        f"{'cat' if i % 2 else 'dog'},{float(i % 2 == 0)},{float(i % 2)}" for i in range(40)
    ]
    p = tmp_path / "named.csv"
    p.write_text("\n".join(rows) + "\n")
    b = load_logits_file(p, input_type="logits")  # one-hot logits
    assert list(b.info["classes"]) == ["dog", "cat"]
    # each row's largest logit is its label's column
    assert (b.logits_val.argmax(1) == b.y_val).all()
    assert (b.logits_test.argmax(1) == b.y_test).all()
    bad = tmp_path / "bad.csv"
    bad.write_text("label,cat,dog\n" + "dog,0,1\nfish,1,0\n" * 5)
    with pytest.raises(ValueError, match="name none of the logit columns"):
        load_logits_file(bad)


def test_csv_integer_labels_follow_index_headers_in_another_order(tmp_path):
    """Logit columns headed '2,0,1': label 0 is the column headed '0' (the second)."""
    from skcal.datasets import load_logits_file

    rng = np.random.default_rng(0)
    n = 60
    y = rng.integers(0, 3, n)
    headers = [2, 0, 1]
    lines = ["label,split," + ",".join(map(str, headers))]
    for i, yi in enumerate(y):
        row = [0.0, 0.0, 0.0]
        row[headers.index(int(yi))] = 5.0  # the logit of class yi sits under header yi
        lines.append(f"{yi},{'val' if i % 2 else 'test'}," + ",".join(map(str, row)))
    f = tmp_path / "perm.csv"
    f.write_text("\n".join(lines) + "\n")
    d = load_logits_file(f)
    # every row's top logit is its own class's column
    np.testing.assert_array_equal(d.logits_val.argmax(1), d.y_val)
    np.testing.assert_array_equal(d.logits_test.argmax(1), d.y_test)


def test_csv_with_byte_order_mark_and_duplicate_headers(tmp_path):
    from skcal.datasets import load_logits_file

    rows = "\n".join(f"{i % 2},{'val' if i % 3 else 'test'},{i % 2 * 2.0},0.5" for i in range(30))
    f = tmp_path / "bom.csv"
    f.write_bytes(("\ufefflabel,split,a,b\n" + rows + "\n").encode("utf-8"))
    d = load_logits_file(f)  # the BOM that spreadsheet programs write is skipped
    assert d.logits_val.shape[1] == 2
    g = tmp_path / "dupe.csv"
    g.write_text("label,a,a\n" + "\n".join(f"{i % 2},0.1,0.2" for i in range(10)) + "\n")
    with pytest.raises(ValueError, match=r"duplicate column name\(s\) \['a'\]"):
        load_logits_file(g)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_csv_separated_by_another_character_is_named(tmp_path, sep):
    from skcal.datasets import load_logits_file

    f = tmp_path / "semi.csv"
    f.write_text(sep.join(["a", "b", "label"]) + "\n"
                 + "\n".join(sep.join(["0.1", "0.2", str(i % 2)]) for i in range(10)))
    with pytest.raises(ValueError, match=re.escape(f"looks separated by {sep!r}")):
        load_logits_file(f)


# ------------------------------------------------ the one reader (_tables.py)
_SPLIT_CSV = (
    "id_not_used,ant,bee,cat,label,split\n"
    "a,2.0,0.5,-1.0,ant,val\n"
    "b,0.1,1.5,0.2,bee,val\n"
    "c,-0.3,0.0,2.5,cat,val\n"
    "d,1.0,1.1,1.2,cat,test\n"
    "e,3.0,0.0,0.0,ant,test\n"
)


@pytest.mark.parametrize("engine", ["pyarrow", "csv module"])
def test_read_logit_table_split_roles_and_ignore_columns(tmp_path, monkeypatch, engine):
    from skcal.datasets import _tables

    if engine == "pyarrow":
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setattr(_tables, "_has_pyarrow", lambda: False)
    f = tmp_path / "s.csv"
    f.write_text(_SPLIT_CSV)
    with pytest.raises(ValueError, match="column 'id_not_used'.*invalid value 'a'|non-numeric value 'a'"):
        _tables.read_logit_table(f)
    kw = dict(ignore_columns=["id_not_used"])
    fit = _tables.read_logit_table(f, role="fit", **kw)
    rep = _tables.read_logit_table(f, role="report", **kw)
    both = _tables.read_logit_table(f, role=None, **kw)
    assert fit.columns == ["ant", "bee", "cat"] and fit.split is None
    np.testing.assert_array_equal(fit.logits, [[2.0, 0.5, -1.0], [0.1, 1.5, 0.2],
                                               [-0.3, 0.0, 2.5]])
    np.testing.assert_array_equal(rep.y, ["cat", "ant"])
    np.testing.assert_array_equal(both.split, ["val"] * 3 + ["test"] * 2)
    y, classes = _tables.encode_labels(both)
    np.testing.assert_array_equal(y, [0, 1, 2, 2, 0])
    np.testing.assert_array_equal(classes, ["ant", "bee", "cat"])
    d = load_logits_file(f, **kw)  # the loader reads through the same reader
    np.testing.assert_array_equal(d.logits_test, rep.logits)
    np.testing.assert_array_equal(d.y_val, [0, 1, 2])


def test_csv_reader_engines_agree(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from skcal.datasets import _tables

    rng = np.random.default_rng(1)
    z = rng.normal(size=(30, 3))
    f = tmp_path / "e.csv"
    f.write_text("a,b,c,y\n" + "".join(
        f"{r[0].item()!r},{r[1].item()!r},{r[2].item()!r},{i % 3}\n"
        for i, r in enumerate(z)))
    fast = _tables.read_logit_table(f)
    monkeypatch.setattr(_tables, "_has_pyarrow", lambda: False)
    slow = _tables.read_logit_table(f)
    np.testing.assert_array_equal(fast.logits, z)
    np.testing.assert_array_equal(slow.logits, z)
    np.testing.assert_array_equal(fast.y, slow.y)
    assert fast.y.dtype == slow.y.dtype == np.int64


def test_every_format_reads_the_same_table(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from skcal.datasets._tables import read_logit_table

    rng = np.random.default_rng(2)
    z, y = rng.normal(size=(20, 3)), rng.integers(0, 3, 20)
    y[:3] = [0, 1, 2]
    np.savez(tmp_path / "t.npz", logits=z, y=y)
    np.save(tmp_path / "t_logits.npy", z)
    np.save(tmp_path / "t_labels.npy", y)
    t = pa.table({"c0": z[:, 0], "c1": z[:, 1], "c2": z[:, 2], "label": y})
    pq.write_table(t, tmp_path / "t.parquet")
    import pyarrow.csv as pacsv

    pacsv.write_csv(t, tmp_path / "t.csv")
    for name in ("t.npz", "t_logits.npy", "t.csv", "t.parquet"):
        table = read_logit_table(tmp_path / name)
        np.testing.assert_allclose(table.logits, z, rtol=1e-15, err_msg=name)
        np.testing.assert_array_equal(table.y, y, err_msg=name)
    with pytest.raises(ValueError, match="--ignore-columns applies to .csv and .parquet"):
        read_logit_table(tmp_path / "t.npz", ignore_columns=["x"])


@pytest.mark.parametrize("shape", ["1d", "column", "csv"])
def test_load_logits_file_one_column_follows_input_type(tmp_path, shape):
    # main: one column p was returned as logits [0, p] whatever it held, with
    # no warning; now the calibrators' rule: [0, s] as log-odds (warning when
    # every value is in [0, 1]), log [1 - p, p] as probabilities
    from skcal.datasets import load_logits_file
    from skcal.utils.validation import ProbabilitiesAsLogitsWarning

    rng = np.random.default_rng(1)
    p = rng.uniform(0.01, 0.99, 40)
    y = (rng.random(40) < p).astype(np.int64)
    y[:2] = [0, 1]
    split = dict(logits_val=p[:20], y_val=y[:20], logits_test=p[20:], y_test=y[20:])
    if shape == "csv":
        path = tmp_path / "b.csv"
        path.write_text("score,label,split\n" + "".join(
            f"{float(v)!r},{c},{'val' if i < 20 else 'test'}\n" for i, (v, c) in enumerate(zip(p, y))))
    else:
        path = tmp_path / "b.npz"
        if shape == "column":
            split = {k: v[:, None] if k.startswith("logits") else v for k, v in split.items()}
        np.savez(path, **split)
    with pytest.warns(ProbabilitiesAsLogitsWarning, match="binary score"):
        d = load_logits_file(path)
    np.testing.assert_array_equal(d.logits_test, np.column_stack([np.zeros(20), p[20:]]))
    d = load_logits_file(path, input_type="probabilities")
    assert d.n_classes == 2
    np.testing.assert_allclose(d.logits_val, np.log(np.column_stack([1 - p[:20], p[:20]])),
                               rtol=1e-15)
    np.testing.assert_array_equal(d.y_test, y[20:])
    bad = tmp_path / "bad.npz"
    np.savez(bad, logits=np.r_[p, 1.5], y=np.r_[y, 1])
    with pytest.raises(ValueError, match=r"bad\.npz.*\[0, 1\]"):
        load_logits_file(bad, input_type="probabilities")


def test_csv_with_pandas_index_column_is_an_error_naming_it(tmp_path):
    from skcal.datasets import load_logits_file

    df = csv_frame()
    f = tmp_path / "f.csv"
    df.to_csv(f)  # pandas' default: an unnamed index column first
    with pytest.raises(ValueError, match=r"column\(s\) '' look like a row index"):
        load_logits_file(f)
    d = load_logits_file(f, ignore_columns=[""])
    assert d.n_classes == 3
    with pytest.raises(ValueError, match="column '' is neither the label column nor one of"):
        load_logits_file(f, logit_columns=["a", "b", "c"], label_column="label")
    d2 = load_logits_file(f, logit_columns=["a", "b", "c"], label_column="label",
                          ignore_columns=[""])
    np.testing.assert_array_equal(d.logits_val, d2.logits_val)
    named = tmp_path / "named.csv"
    df.rename_axis("id").to_csv(named)
    with pytest.raises(ValueError, match="'id' look like a row index"):
        load_logits_file(named)
    numbered = tmp_path / "numbered.csv"
    df.assign(rownum=np.arange(len(df)))[["rownum", "a", "b", "c", "label"]].to_csv(
        numbered, index=False
    )
    with pytest.raises(ValueError, match="'rownum' holds the row numbers"):
        load_logits_file(numbered)


def test_csv_split_does_not_depend_on_column_order(tmp_path):
    from skcal.datasets import load_logits_file

    df = csv_frame()
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    df.to_csv(a, index=False)
    df[["c", "a", "b", "label"]].to_csv(b, index=False)
    da, db = load_logits_file(a), load_logits_file(b)
    # the same rows in each split; the columns permuted with the classes
    np.testing.assert_array_equal(da.logits_val, db.logits_val[:, [1, 2, 0]])
    names_a = np.asarray(da.info["classes"])[da.y_val]
    names_b = np.asarray(db.info["classes"])[db.y_val]
    np.testing.assert_array_equal(names_a, names_b)


def test_single_column_binary_csv_and_text_labels_npz(tmp_path):
    from skcal.datasets import load_logits_file

    rng = np.random.default_rng(0)
    s = rng.normal(size=50)
    f = tmp_path / "bin.csv"
    f.write_text("score,label\n" + "\n".join(f"{v},{int(v > 0)}" for v in s) + "\n")
    d = load_logits_file(f)
    assert d.n_classes == 2
    np.testing.assert_array_equal(d.logits_val[:, 0], 0.0)
    g = tmp_path / "t.npz"
    y = rng.integers(0, 3, 60)
    np.savez(g, logits=rng.normal(size=(60, 3)), y=np.array(["x", "y", "z"])[y])
    d = load_logits_file(g)
    assert d.info["classes"] == ["x", "y", "z"]
    assert sorted(np.unique(np.r_[d.y_val, d.y_test]).tolist()) == [0, 1, 2]
