"""Ensemble temperature scaling (Zhang, Kailkhura & Han 2020, "Mix-n-Match")."""

import math

import numpy as np

from .._backend import _matrix as mk
from ._temperature import _TemperatureParameters, fit_temperature, warn_stopped
from ..utils._docstrings import substitute_docstring
from .._backend._array import to_numpy

__all__ = ["EnsembleTemperatureScaler", "fit_simplex_mixture"]

#: The three simplex vertices, then the three edges as (a, b) vertex pairs.
_EDGES = ((0, 1), (0, 2), (1, 2))


def _mixture_terms(E, sw):
    """Objective pieces of ``-mean_s log(E w)`` for the (n, 3) matrix ``E``.

    ``E`` is kept as three contiguous columns; the derivatives are a few
    dot products over rows (no ``(n, 3)`` temporaries).
    """
    cols = [np.ascontiguousarray(E[:, j], dtype=np.float64) for j in range(3)]
    wsum = float(len(E) if sw is None else sw.sum())
    sw = None if sw is None else np.asarray(sw, dtype=np.float64)

    def mix(w):
        return w[0] * cols[0] + w[1] * cols[1] + w[2] * cols[2]

    def value(w):
        m = mix(w)
        if np.any(m < 0):
            return np.inf, m
        with np.errstate(divide="ignore"):
            L = np.log(m)
        return -float(L.sum() if sw is None else sw @ L) / wsum, m

    def derivs(w):
        m = mix(w)
        R = [c / m for c in cols]
        wR = R if sw is None else [sw * r for r in R]
        g = -np.array([float(r.sum()) for r in wR]) / wsum
        H = np.empty((3, 3))
        for i in range(3):
            for j in range(i, 3):
                H[i, j] = H[j, i] = float(wR[i] @ R[j]) / wsum
        return g, H

    def edge(a, b):
        """``t -> (F', F'')`` along ``(1 - t) a + t b`` (two reductions each)."""
        ma, md = mix(a), mix(b - a)

        def g1(t):
            r = md / (ma + t * md)
            wr = r if sw is None else sw * r
            return -float(wr.sum()) / wsum, float(wr @ r) / wsum

        return g1

    return value, derivs, edge


def _edge_min(value, edge, a, b, tol):
    """Minimise the convex ``t -> F((1 - t) a + t b)`` on [0, 1] (safeguarded Newton)."""
    g1 = edge(a, b)

    with np.errstate(divide="ignore", invalid="ignore"):
        g0, _ = g1(0.0) if np.isfinite(value(a)[0]) else (-np.inf, 0.0)
        gb, _ = g1(1.0) if np.isfinite(value(b)[0]) else (np.inf, 0.0)
    if not g0 < 0:
        return 0.0
    if not gb > 0:
        return 1.0
    lo, hi, t = 0.0, 1.0, 0.5
    for _ in range(200):
        g, h = g1(t)
        if g > 0:
            hi = t
        else:
            lo = t
        step = -g / h if h > 0 else np.nan
        if h > 0 and g * g / h <= 1e-24:
            return t  # Newton's predicted decrease is far below float64 resolution
        cand = t + step
        if not lo < cand < hi:
            cand = 0.5 * (lo + hi)
        if abs(cand - t) <= tol or hi - lo <= tol:
            return cand
        t = cand
    return t


def fit_simplex_mixture(E, sample_weight=None, *, tol=1e-12, max_iter=100):
    """Minimise ``-mean_s log(E_i . w)`` over the probability simplex of ``w``.

    Parameters
    ----------
    E : ndarray of shape (n_samples, 3), float64, non-negative
        Per-row likelihoods of the true class under the three components
        (any positive per-row factor may be divided out).
    sample_weight : ndarray of shape (n_samples,), float64, or None
    tol : float, default=1e-12
        Newton: stop when half the squared Newton decrement is at most
        ``tol``; edges: when the bracket on the edge coordinate is narrower
        than ``tol``.
    max_iter : int, default=100

    Returns
    -------
    w : ndarray of shape (3,)
        The minimiser (on the simplex).
    n_iter : int
        Newton iterations of the interior solve.

    Notes
    -----
    The objective is convex. Its minimum over the simplex is either the
    minimiser within the plane ``sum w = 1`` (found by damped Newton with the
    exact 2 x 2 Hessian in the coordinates ``(w_1, w_2)``, from the
    barycentre) when that point lies in the simplex, or lies on an edge,
    where it is found by safeguarded 1-D Newton; every candidate is
    evaluated and the best kept, so the answer is exact to ``tol``.
    """
    value, derivs, edge = _mixture_terms(E, sample_weight)
    V = np.eye(3)
    cands = []
    for i, j in _EDGES:
        t = _edge_min(value, edge, V[i], V[j], 1e-14)
        cands.append((1 - t) * V[i] + t * V[j])
    # interior: Newton in (w1, w2), w3 = 1 - w1 - w2
    M = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    w = np.full(3, 1.0 / 3.0)
    f, _ = value(w)
    n_iter = 0
    inside = False
    for n_iter in range(1, max_iter + 1):
        g, H = derivs(w)
        gr, Hr = M.T @ g, M.T @ H @ M
        try:
            d = -np.linalg.lstsq(Hr, gr, rcond=1e-13)[0]
        except np.linalg.LinAlgError:
            break
        dec = -0.5 * float(gr @ d)
        if not np.isfinite(dec):
            break
        if dec <= tol:
            w = w + M @ d
            inside = bool(np.all(w >= 0))
            break
        t = 1.0
        while t > 1e-12:
            wt = w + t * (M @ d)
            ft, m = value(wt)
            if np.all(m > 0) and np.isfinite(ft) and ft <= f + 1e-4 * t * float(gr @ d):
                break
            t *= 0.5
        else:
            break
        if np.any(wt < -0.5) or np.any(wt > 1.5):
            break  # heading far outside the simplex: the optimum is on an edge
        w, f = wt, ft
    if inside:
        cands.append(np.clip(w, 0.0, None) / np.clip(w, 0.0, None).sum())
    best = int(np.argmin([value(c)[0] for c in cands]))
    return cands[best], n_iter


