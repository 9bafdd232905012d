"""Loaders for the bundled real logit sets and for a user's own logit files."""

import csv
import json
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = [
    "list_datasets",
    "load_logits",
    "load_cifar10_resnet20",
    "load_agnews_gpt2",
    "load_sst2_gpt2",
    "load_logits_file",
]

#: Bundled sets, in the order ``skcal benchmark`` runs them.
_BUNDLED = (
    "cifar10_resnet20_chenyaofo",
    "agnews_gpt2_zeroshot",
    "sst2_gpt2_zeroshot",
)

_SPLIT_KEYS = ("logits_val", "y_val", "logits_test", "y_test")


def _data_dir():
    return resources.files("skcal.datasets") / "data"


def list_datasets():
    """Names of the real logit sets bundled with skcal.

    Returns
    -------
    names : list of str
        Names accepted by :func:`load_logits`, in a fixed order.

    Examples
    --------
    >>> from skcal.datasets import list_datasets
    >>> list_datasets()
    ['cifar10_resnet20_chenyaofo', 'agnews_gpt2_zeroshot', 'sst2_gpt2_zeroshot']
    """
    return list(_BUNDLED)


def load_logits(name):
    """Load one bundled real logit set.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes

        logits_val : ndarray of shape (n_val, n_classes), dtype float32
            Logits (or log-probabilities) of the calibration split.
        y_val : ndarray of shape (n_val,), dtype int64
            True labels of the calibration split, in ``0 .. n_classes - 1``.
        logits_test : ndarray of shape (n_test, n_classes), dtype float32
            Logits of the test split.
        y_test : ndarray of shape (n_test,), dtype int64
            True labels of the test split.
        n_classes : int
            Number of classes ``K``.
        name : str
            The set's name.
        info : dict
            Provenance stored in the file (source, kind of scores, split).
        DESCR : str
            Description with the source, the model and the licence.

    Raises
    ------
    ValueError
        If ``name`` is not a bundled set.

    Notes
    -----
    The arrays are returned exactly as stored (no copy into another dtype).
    Softmax is invariant to adding a constant per row, so log-probabilities
    can be used wherever logits are expected.

    Examples
    --------
    >>> from skcal.datasets import load_logits
    >>> data = load_logits("agnews_gpt2_zeroshot")
    >>> data.logits_val.shape, data.n_classes
    ((3800, 4), 4)
    """
    if name not in _BUNDLED:
        raise ValueError(
            f"unknown bundled data set {name!r}; available: {', '.join(_BUNDLED)}"
        )
    from sklearn.utils import Bunch

    base = _data_dir()
    with resources.as_file(base / f"{name}.npz") as path:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in _SPLIT_KEYS}
            info = json.loads(str(f["info"])) if "info" in f.files else {}
    descr = (base / f"{name}.md").read_text(encoding="utf-8")
    return Bunch(
        **arrays,
        n_classes=int(arrays["logits_val"].shape[1]),
        name=name,
        info=info,
        DESCR=descr,
    )


def load_cifar10_resnet20():
    """Load the bundled CIFAR-10 / ResNet-20 logits (10 classes, 5000 + 5000 rows).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        See :func:`load_logits` for the attributes.

    Examples
    --------
    >>> from skcal.datasets import load_cifar10_resnet20
    >>> load_cifar10_resnet20().logits_test.shape
    (5000, 10)
    """
    return load_logits("cifar10_resnet20_chenyaofo")


def load_agnews_gpt2():
    """Load the bundled AG News / GPT-2 zero-shot log-probabilities (4 classes).

    A set on which temperature scaling alone leaves a large calibration error,
    because the model has a strong class bias.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        See :func:`load_logits` for the attributes.

    Examples
    --------
    >>> from skcal.datasets import load_agnews_gpt2
    >>> load_agnews_gpt2().n_classes
    4
    """
    return load_logits("agnews_gpt2_zeroshot")


def load_sst2_gpt2():
    """Load the bundled SST-2 / GPT-2 zero-shot log-probabilities (binary).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        See :func:`load_logits` for the attributes; ``logits_*`` have two
        columns.

    Examples
    --------
    >>> from skcal.datasets import load_sst2_gpt2
    >>> load_sst2_gpt2().logits_val.shape
    (910, 2)
    """
    return load_logits("sst2_gpt2_zeroshot")


