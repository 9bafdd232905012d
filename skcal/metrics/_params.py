"""Options shared by the binned metrics: event kinds, norms, strategies, shared doc text.

A leaf of :mod:`skcal.metrics` (it imports only :mod:`._validation`), so that
every metric module can use it without an import cycle.
"""

import functools
import numbers
import textwrap

from sklearn.utils._param_validation import (
    Hidden,
    Interval,
    StrOptions,
    validate_params,
)

from ..utils._docstrings import substitute_docstring
from ._validation import _plain

_KINDS = ("top-label", "classwise", "binary")
#: Other accepted spellings of ``kind`` (``"class"`` was the name used by
#: :func:`reliability_curve` and :class:`skcal.display.ReliabilityDisplay`).
_KIND_ALIASES = {"class": "classwise"}


def _check_kind(kind, class_index=None, one_event=None):
    """Return the canonical name of ``kind`` (``"class"`` -> ``"classwise"``).

    ``kind`` itself is checked by :data:`CONSTRAINTS` (every caller is
    :func:`validated`). ``class_index`` is only allowed with
    ``kind="classwise"``; a metric ``one_event`` (its name, for the message)
    of one event needs it there.
    """
    kind = _KIND_ALIASES.get(kind, kind)
    if kind != "classwise" and class_index is not None:
        raise ValueError("class_index is only used with kind='classwise'.")
    if one_event and kind == "classwise" and class_index is None:
        raise ValueError(
            f"{one_event} is defined for one event: kind='classwise' needs "
            "class_index."
        )
    return kind


_NORMS = ("l1", "l2", "max")
_STRATEGIES = ("uniform", "quantile")


def _class_index(kind, class_index, n_classes, pos_index=1):
    """The column of ``y_prob`` a ``"classwise"``/``"binary"`` event refers to."""
    if kind == "binary":
        if n_classes != 2:
            raise ValueError(
                f"kind='binary' needs 2 classes, but y_prob has {n_classes} "
                "columns; use kind='top-label' or 'classwise'."
            )
        return pos_index
    if (
        isinstance(class_index, bool)
        or not isinstance(class_index, numbers.Integral)
        or not 0 <= class_index < n_classes
    ):
        raise ValueError(
            f"class_index must be an integer in [0, {n_classes}) for kind='classwise', "
            f"got {_plain(class_index)!r}."
        )
    return int(class_index)


_COMMON_PARAMS = """
    y_true : array-like of shape (n_samples,)
        True labels, of any sortable type (int, str, ...). A ``torch.Tensor``
        is accepted.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (entries in [0, 1], rows summing to 1; both
        within ``skcal.metrics.PROBA_SUM_TOL`` = 1e-4 for rounding, 1e-2 for
        16-bit floats: float16, torch bfloat16), or logits when
        ``input_type="logits"`` (finite: a ``-inf`` logit, the log of 0, is
        rejected; pass such probabilities with
        ``input_type="probabilities"``). A 1-D array is a binary problem: the
        probability (or log-odds) of the second class ``labels[1]``. It is
        never up-cast as a whole: the metric walks it in row chunks (about
        1 MiB of float64 on the CPU), each converted to float64
        (probabilities from a stable log-softmax for logits), so the extra
        memory is a few chunks plus a few ``(n_samples,)`` float64 vectors.
        A ``torch.Tensor`` is computed the same way with torch on its device
        (256 MiB chunks on an accelerator)."""

_TAIL_PARAMS = """
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights, not all zero; an integer weight is
        the same as repeating the sample, for equal-mass bins too (their
        edges are inverted-CDF quantiles), and only the ratios of the weights
        matter.
    input_type : {"probabilities", "logits"}, default="probabilities"
        How to read ``y_prob``. Logits go through a stable (log-)softmax
        (sigmoid of the log-odds for 1-D input).
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob`` (e.g. the classifier's
        ``classes_``). By default the sorted unique values of ``y_true`` if
        there are ``n_classes`` of them. When some classes are absent from
        ``y_true``, its labels are taken as column indices only if they are
        integers that include 0 and are below ``n_classes``; otherwise the
        mapping is ambiguous and a ``ValueError`` asks for ``labels``. This
        is the rule of the calibrators' ``classes`` parameter. For a 1-D
        (binary) ``y_prob`` and a ``y_true`` with the single label 0, 1 or
        -1, the classes are ``[0, 1]`` (``[-1, 1]``), as in scikit-learn.
    pos_label : int, float, bool or str, default=None
        The positive class of a binary view: a 1-D ``y_prob`` is its
        probability (log-odds), and ``kind="binary"`` checks the column of
        ``pos_label``. By default ``labels[1]``; without ``labels`` the
        labels of ``y_true`` must then be {0, 1}, {-1, 1} or booleans
        (positive: 1, True), otherwise a ``ValueError`` asks for
        ``pos_label``, as scikit-learn's binary metrics do. Not used (an
        error) for other views of a 2-D ``y_prob``."""


