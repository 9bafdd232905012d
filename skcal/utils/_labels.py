"""Label -> column resolution shared by the calibrators and the metrics."""

import math
import sys
import warnings

import numpy as np
from sklearn.utils.multiclass import type_of_target

__all__ = [
    "check_no_missing_labels",
    "resolve_classes",
    "encode_labels",
    "are_classifier_logits_columns",
    "classes_from_column_names",
    "check_near_match",
    "check_named_columns_have_labels",
    "warn_labels_in_sorted_order",
]


def _listed(values, limit=20):
    """``values`` as a list for a message: all of them, or the first ``limit`` and a count."""
    values = np.asarray(values).tolist()
    if len(values) <= limit:
        return repr(values)
    return f"{values[:limit]!r} ... ({len(values)} in all)"


def _is_missing_label(v):
    """True for ``None``, a float NaN, the empty text and pandas' ``NA``: no label."""
    if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)) \
            or (isinstance(v, str) and v == ""):
        return True
    pd = sys.modules.get("pandas")  # pandas' NA only where pandas is loaded
    return pd is not None and v is getattr(pd, "NA", None)


def check_no_missing_labels(y, name="y"):
    """Refuse labels with missing entries (``None``, NaN, ``pd.NA``, ``""``).

    Otherwise sorting the labels fails with a bare ``TypeError`` or
    scikit-learn reports an "unknown" label type or a NaN without its rows.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    name : str, default="y"
        The argument's name in the message.

    Raises
    ------
    ValueError
        Naming the missing values and their rows (the first 20 and a count).
    """
    if not (isinstance(y, np.ndarray) and y.dtype.kind in "OUf" and y.size):
        return
    if y.dtype.kind == "U":  # text: only the empty text is missing
        missing = y == ""
    elif y.dtype.kind == "f":  # float labels (pandas' nullable integers give NaN for NA)
        missing = np.isnan(y)
    else:
        try:  # None, NaN (the one value unequal to itself) or "": C loops, 14x the loop below
            missing = (y == None) | (y != y) | (y == "")  # noqa: E711 (elementwise)
        except (TypeError, ValueError):  # e.g. pd.NA, whose comparisons are NA
            missing = np.frompyfunc(_is_missing_label, 1, 1)(y).astype(bool)
    if missing.any():
        rows = np.flatnonzero(missing)
        values = list(dict.fromkeys(repr(v.item() if isinstance(v, np.generic) else v)
                                    for v in y[rows]))
        raise ValueError(
            f"{name} contains missing label(s) {', '.join(values)} at row(s) "
            f"{_listed(rows)}: every row needs a class label. Drop those rows "
            "(from X and sample_weight too) or fill in their labels."
        )


def encode_labels(classes, y, *, remedy=""):
    """Positions of the labels ``y`` in ``classes``.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        Distinct labels, in column order (not necessarily sorted).
    y : ndarray of shape (n_samples,)
    remedy : str, default=""
        A sentence appended to the error message (how to name the classes).

    Returns
    -------
    ndarray of shape (n_samples,), int64

    Raises
    ------
    ValueError
        If a label of ``y`` is not in ``classes`` (the message names the
        offending labels first, then the classes).
    """
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    try:
        pos = np.clip(np.searchsorted(sorted_classes, y), 0, len(classes) - 1)
        known = sorted_classes[pos] == y
    except TypeError as exc:
        raise ValueError(
            f"Labels in y cannot be compared with the classes {np.asarray(classes).tolist()!r}."
        ) from exc
    if not np.all(known):
        raise ValueError(
            f"y contains labels {_listed(np.unique(y[~known]))} that are not among "
            f"the classes {_listed(np.sort(classes))}.{remedy and ' ' + remedy}"
        )
    return order[pos].astype(np.int64)


def check_near_match(labels, names, *, remedy="pass the classes explicitly"):
    """Raise when text labels almost name the columns (see classes_from_column_names).

    Parameters
    ----------
    labels : list of str
        The distinct labels.
    names : list of str
        The score columns' names.
    remedy : str
        The last way out named by the message.

    Raises
    ------
    ValueError
        If every label names a column once case and surrounding spaces are
        ignored, or if some labels name columns and others do not.
    """
    folded = {nm.strip().casefold() for nm in names}
    if {lb.strip().casefold() for lb in labels} <= folded:
        raise ValueError(
            f"The labels of y {labels[:10]!r} name the score columns {names[:10]!r} "
            "only when case and spaces are ignored; rename the columns (or map the "
            f"labels) so that they match exactly, or {remedy}."
        )
    named = [lb for lb in labels if lb in set(names)]
    if named:
        missing = [lb for lb in labels if lb not in set(names)]
        raise ValueError(
            f"Some labels of y name score columns ({named[:10]!r}) but others do not "
            f"({missing[:10]!r}; columns: {names[:10]!r}): the columns cannot be "
            f"matched to the classes. Rename the columns, or {remedy}."
        )