# --------------------------------------------------------------------------
# User files
# --------------------------------------------------------------------------


def _as_logits(arr, what, path):
    arr = np.asarray(arr)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{path}: {what} must be numeric, got dtype {arr.dtype}")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]  # one column: the binary log-odds, as the calibrators read it
    if arr.ndim == 1:
        # Binary log-odds of class 1 -> two columns [0, s]; same softmax.
        arr = np.column_stack([np.zeros_like(arr), arr])
    if arr.ndim != 2:
        raise ValueError(
            f"{path}: {what} must have shape (n_samples, n_classes) or "
            f"(n_samples,), got shape {arr.shape}"
        )
    if arr.shape[1] < 2:
        raise ValueError(
            f"{path}: {what} must have at least 1 column, got shape {arr.shape}"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{path}: {what} has no rows")
    n_bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
    if n_bad:
        raise ValueError(
            f"{path}: {what} contains {n_bad} non-finite value(s) (NaN or inf)"
        )
    return arr


def _as_labels(arr, what, path, n_classes):
    arr = np.asarray(arr)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(
            f"{path}: {what} must have shape (n_samples,), got shape {arr.shape}"
        )
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(
                f"{path}: {what} must hold integer class indices, got "
                "non-integer values"
            )
    elif arr.dtype.kind not in "iub":
        raise ValueError(
            f"{path}: {what} must hold integer class indices 0..K-1, got "
            f"dtype {arr.dtype}"
        )
    labels = arr.astype(np.int64)
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(
            f"{path}: {what} must lie in 0..{n_classes - 1} (one per logit "
            f"column), got values in {labels.min()}..{labels.max()}"
        )
    return labels


def _text_labels(arrays, n_classes, path):
    """Encode text label arrays (the splits of one file) with one shared class list.

    Text labels are mapped to the logit columns in sorted order (the rule of
    the calibrators' ``classes_``), so there must be exactly ``n_classes``
    distinct labels over all splits. Returns ``(encoded arrays, classes)``;
    numeric arrays are returned unchanged with ``classes`` None.
    """
    arrays = [np.asarray(a) for a in arrays]
    if not any(a.dtype.kind in "US" for a in arrays):
        return arrays, None
    flat = [a.reshape(-1) if a.ndim == 2 and a.shape[1] == 1 else a for a in arrays]
    if any(a.dtype.kind not in "US" for a in flat):
        raise ValueError(f"{path}: label arrays mix text and numbers")
    classes = np.unique(np.concatenate([a.astype(str) for a in flat]))
    if len(classes) != n_classes:
        raise ValueError(
            f"{path}: the labels are {len(classes)} distinct text labels "
            f"{classes[:10].tolist()} but there are {n_classes} logit columns; text "
            "labels are matched to the logit columns in sorted order, so there must "
            "be exactly one label per column"
        )
    return [np.searchsorted(classes, a.astype(str)) for a in flat], classes


def _check_pair(logits, y, split, path):
    logits = _as_logits(logits, f"logits_{split}", path)
    y = _as_labels(y, f"y_{split}", path, logits.shape[1])
    if logits.shape[0] != y.shape[0]:
        raise ValueError(
            f"{path}: logits_{split} has {logits.shape[0]} rows but y_{split} "
            f"has {y.shape[0]} labels"
        )
    return logits, y


_OBJECT_MSG = "skcal needs numeric arrays and never unpickles"


def _npz_array(f, key, path):
    """Read one array of an open .npz without pickle, naming the file on error."""
    try:
        return f[key]
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise ValueError(
                f"{path}: holds object arrays (key {key!r} stores Python objects "
                f"such as strings or None); {_OBJECT_MSG}"
            ) from None
        raise ValueError(f"{path}: cannot read array {key!r} ({exc})") from None
    except Exception as exc:  # corrupt member, truncated zip, ...
        raise ValueError(f"{path}: cannot read array {key!r} ({exc})") from None


def _load_npy(path):
    """Load one .npy file without pickle, naming the file on error."""
    with open(path, "rb") as fh:
        magic = fh.read(6)
    if magic != b"\x93NUMPY":
        raise ValueError(f"{path}: not a valid .npy file; write one with numpy.save")
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise ValueError(
                f"{path}: holds an object array (Python objects such as strings "
                f"or None); {_OBJECT_MSG}"
            ) from None
        raise ValueError(f"{path}: not a readable .npy file ({exc})") from None
    except Exception as exc:
        raise ValueError(f"{path}: not a readable .npy file ({exc})") from None


def _split(logits, y, random_state, test_size, path, names=None):
    """Split one set; ``names``: the class name of each logit column (CSV header).

    The split is stratified by class *name*, so that reordering the logit
    columns of a CSV (which renumbers the classes) selects the same rows.
    """
    logits = _as_logits(logits, "logits", path)
    y = _as_labels(y, "labels", path, logits.shape[1])
    if logits.shape[0] != y.shape[0]:
        raise ValueError(
            f"{path}: logits has {logits.shape[0]} rows but there are "
            f"{y.shape[0]} labels"
        )
    if logits.shape[0] < 4:
        raise ValueError(f"{path}: need at least 4 rows to split, got {len(y)}")
    from sklearn.model_selection import train_test_split

    counts = np.bincount(y)
    stratify = None
    if counts[counts > 0].min() >= 2:
        stratify = y if names is None else np.asarray(names, dtype=str)[y]
    lv, lt, yv, yt = train_test_split(
        logits, y, test_size=test_size, random_state=random_state, stratify=stratify
    )
    return lv, yv, lt, yt


def _natural(text):
    """Sort key: integers by value, other text after them."""
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def _csv_labels(cells, column, n_classes, path, names=None):
    """Labels of a CSV's label column: numbers as column indices (matched by
    header when the logit columns are headed ``0..K-1`` in another order), or
    text labels mapped to the logit columns by their header names (when every
    label is one), else to ``0..K-1`` in sorted order. Returns
    ``(y, classes)``, where ``classes`` is None for numeric labels."""
    numeric = []
    for cell in cells:
        try:
            numeric.append(float(cell))
        except ValueError:
            numeric.append(None)
    bad = [i for i, v in enumerate(numeric) if v is None]
    if not bad:
        y = np.array(numeric)
        index = [str(j) for j in range(n_classes)]
        if names is not None and sorted(names, key=_natural) == index and list(names) != index:
            # logit columns headed by the class indices, in another order:
            # class v is the column headed "v", not the v-th column
            whole = np.all(y == np.round(y)) and y.min() >= 0 and y.max() < n_classes
            if whole:
                column_of = np.array([list(names).index(str(j)) for j in range(n_classes)])
                y = column_of[y.astype(np.int64)].astype(np.float64)
        return y, None
    empty = [i for i, c in enumerate(cells) if not c]
    if empty:
        raise ValueError(
            f"{path}: empty value in label column {column!r} (line {empty[0] + 2})"
        )
    if len(bad) < len(cells):  # some numbers, some text: almost surely a typo
        raise ValueError(
            f"{path}: label column {column!r} mixes numbers and text, e.g. "
            f"{cells[bad[0]]!r} (line {bad[0] + 2}); use integer class indices "
            "0..K-1 or text labels throughout"
        )
    labels = np.array(cells, dtype=str)
    present = np.unique(labels)
    if names is not None and np.isin(present, names).any():
        unknown = present[~np.isin(present, names)]
        if len(unknown):
            raise ValueError(
                f"{path}: label column {column!r} holds labels "
                f"{unknown[:10].tolist()} that name none of the logit columns "
                f"{list(names)[:10]}; text labels are matched to the logit "
                "columns by their header names"
            )
        classes = np.asarray(names, dtype=str)
        lookup = {name: j for j, name in enumerate(classes)}
        return np.array([lookup[c] for c in labels], dtype=np.float64), classes
    if names is not None:
        from ..utils._labels import check_near_match

        try:
            check_near_match(present.tolist(), [str(nm) for nm in names],
                             remedy="use integer labels 0..K-1")
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    classes, y = np.unique(labels, return_inverse=True)
    if len(classes) != n_classes:
        raise ValueError(
            f"{path}: label column {column!r} holds {len(classes)} distinct text "
            f"labels {classes[:10].tolist()} but there are {n_classes} logit "
            "columns; text labels are matched to the logit columns in sorted "
            "order, so there must be exactly one label per column"
        )
    return y.astype(np.float64), classes


#: Header names (lower case) of columns that are row identifiers, not classes:
#: pandas' unnamed index (written as an empty name, read back as "Unnamed: 0").
_ID_NAMES = ("", "index", "id", "idx", "row", "row_id", "sample", "sample_id")


def _pick_columns(header, path, label_column, logit_columns, ignore_columns):
    """Indices of the label, split and logit columns of a CSV header."""
    lower = [h.lower() for h in header]

    def find(name, what):
        if name in header:
            return header.index(name)
        raise ValueError(
            f"{path}: {what} {name!r} is not a column of the header {header[:20]}"
        )

    ignored = {find(c, "--ignore-columns entry") for c in (ignore_columns or ())}
    if label_column is not None:
        label_col = find(label_column, "--label-column")
    else:
        label_cols = [i for i, h in enumerate(lower) if h in ("label", "y")]
        if len(label_cols) != 1:
            raise ValueError(
                f"{path}: CSV header needs exactly one 'label' (or 'y') column, "
                f"got header {header}; name it with --label-column"
            )
        label_col = label_cols[0]
    split_col = lower.index("split") if "split" in lower else None
    if split_col in ignored:
        split_col = None
    if logit_columns is not None:
        dupes = sorted({c for c in logit_columns if list(logit_columns).count(c) > 1})
        if dupes:
            raise ValueError(f"{path}: --logit-columns names {dupes[:10]} more than once")
        logit_cols = [find(c, "--logit-columns entry") for c in logit_columns]
        bad = [header[i] for i in logit_cols if i in (label_col, split_col)]
        if bad or not logit_cols:
            raise ValueError(
                f"{path}: --logit-columns must name logit columns only, got {bad}"
            )
        return label_col, split_col, logit_cols
    logit_cols = [
        i for i in range(len(header)) if i not in (label_col, split_col) and i not in ignored
    ]
    ids = [header[i] for i in logit_cols if lower[i] in _ID_NAMES
           or lower[i].startswith("unnamed:")]
    if ids:
        shown = ", ".join(repr(h) for h in ids)
        raise ValueError(
            f"{path}: column(s) {shown} look like a row index or id, not a class "
            "logit (pandas' DataFrame.to_csv writes its index as an unnamed first "
            "column); drop them (df.to_csv(..., index=False)), or pass "
            f"--ignore-columns {','.join(ids) or chr(39) * 2} (or --logit-columns)"
        )
    return label_col, split_col, logit_cols


def _check_not_row_index(logits, header, logit_cols, path):
    """Reject a logit column holding the row numbers 0..n-1 or 1..n (an unnamed index)."""
    n = logits.shape[0]
    if n < 3:
        return
    for j, i in enumerate(logit_cols):
        col = logits[:, j]
        if np.array_equal(col, np.arange(n)) or np.array_equal(col, np.arange(1, n + 1)):
            raise ValueError(
                f"{path}: column {header[i]!r} holds the row numbers "
                f"{int(col[0])}..{int(col[-1])}: it looks like a row index, not a "
                f"class logit; drop it or pass --ignore-columns {header[i]} (or "
                "--logit-columns)"
            )


def _read_csv(path, label_column=None, logit_columns=None, ignore_columns=None):
    # utf-8-sig: a byte-order mark (as spreadsheet programs write) is skipped
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path}: empty CSV file") from None
        rows = [r for r in reader if r]
    lower = [h.lower() for h in header]
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise ValueError(f"{path}: duplicate column name(s) {dupes[:10]} in the header")
    label_col, split_col, logit_cols = _pick_columns(
        header, path, label_column, logit_columns, ignore_columns
    )
    if not rows:
        raise ValueError(f"{path}: CSV file has a header but no rows")
    for lineno, r in enumerate(rows, start=2):
        if len(r) != len(header):
            raise ValueError(
                f"{path}: line {lineno} has {len(r)} fields, header has "
                f"{len(header)}"
            )
    logits = np.empty((len(rows), len(logit_cols)), dtype=np.float64)
    for lineno, r in enumerate(rows, start=2):
        for j, i in enumerate(logit_cols):
            try:
                logits[lineno - 2, j] = float(r[i])
            except ValueError:
                raise ValueError(
                    f"{path}: non-numeric value {r[i]!r} in logit column "
                    f"{header[i]!r} (line {lineno})"
                ) from None
    if logit_columns is None:
        _check_not_row_index(logits, header, logit_cols, path)
    n_classes = 2 if len(logit_cols) == 1 else len(logit_cols)
    names = None if len(logit_cols) == 1 else [header[i] for i in logit_cols]
    y, classes = _csv_labels(
        [r[label_col].strip() for r in rows], header[label_col], n_classes,
        path, names=names,
    )
    split = None
    if split_col is not None:
        split = np.array([r[split_col].strip().lower() for r in rows])
        bad = sorted(set(split.tolist()) - {"val", "test"})
        if bad:
            raise ValueError(
                f"{path}: column 'split' must hold 'val' or 'test', got {bad}"
            )
    return logits, y, split, classes, names


