"""Group-wise calibration: one clone of any calibrator per group id.

:class:`GroupedCalibrator` fits a clone of a calibrator on the rows of each
group (a slice, domain, market, prompt template, ...) and a global one on all
rows, used by groups too small to fit and by groups unseen at fit time.
"""

from itertools import chain
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted

from .._backend._groups import (
    as_groups, group_rows, group_sizes, id_kind, labels_of, map_rows, take_rows,
)
from ..utils._params import store_params

__all__ = ["GroupedCalibrator"]


class GroupedCalibrator(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """One calibrator per group id, with a global calibrator for small or new groups.

    Parameters
    ----------
    estimator : skcal calibrator, default=None
        The calibrator cloned for each group (any skcal calibrator, or an
        estimator with ``fit(X, y, sample_weight)`` and ``predict_proba``);
        :class:`~skcal.TemperatureScaler` by default.
    min_group_size : int, default=100
        Groups with fewer rows than this in ``fit`` are not fitted on their
        own: their rows are calibrated by the global calibrator (fitted on
        all rows).

    Attributes
    ----------
    global_calibrator_ : estimator
        The clone fitted on all rows: the fallback.
    calibrators_ : dict
        Group id -> fitted clone, for the groups of at least
        ``min_group_size`` rows.
    groups_ : ndarray
        Every group id seen in ``fit``.
    fallback_groups_ : ndarray
        The group ids calibrated by the global calibrator (too small).
    classes_ : ndarray of shape (n_classes,)
        The labels, shared by every group's calibrator (passed to each clone
        as ``classes`` when it has that parameter, so that a group lacking a
        class still has all columns).

    Notes
    -----
    Fallback rule: a group with fewer than ``min_group_size`` rows in
    ``fit``, or a group id not seen in ``fit``, is calibrated by
    ``global_calibrator_``. A group with enough rows but a single class among
    them is fitted as usual, with all classes (the per-group fit may warn
    about classes without examples). Group ids of another type than in
    ``fit`` (``"1"`` against ``1``, booleans against numbers) raise instead
    of falling back.

    ``groups`` is a required keyword of ``fit``, ``predict_proba``,
    ``predict`` and ``score``: in scikit-learn's model selection
    (``cross_val_score``, ``GridSearchCV``) pass it through metadata routing,
    ``sklearn.set_config(enable_metadata_routing=True)`` and
    ``est.set_fit_request(groups=True).set_score_request(groups=True)``, or
    every fold scores NaN.

    dask arrays: one job finds the group ids and their rows per row block;
    then each calibrator is fitted in turn on its rows, selected lazily.
    Predictions are one lazy pass, each row block calibrated with NumPy.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import GroupedCalibrator, TemperatureScaler
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, 2000)
    >>> g = rng.integers(0, 2, 2000)
    >>> Z = (1 + 4 * g)[:, None] * (np.eye(3)[y] + rng.normal(size=(2000, 3)))
    >>> gc = GroupedCalibrator(TemperatureScaler()).fit(Z, y, groups=g)
    >>> [round(gc.calibrators_[k].temperature_, 1) for k in (0, 1)]
    [1.0, 5.2]
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "min_group_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator=None, *, min_group_size=100):
        store_params(self, locals())

    def _base(self):
        from ..scaling import TemperatureScaler

        return TemperatureScaler() if self.estimator is None else self.estimator

    def _check_groups(self, groups, X):
        if groups is None:
            raise ValueError(f"{self.__class__.__name__} needs groups= (one id per row).")
        return as_groups(groups, X.shape[0] if hasattr(X, "shape") else len(X), like=X)

    def fit(self, X, y, sample_weight=None, *, groups):
        """Fit the global calibrator and one calibrator per large enough group.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_classes) or (n_samples,)
            Logits or probabilities, as the calibrator takes them.
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        groups : array-like or dask array of shape (n_samples,)
            The group id of each row (any sortable labels).

        Returns
        -------
        self : object

        Raises
        ------
        ValueError
            If ``groups`` is missing or its length differs from ``X``'s, and
            the calibrator's own errors.
        """
        self._validate_params()
        groups = self._check_groups(groups, X)
        self.global_calibrator_ = clone(self._base()).fit(X, y, sample_weight)
        self.classes_ = self.global_calibrator_.classes_
        template = clone(self._base())
        if "classes" in template.get_params():
            # the labels of the input columns, in their order (classes_ is sorted)
            template.set_params(
                classes=self.global_calibrator_._classes_in_input_order())
        ids, counts, per_block = group_sizes(groups)
        self.groups_ = ids
        big = counts >= self.min_group_size
        self.fallback_groups_ = ids[~big]
        self.calibrators_, keys = {}, ids.tolist()  # keys: Python scalars
        for pos in np.flatnonzero(big):
            Xg, yg, swg = group_rows(
                groups, ids[pos], (X, y, sample_weight),
                None if per_block is None else per_block[pos],
            )
            self.calibrators_[keys[pos]] = clone(template).fit(Xg, yg, swg)
        return self

    def _predict_numpy(self, X, groups, method):
        # a DataFrame stays one (row subsets by position), so the calibrators
        # fitted on its columns check the column names as usual
        if not hasattr(X, "iloc"):
            X = np.asarray(X)
        groups = np.asarray(groups)
        out, todo = None, np.ones(X.shape[0], dtype=bool)
        # each fitted group's rows, then the rows left (todo, updated in place)
        parts = ((est, groups == g) for g, est in self.calibrators_.items())
        for est, mask in chain(parts, [(self.global_calibrator_, todo)]):
            if not mask.any():
                continue
            P = getattr(est, method)(take_rows(X, mask))
            if out is None:
                out = np.empty((X.shape[0], P.shape[1]), dtype=P.dtype)
            out[mask] = P
            todo &= ~mask
        if out is None:  # no rows
            out = getattr(self.global_calibrator_, method)(X)
        return out

    def _predict(self, X, groups, method):
        check_is_fitted(self)
        groups = self._check_groups(groups, X)
        # a group id of another kind than the fitted ones ('1' vs 1) is a
        # mistake, not a new group
        got, want = id_kind(groups), id_kind(self.groups_)
        if got is not None and want is not None and got != want:
            raise ValueError(
                f"groups holds {got} ids but the calibrator was fitted with {want} "
                f"ids (e.g. {np.asarray(self.groups_)[:3].tolist()}); ids of another "
                "type never match a fitted group. Convert them to the type used in fit."
            )
        return map_rows(
            lambda Xb, gb: self._predict_numpy(Xb, gb, method), X, groups,
            len(self.classes_),
        )

    def predict_proba(self, X, *, groups):
        """Calibrated probabilities, each row by its group's calibrator.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_classes) or (n_samples,)
        groups : array-like or dask array of shape (n_samples,)

        Returns
        -------
        proba : ndarray or dask array of shape (n_samples, n_classes)
            A lazy dask array (same row chunks) for dask input.
        """
        return self._predict(X, groups, "predict_proba")

    def predict_log_proba(self, X, *, groups):
        """Logarithm of :meth:`predict_proba` (same parameters)."""
        return self._predict(X, groups, "predict_log_proba")

    def predict(self, X, *, groups):
        """Most probable class after calibration (same parameters)."""
        return labels_of(self.predict_proba(X, groups=groups), self.classes_)

    def score(self, X, y, sample_weight=None, *, groups):
        """Mean log-likelihood of the true labels (as the calibrators' ``score``)."""
        from ..metrics import negative_log_likelihood

        P = self.predict_proba(X, groups=groups)
        return -negative_log_likelihood(
            y, P, sample_weight=sample_weight, labels=self.classes_
        )
