"""Fitted calibration maps as ``torch.nn.Module`` objects.

A calibrator with a closed form on logits supplies its fitted parameters
through the private hook ``_torch_spec()`` (see
:meth:`skcal.base.BaseCalibrator.to_torch` and :func:`build_module`): the
affine maps (temperature, vector, matrix, Dirichlet) are
:class:`AffineLogits`, Platt and beta calibration :class:`OneVsRestSigmoid`,
isotonic and histogram binning :class:`OneVsRestInterpolation`.

Every module maps the calibrator's input (logits, probabilities, or one binary
score per row, as in ``fit``) to calibrated log-probabilities of shape
``(n_samples, n_classes)`` in the module's dtype (``float32`` unless
``to_torch(dtype=...)`` says otherwise). The interpolation module computes in
float64 (float32 on MPS, where a map whose knots float32 cannot tell apart is
refused). The code is straight-line tensor algebra, so it runs under
:func:`torch.compile`, :func:`torch.export.export` and :func:`torch.onnx.export`.
"""

import math

import numpy as np
import torch
from torch import nn

from ..utils._export import padded_knots

__all__ = [
    "AffineLogits",
    "LocalTemperature",
    "OneVsRestInterpolation",
    "OneVsRestSigmoid",
    "TemperatureMixture",
    "TopVersusAll",
    "UniformMixture",
]


def ovr_log_odds(Z):
    """One-vs-rest log-odds ``s_ik = z_ik - log sum_{j != k} exp(z_ij)`` (K >= 3).

    :func:`skcal._backend._ovr.ovr_log_odds` without in-place ops: with ``m``
    the row maximum and ``E = exp(z - m)``, the sum over ``j != k`` is
    ``m + log(sum(E) - E_k)`` (an argument of at least 1) for every ``k`` but
    the arg-max, whose sum is taken around the second-largest logit.
    """
    K = Z.shape[1]
    m1, a1 = Z.max(dim=1, keepdim=True)
    E = torch.exp(Z - m1)
    rest = E.sum(dim=1, keepdim=True) - E
    top = torch.arange(K, device=Z.device).unsqueeze(0) == a1
    L = m1 + torch.log(torch.where(top, torch.ones_like(rest), rest))
    A2 = Z.masked_fill(top, -math.inf)
    m2 = A2.max(dim=1, keepdim=True).values
    l_top = m2 + torch.log(torch.exp(A2 - m2).sum(dim=1, keepdim=True))
    return Z - torch.where(top, l_top, L)


class _CalibrationModule(nn.Module):
    """Input handling shared by the calibration modules.

    Parameters
    ----------
    n_classes : int
        Number of output columns.
    input_type : {"logits", "probabilities"}
        What the input holds, as the calibrator's ``input_type``.
    n_features_in : int
        Input columns in ``fit``: ``n_classes``, or 1 for one binary score
        per row (of the second class), of shape (n,) or (n, 1).
    dtype : torch.dtype
        Dtype of the output (and of the computation, by default).
    device : torch.device or str or None
    work_dtype : torch.dtype, default=None
        Dtype of the buffers and of the computation, if not ``dtype``
        (float64 for :class:`OneVsRestInterpolation`: a steep segment would
        magnify the float32 rounding of the scores).
    """

    def __init__(
        self, *, n_classes, input_type, n_features_in, dtype, device, work_dtype=None
    ):
        super().__init__()
        self.n_classes = int(n_classes)
        self.input_type = input_type
        self.n_features_in = int(n_features_in)
        # buffers fixing the output and working dtypes (and the device)
        self.register_buffer("_anchor", torch.zeros((), dtype=dtype, device=device))
        work = dtype if work_dtype is None else work_dtype
        self.register_buffer("_work", torch.zeros((), dtype=work, device=device))

    def _buffer(self, name, value):
        self.register_buffer(name, torch.as_tensor(
            np.asarray(value, dtype=np.float64), dtype=self._work.dtype,
            device=self._work.device))

    def _logits(self, X):
        """Input as (n, n_classes) logits (probabilities: ``log(max(p, tiny))``).

        A working dtype wider than the output dtype (the float64 step maps)
        reads the input unrounded, so a float64 score between two thresholds
        closer than float32 resolution stays between them, as in ``predict_proba``.
        """
        work = self._work.dtype
        if torch.finfo(work).bits > torch.finfo(self._anchor.dtype).bits:
            X = X.to(torch.promote_types(X.dtype, torch.float32))
        else:
            X = X.to(self._anchor.dtype)
        if self.n_features_in == 1:
            s = X.reshape(X.shape[0])
            other = 1 - s if self.input_type == "probabilities" else torch.zeros_like(s)
            X = torch.stack([other, s], dim=1)
        if self.input_type == "probabilities":
            X = torch.log(torch.clamp(X, min=torch.finfo(X.dtype).tiny))
        return X.to(self._work.dtype)

    def forward(self, X):
        """Calibrated log-probabilities.

        Parameters
        ----------
        X : torch.Tensor of shape (n_samples, n_features_in) or (n_samples,)
            The calibrator's input (logits or probabilities), any float dtype.

        Returns
        -------
        log_proba : torch.Tensor of shape (n_samples, n_classes)
            In the module's dtype; ``exp`` of each row sums to one.
        """
        return self._log_proba(self._logits(X)).to(self._anchor.dtype)

    def extra_repr(self):
        return (
            f"n_classes={self.n_classes}, input_type={self.input_type!r}, "
            f"n_features_in={self.n_features_in}"
        )


