"""Loaders for the bundled real logit sets and for a user's own logit files."""

import json
from importlib import resources

import numpy as np

from ..utils._docstrings import substitute_docstring
from ._tables import _SPLIT_KEYS, encode_labels, read_logit_table

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

#: The Returns section of the loaders of one bundled set (substitute_docstring).
_DOCS = {"bundled_returns": """\
Returns
-------
data : :class:`~sklearn.utils.Bunch`
    See :func:`load_logits` for the attributes."""}


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

    base = resources.files("skcal.datasets") / "data"
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


@substitute_docstring(entries=_DOCS)
def load_cifar10_resnet20():
    """Load the bundled CIFAR-10 / ResNet-20 logits (10 classes, 5000 + 5000 rows).

    %(bundled_returns)s

    Examples
    --------
    >>> from skcal.datasets import load_cifar10_resnet20
    >>> load_cifar10_resnet20().logits_test.shape
    (5000, 10)
    """
    return load_logits("cifar10_resnet20_chenyaofo")


@substitute_docstring(entries=_DOCS)
def load_agnews_gpt2():
    """Load the bundled AG News / GPT-2 zero-shot log-probabilities (4 classes).

    A set on which temperature scaling alone leaves a large calibration error,
    because the model has a strong class bias.

    %(bundled_returns)s

    Examples
    --------
    >>> from skcal.datasets import load_agnews_gpt2
    >>> load_agnews_gpt2().n_classes
    4
    """
    return load_logits("agnews_gpt2_zeroshot")


@substitute_docstring(entries=_DOCS)
def load_sst2_gpt2():
    """Load the bundled SST-2 / GPT-2 zero-shot log-probabilities (binary).

    The ``logits_*`` arrays have two columns.

    %(bundled_returns)s

    Examples
    --------
    >>> from skcal.datasets import load_sst2_gpt2
    >>> data = load_sst2_gpt2()
    >>> data.n_classes, data.logits_val.shape
    (2, (910, 2))
    """
    return load_logits("sst2_gpt2_zeroshot")


# --------------------------------------------------------------------------
# User files
# --------------------------------------------------------------------------


def _scores_to_logits(scores, input_type, path, name="logits"):
    """``scores`` read as ``input_type`` (the calibrators' rule): 2-D logits.

    The :class:`~skcal.utils.validation.ProbabilitiesAsLogitsWarning` of
    :func:`~skcal.utils.validation.check_scores` (``input_type=None``) is
    issued here, once per file; errors name the file and ``name``. Used by
    the loader and by ``skcal report`` / ``apply``.
    """
    from ..utils.validation import DEFAULT_INPUT_TYPE, _BadProbabilitiesError, check_scores

    kind = DEFAULT_INPUT_TYPE if input_type is None else input_type
    try:
        Z, _ = check_scores(
            scores, input_type=kind, name=name, warn_probabilities=input_type is None
        )
    except _BadProbabilitiesError as exc:  # its CLI wording kept (skcal benchmark)
        raise exc.with_prefix(f"{path}: ") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return Z


