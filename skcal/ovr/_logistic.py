"""Small weighted logistic regressions with non-negativity bounds, solved exactly.

:func:`fit_logistic_bounded` is the solver of the beta calibration maps
(``a, b >= 0``) and of the penalised splines (monotone option): a primal
active-set method whose subproblems are solved by Newton's method with exact
derivatives. Problems have a handful to a few dozen parameters; every
iteration is one pass over the data.
"""

import math

import numpy as np
from scipy.special import logit

__all__ = ["DenseDesign", "WorkBuffers", "base_rate_log_odds", "fit_logistic_bounded",
           "log1p_small", "logistic_evaluator", "logistic_loss", "softplus"]

from ._newton import newton_batched


#: The constant maps of a class that is absent (or the only class) use its base
#: rate 0 (or 1) clipped to [eps, 1 - eps].
BASE_RATE_CLIP = 1e-6


def base_rate_log_odds(n_pos, total):
    """``logit`` of the base rate ``n_pos / total``, clipped by :data:`BASE_RATE_CLIP`."""
    return logit(np.clip(np.divide(n_pos, total), BASE_RATE_CLIP, 1.0 - BASE_RATE_CLIP))


def log1p_small(e, u, out, work):
    """``log1p(e)`` for ``e`` in ``[0, 1]``, from ``u = 1 + e`` (as rounded), into ``out``.

    ``log(u)`` plus the rounding error of ``u``: ``u - 1`` is exact (Sterbenz)
    and ``e - (u - 1)`` is the exact error ``1 + e - u`` (Fast2Sum), so
    ``log1p(e) = log(u) + log1p(err / u) = log(u) + err / u`` up to
    ``(err / u)^2 / 2 < 1e-32``: as accurate as ``log1p`` (also where ``u``
    rounds to 1: ``e`` itself), at about half its cost (float64 ``log1p`` is
    twice ``log`` with this NumPy). ``work``: an array like ``e`` (overwritten).
    """
    np.log(u, out=out)
    np.subtract(u, 1.0, out=work)
    np.subtract(e, work, out=work)
    work /= u
    out += work
    return out


def softplus(f):
    """``log(1 + exp(f))`` without overflow or slow underflow.

    ``exp(-|f|)`` is 0 where it would underflow (``|f| > 700``, NaN too):
    underflowing and subnormal results take a slow path in the floating-point
    unit (tens of times slower per element); they are below 1e-304 and
    vanish next to 1 anyway. The exponential runs on ``max(-|f|, -700)``
    (NumPy's vectorised loop; a masked ``np.exp(..., where=)`` is several
    times slower) and the underflowing entries are set to 0 after it;
    ``log1p`` of it by :func:`log1p_small`.
    """
    a = np.abs(f)
    big = ~(a <= 700.0)
    e = np.negative(a, out=a)
    np.maximum(e, -700.0, out=e)
    np.exp(e, out=e)
    if big.any():
        e[big] = 0.0
    return np.maximum(f, 0.0) + log1p_small(e, e + 1.0, np.empty_like(e), np.empty_like(e))


def logistic_loss(f, t, w, wsum):
    """Weighted mean cross-entropy ``sum w [log(1 + e^f) - t f] / sum w``.

    Written as an elementwise product and a sum, not ``np.dot``: a BLAS call
    per evaluation is slow on a loaded machine (its threads spin-wait).
    """
    return float((w * (softplus(f) - t * f)).sum() / wsum)


def _dot(a, b):
    """``sum(a * b)`` of two float64 vectors in one pass, without BLAS (whose
    threads spin-wait on a loaded machine)."""
    return float(np.einsum("i,i->", a, b))


