"""The metrics on dask arrays: per-block sums of the NumPy code, tree-reduced.

Imported only when a metric receives a ``dask.array.Array`` ``y_prob``. The
classes are decided on the client from the unique labels (one pass over
``y_true``, by the rule of the NumPy metrics); each block is then encoded
against them, and validated by the NumPy checks when it is computed (errors
are raised at that pass). One more pass sums each block's weighted row terms
(Brier, NLL) or per-bin sums (uniform bins, which add up exactly); equal-mass
bins gather one group's scores to the client (:func:`_quantile_groups`). The
bootstrap of ``reliability_curve`` is refused; its binomial ``interval`` comes
from the summed bins. The values come from the same functions as for NumPy
and torch (:mod:`skcal.metrics._compute`).
"""

import functools

import dask
import dask.array as da
import numpy as np

from .._backend import _dask, _numpy
from ..utils._labels import encode_labels
from ..utils.validation import (
    PREDICT_PROBABILITY_CHECK_ROWS,
    _warn_if_probabilities,
    min_max,
    probability_row_tolerance,
)
from . import _rows
from ._compute import bin_sums as _numpy_bin_sums
from ._params import _class_index
from ._validation import (
    _Inputs,
    _check_finite,
    _check_n_bins,
    _check_proba_values,
    _encode_labels,
    _n_classes,
)

__all__ = ["bin_sums", "row_mean"]


class _BlockSpec:
    """What a worker needs to validate and encode one NumPy row block (no dask arrays)."""

    def __init__(self, classes, binary_1d, input_type, pos_index=1):
        self.classes, self.binary_1d, self.input_type = classes, binary_1d, input_type
        self.logits, self.pos_index = input_type == "logits", pos_index

    def __call__(self, pb, yb, wb=None):
        """The NumPy metrics' validated inputs of one row block."""
        pb = np.asarray(pb)
        if not np.issubdtype(pb.dtype, np.floating):
            pb = pb.astype(np.float64)
        if pb.shape[0]:
            lo, hi = min_max(pb)
            _check_finite(lo, hi, self.input_type)
            if not self.logits:
                tol = probability_row_tolerance(pb.dtype)
                _check_proba_values(pb, lo, hi, self.binary_1d, tol)
        y_idx = encode_labels(self.classes, np.asarray(yb))
        return _Inputs(
            y_idx, pb, self.logits, wb, self.classes, self.binary_1d, self.pos_index,
        )


class _DaskInputs:
    """Validated dask inputs: scores, labels and weights with the same row chunks."""

    def __init__(self, y_true, y_prob, sample_weight, input_type, labels,
                 pos_label=None, binary=False):
        if y_prob.ndim not in (1, 2):
            raise ValueError(f"y_prob must be 1-D or 2-D, got shape {y_prob.shape}.")
        if y_prob.shape[0] == 0:
            raise ValueError("y_true is empty; at least one sample is required.")
        if y_prob.dtype.kind not in "fiub":
            raise ValueError(f"y_prob has dtype {y_prob.dtype}; expected real numbers.")
        if y_prob.ndim == 2 and len(y_prob.chunks[1]) > 1:
            y_prob = y_prob.rechunk({1: -1})
        binary_1d = y_prob.ndim == 1 or y_prob.shape[1] == 1
        if y_prob.ndim == 2 and binary_1d:
            y_prob = y_prob[:, 0]
        if getattr(y_true, "ndim", 1) != 1:
            raise ValueError(
                f"y_true must be 1-D of shape (n_samples,), got shape {y_true.shape}."
            )
        self.n_classes = _n_classes(y_prob.shape, binary_1d, len(y_true))
        # the classes from the unique labels, by the NumPy metrics' rule
        _, classes, pos = _encode_labels(
            _dask.unique_labels(y_true), self.n_classes, labels, binary_1d, pos_label,
            binary,
        )
        self.block = _BlockSpec(classes, binary_1d, input_type, pos)
        if input_type == "logits":
            # the calibrators' rule for probabilities read as logits, on the first
            # rows (as their dask predictions); the NumPy metrics judge every row
            head = np.asarray(y_prob[:PREDICT_PROBABILITY_CHECK_ROWS].compute())
            lo, hi = min_max(head) if head.dtype.kind == "f" else (0.0, 0.0)
            if np.isfinite(lo) and np.isfinite(hi):  # NaN / inf: the blocks report
                _warn_if_probabilities(head, lo, hi, name="y_prob")
        self.p = y_prob
        self.y = _dask.as_row_chunks(y_true, y_prob)
        self.w = _dask.check_sample_weight(sample_weight, y_prob, relative=True)
        self.sample_weight = sample_weight

    def frequency_scale(self):
        """The factor that turns the relative weights back into counts (1 for whole numbers)."""
        if self.w is None:
            return 1.0
        top, rel = dask.compute(da.max(da.asarray(self.sample_weight)), self.w.max())
        return float(top) / float(rel)

    def arrays(self):
        """(array, index) pairs for ``da.blockwise``: scores, labels, weights."""
        out = [self.p, "i" if self.p.ndim == 1 else "ij", self.y, "i"]
        return out if self.w is None else out + [self.w, "i"]


