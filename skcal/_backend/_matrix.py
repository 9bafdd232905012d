"""Kernels of the affine maps on (log-)logits: ``a_i = W x_i + b``.

These serve matrix scaling, Dirichlet calibration, bias-corrected temperature
scaling, no-bias vector scaling and ensemble temperature scaling. Every
function takes the kernel module ``xp`` (:mod:`skcal._backend._numpy` or
:mod:`skcal._backend._torch`) and runs on the array library of ``Z``: NumPy
arrays on the CPU, torch tensors on their device (torch is only reached
through ``xp``, never imported here). The few array operations whose
spelling differs between the libraries come from ``xp.affine_ops(Z)``
(``AffineOps`` in each kernel module).

Features
--------
The map acts on standardised features ``x~ = (phi(z) - shift) / scale`` with
``phi(z) = z`` (matrix scaling, BCTS, NBVS) or ``phi(z) = log_softmax(beta z)``
(Dirichlet calibration, structured matrix scaling), described by
:class:`Features`. ``shift`` and ``scale`` only condition the problem: the
solvers map the parameters back to the original features (see
:mod:`skcal.scaling._affine`).

Precision
---------
Row chunks and working precision as in :mod:`skcal._backend._torch` (float64
for float64 logits, else float32 per chunk); every per-chunk sum is
accumulated in float64 and the full Hessian formed in float64. The extra
memory is a few chunk-sized buffers plus ``O(K^2)`` accumulators (and the two
values a row that ``rows`` of :func:`affine_nll_grad` may keep).
"""

from typing import NamedTuple

import numpy as np

from ._shared import add_diagonal_blocks
from ._shared import weights as _weights

__all__ = [
    "Features",
    "feature_moments",
    "affine_nll_grad",
    "affine_nll_hess",
    "HessianSample",
    "affine_log_softmax",
    "true_class_log_proba",
]


class Features(NamedTuple):
    """The feature map ``x~ = (phi(z) - shift) / scale`` of an affine calibrator.

    Attributes
    ----------
    log_softmax : bool
        ``phi(z) = log_softmax(beta * z)`` if True, else ``phi(z) = z``.
    beta : float
        Scale applied before the log-softmax (ignored when ``log_softmax`` is
        False).
    shift, scale : ndarray of shape (n_classes,), float64
        Column centring and scaling (``scale > 0``).
    """

    log_softmax: bool
    beta: float
    shift: np.ndarray
    scale: np.ndarray


#: Row-block size (bytes of one float32 block) of the in-memory
#: Hessian-vector products of :class:`HessianSample` on the CPU.
HESSP_BLOCK_BYTES = 256 << 10


# --------------------------------------------------------------- chunk pieces
def _phi(Zc, log_softmax, beta, ops, rows=None):
    """``phi(z)`` of one chunk in the working precision (a new array).

    ``rows`` (log-softmax only): this chunk's row maxima and log-sum-exps of
    ``beta z`` kept from an earlier pass, a tuple subtracted as they are (the
    same values: no exponential), or a list to which they are appended.
    """
    if log_softmax and beta != 1.0 and Zc.dtype == ops.wd:
        X = Zc * beta  # the same product as a copy and ``*=``, one pass fewer
    else:
        X = ops.work(Zc)
        if log_softmax and beta != 1.0:
            X *= beta
    if log_softmax:
        m, lse = rows if isinstance(rows, tuple) else (ops.rowmax(X), None)
        X -= m
        if lse is None:
            lse = ops.log(ops.rowsum(ops.exp(X)))
            if rows is not None:
                rows.append((m, lse))
        X -= lse
    return X


def _standardised(Zc, feat, ops, rows=None):
    X = _phi(Zc, feat.log_softmax, float(feat.beta), ops, rows)
    if np.any(feat.shift):
        X -= ops.const(feat.shift)
    scale = np.asarray(feat.scale, dtype=np.float64)
    if np.any(scale != 1.0):  # a whitened full W has unit scales
        X *= ops.const(1.0 / scale)
    return X


def _logits(X, W, b, ops):
    """``X W^T + b`` (``W`` of shape (K, K)) or ``X * w + b`` (``w`` of shape (K,))."""
    A = X * W if W.ndim == 1 else X @ W.T
    if b is not None:
        A += b
    return A


#: Probabilities below this are set to 0 in the solver's passes (gradient,
#: Hessian products), far below the rounding of the per-row sums they enter:
#: subnormal float32 values make matrix products many times slower (9.5x for
#: the Hessian-vector product of a fitted 100-class Dirichlet map, where 9 %
#: of the probabilities are subnormal). Predictions are never flushed.
FLUSH_BELOW = 1e-30