class AffineLogits(_CalibrationModule):
    """``log_softmax(W phi(z) + b)``: an affine map of the logits.

    Parameters
    ----------
    scale : float or array-like of shape (n_classes,), default=None
        Scalar (temperature scaling: ``1 / T``) or per-class (vector scaling)
        multiplier; ignored when ``matrix`` is given.
    bias : array-like of shape (n_classes,), default=None
    matrix : array-like of shape (n_classes, n_classes), default=None
        Full matrix ``W`` (matrix / Dirichlet calibration).
    features : {"logits", "log_softmax"}, default="logits"
        ``phi``: the logits themselves, or the log-probabilities
        ``log_softmax(feature_scale * z)`` (Dirichlet calibration; structured
        matrix scaling).
    feature_scale : float, default=1.0
        Scale of the logits inside the log-softmax features.
    **kwargs
        See :class:`_CalibrationModule`.

    Notes
    -----
    Temperature scaling (Guo et al., "On calibration of modern neural
    networks", ICML 2017, Eq. 9) is ``W = 1 / T``, ``b = 0``.
    """

    def __init__(self, *, scale=None, bias=None, matrix=None, features="logits",
                 feature_scale=1.0, **kwargs):
        super().__init__(**kwargs)
        if features not in ("logits", "log_softmax"):
            raise ValueError(f"features must be 'logits' or 'log_softmax', got {features!r}")
        self.features = features
        self.feature_scale = float(feature_scale)
        self.has_matrix = matrix is not None
        self.has_bias = bias is not None
        if self.has_matrix:
            self._buffer("matrix", matrix)
        else:
            self._buffer("scale", 1.0 if scale is None else scale)
        if self.has_bias:
            self._buffer("bias", bias)

    def _log_proba(self, Z):
        if self.features == "log_softmax":
            if self.feature_scale != 1.0:
                Z = Z * self.feature_scale
            Z = torch.log_softmax(Z, dim=1)
        Z = Z @ self.matrix.T if self.has_matrix else Z * self.scale
        if self.has_bias:
            Z = Z + self.bias
        return torch.log_softmax(Z, dim=1)


def _ovr_scores(Z, binary):
    """(n, 1) log-odds ``z1 - z0`` of class 1, or the (n, K) one-vs-rest ones."""
    if binary:
        return (Z[:, 1] - Z[:, 0]).unsqueeze(1)
    return ovr_log_odds(Z)


