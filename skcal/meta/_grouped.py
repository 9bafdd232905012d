"""Group-wise calibration: one clone of any calibrator per group id.

:class:`GroupedCalibrator` fits a clone of a calibrator on the rows of each
group (a slice, domain, market, prompt template, ...) and a global one on all
rows, used by groups too small to fit and by groups unseen at fit time.
"""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._backend._array import is_dask_array
from ..utils._labels import encode_labels

__all__ = ["GroupedCalibrator"]


def _missing_ids(groups):
    """Boolean mask of NaN / None entries of a 1-D NumPy array of group ids."""
    if groups.dtype.kind == "f":
        return np.isnan(groups)
    if groups.dtype.kind == "O":
        return np.array([g is None or (isinstance(g, float) and g != g) for g in groups],
                        dtype=bool)
    return np.zeros(groups.shape[0], dtype=bool)


def _id_kind(a):
    """"text", "bool" or "number" for an array of group ids (None: unknown / mixed)."""
    kind = np.asarray(a).dtype.kind if not is_dask_array(a) else a.dtype.kind
    if kind in "US":
        return "text"
    if kind == "b":
        return "bool"
    if kind in "iuf":
        return "number"
    if kind == "O" and not is_dask_array(a) and len(a):
        kinds = {"text" if isinstance(v, str) else "bool" if isinstance(v, (bool, np.bool_))
                 else "number" if isinstance(v, (int, float, np.number)) else None
                 for v in a}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _check_id_kind(groups, fitted):
    """A group id of another kind than the fitted ones ('1' vs 1) is a mistake, not a new group."""
    got, want = _id_kind(groups), _id_kind(fitted)
    if got is not None and want is not None and got != want:
        raise ValueError(
            f"groups holds {got} ids but the calibrator was fitted with {want} ids "
            f"(e.g. {np.asarray(fitted)[:3].tolist()}); ids of another type never match "
            "a fitted group. Convert them to the type used in fit."
        )


