"""skl2onnx converters for skcal's estimators.

After :func:`register_skl2onnx`, ``skl2onnx.to_onnx`` converts every skcal
calibrator with a closed form, :class:`~skcal.ClassifierLogits` and
:class:`~skcal.CalibratedClassifier`, alone or as steps of a scikit-learn
``Pipeline`` (for example ``make_pipeline(ClassifierLogits(FrozenEstimator(clf)),
TemperatureScaler())``).
The calibration maps are the nodes of :mod:`skcal.onnx._builder`, the same as
:func:`skcal.onnx.to_onnx`; the wrapped classifiers are converted by
skl2onnx's own converters.
"""

import numpy as np
from onnx import TensorProto, helper

from ._builder import Emitter, _np_dtype, calibrator_nodes

__all__ = ["register_skl2onnx"]


class _ContainerEmitter(Emitter):
    """Emits nodes into a skl2onnx converter's container."""

    def __init__(self, scope, container):
        self.scope = scope
        self.container = container
        self.opset = container.target_opset

    def name(self, seed):
        return self.scope.get_unique_variable_name(f"skcal_{seed}")

    def const(self, array, seed="c"):
        array = np.asarray(array)
        name = self.name(seed)
        values = array.ravel().tolist()
        if array.dtype.kind in "US":
            dtype, values = TensorProto.STRING, [s.encode("utf-8") for s in values]
        else:
            dtype = helper.np_dtype_to_tensor_dtype(array.dtype)
        self.container.add_initializer(name, dtype, list(array.shape), values)
        return name

    def node(self, op_type, inputs, seed="t", n_outputs=1, **attrs):
        outs = [self.name(seed) for _ in range(n_outputs)]
        self.container.add_node(
            op_type, list(inputs), outs,
            name=self.scope.get_unique_operator_name(f"skcal_{op_type}"), **attrs,
        )
        return outs[0] if n_outputs == 1 else outs


def _proto_dtype(variable):
    """DOUBLE for a double tensor variable, FLOAT otherwise."""
    from skl2onnx.common.data_types import guess_proto_type

    t = guess_proto_type(variable.type)
    return TensorProto.DOUBLE if t == TensorProto.DOUBLE else TensorProto.FLOAT


def _tensor_type(dtype):
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType

    return DoubleTensorType if dtype == TensorProto.DOUBLE else FloatTensorType


def _classifier_scores(g, scope, container, operator, estimator, response_method):
    """ONNX version of ``skcal._logits._classifier_scores``: (N, n_out)."""
    from skl2onnx._supported_operators import sklearn_operator_name_map
    from skl2onnx.common.data_types import Int64TensorType
    from sklearn.frozen import FrozenEstimator

    while isinstance(estimator, FrozenEstimator):  # converts as what it wraps
        estimator = estimator.estimator
    if type(estimator) not in sklearn_operator_name_map:
        raise RuntimeError(
            f"skl2onnx has no converter for {estimator.__class__.__name__}; "
            "register one first"
        )
    raw = response_method == "decision_function"
    if raw:
        if not container.has_options(estimator, "raw_scores"):
            raise RuntimeError(
                f"skl2onnx cannot output {estimator.__class__.__name__}."
                "decision_function (no 'raw_scores' option); fit the skcal "
                "estimator with response_method='predict_proba'"
            )
        # the sub-estimator's converter reads its options by id from here
        container.options = dict(container.options or {})
        container.options[id(estimator)] = {
            **container.options.get(id(estimator), {}), "raw_scores": True
        }
    sub = scope.declare_local_operator(sklearn_operator_name_map[type(estimator)], estimator)
    sub.inputs = operator.inputs
    label = scope.declare_local_variable("skcal_sub_label", Int64TensorType())
    dtype = _proto_dtype(operator.inputs[0])
    proba = scope.declare_local_variable("skcal_sub_scores", _tensor_type(dtype)())
    sub.outputs.append(label)
    sub.outputs.append(proba)
    scores = g.node("Cast", [proba.onnx_name], "scores", to=dtype)
    n_classes = len(estimator.classes_)
    if raw and n_classes == 2:
        # binary raw scores come as [-d, d]: keep d, the log-odds of classes_[1]
        scores = g.cols(scores, 1, 2)
    return scores


def _write_label(g, operator, proba, classes):
    """Output 0: ``classes[argmax(proba)]``; output 1: ``proba``."""
    idx = g.node("ArgMax", [proba], "argmax", axis=1, keepdims=0)
    classes = np.asarray(classes)
    integer = classes.dtype.kind in "iub"
    table = g.const(classes.astype(np.int64 if integer else str), "classes")
    label = g.node("Gather", [table, idx], "label")
    g.container.add_node("Identity", [label], [operator.outputs[0].full_name],
                         name=g.scope.get_unique_operator_name("skcal_label"))
    g.container.add_node("Identity", [proba], [operator.outputs[1].full_name],
                         name=g.scope.get_unique_operator_name("skcal_proba"))


def _check_nocl(scope, operator):
    opts = scope.get_options(operator.raw_operator, dict(nocl=False))
    if opts.get("nocl"):
        raise RuntimeError("option 'nocl' is not supported by skcal's converters")


