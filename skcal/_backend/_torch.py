"""PyTorch kernels: the same names and signatures as :mod:`skcal._backend._numpy`.

Every function computes on the device of its tensor arguments and returns
tensors on that device (reductions return Python floats). A pass over a logit
matrix walks it in row chunks, so a float16/bfloat16/float32 input is never
up-cast as a whole: the extra memory is one working chunk plus O(n_samples)
float64 vectors.

Working precision
-----------------
float64 logits are computed in float64. float16, bfloat16 and float32 logits
are computed in float32, one row chunk at a time, with torch's fused kernels
(``log_softmax``, ``cross_entropy``); every sum over rows is accumulated in
float64. float32 keeps each per-row result to about 1e-7 relative error
(sums of terms of one sign, max-shifted), far below the 1e-4 parity asked of
float32 input, while float64 temporaries would double the memory traffic of
a bandwidth-bound pass (and run at 1/32 to 1/64 of the float32 rate on
consumer GPUs). Chunks are :data:`CHUNK_BYTES` on the CPU (cache-sized) and
:data:`CHUNK_BYTES_DEVICE` on an accelerator (to amortise kernel launches).

This module imports torch; nothing else in skcal imports it at import time.
"""

import sys

import numpy as np
import torch

from . import _numpy, _ovr, _shared
from ._array import probability_log_dtype
from ._shared import observe_chunk_range
from ._shared import weights as _weights

#: Target size in bytes of one working chunk on the CPU (fits in cache).
CHUNK_BYTES = 1 << 20
#: Target size in bytes of one working chunk on an accelerator, where large
#: chunks amortise kernel-launch overhead.
CHUNK_BYTES_DEVICE = 1 << 28

exp = torch.exp
log = torch.log
name = "torch"
#: the same on tensors as on NumPy arrays
row_stride = _numpy.row_stride
stack_columns = _ovr.stack_columns


def from_numpy(a, device=None):
    """The NumPy array ``a`` as a tensor on ``device`` (the CPU by default).

    On the CPU the tensor shares ``a``'s memory (no copy) unless ``a`` is
    read-only.
    """
    t = torch.from_numpy(a) if a.flags.writeable else torch.from_numpy(a.copy())
    return t if device is None else t.to(device)


def chunk_rows(n_samples, n_classes, itemsize=8, chunk_bytes=None, device="cpu"):
    """Row-chunk slices as :func:`skcal._backend._numpy.chunk_rows`; by default
    :data:`CHUNK_BYTES` on the CPU, :data:`CHUNK_BYTES_DEVICE` on another ``device``."""
    if chunk_bytes is None:
        cpu = torch.device(device).type == "cpu"
        chunk_bytes = CHUNK_BYTES if cpu else CHUNK_BYTES_DEVICE
    return _shared.chunk_rows(n_samples, n_classes, itemsize, chunk_bytes)


