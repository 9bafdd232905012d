"""dask kernels: the NumPy kernels run per row block, their sums tree-reduced.

This module exposes the kernel names of :mod:`skcal._backend._numpy`
(``temperature_nll_derivs``, ``vector_nll_grad``/``hess``/``hessp``,
``nll``, ``row_max_and_true``, ``log_softmax``, ``softmax``, ...) for a
``dask.array.Array`` of logits chunked along rows (one chunk along the
columns). Every objective kernel is one pass: the NumPy kernel runs on each
row block on the workers, its weighted *mean* is turned back into a weighted
*sum* (times the block's weight total) and the small float64 results are
summed in a tree (fan-in :data:`SPLIT_EVERY`); only those numbers reach the
client, which runs the Newton / trust-region iteration. No pass gathers the
``(n_samples, n_classes)`` matrix.

Two rules keep the number of passes low:

- **small arrays are local**: a dask array of at most :data:`LOCAL_MAX_BYTES`
  (with its labels and weights) is computed once, kept in a small cache keyed
  by the dask names, and handed to the NumPy kernels (the systematic
  subsamples of the warm starts, or a whole small calibration set);
- the per-class (one-vs-rest) maps need their 1-D score column: it is
  gathered, one class per pass, up to :data:`GATHER_MAX_ROWS` rows
  (:func:`gather_ovr_column`).

dask is imported here at module level; :mod:`skcal` imports this module only
when it is given a dask array.
"""

import functools
import math
import sys
from collections import OrderedDict

import dask
import dask.array as da
import numpy as np

from . import _numpy, _shared
from ._array import probability_log_dtype, to_numpy
from ._ovr import binary_score, ovr_column, ovr_row_stats

name = "dask"
exp = np.exp
log = np.log
output_dtype = _numpy.output_dtype

#: Dask arrays (logits plus labels and weights) up to this many bytes are
#: computed once and fitted by the NumPy kernels on the client.
LOCAL_MAX_BYTES = 64 << 20
#: Most rows of a 1-D float64 column gathered to the client (one-vs-rest
#: maps whose fit is not a sum: 2**27 rows = 1 GiB per column).
GATHER_MAX_ROWS = 1 << 27
#: Bytes of row blocks in flight while :func:`gather_rows` streams columns.
GATHER_WINDOW_BYTES = 64 << 20
#: Fan-in of the tree reduction of per-block sums.
SPLIT_EVERY = 16

_CACHE = OrderedDict()
_CACHE_ENTRIES = 4
#: as for NumPy: a lazy row subsample; NumPy arrays accepted next to dask ones
row_stride = _numpy.row_stride
from_numpy = _numpy.from_numpy


# ------------------------------------------------------------------ plumbing
def as_row_chunks(v, like):
    """``v`` (NumPy or dask, 1-D) as a dask array with the row chunks of ``like``.

    Returns None for None.
    """
    if v is None:
        return None
    if not isinstance(v, da.Array):
        return da.from_array(np.asarray(v), chunks=(like.chunks[0],))
    if v.chunks[0] != like.chunks[0]:
        v = v.rechunk((like.chunks[0],))
    return v


def _reduce(block_fn, Z, y, sw, *args, is_max=None):
    """Sum over row blocks of ``block_fn(Zb, yb, wb, *args)`` (a tuple of arrays).

    One task per row block (fused with the block's lazy validation and label
    encoding) returns the sums flattened into one row; a tree reduction
    (fan-in :data:`SPLIT_EVERY`) adds the rows and the client unpacks the
    sum. ``Z``, ``y`` or ``sw`` may be None (``block_fn`` gets None).
    ``is_max``: per part, True to combine it by its maximum (an empty block
    must give ``-inf`` there).
    """
    k = Z.shape[1] if Z is not None else 1
    empty = block_fn(
        None if Z is None else np.empty((0, k), Z.dtype),
        None if y is None else np.empty(0, np.int64),
        None if sw is None else np.empty(0), *args,
    )
    shapes = [np.shape(v) for v in empty]
    sizes = [int(np.prod(sh)) for sh in shapes]
    size = sum(sizes)
    mask = np.repeat(np.asarray(is_max or (False,) * len(sizes), bool), sizes)
    fn = functools.partial(_packed_of, block_fn=block_fn, args=args,
                           has=(Z is not None, y is not None, sw is not None))
    arrays = []
    for a, ix in ((Z, "ij"), (y, "i"), (sw, "i")):
        if a is not None:
            arrays += [a, ix if a.ndim == 2 else "i"]
    rows = da.blockwise(
        fn, "ic", *arrays, new_axes={"c": size}, adjust_chunks={"i": 1},
        concatenate=True, dtype=np.float64, meta=np.empty((0, 0)),
    )
    total = rows.sum(axis=0, split_every=SPLIT_EVERY)
    top = rows.max(axis=0, split_every=SPLIT_EVERY)
    if not mask.any():
        flat = total.compute()
    elif mask.all():
        flat = top.compute()
    else:
        flat = np.where(mask, *dask.compute(top, total))
    parts = np.split(flat, np.cumsum(sizes)[:-1])
    return tuple(float(v[0]) if sh == () else v.reshape(sh) for v, sh in zip(parts, shapes))