def load_logits_file(
    path, *, random_state=0, test_size=0.5, label_column=None, logit_columns=None,
    ignore_columns=None, input_type=None,
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
    ``.csv`` and ``.parquet``
        A header row (a schema), then one row per sample: a label column
        (``label`` or ``y`` unless ``label_column`` names it), an optional
        ``split`` column holding ``val`` or ``test`` (without it, the set is
        split here), and the logit columns (every other column unless
        ``logit_columns`` lists them; ``ignore_columns`` skips columns).
        Integer labels are column indices ``0 .. K-1`` (columns headed by the
        indices in another order are put in class order); text labels that
        name logit columns are matched to them by name; text labels that name
        no column are mapped to the columns in sorted order (the calibrators'
        ``classes_`` rule), with a warning. A named logit column that no label
        selects (a ``margin`` column beside the class logits), or one that
        looks like a row index or id, is an error naming it. These are the
        rules of ``skcal fit`` / ``apply`` / ``report``: one reader,
        :func:`skcal.datasets._tables.read_logit_table`, reads every format
        for all of them. Parquet needs pyarrow (the ``io`` extra); CSV is read
        with pyarrow when it is installed, else with the :mod:`csv` module.
        A single set is stratified by class name, so the order of the logit
        columns does not change which rows are selected.

    Logits may also be log-probabilities; probabilities are read with
    ``input_type="probabilities"``. A 1-D array (or one logit column) is the
    binary score of class 1, read as the calibrators read it
    (:func:`skcal.utils.validation.check_scores`): read as logits, its
    log-odds ``s``, returned as the two columns ``[0, s]`` (the same softmax
    probabilities); read as probabilities, its probability ``p``, returned
    as ``log([1 - p, p])``.

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
    input_type : {"logits", "probabilities"} or None, default=None
        What the file holds. ``"probabilities"``: rows in [0, 1] summing to 1
        (or one column of class-1 probabilities), returned as their
        logarithms (whose softmax is the probabilities). ``"logits"`` or
        None: logits, returned as they are; with None, a
        :class:`~skcal.utils.validation.ProbabilitiesAsLogitsWarning` is issued
        when the values look like probabilities (the calibrators' rule: every
        value in [0, 1] and, for two or more columns, every row summing to 1).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Same attributes as :func:`load_logits` (``logits_val``, ``y_val``,
        ``logits_test``, ``y_test``, ``n_classes``, ``name``, ``info``,
        ``DESCR``); ``name`` is the file stem. Logits keep their dtype if
        floating, labels are int64. For a CSV file with text labels,
        ``info["classes"]`` lists the label of each logit column. For a
        CSV/Parquet file with two or more logit columns, ``info["columns"]``
        lists their names, in the order of the logit columns.

    Raises
    ------
    FileNotFoundError
        If ``path`` (or the labels file of an ``.npy`` pair) does not exist.
    ValueError
        If the suffix is not one of the above, the file is not a valid
        ``.npz`` / ``.npy`` file or holds object arrays (never unpickled), a
        key or column is missing, a CSV cell is not a number (naming the
        column), a column breaks the rules above (naming it), text labels do
        not number exactly one per column, arrays have the wrong number of
        dimensions, logits contain NaN or inf, probabilities
        (``input_type="probabilities"``) lie outside [0, 1] or have rows that
        do not sum to 1, labels are not integers in ``0 .. n_classes - 1``,
        the number of labels differs from the number of logit rows, or the
        two splits have a different number of classes.

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

    table = read_logit_table(
        path, role=None, label_column=label_column, logit_columns=logit_columns,
        ignore_columns=ignore_columns, need_labels=True,
    )
    path = table.path
    y, classes = encode_labels(table)
    logits = _scores_to_logits(table.scores, input_type, path)
    descr = f"User data loaded from {path}"
    info = {"source": str(path)}
    if classes.dtype.kind in "US":
        info["classes"] = classes.tolist()
    if table.columns is not None:
        info["columns"] = [str(c) for c in table.columns]
    if classes.dtype.kind in "US":
        descr += f"; text labels {', '.join(classes[:10].tolist())} matched to the columns"
    name = path.stem
    if path.suffix.lower() == ".npy":
        descr += " and its _labels.npy"
        name = name[: -len("_logits")] or name
    if table.split is None:
        if logits.shape[0] < 4:
            raise ValueError(f"{path}: need at least 4 rows to split, got {len(y)}")
        from sklearn.model_selection import train_test_split

        # stratified by class *name* (when every class has two rows), so that
        # reordering the logit columns of a CSV (which renumbers the classes)
        # selects the same rows
        counts = np.bincount(y)
        twice = counts[counts > 0].min() >= 2
        stratify = np.asarray(classes, dtype=str)[y] if twice else None
        lv, lt, yv, yt = train_test_split(
            logits, y, test_size=test_size, random_state=random_state, stratify=stratify
        )
        descr += f", split with random_state={random_state}"
    else:
        val, test = table.split == "val", table.split == "test"
        for what, rows in (("calibration (val)", val), ("test", test)):
            if not rows.any():
                raise ValueError(f"{path}: the {what} split has no rows")
        lv, yv, lt, yt = logits[val], y[val], logits[test], y[test]
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
