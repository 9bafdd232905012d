"""One-vs-rest score kernels and small array helpers, for NumPy arrays and torch tensors.

Written once for both array libraries: each function dispatches on the type of
its input (a ``torch.Tensor`` is computed on its own device; torch is never
imported here, only looked up in ``sys.modules`` once the caller has passed a
tensor). The per-class calibrators (:mod:`skcal.ovr`) use these to turn a
logit matrix into one-vs-rest log-odds scores, walk it in row chunks, and
combine per-class probabilities.
"""

import math
import sys

import numpy as np
from scipy.special import expit, log_expit

from . import _numpy
from ._array import is_torch_tensor, to_numpy

def _torch_of(x):
    """The torch module if ``x`` is a tensor, else None (torch is not imported here)."""
    return sys.modules["torch"] if is_torch_tensor(x) else None


def _work_dtype(Z):
    """float64 for computing on Z's array type (float32 on MPS, which lacks float64)."""
    torch = _torch_of(Z)
    if torch is None:
        return np.float64
    return torch.float32 if Z.device.type == "mps" else torch.float64


def out_dtype(Z):
    """Output dtype: float64 for float64 logits, float32 otherwise (as the kernels)."""
    torch = _torch_of(Z)
    if torch is None:
        return _numpy.output_dtype(Z.dtype)
    return torch.float64 if Z.dtype == torch.float64 else torch.float32


def ovr_log_odds(Zc):
    """One-vs-rest log-odds ``s_ik = log p_ik - log(1 - p_ik)``, ``p_i = softmax(z_i)``.

    Parameters
    ----------
    Zc : ndarray or torch.Tensor of shape (n_rows, n_classes)
        Logits (any float dtype), ``n_classes >= 2``.

    Returns
    -------
    S : ndarray or torch.Tensor of shape (n_rows, n_classes)
        float64 (float32 on MPS), on the device of ``Zc``. For two classes
        ``S = [z0 - z1, z1 - z0]`` exactly.

    Notes
    -----
    ``s_ik = z_ik - log sum_{j != k} exp(z_ij)``, which does not change when a
    constant is added to a row. For ``k`` other than the row's arg-max ``a``,
    ``log sum_{j != k} exp(z_ij) = m + log(S - exp(z_ik - m))`` with
    ``m = z_ia`` and ``S = sum_j exp(z_ij - m) >= 1 + exp(z_ik - m)``, so the
    argument of the log is at least 1 and nothing cancels. For ``k = a`` the
    sum over ``j != a`` is computed directly around the second-largest logit.
    """
    if Zc.shape[1] == 2:
        d = binary_score(Zc)
        return stack_columns([-d, d])
    torch = _torch_of(Zc)
    if torch is not None:
        A = Zc.to(_work_dtype(Zc))
        m1, a1 = A.max(dim=1, keepdim=True)
        E = torch.exp(A - m1)
        rest = E.sum(dim=1, keepdim=True) - E
        top = torch.zeros_like(A, dtype=torch.bool).scatter_(1, a1, True)
        L = m1 + torch.log(torch.where(top, torch.ones_like(rest), rest))
        A2 = A.masked_fill(top, -math.inf)
        m2 = A2.max(dim=1, keepdim=True).values
        l_top = m2 + torch.log(torch.exp(A2 - m2).sum(dim=1, keepdim=True))
        L = torch.where(top, l_top, L)
        return A - L
    A = np.asarray(Zc, dtype=np.float64)
    stats, E = _ovr_row_stats(A, keep_exp=True)
    return _ovr_columns(A, stats, np.arange(A.shape[1]), E=E)


#: Below this sum of ``exp(z_j - max)`` over the non-arg-max entries the
#: arg-max entry's log-sum is recomputed around the second-largest logit
#: (the terms may have underflowed).
TINY_REST = 1e-280


