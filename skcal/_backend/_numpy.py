"""NumPy kernels: stable log-softmax and the NLL objectives of the calibrators.

Every function takes logits ``Z`` of shape (n_samples, n_classes) in float16,
float32 or float64, encoded labels ``y`` (int64, values in ``0..K-1``) and
optional float64 ``sample_weight``; it walks ``Z`` in row chunks of about
:data:`CHUNK_BYTES` and accumulates sums in float64. Objectives are weighted
*means* (sum of weighted terms divided by the sum of the weights).
"""

import math
import sys

import numpy as np
from scipy.linalg.blas import dsyrk as _dsyrk
from scipy.linalg.blas import ssyrk as _ssyrk
from scipy.special import log_softmax as _scipy_log_softmax

from sklearn.utils.validation import check_array, column_or_1d

from . import _shared
from ._array import host_array, probability_log_dtype
from ._shared import weights as _weights

#: Target size in bytes of one float64 working chunk.
CHUNK_BYTES = 1 << 20

exp = np.exp
log = np.log
name = "numpy"

#: Kernels without a torch twin in ``_torch``: they run on host NumPy arrays
#: only (the isotonic predict's buffered kernels, the metrics' host binning).
HOST_ONLY = frozenset(
    {"transpose_copy", "distinct_edges", "reject_non_numeric",
     "interp_work", "ovr_interp_proba_into"}
)


def chunk_rows(n_samples, n_classes, itemsize=8, chunk_bytes=None):
    """Yield ``slice`` objects covering ``range(n_samples)`` in row chunks.

    A chunk of the ``(n_samples, n_classes)`` matrix, at ``itemsize`` bytes
    per element of the working copy, holds about ``chunk_bytes``
    (:data:`CHUNK_BYTES` by default).
    """
    budget = CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    return _shared.chunk_rows(n_samples, n_classes, itemsize, budget)


#: Side of the square tiles of :func:`transpose_copy` (float64: 128 KiB, in L2).
TRANSPOSE_TILE = 128


def transpose_copy(A, out=None):
    """``A.T`` as a C-contiguous array, copied tile by tile.

    NumPy copies a transposed view element by element along the output's
    rows, reading ``A`` at a stride of one row; for wide chunks (a row of
    several KiB) that stride defeats the caches and is several times slower
    than a pass over the data. Square tiles of :data:`TRANSPOSE_TILE` keep
    both sides of each copy in cache.

    Parameters
    ----------
    A : ndarray of shape (n, k)
    out : ndarray of shape (k, n), optional
        C-contiguous destination (any dtype ``A`` casts to).

    Returns
    -------
    ndarray of shape (k, n)
    """
    n, k = A.shape
    if out is None:
        out = np.empty((k, n), dtype=A.dtype)
    t = TRANSPOSE_TILE
    for i in range(0, n, t):
        for j in range(0, k, t):
            out[j:j + t, i:i + t] = A[i:i + t, j:j + t].T
    return out


def row_stride(a, step):
    """The systematic row subsample ``a[::step]`` (a view)."""
    return a[::step]


def from_numpy(a, device=None):
    """Return ``a`` unchanged (the NumPy twin of ``_torch.from_numpy``)."""
    return a


def output_dtype(dtype):
    """Dtype of probabilities (and of the work) from logits of ``dtype``: float64 or float32."""
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _row_max(A):
    """Row maxima of a 2-D array, shape (n, 1) (NumPy reduces short rows slowly:
    a column fold for few columns)."""
    if A.shape[1] <= _FEW_COLUMNS:
        m = A[:, 0].copy()
        for j in range(1, A.shape[1]):
            np.maximum(m, A[:, j], out=m)
        return m[:, None]
    return A.max(axis=1, keepdims=True)


def _shifted_affine(Zc, scale, bias, wd, out=None):
    """``scale * Zc + bias - rowmax`` in dtype ``wd``, into ``out`` if given (else new)."""
    if out is None:
        out = np.empty(Zc.shape, dtype=wd)
    if scale is None:
        np.copyto(out, Zc)
    else:
        np.multiply(Zc, np.asarray(scale, dtype=wd), out=out)
    if bias is not None:
        out += np.asarray(bias, dtype=wd)
    out -= _row_max(out)
    return out


def log_softmax(Z, scale=None, bias=None, out=None):
    """Row-wise log-softmax of the affine map ``scale * Z + bias``.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_classes)
        Logits, float16/32/64.
    scale : float or ndarray of shape (n_classes,), optional
        Multiplies ``Z`` column-wise (``1/T`` for temperature scaling).
    bias : ndarray of shape (n_classes,), optional
        Added after scaling.
    out : ndarray of shape (n_samples, n_classes), optional
        Output buffer; by default a new array of :func:`output_dtype`.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        ``log softmax(scale * Z + bias)`` with the max-shift (log-sum-exp)
        trick, so it is finite for any finite input.

    Notes
    -----
    Computed per row chunk in the output precision: float64 for float64
    logits, float32 otherwise (the result is float32 then, and the shifted
    exponentials summed have one term equal to 1 and none above, so the row
    sum is exact to ~1e-7 relative).
    """
    n, k = Z.shape
    wd = output_dtype(Z.dtype)
    if out is None:
        out = np.empty((n, k), dtype=wd)
    in_place = out.dtype == wd
    rows = next(chunk_rows(n, k, np.dtype(wd).itemsize)).stop
    buf = np.empty((rows, k), dtype=wd)  # reused for exp, cache-resident
    for sl in chunk_rows(n, k, np.dtype(wd).itemsize):
        # the shifted logits are formed in the output itself (no temporary)
        A = _shifted_affine(Z[sl], scale, bias, wd, out=out[sl] if in_place else None)
        E = np.exp(A, out=buf[: A.shape[0]])
        lse = np.log(E.sum(axis=1, keepdims=True))
        np.subtract(A, lse, out=out[sl])
    return out