def output_dtype(dtype):
    """Dtype of probabilities (and of the work) from logits of ``dtype``: float64 or float32."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _empty(shape, dtype, device):
    """An uninitialised output tensor; on the CPU NumPy's memory, shared (no copy).

    NumPy asks the kernel for transparent huge pages for large arrays: fewer
    page faults when a large output is first written than torch's allocation.
    """
    if torch.device(device).type == "cpu":
        np_dtype = np.float64 if dtype == torch.float64 else np.float32
        return torch.from_numpy(np.empty(shape, dtype=np_dtype))
    return torch.empty(shape, dtype=dtype, device=device)


def _chunk_buffers(Z, wd, count):
    """``count`` uninitialised ``(rows of one chunk, n_classes)`` buffers of dtype ``wd``."""
    n, k = Z.shape
    rows = next(chunk_rows(n, k, wd.itemsize, device=Z.device)).stop
    return [torch.empty((rows, k), dtype=wd, device=Z.device) for _ in range(count)]


def _chunks(Z):
    wd = output_dtype(Z.dtype)
    return wd, chunk_rows(Z.shape[0], Z.shape[1], wd.itemsize, device=Z.device)


def _as_param(v, device):
    """A scalar stays a Python float; an array becomes a float64 tensor."""
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return torch.as_tensor(v, dtype=torch.float64, device=device)  # tensors too


@torch.no_grad()
def log_softmax(Z, scale=None, bias=None, out=None):
    """Row-wise log-softmax of ``scale * Z + bias``, computed on the device of ``Z``.

    The contract of :func:`skcal._backend._numpy.log_softmax` (``Z`` may also
    be bfloat16), with torch's fused ``log_softmax`` per chunk.
    """
    return _rowwise(torch.log_softmax, Z, scale, bias, out)


@torch.no_grad()
def softmax(Z, scale=None, bias=None):
    """Row-wise softmax of ``scale * Z + bias`` (see :func:`log_softmax`), without
    a log / exp round trip."""
    return _rowwise(torch.softmax, Z, scale, bias, None)


def _rowwise(fn, Z, scale, bias, out):
    """``fn(scale * Zc + bias, dim=1)`` of every row chunk ``Zc``, written into ``out``."""
    if out is None:
        out = _empty(Z.shape, output_dtype(Z.dtype), Z.device)
    for sl, A in _affine_chunks(Z, scale, bias):
        fn(A, dim=1, out=out[sl])
    return out


def _affine_chunks(Z, scale, bias, fused=True):
    """``(slice, scale * Zc + bias)`` of every row chunk ``Zc`` in ``wd``, in one reused
    buffer (``Zc`` itself without a map).

    ``fused``: vector maps as one ``addcmul`` sweep (else a product, then a sum).
    """
    scale, bias = _as_param(scale, Z.device), _as_param(bias, Z.device)
    wd, chunks = _chunks(Z)
    no_map = scale is None and bias is None and Z.dtype == wd
    buf = None if no_map else _chunk_buffers(Z, wd, 1)[0]  # reused
    # converted to the working dtype once
    scale, bias = (v.to(wd) if isinstance(v, torch.Tensor) else v for v in (scale, bias))
    fused = fused and isinstance(scale, torch.Tensor) and isinstance(bias, torch.Tensor)
    for sl in chunks:
        Zc = Z[sl]
        observe_chunk_range(Z, Zc)
        if buf is None:
            yield sl, Zc
            continue
        A = buf[: Zc.shape[0]]
        if fused:  # one sweep (vector / matrix-diagonal maps): bias + Zc * scale
            torch.addcmul(bias, Zc, scale, out=A)
        elif scale is None:
            A.copy_(Zc)
        else:
            torch.mul(Zc.to(wd), scale, out=A)
        if bias is not None and not fused:
            A.add_(bias)
        yield sl, A


def argmax_rows(P):
    """Column index of the largest entry of each row, int64 tensor of shape (n_samples,)."""
    return torch.argmax(P, dim=1)


@torch.no_grad()
def mean_log_likelihood(LP, y, sample_weight=None):
    """Weighted mean of ``LP[i, y[i]]`` (a float; ``-inf`` if a true-class entry is)."""
    ll = LP.gather(1, y.view(-1, 1).to(device=LP.device, dtype=torch.int64)).view(-1)
    ll = ll.to(torch.float64)
    if sample_weight is None:
        return float(ll.mean())
    w = sample_weight.to(device=LP.device, dtype=torch.float64)
    return float(torch.dot(w, ll) / w.sum())


@torch.no_grad()
def nll(Z, y, sample_weight=None, scale=None, bias=None):
    """:func:`skcal._backend._numpy.nll`, torch's ``cross_entropy`` per chunk."""
    sw, wsum = _weights(sample_weight, Z.shape[0])
    total = torch.zeros((), dtype=torch.float64, device=Z.device)
    for sl, A in _affine_chunks(Z, scale, bias, fused=False):
        li = torch.nn.functional.cross_entropy(A, y[sl], reduction="none")
        total += _shared.wsum(li.to(torch.float64), None if sw is None else sw[sl])
    return float(total) / wsum