def _read_parquet(path, label_column=None, logit_columns=None, ignore_columns=None):
    """:func:`_read_csv` for a Parquet file: the same columns rules and labels,
    read with pyarrow as ``skcal fit/apply/report`` read it."""
    from ._tables import _pyarrow, _short

    pa = _pyarrow(path)
    import pyarrow.parquet as pq

    try:
        raw = pq.read_schema(path).names
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable parquet file ({_short(exc)})") from None
    header = [str(h).strip() for h in raw]
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise ValueError(f"{path}: duplicate column name(s) {dupes[:10]}")
    label_col, split_col, logit_cols = _pick_columns(
        header, path, label_column, logit_columns, ignore_columns
    )
    used = [label_col, *logit_cols] + ([split_col] if split_col is not None else [])
    try:
        table = pq.read_table(path, columns=[raw[i] for i in sorted(set(used))])
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable parquet file ({_short(exc)})") from None
    if table.num_rows == 0:
        raise ValueError(f"{path}: the file has columns but no rows")

    def column(i, what):
        col = table.column(raw[i])
        if col.null_count:
            raise ValueError(
                f"{path}: {what} {header[i]!r} has {col.null_count} empty value(s)"
            )
        return col

    logits = np.empty((table.num_rows, len(logit_cols)), dtype=np.float64)
    for j, i in enumerate(logit_cols):
        col = column(i, "logit column")
        if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
            raise ValueError(
                f"{path}: logit column {header[i]!r} is not numeric (type {col.type})"
            )
        logits[:, j] = col.to_numpy()
    if logit_columns is None:
        _check_not_row_index(logits, header, logit_cols, path)
    n_classes = 2 if len(logit_cols) == 1 else len(logit_cols)
    names = None if len(logit_cols) == 1 else [header[i] for i in logit_cols]
    labels = column(label_col, "label column").to_numpy(zero_copy_only=False)
    if labels.dtype.kind == "f" and np.all(labels == np.round(labels)):
        labels = labels.astype(np.int64)
    y, classes = _csv_labels(
        [str(v).strip() for v in labels.tolist()], header[label_col], n_classes,
        path, names=names,
    )
    split = None
    if split_col is not None:
        cells = column(split_col, "column").to_numpy(zero_copy_only=False)
        split = np.array([str(v).strip().lower() for v in cells.tolist()])
        bad = sorted(set(split.tolist()) - {"val", "test"})
        if bad:
            raise ValueError(
                f"{path}: column 'split' must hold 'val' or 'test', got {bad}"
            )
    return logits, y, split, classes, names