def _group_sizes(groups):
    """Sorted unique group ids and their row counts (one pass for a dask array)."""
    if is_dask_array(groups):
        import dask.array as da

        ids, counts = da.unique(groups, return_counts=True)
        ids, counts = ids.compute(), counts.compute()
        return np.asarray(ids), np.asarray(counts)
    return np.unique(groups, return_counts=True)


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
    n_dask_jobs_ : int
        Only after a lockstep fit on dask arrays: the number of dask
        computations it took.

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

    dask arrays: the labels and the group ids (with their counts per row
    block) come from one job. For a skcal calibrator whose fit runs on dask
    arrays (``_dask_fit``), the global fit and every group's fit then run in
    *lockstep* (:mod:`skcal._backend._dask_groups`): each runs its own
    unchanged client-side solver, and whenever they need data, one dask job
    serves them all. Every data step of a fit on its rows, or on a
    systematic subsample ``[::s]`` of them (warm starts) -- its label and
    weight checks, a Newton step's derivatives, gradient, Hessian or
    Hessian-vector product, a line-search NLL, the logit scale, column
    ranges, a subsample's local copy, the per-class columns of one-vs-rest
    calibrators -- is one task per row block of all rows: each block task
    splits its rows by group and computes every waiting fit's sums, maxima
    or rows with that fit's parameters; the packed sums are tree-reduced
    together. So a fit costs about as many jobs as its slowest group has
    data steps (``n_dask_jobs_``), each with a number of tasks that does not
    grow with the groups,
    not groups x passes; a group that has converged stops. Another estimator
    (not a skcal calibrator) is fitted group after group, each group's rows
    selected lazily. Predictions are one lazy pass: each row block is
    calibrated group by group with NumPy.

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
        self.estimator = estimator
        self.min_group_size = min_group_size

    def _base(self):
        if self.estimator is None:
            from ..scaling import TemperatureScaler

            return TemperatureScaler()
        return self.estimator

    def _clone(self):
        est = clone(self._base())
        if "classes" in est.get_params():
            # the labels of the input columns, in their order (classes_ is sorted)
            est.set_params(classes=self._input_classes_)
        return est

    def _check_groups(self, groups, n):
        if groups is None:
            raise ValueError(f"{self.__class__.__name__} needs groups= (one id per row).")
        if not is_dask_array(groups):
            groups = column_or_1d(np.asarray(groups))
        if groups.shape[0] != n:
            raise ValueError(
                f"groups has {groups.shape[0]} entries but X has {n} rows."
            )
        if not is_dask_array(groups):
            missing = _missing_ids(groups)
            if missing.any():
                raise ValueError(
                    f"groups has {int(missing.sum())} missing ids (NaN / None), e.g. at row "
                    f"{int(np.flatnonzero(missing)[0])}; every row needs a group id."
                )
        return groups

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
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        groups = self._check_groups(groups, n)
        if is_dask_array(X) and _lockstep_ok(self._base()):
            return self._fit_dask_lockstep(X, y, sample_weight, groups)
        self.global_calibrator_ = clone(self._base()).fit(X, y, sample_weight)
        self.classes_ = self.global_calibrator_.classes_
        self._input_classes_ = self.global_calibrator_._classes_in_input_order()
        ids, counts = _group_sizes(groups)
        self.groups_ = ids
        big = counts >= self.min_group_size
        self.fallback_groups_ = ids[~big]
        self.calibrators_ = {}
        dask_input = is_dask_array(X)
        frame = hasattr(X, "iloc") and hasattr(X, "columns")
        if not dask_input:
            # a DataFrame stays one: every calibrator records its column names
            X = X if frame else np.asarray(X)
            y = np.asarray(y)
            if sample_weight is not None and np.ndim(sample_weight):
                sample_weight = np.asarray(sample_weight)
        for g in ids[big]:
            mask = groups == g
            if dask_input:
                Xg, yg, swg = _select_rows(mask, X, y, sample_weight)
            else:
                Xg = X.iloc[np.flatnonzero(mask)] if frame else X[mask]
                yg = y[mask]
                swg = None if sample_weight is None or not np.ndim(sample_weight) else (
                    sample_weight[mask]
                )
            self.calibrators_[_key_of(g)] = self._clone().fit(Xg, yg, swg)
        return self

    def _fit_dask_lockstep(self, X, y, sample_weight, groups):
        """Every fit (global and per group) in lockstep: one dask job per pass."""
        from .._backend import _dask
        from .._backend._dask_groups import fit_lockstep, group_ranks
        from ..utils._labels import resolve_classes

        # the validated logits of all rows (lazy) and, in one job, the labels
        # and each row block's group ids and counts
        probe = clone(self._base())
        Z = probe._validate_X(X, reset=True)
        groups = _dask.as_row_chunks(groups, Z)
        if not is_dask_array(y):
            y = column_or_1d(np.asarray(y))
        if y.shape[0] != Z.shape[0]:
            raise ValueError(
                f"X and y have different numbers of samples: {Z.shape[0]} and "
                f"{y.shape[0]}."
            )
        y = _dask.as_row_chunks(y, Z)
        if sample_weight is not None and not is_dask_array(sample_weight):
            sample_weight = np.broadcast_to(
                np.asarray(sample_weight, dtype=np.float64), (Z.shape[0],)
            ).copy() if np.ndim(sample_weight) == 0 else np.asarray(sample_weight)
        if sample_weight is not None and np.ndim(sample_weight) == 1 and (
            sample_weight.shape[0] == Z.shape[0]
        ):
            # one dask array for all fits (a bad shape: the global fit's error)
            sample_weight = _dask.as_row_chunks(sample_weight, Z)
        uniq, ids, counts, block_counts = _labels_and_groups(y, groups)
        classes, _, _ = resolve_classes(uniq, Z.shape[1], probe.classes)
        self._input_classes_ = classes
        # sorted, as every calibrator's classes_: the shared arrays follow
        order = np.argsort(classes, kind="stable")
        if not (order == np.arange(len(order))).all():
            Z = Z[:, np.r_[order, np.arange(len(order), Z.shape[1])]]
            classes = classes[order]
        self.classes_ = classes
        self.groups_ = ids
        big = counts >= self.min_group_size
        self.fallback_groups_ = ids[~big]
        big_pos = np.flatnonzero(big)
        code_of = np.full(len(ids), -1, dtype=np.int64)
        code_of[big_pos] = np.arange(len(big_pos))
        codes = groups.map_blocks(_codes_block, ids, code_of, dtype=np.int64)
        # rows per block of each fitted group, and each row's rank in its group
        # (the warm starts' subsamples Z[::s] of a group's rows)
        code_counts = [
            {int(code_of[pos]): c for pos, c in bc.items() if code_of[pos] >= 0}
            for bc in block_counts
        ]
        ranks = group_ranks(codes, code_counts)

        # the coordinator's arrays: validated logits, encoded labels, checked
        # (unscaled) weights of all rows; each group's fit divides its own
        y_enc = _dask.encode_labels(y, classes, Z, encode=encode_labels)
        sw = None
        if sample_weight is not None:
            sw = _dask.as_row_chunks(sample_weight, Z)
            sw = sw.map_blocks(_dask._check_weight_block, dtype=np.float64)

        self.global_calibrator_ = clone(self._base())
        fits = [(-1, _fit_fn(self.global_calibrator_, X, y, sample_weight))]
        ests = {}
        for code, pos in enumerate(big_pos):
            rows = tuple(c.get(code, 0) for c in code_counts)
            Xg, yg, swg = _select_rows(codes == code, X, y, sample_weight, rows=rows)
            est = ests[_key_of(ids[pos])] = self._clone()
            fits.append((code, _fit_fn(est, Xg, yg, swg, group=True)))
        coord = fit_lockstep(fits, Z, y_enc, sw, codes, ranks, like=Z, classes=classes)
        self.n_dask_jobs_ = 1 + coord.n_rounds
        self.calibrators_ = ests
        return self

    def _predict_numpy(self, X, groups, method):
        # a DataFrame stays one (row subsets by position), so the calibrators
        # fitted on its columns check the column names as usual
        frame = hasattr(X, "iloc") and hasattr(X, "columns")
        if not frame:
            X = np.asarray(X)
        take = (lambda m: X.iloc[np.flatnonzero(m)]) if frame else (lambda m: X[m])
        groups = np.asarray(groups)
        out = None
        todo = np.ones(X.shape[0], dtype=bool)
        for g, est in self.calibrators_.items():
            mask = groups == g
            if not mask.any():
                continue
            P = getattr(est, method)(take(mask))
            if out is None:
                out = np.empty((X.shape[0], P.shape[1]), dtype=P.dtype)
            out[mask] = P
            todo &= ~mask
        if todo.any():
            P = getattr(self.global_calibrator_, method)(take(todo))
            if out is None:
                out = np.empty((X.shape[0], P.shape[1]), dtype=P.dtype)
            out[todo] = P
        if out is None:  # no rows
            out = getattr(self.global_calibrator_, method)(X)
        return out

    def _predict(self, X, groups, method):
        check_is_fitted(self)
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        groups = self._check_groups(groups, n)
        _check_id_kind(groups, self.groups_)
        if is_dask_array(X):
            import dask.array as da

            from .._backend._dask import as_row_chunks

            groups = as_row_chunks(groups, X)
            k = len(self.classes_)
            X2 = X if X.ndim == 2 else X[:, None]
            if len(X2.chunks[1]) > 1:
                X2 = X2.rechunk({1: -1})
            dtype = np.float64 if X.dtype == np.float64 else np.float32
            return da.blockwise(
                _predict_block, "ij", X2, "ik", groups, "i", self, None, method, None,
                new_axes={"j": k}, concatenate=True, dtype=dtype,
                meta=np.empty((0, 0), dtype),
            )
        return self._predict_numpy(X, groups, method)

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
        P = self.predict_proba(X, groups=groups)
        if is_dask_array(P):
            from .._backend._dask import argmax_rows, take_labels

            return take_labels(argmax_rows(P), self.classes_)
        return self.classes_[np.argmax(P, axis=1)]

    def score(self, X, y, sample_weight=None, *, groups):
        """Mean log-likelihood of the true labels (as the calibrators' ``score``)."""
        from ..metrics import negative_log_likelihood

        P = self.predict_proba(X, groups=groups)
        return -negative_log_likelihood(
            y, P, sample_weight=sample_weight, labels=self.classes_
        )