@torch.no_grad()
def row_max_and_true(Z, y):
    """Per-row maximum and true-class logit, float64 tensors of shape (n_samples,)."""
    n, k = Z.shape
    m, zy = torch.empty((2, n), dtype=torch.float64, device=Z.device)
    for sl in chunk_rows(n, k, Z.element_size(), device=Z.device):
        m[sl], zy[sl] = _max_and_true(Z[sl], y[sl])
    return m, zy


def _max_and_true(Zc, yc):
    return Zc.amax(dim=1), Zc.gather(1, yc.view(-1, 1)).view(-1)


@torch.no_grad()
def temperature_nll_derivs(
    Z, y, sample_weight, beta, row_stats=None, third=False, return_row_stats=False,
    second=True,
):
    """NLL of temperature scaling and its derivatives in ``beta = 1/T``.

    :func:`skcal._backend._numpy.temperature_nll_derivs` for tensors on one
    device (bfloat16 too: in float32 per chunk, combined in float64).
    """
    return _shared.temperature_nll_derivs(
        _this, Z, y, sample_weight, beta, row_stats, third, return_row_stats, second
    )


def _temperature_chunks(Z):
    wd, chunks = _chunks(Z)
    # two chunk buffers, reused (a fresh tensor per chunk costs an allocation)
    bufs = _chunk_buffers(Z, wd, 2)
    for sl in chunks:
        yield sl, bufs


def _temperature_row_sums(Zc, m, beta, third, bufs, second=True):
    """The torch twin of ``_numpy._temperature_row_sums``."""
    D_buf, E_buf = bufs
    r = m.shape[0]
    # type promotion makes D float32 for 16-bit Z without a separate copy
    D = torch.sub(Zc, m.to(D_buf.dtype)[:, None], out=D_buf[:r])  # <= 0
    E = torch.mul(D, beta, out=E_buf[:r]).exp_()
    s0 = E.sum(dim=1).to(torch.float64)
    E.mul_(D)
    s1 = E.sum(dim=1).to(torch.float64)
    if not second:
        return s0, s1, None, None
    E.mul_(D)
    s2 = E.sum(dim=1).to(torch.float64)
    s3 = None
    if third:
        E.mul_(D)
        s3 = E.sum(dim=1).to(torch.float64)
    return s0, s1, s2, s3


def _empty64(n, like):
    return torch.empty(n, dtype=torch.float64, device=like.device)


_this = sys.modules[__name__]


# --------------------------------------------------------------- vector scaling
def _vector_chunk(Zc, y, w, b, wd):
    """Shared part of the vector-scaling kernels on one chunk (see _numpy)."""
    Zc = Zc.to(wd)
    A = Zc * w.to(wd) + b.to(wd)
    A -= A.amax(dim=1, keepdim=True)
    a_y = A.gather(1, y.view(-1, 1)).view(-1).to(torch.float64)
    A = torch.exp(A)
    s = A.sum(dim=1, dtype=torch.float64)
    A *= (1.0 / s).to(wd)[:, None]
    return Zc, A, torch.log(s) - a_y


def _row_weights(sw, sl, rows, dev):
    """The float64 weights of the rows ``sl`` (ones without weights)."""
    if sw is None:
        return torch.ones(rows, dtype=torch.float64, device=dev)
    return sw[sl].to(torch.float64)


def _vector_chunks(Z, y, sw, w, b, wd, f, t_z, t_1):
    """The torch twin of ``_numpy._vector_chunks`` (``wc``: ones if unweighted)."""
    for sl in chunk_rows(Z.shape[0], Z.shape[1], wd.itemsize, device=Z.device):
        yc = y[sl]
        Zc, P, f_i = _vector_chunk(Z[sl], yc, w, b, wd)
        wc = _row_weights(sw, sl, P.shape[0], Z.device)
        z_y = Zc.gather(1, yc.view(-1, 1)).view(-1).to(torch.float64)
        f += torch.dot(wc, f_i)
        t_z.index_add_(0, yc, wc * z_y)
        t_1.index_add_(0, yc, wc)
        yield Zc, P, wc


