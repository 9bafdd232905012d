"""A Pipeline step that turns a fitted classifier into its logits.

:class:`ClassifierLogits` wraps a classifier (usually a fitted one, frozen with
:class:`sklearn.frozen.FrozenEstimator`) and makes it a transformer whose
``transform`` returns the classifier's logits: its ``decision_function`` or the
logarithm of its ``predict_proba``. Followed by a skcal calibrator, it makes a
calibrated classifier out of an existing model::

    make_pipeline(ClassifierLogits(FrozenEstimator(clf)), TemperatureScaler())
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, TransformerMixin, clone
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import check_is_fitted

from ..utils._labels import CLASSIFIER_LOGITS_PREFIX
from ..utils._pickle import VersionedPickleMixin
from ..utils._params import store_params
from ..utils.validation import _caller_stacklevel

__all__ = ["ClassifierLogits"]

#: Response methods in the order that ``response_method="auto"`` tries them.
_AUTO_ORDER = ("decision_function", "predict_proba")


def _resolve_response_method(estimator, response_method):
    """The method giving ``estimator``'s scores (``"auto"``: by ``_AUTO_ORDER``)."""
    names = _AUTO_ORDER if response_method == "auto" else (response_method,)
    for name in names:
        if hasattr(estimator, name):
            return name
    raise AttributeError(
        f"{estimator.__class__.__name__} has no "
        f"{' or '.join(names)} method; ClassifierLogits and CalibratedClassifier "
        "need a classifier with decision_function or predict_proba."
    )


def _classifier_scores(estimator, X, method, n_classes):
    """Raw output of ``estimator.<method>(X)``: one column per class, or 1-D for
    a binary ``decision_function`` (of ``classes_[1]``); else a ``ValueError``."""
    inner = _unwrap(estimator)
    if (method == "decision_function" and n_classes > 2
            and getattr(inner, "decision_function_shape", None) == "ovo"):
        # SVC / NuSVC: K(K-1)/2 pairwise columns; for K = 3 there are 3 of
        # them, which would pass for one column per class
        raise ValueError(
            f"{inner.__class__.__name__} has a one-vs-one decision function "
            f"({n_classes * (n_classes - 1) // 2} columns, one per pair of "
            "classes, not one per class): it cannot be calibrated as logits. Use "
            "response_method='predict_proba', or decision_function_shape='ovr' "
            "(for SVC / NuSVC)."
        )
    scores = np.asarray(getattr(estimator, method)(X))
    if scores.ndim == 2 and scores.shape[1] == 1 and n_classes == 2:
        scores = scores.reshape(-1)
    ok = (scores.ndim == 1 and n_classes == 2 and method == "decision_function") or (
        scores.ndim == 2 and scores.shape[1] == n_classes
    )
    if not ok:
        raise ValueError(
            f"{estimator.__class__.__name__}.{method} returned an array of shape "
            f"{scores.shape} for {n_classes} classes; expected one column per class"
            + (" (or one score per sample for a binary problem)"
               if n_classes == 2 else "")
            + ". A one-vs-one decision function cannot be calibrated as logits; use "
            "response_method='predict_proba' or a one-vs-rest decision function."
        )
    return scores


def _unwrap(estimator):
    """The classifier inside a FrozenEstimator, a Pipeline's last step, ..."""
    for _ in range(10):
        inner = getattr(estimator, "estimator", None)
        if inner is not None and type(estimator).__name__ == "FrozenEstimator":
            estimator = inner
        elif hasattr(estimator, "steps") and estimator.steps:
            estimator = estimator.steps[-1][1]
        else:
            break
    return estimator


def _refuse_calibrator(estimator, owner, remedy):
    """Raise when ``estimator`` (or the classifier inside it) is a skcal calibrator.

    It would "fit" on the features, its output read as a classifier's scores;
    ``remedy`` (with ``{inner}``, the calibrator) ends the message.
    """
    from ..base import BaseCalibrator

    inner = _unwrap(estimator)
    if isinstance(inner, BaseCalibrator):
        raise ValueError(
            f"estimator={estimator!r} is a calibrator, not a classifier: {owner} "
            "needs a classifier fitted on the features X, whose scores it "
            f"calibrates; {remedy.format(inner=inner)}"
        )


def _log_proba(P):
    """``log(P)`` with exact zeros first raised to the dtype's ``finfo.tiny``."""
    P = np.asarray(P)
    if not np.issubdtype(P.dtype, np.floating):
        P = P.astype(np.float64)
    return np.log(np.maximum(P, np.finfo(P.dtype).tiny))


