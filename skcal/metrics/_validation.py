"""Input validation shared by every metric in :mod:`skcal.metrics`.

The checks run on NumPy arrays (anything array-like) and on ``torch.Tensor``
inputs. torch is never imported here: the kernel module of ``y_prob``
(``metric_scores`` of :mod:`skcal._backend._numpy` / ``_torch``) reads it,
handing NumPy input (and CPU tensors, through a view) to
:func:`_numpy_scores`.

Validation never up-casts ``y_prob`` as a whole: NaN / infinity and the
[0, 1] range are read from one minimum / maximum, and row sums are formed in
float64 one row chunk at a time. Every metric then works on ``_Inputs``:

* ``y``: integer column index of the true class, shape ``(n_samples,)``;
* ``scores``: the validated ``y_prob`` itself, in its own dtype and without
  a copy (1-D for a binary ``y_prob``); :mod:`skcal.metrics._rows` walks it
  in row chunks, each converted to float64 probabilities (and
  log-probabilities for logits);
* ``logits``: whether ``scores`` holds logits (``input_type="logits"``);
* ``weight``: float64 sample weights or ``None``.

For a torch ``y_prob`` these are tensors on ``y_prob``'s device; otherwise
NumPy arrays.
"""

import numbers
from typing import Any, NamedTuple

import numpy as np
from sklearn.utils import check_array

from .._backend._array import host_array, like_input
from .._backend._dispatch import get_backend
from ..utils._labels import classes_from_column_names, resolve_classes
from ..utils.validation import (
    _warn_if_probabilities,
    min_max,
    check_sample_weight,
    probability_row_tolerance,
)

#: Absolute tolerance on ``|sum_k p_ik - 1|`` (and on values above 1) for float32 /
#: float64 probability rows (1e-2 for 16-bit floats): the calibrators'
#: :func:`skcal.utils.validation.probability_row_tolerance`.
PROBA_SUM_TOL = probability_row_tolerance(np.float64)

_INPUT_TYPES = ("probabilities", "logits")


class _Inputs(NamedTuple):
    y: Any
    scores: Any
    logits: bool
    weight: Any
    classes: np.ndarray
    binary_1d: bool
    pos_index: int = 1


def _plain(value):
    """A NumPy scalar as the Python number it holds (for error messages)."""
    return value.item() if isinstance(value, np.generic) else value


#: More bins than this and than samples is rejected (their per-bin sums would
#: cost memory in proportion to the bins, with nearly all bins empty).
MAX_BINS_FLOOR = 10_000


def n_bins_rule(value):
    """The one message for a bad bin count (``n_bins=`` and ``--n-bins``): its rule."""
    return f"must be an integer >= 1, got {_plain(value)!r}"


def _check_n_bins(n_bins, n_samples=None):
    """Validate ``n_bins``; with ``n_samples``, reject more bins than samples beyond 10,000."""
    if (
        isinstance(n_bins, bool)
        or not isinstance(n_bins, numbers.Integral)
        or n_bins < 1
    ):
        raise ValueError(f"n_bins {n_bins_rule(n_bins)}.")
    if n_samples is not None and n_bins > max(MAX_BINS_FLOOR, n_samples):
        raise ValueError(
            f"n_bins={int(n_bins)} is more than both the {n_samples} samples and "
            f"{MAX_BINS_FLOOR} (the limit is the larger of the two): nearly "
            "every bin would be empty, and the per-bin sums alone would take memory "
            "in proportion to n_bins."
        )
    return int(n_bins)


def _to_numpy_labels(y_true):
    try:
        y = np.asarray(host_array(y_true))
    except Exception as exc:  # ragged nested lists, ...
        raise ValueError(f"y_true could not be converted to an array: {exc}") from exc
    if y.ndim != 1:
        raise ValueError(
            f"y_true must be 1-D of shape (n_samples,), got shape {y.shape}."
        )
    if y.shape[0] == 0:
        raise ValueError("y_true is empty; at least one sample is required.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y_true contains NaN or infinity.")
    if y.dtype.kind == "f" and np.any(y != np.round(y)):
        bad = y[y != np.round(y)][0].item()
        raise ValueError(
            f"y_true holds non-integer numbers (e.g. {bad!r}); class labels are "
            "integers, strings or booleans (scikit-learn's 'continuous' target, "
            "which the calibrators refuse too)."
        )
    if y.dtype.kind == "O" and any(
        v is None or (isinstance(v, float) and not np.isfinite(v)) for v in y
    ):
        raise ValueError("y_true contains None, NaN or infinity.")
    return y


def _obvious_positive(present):
    """Whether labels ``present`` name their positive class: {0, 1}, {-1, 1}, bool."""
    if present.dtype.kind == "b":
        return True
    if present.dtype.kind not in "iuf":
        return False
    values = set(present.tolist())
    return values <= {0, 1} or values <= {-1, 1}