def _key_of(g):
    return g.item() if isinstance(g, np.generic) else g


def _lockstep_ok(est):
    """Whether the fits of clones of ``est`` can run in lockstep on dask arrays."""
    from ..base import BaseCalibrator

    return isinstance(est, BaseCalibrator) and est._dask_fit


def _fit_fn(est, X, y, sample_weight, group=False):
    """A lockstep participant: ``est.fit`` that registers its arrays.

    The arrays ``est.fit`` hands to ``est._fit`` are recorded (and with them
    their row slices), so that the data steps on them are served by the
    grouped tasks over all rows; so are a group's raw labels and weights
    (its label and weight checks).
    """
    from .._backend import _dask

    def fn(participant):
        if group and is_dask_array(y):
            participant.raw_y = y.name
        if is_dask_array(sample_weight):
            participant.raw_sw = sample_weight.name
        fit_hook = est._fit

        def registering(Z, y_enc, sw, xp):
            if xp is _dask:
                participant.register(Z, y_enc, sw)
            return fit_hook(Z, y_enc, sw, xp)

        est._fit = registering
        try:
            est.fit(X, y, sample_weight)
        finally:
            del est._fit

    return fn


def _unique_counts(b):
    return np.unique(np.asarray(b), return_counts=True)


def _labels_and_groups(y, groups):
    """One job: unique labels, and the group ids with their counts per row block.

    Returns ``(labels, ids, counts, block_counts)``; ``block_counts[b]`` maps
    a position in ``ids`` to its row count in row block ``b``.
    """
    import dask
    import dask.array as da

    blocks = groups.to_delayed().ravel()
    uniq, *parts = dask.compute(
        da.unique(y), *[dask.delayed(_unique_counts)(b) for b in blocks]
    )
    ids = np.unique(np.concatenate([u for u, _ in parts]))
    counts = np.zeros(len(ids), dtype=np.int64)
    block_counts = []
    for u, c in parts:
        pos = np.searchsorted(ids, u)
        counts[pos] += c
        block_counts.append(dict(zip(pos.tolist(), c.tolist())))
    return np.asarray(uniq), ids, counts, block_counts


