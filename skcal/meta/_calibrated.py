"""Calibrate any scikit-learn classifier with any skcal calibrator.

:class:`CalibratedClassifier` is scikit-learn's
:class:`~sklearn.calibration.CalibratedClassifierCV` with the calibration
method replaced by a calibrator *instance* (``TemperatureScaler()``,
``VectorScaler(alpha=...)``, ``PlattScaler()``, ``IsotonicScaler()``, ...), so
that model selection can search the calibrator itself and its
hyper-parameters (``calibrator__<param>``).
"""

import warnings
from inspect import signature
from numbers import Integral

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    _fit_context,
    clone,
)
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import LeaveOneOut, check_cv
from sklearn.svm import LinearSVC
from sklearn.utils import _safe_indexing, get_tags, indexable
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import (
    _check_method_params,
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from .._backend import _numpy
from .._backend._ovr import log_or_neg_inf
from ._logits import (
    _classifier_scores,
    _log_proba,
    _refuse_calibrator,
    _resolve_response_method,
)
from ..scaling._temperature import TemperatureScaler
from ..utils._docstrings import substitute_docstring
from ..utils._labels import check_no_missing_labels, encode_labels as _encode_with
from ..utils._pickle import VersionedPickleMixin
from ..utils._params import store_params
from ..utils.validation import _caller_stacklevel

__all__ = ["CalibratedClassifier"]


class _CalibratedPair:
    """A fitted classifier and its calibrator (fitted on its ``response_method``).

    ``log_input``: the calibrator takes ``log(predict_proba)`` (it has no
    ``input_type``); ``columns``: the positions in the meta-estimator's
    ``classes_`` (of ``n_classes``) of the classes this pair knows (a training
    fold may lack some; None: all).
    """

    def __init__(
        self, estimator, calibrator, response_method, log_input=False, columns=None,
        n_classes=None,
    ):
        self.estimator = estimator
        self.calibrator = calibrator
        self.response_method = response_method
        self.log_input = log_input
        self.columns = columns
        self.n_classes = n_classes

    def predict_proba(self, X):
        """Calibrated probabilities of shape (n_samples, n_classes), float64."""
        scores = _classifier_scores(
            self.estimator, X, self.response_method, len(self.estimator.classes_)
        )
        scores = _log_proba(scores) if self.log_input else scores
        P = np.asarray(self.calibrator.predict_proba(scores), dtype=np.float64)
        if self.columns is None:
            return P
        # classes absent from this pair's training fold get probability 0
        out = np.zeros((P.shape[0], self.n_classes))
        out[:, self.columns] = P
        return out


def _fit_fold(estimator, X, y, train, test, fit_params, response_method):
    """Fit ``estimator`` on ``train`` and return it with its scores on ``test``."""
    params_train = _check_method_params(X, params=fit_params, indices=train)
    estimator.fit(_safe_indexing(X, train), _safe_indexing(y, train), **params_train)
    return estimator, _classifier_scores(
        estimator, _safe_indexing(X, test), response_method, len(estimator.classes_))


class CalibratedClassifier(
    VersionedPickleMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator
):
    """Probability calibration of a classifier with a skcal calibrator.

    The classifier's scores (its ``decision_function`` when it has one, else
    its ``predict_proba``) are mapped to calibrated probabilities by a skcal
    calibrator fitted on data the classifier was not trained on:

    - With cross-validation (the default), each fold fits a clone of
      ``estimator`` on the training part and gives its out-of-fold scores on
      the test part.
    - With a pre-fitted classifier wrapped in
      :class:`~sklearn.frozen.FrozenEstimator` (and the default
      ``ensemble="auto"``), the classifier is not refitted: all of ``X`` is
      the calibration set, and ``cv`` is not used. The user must make sure
      that the classifier was trained on other data.

    Parameters
    ----------
    estimator : classifier, default=None
        The classifier to calibrate. It needs ``fit`` and
        ``decision_function`` or ``predict_proba``. ``None`` means
        ``LinearSVC(random_state=0)``, as in scikit-learn.
    calibrator : skcal calibrator, default=None
        An unfitted calibrator instance, cloned for every fit; ``None`` means
        :class:`~skcal.TemperatureScaler`. Its ``input_type`` is set to
        ``"logits"`` for a ``decision_function`` and ``"probabilities"`` for
        ``predict_proba``, and its ``classes`` to ``classes_``; its other
        parameters are kept (and searchable as ``calibrator__<param>``). A
        binary 1-D decision function goes to the calibrator's binary path (the
        log-odds of ``classes_[1]``).
    cv : int, cross-validation generator or iterable, default=None
        Cross-validation splitting, as in scikit-learn: ``None`` for 5-fold,
        an integer for that many folds (stratified for classification), a
        cross-validation splitter, or an iterable of (train, test) index arrays.
        Not used for a ``FrozenEstimator`` with ``ensemble=False``.
    ensemble : bool or "auto", default="auto"
        - ``True``: one (classifier, calibrator) pair per fold, the classifier
          fitted on the training part and the calibrator on the test part;
          ``predict_proba`` averages the pairs' probabilities.
        - ``False``: one calibrator fitted on the out-of-fold scores of all
          samples; the classifier used for prediction is refitted on all the
          data (a ``FrozenEstimator`` is used as it is).
        - ``"auto"``: ``False`` for a ``FrozenEstimator``, ``True`` otherwise.
    n_jobs : int, default=None
        Number of folds fitted in parallel (joblib). ``None`` means 1 unless
        in a :func:`joblib.parallel_backend` context; ``-1`` all processors.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels (sorted unique labels of ``y``).
    calibrated_classifiers_ : list
        The fitted pairs: one per fold with ``ensemble=True``, else one. Each
        has attributes ``estimator`` (fitted classifier), ``calibrator``
        (fitted calibrator) and ``response_method``, and a ``predict_proba``
        method.
    response_method_ : {"decision_function", "predict_proba"}
        The classifier method whose output is calibrated.
    n_features_in_ : int
        Number of features seen by the classifier, when it defines it.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Feature names seen by the classifier, when it defines them.

    See Also
    --------
    skcal.ClassifierLogits : Pipeline step giving a classifier's logits, to
        calibrate a fitted model with ``make_pipeline``.
    sklearn.calibration.CalibratedClassifierCV : The scikit-learn estimator
        that this one generalises (method given as a string).

    Notes
    -----
    With ``F`` folds, classifiers ``f_1..f_F`` and calibrators
    ``g_1..g_F``, ``ensemble=True`` predicts
    ``p(x) = (1/F) sum_k g_k(s_k(x))``, where ``s_k`` is the response of
    ``f_k``; each ``g_k`` is fitted on ``{(s_k(x_i), y_i) : i in test_k}``.
    ``ensemble=False`` predicts ``g(s(x))`` with ``s`` the response of the
    classifier refitted on all data and ``g`` fitted on the out-of-fold
    responses ``{(s_{k(i)}(x_i), y_i)}``, where ``k(i)`` is the fold whose
    test part holds sample ``i`` (the test parts must then partition the
    samples).

    ``sample_weight`` is used by the calibrator and, when the classifier's
    ``fit`` accepts it, by the classifier. With metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``) the calibrator
    always receives it and the classifier only when it requested it
    (``estimator.set_fit_request(sample_weight=True)``); other fit parameters
    and the splitter's ``groups`` are routed in the same way.

    Unlike scikit-learn classifiers, :meth:`score` is the mean log-likelihood
    (as for every skcal calibrator), a strictly proper scoring rule, so that
    ``GridSearchCV`` without ``scoring`` selects the best-calibrated model.

    References
    ----------
    J. Platt, "Probabilistic Outputs for Support Vector Machines and
    Comparisons to Regularized Likelihood Methods", Advances in Large Margin
    Classifiers, MIT Press, 1999.

    B. Zadrozny and C. Elkan, "Transforming Classifier Scores into Accurate
    Multiclass Probability Estimates", KDD 2002.

    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
    Neural Networks", ICML 2017.

    scikit-learn User Guide, "Probability calibration",
    https://scikit-learn.org/stable/modules/calibration.html

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skcal import CalibratedClassifier, TemperatureScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = CalibratedClassifier(GaussianNB(), TemperatureScaler(), cv=3)
    >>> model = model.fit(X, y)
    >>> len(model.calibrated_classifiers_)
    3
    >>> model.predict_proba(X[:2]).shape
    (2, 2)

    A pre-fitted classifier is calibrated without refitting:

    >>> from sklearn.frozen import FrozenEstimator
    >>> clf = GaussianNB().fit(X[:300], y[:300])
    >>> model = CalibratedClassifier(FrozenEstimator(clf)).fit(X[300:], y[300:])
    >>> len(model.calibrated_classifiers_)
    1
    """

    _parameter_constraints: dict = {
        "estimator": [
            HasMethods(["fit", "predict_proba"]),
            HasMethods(["fit", "decision_function"]),
            None,
        ],
        "calibrator": [HasMethods(["fit", "predict_proba"]), None],
        "cv": ["cv_object"],
        "ensemble": ["boolean", StrOptions({"auto"})],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self, estimator=None, calibrator=None, *, cv=None, ensemble="auto", n_jobs=None
    ):
        store_params(self, locals())

    def _get_estimator(self):
        if self.estimator is None:
            estimator = LinearSVC(random_state=0)
            if _routing_enabled():
                estimator.set_fit_request(sample_weight=True)
            return estimator
        _refuse_calibrator(
            self.estimator, "CalibratedClassifier",
            "pass the classifier as estimator and the calibrator as calibrator, e.g. "
            "CalibratedClassifier(LogisticRegression(), calibrator={inner!r}) "
            "(calibrate logits you already have by fitting the calibrator itself)")
        return self.estimator

    def _get_calibrator(self):
        return TemperatureScaler() if self.calibrator is None else self.calibrator

    def _fit_calibrated_pair(self, estimator, scores, y, sample_weight, partial=False):
        """``estimator`` with a clone of the calibrator fitted on its ``scores``.

        The clone's ``input_type`` follows ``response_method_`` (one without
        ``input_type`` is given log-probabilities) and its ``classes`` are
        ``classes_``. A fold classifier lacking some classes (``partial``,
        ensemble=True) is handled as in scikit-learn's
        ``CalibratedClassifierCV``: the calibrator is told the fold
        classifier's classes only, the test rows of other classes are left
        out, and the pair gives the missing classes probability 0; None when
        no row remains (the fold is left out).
        """
        classes, columns = self.classes_, None
        if not self._same_classes(estimator):
            if not partial:
                raise ValueError(
                    f"The classifier {estimator.__class__.__name__} has classes_ "
                    f"{np.asarray(estimator.classes_)[:10].tolist()!r} but y has "
                    f"classes {np.asarray(self.classes_)[:10].tolist()!r}. Every class "
                    "must be in every training fold (use a stratified cv) and, for a "
                    "FrozenEstimator, the calibration labels must be classes of the "
                    "fitted classifier."
                )
            classes = np.asarray(estimator.classes_)
            keep = np.isin(y, classes)
            columns = self._fold_columns(
                classes, f": its classifier gives them probability 0, and its "
                f"{int((~keep).sum())} calibration rows of those classes are left out "
                "of its calibrator.")
            y = np.asarray(y)[keep]
            if not keep.any() or (
                "classes" not in self._get_calibrator().get_params(deep=False)
                and len(np.unique(y)) < 2
            ):
                return None  # nothing left to calibrate this fold's classifier on
            scores = np.asarray(scores)[keep]
            sample_weight = None if sample_weight is None else sample_weight[keep]
        calibrator = clone(self._get_calibrator())
        params = calibrator.get_params(deep=False)
        proba = self.response_method_ == "predict_proba"
        updates = {"input_type": "probabilities" if proba else "logits",
                   "classes": classes}
        calibrator.set_params(**{k: v for k, v in updates.items() if k in params})
        log_input = proba and "input_type" not in params
        calibrator.fit(
            _log_proba(scores) if log_input else scores, y, sample_weight=sample_weight
        )
        return _CalibratedPair(
            estimator, calibrator, self.response_method_, log_input, columns=columns,
            n_classes=None if columns is None else len(self.classes_),
        )

    def _same_classes(self, estimator):
        return bool(np.array_equal(estimator.classes_, self.classes_))

    def _fold_columns(self, est_classes, effect):
        """Columns of ``est_classes`` in ``classes_``; warns of those a fold lacks."""
        missing = np.setdiff1d(self.classes_, est_classes)
        warnings.warn(
            f"A training fold lacks the classes {missing[:10].tolist()!r}{effect} Use "
            "a stratified cv to avoid this.", UserWarning,
            stacklevel=_caller_stacklevel())
        return _encode_with(self.classes_, est_classes)

    @_fit_context(
        # estimator and calibrator are validated by their own fit
        prefer_skip_nested_validation=False
    )
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the classifier(s) and the calibrator(s).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, in the form the classifier accepts. For a
            ``FrozenEstimator``: the calibration set.
        y : array-like of shape (n_samples,)
            Target labels (any labels scikit-learn accepts, e.g. strings).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative sample weights, used by the calibrator and (see
            Notes) by the classifier.
        **fit_params : dict
            Passed to the classifier's ``fit`` (with metadata routing: routed
            to the classifier and the splitter as they request).

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``estimator`` is a skcal calibrator (a calibrator maps logits,
            not features), ``y`` has fewer than 2 classes, a class has fewer samples than
            the number of folds, ``cv`` is ``LeaveOneOut``, a training fold
            misses a class, or (with ``ensemble=False``) the test folds do not
            partition the samples.
        AttributeError
            If the classifier has neither ``decision_function`` nor
            ``predict_proba``.
        """
        y_values = np.asarray(y)
        if y_values.ndim == 1:  # None / NaN among object labels: not a sort error
            check_no_missing_labels(y_values)
        check_classification_targets(y)
        X, y = indexable(X, y)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        estimator = self._get_estimator()
        frozen = isinstance(estimator, FrozenEstimator)
        ensemble = (not frozen) if self.ensemble == "auto" else bool(self.ensemble)

        if len(y) == 0:
            raise ValueError(
                "Found array with 0 sample(s); fit needs at least 2 classes."
            )
        self.classes_ = np.unique(y)
        if frozen and not ensemble and hasattr(estimator, "classes_"):
            # A pre-fitted classifier fixes the classes (and their columns); a
            # calibration set may lack some of them (the calibrator warns).
            est_classes = np.asarray(estimator.classes_)
            try:
                _encode_with(est_classes, y)
            except ValueError as exc:
                raise ValueError(
                    f"The calibration labels must be classes of the fitted classifier "
                    f"(classes_ {est_classes[:10].tolist()!r}): {exc}"
                ) from exc
            self.classes_ = est_classes
        if len(np.unique(y)) < 2:
            raise ValueError(
                f"y has 1 class ({self.classes_[:1].tolist()[0]!r}); calibration needs at least "
                "2 classes."
            )
        self.response_method_ = _resolve_response_method(estimator, "auto")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)

        if _routing_enabled():
            routed = process_routing(
                self, "fit", sample_weight=sample_weight, **fit_params
            )
            est_params, split_params = routed.estimator.fit, routed.splitter.split
        else:
            est_params, split_params = dict(fit_params), {}
            if sample_weight is not None and not frozen:
                if "sample_weight" in signature(estimator.fit).parameters:
                    est_params["sample_weight"] = sample_weight
                else:
                    warnings.warn(
                        f"{estimator.__class__.__name__}.fit does not accept "
                        "sample_weight; the weights are used by the calibrator only.",
                        UserWarning,
                        stacklevel=_caller_stacklevel(),
                    )

        if frozen and not ensemble:
            scores = _classifier_scores(
                estimator, X, self.response_method_, len(estimator.classes_)
            )
            pairs = [self._fit_calibrated_pair(estimator, scores, y, sample_weight)]
        else:
            pairs = self._fit_cv(
                estimator, X, y, sample_weight, est_params, split_params, ensemble
            )
        self.calibrated_classifiers_ = pairs

        first = pairs[0].estimator
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(first, attr):
                setattr(self, attr, getattr(first, attr))
        return self

    def _fit_cv(
        self, estimator, X, y, sample_weight, est_params, split_params, ensemble
    ):
        if isinstance(self.cv, LeaveOneOut):
            raise ValueError(
                "LeaveOneOut cross-validation leaves a single sample, hence a single "
                "class, in each test fold; use e.g. StratifiedKFold."
            )
        n_folds = self.cv if isinstance(self.cv, Integral) else getattr(
            self.cv, "n_splits", None)
        if n_folds:
            _, counts = np.unique(y, return_counts=True)
            if np.any(counts < n_folds):
                raise ValueError(
                    f"Requesting {n_folds}-fold cross-validation but the least "
                    f"populated class in y has only {counts.min()} samples."
                )
        cv = check_cv(self.cv, y, classifier=True)
        splits = list(cv.split(X, y, **split_params))
        folds = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_fold)(
                clone(estimator), X, y, train, test, est_params, self.response_method_
            )
            for train, test in splits
        )
        if ensemble:
            pairs = [self._fit_calibrated_pair(
                est, scores, _safe_indexing(y, test),
                None if sample_weight is None else sample_weight[test], partial=True,
            ) for (est, scores), (_, test) in zip(folds, splits)]
            pairs = [p for p in pairs if p is not None]
            if not pairs:
                raise ValueError(
                    "No fold could be calibrated: every training fold lacks classes "
                    "that make up its test fold. Use a stratified (or shuffled) cv."
                )
            return pairs
        test_idx = np.concatenate([test for _, test in splits])
        if not np.array_equal(np.sort(test_idx), np.arange(len(y))):
            raise ValueError(
                "ensemble=False needs out-of-fold scores for every sample: the test "
                "parts of cv must partition the samples (each sample in exactly one "
                "test fold)."
            )
        scores = [self._full_scores(est, s) for est, s in folds]
        # row i of the stacked test folds is sample test_idx[i]
        oof = np.concatenate(scores).astype(scores[0].dtype, copy=False)
        final = clone(estimator)
        final.fit(X, y, **est_params)  # (a fit need not return self)
        return [self._fit_calibrated_pair(
            final, oof[np.argsort(test_idx)], y, sample_weight)]

    def _full_scores(self, estimator, scores):
        """Out-of-fold scores with one column per class of ``classes_``.

        As :func:`sklearn.model_selection.cross_val_predict`, a fold's absent
        classes get (with a warning) probability 0 or a score below all of
        the fold's (its minimum minus 100 times its range, plus 100).
        """
        if self._same_classes(estimator):
            return scores
        est_classes = np.asarray(estimator.classes_)
        scores = np.asarray(scores)
        if scores.ndim == 1 and len(est_classes) == 2:
            # a binary decision function: the log-odds of est_classes[1]
            scores = np.column_stack([np.zeros_like(scores), scores])
        if len(est_classes) < 2 or scores.ndim != 2 or len(self.classes_) < 3:
            raise ValueError(
                f"The classifier {estimator.__class__.__name__} of a training fold "
                f"has classes_ {est_classes[:10].tolist()!r} but y has classes "
                f"{self.classes_[:10].tolist()!r}; use a stratified cv."
            )
        proba = self.response_method_ == "predict_proba"
        columns = self._fold_columns(est_classes, "; its out-of-fold scores give them "
                                     + ("probability 0." if proba
                                        else "a score below all others."))
        lo, hi = float(scores.min()), float(scores.max())
        fill = 0.0 if proba else lo - 100.0 * (hi - lo) - 100.0
        out = np.full((scores.shape[0], len(self.classes_)), fill, dtype=np.float64)
        out[:, columns] = scores
        return out

    def predict_proba(self, X):
        """Calibrated class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples, in the form the classifier accepts.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), float64
            The mean of the calibrated probabilities of the fitted pairs;
            column ``j`` is ``classes_[j]``. Rows sum to 1.
        """
        check_is_fitted(self)
        pairs = self.calibrated_classifiers_
        return sum(pair.predict_proba(X) for pair in pairs) / len(pairs)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` for a zero probability).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes), float64
        """
        return log_or_neg_inf(self.predict_proba(X))

    def predict(self, X):
        """Most probable class after calibration.

        This may differ from the classifier's own prediction (for instance
        with vector scaling or an ensemble of folds).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Entries of ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    @substitute_docstring
    def score(self, X, y, sample_weight=None):
        """Mean log-likelihood of the true labels (higher is better).

        This is ``-log_loss`` without clipping, the same score as every skcal
        calibrator, so that ``GridSearchCV`` without ``scoring`` prefers the
        best-calibrated model. Use ``scoring="accuracy"`` for accuracy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        %(score_y_returns)s

        Raises
        ------
        ValueError
            If ``y`` holds labels not in ``classes_`` or its length differs
            from the number of samples.
        """
        LP = self.predict_log_proba(X)
        y = column_or_1d(y, warn=True)
        check_consistent_length(LP, y)
        y_enc = _encode_with(self.classes_, y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, LP, dtype=np.float64)
        return _numpy.mean_log_likelihood(LP, y_enc, sample_weight)

    def get_metadata_routing(self):
        """Metadata routing of this object.

        ``fit`` consumes ``sample_weight`` itself (for the calibrator), routes
        to the classifier's ``fit`` what it requests, and to the splitter's
        ``split`` (e.g. ``groups``).

        Returns
        -------
        routing : MetadataRouter
        """
        return (
            MetadataRouter(owner=self)
            .add_self_request(self)
            .add(
                estimator=self._get_estimator(),
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
            .add(
                splitter=self.cv,
                method_mapping=MethodMapping().add(caller="fit", callee="split"),
            )
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        est_tags = get_tags(self._get_estimator())
        tags.input_tags.sparse = est_tags.input_tags.sparse
        tags.input_tags.allow_nan = est_tags.input_tags.allow_nan
        return tags