def _softmax_parts(A, ops, y=None, flush=False):
    """Overwrite ``A`` by ``softmax(A)``; return ``(P, lse[, a_y])``.

    ``lse`` (n, 1): log-sum-exp of the max-shifted rows; ``a_y`` (with ``y``):
    the shifted true-class logit, float64 (n,). ``flush``: probabilities
    below :data:`FLUSH_BELOW` become 0.
    """
    A -= ops.rowmax(A)
    ay = None if y is None else ops.f64(ops.take(A, y))
    A = ops.exp_(A)
    s = ops.rowsum(A)
    A /= s
    if flush:
        ops.flush_(A, FLUSH_BELOW)
    if y is None:
        return A, ops.log(s)
    return A, ops.log(s), ay


def _add_products(gW, gb, R, X, ops, full):
    """``gb += colsum(R)`` and ``gW += R^T X`` (a diagonal ``W``: ``colsum(R * X)``)."""
    gb += ops.f64(ops.colsum(R))
    gW += ops.f64(R.T @ X if full else ops.colsum(R * X))


def _params(W, b, ops):
    return ops.const(W), None if b is None else ops.const(b)


# -------------------------------------------------------------------- passes
def _gradient_pass(Z, sample_weight, xp, W, b):
    """The ops, weights, parameters and zeroed ``f, grad_W, grad_b`` of a pass."""
    ops = xp.affine_ops(Z)
    sw, wsum = _weights(sample_weight, Z.shape[0])
    Wc, bc = _params(W, b, ops)
    zeros = ops.zeros(()), ops.zeros(tuple(W.shape)), ops.zeros(Z.shape[1])
    return (ops, sw, wsum, Wc, bc, *zeros)


def _means(ops, wsum, f, gW, gb):
    """``f, grad_W, grad_b`` divided by the weight total, as float / NumPy."""
    return float(ops.numpy(f)) / wsum, ops.numpy(gW) / wsum, ops.numpy(gb) / wsum


def feature_moments(Z, xp, log_softmax=False, beta=1.0, covariance=False, rows=None):
    """Column means and standard deviations (or covariance) of ``phi(Z)``, float64, one pass.

    Parameters
    ----------
    Z : ndarray or torch.Tensor of shape (n_samples, n_classes)
    xp : module
        Kernel module of ``Z``.
    log_softmax : bool, default=False
        ``phi = log_softmax(beta * .)`` if True, else the identity.
    beta : float, default=1.0
    covariance : bool, default=False
        Return the (K, K) covariance matrix instead of the standard deviations
        (one ``K x K`` product per chunk, in the working precision, summed in
        float64).
    rows : list, optional
        With ``log_softmax``: receives each chunk's row maxima and
        log-sum-exps (the ``rows`` of :func:`affine_nll_grad`).

    Returns
    -------
    mean : ndarray of shape (n_classes,), float64
    std_or_cov : ndarray of shape (n_classes,) or (n_classes, n_classes), float64
        Unweighted; computed about the first chunk's column means (so the
        variance of values far from zero does not cancel).
    """
    ops = xp.affine_ops(Z)
    n, k = Z.shape
    s1 = ops.zeros(k)
    s2 = ops.zeros((k, k) if covariance else k)
    pivot = None
    for sl in ops.chunks(Z):
        X = _phi(Z[sl], log_softmax, float(beta), ops, rows)
        if pivot is None:
            pivot = ops.f64(X).mean(0)
        X -= ops.const(ops.numpy(pivot))
        s1 += ops.f64(ops.colsum(X))
        s2 += ops.f64(X.T @ X) if covariance else ops.f64(ops.colsum(X * X))
    m1 = ops.numpy(s1) / n
    if covariance:
        cov = ops.numpy(s2) / n - np.outer(m1, m1)
        return ops.numpy(pivot) + m1, 0.5 * (cov + cov.T)
    var = np.maximum(ops.numpy(s2) / n - m1 * m1, 0.0)
    return ops.numpy(pivot) + m1, np.sqrt(var)