def load_logits_file(
    path, *, random_state=0, test_size=0.5, label_column=None, logit_columns=None,
    ignore_columns=None,
):
    """Load a user's logits and labels from a file.

    Four formats are accepted; the format is chosen by the file suffix.

    ``.npz``
        Either the four keys ``logits_val``, ``y_val``, ``logits_test``,
        ``y_test`` (a calibration split and a test split, as in the bundled
        sets), or the two keys ``logits`` and ``y`` (one set, split here).
        Other keys are ignored. Loaded without pickle.
    ``.npy`` (a pair of files)
        ``path`` is the logits file and must be named ``<stem>_logits.npy``
        (shape ``(n_samples, n_classes)``); the labels are read from
        ``<stem>_labels.npy`` in the same folder (shape ``(n_samples,)``).
        One set, split here.
    ``.csv``
        A header row, then one row per sample. One column named ``label``
        (or ``y``) holds the class: either integer indices ``0 .. K-1``
        (the logit column of each class; when the logit columns are headed
        by the indices ``0 .. K-1`` in another order, class ``v`` is the column
        headed ``v``), or text labels. Text labels that
        are header names of logit columns are matched to those columns (a
        label naming no column is then an error); otherwise they are mapped
        to the logit columns in sorted order (the same rule as the
        calibrators' ``classes_``: the first label in sorted order is the
        first logit column, and so on), so there must be exactly ``K``
        distinct text labels; an optional column ``split``
        holds ``val`` or ``test`` (without it, the set is split here); every
        other column is a logit, in class order (column ``k`` of the logits
        is the first, second, ... remaining column). A single logit column is
        the binary log-odds of the second class. A column that looks like a
        row index or id (an empty header name, as pandas' ``to_csv`` writes
        its index, ``Unnamed: 0``, ``id``, ``index``, ..., or a column holding
        the row numbers ``0..n-1``) is an error naming it: drop it, or select
        the columns with ``label_column``, ``logit_columns`` or
        ``ignore_columns``. A single set is stratified by class name, so the
        order of the logit columns does not change which rows are selected.
    ``.parquet``
        The same columns and rules as ``.csv`` (read with pyarrow, as
        ``skcal fit`` reads it; needs the ``io`` extra); logit columns must
        be numeric.

    Logits may also be log-probabilities. A 1-D logits array is read as the
    log-odds of class 1 of a binary problem and returned as two columns
    ``[0, s]``, which give the same softmax probabilities.

    Parameters
    ----------
    path : str or path-like
        The file to read.
    random_state : int, RandomState instance or None, default=0
        Seed of the split for files holding a single set (see above);
        unused for files that are already split.
    test_size : float, default=0.5
        Fraction of a single set that goes to the test split.
    label_column : str, default=None
        CSV/Parquet only: the header name of the label column (default: the column
        named ``label`` or ``y``).
    logit_columns : list of str, default=None
        CSV/Parquet only: the header names of the logit columns, in class order
        (default: every column but the label and ``split`` columns).
    ignore_columns : list of str, default=None
        CSV/Parquet only: columns to skip (ids, row indices, metadata).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Same attributes as :func:`load_logits` (``logits_val``, ``y_val``,
        ``logits_test``, ``y_test``, ``n_classes``, ``name``, ``info``,
        ``DESCR``); ``name`` is the file stem. Logits keep their dtype if
        floating, labels are int64. For a CSV file with text labels,
        ``info["classes"]`` lists the label of each logit column.

    Raises
    ------
    FileNotFoundError
        If ``path`` (or the labels file of an ``.npy`` pair) does not exist.
    ValueError
        If the suffix is not one of the above, the file is not a valid
        ``.npz`` / ``.npy`` file or holds object arrays (never unpickled), a
        key or column is missing, a CSV cell is not a number (naming the
        line and column), text labels do not number exactly one per column,
        arrays have the wrong number of dimensions, logits contain NaN or
        inf, labels are not integers in ``0 .. n_classes - 1``, the number of
        labels differs from the number of logit rows, or the two splits have
        a different number of classes.

    Notes
    -----
    A single set is split with :func:`sklearn.model_selection.train_test_split`,
    stratified by label when every class has at least two samples.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from skcal.datasets import load_logits_file
    >>> rng = np.random.default_rng(0)
    >>> d = tempfile.mkdtemp()
    >>> f = os.path.join(d, "mine.npz")
    >>> np.savez(f, logits=rng.normal(size=(100, 3)), y=rng.integers(0, 3, 100))
    >>> data = load_logits_file(f)
    >>> data.logits_val.shape, data.logits_test.shape
    ((50, 3), (50, 3))
    """
    from sklearn.utils import Bunch

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise ValueError(
            f"{path} is a directory, expected a .npz, .npy, .csv or .parquet file"
        )
    suffix = path.suffix.lower()
    descr = f"User data loaded from {path}"
    info = {"source": str(path)}
    text = None
    if suffix == ".npz":
        if not zipfile.is_zipfile(path):
            raise ValueError(
                f"{path}: not a valid .npz (zip) file; write one with numpy.savez"
            )
        try:
            f = np.load(path, allow_pickle=False)
        except Exception as exc:
            raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
        with f:
            keys = set(f.files)
            if set(_SPLIT_KEYS) <= keys:
                a = {k: _npz_array(f, k, path) for k in _SPLIT_KEYS}
                k_val = _as_logits(a["logits_val"], "logits_val", path).shape[1]
                (a["y_val"], a["y_test"]), text = _text_labels(
                    [a["y_val"], a["y_test"]], k_val, path
                )
                lv, yv = _check_pair(a["logits_val"], a["y_val"], "val", path)
                lt, yt = _check_pair(a["logits_test"], a["y_test"], "test", path)
            elif {"logits", "y"} <= keys:
                logits = _npz_array(f, "logits", path)
                k = _as_logits(logits, "logits", path).shape[1]
                (y,), text = _text_labels([_npz_array(f, "y", path)], k, path)
                lv, yv, lt, yt = _split(logits, y, random_state, test_size, path)
                descr += f", split with random_state={random_state}"
            else:
                raise ValueError(
                    f"{path}: missing keys; need logits_val, y_val, "
                    f"logits_test, y_test (or logits, y); found "
                    f"{sorted(keys) or 'none'}"
                )
    elif suffix == ".npy":
        stem = path.name[: -len(".npy")]
        if not stem.endswith("_logits"):
            raise ValueError(
                f"{path}: an .npy logits file must be named <stem>_logits.npy, "
                "with the labels in <stem>_labels.npy beside it"
            )
        labels_path = path.with_name(stem[: -len("_logits")] + "_labels.npy")
        if not labels_path.exists():
            raise FileNotFoundError(f"no labels file {labels_path} beside {path}")
        logits = _load_npy(path)
        k = _as_logits(logits, "logits", path).shape[1]
        (y,), text = _text_labels([_load_npy(labels_path)], k, path)
        lv, yv, lt, yt = _split(logits, y, random_state, test_size, path)
        descr += f" and {labels_path}, split with random_state={random_state}"
    elif suffix in (".csv", ".parquet"):
        reader = _read_csv if suffix == ".csv" else _read_parquet
        logits, y, split, classes, names = reader(
            path, label_column, logit_columns, ignore_columns
        )
        if classes is not None:
            info["classes"] = classes.tolist()
            descr += (
                f"; text labels {', '.join(classes[:10].tolist())} mapped to "
                "columns in sorted order"
            )
        if split is None:
            key = classes.tolist() if classes is not None else names
            lv, yv, lt, yt = _split(logits, y, random_state, test_size, path, key)
            descr += f", split with random_state={random_state}"
        else:
            lv, yv = _check_pair(logits[split == "val"], y[split == "val"], "val", path)
            lt, yt = _check_pair(
                logits[split == "test"], y[split == "test"], "test", path
            )
    else:
        raise ValueError(
            f"{path}: unsupported file type {path.suffix!r}; use .npz, .npy, .csv "
            "or .parquet"
        )
    if text is not None:
        info["classes"] = text.tolist()
        descr += (
            f"; text labels {', '.join(text[:10].tolist())} mapped to columns in "
            "sorted order"
        )
    if lv.shape[1] != lt.shape[1]:
        raise ValueError(
            f"{path}: calibration logits have {lv.shape[1]} classes but test "
            f"logits have {lt.shape[1]}"
        )
    name = path.stem
    if suffix == ".npy":
        name = name[: -len("_logits")] or name
    return Bunch(
        logits_val=lv,
        y_val=yv,
        logits_test=lt,
        y_test=yt,
        n_classes=int(lv.shape[1]),
        name=name,
        info=info,
        DESCR=descr + ".",
    )