def check_named_columns_have_labels(names, classes, seen, *, skip, declare):
    """Raise when a named score column is the logit of no label in ``y``.

    One rule for the calibrators (a DataFrame with text column names, no
    ``classes``) and ``skcal fit`` (a CSV / Parquet file, no
    ``--logit-columns``): a named column that no label selects is more often
    not a logit at all (a ``margin`` or id column) than a class absent from
    the calibration set, so it is refused unless the classes are listed
    explicitly. Unnamed columns (arrays, ``.npz``) follow the integer-label
    rule of :func:`resolve_classes` (an absent class is a warning).

    Parameters
    ----------
    names : list of str
        The columns' names.
    classes : array-like of shape (n_columns,)
        The class of each column.
    seen : array-like of bool, shape (n_columns,)
        Whether some label selects each column.
    skip, declare : str
        How to drop a column that is not a logit, and how to list the classes
        when it is the logit of an absent class; ``{column}`` is replaced by
        the column's name.

    Raises
    ------
    ValueError
        Naming the first such column, its class and both remedies.
    """
    unused = np.flatnonzero(~np.asarray(seen, dtype=bool))
    if not len(unused):
        return
    j = int(unused[0])
    column, classes = names[j], np.asarray(classes)
    if classes.dtype.kind in "iu" and (classes == np.arange(len(classes))).all():
        what = f"0..{len(classes) - 1}"
    else:
        what = _listed(classes)
    raise ValueError(
        f"column {column!r} is the logit of no label: the columns {_listed(names, 10)} "
        f"are the classes {what}, and no row has label {classes[j].item()!r}; if a "
        f"column is not a class logit, {skip.format(column=column)}; if {column!r} is "
        f"the logit of a class absent from the calibration set, "
        f"{declare.format(column=column)}"
    )


#: The prefix of :class:`skcal.meta.ClassifierLogits`' output column names
#: (``get_feature_names_out``: ``"classifierlogits_<class>"``), which
#: :func:`classes_from_column_names` strips when every column carries it.
CLASSIFIER_LOGITS_PREFIX = "classifierlogits_"


def are_classifier_logits_columns(names):
    """Whether every one of the column ``names`` (at least one) is ClassifierLogits'."""
    return bool(names) and all(str(nm).startswith(CLASSIFIER_LOGITS_PREFIX) for nm in names)


def classes_from_column_names(names, y, classes=None, *, name="classes"):
    """The classes named by a DataFrame's columns, when its column names are labels of ``y``.

    Column names that all start with :data:`CLASSIFIER_LOGITS_PREFIX` (the
    output of :class:`skcal.meta.ClassifierLogits` in a Pipeline with
    ``set_output(transform="pandas")``) are read without it.

    Parameters
    ----------
    names : array-like of str, shape (n_columns,), or None
        Column names of the scores (``feature_names_in_``).
    y : ndarray of shape (n_samples,)
        Validated labels.
    classes : array-like of shape (n_columns,), default=None
        Explicit classes given by the user.

    Returns
    -------
    classes : ndarray of shape (n_columns,) or None
        With ``classes`` None: the labels in column order, when every label of
        ``y`` names a column (compared as text) and, for integer labels, every
        column name is an integer (absent classes then get their column's
        integer; for text labels, the column name). None when the names are
        not labels (columns are then matched by position, as for an array).
        With ``classes`` given: ``classes`` itself.

    Raises
    ------
    ValueError
        If ``classes`` is given and names the same labels as the columns but
        in another order (the columns would be assigned to the wrong classes);
        if the text labels of ``y`` name columns only when case and
        surrounding spaces are ignored, or only some of them name columns
        (matching by position would then be a guess).
    """
    if names is None:
        return classes
    names = [str(nm) for nm in names]
    if are_classifier_logits_columns(names):
        # the columns of skcal.meta.ClassifierLogits (a Pipeline with pandas output)
        names = [nm[len(CLASSIFIER_LOGITS_PREFIX):] for nm in names]
    if len(set(names)) != len(names):
        return classes
    if classes is not None:
        given = [str(c) for c in np.asarray(classes).tolist()]
        if set(given) == set(names) and given != names:
            raise ValueError(
                f"{name}={given[:10]!r} and the DataFrame's column names "
                f"{names[:10]!r} name the same labels in another order; the columns "
                f"are matched to {name} by position, so reorder one of them."
            )
        return classes
    uniq = np.unique(y)
    text_of = {str(c): c for c in uniq.tolist()}
    if len(text_of) != len(uniq):
        return None
    if not set(text_of) <= set(names):
        if uniq.dtype.kind in "OUS":
            check_near_match(sorted(text_of), names)
        return None
    if set(text_of) == set(names):
        return np.array([text_of[nm] for nm in names], dtype=uniq.dtype)
    if uniq.dtype.kind in "iu":
        try:
            ints = [int(nm) for nm in names]
        except ValueError:
            return None
        if [str(v) for v in ints] != names:
            return None
        return np.array(ints, dtype=uniq.dtype)
    if uniq.dtype.kind in "OUS":
        return np.array(names, dtype=object if uniq.dtype.kind == "O" else str)
    return None