@torch.no_grad()
def vector_nll_grad(Z, y, sample_weight, w, b):
    """NLL of vector scaling and its gradient in ``(w, b)``, in one pass.

    :func:`skcal._backend._numpy.vector_nll_grad` for tensors on one device;
    the gradients are float64 NumPy arrays.
    """
    f, gw, gb, _ = _vector_pass(Z, y, sample_weight, w, b, hessian=False)
    return f, gw, gb


@torch.no_grad()
def vector_nll_hess(Z, y, sample_weight, w, b):
    """:func:`skcal._backend._numpy.vector_nll_hess` of tensors (NumPy results)."""
    return _vector_pass(Z, y, sample_weight, w, b, hessian=True)


def _vector_pass(Z, y, sample_weight, w, b, hessian):
    n, k = Z.shape
    dev = Z.device
    sw, wsum = _weights(sample_weight, n)
    w, b = _as_param(w, dev), _as_param(b, dev)
    f64 = torch.float64
    f = torch.zeros((), dtype=f64, device=dev)
    s_pz, s_p, t_z, t_1 = torch.zeros((4, k), dtype=f64, device=dev)
    if hessian:
        s_pzz = torch.zeros(k, dtype=f64, device=dev)
        QQ = torch.zeros((2 * k, 2 * k), dtype=f64, device=dev)
    for Zc, P, wc in _vector_chunks(Z, y, sw, w, b, output_dtype(Z.dtype), f, t_z, t_1):
        PZ = P * Zc
        # Rows renormalised in float64, so that sum_k grad_b_k is 0 to float64
        # precision (the common shift of b is then as well determined as with
        # float64 work).
        P64 = P.to(f64)
        P64 /= P64.sum(dim=1, keepdim=True)
        s_p += wc @ P64
        s_pz += wc @ PZ.to(f64)
        if hessian:
            # p z^2 in float64: it overflows float32 for |z| beyond ~1e19.
            s_pzz += wc @ (PZ.to(f64) * Zc.to(f64))
            # Q^T Q in the working precision per chunk (float32 for 16/32-bit
            # logits: it only shapes Newton's direction, the gradient stays
            # float64), summed over chunks in float64.
            Q = torch.cat([PZ, P], dim=1)
            if sw is not None:
                Q *= wc.sqrt().to(Q.dtype)[:, None]
            QQ += (Q.T @ Q).to(f64)
    sums = [v.cpu().numpy() for v in (s_pz, t_z, s_p, t_1)]
    hess = (QQ.cpu().numpy(), s_pzz.cpu().numpy()) if hessian else ()
    return _shared.vector_result(float(f), *sums, wsum, *hess)


@torch.no_grad()
def vector_nll_hessp(Z, y, sample_weight, w, b, vw, vb):
    """:func:`skcal._backend._numpy.vector_nll_hessp` of tensors (NumPy results)."""
    n, k = Z.shape
    dev = Z.device
    sw, wsum = _weights(sample_weight, n)
    w, b = _as_param(w, dev), _as_param(b, dev)
    vw, vb = _as_param(vw, dev), _as_param(vb, dev)
    f64 = torch.float64
    hw, hb = torch.zeros((2, k), dtype=f64, device=dev)
    wd, chunks = _chunks(Z)
    for sl in chunks:
        Zc, P, _ = _vector_chunk(Z[sl], y[sl], w, b, wd)
        D = _shared.vector_hessp_chunk(Zc, P, vw.to(wd), vb.to(wd), AffineOps)
        wc = _row_weights(sw, sl, P.shape[0], dev)
        hb += wc @ D.to(f64)
        hw += wc @ (D * Zc).to(f64)
    return (hw / wsum).cpu().numpy(), (hb / wsum).cpu().numpy()


