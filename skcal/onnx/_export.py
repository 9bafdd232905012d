"""Standalone ONNX models of fitted calibrators."""

from onnx import TensorProto, checker, helper
from sklearn.utils.validation import check_is_fitted

from ._builder import ModelEmitter, calibrator_nodes

__all__ = ["to_onnx"]


def to_onnx(calibrator, *, opset=17, input_name="X", dtype="float32", binary_1d=False):
    """A fitted calibrator as an ONNX model (no scikit-learn or torch to run it).

    Parameters
    ----------
    calibrator : skcal calibrator
        Fitted, with a closed-form map (every calibrator whose
        :meth:`~skcal.base.BaseCalibrator.to_torch` works through one of the
        generic modules of :mod:`skcal.torch`).
    opset : int, default=17
        ONNX opset of the default domain (13 or later).
    input_name : str, default="X"
        Name of the graph input.
    dtype : {"float32", "float64"}, default="float32"
        Element type of the graph's input and outputs. ``"float64"`` reads
        float64 scores without rounding them to float32 (which moves a score
        lying between two thresholds closer than float32 resolution across
        one of them) and answers to float64 rounding.
    binary_1d : bool, default=False
        For a calibrator fitted on one binary score per row
        (``n_features_in_ == 1``): declare the graph input 1-D, shape
        ``(N,)`` (the 1-D scores ``predict_proba`` takes), instead of
        ``(N, 1)``. ONNX fixes the rank of a graph input, so one model takes
        one of the two shapes.

    Returns
    -------
    model : onnx.ModelProto
        Input ``X``: tensor of ``dtype`` and shape ``(N, n_features_in_)``
        (or ``(N,)``, see ``binary_1d``) holding what the calibrator's ``fit``
        took (logits or probabilities). Outputs
        ``probabilities`` and ``log_probabilities``: ``dtype``, shape
        ``(N, n_classes)``, equal to ``predict_proba`` and
        ``predict_log_proba`` of the same input values (to about 1e-6 in
        probability for float32, 1e-12 for float64; on a segment of a
        piecewise-linear map of slope ``a``, the scores' rounding times
        ``a``).

    Raises
    ------
    ValueError
        For a ``dtype`` other than ``"float32"`` or ``"float64"``, or
        ``binary_1d=True`` for a calibrator fitted on more than one column.
    NotImplementedError
        If the calibrator has no closed form on logits.
    sklearn.exceptions.NotFittedError
        If it is not fitted.

    Notes
    -----
    Run with ``onnxruntime``::

        import onnxruntime as ort
        sess = ort.InferenceSession(to_onnx(cal).SerializeToString())
        proba = sess.run(["probabilities"], {"X": logits.astype("float32")})[0]

    The isotonic (piecewise-linear) map computes in float64 inside the
    graph, as :class:`~skcal.IsotonicScaler` does; knots are found by
    counting, which costs ``N * n_classes * n_knots`` comparisons.

    Examples
    --------
    >>> from skcal import TemperatureScaler
    >>> from skcal.datasets import make_logits
    >>> from skcal.onnx import to_onnx
    >>> X, y = make_logits(100, 3)
    >>> model = to_onnx(TemperatureScaler().fit(X, y))
    >>> [o.name for o in model.graph.output]
    ['probabilities', 'log_probabilities']
    """
    types = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE}
    if dtype not in types:
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    elem = types[dtype]
    check_is_fitted(calibrator)
    if binary_1d and calibrator.n_features_in_ != 1:
        raise ValueError(
            f"binary_1d=True needs a calibrator fitted on one binary score per row; "
            f"this {calibrator.__class__.__name__} was fitted on "
            f"{calibrator.n_features_in_} columns."
        )
    g = ModelEmitter(opset=opset)
    n_classes = len(calibrator.classes_)
    outputs = ["probabilities", "log_probabilities"]
    for name, x in zip(outputs, calibrator_nodes(g, input_name, calibrator, elem)):
        g.nodes.append(helper.make_node("Identity", [x], [name]))
    graph = helper.make_graph(
        g.nodes,
        f"skcal_{calibrator.__class__.__name__}",
        # one binary score: (N,) or (N, 1), reshaped to a column inside
        [helper.make_tensor_value_info(
            input_name, elem, ["N"] if binary_1d else ["N", calibrator.n_features_in_]
        )],
        [helper.make_tensor_value_info(name, elem, ["N", n_classes]) for name in outputs],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="skcal"
    )
    model.ir_version = min(model.ir_version, 8 if opset < 19 else 9)
    checker.check_model(model)
    return model