def _packed_of(*blocks, block_fn, args, has):
    """``block_fn``'s sums flattened into one (1, m) float64 row (``has``: which of
    Z, y, w are given)."""
    it = iter(blocks)
    parts = block_fn(*(next(it) if h else None for h in has), *args)
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in parts])[None]


def _local(Z, y=None, sw=None):
    """NumPy copies of small dask arrays (cached), or None when too large."""
    if not isinstance(Z, da.Array):
        return Z, y, sw
    size = Z.nbytes + sum(0 if v is None else v.nbytes for v in (y, sw))
    if not size <= LOCAL_MAX_BYTES:
        return None
    key = tuple(None if a is None else (a.name, a.shape) for a in (Z, y, sw))
    hit = _CACHE.get(key)
    if hit is None:
        hit = dask.compute(Z, y, sw)
        _CACHE[key] = hit
        while len(_CACHE) > _CACHE_ENTRIES:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return hit


def clear_cache():
    """Forget the local copies of small dask arrays."""
    _CACHE.clear()


# -------------------------------------------------------------- objectives
def _temperature_means(Zb, yb, wb, beta, third, second=True):
    r = _numpy.temperature_nll_derivs(Zb, yb, wb, beta, third=third, second=second)
    return np.array(r[: 2 if not second else 4 if third else 3], dtype=np.float64)


def temperature_nll_derivs(
    Z, y, sample_weight, beta, row_stats=None, third=False, return_row_stats=False,
    second=True,
):
    """:func:`skcal._backend._numpy.temperature_nll_derivs` over row blocks (one pass).

    ``row_stats`` is ignored: each block recomputes its own (from memory).
    """
    loc = _local(Z, y, sample_weight)
    if loc is not None:
        return _numpy.temperature_nll_derivs(
            *loc, beta, third=third, return_row_stats=return_row_stats, second=second
        )
    if return_row_stats:
        # only their largest gap max_k z - z_y is used (the logit scale): a
        # one-element stand-in, a maximum reduced in the same pass
        acc, W, gap = _reduce(
            _temperature_gap_block, Z, y, sample_weight, float(beta), third, second,
            is_max=(False, False, True),
        )
    else:
        acc, W = _reduce(
            _block_sums, Z, y, sample_weight, _temperature_means, float(beta), third,
            second,
        )
    out = tuple(float(v) for v in acc / W)
    if not second:
        out = out + (None,) * (2 if third else 1)
    if return_row_stats:
        out = out + ((np.array([gap]), np.array([0.0])),)
    return out


def _temperature_gap_block(Zb, yb, wb, beta, third, second=True):
    sums = _block_sums(Zb, yb, wb, _temperature_means, beta, third, second)
    return sums + _gap_block(Zb, yb, wb)


def _gap_block(Zb, yb, wb):
    if Zb.shape[0] == 0:
        return (-np.inf,)
    m, zy = _numpy.row_max_and_true(Zb, yb)
    return (float(np.max(m - zy)),)


def logit_scale(Z, y, stats):
    """:func:`skcal._backend._shared.logit_scale` of dask logits (one pass; ``stats``
    not read)."""
    loc = _local(Z, y)
    if loc is not None:
        return _shared.logit_scale(Z, y, _numpy.row_max_and_true(loc[0], loc[1]))
    (gap,) = _reduce(_gap_block, Z, y, None, is_max=(True,))
    return gap if gap > 0 else 1.0


def total(sample_weight):
    """``float(sample_weight.sum())`` of dask weights (one pass)."""
    return float(sample_weight.sum().compute())