class OneVsRestSigmoid(_CalibrationModule):
    """Per-class ``sigmoid(sum_f c_fk phi_f(s_k) + b_k)``, renormalised.

    Parameters
    ----------
    coef : array-like of shape (n_features, n_maps)
        ``c_fk``; ``n_maps`` is 1 for a binary problem (one map of the
        log-odds ``s = z1 - z0`` of the second class), ``n_classes`` otherwise.
    intercept : array-like of shape (n_maps,)
    features : tuple of {"score", "sigmoid", "log_sigmoid", "log_sigmoid_neg", "square"}, default=("score",)
        ``phi_f(s)``: ``s`` (Platt on log-odds), ``sigmoid(s)`` (Platt on
        probabilities), ``log sigmoid(s)`` and ``log sigmoid(-s)`` (beta
        calibration: ``log p`` and ``log(1 - p)``), ``s^2`` (quadratic
        scaling).
    log_floor : float, default=None
        If given, the log-probabilities are raised to it before the scores
        are formed (``PlattScaler.log_floor_``).
    **kwargs
        See :class:`_CalibrationModule`.

    Notes
    -----
    Binary: ``[log sigmoid(-F), log sigmoid(F)]``. Multiclass:
    ``log sigmoid(F_k) - logsumexp_j log sigmoid(F_j)`` (Zadrozny & Elkan,
    KDD 2002). Platt, "Probabilistic outputs for support vector machines",
    1999, Eq. 1.
    """

    _PHI = {
        "score": lambda S: S,
        "sigmoid": torch.sigmoid,
        "log_sigmoid": nn.functional.logsigmoid,
        "log_sigmoid_neg": lambda S: nn.functional.logsigmoid(-S),
        "square": lambda S: S * S,
    }

    def __init__(self, *, coef, intercept, features=("score",), log_floor=None, **kwargs):
        super().__init__(**kwargs)
        self.log_floor = None if log_floor is None else float(log_floor)
        features = tuple(features)
        unknown = [f for f in features if f not in self._PHI]
        if unknown:
            raise ValueError(f"unknown features {unknown}; use {tuple(self._PHI)}")
        coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
        if coef.shape[0] != len(features):
            raise ValueError(
                f"coef has {coef.shape[0]} rows but there are {len(features)} features"
            )
        self.features = features
        self.binary = coef.shape[1] == 1
        self._buffer("coef", coef)
        self._buffer("intercept", np.asarray(intercept, dtype=np.float64).reshape(-1))

    def _log_proba(self, Z):
        if self.log_floor is not None:
            Z = torch.clamp(Z, min=self.log_floor)
        S = _ovr_scores(Z, self.binary)
        F = self.intercept
        for i, f in enumerate(self.features):
            F = F + self.coef[i] * self._PHI[f](S)
        if self.binary:
            F = F[:, 0]
            return torch.stack(
                [nn.functional.logsigmoid(-F), nn.functional.logsigmoid(F)], dim=1
            )
        L = nn.functional.logsigmoid(F)
        return L - torch.logsumexp(L, dim=1, keepdim=True)


def _check_knots_representable(x, dtype):
    """Refuse a step map whose knots ``dtype`` would merge (a threshold vanishing)."""
    for k, a in enumerate(x):
        a = np.asarray(a, dtype=np.float64)
        # rounded by torch itself, so bfloat16 (no NumPy twin) is judged at its own 8-bit mantissa
        r = torch.as_tensor(a).to(dtype)
        bad = np.flatnonzero((torch.diff(r) <= 0).numpy())
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"map {k} has knots {a[i]!r} and {a[i + 1]!r} that {dtype} cannot "
                "tell apart, so this export would differ from predict_proba; export "
                "on a device with float64 (not MPS), or use the calibrator itself."
            )


class OneVsRestInterpolation(_CalibrationModule):
    """Per-class piecewise-linear maps of the one-vs-rest log-odds, renormalised.

    Parameters
    ----------
    x : list of array-like
        One strictly increasing knot vector per map (one map of ``z1 - z0``
        for a binary problem, else one per class).
    y : list of array-like
        Values at the knots (probabilities of the class).
    **kwargs
        See :class:`_CalibrationModule`.

    Notes
    -----
    A score is clamped to its map's knot range and interpolated linearly
    between the two knots around it (found by :func:`torch.searchsorted`),
    as ``IsotonicRegression(out_of_bounds="clip").predict``. Binary:
    ``[1 - q, q]``; multiclass ``q_k / sum_j q_j`` (1/K where the sum is 0).
    Output: the log of these probabilities (``-inf`` for a 0).
    """

    def __init__(self, *, x, y, **kwargs):
        super().__init__(**kwargs)
        if len(x) != len(y) or any(len(a) != len(b) or len(a) == 0 for a, b in zip(x, y)):
            raise ValueError("x and y must be non-empty knot lists of equal lengths")
        X, Y = padded_knots(x, y)
        self.binary = X.shape[0] == 1
        if self._work.dtype != torch.float64:
            _check_knots_representable(x, self._work.dtype)
        self._buffer("knots_x", X)
        self._buffer("knots_y", Y)
        self._buffer("x_min", [a[0] for a in x])
        self._buffer("x_max", [a[-1] for a in x])

    def _log_proba(self, Z):
        S = _ovr_scores(Z, self.binary)  # (n, n_maps)
        S = torch.minimum(torch.maximum(S, self.x_min), self.x_max).T.contiguous()
        m = self.knots_x.shape[1]
        j = torch.searchsorted(self.knots_x, S, right=True).clamp(1, m - 1)
        knots = (self.knots_x, self.knots_y)
        x0, x1, y0, y1 = (torch.gather(t, 1, i) for t in knots for i in (j - 1, j))
        Q = (y0 + (S - x0) / (x1 - x0) * (y1 - y0)).T  # (n, n_maps)
        if self.binary:
            q = Q[:, 0]
            P = torch.stack([1 - q, q], dim=1)
        else:
            den = Q.sum(dim=1, keepdim=True)
            ok = den > 0
            P = torch.where(ok, Q / torch.where(ok, den, torch.ones_like(den)), 1.0 / self.n_classes)
        return torch.log(P)