def _positive_labels(y, labels, pos_label, binary_1d):
    """``labels`` for a binary view of ``y``, from ``pos_label`` (see :func:`_encode_labels`)."""
    present = np.unique(y)
    if pos_label is not None:
        pos_label = _plain(pos_label)
        if labels is not None:
            given = list(np.asarray(labels).tolist())
            if pos_label not in given:
                raise ValueError(
                    f"pos_label={pos_label!r} is not among labels={given[:10]!r}."
                )
            if binary_1d and len(given) == 2 and given[1] != pos_label:
                raise ValueError(
                    f"pos_label={pos_label!r} contradicts labels={given!r}: a 1-D "
                    "y_prob is the probability of labels[1]."
                )
            return labels
        if not binary_1d:
            return None
        others = [v for v in present.tolist() if v != pos_label]
        if len(others) == 2:  # two labels, neither of them pos_label
            hint = ""
            if str(pos_label) in [str(v) for v in others]:
                hint = (
                    f" (pos_label is a {type(pos_label).__name__}, the labels "
                    f"are {type(others[0]).__name__})"
                )
            raise ValueError(
                f"pos_label={pos_label!r} is not one of the labels {others!r}{hint}."
            )
        if len(others) > 1:
            raise ValueError(
                f"y_true has {len(present)} labels {present[:10].tolist()!r}; a 1-D "
                "y_prob is a binary problem (at most 2 labels)."
            )
        if not others:
            if isinstance(pos_label, bool):
                others = [not pos_label]
            elif isinstance(pos_label, (int, float)):
                others = [0 if pos_label != 0 else 1]
            else:
                return np.array(["" if pos_label != "" else " ", pos_label], dtype=object)
        return np.array([others[0], pos_label], dtype=object)
    if binary_1d and labels is None and len(present) > 2:
        raise ValueError(
            f"y_true has {len(present)} labels {present[:10].tolist()!r}, but y_prob "
            "is 1-D: the probability of one class (the positive, pos_label) of a "
            "binary problem. Pass the (n_samples, n_classes) probabilities, or a "
            "binary y_true (e.g. y_true == pos_label) with pos_label."
        )
    if labels is None and not _obvious_positive(present) and len(present) <= 2:
        raise ValueError(
            f"y_true has the labels {present[:10].tolist()!r}, so which class is "
            "positive (the class whose probability a binary y_prob or kind='binary' "
            "holds) is ambiguous: pass pos_label=<the positive label> (or "
            "labels=[negative, positive])."
        )
    return labels


def _encode_labels(y, n_classes, labels, binary_1d, pos_label=None, binary=False):
    """Map labels ``y`` to column indices: ``(y_index, classes, pos_index)``.

    The calibrators' rule (:func:`skcal.utils._labels.resolve_classes`), as
    documented in the ``labels`` and ``pos_label`` entries of
    :data:`~skcal.metrics._params._TAIL_PARAMS`; a 1-D ``y_prob`` whose
    ``y_true`` holds one label among 0, 1 and -1 has classes ``[0, 1]``
    (``[-1, 1]``), as in scikit-learn.
    """
    if binary_1d or (binary and n_classes == 2):
        labels = _positive_labels(y, labels, pos_label, binary_1d)
    elif pos_label is not None:
        raise ValueError(
            "pos_label is only used for a binary y_prob (1-D) or kind='binary'."
        )
    if labels is None and binary_1d and y.dtype.kind in "iubf":
        present = np.unique(y)
        if present.shape[0] == 1 and present[0] in (0, 1, -1):
            labels = np.array([-1 if present[0] == -1 else 0, 1]).astype(y.dtype)
    try:
        classes, y_idx, _ = resolve_classes(
            y, n_classes, labels, name="labels", allow_single=True
        )
    except TypeError as exc:  # labels of types that cannot be sorted together
        raise ValueError(
            f"y_true or labels mix label types that cannot be compared: {exc}"
        ) from exc
    pos_index = 1
    if pos_label is not None and not binary_1d:
        hits = [j for j, c in enumerate(classes.tolist()) if c == pos_label]
        if not hits:
            raise ValueError(
                f"pos_label={pos_label!r} is not among the classes "
                f"{classes[:10].tolist()!r} of y_prob's columns."
            )
        pos_index = hits[0]
    return y_idx, classes, pos_index


def _check_finite(lo, hi, input_type):
    """Raise for NaN / infinity, seen in the minimum ``lo`` and maximum ``hi``."""
    if np.isfinite(lo) and np.isfinite(hi):
        return
    if np.isnan(lo) or np.isnan(hi):
        raise ValueError("Input y_prob contains NaN.")
    if input_type == "logits" and hi != np.inf:
        raise ValueError(
            "Input y_prob contains -inf logits (log of 0), which are not accepted "
            "with input_type='logits' (the log-softmax of a row could be "
            "undefined). Pass the probabilities instead, with "
            "input_type='probabilities', where exact zeros are allowed."
        )
    raise ValueError("Input y_prob contains infinity.")


