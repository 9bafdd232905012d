"""Rows by group id, for :class:`skcal.GroupedCalibrator`, on NumPy or dask arrays.

The group ids, their row counts and (dask) their rows per row block are
found in one pass; each group's rows are then selected in memory (NumPy
arrays, pandas frames) or lazily with known chunk sizes (dask arrays), and
predictions are computed block by block. The estimator code above asks
nothing about the array library.
"""

import numpy as np

from ._array import is_dask_array

__all__ = ["as_groups", "group_sizes", "group_rows", "id_kind", "map_rows", "labels_of",
           "take_rows"]


def _missing_ids(groups):
    """Boolean mask of NaN / None entries of a 1-D NumPy array of group ids."""
    if groups.dtype.kind == "f":
        return np.isnan(groups)
    if groups.dtype.kind == "O":
        return np.array([g is None or (isinstance(g, float) and g != g) for g in groups],
                        dtype=bool)
    return np.zeros(groups.shape[0], dtype=bool)


def as_groups(groups, n, like=None):
    """``groups`` as a 1-D array of ``n`` ids (NumPy, or dask left lazy).

    Dask ids for rows ``like`` held in memory are computed.

    Raises
    ------
    ValueError
        If the length differs from ``n`` or (in memory) an id is NaN / None.
    """
    from sklearn.utils.validation import column_or_1d

    if is_dask_array(groups) and not is_dask_array(like):
        groups = groups.compute()
    if not is_dask_array(groups):
        groups = column_or_1d(np.asarray(groups))
    if groups.shape[0] != n:
        raise ValueError(f"groups has {groups.shape[0]} entries but X has {n} rows.")
    if not is_dask_array(groups):
        missing = _missing_ids(groups)
        if missing.any():
            raise ValueError(
                f"groups has {int(missing.sum())} missing ids (NaN / None), e.g. at row "
                f"{int(np.flatnonzero(missing)[0])}; every row needs a group id."
            )
    return groups


def id_kind(a):
    """"text", "bool" or "number" for an array of group ids (None: unknown / mixed)."""
    kind = a.dtype.kind if is_dask_array(a) else np.asarray(a).dtype.kind
    if kind in "US":
        return "text"
    if kind == "b":
        return "bool"
    if kind in "iuf":
        return "number"
    if kind == "O" and not is_dask_array(a) and len(a):
        kinds = {"text" if isinstance(v, str) else "bool" if isinstance(v, (bool, np.bool_))
                 else "number" if isinstance(v, (int, float, np.number)) else None
                 for v in a}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _unique_counts(b):
    return np.unique(np.asarray(b), return_counts=True)


def group_sizes(groups):
    """Sorted unique ids, their row counts, and their rows per row block.

    Returns ``(ids, counts, per_block)``: ``per_block`` is None for NumPy
    ids; for dask ids (one job) an int64 array of shape ``(len(ids),
    n_blocks)``, the rows of each id in each row block.
    """
    if not is_dask_array(groups):
        ids, counts = np.unique(groups, return_counts=True)
        return ids, counts, None
    import dask

    parts = dask.compute(*[dask.delayed(_unique_counts)(b)
                           for b in groups.to_delayed().ravel()])
    ids = np.unique(np.concatenate([u for u, _ in parts]))
    per_block = np.zeros((len(ids), len(parts)), dtype=np.int64)
    for b, (u, c) in enumerate(parts):
        per_block[np.searchsorted(ids, u), b] = c
    return ids, per_block.sum(axis=1), per_block


def take_rows(v, mask):
    """Rows ``mask`` of a NumPy array or a pandas frame (positions)."""
    if hasattr(v, "iloc"):
        return v.iloc[np.flatnonzero(mask)]
    return np.asarray(v)[mask]


def group_rows(groups, g, arrays, per_block=None):
    """The rows of group ``g`` of each of ``arrays`` (None and scalars kept as is).

    ``arrays``: NumPy arrays or frames (with NumPy ``groups``) or dask
    arrays (with dask ``groups``; a NumPy 1-D array among them is chunked
    like the first). ``per_block``: dask only, the rows of ``g`` in each row
    block (:func:`group_sizes`), set as the selections' chunks.
    """
    if not is_dask_array(groups):
        # a frame stays one (every calibrator records its column names)
        mask = groups == g
        return [v if v is None or not np.ndim(v) else take_rows(v, mask)
                for v in arrays]
    from ._dask import as_row_chunks

    like = arrays[0]
    mask = as_row_chunks(groups, like) == g
    rows = tuple(int(c) for c in per_block)
    out = []
    for v in arrays:
        if v is None or not np.ndim(v):
            out.append(v)
            continue
        v = as_row_chunks(v, like) if np.ndim(v) == 1 else v
        v = v[mask]
        v._chunks = (rows,) + v.chunks[1:]  # as compute_chunk_sizes would set them
        out.append(v)
    return out


def _block(Xb, gb, fn, squeeze):
    return fn(Xb[:, 0] if squeeze else Xb, gb)


def map_rows(fn, X, groups, n_out):
    """``fn(X, groups)``, row block by row block for dask (lazy, X's row chunks).

    ``fn`` maps NumPy rows (``Xb``, 2-D; or 1-D when ``X`` is) and their ids
    to an ``(n_rows, n_out)`` array (float64 for float64 ``X``, else float32).
    """
    if not is_dask_array(X):
        return fn(X, groups)
    import dask.array as da

    from ._dask import as_row_chunks

    groups = as_row_chunks(groups, X)
    dtype = np.float64 if X.dtype == np.float64 else np.float32
    X2 = X if X.ndim == 2 else X[:, None]
    if len(X2.chunks[1]) > 1:
        X2 = X2.rechunk({1: -1})
    return da.blockwise(
        _block, "ij", X2, "ik", groups, "i", fn, None, X.ndim == 1, None,
        new_axes={"j": n_out}, concatenate=True, dtype=dtype,
        meta=np.empty((0, 0), dtype),
    )


def labels_of(P, classes):
    """``classes`` of each row's most probable column (lazy for dask)."""
    if is_dask_array(P):
        from ._dask import argmax_rows, take_labels

        return take_labels(argmax_rows(P), classes)
    return classes[np.argmax(P, axis=1)]