def _codes_block(gb, ids, code_of):
    gb = np.asarray(gb)
    if gb.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    pos = np.clip(np.searchsorted(ids, gb), 0, len(ids) - 1)
    return np.where(ids[pos] == gb, code_of[pos], -1)


def _block_count(b):
    return np.array([int(np.count_nonzero(b))])


def _select_rows(mask, X, y, sample_weight, rows=None):
    """``X[mask]``, ``y[mask]``, ``sample_weight[mask]`` of dask arrays, chunk sizes known.

    The rows kept per block (``rows``, or counted in one pass over ``mask``)
    are set as the (equal) row chunks of the three selections, as
    ``dask.array.Array.compute_chunk_sizes`` does.
    """
    from .._backend._dask import as_row_chunks

    mask = as_row_chunks(mask, X)
    if rows is None:
        counts = mask.map_blocks(_block_count, chunks=((1,) * mask.numblocks[0],))
        rows = tuple(int(c) for c in counts.compute())
    out = []
    for v in (X, y, sample_weight):
        if v is None:
            out.append(None)
            continue
        v = _rows_of(v, mask, X)
        v._chunks = (rows,) + v.chunks[1:]
        out.append(v)
    return out


def _rows_of(v, mask, like):
    """Rows ``mask`` of a NumPy or dask 1-D ``v`` (NumPy becomes dask first)."""
    if not is_dask_array(v):
        from .._backend._dask import as_row_chunks

        v = as_row_chunks(np.asarray(v), like)
    return v[mask]


def _predict_block(Xb, gb, est, method):
    if Xb.ndim == 2 and Xb.shape[1] == 1 and len(est.classes_) == 2:
        Xb = Xb[:, 0]
    return est._predict_numpy(Xb, gb, method)
