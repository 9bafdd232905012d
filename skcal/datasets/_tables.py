"""Reading one logit table (logits and optional labels) for ``skcal fit/apply/report``.

``.npz`` and ``.npy`` files are read with NumPy (``.npy`` memory-mapped, never
unpickled), CSV and Parquet files with pyarrow's multithreaded readers: no
Python loop over rows. Errors are ``ValueError`` / ``FileNotFoundError`` with
one-line messages naming the file and, where it applies, the column.
"""

from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._base import (
    _ID_NAMES,
    _SPLIT_KEYS,
    _as_labels,
    _as_logits,
    _check_not_row_index,
    _load_npy,
    _npz_array,
)

__all__ = ["read_logit_table", "write_table", "TABLE_SUFFIXES"]

#: File types read by :func:`read_logit_table`.
TABLE_SUFFIXES = (".npz", ".npy", ".csv", ".parquet")

_LABEL_NAMES = ("label", "y")


def _pyarrow(path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(
            f"{path}: reading {Path(path).suffix} files needs pyarrow; install it "
            "with pip install 'skcal[io]'"
        ) from None
    import pyarrow

    return pyarrow


def _check_path(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a directory, expected a file")
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ValueError(
            f"{path}: unsupported file type {path.suffix!r}; use "
            f"{', '.join(TABLE_SUFFIXES)}"
        )
    return path, suffix


def _read_npz(path, role, label_column, logit_columns, need_labels):
    import zipfile

    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a valid .npz (zip) file; write one with numpy.savez")
    if logit_columns is not None and len(logit_columns) != 1:
        raise ValueError(
            f"{path}: for an .npz file --logit-columns names one array key, got "
            f"{len(logit_columns)}"
        )
    with np.load(path, allow_pickle=False) as f:
        keys = set(f.files)
        if logit_columns is not None:
            lkey, ykey = logit_columns[0], label_column or "y"
        elif "logits" in keys:
            lkey, ykey = "logits", label_column or "y"
        elif set(_SPLIT_KEYS) <= keys:
            split = "val" if role == "fit" else "test"
            lkey, ykey = f"logits_{split}", label_column or f"y_{split}"
        else:
            raise ValueError(
                f"{path}: no logits; need the key 'logits' (and 'y'), or "
                f"logits_val, y_val, logits_test, y_test; found {sorted(keys) or 'none'}"
            )
        if lkey not in keys:
            raise ValueError(f"{path}: no array {lkey!r}; found {sorted(keys)}")
        if ykey not in keys and (need_labels or label_column is not None):
            raise ValueError(
                f"{path}: no label array {ykey!r}; found {sorted(keys)}"
                + ("" if label_column else " (name it with --label-column)")
            )
        logits = _as_logits(_npz_array(f, lkey, path), lkey, path)
        y = None
        if ykey in keys:
            y = _as_labels(_npz_array(f, ykey, path), ykey, path, logits.shape[1])
    return logits, y, None, f"{lkey}"


def _read_npy(path, need_labels, label_column, logit_columns):
    if label_column is not None or logit_columns is not None:
        raise ValueError(
            f"{path}: --label-column and --logit-columns apply to .npz, .csv and "
            ".parquet files; an .npy file holds one logits array (labels in "
            "<stem>_labels.npy beside <stem>_logits.npy)"
        )
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror})") from None
    if magic != b"\x93NUMPY":
        raise ValueError(f"{path}: not a valid .npy file; write one with numpy.save")
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        if "object" in str(exc) or "pickle" in str(exc):
            raise ValueError(
                f"{path}: holds an object array; skcal needs numeric arrays and "
                "never unpickles"
            ) from None
        raise ValueError(f"{path}: not a readable .npy file ({exc})") from None
    logits = _as_logits(arr, "logits", path)
    y = None
    stem = path.name[: -len(".npy")]
    labels_path = (
        path.with_name(stem[: -len("_logits")] + "_labels.npy")
        if stem.endswith("_logits") else None
    )
    if labels_path is not None and labels_path.exists():
        y = _as_labels(_load_npy(labels_path), "labels", labels_path, logits.shape[1])
    elif need_labels:
        raise ValueError(
            f"{path}: no labels; name the logits <stem>_logits.npy with the labels "
            "in <stem>_labels.npy beside it"
        )
    return logits, y, None, "logits"


