"""ONNX graphs of the generic calibration maps, built node by node.

One function per map kind of :mod:`skcal.torch._modules` (``affine``,
``mixture``, ``local_temperature``, ``ovr_sigmoid``, ``ovr_interp``,
``uniform_mixture``, ``top_versus_all``) writes the same computation as ONNX
operators from a calibrator's ``_torch_spec()``. The nodes go through a small
emitter interface so that the same code builds a standalone model
(:func:`skcal.onnx.to_onnx`) and the nodes of a skl2onnx converter.
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ..utils._export import padded_knots

__all__ = ["Emitter", "ModelEmitter", "calibration_nodes", "calibrator_nodes"]

_FLOAT = TensorProto.FLOAT
_DOUBLE = TensorProto.DOUBLE


class Emitter:
    """Where nodes and constants go.

    Subclasses implement ``name(seed)`` (a fresh name), ``const(array,
    seed)`` (an initializer; returns its name) and ``node(op_type, inputs,
    seed, n_outputs=1, **attrs)`` (returns its output's name, a list of
    names if ``n_outputs > 1``); the helpers below are built on these.
    """

    opset = 17

    def reduce(self, op, x, *, keepdims=1, axis=1):
        """``ReduceMax`` / ``ReduceSum`` over one axis, for the emitter's opset."""
        if op == "ReduceSum" or self.opset >= 18:
            axes = self.const(np.array([axis], dtype=np.int64), "axes")
            return self.node(op, [x, axes], op.lower(), keepdims=keepdims)
        return self.node(op, [x], op.lower(), axes=[axis], keepdims=keepdims)

    def log_sigmoid(self, x, npt=np.float32):
        """``log sigmoid(x) = min(x, 0) - log(1 + exp(-|x|))`` (no overflow).

        Written out: onnxruntime has no float64 ``Softplus`` for recent opsets.
        """
        zero = self.const(np.array(0.0, dtype=npt), "zero")
        one = self.const(np.array(1.0, dtype=npt), "one")
        e = self.node("Exp", [self.node("Neg", [self.node("Abs", [x])])])
        return self.node(
            "Sub", [self.node("Min", [x, zero]), self.node("Log", [self.node("Add", [one, e])])]
        )

    def log_clamped(self, x, npt):
        """``log(max(x, tiny))``: probabilities to logits, as ``check_scores``."""
        tiny = self.const(np.array(np.finfo(npt).tiny, dtype=npt), "tiny")
        return self.node("Log", [self.node("Max", [x, tiny])], "z")

    def cols(self, x, lo, hi):
        """Columns ``lo:hi`` of a 2-D ``x``."""
        ends = [self.const(np.array([v], np.int64)) for v in (lo, hi, 1)]
        return self.node("Slice", [x, *ends])

    def top_mask(self, Z, n_classes):
        """Boolean (n, n_classes), true at each row's arg-max."""
        a1 = self.node("ArgMax", [Z], "argmax", axis=1, keepdims=1)
        k = self.const(np.arange(n_classes, dtype=np.int64)[None, :], "k")
        return self.node("Equal", [k, a1])

    def logsumexp(self, x):
        """``logsumexp`` of each row of ``x`` (keepdims), around its maximum."""
        m = self.reduce("ReduceMax", x)
        e = self.node("Exp", [self.node("Sub", [x, m])])
        return self.node("Add", [m, self.node("Log", [self.reduce("ReduceSum", e)])])

    def logaddexp(self, parts):
        """Elementwise ``log sum_i exp(parts_i)``, around their maximum."""
        if len(parts) == 1:
            return parts[0]
        m = self.node("Max", parts)
        total = None
        for t in parts:
            e = self.node("Exp", [self.node("Sub", [t, m])])
            total = e if total is None else self.node("Add", [total, e])
        return self.node("Add", [m, self.node("Log", [total])])


class ModelEmitter(Emitter):
    """Collects nodes and initializers for :func:`onnx.helper.make_graph`."""

    def __init__(self, opset=17):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self._count = 0

    def name(self, seed):
        self._count += 1
        return f"{seed}_{self._count}"

    def const(self, array, seed="c"):
        name = self.name(seed)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type, inputs, seed="t", n_outputs=1, **attrs):
        outs = [self.name(seed) for _ in range(n_outputs)]
        self.nodes.append(
            helper.make_node(op_type, list(inputs), outs, name=self.name(op_type), **attrs)
        )
        return outs[0] if n_outputs == 1 else outs