class TemperatureMixture(_CalibrationModule):
    """``log(w_0 softmax(z / T) + w_1 softmax(z) + w_2 / K)``: ensemble temperature scaling.

    Parameters
    ----------
    temperature : float
        ``T > 0``.
    weights : array-like of shape (3,)
        Mixture weights ``w`` on the simplex (zeros allowed).
    **kwargs
        See :class:`_CalibrationModule`.

    Notes
    -----
    Zhang, Kailkhura & Han, "Mix-n-Match: Ensemble and Compositional Methods
    for Uncertainty Calibration in Deep Learning", ICML 2020, Eq. 8. Computed
    in log space (``logsumexp`` of the log-weighted terms), so a probability
    never underflows to 0 where a term is positive.
    """

    def __init__(self, *, temperature, weights, **kwargs):
        super().__init__(**kwargs)
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape != (3,) or (w < 0).any() or not w.sum() > 0:
            raise ValueError(f"weights must be 3 non-negative numbers, got {weights!r}")
        self.terms = tuple(bool(v > 0) for v in w)
        with np.errstate(divide="ignore"):
            self._buffer("log_weights", np.log(w))
        self.inv_temperature = 1.0 / float(temperature)

    def _log_proba(self, Z):
        parts = []
        if self.terms[0]:
            parts.append(self.log_weights[0] + torch.log_softmax(Z * self.inv_temperature, dim=1))
        if self.terms[1]:
            parts.append(self.log_weights[1] + torch.log_softmax(Z, dim=1))
        if self.terms[2]:
            parts.append((self.log_weights[2] - math.log(self.n_classes)) + torch.zeros_like(Z))
        return torch.logsumexp(torch.stack(parts), dim=0)


class LocalTemperature(_CalibrationModule):
    """``log_softmax(z / T(x))`` with ``T(x) = T_min + softplus(g(phi(x)))``: local temperature scaling.

    Parameters
    ----------
    temperature : float
        The global temperature, used when ``coefs`` is empty.
    coefs, intercepts : list of array-like
        Weights ``(n_in, n_out)`` and biases of the tanh network ``g`` (empty:
        the global temperature for every row).
    feature_mean, feature_scale : array-like of shape (n_phi,)
        Standardisation of the features ``phi(x)``.
    top_k : int
        Number of sorted log-probabilities in ``phi(x)``.
    min_temperature : float
    n_extra_features : int
        Trailing input columns that are features, not logits.
    **kwargs
        See :class:`_CalibrationModule`; ``n_features_in`` counts the logit
        and the extra feature columns.

    Notes
    -----
    ``phi(x)`` is the ``top_k`` largest entries of ``log_softmax(z)`` in
    decreasing order, then the extra features (Tomani, Cremers & Buettner,
    "Parameterized Temperature Scaling", ECCV 2022). The temperature network
    works in float64 by default (as the NumPy prediction does).
    """

    def __init__(self, *, temperature, coefs, intercepts, feature_mean, feature_scale,
                 top_k, min_temperature, n_extra_features, n_features_in, **kwargs):
        self.n_extra_features = int(n_extra_features)
        super().__init__(n_features_in=n_features_in - self.n_extra_features, **kwargs)
        self.n_layers = len(coefs)
        self.top_k = min(int(top_k), self.n_classes)
        self.min_temperature = float(min_temperature)
        self.temperature = float(temperature)
        for i, (W, b) in enumerate(zip(coefs, intercepts)):
            self._buffer(f"coef_{i}", W)
            self._buffer(f"intercept_{i}", b)
        if self.n_layers:
            self._buffer("feature_mean", feature_mean)
            self._buffer("feature_scale", feature_scale)

    def forward(self, X):
        """Calibrated log-probabilities (see :meth:`_CalibrationModule.forward`).

        ``X`` holds the logit column(s) followed by the ``n_extra_features``
        feature columns, as in ``fit``.
        """
        m = self.n_extra_features
        L, F = (X[..., : X.shape[-1] - m], X[..., X.shape[-1] - m:]) if m else (X, None)
        Z = self._logits(L)
        if self.n_layers:
            phi = [torch.topk(torch.log_softmax(Z, dim=1), self.top_k, dim=1).values] \
                if self.top_k else []
            if F is not None:
                phi.append(F.to(Z.dtype))
            h = (torch.cat(phi, dim=1) - self.feature_mean) / self.feature_scale
            for i in range(self.n_layers):
                h = h @ getattr(self, f"coef_{i}") + getattr(self, f"intercept_{i}")
                if i < self.n_layers - 1:
                    h = torch.tanh(h)
            T = self.min_temperature + nn.functional.softplus(h)
        else:
            T = torch.full((Z.shape[0], 1), self.temperature, dtype=Z.dtype, device=Z.device)
        return torch.log_softmax(Z / T, dim=1).to(self._anchor.dtype)