def _block_sums(Zb, yb, wb, fn, *args):
    """``fn(Zb, yb, wb, *args)`` (weighted means) times the block's weight, and that
    weight; zeros of the same shapes for an empty block or one of weight 0."""
    W = float(Zb.shape[0]) if wb is None else float(np.sum(wb))
    if Zb.shape[0] == 0 or not W > 0:
        Zb, yb, wb, W = np.zeros((1, Zb.shape[1]), Zb.dtype), np.zeros(1, np.int64), None, 0.0
    means = fn(Zb, yb, wb, *args)
    means = means if isinstance(means, tuple) else (means,)
    return tuple(np.asarray(v, dtype=np.float64) * W for v in means) + (W,)


def _mean_over_blocks(fn, Z, y, sample_weight, *args):
    """``fn(Z, y, sample_weight, *args)`` (a NumPy kernel of weighted means), one pass:
    on the :func:`_local` copies, else per row block with its sums reduced."""
    loc = _local(Z, y, sample_weight)
    if loc is not None:
        return fn(*loc, *args)
    *sums, W = _reduce(_block_sums, Z, y, sample_weight, fn, *args)
    means = tuple(v / W for v in sums)
    return means if len(means) > 1 else means[0]


def _f64(*vectors):
    return tuple(np.asarray(v, np.float64) for v in vectors)


def vector_nll_grad(Z, y, sample_weight, w, b):
    """:func:`skcal._backend._numpy.vector_nll_grad` over row blocks (one pass)."""
    return _mean_over_blocks(_numpy.vector_nll_grad, Z, y, sample_weight, *_f64(w, b))


def vector_nll_hess(Z, y, sample_weight, w, b):
    """:func:`skcal._backend._numpy.vector_nll_hess` over row blocks (one pass)."""
    return _mean_over_blocks(_numpy.vector_nll_hess, Z, y, sample_weight, *_f64(w, b))


def vector_nll_grad_blocks(Z, y, sample_weight, w, b, single=None):
    """:func:`skcal._backend._numpy.vector_nll_grad_blocks` over row blocks (one pass)."""
    f, gw, gb, blocks = _mean_over_blocks(
        _numpy.vector_nll_grad_blocks, Z, y, sample_weight, *_f64(w, b), single
    )
    return f, gw, gb, tuple(blocks)  # the blocks of a reduction: one (3, K) array


def vector_nll_hessp(Z, y, sample_weight, w, b, vw, vb):
    """:func:`skcal._backend._numpy.vector_nll_hessp` over row blocks (one pass)."""
    return _mean_over_blocks(
        _numpy.vector_nll_hessp, Z, y, sample_weight, *_f64(w, b, vw, vb)
    )


def nll(Z, y, sample_weight=None, scale=None, bias=None):
    """:func:`skcal._backend._numpy.nll` over row blocks (one pass)."""
    return float(_mean_over_blocks(_numpy.nll, Z, y, sample_weight, scale, bias))


def mean_log_likelihood(LP, y, sample_weight=None):
    """Weighted mean of ``LP[i, y[i]]`` over row blocks (one pass)."""
    s, W = _reduce(_block_sums, LP, y, sample_weight, _numpy.mean_log_likelihood)
    return float(s / W)


def _row_stats(Zb, yb):
    return np.stack(_numpy.row_max_and_true(Zb, yb), axis=1)


def row_max_and_true(Z, y):
    """Lazy per-row maximum and true-class logit (float64, (n_samples,)), one task
    per block."""
    S = da.blockwise(
        _row_stats, "ic", Z, "ij", y, "i", new_axes={"c": 2}, concatenate=True,
        dtype=np.float64, meta=np.empty((0, 0)),
    )
    return S[:, 0], S[:, 1]


def column_ranges(Z):
    """Column minima and maxima of ``Z`` as float64 NumPy arrays (one pass)."""
    loc = _local(Z)
    if loc is not None:
        return _numpy.column_ranges(loc[0])
    neg_lo, hi = _reduce(_neg_range_block, Z, None, None, is_max=(True, True))
    return -neg_lo, hi


def _neg_range_block(Zb, yb, wb):
    """Column ``(-min, max)``; ``-inf`` for an empty block (e.g. of a group's rows)."""
    if Zb.shape[0] == 0:
        return (np.full(Zb.shape[1], -np.inf),) * 2
    lo, hi = _numpy.column_ranges(Zb)
    return -lo, hi