def _np_dtype(onnx_type):
    return np.float64 if onnx_type == _DOUBLE else np.float32


def _score_pair(g, X, input_type, npt):
    """One binary score per row as a column ``s`` and its complement (1 - s, or 0)."""
    s = g.node("Reshape", [X, g.const(np.array([-1, 1], dtype=np.int64), "shape")])
    if input_type == "probabilities":
        return s, g.node("Sub", [g.const(np.array(1.0, npt), "one"), s])
    return s, g.node("Sub", [s, s])


def _logits(g, X, *, input_type, n_features_in, dtype):
    """The calibrator's input as (n, K) logits of ``dtype`` (as ``check_scores``)."""
    X = g.node("Cast", [X], "x", to=dtype)
    if n_features_in == 1:
        s, other = _score_pair(g, X, input_type, _np_dtype(dtype))
        X = g.node("Concat", [other, s], "x", axis=1)
    if input_type == "probabilities":
        return g.log_clamped(X, _np_dtype(dtype))
    return X


def _ovr_log_odds(g, Z, n_classes, dtype):
    """ONNX version of :func:`skcal.torch._modules.ovr_log_odds`."""
    npt = _np_dtype(dtype)
    m1 = g.reduce("ReduceMax", Z)
    top = g.top_mask(Z, n_classes)
    E = g.node("Exp", [g.node("Sub", [Z, m1])])
    rest = g.node("Sub", [g.reduce("ReduceSum", E), E])
    one = g.const(np.array(1.0, dtype=npt), "one")
    L = g.node("Add", [m1, g.node("Log", [g.node("Where", [top, one, rest])])])
    A2 = g.node("Where", [top, g.const(np.array(-np.inf, dtype=npt), "ninf"), Z])
    return g.node("Sub", [Z, g.node("Where", [top, g.logsumexp(A2), L])], "s")


def _scores(g, Z, n_classes, binary, dtype):
    if binary:
        return g.node("Sub", [g.cols(Z, 1, 2), g.cols(Z, 0, 1)], "s")
    return _ovr_log_odds(g, Z, n_classes, dtype)


def _affine(g, Z, spec, n_classes, dtype):
    npt = _np_dtype(dtype)
    if spec.get("features", "logits") == "log_softmax":
        beta = float(spec.get("feature_scale", 1.0))
        if beta != 1.0:
            Z = g.node("Mul", [Z, g.const(np.asarray(beta, dtype=npt), "feature_scale")])
        Z = g.node("LogSoftmax", [Z], axis=1)
    if spec.get("matrix") is not None:
        W = np.asarray(spec["matrix"], dtype=npt).T.copy()
        Z = g.node("MatMul", [Z, g.const(W, "w")])
    else:
        scale = 1.0 if spec.get("scale") is None else spec["scale"]
        Z = g.node("Mul", [Z, g.const(np.asarray(scale, dtype=npt), "scale")])
    if spec.get("bias") is not None:
        Z = g.node("Add", [Z, g.const(np.asarray(spec["bias"], dtype=npt), "bias")])
    return g.node("LogSoftmax", [Z], "log_proba", axis=1), True


def _mixture(g, Z, spec, n_classes, dtype):
    """Ensemble temperature scaling, in log space (see ``TemperatureMixture``)."""
    npt = _np_dtype(dtype)
    w = np.asarray(spec["weights"], dtype=np.float64).reshape(-1)
    parts = []
    if w[0] > 0:
        Zt = g.node("Mul", [Z, g.const(np.asarray(1.0 / spec["temperature"], dtype=npt), "beta")])
        parts.append(g.node("Add", [g.node("LogSoftmax", [Zt], axis=1),
                                    g.const(np.asarray(np.log(w[0]), dtype=npt), "lw")]))
    if w[1] > 0:
        parts.append(g.node("Add", [g.node("LogSoftmax", [Z], axis=1),
                                    g.const(np.asarray(np.log(w[1]), dtype=npt), "lw")]))
    if w[2] > 0:
        zero = g.node("Sub", [Z, Z])
        parts.append(g.node("Add", [zero, g.const(
            np.asarray(np.log(w[2]) - np.log(n_classes), dtype=npt), "lw")]))
    return g.logaddexp(parts), True


