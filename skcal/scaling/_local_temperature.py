"""Local (instance-dependent) temperature scaling: ``T(x)`` predicted by a small network.

See :class:`LocalTemperatureScaler`. Training is one hand-written objective
and gradient (manual backpropagation, :func:`_objective`), run in NumPy for
arrays and in torch on the tensor's device for a ``torch.Tensor`` (torch
being imported only then). Prediction is plain NumPy.
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ._temperature import fit_temperature
from .._backend import _numpy
from .._backend._dispatch import get_backend
from ..base import BaseCalibrator
from .._backend._array import to_numpy
from ..utils.validation import _caller_stacklevel, check_scores
from ..utils._weights import weighted_rows
from ..utils._params import store_params

__all__ = ["LocalTemperatureScaler"]

#: Fewer weighted rows than this in either part of the internal split: the
#: network is not trained and the global temperature is used.
MIN_ROWS_PER_SPLIT = 20


_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(h):
    """SplitMix64 finaliser (Steele, Lea & Flood 2014), elementwise on uint64."""
    h = h ^ (h >> np.uint64(30))
    h = h * _MIX1
    h = h ^ (h >> np.uint64(27))
    h = h * _MIX2
    return h ^ (h >> np.uint64(31))


def content_split(Z, F, seed, fraction):
    """Validation mask decided by each row's content, not its position.

    Every row goes to the validation part when a seeded hash of its sorted
    logits (rounded to float16) and of its extra features (rounded likewise)
    falls below ``fraction``. Identical rows therefore land in the same part:
    the split does not depend on the row order, integer sample weights split
    like repeated rows, and a permutation of the logit columns or the logit
    dtype does not change it (up to the rare row whose float32 and float64
    values round to different float16 numbers).

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_classes)
    F : ndarray of shape (n_samples, n_extra) or None
    seed : int
    fraction : float in (0, 1)

    Returns
    -------
    ndarray of shape (n_samples,), bool
        True for the validation rows.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        cols = [np.sort(Z, axis=1)]
        if F is not None and F.shape[1]:
            cols.append(F)
        h = np.full(Z.shape[0], np.uint64(seed) * _MIX2 + np.uint64(0x9E3779B97F4A7C15))
        for block in cols:
            bits = (np.asarray(block, dtype=np.float16) + np.float16(0)).view(np.uint16)
            for j in range(bits.shape[1]):
                h = _mix(h ^ bits[:, j].astype(np.uint64))
    u = (h >> np.uint64(11)).astype(np.float64) / float(2**53)
    return u < fraction


def topk_log_proba(Z, k):
    """The ``k`` largest log-probabilities of each row, in decreasing order.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_classes), float64
    k : int
        At most ``n_classes``.

    Returns
    -------
    ndarray of shape (n_samples, k), float64
        ``sort(log_softmax(z))[::-1][:k]``: the sorted top-k logits (Tomani et
        al. 2022) with the row's log-sum-exp removed, so that adding a constant
        to a row changes nothing.
    """
    if k == 0:
        return np.empty((Z.shape[0], 0))
    m = Z.max(axis=1, keepdims=True)
    Zc = Z - m
    if k < Z.shape[1]:
        top = np.partition(Zc, Z.shape[1] - k, axis=1)[:, Z.shape[1] - k:]
    else:
        top = Zc.copy()
    top = -np.sort(-top, axis=1)
    np.exp(Zc, out=Zc)
    return top - np.log(Zc.sum(axis=1, keepdims=True))


def _forward(params, P, tanh=np.tanh):
    """The layers ``[P, h_1, ...]`` and output ``s`` of the network ``(W_1, b_1, W_2, ...)``."""
    hs = [P]
    for i in range(0, len(params) - 2, 2):
        hs.append(tanh(hs[-1] @ params[i] + params[i + 1]))
    return hs, (hs[-1] @ params[-2] + params[-1])[:, 0]


def _network_temperature(phi, coefs, intercepts, t_min):
    """``T(x) = t_min + softplus(s)``, ``s`` the NumPy network's output on ``phi``."""
    s = _forward([p for layer in zip(coefs, intercepts) for p in layer], phi)[1]
    return t_min + np.logaddexp(0.0, s)


def _log_softmax_rows(Z, inv_t):
    """``log_softmax(Z * inv_t[:, None])`` in float64."""
    Zs = (Z - Z.max(axis=1, keepdims=True)) * inv_t[:, None]
    return Zs - np.log(np.exp(Zs).sum(axis=1, keepdims=True))