class ClassifierLogits(
    VersionedPickleMixin, MetaEstimatorMixin, TransformerMixin, BaseEstimator
):
    """Transformer that outputs the logits of a classifier.

    Put it before a skcal calibrator in a :class:`~sklearn.pipeline.Pipeline`
    to calibrate an existing classifier: the pipeline then behaves as a
    classifier (``predict_proba``, ``predict``, ``score``), with calibrated
    probabilities. Wrap an already fitted classifier in
    :class:`~sklearn.frozen.FrozenEstimator` so that fitting the pipeline on a
    calibration set fits only the calibrator.

    Parameters
    ----------
    estimator : classifier
        The classifier whose scores are returned. It is cloned and fitted in
        :meth:`fit`; a :class:`~sklearn.frozen.FrozenEstimator` is neither
        cloned nor refitted. It must have ``classes_`` once fitted. An
        already fitted classifier that is not frozen is refitted too, with a
        ``UserWarning`` (wrap it in ``FrozenEstimator`` to keep it).
    response_method : {"auto", "decision_function", "predict_proba"}, default="auto"
        Which method of the classifier gives the logits:

        - ``"decision_function"``: its output is returned as is (these are the
          logits of :class:`~sklearn.linear_model.LogisticRegression`, the
          margins of an SVM, the raw scores of gradient boosting). A binary
          1-D decision function becomes one column: the log-odds (score) of
          ``classes_[1]``.
        - ``"predict_proba"``: the output is ``log(predict_proba(X))``, the
          log-probabilities, which are logits (``softmax(log p) = p``). An
          exact zero probability (common for forests and naive Bayes) becomes
          ``log(finfo(dtype).tiny)`` (about ``-708.4`` for float64,
          ``-87.3`` for float32), so the output is always finite. This is the
          same rule as the calibrators' ``input_type="probabilities"``.
        - ``"auto"``: ``decision_function`` when the classifier has it, else
          ``predict_proba``.

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier (the ``FrozenEstimator`` itself when one was
        given).
    response_method_ : {"decision_function", "predict_proba"}
        The method used.
    classes_ : ndarray of shape (n_classes,)
        Class labels of the classifier; output column ``j`` is the logit of
        ``classes_[j]`` (for one binary column, of ``classes_[1]``).
    n_features_in_ : int
        Number of features of the classifier, when it defines it.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names of the classifier, when it defines them.

    See Also
    --------
    skcal.CalibratedClassifier : Fits the classifier and the calibrator with
        cross-validation in one estimator.

    Notes
    -----
    The calibrator after this step must be fitted on data that the classifier
    was not trained on. With a ``FrozenEstimator`` fitted on a training set,
    fit the pipeline on a separate calibration set. With an unfitted
    classifier, fitting the pipeline trains the classifier and the calibrator
    on the same rows, whose in-sample scores are over-confident; use
    :class:`skcal.CalibratedClassifier` (cross-validated) instead.

    Text class labels: by default the output is an unnamed array, so the
    calibrator matches the labels to the columns in sorted order (the order
    of ``classes_``, which is right) with a ``LabelsInSortedOrderWarning``,
    and cannot place a class absent from the calibration set. With the
    Pipeline's ``set_output(transform="pandas")`` the columns are named
    ``classifierlogits_<class>`` (:meth:`get_feature_names_out`) and the
    calibrator matches them by name: no warning, and an absent class keeps
    its column.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.pipeline import make_pipeline
    >>> from skcal import ClassifierLogits, TemperatureScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X_train, X_cal, y_train, y_cal = train_test_split(X, y, random_state=0)
    >>> clf = LogisticRegression(max_iter=5000).fit(X_train, y_train)
    >>> model = make_pipeline(ClassifierLogits(FrozenEstimator(clf)),
    ...                       TemperatureScaler())
    >>> model = model.fit(X_cal, y_cal)  # fits only the temperature
    >>> model.predict_proba(X_cal[:2]).shape
    (2, 2)
    """

    _parameter_constraints: dict = {
        "estimator": [
            HasMethods(["fit", "decision_function"]),
            HasMethods(["fit", "predict_proba"]),
        ],
        "response_method": [StrOptions({"auto", "decision_function", "predict_proba"})],
    }

    def __init__(self, estimator, *, response_method="auto"):
        store_params(self, locals())

    def fit(self, X, y=None, **fit_params):
        """Fit the classifier (a no-op for a ``FrozenEstimator``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the classifier.
        y : array-like of shape (n_samples,), default=None
            Labels, passed to the classifier's ``fit``.
        **fit_params : dict
            Passed to the classifier's ``fit`` (with metadata routing enabled,
            only the parameters it requested).

        Returns
        -------
        self : object
            The fitted transformer.

        Raises
        ------
        ValueError
            If ``estimator`` is a skcal calibrator (it maps logits, not features).
        AttributeError
            If the classifier lacks the requested response method.

        Warns
        -----
        UserWarning
            If ``estimator`` is already fitted and not a
            :class:`~sklearn.frozen.FrozenEstimator`: it is refitted on ``X``.
        """
        self._validate_params()
        _refuse_calibrator(
            self.estimator, "ClassifierLogits",
            "put the calibrator after this step, e.g. make_pipeline(ClassifierLogits("
            "FrozenEstimator(clf)), {inner!r})")
        params = (process_routing(self, "fit", **fit_params).estimator.fit
                  if _routing_enabled() else fit_params)
        self._warn_fitted_estimator_refit()
        estimator = clone(self.estimator)
        estimator.fit(X, y, **params)
        self.estimator_ = estimator
        self.response_method_ = _resolve_response_method(
            estimator, self.response_method
        )
        self.classes_ = np.asarray(estimator.classes_)
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(estimator, attr):
                setattr(self, attr, getattr(estimator, attr))
        if y is not None:
            self._warn_missing_classes(y)
        return self

    def _warn_fitted_estimator_refit(self):
        # (a FrozenEstimator is neither cloned nor refitted)
        from sklearn.exceptions import NotFittedError
        from sklearn.frozen import FrozenEstimator

        if isinstance(self.estimator, FrozenEstimator):
            return
        try:
            check_is_fitted(self.estimator)
        except (NotFittedError, TypeError):
            return
        warnings.warn(
            f"The {self.estimator.__class__.__name__} given to ClassifierLogits is "
            "already fitted, but ClassifierLogits.fit clones it and fits it again on "
            "the rows it is given (in a Pipeline: the calibration set), and the "
            "calibrator after it then sees in-sample scores. To keep the fitted "
            "classifier and fit only the calibrator, wrap it: "
            "ClassifierLogits(FrozenEstimator(clf)) (from sklearn.frozen import "
            "FrozenEstimator).",
            UserWarning,
            stacklevel=_caller_stacklevel(),
        )

    def _warn_missing_classes(self, y):
        # the next step maps labels to columns by itself: not 0..K-1, it cannot
        classes = self.classes_
        missing = np.setdiff1d(classes, np.asarray(y))
        named = _get_output_config("transform", self)["dense"] != "default"
        if (len(missing) and not named
                and not np.array_equal(classes, np.arange(len(classes)))):
            warnings.warn(
                f"The calibration labels lack the classes {missing[:10].tolist()!r} "
                f"of the classifier, whose columns are the classes "
                f"{classes[:10].tolist()!r}. A calibrator after this step cannot "
                "tell which column is which: give it classes=... (e.g. "
                "TemperatureScaler(classes=clf.classes_)), call the Pipeline's "
                "set_output(transform=\"pandas\") (the columns are then named after "
                "the classes), or use CalibratedClassifier(FrozenEstimator(clf), "
                "...), which does it.",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )

    def transform(self, X):
        """Logits of the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input of the classifier.

        Returns
        -------
        logits : ndarray of shape (n_samples, n_classes) or (n_samples, 1)
            ``decision_function(X)``, or ``log(predict_proba(X))`` with zeros
            clipped to ``finfo(dtype).tiny`` first. One column (the log-odds
            of ``classes_[1]``) for a binary 1-D decision function.

        Raises
        ------
        ValueError
            If the classifier's output does not have one column per class.
        """
        check_is_fitted(self)
        scores = _classifier_scores(
            self.estimator_, X, self.response_method_, len(self.classes_)
        )
        if self.response_method_ == "predict_proba":
            return _log_proba(scores)
        return scores.reshape(-1, 1) if scores.ndim == 1 else scores

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored; the columns are named after ``classes_``.

        Returns
        -------
        feature_names_out : ndarray of str objects
            ``"classifierlogits_<class>"`` for each output column.
        """
        check_is_fitted(self)
        classes = self.classes_[1:] if self._n_output_columns() == 1 else self.classes_
        return np.asarray([f"{CLASSIFIER_LOGITS_PREFIX}{c}" for c in classes], dtype=object)

    def _n_output_columns(self):
        """Number of columns of :meth:`transform` (1 for a binary decision function)."""
        if len(self.classes_) == 2 and self.response_method_ == "decision_function":
            # sklearn's binary decision functions are 1-D.
            return 1
        return len(self.classes_)

    def get_metadata_routing(self):
        """Metadata routing of this object: ``fit`` routes to the classifier's ``fit``.

        Returns
        -------
        routing : MetadataRouter
        """
        return MetadataRouter(owner=self).add(
            estimator=self.estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        est_tags = get_tags(self.estimator)
        tags.input_tags.sparse = est_tags.input_tags.sparse
        tags.input_tags.allow_nan = est_tags.input_tags.allow_nan
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = []
        return tags