@torch.no_grad()
def vector_nll_grad_blocks(Z, y, sample_weight, w, b, single=None):
    """:func:`skcal._backend._numpy.vector_nll_grad_blocks` of tensors."""
    n, k = Z.shape
    dev = Z.device
    sw, wsum = _weights(sample_weight, n)
    f64 = torch.float64
    if single is None:
        single = Z.dtype != f64
    wd = torch.float32 if single else f64
    w, b = _as_param(w, dev).to(wd), _as_param(b, dev).to(wd)
    f = torch.zeros((), dtype=f64, device=dev)
    sums = torch.zeros((6, k), dtype=f64, device=dev)
    t_z, t_1 = torch.zeros((2, k), dtype=f64, device=dev)
    for Zc, P, wc in _vector_chunks(Z, y, sw, w, b, wd, f, t_z, t_1):
        PZ = P * Zc
        u = wc.to(wd)
        Pw, PZw = (P, PZ) if sw is None else (P * u[:, None], PZ * u[:, None])
        sums[0] += (u @ P).to(f64)
        sums[1] += (u @ PZ).to(f64)
        sums[2] += (PZw * Zc).sum(dim=0, dtype=f64)
        sums[3] += (PZw * PZ).sum(dim=0, dtype=f64)
        sums[4] += (PZw * P).sum(dim=0, dtype=f64)
        sums[5] += (Pw * P).sum(dim=0, dtype=f64)
    s_p, s_pz, s_pzz, q_zz, q_z1, q_11 = sums.cpu().numpy()
    f, gw, gb, _ = _shared.vector_result(
        float(f), s_pz, t_z.cpu().numpy(), s_p, t_1.cpu().numpy(), wsum
    )
    blocks = ((s_pzz - q_zz) / wsum, (s_pz - q_z1) / wsum, (s_p - q_11) / wsum)
    return f, gw, gb, blocks


# ------------------------------------ small array helpers (twins of _numpy's)

def take_rows(a, idx):
    """Rows ``idx`` (a NumPy integer array) of tensor ``a``, indexed on its device."""
    return a[torch.as_tensor(idx, device=a.device)]


def project_rows(Z, v):
    """``sum_j Z[i, j] * v[j]`` in float64 for every row, as a NumPy vector."""
    return (Z.double() * torch.as_tensor(v, device=Z.device)).sum(dim=1).cpu().numpy()


def logaddexp(a, b, out=None):
    """``log(exp(a) + exp(b))`` elementwise; ``b`` may be a Python float."""
    if not isinstance(b, torch.Tensor):
        b = torch.tensor(b, dtype=a.dtype, device=a.device)
    return torch.logaddexp(a, b, out=out)


def working_logits(L):
    """Detached logits of any shape: float32 for 16-bit and non-float tensors."""
    L = L.detach()
    if not L.dtype.is_floating_point or L.dtype in (torch.float16, torch.bfloat16):
        L = L.float()
    return L


def any_nan(a):
    """Whether ``a`` holds a NaN."""
    return bool(torch.isnan(a).any())


def log_softmax_last(a):
    """Log-softmax over the last dimension of ``a`` (any shape)."""
    return torch.log_softmax(a, dim=-1)


def column_ranges(Z):
    """Column minima and maxima of ``Z`` as float64 NumPy arrays (one ``aminmax``)."""
    lo, hi = torch.aminmax(Z, dim=0)
    return lo.double().cpu().numpy(), hi.double().cpu().numpy()


# ---------------------------------------------------- a calibrator's inputs
predict_with = _shared.predict_with
predict_index = _shared.predict_index
#: computed on the host, in NumPy, as for NumPy input (the caller moves the
#: labels to the input's device)
score_log_likelihood = _numpy.score_log_likelihood
take_labels = _numpy.take_labels
labels_1d = _numpy.labels_1d
encode_labels = _numpy.encode_labels


def take_columns(Z, idx):
    """Columns ``idx`` (a NumPy integer array) of tensor ``Z``, on its device."""
    return Z.index_select(1, torch.as_tensor(idx, device=Z.device))


# ------------------------------------------------------- the metrics' inputs
_NUMPY_VIEW_DTYPES = (torch.float16, torch.float32, torch.float64)


