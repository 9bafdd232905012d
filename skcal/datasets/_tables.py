"""The one reader of logit tables: ``.npz``, ``.npy``, CSV and Parquet files.

:func:`read_logit_table` reads a file's logits, labels and optional split
column with one set of column rules, and :func:`encode_labels` turns its
labels into column indices with one set of label rules. Both are used by
``skcal benchmark`` (through :func:`skcal.datasets.load_logits_file`),
``skcal fit``, ``skcal apply`` and ``skcal report``.

``.npz`` and ``.npy`` files are read with NumPy (``.npy`` memory-mapped, never
unpickled), CSV and Parquet files with pyarrow's multithreaded readers (no
Python loop over rows; a CSV file is read with the standard library's
:mod:`csv` module when pyarrow is not installed, with the same rules).
Errors are ``ValueError`` / ``FileNotFoundError`` with one-line messages
naming the file and, where it applies, the column.

Column rules (CSV and Parquet)
------------------------------
- Column names must be unique. ``ignore_columns`` are dropped first (each
  must exist).
- The label column is ``label_column``, else the one column named ``label``
  or ``y`` (case-insensitive; several is an error).
- A column named ``split`` (case-insensitive) holds ``val`` or ``test`` for
  each row (a calibration and a test split); ``fit`` reads the ``val`` rows,
  ``apply`` and ``report`` the ``test`` rows, the loader both.
- The logit columns are ``logit_columns`` in that order (then any other
  column is an error naming it), else every other column in file order. A
  default logit column that looks like a row index or id (an empty name, as
  pandas' ``to_csv`` writes its index, ``Unnamed: 0``, ``id``, ``index``, ...,
  or the row numbers ``0..n-1`` / ``1..n``) is an error naming it, as is a
  non-numeric or empty logit value.
- One logit column (or a 1-D ``.npz`` / ``.npy`` array) is the binary score
  of the second class: its log-odds ``s`` (logits ``[0, s]``) read as
  logits, its probability ``p`` (``[1 - p, p]``) read as probabilities, the
  rule of the calibrators (:func:`skcal.utils.validation.check_scores`).

Label rules (:func:`encode_labels`)
-----------------------------------
- Integer labels are column indices ``0..K-1``; when the logit columns are
  headed by the indices ``0..K-1`` in another order, the columns are put in
  class order (the column headed ``k`` is class ``k``).
- Text labels that name logit columns are matched to them by name (a label
  naming no column, or naming one only up to case, is an error); text labels
  that name no column are mapped to the columns in sorted order, with a
  warning (the calibrators' rule, ``LabelsInSortedOrderWarning``).
- A named logit column that no label selects (a ``margin`` or ``score``
  column beside the class logits) is an error naming it, unless
  ``logit_columns`` lists the columns explicitly (a class absent from the
  file).
- Boolean labels (a CSV/Parquet label column of ``True`` / ``False``) are
  the class indices 0 (``False``) and 1 (``True``) of two logit columns, or
  are matched by name to two logit columns named ``False`` and ``True``;
  with any other number of logit columns they are an error that says so.
"""

import csv
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np

__all__ = ["read_logit_table", "encode_labels", "write_table", "TABLE_SUFFIXES"]

#: File types read by :func:`read_logit_table`.
TABLE_SUFFIXES = (".npz", ".npy", ".csv", ".parquet")

_LABEL_NAMES = ("label", "y")
_SPLIT_KEYS = ("logits_val", "y_val", "logits_test", "y_test")
#: Header names (lower case) of columns that are row identifiers, not classes:
#: pandas' unnamed index (written as an empty name, read back as "Unnamed: 0").
_ID_NAMES = ("", "index", "id", "idx", "row", "row_id", "sample", "sample_id")
_OBJECT_MSG = "skcal needs numeric arrays and never unpickles"
#: The rows each role reads from a file with a calibration and a test split.
_ROLE_SPLIT = {"fit": "val", "apply": "test", "report": "test", None: None}


# ------------------------------------------------------------------ helpers
def _pyarrow(path):
    try:
        import pyarrow
    except ImportError:
        raise ValueError(
            f"{path}: reading {Path(path).suffix} files needs pyarrow; install it "
            "with pip install 'skcal[io]'"
        ) from None
    return pyarrow


def _has_pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _short(exc):
    return str(exc).strip().splitlines()[0][:300]