def _unique_inverse(y):
    """``np.unique(y, return_inverse=True)``, by counting for integers in a small range.

    Integer labels spanning fewer than ``4 * len(y) + 256`` values (the
    usual encodings: ``0..K-1``, ``-1 / +1``) and boolean labels are counted
    with ``np.bincount`` in O(n) instead of sorted (two adjacent values, the
    binary case, need no count: the minimum and maximum are both labels);
    the result is identical (classes of ``y``'s dtype, sorted; an int64
    inverse, ``y`` itself for int64 labels whose smallest is 0: no copy).
    """
    if y.size and y.dtype.kind == "b":
        classes, inverse = _unique_inverse(y.view(np.uint8))
        return classes.astype(bool), inverse
    if y.dtype.kind in "iu" and y.size:
        lo, hi = int(y.min()), int(y.max())
        if -(2**62) < lo and hi < 2**62 and hi - lo < 4 * y.size + 256:
            z = y.astype(np.int64, copy=bool(lo))  # from 0: int64 labels are their own inverse
            if lo:
                z -= lo
            if hi - lo <= 1:
                return np.arange(lo, hi + 1).astype(y.dtype), z
            present = np.flatnonzero(np.bincount(z, minlength=hi - lo + 1))
            classes = (present + lo).astype(y.dtype)
            if len(present) == hi - lo + 1:
                return classes, z
            lut = np.zeros(hi - lo + 1, dtype=np.int64)
            lut[present] = np.arange(len(present))
            return classes, lut[z]
    return np.unique(y, return_inverse=True)