def _init_params(sizes, t0, seed):
    """Initial weights: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) hidden layers, last layer
    with zero weights and the bias that makes ``T(x) == T_min + t0`` everywhere."""
    rng = np.random.default_rng(seed)
    b_last = t0 + math.log(-math.expm1(-t0))  # log(exp(t0) - 1), stable
    params = []
    for i in range(len(sizes) - 1):
        fan_in, fan_out = sizes[i], sizes[i + 1]
        if i == len(sizes) - 2:
            params += [np.zeros((fan_in, fan_out)), np.full(fan_out, b_last)]
        else:
            bound = 1.0 / math.sqrt(fan_in)
            params += [rng.uniform(-bound, bound, size=(fan_in, fan_out)),
                       rng.uniform(-bound, bound, size=fan_out)]
    return params


class _Adam:
    """Adam (Kingma & Ba 2015) with torch.optim.Adam's exact update formula."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8):
        self.lr, self.b1, self.b2, self.eps, self.t = lr, betas[0], betas[1], eps, 0
        self.m = [p * 0 for p in params]
        self.v = [p * 0 for p in params]

    def step(self, params, grads):
        self.t += 1
        bc1 = 1 - self.b1**self.t
        bc2 = 1 - self.b2**self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            denom = (v**0.5) / math.sqrt(bc2) + self.eps
            p -= (self.lr / bc1) * m / denom


def _objective(params, phi, Zl, y, w, tr, val, t_min, wd, xp, device=None):
    """Gradient and validation-NLL functions of the network (objective: the class Notes).

    Manual backpropagation over the array operations of ``xp``'s
    :class:`~skcal._backend._numpy.AffineOps` (NumPy arrays, or torch tensors
    on ``device``); the ``(n, K)`` work runs over (cache-sized) row chunks.
    """
    def part(mask):
        Zm = Zl[mask] - Zl[mask].max(axis=1, keepdims=True)
        yy = y[mask]
        arrays = phi[mask], Zm, Zm[np.arange(len(yy)), yy], w[mask] / w[mask].sum()
        return [xp.from_numpy(np.ascontiguousarray(a), device=device) for a in arrays]

    P_tr, Z_tr, zy_tr, w_tr = part(tr)
    P_va, Z_va, zy_va, w_va = part(val)
    ops = xp.affine_ops(Z_tr)  # float64, on Z_tr's device
    chunks_tr, chunks_va = list(ops.chunks(Z_tr)), list(ops.chunks(Z_va))
    params = [xp.from_numpy(p, device=device) for p in params]

    def to_np(p):
        return ops.numpy(ops.copy(p))

    def val_fn(params):
        _, s = _forward(params, P_va, ops.tanh)
        inv_t = 1.0 / (t_min + ops.softplus(s))
        # log p_y = z_y / T - log sum exp(z / T) (Z_va's row maxima are 0)
        lse = ops.empty(len(zy_va), ops.wd)
        for sl in chunks_va:
            E = ops.exp_(Z_va[sl] * inv_t[sl, None])
            lse[sl] = ops.log(E.sum(axis=1))
        return float(-(w_va @ (zy_va * inv_t - lse)))

    def grad_fn(params):
        hs, s = _forward(params, P_tr, ops.tanh)
        T = t_min + ops.softplus(s)
        inv_t = 1.0 / T
        # E_p[z_i] under p = softmax(z / T) (Z_tr's row maxima are 0, so
        # z / T <= 0 and exp cannot overflow)
        ez = ops.empty(len(zy_tr), ops.wd)
        for sl in chunks_tr:
            E = ops.exp_(Z_tr[sl] * inv_t[sl, None])
            ez[sl] = ops.rowdot(E, Z_tr[sl]) / E.sum(axis=1)
        # dL/dT_i = -(w_i / T_i^2) (E_p[z_i] - z_{i,y_i})
        g = (-w_tr / T**2 * (ez - zy_tr) * ops.sigmoid(s))[:, None]  # dL/ds
        grads = [None] * len(params)
        for i in range(len(params) - 2, -1, -2):
            h = hs[i // 2]
            grads[i] = h.T @ g + 2.0 * wd * params[i]
            grads[i + 1] = g.sum(axis=0)
            if i:
                g = (g @ params[i].T) * (1.0 - h * h)
        return grads

    return grad_fn, val_fn, to_np, params


class LocalTemperatureScaler(BaseCalibrator):
    """Local temperature scaling: a temperature ``T(x)`` per sample, from a tiny network.

    The calibrated probabilities are ``softmax(z / T(x))`` with
    ``T(x) = min_temperature + softplus(g(phi(x)))``: ``T(x) > 0``, so the
    predicted class of every row is exactly that of the logits. ``g`` is a
    multilayer perceptron (tanh hidden layers) over the features ``phi(x)``:
    the ``top_k`` largest log-probabilities of the row, sorted (parameterised
    temperature scaling, Tomani et al. 2022), followed by the last
    ``n_extra_features`` columns of ``X`` if any (e.g. an embedding of the
    input), all standardised.

    The network starts as the global temperature (``T(x) == T*`` of
    :class:`~skcal.TemperatureScaler` on the training part) and is trained on
    the weighted NLL plus ``weight_decay`` times the squared weights, by
    full-batch Adam with early stopping on an internal validation split. It is
    kept only if its validation NLL beats the global temperature's by more than
    ``shrink_threshold`` standard errors; otherwise (``local_ = False``) the
    calibrator is exactly temperature scaling, with ``T*`` fitted on the whole
    calibration set. NumPy input is trained in NumPy (no torch needed); a
    ``torch.Tensor`` input is trained with torch on its device (CPU or GPU).
    A fitted calibrator stores NumPy arrays only, so it pickles and predicts
    without torch or a GPU.

    Parameters
    ----------
    input_type : {"logits", "probabilities"}, default="logits"
        What the logit columns of ``X`` hold.
    classes : array-like of shape (n_classes,), default=None
        Labels of the logit columns of ``X``.
    backend : {"auto", "numpy", "torch"}, default="auto"
        Where the network is trained: ``"auto"`` follows the data (NumPy for
        arrays, torch on the tensor's device for a tensor ``X``), ``"numpy"``
        and ``"torch"`` choose the library. Prediction runs in NumPy and a
        tensor ``X`` gets a tensor on its device back.
    n_extra_features : int, default=0
        Number of trailing columns of ``X`` that are per-sample features, not
        logits: ``X = [logits | features]`` of shape
        ``(n_samples, n_classes + n_extra_features)``. Putting the features in
        ``X`` keeps the calibrator a plain estimator, so that ``Pipeline``,
        ``GridSearchCV`` and ``cross_val_score`` split logits and features
        together (build ``X`` with ``numpy.hstack`` or a
        ``ColumnTransformer``). A binary problem may give one score column
        followed by the features.
    top_k : int, default=10
        Number of sorted log-probabilities used as features (capped at the
        number of classes). 0 uses only the extra features.
    hidden_layer_sizes : tuple of int, default=(16,)
        Sizes of the hidden layers of ``g``.
    min_temperature : float, default=0.05
        ``T_min``, the lower bound of ``T(x)``.
    weight_decay : float, default=1e-3
        Coefficient of the squared weights (not the biases) in the objective.
    learning_rate : float, default=0.01
        Adam step size.
    max_iter : int, default=500
        Maximum number of full-batch Adam steps.
    n_iter_no_change : int, default=25
        Stop when the validation NLL has not improved by ``tol`` (relative)
        for this many steps; the best network on the validation split is kept.
    tol : float, default=1e-5
        Relative improvement of the validation NLL that counts as progress.
    validation_fraction : float, default=0.2
        Expected fraction of the rows in the internal validation split.
    shrink_threshold : float, default=2.0
        The network is kept only if, on the validation split, the mean paired
        NLL gain over the global temperature exceeds this many standard
        errors. 0 keeps it whenever it is better at all; a negative value
        keeps it even when worse (for experiments).
    random_state : int, RandomState instance or None, default=0
        Seeds the network's initial weights and the validation split. The fit
        is deterministic for a given value (a local NumPy ``Generator`` draws
        the initial weights; no global random state, torch default or thread
        setting is touched).

    Attributes
    ----------
    temperature_ : float
        Global temperature ``T*`` fitted on the whole calibration set (the
        model used when ``local_`` is False).
    local_ : bool
        Whether the per-sample network is used.
    coefs_ : list of ndarray
        Weight matrices of ``g`` (float64); the last has shape ``(h, 1)``.
    intercepts_ : list of ndarray
        Bias vectors of ``g`` (float64).
    feature_mean_, feature_scale_ : ndarray of shape (n_phi,)
        Standardisation of the features ``phi(x)``.
    validation_nll_ : ndarray of shape (2,)
        Mean NLL on the validation split of the global temperature (fitted on
        the training part) and of the network (NaN if it was not trained).
    best_iter_ : int
        Step at which the kept network had its best validation NLL.
    n_iter_ : int
        Newton iterations of the global temperature plus the Adam steps run
        (none when the network was not trained).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (logits and extra features).

    Notes
    -----
    Objective of the network's parameters ``theta`` on the training part:
    ``sum_i w_i [logsumexp(z_i / T_theta(x_i)) - z_{i,y_i} / T_theta(x_i)] / sum_i w_i
    + weight_decay * ||W||^2``. Initialisation: the last layer's weights are
    0 and its bias is ``softplus^{-1}(T* - T_min)``, so the fit starts at the
    global temperature. The split is decided by a seeded hash of each row's
    content (see :func:`content_split`): the fit does not depend on the row
    order, and integer sample weights fit like repeated rows. Stopping rule:
    early stopping as above; reaching ``max_iter`` while still improving
    raises a ``ConvergenceWarning``. Too small calibration sets (fewer than 20
    weighted rows in either part) use the global temperature.

    References
    ----------
    C. Tomani, D. Cremers, F. Buettner, "Parameterized Temperature Scaling for
    Boosting the Expressive Power in Post-Hoc Uncertainty Calibration",
    ECCV 2022 (prediction-specific temperatures from a neural network over the
    sorted top-k logits; skcal trains it by NLL, starts it at the global
    temperature and adds the shrinkage test).
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
    Neural Networks", ICML 2017 (global temperature scaling).

    Examples
    --------
    >>> from skcal import LocalTemperatureScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(600, 3)
    >>> lts = LocalTemperatureScaler(max_iter=50).fit(X, y)
    >>> lts.predict_proba(X).shape
    (600, 3)
    >>> bool((lts.predict(X) == X.argmax(axis=1)).all())  # the argmax is kept
    True
    """

    # T(x) > 0: every row keeps its order (predict is the argmax of the logits)
    _preserves_order = True

    _refuses_underflowing_logits = True

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "n_extra_features": [Interval(Integral, 0, None, closed="left")],
        "top_k": [Interval(Integral, 0, None, closed="left")],
        "hidden_layer_sizes": [tuple, list],
        "min_temperature": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "shrink_threshold": [Interval(Real, None, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        input_type="logits",
        classes=None,
        backend="auto",
        n_extra_features=0,
        top_k=10,
        hidden_layer_sizes=(16,),
        min_temperature=0.05,
        weight_decay=1e-3,
        learning_rate=0.01,
        max_iter=500,
        n_iter_no_change=25,
        tol=1e-5,
        validation_fraction=0.2,
        shrink_threshold=2.0,
        random_state=0,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------------ input
    def _check_input(self, X, *, reset):
        m = self.n_extra_features
        if m == 0:
            return super()._check_input(X, reset=reset)
        validate_data(self, X, reset=reset, skip_check_array=True, ensure_2d=False)
        A = get_backend(X).checked_float_array(X, input_name="X")
        if A.ndim != 2:  # (an array-like is 2-D once checked)
            raise ValueError(f"X must be 2-D [logits | {m} features]; got {A.ndim}-D.")
        n_cols = A.shape[1]
        if n_cols <= m:
            raise ValueError(
                f"X has {n_cols} features, but n_extra_features={m}: X must hold the "
                "logits followed by the extra features."
            )
        L = A[:, : n_cols - m]
        F = A[:, n_cols - m:]
        Fn = to_numpy(F).astype(np.float64)
        if not np.isfinite(Fn).all():
            raise ValueError(
                "The extra features of X (its last n_extra_features columns) contain "
                "NaN or infinity."
            )
        Z, _ = check_scores(
            L[:, 0] if n_cols - m == 1 else L, input_type=self.input_type,
            warn_probabilities=reset,  # the logit columns, as for every calibrator
            check_underflow=reset,
        )
        if reset:
            self.n_features_in_ = n_cols
        elif Z.shape[1] != len(self.classes_):
            raise ValueError(
                f"X has {n_cols} features, but {self.__class__.__name__} is expecting "
                f"{self.n_features_in_} features as input ({len(self.classes_)} "
                f"classes and {m} extra features)."
            )
        Zn = to_numpy(Z)
        out_dtype = np.float64 if Zn.dtype == np.float64 else np.float32
        out = np.hstack([Zn.astype(out_dtype), Fn.astype(out_dtype)])
        # a tensor keeps its device: training follows the data
        return get_backend(X).from_numpy(out, device=getattr(X, "device", None))

    def _order_columns(self, Z):
        # the class logits, not the extra feature columns after them
        return Z[:, : Z.shape[1] - self.n_extra_features]

    def _encode_y(self, y, n_columns, n_samples):
        names = getattr(self, "feature_names_in_", None)
        if self.n_extra_features and names is not None:
            # only the logit columns' names may name classes
            self.feature_names_in_ = names[: len(names) - self.n_extra_features]
        m = self.n_extra_features
        try:
            return super()._encode_y(y, n_columns - m, n_samples)
        except ValueError as e:
            if not m or "column" not in str(e):
                raise
            # the labels are matched to the logit columns only: say so, since
            # the user counts all the columns of X
            n_x = getattr(self, "n_features_in_", n_columns)
            logits = (
                "1 logit column (a binary score, counted as 2 columns)"
                if n_x - m == 1 else f"{n_x - m} logit columns"
            )
            raise ValueError(
                f"X has {n_x} columns; its last {m} are read as extra features "
                f"(n_extra_features={m}), leaving {logits}. {e}"
            ) from None
        finally:
            if names is not None:
                self.feature_names_in_ = names

    def _split(self, Z):
        """Float64 NumPy logits and extra features from the validated ``Z``."""
        A = to_numpy(Z)
        m = self.n_extra_features
        K = A.shape[1] - m
        Zl = np.array(A[:, :K], dtype=np.float64)
        F = np.array(A[:, K:], dtype=np.float64) if m else None
        return Zl, F, A.dtype

    def _phi(self, Zl, F):
        k = min(self.top_k, Zl.shape[1])
        phi = topk_log_proba(Zl, k)
        if F is not None:
            phi = np.hstack([phi, F])
        return phi

    # -------------------------------------------------------------------- fit
    def _fit(self, Z, y, sample_weight, xp):
        if self.top_k == 0 and self.n_extra_features == 0:
            raise ValueError(
                "top_k=0 with n_extra_features=0 leaves the temperature network "
                "without features; set top_k >= 1 or pass extra features."
            )
        device = getattr(Z, "device", None)  # training follows the data
        Zl, F, _ = self._split(Z)
        y = to_numpy(y).astype(np.int64)
        w = None if sample_weight is None else to_numpy(sample_weight).astype(float)
        # global temperature on the whole set: the fallback model
        beta, n_newton, _ = fit_temperature(Zl, y, w, _numpy)
        w = np.ones(Zl.shape[0]) if w is None else w
        self.temperature_ = float(1.0 / beta)
        self.local_ = False
        self.coefs_, self.intercepts_ = [], []
        self.feature_mean_ = self.feature_scale_ = np.empty(0)
        self.validation_nll_ = np.array([np.nan, np.nan])
        self.best_iter_ = 0
        self.n_iter_ = n_newton

        seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        val = content_split(Zl, F, seed, self.validation_fraction)
        tr = ~val
        if min((w[tr] > 0).sum(), (w[val] > 0).sum()) < MIN_ROWS_PER_SPLIT:
            return
        t_tr = 1.0 / fit_temperature(Zl[tr], y[tr], w[tr], _numpy)[0]
        if not t_tr > self.min_temperature * (1 + 1e-6):
            return
        phi = self._phi(Zl, F)
        wt = w[tr] / w[tr].sum()
        mean = wt @ phi[tr]
        scale = np.sqrt(wt @ (phi[tr] - mean) ** 2)
        scale = np.where(scale > 1e-12 * np.maximum(1.0, np.abs(mean)), scale, 1.0)
        phi = (phi - mean) / scale

        coefs, intercepts, n_iter, best_iter, converged = self._train(
            phi, Zl, y, w, tr, val, t_tr, seed, xp, device
        )
        self.n_iter_ = n_newton + n_iter
        self.best_iter_ = best_iter
        if not converged:
            warnings.warn(
                f"LocalTemperatureScaler: the validation NLL was still improving after "
                f"max_iter={self.max_iter} steps; increase max_iter.",
                ConvergenceWarning,
                stacklevel=_caller_stacklevel(),
            )
        # compare with the global temperature on the validation split
        yv, wv = y[val], w[val]
        lp_g = _log_softmax_rows(Zl[val], np.full(val.sum(), 1.0 / t_tr))
        inv_t = 1.0 / _network_temperature(phi[val], coefs, intercepts, self.min_temperature)
        lp_l = _log_softmax_rows(Zl[val], inv_t)
        idx = np.arange(len(yv))
        d = lp_l[idx, yv] - lp_g[idx, yv]  # per-row NLL gain of the network
        sw = wv.sum()
        gain = (wv @ d) / sw
        var = (wv @ (d - gain) ** 2) / sw
        # rows the validation weights stand for (the one weight policy): integer
        # weights count as repeated rows, and a constant factor changes nothing
        n_eff = weighted_rows(wv, len(wv))
        se = math.sqrt(var / max(n_eff - 1.0, 1.0))
        self.validation_nll_ = np.array([-(wv @ lp_g[idx, yv]) / sw, -(wv @ lp_l[idx, yv]) / sw])
        if gain > self.shrink_threshold * se:
            self.local_ = True
            self.coefs_, self.intercepts_ = coefs, intercepts
            self.feature_mean_, self.feature_scale_ = mean, scale

    def _train(self, phi, Zl, y, w, tr, val, t_init, seed, xp, device):
        """Full-batch Adam with early stopping; returns NumPy weights and counts."""
        sizes = [phi.shape[1], *map(int, self.hidden_layer_sizes), 1]
        params = _init_params(sizes, t_init - self.min_temperature, seed)
        grad_fn, val_fn, to_np, params = _objective(
            params, phi, Zl, y, w, tr, val, self.min_temperature, self.weight_decay,
            xp, device,
        )
        # the network's products are tall and thin ((n, h) by (h, h')): run on
        # one BLAS thread; more threads spin-wait on each other, and on a
        # loaded machine that costs many times the product itself
        with threadpool_limits(limits=1, user_api="blas"):
            best = val_fn(params)
            best_params = [to_np(p) for p in params]
            best_iter, since, converged, it = 0, 0, False, 0
            adam = _Adam(params, self.learning_rate)
            for it in range(1, self.max_iter + 1):
                adam.step(params, grad_fn(params))
                v = val_fn(params)
                if v < best - self.tol * abs(best):
                    best, best_iter, since = v, it, 0
                    best_params = [to_np(p) for p in params]
                else:
                    since += 1
                    if since >= self.n_iter_no_change:
                        converged = True
                        break
        return best_params[0::2], best_params[1::2], it, best_iter, converged

    # ---------------------------------------------------------------- predict
    def temperatures(self, X):
        """Per-sample temperatures ``T(x)``.

        Parameters
        ----------
        X : array-like or torch.Tensor of shape (n_samples, n_features_in)
            As in ``fit``.

        Returns
        -------
        T : ndarray of shape (n_samples,), float64
            All equal to ``temperature_`` when ``local_`` is False.
        """
        check_is_fitted(self)
        Z = self._validate_X(X, reset=False)
        Zl, F, _ = self._split(Z)
        return self._temperatures(Zl, F)

    def _temperatures(self, Zl, F):
        if not self.local_:
            return np.full(Zl.shape[0], self.temperature_)
        phi = (self._phi(Zl, F) - self.feature_mean_) / self.feature_scale_
        return _network_temperature(phi, self.coefs_, self.intercepts_, self.min_temperature)

    def _torch_spec(self):
        return {
            "kind": "local_temperature",
            "temperature": self.temperature_,
            "coefs": list(self.coefs_) if self.local_ else [],
            "intercepts": list(self.intercepts_) if self.local_ else [],
            "feature_mean": self.feature_mean_,
            "feature_scale": self.feature_scale_,
            "top_k": self.top_k,
            "min_temperature": self.min_temperature,
            "n_extra_features": self.n_extra_features,
        }

    def _predict_log_proba(self, Z, xp):
        Zl, F, dtype = self._split(Z)
        LP = _log_softmax_rows(Zl, 1.0 / self._temperatures(Zl, F))
        return LP.astype(np.float64 if dtype == np.float64 else np.float32)

    def _predict_proba(self, Z, xp):
        P = np.exp(self._predict_log_proba(Z, xp))
        return P / P.sum(axis=1, keepdims=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
