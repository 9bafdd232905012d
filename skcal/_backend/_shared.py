"""The parts of the kernels written once for NumPy arrays and torch tensors.

:mod:`skcal._backend._numpy` and :mod:`skcal._backend._torch` keep only the
per-chunk sweeps over the logits, tuned per library; what surrounds them (row
chunking, sample weights, the per-row combination of row sums, float64
accumulation over chunks, the pass skeletons, the vector-scaling gradient and
Hessian) is here, written with the operators and methods both array types
share (``+ - * /``, ``@``, ``.sum()``, slicing, ``.tolist()``, ``.clip``), so
it dispatches on nothing (``docs/architecture.rst``; ``benchmarks/README.md``
measures why the sweeps are not written against the array API standard).
:class:`SharedOps` calls the few functions both libraries name alike
(``exp``, ``concatenate``, ``stack``, ``bincount``) through its subclass's
array module ``xp``.
"""

import contextvars

import numpy as np

from ._array import to_numpy

#: The deferred range checks (objects with ``observe(Z, Zc)``) of the innermost
#: :func:`skcal.utils.validation.deferred_range_check` block, else None; here so
#: that the kernels report the chunks they read without importing skcal.utils.
DEFERRED_RANGE_CHECKS = contextvars.ContextVar("skcal_deferred_range_checks", default=None)


def observe_chunk_range(Z, Zc):
    """Report the row chunk ``Zc`` that a kernel has just read to the deferred checks of
    ``Z`` (a no-op outside a ``deferred_range_check`` block)."""
    checks = DEFERRED_RANGE_CHECKS.get()
    if checks:
        for check in checks:
            check.observe(Z, Zc)