def softmax(Z, scale=None, bias=None):
    """Row-wise softmax of ``scale * Z + bias`` (see :func:`log_softmax`).

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        Probabilities in :func:`output_dtype`; each row sums to 1.
    """
    n, k = Z.shape
    wd = output_dtype(Z.dtype)
    out = np.empty((n, k), dtype=wd)
    for sl in chunk_rows(n, k, np.dtype(wd).itemsize):
        # computed in the output itself: no temporary, one fewer sweep
        A = _shifted_affine(Z[sl], scale, bias, wd, out=out[sl])
        np.exp(A, out=A)
        A /= A.sum(axis=1, keepdims=True)
    return out


def argmax_rows(P):
    """Column index of the largest entry of each row, int64 of shape (n_samples,)."""
    return np.argmax(P, axis=1)


def mean_log_likelihood(LP, y, sample_weight=None):
    """Weighted mean of ``LP[i, y[i]]`` (a float; ``-inf`` if a true-class entry is)."""
    ll = LP[np.arange(LP.shape[0]), y].astype(np.float64)
    if sample_weight is None:
        return float(ll.mean())
    return float(np.dot(sample_weight, ll) / sample_weight.sum())


def nll(Z, y, sample_weight=None, scale=None, bias=None):
    """Weighted mean negative log-likelihood of ``softmax(scale * Z + bias)``.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_classes)
    y : ndarray of shape (n_samples,), int64
    sample_weight : ndarray of shape (n_samples,), float64, optional
    scale, bias : see :func:`log_softmax`

    Returns
    -------
    float
        ``sum_i w_i (logsumexp(a_i) - a_{i, y_i}) / sum_i w_i`` with
        ``a_i = scale * z_i + bias``.
    """
    n, k = Z.shape
    sw, wsum = _weights(sample_weight, n)
    total = 0.0
    for sl in chunk_rows(n, k):
        A = Z[sl].astype(np.float64, copy=False)
        if scale is not None:
            A = A * scale
        if bias is not None:
            A = A + bias
        m = A.max(axis=1)
        lse = m + np.log(np.exp(A - m[:, None]).sum(axis=1))
        li = lse - A[np.arange(A.shape[0]), y[sl]]
        total += li.sum() if sw is None else np.dot(sw[sl], li)
    return float(total / wsum)


def row_max_and_true(Z, y):
    """Per-row ``max_k Z[i, k]`` and ``Z[i, y[i]]``, float64 arrays of shape (n_samples,)."""
    n, k = Z.shape
    m, zy = np.empty((2, n))
    for sl in chunk_rows(n, k):
        m[sl], zy[sl] = _max_and_true(Z[sl], y[sl])
    return m, zy


def _max_and_true(Zc, yc):
    """Row maxima (:func:`_row_max`) and true-class entries of one chunk."""
    return _row_max(Zc)[:, 0], Zc[np.arange(Zc.shape[0]), yc]


#: Up to this many columns, row maxima are taken column by column.
_FEW_COLUMNS = 32


def temperature_nll_derivs(
    Z, y, sample_weight, beta, row_stats=None, third=False, return_row_stats=False,
    second=True,
):
    """NLL of temperature scaling and its derivatives in ``beta = 1/T``.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_classes)
        Logits, float16/32/64.
    y : ndarray of shape (n_samples,), int64
        Encoded labels.
    sample_weight : ndarray of shape (n_samples,), float64, or None
    beta : float
        Inverse temperature, ``beta > 0``.
    row_stats : tuple of two ndarrays of shape (n_samples,), optional
        ``(max_k z_ik, z_{i, y_i})`` from :func:`row_max_and_true`, reused
        across Newton iterations. Without them they are computed in the same
        pass (from each chunk while it is in cache).
    third : bool, default=False
        Also return the third derivative.
    return_row_stats : bool, default=False
        Also return ``row_stats`` (those computed, or those given).
    second : bool, default=True
        Compute ``f''`` (and, with ``third``, ``f'''``); without it the pass
        skips one product and row sum per entry and returns None for them
        (for a solver that reuses the last ``f''`` near the root).

    Returns
    -------
    f, g, h : float
        ``f(beta) = mean_w [logsumexp(beta z_i) - beta z_{i,y_i}]``,
        ``g = f'(beta) = mean_w [E_{p_i}[z_i] - z_{i,y_i}]`` and
        ``h = f''(beta) = mean_w Var_{p_i}[z_i]`` with
        ``p_i = softmax(beta z_i)``; all from one pass over ``Z``.
    t : float
        Only with ``third=True``: ``f'''(beta) = mean_w kappa3_{p_i}[z_i]``,
        the mean third central moment of ``z_i`` under ``p_i``.
    row_stats : tuple of two ndarrays of shape (n_samples,), float64
        Only with ``return_row_stats=True``.

    Notes
    -----
    With ``d_ik = z_ik - max_k z_ik <= 0`` and ``e_ik = exp(beta d_ik)``, the
    row sums ``s0 = sum_k e``, ``s1 = sum_k e d`` and ``s2 = sum_k e d^2``
    give ``f_i = log s0 - beta d_{i,y_i}``, ``E_p[z] - z_y = s1/s0 - d_{i,y_i}``
    and ``Var_p[z] = s2/s0 - (s1/s0)^2``; with ``s3 = sum_k e d^3``, the third
    central moment is ``s3/s0 - 3 mu s2/s0 + 2 mu^3`` (``mu = s1/s0``; its
    terms differ in sign, but ``|mu|^2 <= (K - 1) Var_p`` because ``p`` is
    largest where ``d = 0``, which bounds the cancellation). float16/float32
    logits are processed in float32 per chunk (half the memory traffic of
    float64): the terms of each row sum share one sign (relative error ~1e-7)
    and the per-row results are combined in float64. The rounding of ``Var``
    only changes Newton's step length, not the root of ``g``.
    """
    return _shared.temperature_nll_derivs(
        _this, Z, y, sample_weight, beta, row_stats, third, return_row_stats, second
    )