def numpy_view(a):
    """A NumPy view of the memory of CPU tensor ``a`` (no copy), or None.

    The metrics read float16/32/64 CPU tensors so, without torch's per-call
    dispatch on every 1 MiB chunk (``benchmarks/bench_speed.py --metrics``).
    None for accelerator tensors, CPU bfloat16 and tensors the validation
    rejects (empty, not 1-D/2-D): those take the torch kernels and messages.
    """
    if (
        a.device.type == "cpu"
        and a.dtype in _NUMPY_VIEW_DTYPES
        and a.ndim in (1, 2)
        and a.shape[0] > 0
    ):
        return a.detach().numpy()
    return None


def metric_scores(y_prob, check_numpy):
    """Tensor ``y_prob`` checked as :func:`skcal._backend._numpy.metric_scores` does.

    Through its :func:`numpy_view` if it has one; else checked here: ``p`` is
    the detached tensor (integer / bool as float64), ``lo``, ``hi`` from one
    ``torch.aminmax``, ``names`` None.
    """
    view = numpy_view(y_prob)
    if view is not None:
        return check_numpy(view)
    p = y_prob.detach()
    if p.ndim not in (1, 2):
        raise ValueError(f"y_prob must be 1-D or 2-D, got shape {tuple(p.shape)}.")
    if p.shape[0] == 0:
        raise ValueError("y_prob is empty; at least one sample is required.")
    if p.is_complex():
        raise ValueError(f"y_prob must be real-valued, got dtype {p.dtype}.")
    floating = p.is_floating_point()
    if not floating:  # integers / bool: small, converted once
        p = p.to(torch.float64)
    lo, hi = min_max(p) if p.numel() else (0.0, 0.0)
    return p, None, lo, hi, floating


def row_chunks(a, itemsize=8):
    """Row slices of ``a`` (1-D or 2-D) sized for a working chunk on its device."""
    k = 1 if a.ndim == 1 else a.shape[1]
    return chunk_rows(a.shape[0], k, itemsize, device=a.device)


def row_sums64(a):
    """Float64 sums of the rows of 2-D tensor ``a``, one row chunk at a time."""
    sums = a.new_empty(a.shape[0], dtype=torch.float64)
    for sl in row_chunks(a):
        sums[sl] = a[sl].to(torch.float64).sum(dim=1)
    return sums


# ----------------------------------------------- the affine kernels' array ops
class AffineOps(_shared.SharedOps):
    """The array operations of the affine kernels, torch on ``Z``'s device."""

    name = "torch"
    xp = torch

    def __init__(self, Z):
        self.device = Z.device
        self.wd = output_dtype(Z.dtype)

    def chunks(self, Z, itemsize=None, width=None):
        n, k = Z.shape
        item = itemsize or self.wd.itemsize
        return chunk_rows(n, width or k, item, device=self.device)

    def work(self, Zc):
        return Zc.to(self.wd, copy=True)

    def const(self, a, dtype=None):
        if isinstance(a, torch.Tensor):
            return a.to(device=self.device, dtype=dtype or self.wd)
        return torch.as_tensor(
            np.asarray(a, dtype=np.float64), device=self.device
        ).to(dtype or self.wd)

    def zeros(self, shape):
        return torch.zeros(shape, dtype=torch.float64, device=self.device)

    @staticmethod
    def f64(a):
        return a.to(torch.float64)

    sigmoid = staticmethod(torch.sigmoid)

    @staticmethod
    def softplus(A):
        return torch.logaddexp(torch.zeros((), dtype=A.dtype, device=A.device), A)

    @staticmethod
    def flush_(A, tiny):
        A.masked_fill_(A < tiny, 0.0)

    @staticmethod
    def take(A, y):
        return A.gather(1, y.view(-1, 1)).view(-1)

    @staticmethod
    def sub_onehot(A, y, w=1.0):
        A[torch.arange(A.shape[0], device=A.device), y] -= w

    copy = staticmethod(torch.clone)

    @staticmethod
    def block_rows(n, k, block_bytes):
        """All ``n`` rows: one block (torch's kernels amortise their launches)."""
        return n

    @staticmethod
    def sub_rowdot_(D, P):
        D -= (P * D).sum(dim=1, keepdim=True)

    def ones_col(self, n, dtype):
        return torch.ones((n, 1), dtype=dtype, device=self.device)

    @staticmethod
    def numpy(a):
        if hasattr(a, "detach"):
            return a.detach().cpu().numpy().astype(np.float64)
        return np.asarray(a, dtype=np.float64)

    def empty(self, shape, dtype):
        return _empty(shape, dtype, self.device)


