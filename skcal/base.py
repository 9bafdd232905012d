"""The shared base class of every skcal calibrator.

:class:`BaseCalibrator` validates input once (logits or probabilities, labels,
sample weights), chooses the backend, and implements ``fit``,
``predict_proba``, ``predict_log_proba``, ``predict``, ``transform`` and
``score``. A calibration method only implements private hooks:

- ``_fit(Z, y, sample_weight, xp)``: learn the map from logits ``Z`` of shape
  (n_samples, n_classes) and encoded labels ``y`` (int64 in ``0..K-1``);
- ``_predict_log_proba(Z, xp)`` *or* ``_predict_proba(Z, xp)``: calibrated
  log-probabilities or probabilities of shape (n_samples, n_classes).

``xp`` is the kernel module (``skcal._backend._numpy``, ``_torch``, or
``_dask`` for a ``dask.array.Array``, whose kernels run the NumPy ones per row
block and reduce their sums; see the dask user guide).
"""

import warnings
from contextlib import nullcontext
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_feature_names_in,
    _get_feature_names,
    check_is_fitted,
    validate_data,
)

from .utils._labels import (
    _listed,
    are_classifier_logits_columns,
    check_named_columns_have_labels,
    check_no_missing_labels,
    classes_from_column_names,
    encode_labels,
    resolve_classes,
    warn_labels_in_sorted_order,
)
from ._backend._ovr import log_or_neg_inf
from ._backend._array import like_input, to_backend
from ._backend import _numpy
from ._backend._dispatch import get_backend
from .utils._docstrings import substitute_docstring
from .utils._pickle import VersionedPickleMixin
from .utils.validation import (
    _caller_stacklevel,
    DEFAULT_INPUT_TYPE,
    PREDICT_PROBABILITY_CHECK_ROWS,
    check_sample_weight,
    check_scores,
    deferred_range_check,
)
from .utils._params import rename_inherited_init, store_params

__all__ = ["BaseCalibrator"]

#: ``_parameter_constraints`` of an iterative fit's ``tol`` (> 0) and
#: ``max_iter`` (>= 1), shared by the calibrators that have them.
SOLVER_CONSTRAINTS = {
    "tol": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
}


def _warn_text_labels_in_sorted_order(est, classes, names):
    """Warn when text labels naming no column were matched to the columns in sorted order.

    The rule of ``skcal fit``: ``classes=None``, two or more logit columns
    (not a binary 1-D score) and labels that are not numbers.
    """
    classes = np.asarray(classes)
    if est.classes is not None or est.n_features_in_ < 2 or len(classes) < 2 \
            or classes.dtype.kind not in "OUS" \
            or all(isinstance(c, (int, np.integer)) for c in classes.tolist()):
        return
    owner = est.__class__.__name__
    warn_labels_in_sorted_order(
        classes, None if names is None else [str(c) for c in names],
        remedy=(
            f"if the columns are in another order, pass {owner}(classes=[...]) "
            "with the label of each column (or a DataFrame whose columns are named "
            "after the labels; after ClassifierLogits in a Pipeline, "
            "set_output(transform=\"pandas\") names them)"
        ),
        # the first frame outside skcal (the fit path's depth differs by backend)
        stacklevel=_caller_stacklevel() + 1,
    )