def _read_arrow(path, suffix, label_column, logit_columns, need_labels, dtype):
    pa = _pyarrow(path)
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
        else:
            import pyarrow.csv as pacsv

            with open(path, "rb") as fh:
                head = fh.readline().decode("utf-8-sig").strip()
            if not head:
                raise ValueError(f"{path}: empty CSV file")
            names = pacsv.read_csv(
                pa.BufferReader(head.encode() + b"\n"),
                read_options=pacsv.ReadOptions(use_threads=False),
            ).column_names
    except (pa.ArrowException, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{path}: not a readable {suffix[1:]} file ({_short(exc)})") from None
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{path}: duplicate column name(s) {dupes[:10]}")
    # label column: named, or the one called label / y
    if label_column is not None:
        if label_column not in names:
            raise ValueError(
                f"{path}: no label column {label_column!r}; columns: {names[:20]}"
            )
    else:
        found = [n for n in names if n.strip().lower() in _LABEL_NAMES]
        if len(found) > 1:
            raise ValueError(
                f"{path}: several label columns {found}; choose one with --label-column"
            )
        label_column = found[0] if found else None
        if label_column is None and need_labels:
            raise ValueError(
                f"{path}: no label column; name one 'label' (or 'y') or pass "
                "--label-column"
            )
    if logit_columns is not None:
        missing = [c for c in logit_columns if c not in names]
        if missing:
            raise ValueError(f"{path}: no logit column(s) {missing}; columns: {names[:20]}")
        if label_column in logit_columns:
            raise ValueError(
                f"{path}: column {label_column!r} is both the label column and a "
                "logit column"
            )
        extra = [n for n in names if n not in logit_columns and n != label_column]
        if extra:
            raise ValueError(
                f"{path}: column {extra[0]!r} is neither the label column nor one "
                "of --logit-columns; list it, or remove it from the file"
            )
    else:
        logit_columns = [n for n in names if n != label_column]
        ids = [n for n in logit_columns
               if n.strip().lower() in _ID_NAMES or n.lower().startswith("unnamed:")]
        if ids:
            raise ValueError(
                f"{path}: column {ids[0]!r} is neither the label column nor a class "
                "logit: it looks like a row index or id (pandas' DataFrame.to_csv "
                "writes its index as an unnamed first column); drop it "
                "(df.to_csv(..., index=False)) or list the logit columns with "
                "--logit-columns"
            )
    if not logit_columns:
        raise ValueError(f"{path}: no logit columns besides the label column")
    float_type = pa.float32() if dtype == np.float32 else pa.float64()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path, columns=list(logit_columns) + (
                [label_column] if label_column else []))
        else:
            import pyarrow.csv as pacsv

            table = pacsv.read_csv(
                path,
                convert_options=pacsv.ConvertOptions(
                    column_types={c: float_type for c in logit_columns},
                    null_values=[""],  # "nan" is a number, reported as non-finite
                    strings_can_be_null=True,
                ),
            )
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{path}: {_csv_error(exc, names)}") from None
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable {suffix[1:]} file ({_short(exc)})") from None
    n = table.num_rows
    if n == 0:
        raise ValueError(f"{path}: the file has a header but no rows")
    for c in logit_columns:
        col = table.column(c)
        if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
            raise ValueError(
                f"{path}: column {c!r} is not numeric (type {col.type}); a logit "
                "column must hold numbers" + (
                    "" if label_column else
                    ", or name the label column with --label-column"
                )
            )
        if col.null_count:
            raise ValueError(f"{path}: column {c!r} has {col.null_count} empty value(s)")
        if col.type == float_type or pa.types.is_floating(col.type):
            import pyarrow.compute as pc

            n_bad = col.null_count + len(col) - pc.sum(pc.is_finite(col)).as_py()
            if n_bad:
                raise ValueError(
                    f"{path}: column {c!r} holds {n_bad} non-finite value(s) (NaN or inf)"
                )
    logits = _as_logits(_to_matrix(table, logit_columns, dtype), "logits", path)
    _check_not_row_index(logits, list(logit_columns), range(len(logit_columns)), path)
    y = None
    if label_column is not None:
        col = table.column(label_column)
        if col.null_count:
            raise ValueError(
                f"{path}: label column {label_column!r} has {col.null_count} empty value(s)"
            )
        y = col.to_numpy()
        if y.dtype.kind == "f":
            if not np.all(y == np.round(y)):
                raise ValueError(
                    f"{path}: label column {label_column!r} holds non-integer numbers"
                )
            y = y.astype(np.int64)
        elif y.dtype.kind == "O":
            y = y.astype(str)
        elif y.dtype.kind == "b":
            y = y.astype(np.int64)
    return logits, y, list(logit_columns), label_column


def _to_matrix(table, columns, dtype):
    """The named columns as a C-ordered (n, len(columns)) array, batch by batch.

    Each record batch is gathered column-wise into a Fortran-ordered block
    (contiguous writes) that is then copied into the output rows: about 3x
    less CPU than writing whole columns into a C-ordered array, and extra
    memory of one batch.
    """
    out = np.empty((table.num_rows, len(columns)), dtype=dtype)
    sub = table.select(list(columns))
    start = 0
    for batch in sub.to_batches():
        m = batch.num_rows
        if m == 0:
            continue
        block = np.empty((m, len(columns)), dtype=dtype, order="F")
        for j in range(len(columns)):
            block[:, j] = batch.column(j).to_numpy(zero_copy_only=False)
        out[start:start + m] = block
        start += m
    return out