#: The :class:`AffineOps` of ``Z`` (on its device; float64 for float64 ``Z``, else float32).
affine_ops = AffineOps


# ------------------------------------------------- the metrics' bin rules
# Same names and rules as in _numpy.py (documented in skcal.metrics._binning),
# computed in float64 on the tensor's device.
def uniform_bin_ids(x, n_bins):
    """Bin index in 0..n_bins-1 of float64 scores ``x`` (equal-width bins).

    Same rule as the NumPy kernel. Rounding is done by integer conversion
    (``torch.round`` / ``torch.ceil`` are very slow on some CPU builds); for
    ``t >= 0.5`` it equals ``rint`` except at exact halves, which never snap.
    """
    t = (x * n_bins).clamp_(min=0.5)  # every t <= 1 lands in bin 0
    r = (t + 0.5).to(torch.int64)
    rf = r.to(t.dtype)
    snap = ((t - rf).abs() <= _numpy.EDGE_RTOL * rf) & (r >= 1) & (r <= n_bins - 1)
    t = torch.where(snap, rf, t)
    fl = t.to(torch.int64)
    ceil = fl + (t > fl.to(t.dtype)).to(torch.int64)
    return (ceil - 1).clamp_(0, n_bins - 1)


def quantile_edges(x, w, n_bins):
    """Unique equal-mass bin edges (inverted-CDF weighted quantiles), as a tensor.

    Same rule as the NumPy kernel, the few-distinct-scores case included.
    """
    if w is not None:
        keep = w > 0
        x, w = x[keep], w[keep]
    distinct = torch.unique(x)  # sorted
    if distinct.shape[0] <= n_bins:
        return _numpy.distinct_edges(distinct, torch)
    v, order = torch.sort(x, stable=True)
    n = v.shape[0]
    levels = torch.arange(n_bins + 1, dtype=torch.float64, device=x.device)
    if w is None:
        t = levels * (n / n_bins)
        idx = torch.ceil(t * (1.0 - _numpy.QUANTILE_RTOL)).to(torch.int64) - 1
    else:
        s = torch.cumsum(w[order], 0)
        t = levels * (s[-1] / n_bins)
        idx = torch.searchsorted(s, t * (1.0 - _numpy.QUANTILE_RTOL), right=False)
    edges = v[idx.clamp_(0, n - 1)]
    edges[0], edges[-1] = v[0], v[-1]
    return torch.unique(edges)  # v[0] < v[-1]: at least two edges


# ------------------------------------------------- the metrics' row ops
class MetricOps(_shared.SharedOps):
    """The operations of :class:`skcal._backend._numpy.MetricOps` with torch, on ``device``."""

    xp = torch

    def __init__(self, device):
        self.device = device

    def chunk_rows(self, n, k):
        return chunk_rows(n, k, 8, device=self.device)

    f64 = staticmethod(AffineOps.f64)

    def empty(self, n):
        return torch.empty(n, dtype=torch.float64, device=self.device)

    def zeros(self, n, integer=False):
        dtype = torch.int64 if integer else torch.float64
        return torch.zeros(n, dtype=dtype, device=self.device)

    def zeros_bool(self, n):
        return torch.zeros(n, dtype=torch.bool, device=self.device)

    def arange(self, n):
        return torch.arange(n, device=self.device)

    @staticmethod
    def log_softmax(x):
        return torch.log_softmax(x, dim=1)

    pick = staticmethod(AffineOps.take)

    @staticmethod
    def minus_one_at(a, y):
        d = a.clone()
        d.scatter_add_(1, y.reshape(-1, 1), d.new_full((d.shape[0], 1), -1.0))
        return d

    uniform_bin_ids = staticmethod(uniform_bin_ids)
    quantile_edges = staticmethod(quantile_edges)

    def uniform_edges(self, n_bins):
        return torch.linspace(0.0, 1.0, n_bins + 1, dtype=torch.float64, device=self.device)

    @staticmethod
    def quantile_ids(edges, x):
        return torch.searchsorted(edges[1:-1].contiguous(), x, right=False)