def _integer_column_names(X):
    """The column names of a DataFrame when they are all integers (not bool), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "iloc"):
        return None
    names = list(columns)
    if not names or not all(
        isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_))
        for c in names
    ):
        return None
    return [int(c) for c in names]


def _check_integer_column_names(est, names, X=None):
    """Refuse a DataFrame whose integer column names differ from those seen in fit.

    The integer-name twin of scikit-learn's feature-name check: the columns
    were matched to the classes by name in fit, so a reordered frame would
    otherwise be read by position. When fit saw no column names, the same
    rule holds for a frame ``X`` whose names (ints, or text equal to
    ``str(class)``) are the classes in another order than fit's columns.
    """
    fitted = getattr(est, "_integer_column_names_", None)
    columns = getattr(X, "columns", None)
    if fitted is None and columns is not None and hasattr(est, "classes_") \
            and getattr(est, "feature_names_in_", None) is None:
        # fit saw an array: its columns are the classes in this order
        fitted = np.asarray(est._classes_in_input_order()).tolist()
        names = np.asarray(list(columns), dtype=object).tolist()
        by_text = {str(c): c for c in names}
        if [str(c) for c in names] == [str(c) for c in fitted] \
                or sorted(by_text) != sorted(map(str, fitted)):
            return  # fit's order, or names that are not the classes: by position
        select = [by_text[str(c)] for c in fitted]
        raise ValueError(
            f"The column names of X {names[:20]!r} are the classes in another order "
            f"than fit's columns {fitted[:20]!r}; {est.__class__.__name__} was "
            "fitted without column names and reads the columns by position, so "
            f"reorder the columns of X as in fit (X[{select[:20]!r}]) or fit on a "
            f"DataFrame to have them matched by name."
        )
    if fitted is None or names is None or names == fitted:
        return
    what = (
        "the names seen in fit in another order" if sorted(names) == sorted(fitted)
        else "not the names seen in fit"
    )
    raise ValueError(
        f"The integer column names of X {names[:20]!r} are {what} "
        f"{fitted[:20]!r}; {est.__class__.__name__} matched the columns to the "
        f"classes by name, so select the columns as in fit (X[{fitted[:20]!r}])."
    )


def _warn_unnamed_columns(est, X):
    """Warn when X has no column names but fit's DataFrame named its columns.

    scikit-learn's "X does not have valid feature names" warning, also for
    integer column names (which it does not record), saying how the columns
    are then read: by position, in fit's column order.
    """
    fitted = getattr(est, "feature_names_in_", None)
    kind = "feature names"
    if fitted is None:
        fitted = getattr(est, "_integer_column_names_", None)
        kind = "integer column names"
    if fitted is None or _get_feature_names(X) is not None:
        return
    fitted = list(fitted)
    shown = ", ".join(repr(c) if isinstance(c, str) else str(c) for c in fitted[:10])
    if len(fitted) > 10:
        shown += f", ... ({len(fitted)} in all)"
    warnings.warn(
        f"X does not have valid feature names, but {est.__class__.__name__} was "
        f"fitted with {kind}: the columns of X are read by position, in fit's "
        f"column order [{shown}]. Pass a DataFrame with those column names to "
        f"have them matched by name.",
        UserWarning,
        stacklevel=_caller_stacklevel(),
    )


@substitute_docstring
class BaseCalibrator(
    VersionedPickleMixin, ClassifierMixin, TransformerMixin, BaseEstimator
):
    """Base class for calibrators: a classifier over logits and a transformer.

    Subclasses spell out their whole ``__init__`` signature (scikit-learn's
    ``get_params`` reads it; one with exactly the parameters of a base class
    inherits its ``__init__``), whose body only stores the arguments,
    ``store_params(self, locals())`` (:mod:`skcal.utils._params`); they
    implement ``_fit`` and ``_predict_log_proba`` or ``_predict_proba``.

    Parameters
    ----------
    %(calibrator_params)s

    Notes
    -----
    ``classes_`` is sorted (``np.unique(y)``, as scikit-learn's scorers
    assume) and every output has its columns in ``classes_`` order. By
    default column ``j`` of ``X`` belongs to ``classes_[j]``; the columns of a
    DataFrame named after the labels of ``y`` (compared as text) are matched
    by name, and ``classes=`` names the columns of an array in their order
    (the input is reordered into ``classes_`` order in fit and predict).
    ``transform`` returns the calibrated log-probabilities (normalised
    calibrated logits, for any estimator taking logits). ``score`` is the mean
    log-likelihood of the true labels, a strictly proper scoring rule, so
    that ``GridSearchCV`` without ``scoring`` picks the best-calibrated model.
    """

    _parameter_constraints: dict = {
        "input_type": [StrOptions({"logits", "probabilities"})],
        "classes": ["array-like", None],
        "backend": [StrOptions({"auto", "numpy", "torch"})],
    }

    #: Whether ``_fit`` runs on dask arrays (it reaches the data only through
    #: ``xp`` or the one-vs-rest gather rule); others refuse a dask ``X`` in
    #: ``fit`` (their predictions still run blockwise).
    _dask_fit = False

    #: Whether a binary map depends on the logits only through the log-odds
    #: ``z_1 - z_0``: then a calibrator fitted on two columns accepts the 1-D
    #: log-odds at predict time and the other way round (same answer). Maps
    #: with parameters per column (vector scaling) reject the switch.
    _binary_log_odds_only = False

    #: Whether the calibration map keeps the order of each row's logits (a
    #: strictly increasing function applied to the whole row, e.g. a positive
    #: temperature). Then ``predict`` is the argmax of the input itself: the
    #: argmax of rounded probabilities may differ where logits nearly tie.
    _preserves_order = False

    #: Whether the predictions on a torch tensor sweep every row chunk through
    #: the backend's ``softmax`` / ``log_softmax`` kernels, which then check the
    #: input's range on the chunks they read (see ``deferred_range_check``).
    _predict_checks_range = False

    #: Whether ``fit`` refuses logits whose largest magnitude is positive but
    #: below ``1 / max_abs_logit(dtype)`` (``check_scores(check_underflow=True)``):
    #: the whole-vector fits, whose curvature underflows there.
    _refuses_underflowing_logits = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        rename_inherited_init(cls)  # its own name in an unexpected keyword's TypeError

    def __init__(self, *, input_type=DEFAULT_INPUT_TYPE, classes=None, backend="auto"):
        store_params(self, locals())

    def _validate_X(self, X, *, reset):
        """Validated logits of ``X``; after ``fit``, their columns in ``classes_`` order."""
        Z = self._check_input(X, reset=reset)
        return Z if reset else self._sort_columns(Z)

    def _sort_columns(self, Z):
        """The columns of validated ``Z`` in ``classes_`` order (``_column_order_``).

        Extra columns after the class logits (``LocalTemperatureScaler``'s
        features) keep their place.
        """
        order = getattr(self, "_column_order_", None)
        if order is None:
            return Z
        K = len(order)
        idx = order if Z.shape[1] == K else np.r_[order, np.arange(K, Z.shape[1])]
        return get_backend(Z).take_columns(Z, idx)

    def _sort_classes(self):
        """Sort ``classes_`` as ``np.unique`` does; record the input column of each class.

        Returns the position in the sorted ``classes_`` of each class in input
        column order (None when they agree), to re-encode labels encoded as
        input columns.
        """
        classes = np.asarray(self.classes_)
        order = np.argsort(classes, kind="stable")
        if (order == np.arange(len(order))).all():
            self._column_order_ = None
            return None
        self.classes_ = classes[order]
        self._column_order_ = order
        return np.argsort(order)  # the inverse permutation

    def _classes_in_input_order(self):
        """``classes_`` in the order of the input columns (the ``classes`` to refit with)."""
        order = getattr(self, "_column_order_", None)
        return self.classes_ if order is None else self.classes_[np.argsort(order)]

    def _check_input(self, X, *, reset):
        # Column names of a DataFrame are the classes' names: record them in
        # fit (feature_names_in_) and reject reordered or renamed columns
        # later, as scikit-learn does (only the name check runs here).
        with warnings.catch_warnings():
            # replaced by _warn_unnamed_columns, which says how X is then read
            warnings.filterwarnings(
                "ignore", message="X does not have valid feature names",
                category=UserWarning,
            )
            validate_data(self, X, reset=reset, skip_check_array=True, ensure_2d=False)
        # integer column names: scikit-learn records only text ones
        int_names = _integer_column_names(X)
        if reset:
            self._integer_column_names_ = int_names
        else:
            _check_integer_column_names(self, int_names, X)
            if int_names is None:
                _warn_unnamed_columns(self, X)
        # input that looks like probabilities is reported in fit (every row)
        # and at predict time (the first rows: no pass over a large input)
        Z, n_cols = check_scores(
            X,
            input_type=self.input_type,
            warn_probabilities=True if reset else PREDICT_PROBABILITY_CHECK_ROWS,
            check_underflow=reset and self._refuses_underflowing_logits,
        )
        if reset:
            self.n_features_in_ = n_cols
        else:
            n_classes = len(self.classes_)
            switch = Z.shape[1] == n_classes and n_cols != self.n_features_in_
            if Z.shape[1] != n_classes or (switch and not self._binary_log_odds_only):
                fitted = (
                    "a 1-D binary score" if self.n_features_in_ == 1
                    else f"{self.n_features_in_} columns"
                )
                hint = f"Reshape your data to (n_samples, {n_classes})"
                if n_classes == 2 and self._binary_log_odds_only:
                    hint += " or pass a 1-D score vector (the log-odds)."
                elif n_classes == 2 and self.n_features_in_ == 1:
                    hint = "Pass a 1-D score vector, as in fit."
                elif n_classes == 2:
                    hint += (
                        f"; {self.__class__.__name__} has parameters per column, so "
                        "a 1-D score (the log-odds) would be calibrated differently."
                    )
                else:
                    hint += "."
                if n_classes > 2 and n_cols == 1 and np.ndim(X) == 1:
                    # scikit-learn's wording for a 1-D X where 2-D is expected
                    raise ValueError(
                        f"Expected 2D array, got 1D array instead: X has shape "
                        f"({Z.shape[0]},), but {self.__class__.__name__} is "
                        f"expecting {self.n_features_in_} features as input (fitted "
                        f"for {n_classes} classes) and reads a 1-D X as one binary "
                        f"score per row. Reshape "
                        f"your data using X.reshape(1, -1) if it holds the logits "
                        f"of a single sample, or pass shape (n_samples, "
                        f"{self.n_features_in_})."
                    )
                raise ValueError(
                    f"X has {n_cols} features, but {self.__class__.__name__} is "
                    f"expecting {self.n_features_in_} features as input: it was "
                    f"fitted on {fitted} for {n_classes} classes "
                    f"{self.classes_[:10].tolist()!r}. {hint}"
                )
        return Z

    def _labels_1d(self, y, n_samples, xp):
        """``xp.labels_1d(y)``, refusing a missing ``y``, missing labels or another length."""
        if y is None:
            raise ValueError(
                f"{self.__class__.__name__} requires y to be passed, but the target y "
                "is None."
            )
        y = xp.labels_1d(y)
        if y.shape[0] != n_samples:
            raise ValueError(
                f"X and y have different numbers of samples: {n_samples} and "
                f"{y.shape[0]}."
            )
        check_no_missing_labels(y)  # None / NaN among object labels (NumPy y)
        return y

    def _encode_y(self, y, n_columns, n_samples):
        y_np = self._labels_1d(y, n_samples, _numpy)
        # 1-D integer or boolean labels are always "binary" / "multiclass" for
        # scikit-learn's type_of_target: its np.unique pass (a sort-sized cost
        # per fit) can only end in the ignored warning below
        if not (isinstance(y_np, np.ndarray) and y_np.dtype.kind in "iub"):
            with warnings.catch_warnings():
                # the classes are the columns of X: many classes for few rows (a
                # 1,000-class head on a small calibration set) is not a regression
                warnings.filterwarnings("ignore", message="The number of unique classes")
                check_classification_targets(y_np)
        # A DataFrame whose column names are the labels is matched by name.
        names = text_names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = getattr(self, "_integer_column_names_", None)
            if names is not None and len(names) != n_columns:
                names = None  # extra feature columns: matched by position
        classes = classes_from_column_names(names, y_np, self.classes)
        by_name = classes is not None
        try:
            classes, y_enc, missing = resolve_classes(
                y_np, n_columns, classes, owner=self.__class__.__name__
            )
        except ValueError as exc:
            if getattr(self, "n_features_in_", None) != 1 or "distinct" not in str(exc):
                raise
            labels = np.unique(y_np)  # a 1-D X is one binary score: 2 columns it has not
            raise ValueError(
                f"X holds one score per row (a 1-D or one-column X): the log-odds "
                f"of the second of 2 classes, but y has {len(labels)} distinct labels "
                f"{_listed(labels)}. Pass the logits of shape (n_samples, n_classes) "
                f"for more classes."
            ) from exc
        if not by_name:
            _warn_text_labels_in_sorted_order(self, classes, names)
        if len(missing) and self.classes is None and text_names is not None \
                and len(text_names) == n_columns \
                and not are_classifier_logits_columns(list(text_names)):
            # a named column that no label selects: the rule of ``skcal fit``
            # (ClassifierLogits' columns are all class logits: a class is absent)
            check_named_columns_have_labels(
                [str(nm) for nm in text_names], classes, ~np.isin(classes, missing),
                skip="drop it from X (e.g. X.drop(columns=[{column!r}]))",
                declare=(
                    f"pass {self.__class__.__name__}(classes=[...]) with the class of "
                    "every column"
                ),
            )
        self._set_classes(classes, missing)
        return np.asarray(y_enc, dtype=np.int64)

    def _set_classes(self, classes, missing):
        if len(missing):
            warnings.warn(
                f"Classes {np.asarray(missing)[:10].tolist()!r} never occur in the "
                "calibration set; their columns are calibrated without examples.",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )
        self.classes_ = classes

    def _encode_y_dask(self, y, Z, xp):
        """Classes from the unique labels (one pass over ``y``); lazy encoded labels."""
        y = self._labels_1d(y, Z.shape[0], xp)
        uniq = xp.unique_labels(y)
        with warnings.catch_warnings():
            # judged on the unique labels only: not "more classes than half the rows"
            warnings.filterwarnings("ignore", message="The number of unique classes")
            check_classification_targets(uniq)
        classes, _, missing = resolve_classes(
            uniq, Z.shape[1], self.classes, owner=self.__class__.__name__
        )
        _warn_text_labels_in_sorted_order(self, classes, None)
        self._set_classes(classes, missing)
        self._sort_classes()
        return xp.encode_labels(y, self.classes_, Z, encode=encode_labels)

    def _prepare(self, Z):
        """Move validated logits to the compute backend; return (Z, xp)."""
        xp = get_backend(Z, self.backend)
        return to_backend(Z, xp), xp

    def fit(self, X, y, sample_weight=None):
        """Fit the calibration map on a calibration set.

        Parameters
        ----------
        X : array-like or torch.Tensor of shape (n_samples, n_classes), (n_samples, 1) or (n_samples,)
            Logits (``input_type="logits"``) or probabilities
            (``input_type="probabilities"``) of a fitted classifier on held-out
            data. A binary problem may be given as one score per sample (the
            log-odds, or probability, of ``classes_[1]``).
        y : array-like of shape (n_samples,)
            True labels; any labels scikit-learn accepts.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; integer weights give the same fit as
            repeating rows. Where the objective is a weighted mean
            (temperature, vector and isotonic scaling) only their ratios
            matter: they are divided by their maximum first, so weights of
            any magnitude fit alike (a weight below ``5e-324`` times the
            largest one counts as 0).

        Returns
        -------
        self : object
            The fitted calibrator.

        Raises
        ------
        ValueError
            For invalid ``X`` (see :func:`skcal.utils.validation.check_scores`),
            a single class in ``y`` (without ``classes``), missing labels
            (``None`` or NaN, the message names their rows), labels not in
            ``classes``, a class count that does not match the columns of
            ``X``, mismatched lengths, or invalid ``sample_weight``.
        """
        self._validate_params()
        Z = self._validate_X(X, reset=True)
        # labels and weights checked and encoded, and Z moved to the compute
        # backend, by the input's kernel module (lazily, blockwise, for dask)
        Z, y_enc, sw, xp = get_backend(Z).fit_inputs(
            self, Z, y, sample_weight, check=check_sample_weight
        )
        self._fit(Z, y_enc, sw, xp)
        if self._preserves_order and xp.rows_all_equal(Z):
            warnings.warn(
                f"Every row of X is the same: {self.__class__.__name__} keeps the "
                "order of each row, so it can only move their common probabilities "
                "along softmax(z / T), towards uniform, not to the class frequencies "
                "of the calibration set (the base rate). VectorScaler, PlattScaler "
                "and IsotonicScaler return the base rate for constant scores.",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )
        return self

    def _predict_log_proba(self, Z, xp):
        # log(0) = -inf is the documented value
        return log_or_neg_inf(self._predict_proba(Z, xp))

    def _predict_proba(self, Z, xp):
        return xp.exp(self._predict_log_proba(Z, xp))

    @substitute_docstring
    def predict_proba(self, X):
        """Calibrated class probabilities.

        %(predict_params)s

        Returns
        -------
        proba : ndarray or torch.Tensor of shape (n_samples, n_classes)
            Rows sum to 1. float64 for float64 input, float32 otherwise; a
            tensor on the input's device for tensor input. Binary input always
            gives two columns. float32 output rounds probabilities below
            ~1e-45 to exactly 0 (so a log of them is ``-inf``);
            :meth:`predict_log_proba` holds those values exactly, as does
            float64 input.

        Raises
        ------
        ValueError
            For invalid ``X`` or a column count that does not match ``classes_``.
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        """
        return self._predict_with(X, "_predict_proba")

    @substitute_docstring
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (may hold ``-inf`` for a zero probability).

        %(predict_params)s

        %(log_proba_returns)s
        """
        return self._predict_with(X, "_predict_log_proba")

    def _predict_with(self, X, method):
        """``method`` (``_predict_proba`` / ``_predict_log_proba``) on validated ``X``."""
        check_is_fitted(self)
        # torch input: the finiteness / magnitude check of the logits runs on
        # the chunks the kernel reads anyway (no separate pass over them)
        with deferred_range_check() if self._predict_checks_range else nullcontext():
            Z = self._validate_X(X, reset=False)
            out = get_backend(Z).predict_with(self, method, Z)
        return like_input(out, X)

    def _order_columns(self, Z):
        """The columns of the validated ``Z`` whose order the map keeps (all, by default)."""
        return Z

    @substitute_docstring
    def predict(self, X):
        """Most probable class after calibration.

        %(predict_params)s

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Entries of ``classes_``. For tensor input with integer classes a
            tensor on the input's device. Calibrators whose map keeps the order
            of the logits (temperature scaling) return the argmax of ``X``
            itself, which the rounded probabilities might not resolve.
        """
        check_is_fitted(self)
        Z = self._validate_X(X, reset=False)
        # (an order-preserving map predicts the argmax of the logits, see
        # skcal._backend._shared.predict_index; a dask array its probabilities')
        xp = get_backend(Z)
        return like_input(xp.take_labels(xp.predict_index(self, Z), self.classes_), X)

    @substitute_docstring
    def transform(self, X):
        """Calibrated log-probabilities (calibrated logits, normalised).

        %(predict_params)s

        %(log_proba_returns)s
            Same as :meth:`predict_log_proba`.
        """
        return self.predict_log_proba(X)

    @substitute_docstring
    def score(self, X, y, sample_weight=None):
        """Mean log-likelihood of the true labels (higher is better).

        This is ``-log_loss``: a strictly proper scoring rule, so model
        selection with it (the default of ``GridSearchCV``) prefers the
        best-calibrated model, not merely the most accurate one.

        %(predict_params)s
        %(score_y_returns)s

        Raises
        ------
        ValueError
            If ``y`` holds labels not in ``classes_``.
        """
        check_is_fitted(self)
        Z = self._validate_X(X, reset=False)
        xp = get_backend(Z)
        y = self._labels_1d(y, Z.shape[0], xp)
        LP = xp.predict_with(self, "_predict_log_proba", Z)
        y_enc = xp.encode_labels(y, self.classes_, Z, encode=encode_labels)
        return xp.score_log_likelihood(LP, y_enc, sample_weight, Z, check=check_sample_weight)

    def _torch_spec(self):
        """Fitted parameters for a generic module of :mod:`skcal.torch`.

        Subclasses with a closed form on logits return a spec of
        :func:`skcal.torch._modules.build_module` (which also drives the ONNX
        export), or a ready ``torch.nn.Module`` mapping the calibrator's input
        to calibrated log-probabilities.
        """
        raise NotImplementedError(
            f"{self.__class__.__name__} has no closed-form map on logits, so it "
            "cannot be exported with to_torch() (or to ONNX); use its "
            "predict_proba / transform instead."
        )

    def to_torch(self, *, dtype=None, device=None):
        """The fitted map as a ``torch.nn.Module`` (no scikit-learn needed to run it).

        Parameters
        ----------
        dtype : torch.dtype, default=torch.float32
            Dtype of the module's output, buffers and computation; input of
            any float dtype is cast to it, except by the piecewise-linear
            (isotonic) maps, which compute in float64 and read float64 input
            unrounded, so that a score between two thresholds closer than
            float32 resolution is mapped as by ``predict_proba`` (on MPS,
            without float64, a map whose thresholds float32 merges is
            refused with a ``ValueError``).
        device : torch.device or str, default=None
            Device of the buffers (CPU by default); move it later with ``.to()``.

        Returns
        -------
        module : torch.nn.Module
            In eval mode, with the fitted parameters as buffers. Its forward
            maps a tensor of the calibrator's input (logits or probabilities,
            shape ``(n_samples, n_features_in_)`` or ``(n_samples,)`` for one
            binary score) to calibrated log-probabilities of shape
            ``(n_samples, n_classes)``, equal to :meth:`transform`. It runs
            under ``torch.compile`` and ``torch.export``.

        Raises
        ------
        NotImplementedError
            If the calibrator has no closed form on logits.
        ImportError
            If torch is not installed.
        sklearn.exceptions.NotFittedError
            If called before ``fit``.

        Examples
        --------
        >>> import numpy as np, torch
        >>> from skcal import TemperatureScaler
        >>> from skcal.datasets import make_logits
        >>> X, y = make_logits(200, 3)
        >>> ts = TemperatureScaler().fit(X, y)
        >>> out = ts.to_torch()(torch.as_tensor(X, dtype=torch.float32))
        >>> bool(np.allclose(out.numpy(), ts.transform(X), atol=1e-5))
        True
        """
        check_is_fitted(self)
        spec = self._torch_spec()
        from .torch._modules import InputColumnOrder, build_module

        order = getattr(self, "_column_order_", None)
        n_in = self.n_features_in_
        # one binary score in another class order: two columns after reordering
        module = build_module(
            spec, n_classes=len(self.classes_), input_type=self.input_type,
            n_features_in=2 if order is not None and n_in == 1 else n_in,
            dtype=dtype, device=device,
        )
        if order is None:
            return module
        import torch

        first = InputColumnOrder(
            order, n_features_in=self.n_features_in_, input_type=self.input_type
        ).to(device=device)
        return torch.nn.Sequential(first, module).eval()

    def get_feature_names_out(self, input_features=None):
        """Names of the columns of :meth:`transform`.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked against ``feature_names_in_`` (and the number of input
            columns) as scikit-learn does; the output columns are named after
            ``classes_`` whatever the input names.

        Returns
        -------
        feature_names_out : ndarray of str objects
            ``"<estimator name in lowercase>_<class>"`` for each class.

        Raises
        ------
        ValueError
            If ``input_features`` does not match the input seen in ``fit``.
        """
        check_is_fitted(self, "classes_")
        _check_feature_names_in(self, input_features)
        prefix = self.__class__.__name__.lower()
        return np.asarray([f"{prefix}_{c}" for c in self.classes_], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = True
        tags.input_tags.allow_nan = False
        tags.classifier_tags.poor_score = True
        tags.target_tags.required = True
        return tags