def affine_nll_grad(Z, y, sample_weight, xp, feat, W, b, rows=None):
    """Mean NLL of ``softmax(W x~ + b)`` and its gradient, in one pass.

    Parameters
    ----------
    Z : ndarray or torch.Tensor of shape (n_samples, n_classes)
        Logits (float16/bfloat16/float32/float64).
    y : ndarray or torch.Tensor of shape (n_samples,), int64
        Encoded labels.
    sample_weight : ndarray or torch.Tensor of shape (n_samples,), float64, or None
    xp : module
        Kernel module of ``Z``.
    feat : Features
        The standardised features ``x~``.
    W : ndarray of shape (n_classes, n_classes) or (n_classes,), float64
        Full matrix, or the diagonal of a diagonal one.
    b : ndarray of shape (n_classes,), float64, or None
        Intercept (None: no intercept).
    rows : list, optional
        The per-chunk row maxima and log-sum-exps of log-softmax features
        that :func:`feature_moments` collected for this ``Z``: ``phi`` is
        then computed from them, with the same values and no exponential.

    Returns
    -------
    f : float
        ``sum_i s_i [logsumexp(a_i) - a_{i, y_i}] / sum_i s_i``.
    grad_W : ndarray, float64, shape of ``W``
        ``mean_s[(p_i - e_{y_i}) x~_i^T]`` (its diagonal for a diagonal ``W``).
    grad_b : ndarray of shape (n_classes,), float64
        ``mean_s[p_i - e_{y_i}]``.
    """
    ops, sw, wsum, Wc, bc, f, gW, gb = _gradient_pass(Z, sample_weight, xp, W, b)
    for i, sl in enumerate(ops.chunks(Z)):
        yc = y[sl]
        X = _standardised(Z[sl], feat, ops, None if rows is None else rows[i])
        R, lse, ay = _softmax_parts(_logits(X, Wc, bc, ops), ops, yc, flush=True)
        fi = ops.f64(lse[:, 0]) - ay
        ops.sub_onehot(R, yc)
        if sw is not None:
            wc = sw[sl]
            f += (fi * wc).sum()
            R *= ops.const(wc)[:, None]
        else:
            f += fi.sum()
        _add_products(gW, gb, R, X, ops, W.ndim == 2)
    return _means(ops, wsum, f, gW, gb)


def affine_nll_hess(Z, y, sample_weight, xp, feat, W, b):
    """Objective, gradient and exact Hessian of :func:`affine_nll_grad`, one pass.

    Parameters
    ----------
    Z, y, sample_weight, xp, feat, W, b
        As in :func:`affine_nll_grad`.

    Returns
    -------
    f, grad_W, grad_b
        As in :func:`affine_nll_grad`.
    hess : ndarray, float64
        For a full ``W``: shape ``(K (K + 1), K (K + 1))`` in the order of
        ``[W | b]`` flattened row by row (entry ``k (K + 1) + j``: row ``k``,
        column ``j``, ``j = K`` the intercept), equal to
        ``mean_s[(diag(p_i) - p_i p_i^T) kron (x^_i x^_i^T)]`` with
        ``x^_i = (x~_i, 1)``. For a diagonal ``W``: shape ``(2K, 2K)`` in the
        order ``(w_1..w_K, b_1..b_K)``: ``mean_s[J_i^T (diag(p_i) - p_i p_i^T)
        J_i]`` with ``J_i = [diag(x~_i), I]``. Without intercept the ``b``
        rows and columns are dropped. Formed in float64 (``O(n K^4)`` flops
        for a full ``W``: for small ``K`` only).
    """
    ops, sw, wsum, Wc, bc, f, gW, gb = _gradient_pass(Z, sample_weight, xp, W, b)
    k = Z.shape[1]
    full = W.ndim == 2
    m = k + 1 if full else 2
    H = ops.zeros((k * m, k * m))
    s_pxx, s_px, s_p = ops.zeros((3, k))  # diagonal W
    blocks = ops.zeros((k, m, m)) if full else None
    width = k * m
    for sl in ops.chunks(Z, itemsize=8, width=width):
        yc = y[sl]
        X = _standardised(Z[sl], feat, ops)
        P, lse, ay = _softmax_parts(_logits(X, Wc, bc, ops), ops, yc)
        fi = ops.f64(lse[:, 0]) - ay
        X64, P64 = ops.f64(X), ops.f64(P)
        P64 = P64 / ops.rowsum(P64)
        wc = None if sw is None else ops.const(sw[sl], dtype=X64.dtype)
        wP = P64 if wc is None else P64 * wc[:, None]
        f += fi.sum() if wc is None else (fi * wc).sum()
        R = ops.copy(wP)
        ops.sub_onehot(R, yc, 1.0 if wc is None else wc)
        gb += ops.colsum(R)
        rows = X64.shape[0]
        if full:
            gW += R.T @ X64
            Xh = ops.cat([X64, ops.ones_col(rows, X64.dtype)])
            for c in range(k):
                blocks[c] += (Xh * wP[:, c : c + 1]).T @ Xh
            Q = (P64[:, :, None] * Xh[:, None, :]).reshape(rows, width)
        else:
            PX = P64 * X64
            gW += ops.colsum(R * X64)
            s_pxx += ops.colsum(wP * X64 * X64)
            s_px += ops.colsum(wP * X64)
            s_p += ops.colsum(wP)
            Q = ops.cat([PX, P64])
        if wc is not None:
            Q = Q * (wc**0.5)[:, None]
        H -= Q.T @ Q
    H = ops.numpy(H)
    if full:
        B = ops.numpy(blocks)
        for c in range(k):
            H[c * m : (c + 1) * m, c * m : (c + 1) * m] += B[c]
    else:
        add_diagonal_blocks(H, ops.numpy(s_pxx), ops.numpy(s_px), ops.numpy(s_p))
    H /= wsum
    if b is None:
        keep = np.array([i for i in range(k * m) if i % m != k]) if full else np.arange(k)
        H = H[np.ix_(keep, keep)]
    return (*_means(ops, wsum, f, gW, gb), H)