def _temperature_chunks(Z):
    wd = np.dtype(output_dtype(Z.dtype))
    n, k = Z.shape
    rows = next(chunk_rows(n, k, wd.itemsize)).stop
    # two chunk buffers, reused (a fresh array per chunk costs page faults)
    bufs = (np.empty((rows, k), dtype=wd), np.empty((rows, k), dtype=wd))
    for sl in chunk_rows(n, k, wd.itemsize):
        yield sl, bufs


def _temperature_row_sums(Zc, m, beta, third, bufs, second=True):
    """Row sums of ``e d^j`` (j = 0..2, 3 with ``third``) of one chunk, float64.

    Without ``second`` only ``j = 0, 1`` (``s2`` is None).
    """
    D_buf, E_buf = bufs
    wd = D_buf.dtype
    r = m.shape[0]
    D = np.subtract(Zc, m.astype(wd)[:, None], out=D_buf[:r], dtype=wd)  # <= 0
    E = np.multiply(D, wd.type(beta), out=E_buf[:r])
    np.exp(E, out=E)
    s0 = np.einsum("ij->i", E).astype(np.float64)
    s1 = np.einsum("ij,ij->i", E, D).astype(np.float64)
    s2 = s3 = None
    if second:
        E *= D
        s2 = np.einsum("ij,ij->i", E, D).astype(np.float64)
        if third:
            E *= D
            s3 = np.einsum("ij,ij->i", E, D).astype(np.float64)
    return s0, s1, s2, s3


def _empty64(n, like):
    return np.empty(n)


_this = sys.modules[__name__]


# --------------------------------------------------------------- vector scaling
def _vector_chunk(Zc, y, w, b, out=None):
    """Shared part of the vector-scaling kernels on one chunk.

    Returns the chunk ``Zc`` in the dtype of ``w`` (float64 or float32), the
    probabilities ``P`` of ``softmax(w * Zc + b)`` (into ``out`` if given) and
    the per-row ``logsumexp(a_i) - a_{i, y_i}`` (float64, as the row sums).
    """
    Zc = Zc.astype(w.dtype, copy=False)
    A = np.multiply(Zc, w, out=out)
    A += b
    A -= _row_max(A)
    a_y = A[np.arange(A.shape[0]), y].astype(np.float64, copy=False)
    np.exp(A, out=A)
    s = A.sum(axis=1).astype(np.float64, copy=False)
    A *= (1.0 / s).astype(w.dtype, copy=False)[:, None]
    return Zc, A, np.log(s) - a_y


def _vector_chunks(Z, y, sw, w, b, acc, t_z, t_1, buf=None):
    """``(Zc, P, wc)`` of every row chunk (:func:`_vector_chunk`; ``wc``: its weights).

    Adds each chunk's weighted NLL to ``acc[0]`` and its true-class sums
    ``sum_i w_i e_{y_i} z_{i, y_i}`` and ``sum_i w_i e_{y_i}`` to ``t_z``, ``t_1``;
    ``buf``: a reused buffer of one chunk for ``P``.
    """
    n, k = Z.shape
    for sl in chunk_rows(n, k, w.dtype.itemsize):
        yc = y[sl]
        out = None if buf is None else buf[: yc.size]
        Zc, P, f_i = _vector_chunk(Z[sl], yc, w, b, out)
        wc = None if sw is None else sw[sl]
        z_y = Zc[np.arange(yc.size), yc].astype(np.float64, copy=False)
        acc[0] += f_i.sum() if wc is None else np.dot(wc, f_i)
        t_z += np.bincount(yc, weights=z_y if wc is None else wc * z_y, minlength=k)
        t_1 += np.bincount(yc, weights=wc, minlength=k)
        yield Zc, P, wc


def vector_nll_grad(Z, y, sample_weight, w, b):
    """NLL of vector scaling and its gradient in ``(w, b)``, in one pass.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_classes)
        Logits, float16/32/64.
    y : ndarray of shape (n_samples,), int64
        Encoded labels in ``0..n_classes-1``.
    sample_weight : ndarray of shape (n_samples,), float64, or None
    w, b : ndarray of shape (n_classes,), float64
        Per-class scale and bias.

    Returns
    -------
    f : float
        ``sum_i s_i [logsumexp(a_i) - a_{i, y_i}] / sum_i s_i`` with
        ``a_i = w * z_i + b`` and ``s_i`` the sample weights.
    grad_w, grad_b : ndarray of shape (n_classes,), float64
        ``mean_s[(p_i - e_{y_i}) * z_i]`` and ``mean_s[p_i - e_{y_i}]``, with
        ``p_i = softmax(a_i)``.
    """
    f, gw, gb, _ = _vector_pass(Z, y, sample_weight, w, b, hessian=False)
    return f, gw, gb


def vector_nll_hess(Z, y, sample_weight, w, b):
    """NLL of vector scaling, its gradient and its exact Hessian, in one pass.

    Parameters
    ----------
    Z, y, sample_weight, w, b
        As in :func:`vector_nll_grad`.

    Returns
    -------
    f, grad_w, grad_b
        As in :func:`vector_nll_grad`.
    hess : ndarray of shape (2 * n_classes, 2 * n_classes), float64
        Hessian in the parameter order ``(w_1..w_K, b_1..b_K)``:
        ``mean_s[J_i^T (diag(p_i) - p_i p_i^T) J_i]`` with
        ``J_i = [diag(z_i), I]``, i.e. the diagonal blocks
        ``diag(p z^2), diag(p z), diag(p)`` minus ``q_i q_i^T`` with
        ``q_i = (p_i * z_i, p_i)``. Costs ``4 n K^2`` flops (a matrix product).
    """
    return _vector_pass(Z, y, sample_weight, w, b, hessian=True)