def _duplicates(names):
    """Names that occur more than once, in order of first occurrence."""
    seen, dupes = set(), []
    for n in names:
        if n in seen and n not in dupes:
            dupes.append(n)
        seen.add(n)
    return dupes


def _short(exc):
    return str(exc).strip().splitlines()[0][:300]


def _csv_error(exc, names):
    """pyarrow's conversion error, with the column named (it gives an index)."""
    import re

    msg = _short(exc)
    m = re.search(r"In CSV column #(\d+): (.*)", msg)
    if m and int(m.group(1)) < len(names):
        return f"column {names[int(m.group(1))]!r}: {m.group(2)}"
    return msg


def read_logit_table(
    path, *, role="fit", label_column=None, logit_columns=None, need_labels=True,
    dtype=np.float64,
):
    """Read logits (and labels) from ``.npz``, ``.npy``, ``.csv`` or ``.parquet``.

    Parameters
    ----------
    path : str or path-like
    role : {"fit", "apply", "report"}, default="fit"
        For an ``.npz`` file with the four split keys of the bundled sets,
        ``"fit"`` reads ``logits_val`` / ``y_val`` and the others
        ``logits_test`` / ``y_test``.
    label_column : str, default=None
        CSV/Parquet: the label column (default: the column named ``label``
        or ``y``, case-insensitive, if any). ``.npz``: the label key
        (default ``y``).
    logit_columns : list of str, default=None
        CSV/Parquet: the logit columns, in class order (default: every column
        but the label column); when given, any other column but the label
        column is an error naming it. ``.npz``: one key holding the logits.
    need_labels : bool, default=True
        Whether a missing label column is an error.
    dtype : numpy dtype, default=float64
        dtype of the logits read from CSV/Parquet.

    Returns
    -------
    table : :class:`~sklearn.utils.Bunch`
        ``logits`` (n, K) (a read-only memory map for ``.npy``; 1-D binary
        scores become ``[0, s]``), ``y`` (n,) labels or None (integers, or
        text for CSV/Parquet), ``columns`` (names of the logit columns, None
        for NumPy files), ``label_column`` (name or key), ``path``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For an unsupported suffix, an unreadable file, a missing or duplicate
        column or key, a column that is neither label nor logit (when
        ``logit_columns`` is given), a name listed twice in ``logit_columns``, a non-numeric or empty logit value,
        non-finite logits, or labels that do not fit the logits.
    """
    path, suffix = _check_path(path)
    if logit_columns is not None:
        dupes = _duplicates(logit_columns)
        if dupes:
            raise ValueError(f"{path}: --logit-columns names {dupes[:10]} more than once")
    if suffix == ".npz":
        logits, y, columns, lname = _read_npz(path, role, label_column, logit_columns, need_labels)
    elif suffix == ".npy":
        logits, y, columns, lname = _read_npy(path, need_labels, label_column, logit_columns)
    else:
        logits, y, columns, lname = _read_arrow(
            path, suffix, label_column, logit_columns, need_labels, dtype
        )
    if y is not None and len(y) != logits.shape[0]:
        raise ValueError(f"{path}: {logits.shape[0]} logit rows but {len(y)} labels")
    return Bunch(logits=logits, y=y, columns=columns, label_column=lname, path=path)


def write_table(path, columns, data, *, npz_key="proba", extra=None):
    """Write a float matrix with named columns to ``.npz``, ``.csv`` or ``.parquet``.

    Parameters
    ----------
    path : path-like
    columns : list of str
        Names of the columns of ``data``.
    data : ndarray of shape (n, len(columns))
    npz_key : str, default="proba"
        Key of ``data`` in an ``.npz`` file (``columns`` is stored under
        ``"classes"``).
    extra : dict of str to 1-D ndarray, default=None
        More columns (``.npz``: more keys), written after ``data``'s.

    Raises
    ------
    ValueError
        For another suffix.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    extra = extra or {}
    if suffix == ".npz":
        np.savez(path, **{npz_key: data, "classes": np.asarray(columns, dtype=str)}, **extra)
        return
    if suffix not in (".csv", ".parquet"):
        raise ValueError(
            f"{path}: unsupported output type {path.suffix!r}; use .npz, .csv or .parquet"
        )
    pa = _pyarrow(path)
    arrays = {c: pa.array(np.ascontiguousarray(data[:, j])) for j, c in enumerate(columns)}
    for k, v in extra.items():
        arrays[k] = pa.array(np.asarray(v))
    table = pa.table(arrays)
    if suffix == ".csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, path)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, path)