def resolve_classes(y, n_columns, classes=None, *, name="classes", allow_single=False,
                    owner=None):
    """Decide which label each column belongs to, and encode ``y``.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels (validated 1-D classification targets).
    n_columns : int
        Number of columns (classes) of the scores or probabilities.
    classes : array-like of shape (n_columns,), default=None
        Explicit labels of the columns. When None, the sorted unique labels of
        ``y`` are used if there are exactly ``n_columns`` of them. Fewer labels
        are accepted only when they are integers in ``0..n_columns-1`` that
        include 0 (the rule of the user guide, "Inputs and labels"): the
        columns are then the classes ``0..n_columns-1`` (the usual encoding
        of a model's outputs). Any other case is ambiguous and raises: e.g.
        labels ``1..9`` for 10 columns could be ``0..9`` without 0 or
        ``1..10`` without 10.
    name : str, default="classes"
        The parameter name to suggest in error messages.
    allow_single : bool, default=False
        Accept a single class in ``y`` when the integer-label rule above names
        the columns (metrics; a calibrator needs two classes).
    owner : str, default=None
        The class name of the estimator whose constructor parameter ``name``
        is: the messages then suggest ``Owner(classes=[...])``.

    Returns
    -------
    classes : ndarray of shape (n_columns,)
    y_encoded : ndarray of shape (n_samples,), int64
    missing : ndarray
        Labels of ``classes`` that never occur in ``y``.

    Raises
    ------
    ValueError
        If ``classes`` is not 1-D and distinct, its length differs from
        ``n_columns``, ``y`` has labels outside it, ``y`` has a single class
        and ``classes`` is None, or the mapping from labels to columns is
        ambiguous.
    """
    labels = None  # the distinct labels of y, when found
    how = f"{owner}({name}=[...])" if owner else f"{name}=[...]"  # how to name them
    if classes is not None:
        raw = classes
        classes = np.asarray(classes)
        if classes.ndim == 1 and not isinstance(raw, np.ndarray):
            if len({isinstance(c, str) for c in raw}) > 1:
                # np.asarray would silently turn the numbers into text
                raise ValueError(
                    f"{name} mixes text labels and numbers; use labels of one kind."
                )
        try:
            distinct = classes.ndim == 1 and len(np.unique(classes)) == len(classes)
        except TypeError:
            raise ValueError(
                f"{name} holds labels that cannot be compared with each other "
                "(e.g. None among numbers); use labels of one sortable kind."
            ) from None
        if not distinct:
            raise ValueError(f"{name} must be a 1-D sequence of distinct labels.")
        if len(classes) != n_columns:
            raise ValueError(
                f"{name} has {len(classes)} labels but there are {n_columns} columns "
                "(a binary score vector counts as 2 columns)."
            )
        y_enc = encode_labels(
            classes, y,
            remedy=f"Include every label of y in {how} (one per column).",
        )
    else:
        classes, y_enc = _unique_inverse(y)
        labels = classes  # every one occurs in y
        single_ok = (allow_single and len(classes) == 1 and n_columns > 1
                     and np.issubdtype(classes.dtype, np.integer) and classes[0] == 0)
        if len(classes) < 2 and not single_ok:
            if allow_single and n_columns > 1:
                raise ValueError(
                    f"y contains the single label {classes[:1].tolist()[0]!r} for "
                    f"{n_columns} columns: a single integer label is read as a column "
                    f"index only when it is 0 (another one could name any column); "
                    f"pass {how} with the label of each column."
                )
            raise ValueError(
                f"y contains only one class ({classes[:1].tolist()[0]!r}); at least 2 classes are "
                f"needed, or pass {how} to name the {n_columns} columns."
            )
        if len(classes) != n_columns:
            is_int = np.issubdtype(classes.dtype, np.integer) and (
                single_ok or type_of_target(y) in ("binary", "multiclass")
            )
            fewer = is_int and len(classes) < n_columns
            if fewer and classes.min() == 0 and classes.max() < n_columns:
                classes = np.arange(n_columns, dtype=classes.dtype)
                y_enc = np.asarray(y, dtype=np.int64)
            elif fewer and classes.min() > 0 and classes.max() <= n_columns:
                lo, hi = classes.min().item(), classes.max().item()
                raise ValueError(
                    f"y has {len(classes)} distinct integer labels in {lo}..{hi} "
                    f"(without 0) for {n_columns} columns: they could be the column "
                    f"indices 0..{n_columns - 1} with class 0 absent, or classes "
                    f"1..{n_columns} (or another range) with some absent, so which "
                    f"label belongs to which column is ambiguous. Integer labels are "
                    f"read as column indices only when they include 0; pass "
                    f"{how} with the label of each column (e.g. "
                    f"{name}=range({n_columns}) or the classifier's classes_)."
                )
            else:
                outside = ""
                if is_int and classes.min() >= 0 and len(classes) > n_columns:
                    beyond = classes[classes >= n_columns]
                    outside = (
                        f"labels {_listed(beyond)} are not column indices "
                        f"0..{n_columns - 1}; "
                    )
                raise ValueError(
                    f"y has {len(classes)} distinct labels but there are {n_columns} "
                    f"columns: {outside}the labels are {_listed(classes)}. Which label "
                    f"belongs to which column is ambiguous; pass {how} with the "
                    "label of each column (e.g. the classifier's classes_)."
                )
    if labels is classes:  # every class occurs in y
        missing = classes[:0]
    elif labels is not None:  # the classes of y, completed to 0..n_columns-1
        missing = np.setdiff1d(classes, labels)
    elif len(y_enc):
        seen = np.bincount(y_enc, minlength=len(classes)) > 0
        missing = np.setdiff1d(classes, classes[seen])
    else:
        missing = classes
    return classes, np.asarray(y_enc, dtype=np.int64), missing


def warn_labels_in_sorted_order(labels, columns=None, *, remedy, where="",
                                stacklevel=3):
    """Warn that text labels naming no column are matched to the columns in sorted order.

    One message for the calibrators (``classes=None``) and ``skcal fit``.

    Parameters
    ----------
    labels : array-like of shape (n_columns,)
        The sorted labels: ``labels[k]`` is taken as the class of column ``k``.
    columns : list of str, default=None
        The columns' names (None: unnamed columns, shown by position).
    remedy : str
        How to name the classes (the last clause of the message).
    where : str, default=""
        A prefix (the file name for ``skcal fit``).
    stacklevel : int, default=3

    Warns
    -----
    skcal.exceptions.LabelsInSortedOrderWarning
    """
    from ..exceptions import LabelsInSortedOrderWarning

    labels = np.asarray(labels).tolist()
    cols = list(range(len(labels))) if columns is None else list(columns)
    pairs = ", ".join(f"{lb} -> {c}" for lb, c in zip(labels[:10], cols[:10]))
    if len(labels) > 10:
        pairs += f", ... ({len(labels)} in all)"
    named = (
        f"no column ({len(cols)} unnamed logit columns)" if columns is None
        else f"none of the logit columns {cols[:10]}"
    )
    warnings.warn(
        f"{where}the text labels name {named}; they are matched to the columns in "
        f"sorted order ({pairs}); {remedy}",
        LabelsInSortedOrderWarning,
        stacklevel=stacklevel,
    )