def _ovr_row_stats(A, keep_exp=False, out=None):
    """Row statistics of float64 logits ``A`` (n_rows, K >= 3): any column's log-odds.

    ``(a1, m1, total, l_top)``, each (n_rows,): the arg-max column, the row
    maximum, ``sum_j exp(z_j - m1) >= 1`` and ``log sum_{j != a1} exp(z_j)``;
    with ``keep_exp`` also the work matrix ``exp(A - m1)`` (arg-max entries 0,
    written into ``out`` if given).
    """
    rows = np.arange(A.shape[0])
    a1 = A.argmax(axis=1)
    m1 = A[rows, a1]
    E = np.subtract(A, m1[:, None], out=out)
    np.exp(E, out=E)
    E[rows, a1] = 0.0
    rest = E.sum(axis=1)
    with np.errstate(divide="ignore"):
        l_top = m1 + np.log(rest)
    bad = np.flatnonzero(~(rest >= TINY_REST))
    if bad.size:
        l_top[bad] = _log_rest(A, a1, bad)
    stats = (a1, m1, 1.0 + rest, l_top)
    return (stats, E) if keep_exp else stats


def _log_rest(A, a1, bad):
    """``log sum_{j != a1} exp(A_ij)`` of the rows ``bad``, float64, shifted by the 2nd max."""
    A2 = A[bad].astype(np.float64, copy=False)  # a copy: A[bad] is one
    A2[np.arange(bad.size), a1[bad]] = -np.inf
    m2 = A2.max(axis=1, keepdims=True)
    return (m2 + np.log(np.exp(A2 - m2).sum(axis=1, keepdims=True)))[:, 0]


def _ovr_columns(Ac, stats, cols, E=None):
    """Float64 one-vs-rest log-odds (n_rows, len(cols)) of the columns ``cols``.

    ``Ac``: the float64 logits of those columns (all of them when ``E``, the
    overwritten ``exp(A - m1)`` of all columns, is given); ``stats``:
    :func:`_ovr_row_stats` of the rows. ``z_ik - l_top_i`` at the arg-max,
    :func:`_off_top_scores` elsewhere, as in :func:`ovr_log_odds`.
    """
    a1, m1, total, l_top = stats
    E = _off_top_scores(Ac, m1[:, None], total[:, None], E)
    r, j = _top_entries(a1, cols, int(max(a1.max(initial=0), cols.max(initial=0))) + 1)
    E[r, j] = Ac[r, j] - l_top[r]
    return E


def _top_entries(a1, cols, width):
    """``(r, j)``: rows whose ``a1`` is in ``cols`` (``< width``), at index ``j``."""
    pos = np.full(width, -1)
    pos[cols] = np.arange(cols.size)
    j = pos[a1]
    r = np.flatnonzero(j >= 0)
    return r, j[r]


def _off_top_scores(A, m1, total, E=None, out=None):
    """``A - m1 - log(total - exp(A - m1))``: the log-odds of the entries off the arg-max.

    ``m1``, ``total`` (:func:`_ovr_row_stats`) broadcast against ``A``; ``E``:
    ``exp(A - m1)`` if already computed (overwritten), else computed into
    ``out``. The arg-max entries (``log(0)``) are the caller's to replace.
    """
    if E is None:
        E = np.subtract(A, m1, out=out)
        np.exp(E, out=E)
    np.subtract(total, E, out=E)
    with np.errstate(divide="ignore"):  # arg-max entries, replaced by the caller
        np.log(E, out=E)
    E += m1
    return np.subtract(A, E, out=E)


def host64(Zc, cols=None):
    """Rows (and optionally columns) of ``Z`` as a float64 NumPy array on the host.

    A tensor is copied to the host in its own dtype (bfloat16 as float32), a
    CPU tensor without a copy, and widened by NumPy.
    """
    torch = _torch_of(Zc)
    if torch is not None and cols is not None:
        Zc = Zc[:, torch.as_tensor(cols, device=Zc.device)]
    elif cols is not None:
        Zc = np.asarray(Zc)[:, cols]
    return to_numpy(Zc).astype(np.float64, copy=False)


def _host64_into(Zc, buf):
    """:func:`host64` of the rows ``Zc``; non-float64 NumPy rows widened into ``buf``.

    (A fresh array's page faults would cost as much as the copy.)
    """
    if isinstance(Zc, np.ndarray) and Zc.dtype != np.float64:
        A = buf[: Zc.shape[0]]
        np.copyto(A, Zc)
        return A
    return host64(Zc)