# -------------------------------------------------------------- prediction
def _predict_block(Zb, est, method):
    Zb, xp = est._prepare(Zb)
    out = getattr(est, method)(Zb, xp)
    return out if isinstance(out, np.ndarray) else to_numpy(out)


def log_softmax(Z, scale=None, bias=None, out=None):
    """Lazy :func:`skcal._backend._numpy.log_softmax` per row block."""
    return Z.map_blocks(
        _numpy.log_softmax, scale, bias, dtype=output_dtype(Z.dtype)
    )


def softmax(Z, scale=None, bias=None):
    """Lazy :func:`skcal._backend._numpy.softmax` per row block."""
    return Z.map_blocks(_numpy.softmax, scale, bias, dtype=output_dtype(Z.dtype))


def argmax_rows(P):
    """Lazy column index of each row's largest entry (int64 of shape (n_samples,))."""
    return P.map_blocks(_numpy.argmax_rows, drop_axis=1, dtype=np.int64)


def take_labels(idx, classes):
    """Lazy ``classes[idx]`` (labels of the predicted columns)."""
    return idx.map_blocks(_numpy.take_labels, classes, dtype=classes.dtype)


# ----------------------------------------------------- one-vs-rest columns
def _ovr_score_block(Zb, k):
    if k is None:  # binary: s = z_1 - z_0
        return np.asarray(binary_score(Zb), dtype=np.float64)
    return ovr_column(Zb, k, ovr_row_stats(Zb))


def gather_ovr_column(Z, y, sample_weight, k):
    """One class's one-vs-rest score column, targets and weights, gathered (one pass).

    Parameters
    ----------
    Z : dask.array.Array of shape (n_samples, n_classes)
    y : dask.array.Array of shape (n_samples,), int64
    sample_weight : dask.array.Array of shape (n_samples,) or None
    k : int or None
        The class; None for the binary score ``z_1 - z_0`` (targets ``y == 1``).

    Returns
    -------
    s : ndarray of shape (n_samples,), float64
    t : ndarray of shape (n_samples,), bool
    sample_weight : ndarray of shape (n_samples,), float64, or None

    Raises
    ------
    ValueError
        If ``n_samples`` exceeds :data:`GATHER_MAX_ROWS`.
    """
    n = Z.shape[0]
    if n > GATHER_MAX_ROWS:
        raise ValueError(
            f"This per-class calibrator fits a 1-D map on each class's score column, "
            f"which on a dask array is gathered to the client: {n} rows exceed "
            f"skcal._backend._dask.GATHER_MAX_ROWS = {GATHER_MAX_ROWS} "
            f"({GATHER_MAX_ROWS * 8 / 2**30:.2g} GiB of float64). Fit on a subsample "
            "or raise the limit if the client has the memory."
        )
    loc = _local(Z, y, sample_weight)
    if loc is not None:
        Zl, yl, wl = loc
        return _ovr_score_block(Zl, k), yl == (1 if k is None else k), wl
    s = Z.map_blocks(_ovr_score_block, k, drop_axis=1, dtype=np.float64)
    t = y == (1 if k is None else k)
    return gather_rows(s, t, sample_weight)


def gather_rows(*arrays):
    """1-D dask arrays (or None) with equal row chunks, as NumPy arrays on the client.

    On a dask.distributed client the row blocks are fetched as they finish and
    released at once (``as_completed``): a worker holds only the blocks in
    flight, not its share of the columns; otherwise one ``dask.compute``.
    """
    distributed = sys.modules.get("distributed")  # never imported here
    try:
        client = distributed and distributed.get_client()
    except ValueError:  # no active client
        client = None
    present = [a for a in arrays if a is not None]
    if client is None or not present:
        return dask.compute(*arrays)
    n = present[0].shape[0]
    outs = [None if a is None else np.empty(n, dtype=a.dtype) for a in arrays]
    bounds = np.concatenate([[0], np.cumsum(present[0].chunks[0])])
    blocks = [
        [a.blocks[i] for a in present] for i in range(len(present[0].chunks[0]))
    ]
    pack = dask.delayed(_as_tuple, pure=True)
    # in flight: two blocks per worker, or more small ones up to
    # GATHER_WINDOW_BYTES (tiny blocks would otherwise cost a round trip each)
    row_bytes = sum(a.dtype.itemsize for a in present)
    biggest = max(present[0].chunks[0]) * row_bytes
    window = max(
        2 * len(client.scheduler_info().get("workers", ())) or 4,
        GATHER_WINDOW_BYTES // max(biggest, 1),
    )
    futures = {}

    def submit(i):
        fut = client.compute(pack(*blocks[i]))  # one future per row block
        futures[fut] = i
        return fut

    todo = min(window, len(blocks))
    ac = distributed.as_completed([submit(i) for i in range(todo)], with_results=True)
    for fut, vals in ac:
        i = futures.pop(fut)
        for o, v in zip([o for o in outs if o is not None], vals):
            o[bounds[i]:bounds[i + 1]] = v
        fut.release()
        if todo < len(blocks):
            ac.add(submit(todo))
            todo += 1
    return tuple(outs)