def _convert_calibrator(scope, operator, container):
    _check_nocl(scope, operator)
    cal = operator.raw_operator
    g = _ContainerEmitter(scope, container)
    X = operator.inputs[0].full_name
    proba, _ = calibrator_nodes(g, X, cal, _proto_dtype(operator.inputs[0]))
    _write_label(g, operator, proba, cal.classes_)


def _convert_calibrated_classifier(scope, operator, container):
    _check_nocl(scope, operator)
    model = operator.raw_operator
    g = _ContainerEmitter(scope, container)
    dtype = _proto_dtype(operator.inputs[0])
    npt = _np_dtype(dtype)
    total = None
    for pair in model.calibrated_classifiers_:
        scores = _classifier_scores(
            g, scope, container, operator, pair.estimator, pair.response_method
        )
        if pair.log_input:
            scores = g.log_clamped(scores, npt)
        P, _ = calibrator_nodes(g, scores, pair.calibrator, dtype)
        total = P if total is None else g.node("Add", [total, P], "proba_sum")
    n = len(model.calibrated_classifiers_)
    proba = g.node("Div", [total, g.const(np.array(float(n), dtype=npt), "n")])
    _write_label(g, operator, proba, model.classes_)


def _convert_classifier_logits(scope, operator, container):
    model = operator.raw_operator
    g = _ContainerEmitter(scope, container)
    scores = _classifier_scores(
        g, scope, container, operator, model.estimator_, model.response_method_
    )
    if model.response_method_ == "predict_proba":
        scores = g.log_clamped(scores, _np_dtype(_proto_dtype(operator.inputs[0])))
    container.add_node("Identity", [scores], [operator.outputs[0].full_name],
                       name=scope.get_unique_operator_name("skcal_logits"))


def _logits_shape(operator):
    N = operator.inputs[0].get_first_dimension()
    tensor = _tensor_type(_proto_dtype(operator.inputs[0]))
    operator.outputs[0].type = tensor([N, operator.raw_operator._n_output_columns()])


def _classifier_shape(operator):
    from skl2onnx.common.data_types import Int64TensorType, StringTensorType

    N = operator.inputs[0].get_first_dimension()
    classes = np.asarray(operator.raw_operator.classes_)
    label_type = Int64TensorType if classes.dtype.kind in "iub" else StringTensorType
    operator.outputs[0].type = label_type([N])
    tensor = _tensor_type(_proto_dtype(operator.inputs[0]))
    operator.outputs[1].type = tensor([N, len(classes)])


def register_skl2onnx():
    """Register skcal's converters with skl2onnx.

    Registers every public skcal calibrator that has a closed form (the
    ``_torch_spec`` hook), :class:`~skcal.ClassifierLogits` and
    :class:`~skcal.CalibratedClassifier`. Calling it again is harmless.

    Returns
    -------
    registered : list of str
        Names of the registered classes.

    Notes
    -----
    Calibrators and ``CalibratedClassifier`` convert as classifiers (outputs
    ``label`` and ``probabilities``; pass ``options={id(model): {"zipmap":
    False}}`` for a plain probability tensor). ``ClassifierLogits`` and
    ``CalibratedClassifier`` convert their fitted classifiers with skl2onnx's
    converters; a ``decision_function`` is taken from their ``raw_scores``
    option (linear models, SVMs, ...), otherwise use
    ``response_method="predict_proba"``. Computation is in the input's
    dtype (float32, or float64 for a double initial type; always float64
    inside the isotonic maps).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from skl2onnx import to_onnx
    >>> from skcal import ClassifierLogits, TemperatureScaler
    >>> from skcal.onnx import register_skl2onnx
    >>> _ = register_skl2onnx()
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4)).astype(np.float32)
    >>> y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    >>> pipe = make_pipeline(ClassifierLogits(LogisticRegression()), TemperatureScaler())
    >>> onx = to_onnx(pipe.fit(X, y), X[:1], options={"zipmap": False})
    >>> [o.name for o in onx.graph.output]
    ['label', 'probabilities']
    """
    from skl2onnx import update_registered_converter

    import skcal
    from skcal.base import BaseCalibrator
    from skcal.utils.discovery import all_calibrators

    options = {"zipmap": [True, False, "columns"], "nocl": [True, False]}
    done = []
    for name, cls in all_calibrators():
        if cls._torch_spec is not BaseCalibrator._torch_spec:  # a closed form
            update_registered_converter(
                cls, f"Skcal{name}", _classifier_shape, _convert_calibrator,
                options=options, overwrite=True,
            )
            done.append(name)
    update_registered_converter(
        skcal.CalibratedClassifier, "SkcalCalibratedClassifier", _classifier_shape,
        _convert_calibrated_classifier, options=options, overwrite=True,
    )
    update_registered_converter(
        skcal.ClassifierLogits, "SkcalClassifierLogits", _logits_shape,
        _convert_classifier_logits, overwrite=True,
    )
    return done + ["CalibratedClassifier", "ClassifierLogits"]