def _wcolsum(wc, M):
    """Column sums of ``M`` weighted by ``wc`` (None: unweighted), without a BLAS call per chunk."""
    if wc is None:
        return M.sum(axis=0)
    return np.einsum("i,ij->j", wc, M)


def _vector_pass(Z, y, sample_weight, w, b, hessian):
    n, k = Z.shape
    sw, wsum = _weights(sample_weight, n)
    w = np.asarray(w, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    f = np.zeros(1)
    s_pz, s_p, t_z, t_1 = np.zeros((4, k))  # the sums of _shared.vector_result
    if hessian:
        s_pzz = np.zeros(k)
        QQ = np.zeros((2 * k, 2 * k), order="F")
        hess_dtype = np.float64 if Z.dtype == np.float64 else np.float32
    for Zc, P, wc in _vector_chunks(Z, y, sw, w, b, f, t_z, t_1):
        s_p += _wcolsum(wc, P)
        if hessian:
            PZ = P * Zc
            s_pz += _wcolsum(wc, PZ)
            s_pzz += _wcolsum(wc, PZ * Zc)
            # Upper triangle of Q^T Q, Q = [P z, P] (half the flops of a
            # general product). For float16/32 logits the product is taken in
            # float32 per chunk and summed over chunks in float64: it only
            # shapes Newton's direction (the gradient stays float64), and
            # single precision halves the cost of this, the dominant term.
            Q = np.empty((P.shape[0], 2 * k), dtype=hess_dtype)
            Q[:, :k] = PZ
            Q[:, k:] = P
            if sw is not None:
                Q *= np.sqrt(wc).astype(hess_dtype)[:, None]
            if hess_dtype == np.float64:
                QQ = _dsyrk(1.0, Q, trans=1, beta=1.0, c=QQ, overwrite_c=1)
            else:
                QQ += _ssyrk(1.0, Q, trans=1)
        else:
            P *= Zc
            s_pz += _wcolsum(wc, P)
    # syrk filled the upper triangle of QQ
    hess = (np.triu(QQ) + np.triu(QQ, 1).T, s_pzz) if hessian else ()
    return _shared.vector_result(f[0], s_pz, t_z, s_p, t_1, wsum, *hess)


def vector_nll_hessp(Z, y, sample_weight, w, b, vw, vb):
    """Product of the vector-scaling NLL Hessian with a direction, in one pass.

    Parameters
    ----------
    Z, y, sample_weight, w, b
        As in :func:`vector_nll_grad`.
    vw, vb : ndarray of shape (n_classes,), float64
        The direction, split into its ``w`` and ``b`` parts.

    Returns
    -------
    hw, hb : ndarray of shape (n_classes,), float64
        ``H @ (vw, vb)`` split the same way: with the logit direction
        ``d_i = vw * z_i + vb`` and ``u_i = p_i * (d_i - p_i . d_i)``,
        ``hw = mean_s[u_i * z_i]`` and ``hb = mean_s[u_i]``.
    """
    n, k = Z.shape
    sw, wsum = _weights(sample_weight, n)
    w = np.asarray(w, dtype=np.float64)
    hw = np.zeros(k)
    hb = np.zeros(k)
    for sl in chunk_rows(n, k):
        Zc, P, _ = _vector_chunk(Z[sl], y[sl], w, b)
        D = _shared.vector_hessp_chunk(Zc, P, vw, vb, AffineOps)
        wc = None if sw is None else sw[sl]
        hb += _wcolsum(wc, D)
        D *= Zc
        hw += _wcolsum(wc, D)
    return hw / wsum, hb / wsum


def vector_nll_grad_blocks(Z, y, sample_weight, w, b, single=None):
    """NLL, gradient and the per-class 2 x 2 Hessian blocks of vector scaling, in one pass.

    Parameters
    ----------
    Z, y, sample_weight, w, b
        As in :func:`vector_nll_grad`.
    single : bool, optional
        Sweep the chunks in float32 (with float64 row sums, column sums and
        accumulation). Default: for float16/float32 logits.

    Returns
    -------
    f, grad_w, grad_b
        As in :func:`vector_nll_grad`.
    blocks : tuple of three ndarrays of shape (n_classes,), float64
        The diagonals of the three ``K x K`` blocks of the Hessian of
        :func:`vector_nll_hess`: ``h_ww = mean_s[p z^2 - (p z)^2]``,
        ``h_wb = mean_s[p z - p^2 z]`` and ``h_bb = mean_s[p - p^2]``
        (entry-wise per class), i.e. the exact ``2 x 2`` Hessian of each class's
        ``(w_k, b_k)``.

    Notes
    -----
    In float32 every entry of ``p``, ``p z`` is rounded to ~6e-8 relative; the
    rounding errors of the column sums are independent across rows, so the
    gradient is exact to ~1e-7 of ``mean_s |p z|`` divided by the square root
    of the chunk count. A solver that needs more (a tolerance below that
    noise) calls this with ``single=False``.
    """
    n, k = Z.shape
    sw, wsum = _weights(sample_weight, n)
    if single is None:
        single = Z.dtype != np.float64
    wd = np.float32 if single else np.float64
    w_ = np.asarray(w, dtype=wd)
    b_ = np.asarray(b, dtype=wd)
    f = np.zeros(1)
    sums = np.zeros((6, k))  # s_p, s_pz, s_pzz, q_zz, q_z1, q_11
    t_z, t_1 = np.zeros((2, k))
    rows_max = next(chunk_rows(n, k, np.dtype(wd).itemsize)).stop
    buf_p, buf_q = np.empty((2, rows_max, k), dtype=wd)
    ones = np.ones(rows_max, dtype=wd)
    # Every sweep writing a chunk costs about as much as its exp, a read-only
    # reduction (BLAS gemv, two-operand einsum) a fraction of it: the column
    # sums below read P and P z without writing further temporaries.
    for Zc, P, wc in _vector_chunks(Z, y, sw, w_, b_, f, t_z, t_1, buf_p):
        r = P.shape[0]
        PZ = np.multiply(P, Zc, out=buf_q[:r])
        if wc is None:
            u, Pw, PZw = ones[:r], P, PZ
        else:
            u = wc.astype(wd)
            Pw, PZw = P * u[:, None], PZ * u[:, None]
        sums[0] += u @ P
        sums[1] += u @ PZ
        sums[2] += np.einsum("ij,ij->j", PZw, Zc)
        sums[3] += np.einsum("ij,ij->j", PZw, PZ)
        sums[4] += np.einsum("ij,ij->j", PZw, P)
        sums[5] += np.einsum("ij,ij->j", Pw, P)
    s_p, s_pz, s_pzz, q_zz, q_z1, q_11 = sums
    f, gw, gb, _ = _shared.vector_result(f[0], s_pz, t_z, s_p, t_1, wsum)
    blocks = ((s_pzz - q_zz) / wsum, (s_pz - q_z1) / wsum, (s_p - q_11) / wsum)
    return f, gw, gb, blocks


# ------------ small array helpers (their twins, same signatures, in _torch.py)

def take_rows(a, idx):
    """Rows ``idx`` (a NumPy integer array) of ``a``."""
    return a[idx]


def project_rows(Z, v):
    """``sum_j Z[i, j] * v[j]`` in float64 for every row, as a NumPy vector."""
    return (np.asarray(Z, dtype=np.float64) * v).sum(axis=1)


def logaddexp(a, b, out=None):
    """``log(exp(a) + exp(b))`` elementwise; ``b`` may be a Python float."""
    return np.logaddexp(a, b, out=out)


def working_logits(L):
    """``L`` as float64 logits of any shape (the working copy of array-likes)."""
    return np.asarray(L, dtype=np.float64)


def any_nan(a):
    """Whether ``a`` holds a NaN."""
    return bool(np.isnan(a).any())


def log_softmax_last(a):
    """Log-softmax over the last axis of ``a`` (any shape; rows of ``-inf`` kept)."""
    return _scipy_log_softmax(a, axis=-1)


def stack_columns(cols):
    """The ``(n,)`` vectors ``cols`` as the columns of an ``(n, len(cols))`` array."""
    return np.stack(cols, axis=1)


def column_ranges(Z):
    """Column minima and maxima of ``Z`` as float64 NumPy arrays (no temporary)."""
    return Z.min(axis=0).astype(np.float64), Z.max(axis=0).astype(np.float64)


# ---------------------------------------------------- a calibrator's inputs
predict_with = _shared.predict_with
predict_index = _shared.predict_index


def take_columns(Z, idx):
    """Columns ``idx`` (a NumPy integer array) of ``Z``."""
    return Z[:, idx]


def take_labels(idx, classes):
    """``classes[idx]`` (NumPy)."""
    return classes[idx]


def labels_1d(y):
    """Labels ``y`` as a 1-D NumPy array (scikit-learn's ``column_or_1d``)."""
    if type(y) is np.ndarray and y.ndim == 1 and y.dtype.kind in "biuf" and y.flags.c_contiguous:
        return y  # column_or_1d's answer (a view of it), without its checks' ~50 us
    return column_or_1d(host_array(y), warn=True)


def encode_labels(y, classes, like, *, encode):
    """``encode(classes, y)``: labels as positions in ``classes`` (the dask twin's signature)."""
    return encode(classes, y)


def score_log_likelihood(LP, y, sample_weight, like, *, check):
    """Weighted mean of ``LP[i, y[i]]`` in NumPy (a calibrator's ``score``).

    ``check``: :func:`skcal.utils.validation.check_sample_weight`, passed in.
    """
    sw = check(sample_weight, like.shape[0])
    return mean_log_likelihood(host_array(LP), y, sw)


# ------------------------------------------------------- the metrics' inputs
def numpy_view(a):
    """``a`` itself: NumPy input (or an array-like) is read as it is."""
    return a


def metric_scores(y_prob, check_numpy):
    """``y_prob`` checked for the metrics: ``check_numpy(y_prob)`` (passed in).

    It returns ``(p, names, lo, hi, floating)``: the validated 1-D or 2-D
    scores, a DataFrame's column names or None, their minimum and maximum,
    and whether the input dtype was floating.
    """
    return check_numpy(y_prob)


def row_chunks(a, itemsize=8):
    """Row slices of ``a`` (1-D or 2-D) sized for a working chunk of ``itemsize`` bytes."""
    return chunk_rows(a.shape[0], 1 if a.ndim == 1 else a.shape[1], itemsize)


def row_sums64(a):
    """Float64 sums of the rows of 2-D ``a``, one row chunk at a time (no up-cast copy)."""
    sums = np.empty(a.shape[0])
    for sl in row_chunks(a):
        sums[sl] = a[sl].astype(np.float64).sum(axis=1)
    return sums


# ----------------------------------------------- the affine kernels' array ops
class AffineOps(_shared.SharedOps):
    """The array operations of the affine kernels (:mod:`skcal._backend._matrix`) and
    ``LocalTemperatureScaler``'s network, NumPy (``_torch.AffineOps``: torch)."""

    name = "numpy"
    xp = np

    def __init__(self, Z):
        self.wd = np.float64 if Z.dtype == np.float64 else np.float32

    def chunks(self, Z, itemsize=None, width=None):
        n, k = Z.shape
        item = itemsize or np.dtype(self.wd).itemsize
        return chunk_rows(n, width or k, item)

    def work(self, Zc):
        return Zc.astype(self.wd)  # a copy: modified in place below

    def const(self, a, dtype=None):
        return np.asarray(a, dtype=dtype or self.wd)

    zeros = staticmethod(np.zeros)  # float64
    empty = staticmethod(np.empty)

    @staticmethod
    def f64(a):
        return np.asarray(a, dtype=np.float64)

    numpy = f64

    @staticmethod
    def softplus(A):
        return np.logaddexp(0.0, A)

    @staticmethod
    def sigmoid(A):
        return np.exp(-np.logaddexp(0.0, -A))

    @staticmethod
    def flush_(A, tiny):
        if A.size and not A.min() >= tiny:  # a reduction: cheaper than the product it skips
            np.multiply(A, A >= tiny, out=A)

    @staticmethod
    def take(A, y):
        return A[np.arange(A.shape[0]), y]

    @staticmethod
    def sub_onehot(A, y, w=1.0):
        """``A[i, y_i] -= w_i`` in place (``w``: a float or per-row weights)."""
        A[np.arange(A.shape[0]), y] -= w

    @staticmethod
    def copy(A):
        return A.copy()

    @staticmethod
    def block_rows(n, k, block_bytes):
        """Rows of one cache-sized float32 block of ``k`` columns."""
        return max(1, block_bytes // (4 * k))

    @staticmethod
    def sub_rowdot_(D, P):
        """``D -= sum_k P * D`` per row, in place."""
        D -= np.einsum("ij,ij->i", P, D)[:, None]

    @staticmethod
    def ones_col(n, dtype):
        return np.ones((n, 1), dtype=dtype)


#: The :class:`AffineOps` of ``Z`` (working dtype float64 for float64 ``Z``, else float32).
affine_ops = AffineOps


# ------------------------------------------------- the metrics' bin rules
# The rules are documented in skcal.metrics._binning; _torch.py has the twins.

#: Relative distance to an interior uniform edge within which a score is
#: treated as lying on the edge (see :mod:`skcal.metrics._binning`).
EDGE_RTOL = 2.0**-21


def uniform_bin_ids(x, n_bins):
    """Bin index in 0..n_bins-1 of float64 scores ``x`` for equal-width bins."""
    t = np.maximum(x * n_bins, 0.5)  # every t <= 1 lands in bin 0
    r = np.rint(t)
    snap = (np.abs(t - r) <= EDGE_RTOL * r) & (r >= 1) & (r <= n_bins - 1)
    t = np.where(snap, r, t)
    return np.clip(np.ceil(t).astype(np.int64) - 1, 0, n_bins - 1)


#: Relative tolerance of the comparison ``S_i >= q S_n`` of the equal-mass
#: rule: a cumulative weight within it of a level counts as reaching it, so
#: that sums rounded differently (weights ``[2, 1]`` against the rows
#: repeated) pick the same sample.
QUANTILE_RTOL = 1e-9


def distinct_edges(u, xp):
    """Edges giving each of the sorted distinct values ``u`` a bin of its own.

    ``u[0]``, the midpoints of neighbours and ``u[-1]``; a midpoint that
    rounds up onto the upper value (adjacent floats) is moved to the lower
    one, so that the upper value stays in its own (right-closed) bin.
    """
    if u.shape[0] == 1:
        return xp.concatenate([u, u])
    lo, hi = u[:-1], u[1:]
    mid = lo + (hi - lo) / 2
    mid = xp.where(mid >= hi, lo, mid)
    return xp.concatenate([u[:1], mid, u[-1:]])


def quantile_edges(x, w, n_bins):
    """Unique equal-mass bin edges of float64 scores ``x`` with weights ``w``.

    The inverted-CDF weighted quantiles of :mod:`skcal.metrics._binning` (NumPy's
    ``np.quantile(x, q, method="inverted_cdf", weights=w)``), or one bin per
    distinct value when there are at most ``n_bins`` of them.
    """
    if w is None:
        v = np.sort(x)
    else:
        keep = w > 0
        x, w = x[keep], w[keep]
        order = np.argsort(x, kind="stable")
        v = x[order]
    step = np.flatnonzero(v[1:] != v[:-1])  # the last index of each run of ties
    if step.shape[0] + 1 <= n_bins:  # at most n_bins distinct values
        return distinct_edges(np.concatenate([v[step], v[-1:]]), np)
    # per level q_j = j / n_bins, the first sorted sample whose cumulative
    # weight S_i reaches q_j S_n (within QUANTILE_RTOL; unit weights: S_i = i + 1)
    n = v.shape[0]
    levels, shrink = np.arange(n_bins + 1, dtype=np.float64), 1.0 - QUANTILE_RTOL
    if w is None:
        idx = np.ceil(levels * (n / n_bins) * shrink).astype(np.int64) - 1
    else:
        s = np.cumsum(w[order])
        idx = np.searchsorted(s, levels * (s[-1] / n_bins) * shrink, side="left")
    edges = np.unique(v[np.clip(idx, 0, n - 1)])
    edges[0], edges[-1] = v[0], v[-1]
    return edges


# ------------------------------------------------- the metrics' row ops
class MetricOps(_shared.SharedOps):
    """The array operations of the metrics' row passes (``skcal.metrics._rows``), for NumPy."""

    xp = np
    chunk_rows = staticmethod(chunk_rows)  # float64 chunks
    f64 = staticmethod(AffineOps.f64)
    empty = staticmethod(np.empty)  # float64
    arange = staticmethod(np.arange)
    log_softmax = staticmethod(log_softmax)  # float64 in, float64 out

    @staticmethod
    def zeros(n, integer=False):
        return np.zeros(n, dtype=np.int64 if integer else np.float64)

    @staticmethod
    def zeros_bool(n):
        return np.zeros(n, dtype=bool)

    @staticmethod
    def log(a):
        with np.errstate(divide="ignore"):  # log(0) = -inf is documented
            return np.log(a)

    pick = staticmethod(AffineOps.take)  # ``a[i, y[i]]`` for every row ``i``

    @staticmethod
    def minus_one_at(a, y):
        """``a`` minus the one-hot rows of ``y`` (in place on a fresh copy)."""
        d = a.copy()
        d[np.arange(d.shape[0]), y] -= 1.0
        return d

    uniform_bin_ids = staticmethod(uniform_bin_ids)
    quantile_edges = staticmethod(quantile_edges)

    @staticmethod
    def uniform_edges(n_bins):
        return np.linspace(0.0, 1.0, n_bins + 1)

    @staticmethod
    def quantile_ids(edges, x):
        return np.searchsorted(edges[1:-1], x, side="left").astype(np.int64)


_METRIC_OPS = MetricOps()


def metric_ops(X):
    """The :class:`MetricOps` namespace serving the metrics' passes over ``X``."""
    return _METRIC_OPS


fit_inputs = _shared.fit_inputs
rows_all_equal = _shared.rows_all_equal


def row_spans(Z):
    """``max_k z_ik - min_k z_ik`` per row, float64 (for messages)."""
    return np.ptp(Z, axis=1).astype(np.float64)
logit_scale = _shared.logit_scale
total = _shared.total


def checked_float_array(X, input_name="X"):
    """``X`` checked as a 2-D float array (float64, float32 or float16 kept; NaN allowed)."""
    return check_array(
        X, dtype=[np.float64, np.float32, np.float16], ensure_all_finite=False,
        input_name=input_name,
    )


def writable(A):
    """``A``, or a copy where it is read-only: an array to compute into in place."""
    return A if A.flags.writeable else A.copy()


# ------------------------------------------------------------ the input checks
#: The floating dtypes that NumPy scores keep (other numeric input: float64).
FLOAT_DTYPES = (np.float64, np.float32, np.float16)

check_scores = _shared.check_scores


def reject_non_numeric(a, name, what):
    """Raise for text, bytes or boolean arrays (NumPy or pandas columns).

    They are never parsed or cast: scikit-learn's ``check_array`` with a float
    dtype would parse ``"1.5"`` and turn ``True`` into 1.0 without a word.
    """
    dtypes = getattr(a, "dtypes", None)
    kinds = (
        {np.dtype(d).kind if isinstance(d, np.dtype) else "?" for d in dtypes}
        if dtypes is not None and hasattr(dtypes, "__iter__")
        else {getattr(getattr(a, "dtype", None), "kind", "")}
    )
    bad = kinds & set("USbc")
    if bad:
        names = {"U": "text", "S": "bytes", "b": "boolean", "c": "complex"}
        kind = names[sorted(bad)[0]]
        hint = (
            "Complex data not supported." if kind == "complex" else
            f"Convert them explicitly (e.g. {name}.astype(float)) if that is what they are."
        )
        raise ValueError(
            f"Input {name} holds {kind} values; skcal expects numeric {what}. {hint}"
        )


def as_scores(X, name):
    """Scores ``X`` (any array-like) as a non-empty 1-D or 2-D floating array.

    scikit-learn's ``check_array`` refuses other shapes; floating dtypes are
    kept, other numeric input becomes float64 (:func:`reject_non_numeric`
    first).
    """
    reject_non_numeric(X, name, "scores (logits or probabilities)")
    if type(X) is np.ndarray and X.dtype in FLOAT_DTYPES and X.ndim in (1, 2) and X.size:
        return X  # what check_array returns for it (its own checks cost ~50 us a call)
    try:
        return check_array(
            X,
            ensure_2d=False,
            dtype=list(FLOAT_DTYPES),
            ensure_all_finite=False,
            ensure_min_samples=1,
            input_name=name,
        )
    except ValueError as exc:
        msg = str(exc)
        if "0 sample" in msg or "0 feature" in msg:
            raise ValueError(f"Input {name} is empty: {msg}") from exc
        raise


def defers_range_check(X):
    """False: the range of a NumPy array is checked at once."""
    return False


def min_max(X):
    """Minimum and maximum of a 1-D or 2-D floating array as floats, one read of its memory.

    NaN for both if ``X`` holds a NaN. Both reductions run on one row chunk of
    :data:`CHUNK_BYTES` at a time (no temporary array), while it is in cache.
    """
    lo, hi = math.inf, -math.inf
    for sl in row_chunks(X, X.itemsize):
        c = X[sl]
        c_lo, c_hi = float(c.min()), float(c.max())
        if math.isnan(c_lo) or math.isnan(c_hi):
            return math.nan, math.nan
        lo, hi = min(lo, c_lo), max(hi, c_hi)
    return lo, hi


def row_sum_deviation(a, stop=math.inf):
    """Largest ``|sum(row) - 1|`` of 2-D ``a`` (float64 sums, one row chunk at a time).

    Stops at the first chunk whose deviation exceeds ``stop`` (and returns it).
    """
    dev = 0.0
    for sl in row_chunks(a, a.itemsize):
        dev = max(dev, float(np.abs(a[sl].sum(axis=1, dtype=np.float64) - 1.0).max()))
        if dev > stop:
            break
    return dev


def binary_logits(s):
    """The logits ``[0, s]`` (two columns) of binary log-odds ``s``, in its dtype.

    Column-major: each column is contiguous, so that ``s`` is copied, and the
    score column read (:func:`~skcal._backend._ovr.binary_score_view`), at
    memory speed rather than with a stride.
    """
    Z = np.zeros((2, s.shape[0]), dtype=s.dtype)
    Z[1] = s
    return Z.T


def probability_logits(P):
    """``log(P)`` of checked probabilities (1-D or one column: ``[1 - p, p]``).

    Computed in :func:`~skcal._backend._array.probability_log_dtype`, an exact
    0 first replaced by that dtype's ``finfo.tiny``.
    """
    work = probability_log_dtype(P.dtype)
    if P.ndim == 1 or P.shape[1] == 1:
        p1 = P.reshape(-1).astype(work, copy=False)
        P = np.stack([1 - p1, p1], axis=1)
    else:
        P = P.astype(work, copy=False)
    return np.log(np.maximum(P, np.finfo(work).tiny))


fit_ovr_maps = _shared.fit_ovr_maps


try:  # NumPy's C kernel behind np.interp (float64 contiguous arguments, no checks)
    from numpy._core.multiarray import interp as _compiled_interp  # noqa: E402
except ImportError:  # NumPy < 2
    from numpy.core.multiarray import interp as _compiled_interp  # noqa: E402


#: Cells of :class:`InterpTable`'s grid per knot, and their largest number.
INTERP_CELLS_PER_KNOT = 128
INTERP_MAX_CELLS = 1 << 14


class InterpTable:
    """``np.interp(x, xk, yk)`` of finite points by a grid lookup and a few comparisons.

    NumPy's kernel bisects the knots for every point (~14 ns a point, its
    branches mispredicted). Here the knots' range is cut into ``G`` equal
    cells (:data:`INTERP_CELLS_PER_KNOT` per knot, at most
    :data:`INTERP_MAX_CELLS`); a point's cell gives the knots below it, and
    one comparison per knot sharing a cell (``amb``, the most in one cell)
    finds its segment ``j``, exactly NumPy's (cells of points and of knots
    come from the same monotone float operations). The value is NumPy's
    formula ``slope[j] * (x - xk[j]) + yk[j]`` (slope 0 beyond the knots and
    at ``xk[-1]``): the same float as ``np.interp`` for every finite ``x``.
    ``ok`` is False (use ``np.interp``) for fewer than 2 knots or a slope or
    grid scale that is not finite.
    """

    def __init__(self, xk, yk):
        xk = np.asarray(xk, dtype=np.float64)
        yk = np.asarray(yk, dtype=np.float64)
        self.xk, self.yk = xk, yk
        m = xk.size
        self.ok = False
        if m < 2:
            return
        with np.errstate(all="ignore"):
            slope = (yk[1:] - yk[:-1]) / (xk[1:] - xk[:-1])
            G = min(INTERP_MAX_CELLS, INTERP_CELLS_PER_KNOT * m)
            scale = G / (xk[-1] - xk[0])
        if not (np.isfinite(slope).all() and math.isfinite(scale)):
            return
        self.ok = True
        self.x0, self.scale, self.G = xk[0], scale, G
        cell = self._cells(xk, np.empty(m), np.empty(m, dtype=np.intp))
        count = np.bincount(cell, minlength=G + 1)
        # knots in the cells before each cell; the segments are shifted by
        # one: 0 is "below xk[0]", j + 1 the segment from xk[j]
        self.base = np.concatenate(([0], np.cumsum(count)[:-1]))
        self.amb = int(count.max())
        # comparison i of a point in cell c is with knot base[c] + i
        self.nexts = np.concatenate((xk, np.full(self.amb, np.inf)))
        self.slope = np.zeros(m + 1)
        self.slope[1:m] = slope
        self.xa = np.concatenate((xk[:1], xk))
        self.ya = np.concatenate((yk[:1], yk))

    def _cells(self, x, t, c):
        np.subtract(x, self.x0, out=t)
        t *= self.scale
        np.clip(t, 0.0, self.G, out=t)
        np.copyto(c, t, casting="unsafe")  # t >= 0: truncation is floor
        return c

    def __call__(self, x, work):
        """The interpolated values of the float64 row ``x``, written over ``x``.

        ``work``: ``(t, u, c, b, ge)`` float64, float64, intp, intp and bool
        arrays of at least ``x.size`` entries.
        """
        if not self.ok:
            x[...] = _compiled_interp(x, self.xk, self.yk)
            return x
        n = x.size
        t, u, c, b, ge = (w[:n] for w in work)
        self._cells(x, t, c)
        np.take(self.base, c, out=b)
        j = c  # the segment, counted up from the knots in earlier cells
        j[...] = b
        for i in range(self.amb):
            np.take(self.nexts[i:], b, out=u)
            np.less_equal(u, x, out=ge)
            j += ge
        np.take(self.xa, j, out=t)
        np.subtract(x, t, out=t)
        np.take(self.slope, j, out=u)
        t *= u
        np.take(self.ya, j, out=u)
        return np.add(t, u, out=x)


def interp_work(n):
    """The work arrays of :meth:`InterpTable.__call__` for rows of ``n`` points."""
    return (np.empty(n), np.empty(n), np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp),
            np.empty(n, dtype=bool))


def ovr_interp_proba(S, knots, log):
    """:func:`ovr_interp_proba_into` with the contract's signature (``_torch``'s)."""
    return ovr_interp_proba_into(S, knots, log)


def ovr_interp_proba_into(S, knots, log, out=None, work=None, tables=None):
    """Renormalised (log-)probabilities of one-vs-rest scores interpolated through knots.

    ``S``: float64 scores (n, K > 2); ``knots``: each class's ``(xk, yk)``.
    Class-major: the scores are transposed once (:func:`transpose_copy`, into
    the float64 buffer ``work`` of at least ``S.size`` entries if given), each
    class's row goes through NumPy's compiled ``np.interp`` kernel (or its
    :class:`InterpTable` in ``tables``: the same values, faster), the columns
    are renormalised as :func:`skcal._backend._ovr.renormalise` and the result
    transposed back into ``out`` (default: ``S``'s buffer; any dtype).
    """
    n, k = S.shape
    ST = transpose_copy(S, out=None if work is None else work[: n * k].reshape(k, n))
    if tables is None:
        for j, (xk, yk) in enumerate(knots):
            ST[j] = _compiled_interp(ST[j], xk, yk)
    else:
        bufs = interp_work(n)
        for j, table in enumerate(tables):
            table(ST[j], bufs)
    den = ST.sum(axis=0)
    if den.min(initial=1.0) > 0:
        ST /= den
    else:
        np.divide(ST, den, out=ST, where=den > 0)
        ST[:, den <= 0] = 1.0 / k
    if log:
        with np.errstate(divide="ignore"):
            np.log(ST, out=ST)
    return transpose_copy(ST, out=S if out is None else out)
