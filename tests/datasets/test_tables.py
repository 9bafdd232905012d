"""skcal.datasets._tables.read_logit_table: what the table says it read."""

import numpy as np
import pytest


def test_label_column_names_the_labels_of_every_format(tmp_path):
    """The table's ``label_column`` held the logits key for .npz / .npy files
    ("logits", "logits_val"); it names where the labels were read from."""
    from skcal.datasets._tables import read_logit_table

    rng = np.random.default_rng(0)
    Z, y = rng.normal(size=(20, 3)), rng.integers(0, 3, 20)
    np.savez(tmp_path / "one.npz", logits=Z, y=y, target=y)
    np.savez(tmp_path / "split.npz", logits_val=Z[:10], y_val=y[:10], logits_test=Z[10:],
             y_test=y[10:])
    np.save(tmp_path / "m_logits.npy", Z)
    np.save(tmp_path / "m_labels.npy", y)
    assert read_logit_table(tmp_path / "one.npz").label_column == "y"
    assert read_logit_table(tmp_path / "one.npz", label_column="target").label_column == "target"
    assert read_logit_table(tmp_path / "one.npz", role="apply", need_labels=False,
                            logit_columns=["logits"]).label_column == "y"
    assert read_logit_table(tmp_path / "split.npz").label_column == "y_val"
    assert read_logit_table(tmp_path / "split.npz", role="apply").label_column == "y_test"
    assert read_logit_table(tmp_path / "split.npz", role=None).label_column == "y_val, y_test"
    assert read_logit_table(tmp_path / "m_logits.npy").label_column == "m_labels.npy"
    np.savez(tmp_path / "nolabels.npz", logits=Z)
    assert read_logit_table(tmp_path / "nolabels.npz", role="apply",
                            need_labels=False).label_column is None


def test_parquet_pandas_index_column_is_skipped(tmp_path):
    """fresh34b: a Parquet file written by pandas with a non-default index holds
    it as a column ``__index_level_0__``, which was read as a logit column (an
    error); pandas' metadata marks it as the index, and the reader skips it."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from skcal.datasets._tables import read_logit_table

    rng = np.random.default_rng(0)
    Z, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    df = pd.DataFrame(Z, columns=["a", "b", "c"])
    df["label"] = y
    df.index = rng.permutation(30) * 7  # not a RangeIndex: stored as a column
    path = tmp_path / "idx.parquet"
    df.to_parquet(path)
    import pyarrow.parquet as pq

    assert "__index_level_0__" in pq.read_schema(path).names
    t = read_logit_table(path)
    assert t.columns == ["a", "b", "c"]
    np.testing.assert_array_equal(t.logits, Z)
    # naming it in --ignore-columns as well is fine
    assert read_logit_table(path, ignore_columns=["__index_level_0__"]).columns == ["a", "b", "c"]


def test_split_read_only_for_a_file_with_both_splits(tmp_path):
    """An .npz with a ``logits`` key whose labels are named ``y_val`` is no split
    file: ``split_read`` is None (it was derived from the label key's name)."""
    from skcal.datasets._tables import read_logit_table

    rng = np.random.default_rng(0)
    Z, y = rng.normal(size=(20, 3)), rng.integers(0, 3, 20)
    np.savez(tmp_path / "k.npz", logits=Z, y_val=y)
    t = read_logit_table(tmp_path / "k.npz", role="apply", label_column="y_val")
    assert t.split_read is None and t.n_file_rows == 20
    np.savez(tmp_path / "s.npz", logits_val=Z[:8], y_val=y[:8], logits_test=Z[8:],
             y_test=y[8:])
    t = read_logit_table(tmp_path / "s.npz", role="apply")
    assert (t.split_read, t.n_file_rows, len(t.y)) == ("test", None, 12)
    t = read_logit_table(tmp_path / "s.npz", role=None)
    assert (t.split_read, t.n_file_rows) == (None, 20)


@pytest.mark.parametrize("engine", ["pyarrow", "csv module"])
def test_non_finite_csv_logits_name_the_column_and_first_line(tmp_path, monkeypatch, engine):
    """An ``inf`` / ``-inf`` / ``nan`` cell of a CSV logit column is named by
    column and line, as an empty cell is by column (main: only "logits
    contains 3 non-finite value(s)"); an .npz array keeps its count message."""
    from skcal.datasets import _tables

    if engine == "pyarrow":
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setattr(_tables, "_has_pyarrow", lambda: False)
    f = tmp_path / "inf.csv"
    f.write_text("hello,world,label\n1,2,0\n3,inf,1\n4,-inf,1\nnan,1,0\n")
    with pytest.raises(ValueError) as err:
        _tables.read_logit_table(f)
    assert str(err.value) == (
        f"{f}: logit column 'hello' has 1 non-finite value(s) (NaN or inf), the first "
        "at line 5 (nan); logit column 'world' has 2 non-finite value(s) (NaN or inf), "
        "the first at line 3 (inf)")
    np.savez(tmp_path / "inf.npz", logits=[[1.0, np.inf], [0.0, 1.0]], y=[0, 1])
    with pytest.raises(ValueError, match=r"logits contains 1 non-finite value\(s\) "
                       r"\(NaN or inf\)$"):
        _tables.read_logit_table(tmp_path / "inf.npz")


def test_non_finite_logits_name_at_most_five_columns(tmp_path):
    from skcal.datasets._tables import read_logit_table

    names = [f"c{j}" for j in range(7)]
    f = tmp_path / "wide.csv"
    f.write_text(",".join([*names, "label"]) + "\n" + ",".join(["inf"] * 7 + ["0"]) + "\n"
                 + ",".join(["1"] * 7 + ["1"]) + "\n")
    with pytest.raises(ValueError, match=r"logit column 'c4' .*line 2 \(inf\); and 2 "
                       r"more column\(s\)$") as err:
        read_logit_table(f)
    assert "'c5'" not in str(err.value)