def _local_temperature(g, Z, spec, n_classes, dtype, F):
    """Local temperature scaling (see ``skcal.torch.LocalTemperature``)."""
    npt = _np_dtype(dtype)
    coefs = spec["coefs"]
    if not coefs:
        T = g.const(np.asarray(spec["temperature"], dtype=npt), "temperature")
    else:
        k = min(int(spec["top_k"]), n_classes)
        phi = []
        if k:
            top, _ = g.node("TopK", [g.node("LogSoftmax", [Z], axis=1),
                                     g.const(np.array([k], dtype=np.int64), "k")],
                            n_outputs=2, axis=1, largest=1, sorted=1)
            phi.append(top)
        if F is not None:
            phi.append(g.node("Cast", [F], to=dtype))
        h = phi[0] if len(phi) == 1 else g.node("Concat", phi, axis=1)
        h = g.node("Div", [g.node("Sub", [h, g.const(np.asarray(spec["feature_mean"], dtype=npt), "mean")]),
                           g.const(np.asarray(spec["feature_scale"], dtype=npt), "scale")])
        for i, (W, b) in enumerate(zip(coefs, spec["intercepts"])):
            h = g.node("Add", [g.node("MatMul", [h, g.const(np.asarray(W, dtype=npt), "w")]),
                               g.const(np.asarray(b, dtype=npt), "b")])
            if i < len(coefs) - 1:
                h = g.node("Tanh", [h])
        # softplus(h) = -log sigmoid(-h) (onnxruntime has no float64 Softplus)
        softplus = g.node("Neg", [g.log_sigmoid(g.node("Neg", [h]), npt)])
        T = g.node("Add", [softplus,
                           g.const(np.asarray(spec["min_temperature"], dtype=npt), "t_min")])
    return g.node("LogSoftmax", [g.node("Div", [Z, T])], "log_proba", axis=1), True


def _ovr_sigmoid(g, Z, spec, n_classes, dtype):
    npt = _np_dtype(dtype)
    coef = np.atleast_2d(np.asarray(spec["coef"], dtype=np.float64))
    binary = coef.shape[1] == 1
    if spec.get("log_floor") is not None:
        Z = g.node("Max", [Z, g.const(np.array(spec["log_floor"], dtype=npt), "log_floor")])
    S = _scores(g, Z, n_classes, binary, dtype)
    F = g.const(np.asarray(spec["intercept"], dtype=npt).reshape(-1), "intercept")
    phis = {
        "score": lambda: S,
        "sigmoid": lambda: g.node("Sigmoid", [S]),
        "log_sigmoid": lambda: g.log_sigmoid(S, npt),
        "log_sigmoid_neg": lambda: g.log_sigmoid(g.node("Neg", [S]), npt),
        "square": lambda: g.node("Mul", [S, S]),
    }
    for i, f in enumerate(spec.get("features", ("score",))):
        phi = phis[f]()
        F = g.node("Add", [F, g.node("Mul", [phi, g.const(coef[i].astype(npt), "coef")])])
    if binary:
        neg = g.log_sigmoid(g.node("Neg", [F]), npt)
        return g.node("Concat", [neg, g.log_sigmoid(F, npt)], axis=1), True
    return g.node("LogSoftmax", [g.log_sigmoid(F, npt)], "log_proba", axis=1), True