def _as_tuple(*values):
    return values


# -------------------------------------------------------------- validation
def _check_block(Xb, input_type, name, check_block):
    if Xb.shape[0] == 0:
        k = 2 if Xb.ndim == 1 or Xb.shape[1] == 1 else Xb.shape[1]
        return np.empty((0, k), dtype=_checked_dtype(Xb.dtype, input_type))
    return check_block(Xb, input_type=input_type, name=name)[0]


def _checked_dtype(dtype, input_type):
    """The dtype of the checked logits of input of ``dtype`` (float16 probabilities: float32)."""
    dtype = dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)
    return probability_log_dtype(dtype) if input_type == "probabilities" else dtype


def check_scores(X, input_type, name, check_block):
    """Lazy, blockwise :func:`skcal.utils.validation.check_scores` of a dask array.

    Shape and dtype are checked at once; each row block by the NumPy check
    ``check_block(Xb, input_type=..., name=...)`` (passed in, returning
    ``(Z, n_input_columns)``) when it is computed, whose ``ValueError`` (NaN,
    infinity, huge logits, invalid probabilities) is raised then.

    Returns
    -------
    Z : dask.array.Array of shape (n_samples, n_columns)
        Logits, one chunk along the columns, the row chunks of ``X``.
    n_input_columns : int
    """
    _shared.check_shape(X, name)
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            f"Input {name} is a dask array with unknown chunk sizes; call "
            "X.compute_chunk_sizes() first."
        )
    if X.dtype.kind not in "fiub":
        raise ValueError(f"Input {name} has dtype {X.dtype}; expected real numbers.")
    n_cols = 1 if X.ndim == 1 else X.shape[1]
    if X.ndim == 2 and len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    k = 2 if n_cols == 1 else n_cols
    dtype = _checked_dtype(X.dtype, input_type)
    Z = X.map_blocks(
        _check_block, input_type, name, check_block, chunks=(X.chunks[0], (k,)),
        dtype=dtype, meta=np.empty((0, k), dtype=dtype),
        **({"new_axis": 1} if X.ndim == 1 else {}),
    )
    return Z, n_cols


def _check_weight_block(wb):
    wb = np.asarray(wb, dtype=np.float64)  # 1-D: checked at once below
    if not np.isfinite(wb).all():
        raise ValueError("sample_weight contains NaN or infinity.")
    if (wb < 0).any():
        raise ValueError("sample_weight has negative values; weights must be >= 0.")
    return wb


def check_sample_weight(sample_weight, like, relative=False):
    """Validate dask (or NumPy) weights for dask logits ``like``; one pass over them.

    A float64 dask array with the row chunks of ``like`` (divided by its
    maximum when ``relative``, unless whole numbers), or None; the errors of
    :func:`skcal.utils.validation.check_sample_weight`.
    """
    if sample_weight is None:
        return None
    n = like.shape[0]
    if not isinstance(sample_weight, da.Array):
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
    if sample_weight.ndim == 0:
        sw = da.full(n, float(sample_weight), chunks=(like.chunks[0],))
    else:
        sw = sample_weight
        if sw.ndim != 1:
            raise ValueError(
                "sample_weight must be 1-D (one weight per sample), got shape "
                f"{sw.shape}."
            )
        if sw.shape[0] != n:
            raise ValueError(
                f"sample_weight has {sw.shape[0]} entries (shape {sw.shape}) but "
                f"there are {n} samples; pass one weight per sample."
            )
        sw = as_row_chunks(sw, like)
    sw = sw.map_blocks(_check_weight_block, dtype=np.float64)
    with np.errstate(over="ignore"):
        total, top, whole = dask.compute(sw.sum(), sw.max(), (sw == da.rint(sw)).all())
    if not top > 0:
        raise ValueError("sample_weight sums to 0: every weight is zero.")
    if not np.isfinite(total):
        raise ValueError(
            f"sample_weight sums to {total} (float64 overflow); rescale the weights."
        )
    # whole numbers (at most 2**53) are kept as they are, as by the NumPy
    # check (skcal.utils._weights.is_whole_number_weights): repetition counts
    return sw / top if relative and not (whole and top <= 2.0 ** 53) else sw