_EVENT_HEAD = """
    y_true : array-like of shape (n_samples,)
        True labels (a ``torch.Tensor`` is accepted).
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Probabilities (or logits with ``input_type="logits"``); a 1-D array is
        the probability of the second class of a binary problem.
    kind : {"top-label", "classwise", "binary"}, default="top-label"
        The event: the top-label confidence against correctness, the column
        ``class_index`` against ``1[y = labels[class_index]]``, or the
        positive class of a binary problem.
    class_index : int, default=None
        Column of ``y_prob`` for ``kind="classwise"`` (required there).
    sample_weight : array-like of shape (n_samples,), default=None"""

_EVENT_TAIL = """
    input_type : {"probabilities", "logits"}, default="probabilities"
        How to read ``y_prob``.
    labels : array-like of shape (n_classes,), default=None
        Class of each column of ``y_prob`` (see :func:`calibration_error`).
    pos_label : int, float, bool or str, default=None
        The positive class of a 1-D ``y_prob`` or of ``kind="binary"`` (see
        :func:`calibration_error`)."""


def _entry(text):
    """``text`` without its indentation, as :func:`substitute_docstring` takes it."""
    return textwrap.dedent(text).strip()


def event_params(weights):
    """The Parameters of a metric of one event (``weights``: of ``sample_weight``)."""
    return _entry(_EVENT_HEAD + weights + _EVENT_TAIL)


#: The parameter text of the public metrics, the docstring lines ``%(common)s``
#: (``y_true``, ``y_prob``), ``%(tail)s`` (``sample_weight``, ``input_type``,
#: ``labels``, ``pos_label``) and its short form without ``sample_weight``,
#: ``%(short_tail)s``.
METRIC_DOCS = {"common": _entry(_COMMON_PARAMS), "tail": _entry(_TAIL_PARAMS),
               "short_tail": _entry(_EVENT_TAIL)}


# --------------------------------------------------------------------------
# the options of the public metric functions, for sklearn's validate_params
# --------------------------------------------------------------------------

#: Constraints of every option of the public metrics
#: (:func:`sklearn.utils._param_validation.validate_params`). Arrays
#: (``y_true``, ``y_prob``, ``sample_weight``, ``labels``) and ``pos_label``
#: are left to :mod:`skcal.metrics._validation`, whose messages name the
#: problem (shapes, NaN, rows not summing to 1, unknown labels).
CONSTRAINTS = {
    "kind": [StrOptions(set(_KINDS)), Hidden(StrOptions(set(_KIND_ALIASES)))],
    "class_index": [Interval(numbers.Integral, 0, None, closed="left"), None],
    "n_bins": [Interval(numbers.Integral, 1, None, closed="left")],
    "strategy": [StrOptions(set(_STRATEGIES))],
    "norm": [StrOptions(set(_NORMS))],
    "input_type": [StrOptions({"probabilities", "logits"})],
    "scale_by_half": ["boolean", StrOptions({"auto"})],
    "n_bootstrap": [Interval(numbers.Integral, 0, None, closed="left")],
    "confidence_level": [Interval(numbers.Real, 0, 1, closed="neither")],
    "random_state": ["random_state"],
    "interval": [StrOptions({"clopper-pearson", "wilson", "jeffreys"}), None],
    "return_bandwidth": ["boolean"],
    "bandwidth": [Interval(numbers.Real, 0, 1, closed="right"), None],
    "n_points": [Interval(numbers.Integral, 2, None, closed="left")],
    "n_resamples": [Interval(numbers.Integral, 2, None, closed="left")],
    "batch": [Interval(numbers.Integral, 1, None, closed="left"), None],
}


def validated(*names, docs=None, **extra):
    """``validate_params`` for the options ``names`` of :data:`CONSTRAINTS` and ``extra``.

    Invalid options raise scikit-learn's ``InvalidParameterError`` (a
    ``ValueError`` and ``TypeError``) naming the parameter, the function, the
    accepted values and the value given. Nested validated calls are not
    validated again. NumPy scalar keyword arguments are passed on as the
    Python scalars they hold. The docstring's ``%(name)s`` lines are filled
    from :data:`METRIC_DOCS` and ``docs`` (:func:`substitute_docstring`).
    """
    constraints = {name: CONSTRAINTS[name] for name in names}
    constraints.update(extra)
    check = validate_params(constraints, prefer_skip_nested_validation=True)

    def decorate(func):
        func = substitute_docstring(func, entries={**METRIC_DOCS, **(docs or {})})
        checked = check(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            # NumPy scalar options as the Python numbers they hold, so that a
            # message reads "Got -3", not "Got np.int64(-3)"
            kwargs = {k: _plain(v) for k, v in kwargs.items()}
            return checked(*args, **kwargs)

        return wrapper

    return decorate