def _check_path(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise ValueError(
            f"{path} is a directory, expected a .npz, .npy, .csv or .parquet file"
        )
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ValueError(
            f"{path}: unsupported file type {path.suffix!r}; use "
            f"{', '.join(TABLE_SUFFIXES)}"
        )
    return path, suffix


def _as_logits(arr, what, path, columns=None, suffix=None):
    """A numeric (n, K) scores array; 1-D -> one column (kept: see ``scores``).

    ``columns`` (a CSV/Parquet file's logit column names) and ``suffix``: a
    non-finite value is reported by column and first row (:func:`_where`), as
    an empty cell is; else by count, for the array ``what``.
    """
    arr = np.asarray(arr)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{path}: {what} must be numeric, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(
            f"{path}: {what} must have shape (n_samples, n_classes) or "
            f"(n_samples,), got shape {arr.shape}"
        )
    if arr.shape[1] < 1:
        raise ValueError(f"{path}: {what} must have at least 1 column, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{path}: {what} has no rows")
    finite = np.isfinite(arr)
    n_bad = int(np.size(arr) - np.count_nonzero(finite))
    if n_bad and columns is not None:
        bad = np.flatnonzero(~finite.all(axis=0))
        parts = []
        for j in bad[:5]:
            i = int(np.argmin(finite[:, j]))
            count = int(arr.shape[0] - np.count_nonzero(finite[:, j]))
            parts.append(
                f"logit column {columns[j].strip()!r} has {count} non-finite value(s) "
                f"(NaN or inf), the first at {_where(suffix, i)} ({arr[i, j]})")
        more = f"; and {len(bad) - 5} more column(s)" if len(bad) > 5 else ""
        raise ValueError(f"{path}: {'; '.join(parts)}{more}")
    if n_bad:
        raise ValueError(
            f"{path}: {what} contains {n_bad} non-finite value(s) (NaN or inf)"
        )
    return arr


def _as_label_array(arr, what, path):
    """Labels as a 1-D array of int64 (whole numbers) or str; other types refused."""
    arr = np.asarray(arr)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(
            f"{path}: {what} must have shape (n_samples,), got shape {arr.shape}"
        )
    if arr.dtype.kind in "US":
        return arr.astype(str)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(
                f"{path}: {what} must hold integer class indices or text labels, got "
                "non-integer values"
            )
    elif arr.dtype.kind not in "biu":
        raise ValueError(
            f"{path}: {what} must hold integer class indices 0..K-1 or text labels, "
            f"got dtype {arr.dtype}"
        )
    return arr.astype(np.int64)


def _npz_array(f, key, path):
    """Read one array of an open .npz without pickle, naming the file on error."""
    try:
        return f[key]
    except Exception as exc:  # an object array, a corrupt member, a truncated zip, ...
        if isinstance(exc, ValueError) and "allow_pickle" in str(exc):
            raise ValueError(
                f"{path}: holds object arrays (key {key!r} stores Python objects "
                f"such as strings or None); {_OBJECT_MSG}"
            ) from None
        raise ValueError(f"{path}: cannot read array {key!r} ({exc})") from None


def _load_npy(path, mmap_mode=None):
    """Load one .npy file without pickle, naming the file on error."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror})") from None
    if magic != b"\x93NUMPY":
        raise ValueError(f"{path}: not a valid .npy file; write one with numpy.save")
    try:
        return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except Exception as exc:
        if isinstance(exc, ValueError) and ("allow_pickle" in str(exc) or "object" in str(exc)):
            raise ValueError(
                f"{path}: holds an object array (Python objects such as strings "
                f"or None); {_OBJECT_MSG}"
            ) from None
        raise ValueError(f"{path}: not a readable .npy file ({exc})") from None


# -------------------------------------------------------------- NumPy files
def _read_npz(path, role, label_column, logit_columns, ignore_columns, need_labels):
    """``(logits, y, split, label key, split read)``: the last is ``"val"`` /
    ``"test"`` when the role read one split of a file with _val / _test keys
    (only the role's split need be there; ``split`` is then None), else None."""
    if ignore_columns:
        raise ValueError(
            f"{path}: --ignore-columns applies to .csv and .parquet files; an .npz "
            "file's arrays are chosen by key (--logit-columns, --label-column)"
        )
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a valid .npz (zip) file; write one with numpy.savez")
    if logit_columns is not None and len(logit_columns) != 1:
        raise ValueError(
            f"{path}: for an .npz file --logit-columns names one array key, got "
            f"{len(logit_columns)}"
        )
    try:
        f = np.load(path, allow_pickle=False)
    except Exception as exc:
        raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
    # the role's split (both for None): logits_<split> and y_<split> suffice
    splits = ["val", "test"] if _ROLE_SPLIT[role] is None else [_ROLE_SPLIT[role]]
    need = [f"{k}_{s}" for s in splits for k in ("logits", "y")]
    with f:
        keys = set(f.files)
        if logit_columns is None and "logits" not in keys and set(need) <= keys:
            if label_column is not None:
                # the layout names its label keys: a label name would be ignored
                held = [k for k in _SPLIT_KEYS if k in keys]
                labels = " and ".join(k for k in held if k.startswith("y_"))
                raise ValueError(
                    f"{path}: holds {', '.join(held)}, whose labels "
                    f"are {labels}; --label-column {label_column!r} does not "
                    "apply (to read other arrays, name both: --logit-columns KEY "
                    "--label-column KEY)"
                )
            parts = []
            for s in splits:
                z = _as_logits(_npz_array(f, f"logits_{s}", path), f"logits_{s}", path)
                y = _as_label_array(_npz_array(f, f"y_{s}", path), f"y_{s}", path)
                if len(y) != z.shape[0]:
                    raise ValueError(
                        f"{path}: logits_{s} has {z.shape[0]} rows but y_{s} has "
                        f"{len(y)} labels"
                    )
                parts.append((z, y))
            if len(parts) == 1:
                return *parts[0], None, f"y_{splits[0]}", splits[0]
            (zv, yv), (zt, yt) = parts
            if zv.shape[1] != zt.shape[1]:
                raise ValueError(
                    f"{path}: calibration logits have {zv.shape[1]} classes "
                    f"but test logits have {zt.shape[1]}"
                )
            if yv.dtype.kind != yt.dtype.kind:
                raise ValueError(f"{path}: label arrays mix text and numbers")
            split = np.repeat(["val", "test"], [len(yv), len(yt)])
            return (np.concatenate([zv, zt]), np.concatenate([yv, yt]), split,
                    "y_val, y_test", None)
        if logit_columns is None and "logits" not in keys:
            raise ValueError(
                f"{path}: missing keys; need {', '.join(need)} "
                f"(or logits, y); found {sorted(keys) or 'none'}"
            )
        lkey = "logits" if logit_columns is None else logit_columns[0]
        ykey = label_column or "y"
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
            y = _as_label_array(_npz_array(f, ykey, path), ykey, path)
    return logits, y, None, ykey if y is not None else None, None


def _read_npy(path, label_column, logit_columns, ignore_columns, need_labels):
    if label_column is not None or logit_columns is not None or ignore_columns:
        raise ValueError(
            f"{path}: --label-column, --logit-columns and --ignore-columns apply to "
            ".npz, .csv and .parquet files; an .npy file holds one logits array "
            "(labels in <stem>_labels.npy beside <stem>_logits.npy)"
        )
    logits = _as_logits(_load_npy(path, mmap_mode="r"), "logits", path)
    stem = path.name[: -len(".npy")]
    labels_path = (
        path.with_name(stem[: -len("_logits")] + "_labels.npy")
        if stem.endswith("_logits") else None
    )
    y = None
    if labels_path is not None and labels_path.exists():
        y = _as_label_array(_load_npy(labels_path), "labels", labels_path)
    elif need_labels and labels_path is not None:
        raise FileNotFoundError(f"no labels file {labels_path} beside {path}")
    elif need_labels:
        raise ValueError(
            f"{path}: no labels; name the logits <stem>_logits.npy with the labels "
            "in <stem>_labels.npy beside it"
        )
    return logits, y, None, None if y is None else labels_path.name


# ------------------------------------------------------- CSV and Parquet
def _header(path, suffix):
    """Column names of a CSV (first line) or Parquet (schema) file, and index columns.

    The index columns are those a Parquet file's pandas metadata marks as its
    index (``__index_level_0__``, ...): pandas writes a non-default index as
    such a column and restores it as the index, not as data, so the reader
    skips it as ``--ignore-columns`` would.
    """
    if suffix == ".parquet":
        pa = _pyarrow(path)
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(path)
        except (pa.ArrowException, OSError) as exc:
            raise ValueError(f"{path}: not a readable parquet file ({_short(exc)})") from None
        try:
            meta = json.loads((schema.metadata or {})[b"pandas"])
            index = meta.get("index_columns", [])
        except (KeyError, ValueError, AttributeError):
            index = []
        # a RangeIndex is a dict, not stored
        return [str(n) for n in schema.names], [c for c in index if isinstance(c, str)]
    try:
        # utf-8-sig: a byte-order mark (as spreadsheet programs write) is skipped
        with open(path, newline="", encoding="utf-8-sig") as fh:
            head = next(csv.reader(fh), None)
    except (UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{path}: not a readable csv file ({_short(exc)})") from None
    if not head:
        raise ValueError(f"{path}: empty CSV file")
    seps = [c for c in ";\t|" if len(head) == 1 and c in head[0]]
    if seps:
        raise ValueError(
            f"{path}: the header is one column {head[0][:60]!r}: the file looks "
            f"separated by {seps[0]!r}; skcal reads comma-separated CSV files"
        )
    return head, []


def _pick_columns(names, path, label_column, logit_columns, ignore_columns, need_labels):
    """``(label, split, logits)``: the column names chosen by the rules."""
    header = [n.strip() for n in names]
    dupes = [n for n, count in Counter(header).items() if count > 1]
    if dupes:
        raise ValueError(f"{path}: duplicate column name(s) {dupes[:10]}")
    lower = [h.lower() for h in header]

    def find(name, what):
        if name.strip() in header:
            return names[header.index(name.strip())]
        raise ValueError(f"{path}: {what} {name!r} is not a column; columns: {header[:20]}")

    ignored = {find(c, "--ignore-columns entry") for c in (ignore_columns or ())}
    if label_column is not None:
        label = find(label_column, "--label-column")
        if label in ignored:
            raise ValueError(
                f"{path}: --label-column {label_column!r} is also in --ignore-columns; "
                "drop it from one of them"
            )
    else:
        named = [n for n, h in zip(names, lower) if h in _LABEL_NAMES]
        found = [n for n in named if n not in ignored]
        if len(found) > 1:
            raise ValueError(
                f"{path}: several label columns {found}; choose one with --label-column"
            )
        label = found[0] if found else None
        if label is None and need_labels and named:  # every one skipped
            raise ValueError(
                f"{path}: no label column: --ignore-columns skips {named[0].strip()!r}, "
                "the label column; drop it from --ignore-columns, or name the label "
                "column with --label-column"
            )
        if label is None and need_labels:
            raise ValueError(
                f"{path}: no label column: the header needs exactly one 'label' (or "
                f"'y') column, or pass --label-column; columns: {header[:20]}"
            )
    split = next((n for n, h in zip(names, lower) if h == "split"), None)
    if split in ignored or split == label:
        split = None
    if logit_columns is not None:
        dupes = [n for n, count in Counter(logit_columns).items() if count > 1]
        if dupes:
            raise ValueError(f"{path}: --logit-columns names {dupes[:10]} more than once")
        logits = [find(c, "--logit-columns entry") for c in logit_columns]
        bad = [c for c in logits if c in (label, split) or c in ignored]
        if bad:
            raise ValueError(
                f"{path}: --logit-columns must name logit columns only, got {bad}"
            )
        extra = [n for n in names if n not in logits and n not in (label, split)
                 and n not in ignored]
        if extra:
            raise ValueError(
                f"{path}: column {extra[0].strip()!r} is neither the label column nor "
                f"one of --logit-columns; list it, or skip it with --ignore-columns "
                f"{extra[0].strip() or chr(39) * 2}"
            )
        return label, split, logits
    logits = [n for n in names if n not in (label, split) and n not in ignored]
    ids = [n.strip() for n in logits if n.strip().lower() in _ID_NAMES
           or n.strip().lower().startswith("unnamed:")]
    if ids:
        shown = ", ".join(repr(h) for h in ids)
        raise ValueError(
            f"{path}: column(s) {shown} look like a row index or id, not a class "
            "logit (pandas' DataFrame.to_csv writes its index as an unnamed first "
            "column); drop them (df.to_csv(..., index=False)), or pass "
            f"--ignore-columns {','.join(ids) or chr(39) * 2} (or --logit-columns)"
        )
    if not logits:
        raise ValueError(f"{path}: no logit columns besides the label column")
    return label, split, logits


def _where(suffix, i):
    """Where row ``i`` (0-based) of a table is: its line in a CSV file, else its row."""
    return f"line {i + 2}" if suffix == ".csv" else f"row {i + 1}"


def _arrow_columns(path, suffix, names, logit_cols, other_cols, dtype):
    """The logit columns as one (n, K) float array; each other column as a pair of
    1-D arrays, its values and whether each cell is empty."""
    pa = _pyarrow(path)
    float_type = pa.float32() if dtype == np.float32 else pa.float64()
    wanted = list(logit_cols) + list(other_cols)
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path, columns=wanted)
        else:
            import pyarrow.csv as pacsv

            table = pacsv.read_csv(
                path,
                convert_options=pacsv.ConvertOptions(
                    include_columns=wanted,
                    column_types={c: float_type for c in logit_cols},
                    null_values=[""],  # "nan" is a number, reported as non-finite
                    strings_can_be_null=True,
                ),
            )
    except pa.ArrowInvalid as exc:  # a conversion error names the column by index
        msg = _short(exc)
        m = re.search(r"In CSV column #(\d+): (.*)", msg)
        if m and int(m.group(1)) < len(names):
            msg = f"column {names[int(m.group(1))].strip()!r}: {m.group(2)}"
        raise ValueError(f"{path}: {msg}") from None
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable {suffix[1:]} file ({_short(exc)})") from None
    if table.num_rows == 0:
        raise ValueError(f"{path}: the file has a header but no rows")
    for c in logit_cols:
        col = table.column(c)
        if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
            raise ValueError(
                f"{path}: logit column {c.strip()!r} is not numeric (type {col.type}); "
                "a logit column must hold numbers, or skip it with --ignore-columns"
            )
        if col.null_count:
            raise ValueError(
                f"{path}: logit column {c.strip()!r} has {col.null_count} empty value(s)"
            )
    out = {c: (table.column(c).to_numpy(zero_copy_only=False),
               table.column(c).is_null().to_numpy(zero_copy_only=False))
           for c in other_cols}
    return _to_matrix(table, logit_cols, dtype), out


def _to_matrix(table, columns, dtype):
    """The named columns as a C-ordered (n, len(columns)) array, batch by batch.

    Each record batch is gathered column-wise into a Fortran-ordered block
    (contiguous writes), then copied into the output rows: less CPU than
    writing whole columns into a C-ordered array, for the memory of one batch.
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


def _stdlib_csv_columns(path, names, logit_cols, other_cols, dtype):
    """:func:`_arrow_columns` for a CSV file without pyarrow (the :mod:`csv` module)."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh) if r][1:]  # the header is the first row
    if not rows:
        raise ValueError(f"{path}: the file has a header but no rows")
    for lineno, r in enumerate(rows, start=2):
        if len(r) != len(names):
            raise ValueError(
                f"{path}: line {lineno} has {len(r)} fields, header has {len(names)}"
            )
    index = {n: i for i, n in enumerate(names)}
    logits = np.empty((len(rows), len(logit_cols)), dtype=dtype)
    for j, c in enumerate(logit_cols):
        for k, r in enumerate(rows):
            try:
                logits[k, j] = float(r[index[c]])
            except ValueError:
                raise ValueError(
                    f"{path}: non-numeric value {r[index[c]]!r} in logit column "
                    f"{c.strip()!r} (line {k + 2})"
                ) from None
    out = {}
    for c in other_cols:
        cells = np.array([r[index[c]].strip() for r in rows], dtype=str)
        try:
            out[c] = np.array([float(v) for v in cells]), cells == ""
        except ValueError:
            out[c] = cells, cells == ""
    return logits, out


def _text_cells(values):
    """A label or split column's values as stripped text (numbers as written)."""
    values = np.asarray(values)
    if values.dtype.kind == "f" and np.all(np.isfinite(values)) and np.all(
        values == np.round(values)
    ):
        values = values.astype(np.int64)
    return np.array([str(v).strip() for v in values.tolist()], dtype=str)


_BOOL_TEXT = {"true": 1, "false": 0}  # pyarrow's CSV booleans, any of their cases


def _table_labels(values, column, path, suffix):
    """``(labels, booleans)``: a label column as int64 (numbers; booleans as
    0 / 1) or str (text), mixing refused; ``booleans``: whether it held
    ``True`` / ``False`` (a Parquet or pyarrow bool column, or that text in a
    CSV read without pyarrow)."""
    values = np.asarray(values)
    what = f"label column {column.strip()!r}"
    if values.dtype.kind == "b":
        return values.astype(np.int64), True
    if values.dtype.kind in "fiu":
        return _as_label_array(values, what, path), False
    cells = _text_cells(values)
    if cells.size and all(c in ("True", "TRUE", "true", "False", "FALSE", "false")
                          for c in set(cells.tolist())):
        return np.array([_BOOL_TEXT[c.lower()] for c in cells], dtype=np.int64), True
    numeric = np.array([_is_number(c) for c in cells])
    if numeric.all():
        return _as_label_array(cells.astype(np.float64), what, path), False
    if numeric.any():  # some numbers, some text: almost surely a typo
        i = int(np.flatnonzero(~numeric)[0])
        raise ValueError(
            f"{path}: {what} mixes numbers and text, e.g. "
            f"{str(cells[i])!r} ({_where(suffix, i)}); use integer class indices "
            "0..K-1 or text labels throughout"
        )
    return cells, False


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_named(path, suffix, label_column, logit_columns, ignore_columns,
                need_labels, dtype):
    names, index_columns = _header(path, suffix)
    ignore_columns = list(ignore_columns or ())
    ignore_columns += [c for c in index_columns if c not in ignore_columns]
    label, split, logit_cols = _pick_columns(
        names, path, label_column, logit_columns, ignore_columns, need_labels
    )
    others = [c for c in (label, split) if c is not None]
    if suffix == ".csv" and not _has_pyarrow():
        logits, cols = _stdlib_csv_columns(path, names, logit_cols, others, dtype)
    else:
        logits, cols = _arrow_columns(path, suffix, names, logit_cols, others, dtype)
    for c, (_, empty) in cols.items():
        if empty.any():
            where = _where(suffix, int(np.argmax(empty)))
            if c != label:
                raise ValueError(f"{path}: empty value in column {c.strip()!r} ({where})")
            raise ValueError(
                f"{path}: empty value in label column {c.strip()!r} ({where}): every row "
                "needs a label; where labels are optional (skcal apply) skip the column "
                f"with --ignore-columns {c.strip()}"
            )
    logits = _as_logits(logits, "logits", path, logit_cols, suffix)
    n = logits.shape[0]
    for j, c in enumerate(logit_cols if logit_columns is None and n >= 3 else ()):
        col = logits[:, j]  # the row numbers 0..n-1 or 1..n: an unnamed index
        if np.array_equal(col, np.arange(n)) or np.array_equal(col, np.arange(1, n + 1)):
            raise ValueError(
                f"{path}: column {c.strip()!r} holds the row numbers "
                f"{int(col[0])}..{int(col[-1])}: it looks like a row index, not a "
                f"class logit; drop it or pass --ignore-columns {c.strip()} (or "
                "--logit-columns)"
            )
    y, booleans = (None, False) if label is None else _table_labels(
        cols[label][0], label, path, suffix)
    if booleans and sorted(c.strip() for c in logit_cols) == ["False", "True"]:
        # logit columns named after the booleans: text labels naming them
        y, booleans = np.where(y == 1, "True", "False"), False
    split_values = None
    if split is not None:
        split_values = np.char.lower(_text_cells(cols[split][0]))
        bad = sorted(set(split_values.tolist()) - {"val", "test"})
        if bad:
            raise ValueError(
                f"{path}: column {split.strip()!r} must hold 'val' or 'test', got {bad[:10]}"
            )
    columns = [c.strip() for c in logit_cols]
    return logits, y, split_values, columns, (label.strip() if label else None), booleans


# ------------------------------------------------------------------ public
def read_logit_table(
    path, *, role="fit", label_column=None, logit_columns=None, ignore_columns=None,
    need_labels=True, dtype=np.float64,
):
    """Read logits (and labels) from ``.npz``, ``.npy``, ``.csv`` or ``.parquet``.

    The column rules are those of the module docstring (:mod:`skcal.datasets._tables`).

    Parameters
    ----------
    path : str or path-like
    role : {"fit", "apply", "report"} or None, default="fit"
        For a file with a calibration and a test split (an ``.npz`` with the
        keys ``logits_val``, ``y_val``, ``logits_test``, ``y_test``, or a
        CSV/Parquet file with a ``split`` column), ``"fit"`` reads the
        calibration rows, ``"apply"`` and ``"report"`` the test rows, None
        both (``split`` then tells them apart). An ``.npz`` needs only the
        keys of the split its role reads (``logits_val`` and ``y_val`` for
        ``"fit"``, ``logits_test`` and ``y_test`` for ``"apply"`` and
        ``"report"``, all four for None).
    label_column : str, default=None
        CSV/Parquet: the label column (default: the column named ``label``
        or ``y``, case-insensitive, if any). ``.npz``: the label key
        (default ``y``).
    logit_columns : list of str, default=None
        CSV/Parquet: the logit columns, in class order (default: every column
        but the label and split columns); when given, any other column is an
        error naming it. ``.npz``: one key holding the logits.
    ignore_columns : list of str, default=None
        CSV/Parquet: columns to skip (ids, row indices, metadata); an empty
        name is an unnamed column (pandas' index).
    need_labels : bool, default=True
        Whether a missing label column is an error.
    dtype : numpy dtype, default=float64
        dtype of the logits read from CSV/Parquet.

    Returns
    -------
    table : :class:`~sklearn.utils.Bunch`
        ``logits`` (n, K) (a read-only memory map for ``.npy``; a 1-D or
        one-column binary score ``s`` becomes ``[0, s]``, its reading as
        log-odds), ``scores`` (the values as the file holds them: ``(n,)``
        for a one-column binary score, to be read by the input type with
        :func:`skcal.utils.validation.check_scores`, else ``logits``
        itself), ``y`` (n,) labels or None (int64 or str),
        ``split`` (n,) ``"val"`` / ``"test"`` or None, ``columns`` (names of
        the logit columns, None for NumPy files), ``explicit_columns``
        (whether ``logit_columns`` chose them), ``label_column`` (the label
        column's name, the .npz key(s) of the labels or the .npy labels file's
        name; None without labels), ``path``, ``split_read`` (``"val"`` / ``"test"`` when ``role``
        chose one split's rows, else None), ``n_file_rows`` (the rows of
        the file, both splits; None for an .npz, whose other split is not
        read) and ``label_booleans`` (whether a CSV/Parquet label column held
        ``True`` / ``False``, read as 0 / 1 in ``y``; as the text labels
        ``"False"`` / ``"True"`` instead, and False here, when the logit
        columns are named ``False`` and ``True``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For an unsupported suffix, an unreadable file, a missing or duplicate
        column or key, a column that is neither label nor logit (when
        ``logit_columns`` is given), a column that looks like a row index, a
        non-numeric or empty logit value, non-finite logits, labels that are
        neither whole numbers nor text (or mix them), a bad ``split`` value,
        or a label count that differs from the row count.
    """
    from sklearn.utils import Bunch

    path, suffix = _check_path(path)
    if role not in _ROLE_SPLIT:
        raise ValueError(f"role must be 'fit', 'apply', 'report' or None, got {role!r}")
    columns, npz_split, booleans = None, None, False
    if suffix == ".npz":
        logits, y, split, lname, npz_split = _read_npz(
            path, role, label_column, logit_columns, ignore_columns, need_labels
        )
    elif suffix == ".npy":
        logits, y, split, lname = _read_npy(
            path, label_column, logit_columns, ignore_columns, need_labels
        )
    else:
        logits, y, split, columns, lname, booleans = _read_named(
            path, suffix, label_column, logit_columns, ignore_columns, need_labels,
            dtype,
        )
        if len(columns) == 1:
            columns = None  # one binary score: two classes, one column
    scores = logits
    if logits.shape[1] == 1:  # a binary score s: scores (n,), logits [0, s]
        scores = np.asarray(logits[:, 0])
        logits = np.column_stack([np.zeros_like(scores), scores])
    if y is not None and len(y) != logits.shape[0]:
        raise ValueError(f"{path}: {logits.shape[0]} logit rows but {len(y)} labels")
    want = _ROLE_SPLIT[role]
    n_file_rows, split_read = logits.shape[0], None
    if npz_split is not None:  # an .npz's other split is not read
        n_file_rows, split_read = None, npz_split
    if split is not None and want is not None:
        split_read = want
        rows = split == want
        if not rows.any():
            raise ValueError(f"{path}: no row has split '{want}'")
        logits, scores, split = logits[rows], scores[rows], None
        y = None if y is None else y[rows]
    return Bunch(logits=logits, scores=scores, y=y, split=split, columns=columns,
                 explicit_columns=logit_columns is not None, label_column=lname,
                 path=path, split_read=split_read, n_file_rows=n_file_rows,
                 label_booleans=booleans)


def _check_named_columns(path, cols, classes, seen):
    """:func:`skcal.utils._labels.check_named_columns_have_labels` in the CLI's words."""
    from ..utils._labels import check_named_columns_have_labels

    try:
        check_named_columns_have_labels(
            list(cols), classes, seen,
            skip="skip it with --ignore-columns (e.g. --ignore-columns {column})",
            declare="list the logit columns with --logit-columns",
        )
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def check_boolean_labels(table):
    """Refuse boolean labels (``table.label_booleans``) unless there are two
    logit columns, whose classes 0 and 1 they are (one-line ``ValueError``)."""
    K, cols = table.logits.shape[1], table.columns
    if table.get("label_booleans") and K != 2:
        named = f" {cols[:10]}" if cols is not None else ""
        raise ValueError(
            f"{table.path}: label column {table.label_column!r} holds booleans "
            "(True/False), which are the classes 0 and 1 of two logit columns, "
            f"but there are {K} logit columns; use integer labels 0..{K - 1} (the "
            "column of each row's class) or text labels naming the logit "
            f"columns{named}")


def encode_labels(table):
    """Labels as column indices, and the class of each column (the label rules).

    Parameters
    ----------
    table : Bunch
        From :func:`read_logit_table`, with labels. When the logit columns
        are headed by the class indices in another order, ``table.logits``,
        ``table.scores`` and ``table.columns`` are put in class order, in place.

    Returns
    -------
    y : ndarray of shape (n_samples,), int64
        The column of each row's class.
    classes : ndarray of shape (n_classes,)
        The class of each column: ``0..K-1`` for integer labels, the column
        names or the sorted text labels for text labels.

    Raises
    ------
    ValueError
        For boolean labels with other than two logit columns (unless named
        ``False`` and ``True``), integer labels outside ``0..K-1``, text labels that name some
        columns but not others, or name them only up to case, text labels
        that name no column and are not exactly one per column, or a named
        logit column that no label selects (unless ``logit_columns`` listed
        the columns).

    Warns
    -----
    skcal.exceptions.LabelsInSortedOrderWarning
        When text labels name none of the logit columns (named or not) and
        are mapped to them in sorted order.
    """
    from ..utils._labels import check_near_match, warn_labels_in_sorted_order

    y, path, K = table.y, table.path, table.logits.shape[1]
    cols = table.columns
    check_boolean_labels(table)
    if y.dtype.kind in "iu":
        bad = (y < 0) | (y >= K)
        if bad.any():
            raise ValueError(
                f"{path}: labels must lie in 0..{K - 1}: they are class indices "
                f"0..{K - 1}, one per logit column; got {y[bad][0]}"
            )
        index = [str(j) for j in range(K)]
        if cols is not None and sorted(cols) == sorted(index) and cols != index:
            # columns headed by the class indices in another order: class k is the
            # column headed "k", so put the columns in class order
            order = [cols.index(k) for k in index]
            table.logits = table.scores = table.logits[:, order]
            table.columns = cols = index
        if cols is not None and not table.explicit_columns and len(np.unique(y)) > 1:
            seen = np.bincount(y, minlength=K) > 0
            _check_named_columns(path, cols, np.arange(K), seen)
        return y.astype(np.int64), np.arange(K)
    present = np.unique(y)
    if cols is not None and np.isin(present, cols).any():
        unknown = present[~np.isin(present, cols)]
        if len(unknown):
            raise ValueError(
                f"{path}: labels {unknown[:10].tolist()} name none of the logit "
                f"columns {cols[:10]}; text labels are matched to the logit columns "
                "by their names"
            )
        if not table.explicit_columns:
            _check_named_columns(path, cols, np.asarray(cols), np.isin(cols, present))
        lookup = {c: j for j, c in enumerate(cols)}
        return np.array([lookup[v] for v in y], dtype=np.int64), np.asarray(cols, dtype=str)
    if cols is not None:
        try:
            check_near_match(present.tolist(), list(cols), remedy="use integer labels 0..K-1")
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    if len(present) != K:
        raise ValueError(
            f"{path}: the labels are {len(present)} distinct text labels "
            f"{present[:10].tolist()} but there are {K} logit columns; text labels "
            "name the logit columns, or are matched to them in sorted order, one per "
            "column"
        )
    if K >= 2:
        warn_labels_in_sorted_order(
            present, cols, where=f"{path}: ", remedy=(
                "name the columns after the labels to match them by name"
                if cols is not None else
                "use integer labels 0..K-1 (the column indices) or a CSV / Parquet "
                "file whose logit columns are named after the labels"
            ),
        )
    return np.searchsorted(present, y).astype(np.int64), present


def write_table(path, columns, data, *, npz_key="proba", extra=None):
    """Write a float matrix with named columns to ``.npz``, ``.csv`` or ``.parquet``.

    Parameters
    ----------
    path : path-like
    columns : array-like of shape (n_columns,)
        The columns of ``data``: class labels of any type. CSV / Parquet
        columns are named by their text (``str``); an ``.npz`` file stores
        them under ``"classes"`` in their own dtype (an object array of mixed
        types as text).
    data : ndarray of shape (n, len(columns))
    npz_key : str, default="proba"
        Key of ``data`` in an ``.npz`` file.
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
        classes = np.asarray(columns)
        if classes.dtype == object:  # no pickle: as NumPy converts them, else text
            classes = np.asarray(classes.tolist())
            if classes.dtype == object:
                classes = classes.astype(str)
        # through a file object: np.savez appends ".npz" to a name whose suffix
        # is ".NPZ" (its test is case-sensitive)
        with open(path, "wb") as fh:
            np.savez(fh, **{npz_key: data, "classes": classes}, **extra)
        return
    if suffix not in (".csv", ".parquet"):
        raise ValueError(
            f"{path}: unsupported output type {path.suffix!r}; use .npz, .csv or .parquet"
        )
    pa = _pyarrow(path)
    arrays = {str(c): pa.array(np.ascontiguousarray(data[:, j]))
              for j, c in enumerate(columns)}
    arrays.update((k, pa.array(np.asarray(v))) for k, v in extra.items())
    table = pa.table(arrays)
    if suffix == ".csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, path)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, path)