def _encode_block(yb, classes, encode):
    return encode(classes, np.asarray(yb))


def encode_labels(y, classes, like, *, encode):
    """Lazy encoding of dask (or NumPy) labels ``y`` as positions in ``classes``.

    int64, the row chunks of ``like``; each block by ``encode(classes, yb)``
    (passed in), whose error for an unknown label is raised when computed.
    """
    y = as_row_chunks(y, like)
    return y.map_blocks(_encode_block, classes, encode, dtype=np.int64)


def unique_labels(y):
    """Sorted unique labels of a dask (or NumPy) 1-D array (one pass over ``y``)."""
    if isinstance(y, da.Array):
        return np.asarray(da.unique(y).compute())
    return np.unique(np.asarray(y))


# ---------------------------------------------------- a calibrator's inputs
def predict_with(est, method, Z):
    """Lazy ``est.<method>(*est._prepare(block))`` (a private predict hook) per row
    block of ``Z``."""
    dtype = output_dtype(Z.dtype)
    return Z.map_blocks(
        _predict_block, est, method, dtype=dtype, meta=np.empty((0, 0), dtype)
    )


def predict_index(est, Z):
    """Lazy argmax of ``est``'s probabilities, per row block (int64)."""
    return argmax_rows(predict_with(est, "_predict_proba", Z))


def take_columns(Z, idx):
    """Columns ``idx`` (a NumPy integer array) of ``Z`` (lazy)."""
    return Z[:, idx]


def labels_1d(y):
    """Dask labels ``y`` kept lazy (1-D required); other labels as a 1-D NumPy array."""
    if not isinstance(y, da.Array):
        return _numpy.labels_1d(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got a dask array of shape {y.shape}.")
    return y


def score_log_likelihood(LP, y, sample_weight, like, *, check=None):
    """Weighted mean of ``LP[i, y[i]]`` over the row blocks (one pass; weights
    checked by :func:`check_sample_weight`, ``check`` not used)."""
    return mean_log_likelihood(LP, y, check_sample_weight(sample_weight, like))


#: a metric without a dask path reads its input as NumPy (computed once)
numpy_view = _numpy.numpy_view
metric_scores = _numpy.metric_scores


def fit_inputs(est, Z, y, sample_weight, *, check=None):
    """The inputs of ``est._fit``, ``(Z, y_enc, sample_weight, xp)``, kept lazy.

    Refuses a calibrator without ``_dask_fit`` (and ``est._prepare``
    ``backend="torch"``); ``check`` is not used.
    """
    if not est._dask_fit:
        raise ValueError(
            f"{est.__class__.__name__}.fit does not run on dask arrays (its "
            "fit is not written as passes of skcal's kernels); fit it on a "
            "NumPy array (e.g. a subsample, X[::step].compute()). Its "
            "predictions do accept dask arrays."
        )
    Z, xp = est._prepare(Z)
    y_enc = est._encode_y_dask(y, Z, xp)
    Z = est._sort_columns(Z)
    return Z, y_enc, check_sample_weight(sample_weight, Z, relative=True), xp


def rows_all_equal(Z):
    """False: constant rows are not looked for in a dask array (a pass over it)."""
    return False


def row_spans(Z):
    """None: no pass over a dask array is made for a message."""
    return None


checked_float_array = _numpy.checked_float_array


def fit_ovr_maps(est, Z, y, sample_weight):
    """The per-class maps of the one-vs-rest calibrator ``est``: one pass per class.

    Only one class's float64 score column (:func:`gather_ovr_column`), its
    targets and weights are on the client at a time.
    """
    if Z.shape[1] == 2:
        return [est._fit_class(*gather_ovr_column(Z, y, sample_weight, None), 1)]
    return [est._fit_class(*gather_ovr_column(Z, y, sample_weight, k), k)
            for k in range(Z.shape[1])]