def is_host_float32(Z):
    """Whether ``Z`` is a float32 NumPy array (the float32 per-class solvers' input)."""
    return isinstance(Z, np.ndarray) and Z.dtype == np.float32


def log_tiny(Z):
    """``log`` of the smallest normal number of ``Z``'s float dtype (array or tensor)."""
    return math.log((_torch_of(Z) or np).finfo(Z.dtype).tiny)


def clamp_min(Z, floor):
    """``max(Z, floor)`` elementwise, as an array of ``Z``'s kind on its device."""
    return np.maximum(Z, floor) if _torch_of(Z) is None else Z.clamp(min=floor)


def is_cpu_tensor(Z):
    return _torch_of(Z) is not None and Z.device.type == "cpu"


def ovr_row_stats(Z):
    """:func:`_ovr_row_stats` of all rows of ``Z``, walked in row chunks, on the host.

    Uses O(n_rows) memory (4 vectors) instead of the (n_rows, n_classes) scores.
    """
    n, k = Z.shape
    out = (np.empty(n, dtype=np.intp), np.empty(n), np.empty(n), np.empty(n))
    buf = work = None
    for sl in _numpy.chunk_rows(n, k):
        if work is None:  # one pair of chunk-sized work arrays for all chunks
            buf, work = np.empty((2, sl.stop - sl.start, k))
        A = _host64_into(Z[sl], buf)
        for o, v in zip(out, _ovr_row_stats(A, out=work[: A.shape[0]])):
            o[sl] = v
    return out


def ovr_column(Z, k, stats):
    """One-vs-rest log-odds of column ``k`` of all rows: float64 (n_rows,), host."""
    n = Z.shape[0]
    out = np.empty(n)
    cols = np.array([k])
    for sl in _numpy.chunk_rows(n, 8):
        st = tuple(v[sl] for v in stats)
        out[sl] = _ovr_columns(host64(Z[sl], cols), st, cols)[:, 0]
    return out


def ovr_interp_rows(Z, knots, log=False, mix=None, chunk_bytes=None):
    """Renormalised (log-)probabilities of NumPy logits through per-class knots, chunk by chunk.

    The NumPy prediction of the multiclass interpolating maps
    (:class:`~skcal.IsotonicScaler`): each chunk's one-vs-rest log-odds go
    through :func:`skcal._backend._numpy.ovr_interp_proba_into` (each class's
    ``InterpTable`` built once) into the output; work arrays allocated once.

    Parameters
    ----------
    Z : ndarray of shape (n_rows, n_classes)
        Validated logits, ``n_classes >= 3``.
    knots : list of (xk, yk)
        Each class's knots.
    log : bool, default=False
        Return log-probabilities.
    mix : (float, float), optional
        ``(keep, add)``: the probabilities become ``keep * P + add``, in the
        output dtype, row chunk by row chunk (the uniform mixture of
        :class:`~skcal.SmoothedCalibrator`, applied while the chunk is in
        cache); only with ``log=False``.
    chunk_bytes : int, optional
        float64 bytes of one row chunk (:data:`skcal._backend._numpy.CHUNK_BYTES`
        by default); large chunks amortise the per-class calls.

    Returns
    -------
    ndarray of shape (n_rows, n_classes)
        float64 for float64 logits, float32 otherwise; the same values as
        the chunked :func:`ovr_log_odds` and ``ovr_interp_proba``.
    """
    n, k = Z.shape
    out = np.empty((n, k), dtype=out_dtype(Z))
    cols = np.arange(k)
    tables = [_numpy.InterpTable(xk, yk) for xk, yk in knots]
    bufs = None
    for sl in _numpy.chunk_rows(n, k, chunk_bytes=chunk_bytes):
        r = sl.stop - sl.start
        if bufs is None:  # three chunk-sized work arrays for all chunks
            bufs = np.empty((3, r * k))
        A = _host64_into(Z[sl], bufs[0, : r * k].reshape(r, k))
        stats, E = _ovr_row_stats(A, keep_exp=True, out=bufs[1, : r * k].reshape(r, k))
        S = _ovr_columns(A, stats, cols, E=E)
        _numpy.ovr_interp_proba_into(S, knots, log, out=out[sl], work=bufs[2, : r * k],
                                tables=tables)
        if mix is not None:
            P = out[sl]
            P *= mix[0]
            P += mix[1]
    return out