@substitute_docstring
class EnsembleTemperatureScaler(_TemperatureParameters):
    """Ensemble temperature scaling: a convex mixture of TS, the raw and the uniform prediction.

    The calibrated probabilities are
    ``w_1 softmax(z / T) + w_2 softmax(z) + w_3 / K`` with ``T`` the
    temperature-scaling optimum and ``w`` on the probability simplex, fitted
    by negative log-likelihood (NLL). Each component ranks the classes like
    ``z`` (or ties them all), so the predicted class never changes.

    Parameters
    ----------
    %(calibrator_params)s
    tol : float, default=1e-10
        Relative tolerance on ``1/T`` (see :class:`TemperatureScaler`); the
        weights are solved to a Newton decrement of ``1e-2 * tol``.
    max_iter : int, default=100
        Maximum number of passes of the temperature fit and of Newton steps
        of the weight fit.

    Attributes
    ----------
    temperature_ : float
        ``T`` of the temperature-scaling component.
    weights_ : ndarray of shape (3,), float64
        ``(w_TS, w_raw, w_uniform)``, non-negative, summing to 1.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_iter_ : int
        Passes of the temperature fit plus Newton steps of the weight fit.

    See Also
    --------
    TemperatureScaler : the first component alone.

    Notes
    -----
    Zhang et al. fit ``T`` and then the weights; so does this class, both by
    NLL (their code uses the squared error for both; the paper's Eq. 6
    allows any proper loss). With ``q_ij`` the probability of the true class
    of row ``i`` under component ``j``, the weight objective is
    ``F(w) = -sum_i s_i log(sum_j w_j q_ij) / sum_i s_i`` on
    ``{w >= 0, sum_j w_j = 1}``: convex, solved exactly (see
    :func:`fit_simplex_mixture`) from the ``(n, 3)`` matrix ``q``, which is
    computed in one pass over the logits (float64 accumulation). The fit
    costs the temperature fit plus that one pass.

    Unlike the other scaling calibrators, the fit is not invariant to a
    rescaling ``z -> c z`` of the logits, by definition: ``T`` scales with
    ``c`` (``softmax(z / T)`` is unchanged), but the raw component
    ``softmax(c z)`` does not, so the weights and probabilities change with
    ``c`` (by up to ~1e-2 between ``c = 1e-3`` and ``1e4`` on a CIFAR-10
    ResNet-20 set).

    References
    ----------
    J. Zhang, B. Kailkhura, T. Y.-J. Han, "Mix-n-Match: Ensemble and
    Compositional Methods for Uncertainty Calibration in Deep Learning",
    ICML 2020, Sec. 3.1 (Eq. 5-6).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import EnsembleTemperatureScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(2000, 4, scale=5.0)
    >>> ets = EnsembleTemperatureScaler().fit(X, y)
    >>> ets.weights_.shape, bool(np.isclose(ets.weights_.sum(), 1.0))
    ((3,), True)
    >>> bool((ets.predict(X) == X.argmax(axis=1)).all())  # the argmax is kept
    True
    """

    #: a convex mixture of softmax(z / T), softmax(z) and the uniform: every
    #: component has the argmax of z, so the mixture keeps it
    _preserves_order = True

    def _fit(self, Z, y, sample_weight, xp):
        k = Z.shape[1]
        beta, n_iter, status = fit_temperature(
            Z, y, sample_weight, xp, tol=self.tol, max_iter=self.max_iter
        )
        warn_stopped("EnsembleTemperatureScaler's temperature fit", status,
                     self.max_iter, "")
        LQ = mk.true_class_log_proba(Z, y, xp, betas=(beta, 1.0))
        LQ = np.column_stack([LQ, np.full(len(LQ), -math.log(k))])
        c = LQ.max(axis=1, keepdims=True)
        c = np.where(np.isfinite(c), c, 0.0)
        E = np.exp(LQ - c)
        sw = None if sample_weight is None else to_numpy(sample_weight).astype(np.float64)
        w, it = fit_simplex_mixture(E, sw, tol=1e-2 * self.tol, max_iter=self.max_iter)
        self.temperature_ = 1.0 / beta
        self.weights_ = w
        self.n_iter_ = n_iter + it

    def _torch_spec(self):
        return {"kind": "mixture", "temperature": self.temperature_, "weights": self.weights_}

    def _predict_log_proba(self, Z, xp):
        w = self.weights_
        out = None
        for wj, scale in ((w[0], 1.0 / self.temperature_), (w[1], None)):
            if wj > 0:
                L = xp.log_softmax(Z, scale=scale)
                L += math.log(wj)
                out = L if out is None else xp.logaddexp(out, L, out=out)
        if w[2] > 0:
            if out is None:
                out = xp.log_softmax(Z * 0.0)  # log(1/K) everywhere
            else:
                out = xp.logaddexp(out, math.log(w[2]) - math.log(Z.shape[1]), out=out)
        return out