_KINDS = {
    "local_temperature": LocalTemperature,
    "mixture": TemperatureMixture,
    "affine": AffineLogits,
    "ovr_sigmoid": OneVsRestSigmoid,
    "ovr_interp": OneVsRestInterpolation,
}


class UniformMixture(nn.Module):
    """``log((1 - lam) exp(f(x)) + lam / K)`` of an inner calibration module ``f``.

    The map of :class:`skcal.SmoothedCalibrator` (``kind="uniform_mixture"``):
    the inner calibrator's module, mixed with the uniform distribution.

    Parameters
    ----------
    inner : torch.nn.Module
        Maps the input to calibrated log-probabilities (n, n_classes).
    weight : float in [0, 1]
        ``lam``.
    n_classes : int
    """

    def __init__(self, inner, *, weight, n_classes):
        super().__init__()
        self.inner = inner
        self.log_keep = math.log1p(-weight) if weight < 1 else -math.inf
        self.log_even = math.log(weight / n_classes) if weight > 0 else -math.inf

    def forward(self, X):
        """Calibrated log-probabilities of shape (n_samples, n_classes)."""
        LP = self.inner(X)
        return torch.logaddexp(LP + self.log_keep, torch.full_like(LP, self.log_even))


class TopVersusAll(_CalibrationModule):
    """The map of :class:`skcal.TopVersusAllCalibrator` (``kind="top_versus_all"``).

    The top-1 log-odds ``s = z_t - log sum_{k != t} exp(z_k)`` of each row
    goes through the binary calibrator's module; its calibrated confidence
    ``c'`` replaces the top class's probability and the other classes share
    ``1 - c'`` as in :func:`skcal.meta._top_versus_all.complete_confidence`
    (proportionally, mixed with even shares where that keeps the top class on
    top).

    Parameters
    ----------
    inner : torch.nn.Module
        The binary calibrator's module: one score per row to ``(n, 2)``
        log-probabilities ``[log(1 - c'), log c']``, in the working dtype.
    margin : float
        ``ARGMAX_MARGIN`` of :mod:`skcal.meta._top_versus_all`.
    **kwargs
        See :class:`_CalibrationModule`. Computes in float64 by default
        (``work_dtype``), as ``predict_proba`` does.
    """

    def __init__(self, *, inner, margin, **kwargs):
        super().__init__(**kwargs)
        self.inner = inner
        self.margin = float(margin)

    def _log_proba(self, Z):
        K = self.n_classes
        A = Z - Z.max(dim=1, keepdim=True).values
        top = torch.arange(K, device=A.device).unsqueeze(0) == A.argmax(dim=1, keepdim=True)
        rest = A.masked_fill(top, -math.inf)
        log_rest = torch.logsumexp(rest, dim=1, keepdim=True)
        log_share2 = rest.max(dim=1, keepdim=True).values - log_rest
        LQ = self.inner(-log_rest).to(A.dtype)
        log_rest_c, log_c = LQ[:, :1], LQ[:, 1:]
        log_u = -math.log(K - 1)
        log_m = log_c - log_rest_c - self.margin
        low = ~(log_m >= log_u)  # c' below about 1 / K (or NaN): raised
        s_low = torch.as_tensor(log_u + self.margin, dtype=A.dtype, device=A.device)
        log_c = torch.where(low, nn.functional.logsigmoid(s_low), log_c)
        log_rest_c = torch.where(low, nn.functional.logsigmoid(-s_low), log_rest_c)
        log_m = torch.where(low, torch.full_like(log_m, log_u), log_m)
        alpha = torch.zeros_like(log_c)
        if K > 2:
            r2, m, u = torch.exp(log_share2), torch.exp(log_m), math.exp(log_u)
            den = r2 - u
            ok = den > 1e-12 * u
            a = torch.where(ok, (r2 - m) / torch.where(ok, den, torch.ones_like(den)), 1.0)
            alpha = torch.where(log_share2 > log_m, a.clamp(0.0, 1.0), alpha)
        log_keep = torch.log1p(-alpha)
        log_even = torch.log(alpha) - math.log(K - 1)
        out = torch.logaddexp(log_keep + (A - log_rest), log_even.expand_as(A)) + log_rest_c
        return torch.where(top, log_c.expand_as(A), out)