def chunk_rows(n_samples, n_classes, itemsize, budget):
    """Row slices of ``budget`` bytes (:func:`skcal._backend._numpy.chunk_rows`)."""
    step = max(1, budget // max(1, n_classes * itemsize))
    for start in range(0, n_samples, step):
        yield slice(start, min(start + step, n_samples))


def weights(sample_weight, n):
    """``(sample_weight, sum of the weights)``; ``(None, n)`` without weights."""
    if sample_weight is None:
        return None, float(n)
    return sample_weight, float(sample_weight.sum())


def wsum(v, w):
    """Sum of the float64 vector ``v``, weighted by ``w`` (None: unweighted)."""
    return v.sum() if w is None else w @ v


# ---------------------------------------------------------- temperature scaling
def temperature_nll_derivs(lib, Z, y, sample_weight, beta, row_stats, third,
                           return_row_stats, second=True):
    """The pass of ``temperature_nll_derivs`` of kernel module ``lib``.

    ``lib`` supplies the per-chunk sweeps ``_temperature_chunks(Z)`` (yielding
    ``(slice, state)``), ``_max_and_true`` and ``_temperature_row_sums``, and
    the float64 allocator ``_empty64(n, like)``.
    Without ``row_stats`` the row maxima and true-class logits are taken in
    the same pass. Without ``second`` the pass skips ``f''`` (and ``f'''``),
    returned as None.
    """
    n = Z.shape[0]
    fused = row_stats is None
    if fused:
        m_all, zy_all = lib._empty64(n, Z), lib._empty64(n, Z)
    else:
        m_all, zy_all = row_stats
    sw, total = weights(sample_weight, n)
    beta = float(beta)
    acc = lib._empty64(4, Z)
    acc[:] = 0.0
    for sl, state in lib._temperature_chunks(Z):
        Zc = Z[sl]
        if fused:
            m_all[sl], zy_all[sl] = lib._max_and_true(Zc, y[sl])
        m = m_all[sl]
        s0, s1, s2, s3 = lib._temperature_row_sums(Zc, m, beta, third, state, second)
        # per row: the NLL, f', f'' (Var_p, clipped at 0) and f''' terms (the
        # Notes of _numpy.temperature_nll_derivs), dy = z_y - max z
        dy, mu = zy_all[sl] - m, s1 / s0
        terms = [lib.log(s0) - beta * dy, mu - dy]
        if second:
            m2 = s2 / s0
            terms.append((m2 - mu * mu).clip(min=0.0))
            if third:
                terms.append(s3 / s0 - mu * (3.0 * m2 - 2.0 * mu * mu))
        w = None if sw is None else sw[sl]
        for j, v in enumerate(terms):
            acc[j] += wsum(v, w)
    out = tuple((acc / total).tolist()[: 4 if third else 3])
    if not second:
        out = out[:2] + (None,) * (len(out) - 2)
    return out + ((m_all, zy_all),) if return_row_stats else out


# --------------------------------------------------------------- vector scaling
def vector_result(f, s_pz, t_z, s_p, t_1, total, QQ=None, s_pzz=None):
    """NLL, gradient and (with ``QQ``) Hessian of vector scaling from its sums.

    The sums over rows ``i`` with weights ``s_i`` (``total`` their sum):
    ``f = sum_i s_i [logsumexp(a_i) - a_{i, y_i}]``; per class (float64,
    shape (K,)) ``s_pz = sum_i s_i p_i z_i``, ``t_z = sum_i s_i e_{y_i} z_{i, y_i}``,
    ``s_p = sum_i s_i p_i``, ``t_1 = sum_i s_i e_{y_i}`` and
    ``s_pzz = sum_i s_i p_i z_i^2``; ``QQ = sum_i s_i q_i q_i^T`` (2K x 2K,
    symmetric) with ``q_i = (p_i z_i, p_i)``. Returns the means
    ``f, grad_w, grad_b, hess`` (``hess`` None without ``QQ``).
    """
    gw = (s_pz - t_z) / total
    gb = (s_p - t_1) / total
    if QQ is None:
        return float(f) / total, gw, gb, None
    H = add_diagonal_blocks(-QQ, s_pzz, s_pz, s_p)
    H /= total
    return float(f) / total, gw, gb, H


def add_diagonal_blocks(H, d_ww, d_wb, d_bb):
    """Add ``[[diag(d_ww), diag(d_wb)], [diag(d_wb), diag(d_bb)]]`` to ``H`` (2K x 2K)."""
    k = d_ww.shape[0]
    idx = np.arange(k)
    H[idx, idx] += d_ww
    H[idx + k, idx + k] += d_bb
    H[idx, idx + k] += d_wb
    H[idx + k, idx] += d_wb
    return H


def vector_hessp_chunk(Zc, P, vw, vb, ops):
    """Per-row part of the vector-scaling Hessian-vector product on one chunk.

    Returns ``U`` with ``u_i = p_i * (d_i - p_i . d_i)``, ``d_i = vw * z_i + vb``
    (``hw = mean_s[u_i * z_i]``, ``hb = mean_s[u_i]``), computed in one new
    array; ``ops`` is the library's ``AffineOps`` (its ``sub_rowdot_``).
    """
    D = Zc * vw
    D += vb
    ops.sub_rowdot_(D, P)
    D *= P
    return D


# ------------------------------------------- the array ops of both libraries
class SharedOps:
    """The operations of ``AffineOps`` and ``MetricOps`` spelt alike in both libraries.

    (torch takes ``axis`` / ``keepdims`` for ``dim`` / ``keepdim``; ``xp`` is the
    subclass's ``numpy`` or ``torch``.)
    """

    @staticmethod
    def rowsum(A):
        return A.sum(axis=1, keepdims=True)

    @staticmethod
    def colsum(A):
        return A.sum(axis=0)

    @staticmethod
    def row_sum(a):
        return a.sum(axis=1)

    @staticmethod
    def row_argmax(a):
        return a.argmax(axis=1)

    def rowmax(self, A):
        return self.xp.amax(A, axis=1, keepdims=True)

    def row_max(self, a):
        return self.xp.amax(a, axis=1)

    def rowdot(self, P, D):
        """``sum_k P * D`` per row, shape ``(n,)``."""
        return self.xp.einsum("ij,ij->i", P, D)

    def broadcast_rows(self, w, shape):
        return self.xp.broadcast_to(w[:, None], shape)

    def zero_unweighted(self, values, weight):
        """``values`` with 0 where ``weight`` is 0 (so that 0 * inf is not NaN)."""
        return self.xp.where(weight > 0, values, 0.0)

    def exp(self, A):
        return self.xp.exp(A)

    def exp_(self, A):
        return self.xp.exp(A, out=A)

    def log(self, A):
        return self.xp.log(A)

    def tanh(self, A):
        return self.xp.tanh(A)

    def cat_rows(self, parts):
        return self.xp.concatenate(parts, axis=0)

    def cat(self, parts):
        return self.xp.concatenate(parts, axis=1)

    def pair(self, a, b):
        return self.xp.stack([a, b], axis=1)

    def bincount(self, ids, weights, size):
        return self.xp.bincount(ids, weights=weights, minlength=size)

    to_numpy = staticmethod(to_numpy)

    @staticmethod
    def weighted_mean(values, weight):
        """``sum w v / sum w`` (the plain mean without weights), a float."""
        if weight is None:
            return float(values.mean())
        return float((values * weight).sum() / weight.sum())

    def log_sigmoid_pair(self, s):
        """``(log p0, log p1)`` of class-1 log-odds ``s``: ``-log(1 + e^(+-s))``."""
        zero = self.xp.zeros_like(s)
        return self.pair(-self.xp.logaddexp(zero, s), -self.xp.logaddexp(zero, -s))


# ------------------------------------------------- a calibrator's predictions
def predict_with(est, method, Z):
    """``est.<method>`` (a private predict hook) on the whole of validated ``Z``,
    moved to the calibrator's backend by ``est._prepare`` (dask: per row block)."""
    Z, xp = est._prepare(Z)
    return getattr(est, method)(Z, xp)


def predict_index(est, Z):
    """The predicted column of every row of ``Z``, NumPy int64.

    A calibrator whose map keeps the order of the logits
    (``est._preserves_order``) predicts the argmax of the logits themselves
    (``est._order_columns``), which rounded probabilities might tie or swap;
    any other the argmax of its probabilities.
    """
    Z, xp = est._prepare(Z)
    S = est._order_columns(Z) if est._preserves_order else est._predict_proba(Z, xp)
    return to_numpy(xp.argmax_rows(S))


# ------------------------------------------------------ a calibrator's fit
def fit_inputs(est, Z, y, sample_weight, *, check):
    """The inputs of ``est._fit``, ``(Z, y_enc, sample_weight, xp)``, on its backend.

    Labels encoded in NumPy as positions in the sorted ``classes_`` (the
    columns of ``Z`` follow); weights checked by ``check`` (passed in) and
    scaled to max 1.
    """
    y_enc = est._encode_y(y, Z.shape[1], Z.shape[0])
    rank = est._sort_classes()
    if rank is not None:
        y_enc = rank[y_enc]
        Z = est._sort_columns(Z)
    sw = check(sample_weight, Z.shape[0], relative=True)
    Z, xp = est._prepare(Z)
    device = getattr(Z, "device", None)
    y_enc = xp.from_numpy(y_enc, device=device)
    if sw is not None:
        sw = xp.from_numpy(sw, device=device)
    return Z, y_enc, sw, xp


def rows_all_equal(Z):
    """Whether every row of ``Z`` (at least two) is the same."""
    if Z.shape[0] < 2 or not bool((Z[:ROWS_EQUAL_HEAD] == Z[:1]).all()):
        return False  # the first rows settle the usual case
    if not bool((Z[:, 0] == Z[0, 0]).all()):
        return False  # then one column read
    return bool((Z == Z[:1]).all())


#: Rows compared first by :func:`rows_all_equal` (a strided column read of a
#: wide ``Z`` reads all of its memory).
ROWS_EQUAL_HEAD = 16


def logit_scale(Z, y, stats):
    """``max_i (max_k z_ik - z_{i,y_i})`` (1 where that is 0) from ``stats =
    row_max_and_true(Z, y)``: the logit scale of ``fit_temperature``."""
    gap = float((stats[0] - stats[1]).max())
    return gap if gap > 0 else 1.0


def total(sample_weight):
    """``float(sample_weight.sum())``."""
    return float(sample_weight.sum())


# ------------------------------------------------------------ the input checks
def check_scores(X, input_type, name, check_block):
    """``check_block(X, input_type=..., name=...)``: checked at once (the dask twin
    checks each row block when it is computed)."""
    return check_block(X, input_type=input_type, name=name)


def check_shape(X, name):
    """Raise unless the scores ``X`` are 1-D or 2-D and not empty."""
    if X.ndim not in (1, 2):
        raise ValueError(
            f"Input {name} must be 1-D (binary scores) or 2-D (n_samples, n_classes); "
            f"got {X.ndim}-D of shape {tuple(X.shape)}."
        )
    if X.shape[0] == 0 or (X.ndim == 2 and X.shape[1] == 0):
        raise ValueError(f"Input {name} is empty: shape {tuple(X.shape)}.")


def fit_ovr_maps(est, Z, y, sample_weight):
    """The per-class maps of the one-vs-rest calibrator ``est`` on in-memory logits."""
    return est._fit_in_memory(Z, y, sample_weight)