def metric_ops(X):
    """The :class:`MetricOps` namespace serving the metrics' passes over ``X`` (on its device)."""
    return MetricOps(X.device)


fit_inputs = _shared.fit_inputs
rows_all_equal = _shared.rows_all_equal


def row_spans(Z):
    """``max_k z_ik - min_k z_ik`` per row, a float64 NumPy array (for messages)."""
    return (Z.amax(1).double() - Z.amin(1).double()).cpu().numpy()
logit_scale = _shared.logit_scale
total = _shared.total


def checked_float_array(X, input_name="X"):
    """``X`` as it is (``check_array`` cannot read a CUDA tensor; callers check its shape)."""
    return X


def writable(A):
    """``A`` itself: a tensor can be computed into in place."""
    return A


# ------------------------------------------------------------ the input checks
check_scores = _shared.check_scores

#: Smallest logit tensor, in bytes, whose range check may be deferred.
DEFER_MIN_BYTES = 1 << 22


def as_scores(X, name):
    """Tensor scores ``X``, detached, as a non-empty 1-D or 2-D floating tensor.

    Floating dtypes are kept, integer tensors become torch's default dtype;
    boolean and complex tensors are refused.
    """
    if not X.dtype.is_floating_point:
        if X.dtype == torch.bool or X.is_complex():
            raise ValueError(
                f"Input {name} has dtype {X.dtype}; expected a real floating tensor."
            )
        X = X.to(torch.get_default_dtype())
    _shared.check_shape(X, name)
    return X.detach()


def defers_range_check(X):
    """Whether the range check of logits ``X`` may run after the prediction.

    For a 2-D CPU tensor of more than one column and at least
    :data:`DEFER_MIN_BYTES` (:func:`skcal.utils.validation.deferred_range_check`).
    """
    return (
        X.ndim == 2
        and X.shape[1] > 1
        and X.device.type == "cpu"
        and X.numel() * X.element_size() >= DEFER_MIN_BYTES
    )


def min_max(X):
    """Minimum and maximum of tensor ``X`` as floats (NaN if any), one ``aminmax``."""
    lo, hi = torch.aminmax(X)
    return float(lo), float(hi)


def row_sum_deviation(a, stop=None):
    """Largest ``|sum(row) - 1|`` of 2-D tensor ``a`` (float64 sums, one reduction)."""
    return float((a.sum(dim=1, dtype=torch.float64) - 1.0).abs().max())


def binary_logits(s):
    """The logits ``[0, s]`` (two columns) of binary log-odds ``s``, in its dtype."""
    return torch.stack([torch.zeros_like(s), s], dim=1)


def probability_logits(P):
    """``log(P)`` of checked probabilities (as ``_numpy.probability_logits``)."""
    work = probability_log_dtype(P.dtype)
    if P.ndim == 1 or P.shape[1] == 1:
        p1 = P.reshape(-1).to(work)
        P = torch.stack([1 - p1, p1], dim=1)
    else:
        P = P.to(work)
    return torch.log(torch.clamp(P, min=torch.finfo(work).tiny))


fit_ovr_maps = _shared.fit_ovr_maps


def ovr_interp_proba(S, knots, log):
    """Renormalised (log-)probabilities of one-vs-rest scores interpolated through knots.

    ``S``: scores of shape (n, K), K > 2; ``knots``: the ``(xk, yk)`` of each
    class (:func:`skcal._backend._ovr.interp_knots` of each column,
    renormalised by :func:`skcal._backend._ovr.renormalise`).
    """
    cols = [_ovr.interp_knots(S[:, j], xk, yk) for j, (xk, yk) in enumerate(knots)]
    P = _ovr.renormalise(_ovr.stack_columns(cols))
    return _ovr.log_or_neg_inf(P) if log else P