def _ovr_interp(g, Z, spec, n_classes, dtype):
    npt = _np_dtype(dtype)
    X, Y = padded_knots(spec["x"], spec["y"])
    n_maps, m = X.shape
    binary = n_maps == 1
    S = _scores(g, Z, n_classes, binary, dtype)
    lo = g.const(np.array([x[0] for x in spec["x"]], dtype=npt), "x_min")
    hi = g.const(np.array([x[-1] for x in spec["x"]], dtype=npt), "x_max")
    S = g.node("Min", [g.node("Max", [S, lo]), hi], "s_clip")
    # j = number of knots <= s (searchsorted right), clamped to 1..m-1
    ge = g.node("GreaterOrEqual", [g.node("Unsqueeze", [S, g.const(np.array([2], np.int64))]),
                                   g.const(X.astype(npt)[None], "knots_x")])
    j = g.reduce("ReduceSum", g.node("Cast", [ge], to=_DOUBLE), keepdims=0, axis=2)
    j = g.node("Min", [g.node("Max", [j, g.const(np.array(1.0), "one")]),
                       g.const(np.array(float(m - 1)), "last")])
    j = g.node("Add", [g.node("Cast", [j], to=TensorProto.INT64),
                       g.const((np.arange(n_maps, dtype=np.int64) * m)[None, :], "offset")])
    j0 = g.node("Sub", [j, g.const(np.array(1, dtype=np.int64), "one_i")])
    Xf = g.const(X.astype(npt).reshape(-1), "knots_x_flat")
    Yf = g.const(Y.astype(npt).reshape(-1), "knots_y_flat")
    x0, x1 = g.node("Gather", [Xf, j0]), g.node("Gather", [Xf, j])
    y0, y1 = g.node("Gather", [Yf, j0]), g.node("Gather", [Yf, j])
    t = g.node("Div", [g.node("Sub", [S, x0]), g.node("Sub", [x1, x0])])
    Q = g.node("Add", [y0, g.node("Mul", [t, g.node("Sub", [y1, y0])])], "q")
    one = g.const(np.array(1.0, dtype=npt), "one")
    if binary:
        return g.node("Concat", [g.node("Sub", [one, Q]), Q], "proba", axis=1), False
    den = g.reduce("ReduceSum", Q)
    ok = g.node("Greater", [den, g.const(np.array(0.0, dtype=npt), "zero")])
    P = g.node("Div", [Q, g.node("Where", [ok, den, one])])
    uniform = g.const(np.array(1.0 / n_classes, dtype=npt), "uniform")
    return g.node("Where", [ok, P, uniform], "proba"), False


def _top_versus_all(g, X, spec, *, n_classes, input_type, n_features_in):
    """Top-versus-all in float64 (see ``skcal.torch.TopVersusAll``): log-probabilities."""
    K = n_classes
    c = lambda v, seed="c": g.const(np.asarray(v, dtype=np.float64), seed)  # noqa: E731
    Z = _logits(g, X, input_type=input_type, n_features_in=n_features_in, dtype=_DOUBLE)
    A = g.node("Sub", [Z, g.reduce("ReduceMax", Z)])
    top = g.top_mask(A, K)
    rest = g.node("Where", [top, c(-np.inf, "ninf"), A])
    log_rest = g.logsumexp(rest)
    log_share2 = g.node("Sub", [g.reduce("ReduceMax", rest), log_rest])
    _, LQ = calibration_nodes(g, g.node("Neg", [log_rest], "score"), spec["inner"], n_classes=2,
                              input_type="logits", n_features_in=1, out_dtype=_DOUBLE)
    log_rest_c, log_c = g.cols(LQ, 0, 1), g.cols(LQ, 1, 2)
    log_u = -np.log(K - 1)
    margin = float(spec["margin"])
    log_m = g.node("Sub", [g.node("Sub", [log_c, log_rest_c]), c(margin, "margin")])
    low = g.node("Not", [g.node("GreaterOrEqual", [log_m, c(log_u, "log_u")])])
    s_low = log_u + margin
    log_c = g.node("Where", [low, c(-np.logaddexp(0.0, -s_low)), log_c])
    log_rest_c = g.node("Where", [low, c(-np.logaddexp(0.0, s_low)), log_rest_c])
    log_m = g.node("Where", [low, c(log_u, "log_u"), log_m])
    zero, one = c(0.0, "zero"), c(1.0, "one")
    if K > 2:
        u = float(np.exp(log_u))
        r2, m = g.node("Exp", [log_share2]), g.node("Exp", [log_m])
        den = g.node("Sub", [r2, c(u, "u")])
        ok = g.node("Greater", [den, c(1e-12 * u, "tol")])
        a = g.node("Div", [g.node("Sub", [r2, m]), g.node("Where", [ok, den, one])])
        a = g.node("Min", [g.node("Max", [g.node("Where", [ok, a, one]), zero]), one])
        alpha = g.node("Where", [g.node("Greater", [log_share2, log_m]), a, zero], "alpha")
    else:
        alpha = g.node("Mul", [log_c, zero])
    t1 = g.node("Add", [g.node("Log", [g.node("Sub", [one, alpha])]),
                        g.node("Sub", [A, log_rest])])
    t2 = g.node("Sub", [g.node("Log", [alpha]), c(np.log(K - 1), "log_k1")])
    # t1 is finite wherever t2 is -inf (alpha = 0) and vice versa
    out = g.node("Add", [g.logaddexp([t1, t2]), log_rest_c])
    return g.node("Where", [top, log_c, out])