def binary_score(Z):
    """Log-odds ``z1 - z0`` of the second class: (n,), float64 (float32 on MPS)."""
    if _torch_of(Z) is not None:
        A = Z.to(_work_dtype(Z))
        return A[:, 1] - A[:, 0]
    A = np.asarray(Z)
    # one fresh vector: the columns are cast inside the subtraction
    return np.subtract(A[:, 1], A[:, 0], dtype=np.float64)


def binary_score_view(Z):
    """:func:`binary_score` of NumPy or tensor logits as a float64 NumPy vector, without a copy where exact.

    For float64 NumPy logits whose first column is ``+0`` everywhere (the
    logits ``[0, s]`` of a 1-D score) ``z1 - z0`` is ``z1`` bit for bit: the
    column ``Z[:, 1]`` itself is returned (a strided view, to be read only).
    """
    if isinstance(Z, np.ndarray) and Z.dtype == np.float64 and not Z[:, 0].view(np.int64).any():
        return Z[:, 1]
    return to_numpy(binary_score(Z))


def to_host(v):
    """1-D labels or weights (NumPy or tensor) as a NumPy array, or None."""
    return None if v is None else to_numpy(v)


def empty_out(Z, n, k):
    torch = _torch_of(Z)
    if torch is None:
        return np.empty((n, k), dtype=out_dtype(Z))
    return torch.empty((n, k), dtype=out_dtype(Z), device=Z.device)


def param_like(v, like):
    """A float64 parameter vector as an array of ``like``'s kind, dtype and device."""
    v = np.asarray(v, dtype=np.float64)
    torch = _torch_of(like)
    if torch is None:
        return v
    return torch.as_tensor(v, dtype=like.dtype, device=like.device)


def log_sigmoid(F):
    torch = _torch_of(F)
    return log_expit(F) if torch is None else torch.nn.functional.logsigmoid(F)


def exp(A):
    return (_torch_of(A) or np).exp(A)


def row_log_normalise(LQ):
    """``LQ - logsumexp(LQ, axis=1)``: log of the renormalised rows."""
    torch = _torch_of(LQ)
    if torch is not None:
        return LQ - torch.logsumexp(LQ, dim=1, keepdim=True)
    m = LQ.max(axis=1, keepdims=True)
    return LQ - (m + np.log(np.exp(LQ - m).sum(axis=1, keepdims=True)))


def sigmoid(F):
    """Logistic function of an array or tensor, elementwise."""
    torch = _torch_of(F)
    return expit(F) if torch is None else torch.sigmoid(F)


def stack_columns(cols):
    """Stack 1-D columns (NumPy arrays or tensors) into shape (n, len(cols))."""
    torch = _torch_of(cols[0])
    return np.stack(cols, axis=1) if torch is None else torch.stack(cols, dim=1)


def interp_knots(x, xk, yk):
    """Piecewise-linear interpolation through knots, constant beyond the ends.

    Parameters
    ----------
    x : ndarray or torch.Tensor of shape (n,)
        Points (float64; float32 on MPS), evaluated on their own device.
    xk, yk : ndarray of shape (m,)
        Knots, ``xk`` strictly increasing, ``m >= 1``.

    Returns
    -------
    ndarray or torch.Tensor of shape (n,)
        ``yk`` interpolated linearly at ``clip(x, xk[0], xk[-1])``, which is
        what ``np.interp`` and ``IsotonicRegression(out_of_bounds="clip")``
        compute.
    """
    torch = _torch_of(x)
    if torch is None:
        return np.interp(x, xk, yk)
    xt = torch.as_tensor(np.asarray(xk), dtype=x.dtype, device=x.device)
    yt = torch.as_tensor(np.asarray(yk), dtype=x.dtype, device=x.device)
    if xt.numel() == 1:
        return yt.expand(x.shape[0]).clone()
    x = torch.clamp(x, xt[0], xt[-1])
    j = torch.searchsorted(xt, x, right=True).clamp_(1, xt.numel() - 1)
    x0, x1, y0, y1 = xt[j - 1], xt[j], yt[j - 1], yt[j]
    return y0 + (x - x0) / (x1 - x0) * (y1 - y0)