class HessianSample:
    """The Hessian of :func:`affine_nll_grad`'s objective on rows held in memory.

    The trust-region solver of :mod:`skcal.scaling._affine` takes its
    Hessian-vector products here: the standardised features of fixed rows
    (all, or a fixed random subset) once, the probabilities once per iterate
    (:meth:`at`), then each product is two in-memory matrix products instead
    of a pass over ``Z``. For a full ``W = T M`` (``M`` symmetric, the
    whitening) the rows are stored as ``x~ M``, the products taken in
    ``(T, b~)``.

    Parameters
    ----------
    Z : ndarray or torch.Tensor of shape (n_samples, n_classes)
    sample_weight : ndarray or torch.Tensor of shape (n_samples,), or None
    xp : module
    feat : Features
    M : ndarray of shape (n_classes, n_classes) or None
        Right factor of a full ``W`` (None: identity, or a diagonal ``W``).
    rows : ndarray of int or None
        Rows to hold (None: all of them).
    """

    def __init__(self, Z, sample_weight, xp, feat, M=None, rows=None):
        ops = self.ops = xp.affine_ops(Z)
        if rows is not None:
            Z = xp.take_rows(Z, rows)
            if sample_weight is not None:
                sample_weight = xp.take_rows(sample_weight, rows)
        parts = [_standardised(Z[sl], feat, ops) for sl in ops.chunks(Z)]
        X = parts[0] if len(parts) == 1 else ops.cat_rows(parts)
        del parts
        if M is not None:
            X = X @ ops.const(M)
        self.X = X
        if sample_weight is None:
            self.sw, self.wsum = None, float(X.shape[0])
        else:
            self.sw = ops.const(sample_weight)[:, None]
            self.wsum = float(ops.numpy(sample_weight).sum())
        self.P = None

    def at(self, W, b):
        """Hold ``softmax(X W^T + b)`` (``W`` in the stored features' parameters);
        a diagonal ``W`` in cache-sized row blocks (:data:`HESSP_BLOCK_BYTES`)."""
        ops, X = self.ops, self.X
        Wc, bc = _params(W, b, ops)
        n, k = X.shape
        step = ops.block_rows(n, k, HESSP_BLOCK_BYTES)
        if step >= n or W.ndim == 2:
            self.P, _ = _softmax_parts(_logits(X, Wc, bc, ops), ops, flush=True)
            return self
        if self.P is None:
            self.P = ops.empty((n, k), X.dtype)
        for s in range(0, n, step):
            self.P[s : s + step] = _softmax_parts(_logits(X[s : s + step], Wc, bc, ops), ops, flush=True)[0]
        return self

    def hessp(self, VW, vb):
        """``H @ (VW, vb)`` on the held rows, split like the parameters.

        With ``d_i = VW x~_i + vb`` and ``u_i = p_i * (d_i - p_i . d_i)``:
        ``HW = mean_s[u_i x~_i^T]`` (diagonal: ``mean_s[u_i * x~_i]``),
        ``hb = mean_s[u_i]``; per row block, summed in float64.
        """
        ops, X, P = self.ops, self.X, self.P
        Vc, vc = _params(VW, vb, ops)
        n, k = X.shape
        full = VW.ndim == 2
        HW = ops.zeros(tuple(VW.shape))
        hb = ops.zeros(k)
        step = ops.block_rows(n, k, HESSP_BLOCK_BYTES)
        for s in range(0, n, step):
            Xb, Pb = X[s : s + step], P[s : s + step]
            D = _logits(Xb, Vc, vc, ops)
            ops.sub_rowdot_(D, Pb)
            D *= Pb
            if self.sw is not None:
                D *= self.sw[s : s + step]
            _add_products(HW, hb, D, Xb, ops, full)
        return ops.numpy(HW) / self.wsum, ops.numpy(hb) / self.wsum

    def class_blocks(self, intercept, row_cut=0.0):
        """Per-class diagonal blocks of the Hessian of a full ``W`` (float64).

        Block ``k`` (of ``K``, ``m x m``) is the Hessian in row ``k`` of ``W``
        (and ``b_k`` with ``intercept``, ``m = K + 1``):
        ``mean_s[p_ik (1 - p_ik) x^_i x^_i^T]``, ``x^_i = (x_i, 1)``. With
        ``row_cut > 0`` only the rows whose weight is at least ``row_cut``
        times the class's largest (a preconditioner's dominant terms).
        """
        ops, X, Q = self.ops, self.X, self._curvature()
        n, k = X.shape
        Xh = ops.cat([X, ops.ones_col(n, X.dtype)]) if intercept else X
        m = Xh.shape[1]
        out = np.empty((k, m, m))
        for c in range(k):
            q = Q[:, c]
            if row_cut > 0:
                keep = q >= row_cut * q.max()
                Xc, qc = Xh[keep], q[keep]
            else:
                Xc, qc = Xh, q
            out[c] = ops.numpy((Xc * qc[:, None]).T @ Xc)
        return out / self.wsum

    def _curvature(self):
        """``s_i p_ik (1 - p_ik)`` of the held rows (a new array)."""
        Q = self.P * (1.0 - self.P)
        if self.sw is not None:
            Q *= self.sw
        return Q

    def diagonal(self, full):
        """Diagonal of the Hessian: ``(diag_W, diag_b)`` (``diag_W`` of the shape of ``W``)."""
        ops, X, Q = self.ops, self.X, self._curvature()
        db = ops.numpy(ops.f64(ops.colsum(Q))) / self.wsum
        if full:
            dW = ops.numpy(Q.T @ (X * X))
        else:
            dW = ops.numpy(ops.f64(ops.colsum(Q * X * X)))
        return np.maximum(dW, 0.0) / self.wsum, np.maximum(db, 0.0)