def calibrator_nodes(g, X, calibrator, out_dtype=_FLOAT):
    """:func:`calibration_nodes` of a fitted calibrator, its input reordered first.

    As ``predict_proba``, the input columns go into ``classes_`` order by
    ``_column_order_`` (a ``Gather``; one binary score ``s`` becomes the two
    columns ``[s, 0]`` of logits or ``[p, 1 - p]`` of probabilities). ``X``
    is of ``out_dtype``.
    """
    order = getattr(calibrator, "_column_order_", None)
    n_in = calibrator.n_features_in_
    if order is not None and n_in == 1:
        s, other = _score_pair(g, X, calibrator.input_type, _np_dtype(out_dtype))
        X, n_in = g.node("Concat", [s, other], "x", axis=1), 2
    elif order is not None:
        K = len(order)
        idx = np.r_[np.asarray(order, np.int64), np.arange(K, max(K, n_in))]
        X = g.node("Gather", [X, g.const(idx, "order")], axis=1)
    return calibration_nodes(
        g, X, calibrator._torch_spec(), n_classes=len(calibrator.classes_),
        input_type=calibrator.input_type, n_features_in=n_in, out_dtype=out_dtype,
    )


def calibration_nodes(
    g, X, spec, *, n_classes, input_type, n_features_in, out_dtype=_FLOAT
):
    """Emit the nodes of a calibrator's map; return the names ``(proba, log_proba)``.

    ``X`` names the calibrator's input (logits or probabilities, shape
    ``(n, n_features_in)``), ``spec`` is its ``_torch_spec()``; the outputs,
    of shape ``(n, n_classes)``, and the computation are of ``out_dtype``
    (FLOAT or DOUBLE; the isotonic maps and the temperature network compute
    in float64). A spec that is a torch module or of an unknown kind raises
    ``NotImplementedError``.
    """
    if not isinstance(spec, dict):
        raise NotImplementedError(
            "this calibrator's map is a custom torch module; export it with "
            "torch.onnx.export(calibrator.to_torch(), ...) instead"
        )
    kind = spec["kind"]
    if kind == "uniform_mixture":  # SmoothedCalibrator: (1 - lam) p + lam / K
        proba, _ = calibration_nodes(
            g, X, spec["inner"], n_classes=n_classes, input_type=input_type,
            n_features_in=n_features_in, out_dtype=out_dtype,
        )
        npt = _np_dtype(out_dtype)
        lam = float(spec["weight"])
        mixed = g.node("Add", [
            g.node("Mul", [proba, g.const(np.array(1.0 - lam, npt), "keep")]),
            g.const(np.array(lam / n_classes, npt), "even"),
        ], "proba")
        return mixed, g.node("Log", [mixed], "log_proba")
    if kind == "top_versus_all":  # TopVersusAllCalibrator, in float64
        log_proba = _top_versus_all(g, X, spec, n_classes=n_classes, input_type=input_type,
                                    n_features_in=n_features_in)
        log_proba = g.node("Cast", [log_proba], "log_proba", to=out_dtype)
        return g.node("Exp", [log_proba], "proba"), log_proba
    # the interpolation and the temperature network work in float64, as skcal does
    dtype = _DOUBLE if kind in ("ovr_interp", "local_temperature") else out_dtype
    F = None
    m = int(spec.get("n_extra_features", 0)) if kind == "local_temperature" else 0
    if m:
        cut = n_features_in - m
        X, F = g.cols(X, 0, cut), g.cols(X, cut, n_features_in)
        n_features_in = cut
    Z = _logits(g, X, input_type=input_type, n_features_in=n_features_in, dtype=dtype)
    build = {"affine": _affine, "mixture": _mixture, "ovr_sigmoid": _ovr_sigmoid,
             "ovr_interp": _ovr_interp,
             "local_temperature": lambda *a: _local_temperature(*a, F)}.get(kind)
    if build is None:
        raise NotImplementedError(f"no ONNX builder for map kind {kind!r}")
    out, is_log = build(g, Z, spec, n_classes, dtype)
    if is_log:
        log_proba = g.node("Cast", [out], "log_proba", to=out_dtype)
        proba = g.node("Exp", [log_proba], "proba")
    else:
        proba = g.node("Cast", [out], "proba", to=out_dtype)
        log_proba = g.node("Cast", [g.node("Log", [out])], "log_proba", to=out_dtype)
    return proba, log_proba