def renormalise(Q):
    """Rows of non-negative per-class probabilities divided by their sums.

    A row whose entries are all 0 gets the uniform distribution ``1 / K``
    (as scikit-learn's one-vs-rest calibration does) instead of ``0 / 0``.
    """
    k = Q.shape[1]
    torch = _torch_of(Q)
    if torch is None:
        den = Q.sum(axis=1, keepdims=True)
        if den.min(initial=1.0) > 0:  # no all-zero row: a plain division
            return Q / den
        return np.divide(Q, den, out=np.full_like(Q, 1.0 / k), where=den > 0)
    den = Q.sum(dim=1, keepdim=True)
    return torch.where(den > 0, Q / torch.where(den > 0, den, 1.0), 1.0 / k)


def proba_from_log_odds(F):
    """Renormalised ``sigmoid(F)`` of per-class log-odds, shape (n, K).

    One ``exp`` per entry; rows whose sigmoids all (nearly) underflow (sum
    below :data:`TINY_REST`) are renormalised in log space instead, so no row
    is ``0 / 0``.
    """
    Q = sigmoid(F)
    den = Q.sum(axis=1, keepdims=True)
    small = den[:, 0] < TINY_REST
    with np.errstate(invalid="ignore", divide="ignore"):  # rows redone below
        Q /= den
    if bool(small.any()):
        Q[small] = exp(row_log_normalise(log_sigmoid(F[small])))
    return Q


def log_proba_from_log_odds(F):
    """``log`` of :func:`proba_from_log_odds`, computed in log space."""
    return row_log_normalise(log_sigmoid(F))


def log_or_neg_inf(P):
    """``log(P)`` elementwise, with ``log(0) = -inf`` and no warning."""
    torch = _torch_of(P)
    if torch is not None:
        return torch.log(P)
    with np.errstate(divide="ignore"):
        return np.log(P)


def write_rows(out, sl, R):
    """``out[sl] = R``, where ``R`` may be a NumPy array and ``out`` a CPU tensor."""
    torch = _torch_of(out)
    if torch is not None and _torch_of(R) is None:
        R = torch.from_numpy(R)
    out[sl] = R


# ------------------------------------------------------- float32 fast kernels
#: The float32 twin of :data:`TINY_REST`.
TINY_REST32 = 1e-30


def ovr_row_stats32(Z):
    """:func:`_ovr_row_stats` of a float32 NumPy matrix (K >= 3), in float32, by chunks.

    ``(a1, m1, total, neg_top)`` (intp, then float32: 16 B per row),
    ``neg_top = m1 - l_top`` the arg-max entry's log-odds; every score then has
    an absolute error of a few float32 ulps of the row's largest logit.
    """
    n, k = Z.shape
    a1 = np.empty(n, dtype=np.intp)
    m1, total, neg_top = np.empty((3, n), dtype=np.float32)
    for sl in _numpy.chunk_rows(n, k, itemsize=4):
        a1[sl], m1[sl], total[sl], neg_top[sl] = _row_stats32(Z[sl])[0]
    return a1, m1, total, neg_top


def _row_stats32(A, out=None):
    """:func:`ovr_row_stats32` of one chunk, and its work arrays ``D = A - m1``, ``E``.

    ``E = exp(D)`` with the arg-max entries set to 0, from which
    :func:`ovr_scores32_from_work` gets every column's score without a second
    ``exp``. ``out``: optional float32 arrays ``(D, E)`` of ``A``'s shape.
    """
    rows = np.arange(A.shape[0])
    a = A.argmax(axis=1)
    m = A[rows, a]
    D, E = (None, None) if out is None else out
    D = np.subtract(A, m[:, None], out=D)
    E = np.exp(D, out=E)
    E[rows, a] = 0.0
    rest = E.sum(axis=1)
    with np.errstate(divide="ignore"):
        nt = -np.log(rest)
    bad = np.flatnonzero(~(rest >= TINY_REST32))
    if bad.size:
        nt[bad] = (m[bad].astype(np.float64) - _log_rest(A, a, bad)).astype(np.float32)
    return (a, m, rest + np.float32(1.0), nt), D, E