class InputColumnOrder(nn.Module):
    """The calibrator's input with its class columns in ``classes_`` order.

    ``order`` (the calibrator's ``_column_order_``) is the input column of
    each class; one binary score (``n_features_in=1``) becomes its two
    columns in reversed order, ``[s, 0]`` for logits and ``[p, 1 - p]`` for
    probabilities (the map after this module then takes 2 columns).
    """

    def __init__(self, order, *, n_features_in, input_type):
        super().__init__()
        K = len(order)
        idx = np.r_[np.asarray(order, dtype=np.int64), np.arange(K, max(K, n_features_in))]
        self.register_buffer("idx", torch.as_tensor(idx, dtype=torch.int64))
        self.one_score = n_features_in == 1
        self.probabilities = input_type == "probabilities"

    def forward(self, X):
        if self.one_score:
            s = X.reshape(-1)
            other = 1 - s if self.probabilities else torch.zeros_like(s)
            return torch.stack([s, other], dim=1)
        return X.index_select(-1, self.idx)


def build_module(spec, *, n_classes, input_type, n_features_in, dtype=None, device=None):
    """The torch module of a calibrator's ``_torch_spec()``.

    Parameters
    ----------
    spec : dict or torch.nn.Module
        ``{"kind": "affine" | "mixture" | "local_temperature" |
        "ovr_sigmoid" | "ovr_interp", **params}``, the keyword arguments of
        :class:`AffineLogits`, :class:`TemperatureMixture`,
        :class:`LocalTemperature`, :class:`OneVsRestSigmoid` or
        :class:`OneVsRestInterpolation`; or a wrapper around an inner spec:
        ``{"kind": "uniform_mixture", "inner": spec, "weight": lam}``
        (:class:`UniformMixture`) or ``{"kind": "top_versus_all", "inner":
        spec of a binary map, "margin": float}`` (:class:`TopVersusAll`). A
        module is returned as is (moved to ``dtype`` / ``device``), for maps
        that fit none of them.
    n_classes, input_type, n_features_in :
        From the fitted calibrator.
    dtype : torch.dtype, default=torch.float32
    device : torch.device or str, default=None (CPU)

    Returns
    -------
    module : torch.nn.Module in eval mode

    Raises
    ------
    ValueError
        For an unknown ``kind``.
    """
    dtype = torch.float32 if dtype is None else dtype
    if isinstance(spec, nn.Module):
        return spec.to(dtype=dtype, device=device).eval()
    spec = dict(spec)
    kind = spec.pop("kind")
    common = dict(
        n_classes=n_classes, input_type=input_type, n_features_in=n_features_in,
        dtype=dtype, device=device,
    )
    # float64 scores and knots (as IsotonicScaler computes); MPS lacks float64
    mps = torch.device(device or "cpu").type == "mps"
    work = torch.float32 if mps else torch.float64
    if kind == "uniform_mixture":  # {"inner": spec, "weight": lam}
        inner = build_module(spec["inner"], **common)
        return UniformMixture(inner, weight=spec["weight"], n_classes=n_classes).eval()
    if kind == "top_versus_all":  # {"inner": spec of the binary map, "margin": float}
        inner = build_module(spec["inner"], n_classes=2, input_type="logits",
                             n_features_in=1, dtype=work, device=device)
        return TopVersusAll(inner=inner, margin=spec["margin"], work_dtype=work,
                            **common).eval()
    if kind not in _KINDS:
        raise ValueError(f"unknown module kind {kind!r}; known: {sorted(_KINDS)}")
    if kind in ("ovr_interp", "local_temperature") and work == torch.float64:
        spec.setdefault("work_dtype", work)
    return _KINDS[kind](**common, **spec).eval()
