"""The inner calibrator of a wrapping calibrator (smoothing, top-versus-all).

A wrapping calibrator validates ``X``, ``y`` and the weights itself (as every
:class:`~skcal.base.BaseCalibrator`) and hands the inner calibrator validated
logits and encoded labels ``0..K-1``; these helpers clone the template for
that, and read the flags of the common checks from it.
"""

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods

from .._backend._array import to_numpy
from ..utils.validation import ProbabilitiesAsLogitsWarning

__all__ = [
    "WrapperMixin", "check_inner", "fit_inner", "inner_flag", "inner_spec", "predict_inner",
]


def check_inner(template, owner):
    """Reject an inner calibrator set to take probabilities.

    The wrapper turns its input into logits before the inner calibrator sees
    it, so ``input_type`` belongs on the wrapper.

    Raises
    ------
    ValueError
        If ``template`` has ``input_type="probabilities"``.
    """
    params = template.get_params(deep=False)
    if params.get("input_type", "logits") != "logits":
        raise ValueError(
            f"{owner} hands its calibrator logits: set input_type="
            f"{params['input_type']!r} on the {owner}, not on its calibrator "
            f"{type(template).__name__}."
        )


def fit_inner(template, X, y, sample_weight, classes):
    """A clone of ``template`` fitted on validated logits and encoded labels.

    Parameters
    ----------
    template : estimator
        The unfitted inner calibrator.
    X : ndarray or torch.Tensor of shape (n_samples, n_columns)
        Logits (or one binary score per row).
    y : ndarray or torch.Tensor of shape (n_samples,)
        Encoded labels in ``0..len(classes)-1``.
    sample_weight : ndarray, torch.Tensor or None
    classes : ndarray
        Passed as ``classes`` where the clone has that parameter, so that a
        class absent from ``y`` keeps its column (the wrapper has already
        warned about it; the clone's own warning is not repeated).

    Returns
    -------
    estimator
        The fitted clone.
    """
    est = clone(template)
    params = est.get_params(deep=False)
    update = {}
    if "classes" in params:
        update["classes"] = np.asarray(classes)
    if "input_type" in params:
        update["input_type"] = "logits"
    est.set_params(**update)
    y = to_numpy(y)
    if sample_weight is not None:
        sample_weight = to_numpy(sample_weight)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Classes .* never occur")
        # the wrapper has judged its own input; X here is its internal score
        warnings.filterwarnings("ignore", category=ProbabilitiesAsLogitsWarning)
        est.fit(X, y, sample_weight=sample_weight)
    return est


def predict_inner(inner, X, *, log=False):
    """The fitted inner calibrator's (log-)probabilities of the wrapper's scores.

    Parameters
    ----------
    inner : fitted calibrator
        From :func:`fit_inner`.
    X : ndarray or torch.Tensor of shape (n_samples, n_columns)
        Logits or scores the wrapper computed from its validated input.
    log : bool, default=False
        ``predict_log_proba`` instead of ``predict_proba``.

    Returns
    -------
    ndarray or torch.Tensor of shape (n_samples, n_classes)
        The inner calibrator's output. Its check that ``X`` looks like
        probabilities is not repeated: the wrapper ran it on its own input
        (a score of one or two rows in ``[0, 1]`` read as a probability gave
        a spurious :class:`~skcal.utils.validation.ProbabilitiesAsLogitsWarning`).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ProbabilitiesAsLogitsWarning)
        return inner.predict_log_proba(X) if log else inner.predict_proba(X)


def inner_flag(template, name, default=True):
    """A weight / shape flag of the inner calibrator (the common checks read it)."""
    return bool(getattr(template, name, default))


def inner_spec(inner, owner):
    """The fitted inner calibrator's export spec (``_torch_spec()``), a dict.

    Raises
    ------
    NotImplementedError
        If the inner calibrator has no closed-form map on logits (or only a
        custom torch module, which the wrapper's map cannot hold), naming
        both.
    """
    try:
        spec = inner._torch_spec() if hasattr(inner, "_torch_spec") else None
    except NotImplementedError:
        spec = None
    if not isinstance(spec, dict):
        raise NotImplementedError(
            f"{owner} exports through its calibrator, and {type(inner).__name__} "
            "has no closed-form map on logits; use predict_proba / transform instead."
        )
    return spec


class WrapperMixin:
    """Plumbing shared by the wrappers: the ``calibrator`` parameter and its default.

    A wrapper sets ``_default_inner`` to the name of a class of
    :mod:`skcal.ovr`, used when ``calibrator`` is None, and adds
    ``_INNER_CONSTRAINT`` to its ``_parameter_constraints``.
    """

    _default_inner = "PlattScaler"
    _INNER_CONSTRAINT = {"calibrator": [HasMethods(["fit", "predict_proba"]), None]}

    def _template(self):
        """The unfitted inner calibrator: ``calibrator``, or the default one."""
        if self.calibrator is None:
            from .. import ovr

            return getattr(ovr, self._default_inner)()
        return self.calibrator

    @property
    def _piecewise_constant(self):
        return inner_flag(self._template(), "_piecewise_constant", False)


def split_rows(cv, X, y, owner):
    """The ``(train, test)`` splits of a splitter or iterable ``cv``, as a list.

    A group splitter (:class:`~sklearn.model_selection.GroupKFold`, ...)
    needs ``groups``, which the calibrators' ``fit`` does not take; its error
    is replaced by one that says how to pass them: the splits themselves.
    """
    from sklearn.model_selection import check_cv

    try:
        return list(check_cv(cv).split(X, y))
    except ValueError as exc:
        if "'groups' parameter should not be None" not in str(exc):
            raise
        name = type(cv).__name__
        raise ValueError(
            f"{owner}: cv={name}(...) needs groups, which fit does not take. "
            f"Pass the splits instead: cv=list({name}(...).split(X, y, groups))."
        ) from exc
