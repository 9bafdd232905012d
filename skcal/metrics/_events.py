"""Per-row event vectors shared by the interval, test, smooth and decomposition metrics.

A calibration *event* pairs a float64 score ``s_i`` with a 0/1 outcome
``o_i``: the top-label confidence and whether the predicted class is right,
or the probability of one class and whether it is the true class. These
metrics need the rows of one event at a time (not just per-bin sums): the
``(n_samples,)`` vectors, produced chunk by chunk by :mod:`skcal.metrics._rows`
and returned as NumPy arrays.

Quantities that count samples (debiasing terms, binomial intervals, the
tests' variances) read ``sample_weight`` as *frequency* weights, on the scale
given (:func:`skcal.metrics._compute.frequency_weights`): a weight of 2 is
the row repeated.
"""

import numpy as np

from . import _rows
from ._compute import frequency_weights
from ._params import _check_kind
from ._validation import _check_inputs

__all__ = ["event_groups", "event_vectors", "single_event"]


def single_event(y_true, y_prob, kind, class_index, sample_weight, input_type, labels,
                 *, what, pos_label=None, unit_weights=False):
    """``(s, o, w)`` of the public metric ``what`` of one event (its arguments).

    The :func:`event_vectors` and the frequency weights (None without
    ``sample_weight``, or ones with ``unit_weights``).
    """
    kind = _check_kind(kind, class_index, one_event=what)
    inp = _check_inputs(
        y_true, y_prob, sample_weight=sample_weight, input_type=input_type,
        labels=labels, pos_label=pos_label, binary=kind == "binary",
    )
    s, o = event_vectors(inp, kind, class_index)
    w = frequency_weights(sample_weight, inp)
    if w is None and unit_weights:
        w = np.ones_like(s)
    return s, o, w


def event_vectors(inp, kind, class_index=None):
    """Float64 NumPy ``(score, outcome)`` vectors of one event, shape ``(n,)`` each.

    ``kind`` is ``"top-label"``, ``"binary"`` or ``"classwise"`` (with
    ``class_index``), as in :func:`~skcal.metrics.calibration_error`.
    """
    xp = _rows.ops(inp)
    chunks = _rows.event_chunks(inp, xp, kind, class_index)
    return _gather(xp, inp.scores.shape[0], chunks)


def _gather(xp, n, chunks):
    """NumPy ``(n,)`` score and outcome vectors from ``(rows, score, outcome)`` chunks."""
    s, o = xp.empty(n), xp.empty(n)
    for sl, x, t in chunks:
        s[sl], o[sl] = x, t
    return xp.to_numpy(s), xp.to_numpy(o)


def event_groups(inp, kind, class_index=None):
    """``(n_groups, iterator of (score, outcome))``: the float64 NumPy vectors of
    every class for ``kind="classwise"`` without ``class_index``, else of the one
    event of :func:`event_vectors`."""
    if kind == "classwise" and class_index is None:
        xp = _rows.ops(inp)
        return _rows.n_columns(inp), (_gather(xp, inp.scores.shape[0], chunks)
                                      for _, chunks in _rows.each_class_chunks(inp, xp))
    return 1, iter([event_vectors(inp, kind, class_index)])