def _check_proba_values(p, lo, hi, binary_1d, tol):
    """Check the [0, 1] range (from ``lo``, ``hi``) and the float64 row sums."""
    xp = get_backend(p)
    if lo < 0 or hi > 1 + tol:
        for sl in xp.row_chunks(p):
            c = p[sl]
            bad = c[(c < 0) | (c > 1 + tol)]
            if bad.shape[0]:
                raise ValueError(
                    "y_prob must hold probabilities in [0, 1] (use input_type='logits' "
                    f"for logits); found values such as {float(bad.reshape(-1)[0])}."
                )
    if binary_1d:
        return
    sums = xp.row_sums64(p)
    dev = abs(sums - 1.0)
    i = int(dev.argmax())
    if float(dev[i]) > tol:
        raise ValueError(
            f"Rows of y_prob must sum to 1 within {tol}; row {i} "
            f"sums to {float(sums[i])}. Pass input_type='logits' for logits, or "
            f"renormalise probabilities rounded to low precision (e.g. stored as "
            f"float16) explicitly with skcal.utils.validation.normalize_probabilities."
        )


def _check_inputs(y_true, y_prob, *, sample_weight=None, input_type="probabilities",
                  labels=None, pos_label=None, binary=False):
    """Validate ``(y_true, y_prob, sample_weight)`` for a probabilistic metric.

    ``y_prob`` is neither copied nor up-cast: ``scores`` is the validated
    array (float16 / float32 / float64; other dtypes become float64) or the
    detached tensor (floating dtypes kept). The ``ValueError`` cases are the
    Raises section of :func:`~skcal.metrics.calibration_error`.
    """
    if not isinstance(input_type, str) or input_type not in _INPUT_TYPES:
        raise ValueError(f"input_type must be one of {list(_INPUT_TYPES)}, got "
                         f"{_plain(input_type)!r}.")
    p, names, lo, hi, floating = get_backend(y_prob).metric_scores(
        y_prob, _numpy_scores
    )
    _check_finite(lo, hi, input_type)
    tol = probability_row_tolerance(p.dtype if floating else np.float64)
    binary_1d = p.ndim == 1 or p.shape[1] == 1
    if binary_1d:
        p = p.reshape(-1)
    y = _to_numpy_labels(y_true)
    n_classes = _n_classes(p.shape, binary_1d, y.shape[0])
    if not binary_1d:  # a DataFrame's column names, when they are y_true's labels
        labels = classes_from_column_names(names, y, labels, name="labels")
    y_idx, classes, pos = _encode_labels(
        y, n_classes, labels, binary_1d, pos_label, binary
    )
    y_idx = like_input(y_idx, p)  # a tensor on the device of a tensor p
    # only the ratios of the weights matter: divided by their maximum, weights of
    # any magnitude neither underflow nor overflow in the products with the scores
    w = check_sample_weight(sample_weight, p.shape[0], like=p, relative=True)
    if input_type == "probabilities":
        _check_proba_values(p, lo, hi, binary_1d, tol)
    else:
        # the calibrators' rule (and warning) for probabilities read as logits
        _warn_if_probabilities(p, lo, hi, name="y_prob")
    return _Inputs(y_idx, p, input_type == "logits", w, classes, binary_1d, pos)


def _numpy_scores(y_prob):
    """The NumPy half of ``metric_scores``: ``(p, names, lo, hi, True)``.

    ``p``: ``y_prob`` as a float16 / 32 / 64 array (no copy when it is one);
    ``names``: a DataFrame's column names (else None); ``lo`` / ``hi``: its range.
    """
    columns = getattr(y_prob, "columns", None)
    names = None if columns is None else [str(c) for c in columns]
    try:
        p = check_array(
            y_prob,
            ensure_2d=False,
            dtype=(np.float64, np.float32, np.float16),
            input_name="y_prob",
            ensure_all_finite=False,
        )
    except ValueError as exc:
        if "inhomogeneous" not in str(exc):
            raise
        raise ValueError(
            "y_prob is ragged: its rows have different lengths (every row must "
            "hold one score per class)") from exc
    lo, hi = min_max(p)  # check_array has rejected 0-D and 3-D input
    return p, names, lo, hi, True


def _n_classes(shape, binary_1d, n_labels):
    """The number of classes of a ``y_prob`` of ``shape`` with ``n_labels`` labels."""
    if not binary_1d and shape[1] < 2:
        raise ValueError("y_prob must have at least 2 columns.")
    if n_labels != shape[0]:
        raise ValueError(f"y_true has {n_labels} samples but y_prob has {shape[0]}.")
    return 2 if binary_1d else shape[1]