def ovr_scores32_from_work(stats, D, E, cols=None, width=None):
    """float32 one-vs-rest log-odds of a chunk from work arrays ``D = A - m1``, ``E``.

    ``D``, ``E`` (overwritten; ``D`` returned) of all columns, as
    :func:`_row_stats32` leaves them, or of the ``cols`` (of ``width``) only.
    """
    a1, _, total, neg_top = stats
    np.subtract(total[:, None], E, out=E)
    with np.errstate(divide="ignore"):  # the arg-max entries, replaced below
        np.log(E, out=E)
    D -= E
    if cols is None:
        D[np.arange(D.shape[0]), a1] = neg_top
    else:
        r, j = _top_entries(a1, cols, width)
        D[r, j] = neg_top[r]
    return D


def ovr_columns32(Ac, stats, cols, all_cols=False, out=None):
    """float32 one-vs-rest log-odds of the columns ``cols`` of a row chunk.

    Parameters
    ----------
    Ac : ndarray of shape (n_rows, n_classes), float32
        The chunk's logits (all columns).
    stats : tuple
        :func:`ovr_row_stats32` of the same rows.
    cols : ndarray of int
        Column indices (sorted, distinct).
    all_cols : bool, default=False
        ``cols`` is ``arange(n_classes)`` (no column gather).
    out : tuple of two ndarrays of shape (n_rows, len(cols)), float32, optional
        C-contiguous work arrays, reused across chunks (fresh ones cost page
        faults); the scores are written to ``out[0]``.

    Returns
    -------
    S : ndarray of shape (n_rows, len(cols)), float32
        ``s_ik = (z_ik - m1_i) - log(total_i - exp(z_ik - m1_i))``, and the
        arg-max entry's ``neg_top_i``.
    """
    m1 = stats[1][:, None]
    D, E = (None, None) if out is None else out
    if all_cols:
        D = np.subtract(Ac, m1, out=D)
    else:
        D = np.take(Ac, cols, axis=1, out=D)
        D -= m1
    E = np.exp(D, out=E)
    return ovr_scores32_from_work(stats, D, E, None if all_cols else cols, Ac.shape[1])


def ovr_score_blocks(Z, stats, max_bytes):
    """One-vs-rest log-odds of blocks of consecutive columns, class-major, in float64.

    Parameters
    ----------
    Z : ndarray or torch.Tensor of shape (n_rows, n_classes)
        Logits, ``n_classes >= 3`` (a tensor's row chunks are copied to the host).
    stats : tuple
        :func:`ovr_row_stats` of ``Z``.
    max_bytes : int
        Largest size of one block (at least one column is always taken).

    Yields
    ------
    c0, c1 : int
        The block's columns ``c0:c1``.
    S : ndarray of shape (c1 - c0, n_rows), float64
        ``S[j]`` is the (contiguous) score column of class ``c0 + j``, exactly
        :func:`ovr_column`'s.

    Notes
    -----
    Every block walks the rows of ``Z`` once, reading only its own columns,
    so all blocks together compute each score once, class-major (each
    operation along the rows) from one work array.
    """
    n, K = Z.shape
    width = int(max(1, min(K, max_bytes // (8 * max(n, 1)))))
    a1, m1, total, l_top = stats
    buf = np.empty(0)
    for c0 in range(0, K, width):
        c1 = min(K, c0 + width)
        S = np.empty((c1 - c0, n))
        for sl in _numpy.chunk_rows(n, c1 - c0):
            r = sl.stop - sl.start
            if buf.size < r * (c1 - c0):
                buf = np.empty(r * (c1 - c0))
            # class-major: every operation runs along the rows (a long inner
            # loop; row-major, a block's few columns would be its inner loop)
            A = buf[: r * (c1 - c0)].reshape(c1 - c0, r)
            np.copyto(A, (Z[sl, c0:c1] if isinstance(Z, np.ndarray)
                          else host64(Z[sl][:, c0:c1])).T)
            E = _off_top_scores(A, m1[sl], total[sl], out=S[:, sl])
            rows = np.flatnonzero((a1[sl] >= c0) & (a1[sl] < c1))
            top = a1[sl][rows] - c0
            E[top, rows] = A[top, rows] - l_top[sl][rows]
        yield c0, c1, S