class WorkBuffers:
    """Named work arrays kept for successive fits of the same size.

    A fresh n-vector costs page faults comparable to its arithmetic; a loop
    of fits on equally long data (one per class of a one-vs-rest problem)
    passes one ``WorkBuffers`` to each so that they reuse the same memory.
    Every array's contents are garbage to its next user.

    Parameters
    ----------
    nbytes : int, default=0
        Size of one block from which the arrays are cut while it lasts; the
        others are allocated one by one. One allocation instead of ten:
        repeated fits of one size then reuse the allocator's memory (on
        Linux / glibc, measured: no page faults after the first fits; ten
        separate arrays took ~1,750 per fit of 100,000 rows).
    """

    def __init__(self, nbytes=0):
        self._arrays = {}
        self._block = np.empty(int(nbytes), dtype=np.uint8) if nbytes else None
        self._used = 0

    def get(self, name, shape, dtype=np.float64):
        """The array ``name`` of ``shape`` and ``dtype`` (uninitialised, reused when they match)."""
        shape = tuple(shape) if np.ndim(shape) else (int(shape),)
        dtype = np.dtype(dtype)
        a = self._arrays.get(name)
        if a is None or a.shape != shape or a.dtype != dtype:
            size = math.prod(shape) * dtype.itemsize
            if self._block is not None and self._used + size <= self._block.size:
                a = self._block[self._used:self._used + size].view(dtype).reshape(shape)
                self._used += -(-size // 64) * 64  # the next array 64-byte aligned
            else:
                a = np.empty(shape, dtype=dtype)
            self._arrays[name] = a
        return a


def _empty(buffers, name, n):
    return np.empty(n) if buffers is None else buffers.get(name, (n,))


class DenseDesign:
    """A dense design matrix (few columns) as the operator :func:`fit_logistic_bounded` uses.

    The columns are stored as the rows of one C-contiguous (p, n) array (a
    last column of ones, with ``from_rows(..., intercept=True)``, is not); every
    product is a few one-pass dot products (no BLAS, no temporaries: one
    n-vector of work, allocated once, and the output of :meth:`matvec`,
    overwritten by the next call).
    """

    def __init__(self, X):
        self._use_rows(np.asarray(X, dtype=np.float64).T)

    @classmethod
    def from_rows(cls, R, buffers=None, intercept=False):
        """The design whose columns are the rows of ``R`` (p, n), used without a copy.

        ``intercept``: a last column of ones follows them, not stored (its
        products are plain sums: no n-vector of ones is read).
        ``buffers``: a :class:`WorkBuffers` lending its two work vectors.
        """
        self = cls.__new__(cls)
        self._use_rows(R, buffers, intercept)
        return self

    def _use_rows(self, R, buffers=None, intercept=False):
        self.rows = np.ascontiguousarray(R, dtype=np.float64)
        self.intercept = bool(intercept)
        n = self.rows.shape[1]
        self.shape = (n, len(self.rows) + self.intercept)
        self._f = _empty(buffers, "design_f", n)
        self._work = _empty(buffers, "design_work", n)

    def matvec(self, theta):
        f = np.multiply(self.rows[0], theta[0], out=self._f)
        for c, th in zip(self.rows[1:], theta[1:]):
            f += np.multiply(c, th, out=self._work)
        if self.intercept:
            f += theta[-1]
        return f

    def rmatvec(self, r):
        out = [_dot(c, r) for c in self.rows]
        return np.array(out + [float(r.sum())] if self.intercept else out)

    def gram(self, q):
        """``X' diag(q) X``."""
        m = len(self.rows)
        p = m + self.intercept
        H = np.empty((p, p))
        for i in range(m):
            cq = np.multiply(self.rows[i], q, out=self._work)
            for j in range(i, m):
                H[i, j] = H[j, i] = _dot(cq, self.rows[j])
            if self.intercept:
                H[i, m] = H[m, i] = float(cq.sum())
        if self.intercept:
            H[m, m] = float(q.sum())
        return H


def logistic_evaluator(X, t, w, P=None, buffers=None):
    """``evaluate(cols, theta)`` of one weighted logistic problem, for :func:`~skcal.ovr._newton.newton_batched`.

    The mean loss ``sum_i w_i [log(1 + exp(f_i)) - t_i f_i] / sum_i w_i
    + theta' P theta / 2`` (``f = X theta``), its gradient and
    Hessian (no ridge), as arrays of one problem: (1,), (1, p), (1, p, p).
    One ``exp`` and one ``log`` per row (``log1p`` by :func:`log1p_small`);
    the derivatives use ``p (1 - p) = e / (1 + e)^2`` (``e = exp(-|f|)``),
    without cancellation. ``w`` None: unit weights (no weight vectors are
    made; the sums are scaled by ``1 / n`` at the end). ``buffers``: a
    :class:`WorkBuffers` lending the four work vectors.
    """
    n, p = X.shape
    t = np.asarray(t, dtype=np.float64)
    P = np.zeros((p, p)) if P is None else P
    if w is None:
        wn = 1.0 / n
        b = X.rmatvec(t) * wn  # X' w t / sum w: the loss's linear term is theta' b

        def wdot(x):  # sum_i w_i x_i / sum_i w_i
            return float(x.sum()) * wn
    else:
        w = np.asarray(w, dtype=np.float64)
        wn = w / float(w.sum())
        b = X.rmatvec(wn * t)

        def wdot(x):
            return _dot(wn, x)
    # work vectors of this fit, reused by every evaluation: a fresh n-vector
    # per operation costs page faults several times its arithmetic
    E, inv, tmp, work = (_empty(buffers, name, n)
                         for name in ("eval_e", "eval_inv", "eval_tmp", "eval_work"))

    def evaluate(cols, th):
        # loss, gradient and Hessian from one f, one exp and one log per row
        th = th[0]
        f = X.matvec(th)
        np.abs(f, out=E)
        np.negative(E, out=E)
        np.maximum(E, -700.0, out=E)  # no slow subnormal exp (e > 1e-305)
        np.exp(E, out=E)  # exp(-|f|)
        np.add(E, 1.0, out=inv)
        L = log1p_small(E, inv, tmp, work)
        L += np.maximum(f, 0.0, out=work)  # softplus(f)
        F = wdot(L) - th @ b + 0.5 * th @ P @ th
        np.reciprocal(inv, out=inv)  # sigmoid(|f|)
        q = np.multiply(E, inv, out=E)
        q *= inv  # p (1 - p), without cancellation
        np.subtract(inv, 0.5, out=inv)
        r = np.copysign(inv, f, out=inv)
        r += 0.5  # sigmoid(f)
        r -= t
        if w is None:
            g, H = X.rmatvec(r) * wn, X.gram(q) * wn
        else:
            q *= wn  # w p (1 - p) / sum w
            r *= wn
            g, H = X.rmatvec(r), X.gram(q)
        return np.array([F]), (g + P @ th)[None], (H + P)[None]

    return evaluate


def fit_logistic_bounded(
    X, t, w, *, nonneg=None, penalty=None, theta0=None, tol=1e-12, max_iter=200,
    full_output=False, buffers=None, start=None,
):
    """Minimise a penalised weighted logistic loss subject to ``theta_j >= 0``.

    Parameters
    ----------
    X : ndarray of shape (n, p) or design operator
        Features (no implicit intercept: include a column of ones), or an
        object with ``shape``, ``matvec``, ``rmatvec`` and ``gram(q)``
        (``X' diag(q) X``) like :class:`DenseDesign`.
    t : ndarray of shape (n,)
        Targets in ``[0, 1]``.
    w : ndarray of shape (n,) or None
        Non-negative weights, positive sum; None: unit weights.
    nonneg : ndarray of bool of shape (p,), default=None
        Coefficients constrained to be ``>= 0`` (none when None).
    penalty : ndarray of shape (p, p), default=None
        Positive semi-definite ``P`` of the penalty ``theta' P theta / 2``.
    theta0 : ndarray of shape (p,), default=None
        Feasible start (zeros when None; negative bounded entries are set to 0).
    tol : float, default=1e-12
        Stop when half the squared Newton decrement on the free coefficients
        is at most ``tol`` and no bounded coefficient at 0 could decrease the
        objective by more than ``tol`` by moving alone.
    max_iter : int, default=200
        Maximum number of Newton iterations (all active sets together).
    full_output : bool, default=False
        Also return the objective at the last evaluated point.
    buffers : WorkBuffers, default=None
        Lends the evaluation's work vectors (see :class:`WorkBuffers`).
    start : tuple (F, g, H), default=None
        The objective (scalar), gradient (p,) and Hessian (p, p) at a
        feasible ``theta0`` when the caller has them (e.g. from moments);
        evaluated otherwise.

    Returns
    -------
    theta : ndarray of shape (p,)
    n_iter : int
    converged : bool
    F : float
        Only with ``full_output``: the objective at the last evaluated point
        (the returned ``theta`` is one last, tiny, Newton step from it when
        converged).

    Notes
    -----
    The objective ``F(theta) = sum_i w_i [log(1 + exp(f_i)) - t_i f_i] / sum_i w_i
    + theta' P theta / 2`` with ``f = X theta`` is convex, so the
    Karush-Kuhn-Tucker conditions characterise its minimisers. The iteration
    is :func:`skcal.ovr._newton.newton_batched` with one problem: damped Newton
    steps (Armijo backtracking) on the free coefficients, a primal active set
    for the bounded ones (see its Notes), a ``1e-12`` ridge that changes the
    steps, never the stationary point, and the stopping rule of ``tol``.
    """
    if not hasattr(X, "matvec"):
        X = DenseDesign(X)
    p = X.shape[1]
    P = np.zeros((p, p)) if penalty is None else np.asarray(penalty, np.float64)
    theta = np.zeros(p) if theta0 is None else np.array(theta0, dtype=np.float64)
    if start is not None:
        start = tuple(np.asarray(v, dtype=np.float64)[None] for v in start)
    theta, n_iter, status, F = newton_batched(
        logistic_evaluator(X, t, w, P, buffers), theta[None], start=start, nonneg=nonneg,
        tol=tol, max_iter=max_iter)
    out = theta[0], int(n_iter[0]), status[0] == "converged"
    return out + (float(F[0]),) if full_output else out