def _sum_blocks(inputs, block_fn, shapes):
    """One pass: ``block_fn(numpy_inputs)`` (a tuple of arrays of ``shapes``) summed over blocks."""
    sizes = [int(np.prod(s)) for s in shapes]
    spec = inputs.block

    def packed(*blocks):
        parts = block_fn(spec(*blocks))
        return np.concatenate([np.ravel(np.asarray(v, np.float64)) for v in parts])[None]

    rows = da.blockwise(
        packed, "ic", *inputs.arrays(), new_axes={"c": sum(sizes)},
        adjust_chunks={"i": 1}, concatenate=True, dtype=np.float64,
        meta=np.empty((0, 0)),
    )
    flat = rows.sum(axis=0, split_every=_dask.SPLIT_EVERY).compute()
    parts = np.split(flat, np.cumsum(sizes)[:-1])
    return [part.reshape(s) for part, s in zip(parts, shapes)]


def row_mean(terms, y_true, y_prob, sample_weight, input_type, labels, pos_label):
    """``(weighted mean of terms(inp, xp), n_classes)`` from per-block sums (one pass),
    ``terms`` a per-row function of :mod:`skcal.metrics._rows`."""
    inp = _DaskInputs(y_true, y_prob, sample_weight, input_type, labels, pos_label)

    def block(b):
        if b.scores.shape[0] == 0:
            return 0.0, 0.0
        values = terms(b, _rows.ops(b))
        if b.weight is None:
            return float(np.sum(values)), float(values.shape[0])
        return float(np.dot(b.weight, values)), float(np.sum(b.weight))

    s, W = _sum_blocks(inp, block, [(), ()])
    return float(s / W), inp.n_classes


_FIELDS = ("count", "weight", "score_sum", "target_sum")


def _uniform_groups(inp, kind, n_bins, class_index):
    """Per-bin sums of every group (the NumPy ``bin_sums`` per block, summed)."""
    n_groups = inp.n_classes if kind == "classwise" and class_index is None else 1

    def block(b):
        if b.scores.shape[0] == 0:
            return (np.zeros((n_groups, 4, n_bins)),)
        groups = _numpy_bin_sums(b, kind, n_bins, "uniform", class_index)
        return (np.array([[g[f] for f in _FIELDS] for g in groups], dtype=np.float64),)

    (S,) = _sum_blocks(inp, block, [(n_groups, 4, n_bins)])
    xp = _numpy.MetricOps
    acc = _rows._BinSums(xp, n_groups, n_bins)
    acc.count, acc.weight, acc.score, acc.target = S.transpose(1, 0, 2).reshape(4, -1)
    return acc.groups(xp.uniform_edges(n_bins))


def _event_block(pb, yb, wb=None, *, spec, kind, k):
    b = spec(pb, yb, wb)
    if b.scores.shape[0] == 0:
        return np.empty((0, 2))
    chunks = _rows.event_chunks(b, _rows.ops(b), kind, k)
    parts = [np.stack([x, t], axis=1) for _, x, t in chunks]
    return np.concatenate(parts) if parts else np.empty((0, 2))


def _quantile_groups(inp, kind, n_bins, class_index):
    """Equal-mass bins: per group, gather the 1-D scores and targets, bin them with NumPy."""
    n = inp.p.shape[0]
    if n > _dask.GATHER_MAX_ROWS:
        raise ValueError(
            f"Equal-mass bins need the quantiles of all {n} scores: on a dask array "
            "one group's scores are gathered to the client, at most "
            f"skcal._backend._dask.GATHER_MAX_ROWS = {_dask.GATHER_MAX_ROWS} rows. "
            "Use strategy='uniform' (one distributed pass), or raise the limit."
        )
    if kind == "top-label":
        ks = [None]
    elif kind == "classwise" and class_index is None:
        ks = list(range(inp.n_classes))
    else:
        ks = [_class_index(kind, class_index, inp.n_classes, inp.block.pos_index)]
    out = []
    for k in ks:
        fn = functools.partial(_event_block, spec=inp.block, kind=kind, k=k)
        ev = da.blockwise(
            fn, "ic", *inp.arrays(), new_axes={"c": 2}, concatenate=True,
            dtype=np.float64, meta=np.empty((0, 0)),
        )
        x, t, w = _dask.gather_rows(ev[:, 0], ev[:, 1], inp.w)
        # the event as a binary problem: probability x of the outcome t
        local = _Inputs(t.astype(np.int64), x, False, w, np.array([0, 1]), True)
        (s,) = _numpy_bin_sums(local, "binary", n_bins, "quantile", None)
        out.append(s)
    return out


def bin_sums(
    y_true, y_prob, *, kind, class_index, n_bins, strategy, sample_weight,
    input_type, labels, pos_label, counts=False, keep=False,
):
    """``(groups, scale)``: the dask side of ``_calibration_error._binned``.

    The groups of :func:`skcal.metrics._compute.bin_sums` (to the rounding of
    the block sums); ``keep`` (the rows of a bootstrap) is an error.
    """
    if keep:
        raise ValueError(
            "reliability_curve on a dask array does not support n_bootstrap > 0 "
            "(the bootstrap resamples rows); use interval= (binomial intervals "
            "from the per-bin sums, computed in one distributed pass), or compute "
            "it on a NumPy subsample."
        )
    inp = _DaskInputs(y_true, y_prob, sample_weight, input_type, labels,
                      pos_label, kind == "binary")
    n_bins = _check_n_bins(n_bins, inp.p.shape[0])
    groups = (_uniform_groups if strategy == "uniform" else _quantile_groups)(
        inp, kind, n_bins, class_index
    )
    return groups, (inp.frequency_scale() if counts else 1.0)