def affine_log_softmax(Z, xp, feat, W, b, out_dtype=None, proba=False):
    """Calibrated log-probabilities ``log_softmax(W x~ + b)`` of every row.

    Parameters
    ----------
    Z, xp, feat, W, b
        As in :func:`affine_nll_grad`.
    out_dtype : dtype, optional
        Default: ``xp.output_dtype(Z.dtype)`` (float64 for float64 input,
        float32 otherwise).
    proba : bool, default=False
        Return the probabilities ``softmax(W x~ + b)`` instead (computed
        per chunk, so no second ``(n, K)`` array is needed).

    Returns
    -------
    ndarray or torch.Tensor of shape (n_samples, n_classes)
        In the working precision of each chunk (see the module docstring).
    """
    ops = xp.affine_ops(Z)
    n, k = Z.shape
    Wc, bc = _params(W, b, ops)
    out = ops.empty((n, k), out_dtype or xp.output_dtype(Z.dtype))
    for sl in ops.chunks(Z):
        A = _logits(_standardised(Z[sl], feat, ops), Wc, bc, ops)
        if proba:
            A, _ = _softmax_parts(A, ops)
        else:
            A -= ops.rowmax(A)
            A -= ops.log(ops.rowsum(ops.exp(A)))
        out[sl] = A
    return out


def true_class_log_proba(Z, y, xp, betas=(1.0,)):
    """``log softmax(beta z_i)[y_i]`` of every row for each ``beta``, in one pass.

    Parameters
    ----------
    Z : ndarray or torch.Tensor of shape (n_samples, n_classes)
    y : ndarray or torch.Tensor of shape (n_samples,), int64
    xp : module
    betas : sequence of float, default=(1.0,)
        Positive scales (the rows are shifted once by their maxima, which
        are those of ``beta z`` divided by ``beta``).

    Returns
    -------
    ndarray of shape (n_samples, len(betas)), float64
        Each value in the working precision of the chunk (float32 for
        16/32-bit logits), stored in float64.
    """
    ops = xp.affine_ops(Z)
    n, _ = Z.shape
    out = np.empty((n, len(betas)))
    for sl in ops.chunks(Z):
        A = ops.work(Z[sl])
        A -= ops.rowmax(A)
        zy = ops.take(A, y[sl])
        for j, beta in enumerate(betas):
            beta = float(beta)
            B = A * beta if beta != 1.0 else A
            lse = ops.log(ops.rowsum(ops.exp(B)))[:, 0]
            out[sl, j] = ops.numpy(zy * beta - lse)
    return out
