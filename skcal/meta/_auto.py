"""Choose a calibrator by cross-validation: :class:`AutoCalibrator`.

Also holds :class:`IdentityCalibrator`, the "no calibration" map that every
candidate list of :class:`AutoCalibrator` starts with.
"""

import functools
import time
import warnings
from collections.abc import Iterable
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._backend import _numpy
from ..base import BaseCalibrator
from .._backend._array import to_numpy
from .._backend._dispatch import get_backend
from ..utils._weights import weight_unit, weighted_rows
from ..utils.validation import DEFAULT_INPUT_TYPE, _caller_stacklevel
from ..utils._params import store_params
from ._inner import check_inner, split_rows

__all__ = ["AutoCalibrator", "IdentityCalibrator", "default_candidates", "one_se_choice"]


class IdentityCalibrator(BaseCalibrator):
    """No calibration: the classifier's own probabilities, ``softmax(z)``.

    The identity map of the logits, as a calibrator, so that "do not
    calibrate" can be fitted, cross-validated, pickled and exported like any
    other choice (it is the first candidate of :class:`AutoCalibrator`).
    ``fit`` only records ``classes_`` and ``n_features_in_``.

    Parameters
    ----------
    input_type : {"logits", "probabilities"}, default="logits"
        What ``X`` holds; probabilities are returned unchanged (up to the
        clipping of an exact 0 to the smallest normal number,
        see :func:`skcal.utils.validation.check_scores`).
    classes : array-like of shape (n_classes,), default=None
        The labels of the columns of ``X``; by default the sorted labels of ``y``.
    backend : {"auto", "numpy", "torch"}, default="auto"
        Where the softmax runs; ``"auto"`` follows the input.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    AutoCalibrator : chooses between this map and fitted calibrators.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import IdentityCalibrator
    >>> Z = np.array([[2.0, 0.0], [0.0, 1.0]])
    >>> IdentityCalibrator().fit(Z, [0, 1]).predict_proba(Z).round(3)
    array([[0.881, 0.119],
           [0.269, 0.731]])
    """

    _dask_fit = True
    _preserves_order = True
    _binary_log_odds_only = True

    def _fit(self, Z, y, sample_weight, xp):
        return self

    def _predict_log_proba(self, Z, xp):
        return xp.log_softmax(Z)

    def _torch_spec(self):
        return {"kind": "affine", "scale": 1.0}


def default_candidates(n_samples, n_classes):
    """The default candidate list of :class:`AutoCalibrator`, simplest first.

    Parameters
    ----------
    n_samples : int
        Rows of the calibration set.
    n_classes : int
        Number of classes (columns of the logits).

    Returns
    -------
    candidates : list of (str, calibrator)
        Method names (as ``skcal benchmark`` lists them) and unfitted
        calibrators, in order of complexity (number of fitted parameters):

        - always ``identity`` (no calibration, 0 parameters) and
          ``temperature`` (1);
        - binary: ``platt`` (2) and ``beta`` (3) from 20 rows on,
          ``smoothed-isotonic`` (a step function, mixed with the uniform
          distribution: :class:`~skcal.SmoothedCalibrator` over
          :class:`~skcal.IsotonicScaler`) from 500 rows on;
        - multiclass: ``vector`` (``2 K`` parameters) and
          ``structured-vector`` (the same ``2 K``, regularised towards
          temperature scaling) when ``n_samples >= 20 K``, ``matrix``
          (``K (K + 1)``, regularised) when ``n_samples >= 5 K (K + 1)``, and
          one-vs-rest ``smoothed-isotonic`` (a step function per class, then
          the mixture) when ``n_samples >= 100 K``.

    Notes
    -----
    The size thresholds keep at least about ten calibration rows per fitted
    parameter (twenty for vector scaling's per-class slopes); below them a
    cross-validated choice between the richer maps is mostly noise. The
    binary list holds per-class (one-vs-rest) maps, which on two classes are
    one map of the log-odds. The multiclass list holds the whole-vector maps,
    which the CalArena study found the strongest on proper scores with many
    classes, and isotonic regression last: it repairs outputs that no smooth
    map of the logits can (near-zero probabilities on true classes, as in
    ``20news_cv_labelerrors``), and the cross-validation keeps it only where
    it wins (see the user guide page "Which calibrator should I use?").

    Structured vector scaling is the one method of issue 26 in the list: on
    the 12 real sets of ``benchmarks/new_methods_real_sets.py`` adding it
    changed the choice on the two 100-class sets only, where matrix scaling
    is no candidate (5,000 rows, below ``5 K (K + 1)``), and lowered the
    test NLL there (0.8803 -> 0.8727, 1.1353 -> 1.1330). Isotonic
    regression is smoothed (``lam = 1 / (n + 1)`` of the uniform
    distribution): smoothed isotonic had a lower test NLL than isotonic on
    all 12 sets, and as the candidate it lowered ``20news_cv_labelerrors``,
    the one set where isotonic is chosen, from 0.3562 to 0.3405, changing no
    other choice. Quadratic scaling (binary) and centered isotonic
    regression, offered at the places of ``beta`` and ``isotonic``, were
    chosen on none of the 12, so they are left out (each candidate costs
    ``cv`` fits and widens the one-standard-error choice).
    """
    from ..ovr import BetaCalibrator, IsotonicScaler, PlattScaler
    from ._smoothed import SmoothedCalibrator
    from ..scaling import (
        MatrixScaler,
        StructuredVectorScaler,
        TemperatureScaler,
        VectorScaler,
    )

    out = [("identity", IdentityCalibrator()), ("temperature", TemperatureScaler())]
    if n_classes == 2:
        if n_samples >= 20:
            out += [("platt", PlattScaler()), ("beta", BetaCalibrator())]
        if n_samples >= 500:
            out.append(("smoothed-isotonic", SmoothedCalibrator(IsotonicScaler())))
    else:
        if n_samples >= 20 * n_classes:
            out += [("vector", VectorScaler()), ("structured-vector", StructuredVectorScaler())]
        if n_samples >= 5 * n_classes * (n_classes + 1):
            out.append(("matrix", MatrixScaler()))
        if n_samples >= 100 * n_classes:
            out.append(("smoothed-isotonic", SmoothedCalibrator(IsotonicScaler())))
    return out


def one_se_choice(fold_losses):
    """Index of the simplest candidate within one paired standard error of the best.

    Parameters
    ----------
    fold_losses : array-like of shape (n_candidates, n_splits)
        Test-fold losses (lower is better) of every candidate on the same
        folds, candidates in order of complexity. Rows with a NaN (a
        candidate that failed in a fold) are never chosen.

    Returns
    -------
    index : int
        With ``b`` the candidate of lowest mean loss and, for each candidate
        ``i``, ``d_i = L_i - L_b`` its fold-by-fold loss differences to ``b``:
        ``min {i : mean(d_i) <= std(d_i) / sqrt(n_splits)}`` (``std`` with
        ``ddof=1``), the simplest candidate whose excess loss is within one
        standard error of its paired differences (``b`` itself always
        qualifies); 0 when every row holds a NaN.

    Raises
    ------
    ValueError
        If ``fold_losses`` is not 2-D with at least 2 columns.

    Notes
    -----
    This is the one-standard-error rule of Hastie et al. (Sec. 7.10) applied
    to the paired differences over the folds: every candidate is scored on
    the same folds, so the fold-to-fold variation that all share (a fold
    with harder rows) cancels, and a richer map is chosen when it beats a
    simpler one consistently across the folds, not merely on average.

    References
    ----------
    T. Hastie, R. Tibshirani, J. Friedman, "The Elements of Statistical
    Learning", 2nd ed., Springer 2009, Sec. 7.10 (the one-standard-error rule).

    Examples
    --------
    >>> one_se_choice([[0.50, 0.52, 0.48], [0.49, 0.51, 0.47], [0.30, 0.31, 0.29]])
    2
    >>> one_se_choice([[0.50, 0.60, 0.40], [0.51, 0.57, 0.39]])
    0
    """
    L = np.asarray(fold_losses, dtype=np.float64)
    if L.ndim != 2 or L.shape[1] < 2:
        raise ValueError(
            f"fold_losses must have shape (n_candidates, n_splits >= 2), got {L.shape}."
        )
    ok = np.isfinite(L).all(axis=1)
    if not ok.any():
        return 0
    mean = np.where(ok, L.mean(axis=1), np.inf)
    best = int(np.argmin(mean))
    for i in np.flatnonzero(ok):
        d = L[i] - L[best]
        if d.mean() <= d.std(ddof=1) / np.sqrt(L.shape[1]):
            return int(i)
    return best


def _fold_loss(cal, Z, y, sw, scoring):
    """Mean loss (NLL or multiclass Brier) of a fitted calibrator on ``Z``."""
    LP = to_numpy(cal.predict_log_proba(Z)).astype(np.float64)
    if scoring == "nll":
        return -_numpy.mean_log_likelihood(LP, y, sw)
    P = np.exp(LP)
    P[np.arange(len(y)), y] -= 1.0
    return float(np.average((P * P).sum(axis=1), weights=sw))


def _fit_and_score(cand, Z, y, fold, scoring, classes, filters=None):
    """Fit a clone on the train rows and score it on the test rows of one fold.

    ``fold`` is ``(train, train_weight, test, test_weight)``: row indices and
    their weights (None: unweighted). Returns ``(loss, fit_time, score_time,
    error, warned)``, ``warned`` the ``(category, message)`` of each distinct
    warning the fold raised (recorded, not shown: :meth:`AutoCalibrator._fit`
    reports each once for all folds).
    """
    with warnings.catch_warnings(record=True) as caught:
        # the caller's filters apply ("ignore" drops, "error" fails the fold),
        # also in a joblib worker process (``filters``: the caller's, which a
        # fresh process does not have)
        if filters is not None:
            warnings.filters[:] = filters
        out = _fit_and_score_fold(cand, Z, y, fold, scoring, classes)
    warned = list(dict.fromkeys((w.category, str(w.message)) for w in caught))
    return (*out, warned)


def _fit_and_score_fold(cand, Z, y, fold, scoring, classes):
    train, w_train, test, w_test = fold
    est = clone(cand).set_params(classes=classes, input_type="logits")
    take = functools.partial(get_backend(Z).take_rows, Z)
    t0 = time.perf_counter()
    try:
        est.fit(take(train), y[train], sample_weight=w_train)
    except Exception as exc:  # reported in cv_results_, never chosen
        return np.nan, time.perf_counter() - t0, 0.0, f"{type(exc).__name__}: {exc}"
    t1 = time.perf_counter()
    try:
        loss = _fold_loss(est, take(test), y[test], w_test, scoring)
    except Exception as exc:
        return np.nan, t1 - t0, time.perf_counter() - t1, f"{type(exc).__name__}: {exc}"
    return loss, t1 - t0, time.perf_counter() - t1, ""


#: Integer sample weights are expanded to repeated rows in the folds up to
#: this many repeated rows (above it the folds split the rows themselves).
MAX_REPEATED_ROWS = 10_000_000


def _repetitions(sw):
    """Whole repetition counts ``w / weight_unit(w)`` of the weights, or None.

    None where the weights are not whole multiples of one unit (see
    :func:`skcal.utils._weights.weight_unit`) or would repeat more than
    :data:`MAX_REPEATED_ROWS` rows.
    """
    m = sw / weight_unit(sw)
    r = np.rint(m)
    if not np.all(np.abs(m - r) <= 1e-9 * np.maximum(1.0, m)) or r.sum() > MAX_REPEATED_ROWS:
        return None
    return r.astype(np.int64)


def _stratified_folds(Z, y, n_splits, random_state, repeats=None, sw=None):
    """Seeded stratified folds that do not depend on the order of the rows.

    The rows are put in a canonical order first (by label, then by a fixed
    projection of their logits), so that permuting the calibration set
    permutes the folds with it and the choice does not change.

    With ``repeats`` (whole repetition counts of the rows), the folds split
    the repeated rows, as they would split the repeated data set; a row then
    enters a fold's training and test parts with the number of its copies
    there as its weight (a row with no copy in a part is left out of it).
    Returns ``(train, train_weight, test, test_weight)`` per fold (the
    weights ``sw[train]``, ``sw[test]`` without ``repeats``).
    """
    v = np.random.default_rng(12345).uniform(0.5, 1.5, size=Z.shape[1])
    key = get_backend(Z).project_rows(Z, v)
    skf = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
    if repeats is None:
        order = np.lexsort((key, y))
        folds = [(np.sort(order[tr]), np.sort(order[te]))
                 for tr, te in skf.split(np.zeros((len(y), 1)), y[order])]
        return [(tr, None if sw is None else sw[tr], te, None if sw is None else sw[te])
                for tr, te in folds]
    unit = np.repeat(np.arange(len(y)), repeats)
    order = unit[np.lexsort((key[unit], y[unit]))]
    out = []
    for tr, te in skf.split(np.zeros((len(order), 1)), y[order]):
        c_tr = np.bincount(order[tr], minlength=len(y))
        c_te = np.bincount(order[te], minlength=len(y))
        tr_rows, te_rows = np.flatnonzero(c_tr), np.flatnonzero(c_te)
        out.append((tr_rows, c_tr[tr_rows].astype(np.float64),
                    te_rows, c_te[te_rows].astype(np.float64)))
    return out


def _warn_once_per_candidate(cands, warned, k):
    """Re-issue each distinct fold warning of a candidate once, with its fold count.

    ``warned`` holds, per (candidate, fold) job in the order of ``cands`` then
    folds, the distinct ``(category, message)`` pairs the fold raised; a
    warning raised in ``m`` of the ``k`` folds of candidate ``name`` is issued
    once as ``"<message> (in m of k folds of candidate 'name')"``, at the
    user's call.
    """
    for i, (name, _) in enumerate(cands):
        counts = {}
        for fold_warned in warned[i * k:(i + 1) * k]:
            for key in fold_warned:
                counts[key] = counts.get(key, 0) + 1
        for (category, message), m in counts.items():
            _reissue(category, message, f"in {m} of {k} folds of candidate {name!r}")


def _reissue(category, message, where):
    """Issue a recorded warning again at the user's call, ``where`` it came from appended."""
    warnings.warn(f"{message} ({where})", category, stacklevel=_caller_stacklevel())


class AutoCalibrator(BaseCalibrator):
    """Choose a calibrator by a cross-validated proper score, then refit it.

    Every candidate (by default :func:`default_candidates`: no calibration,
    temperature scaling and the richer maps the set is large enough for) is
    fitted on the training rows of each of ``cv`` stratified, seeded folds
    and scored on the held-out rows by the mean negative log-likelihood
    (``scoring="nll"``) or Brier score (``scoring="brier"``). The simplest
    candidate whose mean loss is within one standard error of the lowest
    (:func:`one_se_choice`) is refitted on the whole calibration set and
    predicts. On small or already calibrated sets this keeps the identity or
    temperature scaling; a richer map is chosen only when it beats them by
    more than the fold-to-fold noise of the best one.

    Parameters
    ----------
    candidates : list of calibrators or of (name, calibrator) pairs, default=None
        Unfitted skcal calibrators, **simplest first** (ties within one
        standard error go to the earlier one). Each is cloned; its
        ``classes`` is set to the columns of ``X``; the candidates see the
        validated logits, so an ``input_type="probabilities"`` candidate is an
        error (set it on the AutoCalibrator). None:
        :func:`default_candidates` for the size (the number of rows, or the
        total weight in units of one row, :ref:`sample-weights`) and class
        count of ``X``. The identity map is not added to an explicit list.
    scoring : {"nll", "brier"}, default="nll"
        The proper score of the folds: mean negative log-likelihood (nats), or
        the multiclass Brier score ``sum_k (p_k - [y = k])^2`` (not halved for
        two classes), weighted by ``sample_weight``.
    cv : int, cross-validation splitter or iterable, default=5
        Number of stratified folds (at least 2), shuffled with
        ``random_state`` after the rows are put in a canonical order (by
        label, then by a fixed projection of the logits), so that the choice
        does not depend on the order of the rows (fewer folds for a class
        with fewer rows, see Notes). A splitter (e.g.
        :class:`~sklearn.model_selection.StratifiedKFold`) or an iterable of
        ``(train, test)`` index arrays is used as given, on the rows in their
        order. ``fit`` takes no ``groups``: to keep groups of rows together,
        pass the splits of a group splitter,
        ``cv=list(GroupKFold(5).split(X, y, groups))`` (a group splitter
        itself is an error).
    refit : bool, default=True
        Refit the chosen candidate on the whole set (``best_calibrator_``);
        with False only the cross-validation runs, and predicting raises.
    n_jobs : int or None, default=None
        Fits (candidate x fold) run in parallel with joblib; None is 1.
        Worth it for slow candidates on large sets only.
    random_state : int, RandomState instance or None, default=0
        Seed of the fold shuffle; the default fixes the folds, so that refits
        are reproducible.
    input_type : {"logits", "probabilities"}, default="logits"
        What ``X`` holds.
    classes : array-like of shape (n_classes,), default=None
        The labels of the columns of ``X``; by default the sorted labels of ``y``.
    backend : {"auto", "numpy", "torch"}, default="auto"
        Where the candidates run; torch tensors stay on their device.

    Attributes
    ----------
    cv_results_ : dict of ndarrays
        One entry per candidate, as :class:`~sklearn.model_selection.GridSearchCV`
        reports them: ``"candidate"`` (names), ``"params"`` (the unfitted
        candidates), ``"split<k>_test_score"``, ``"mean_test_score"`` and
        ``"std_test_score"`` (scores are *negated* losses, higher is better;
        ``std`` with ``ddof=0``), ``"rank_test_score"``, ``"mean_fit_time"``,
        ``"std_fit_time"``, ``"mean_score_time"``, ``"std_score_time"``
        (seconds) and ``"error"`` (the first error message of a candidate
        that failed in a fold, else ``""``; its scores are NaN).
    best_index_ : int
        The chosen candidate (by the paired one-standard-error rule, so not
        necessarily the highest ``mean_test_score``); -1 when every
        candidate failed.
    best_score_ : float
        Its ``mean_test_score``.
    best_name_ : str
        Its name.
    best_calibrator_ : calibrator
        The chosen candidate refitted on the whole set (only with ``refit``).
    n_splits_ : int
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Raises
    ------
    ValueError
        In ``fit``, when a class has a single row (stratified folds need at
        least 2; the message says which class). A class with at least 2 but
        fewer than ``cv`` rows makes ``fit`` use that many folds instead,
        with a :class:`UserWarning` (the fold-count rule of the Notes).

    See Also
    --------
    default_candidates, one_se_choice, IdentityCalibrator

    Notes
    -----
    Every candidate is scored on the same folds, and the folds and the
    validated logits are computed once. The paired rule chooses a richer map
    whenever it wins on the folds consistently, even by a small margin: on
    symmetric over-confident synthetic logits (3 classes, where temperature
    scaling is the true map) it chose vector scaling for one of three seeds
    at 600 and at 1,000 rows, and temperature scaling for all three at 2,000
    rows. On the real sets of the user guide page "Which calibrator should I
    use?" its test NLL is 0.0010 nats above the best method chosen in
    hindsight on average (the unpaired one-standard-error rule: 0.0024). When every candidate fails in some
    fold, the identity map is chosen (a :class:`UserWarning` says so).
    A warning that a candidate raises in its fold fits is issued once per
    distinct category and message, at the call of ``fit``, ending in how many
    folds raised it (``"... (in 5 of 5 folds of candidate 'temperature')"``);
    the refit of the chosen candidate's warnings are issued there too, once
    each, ending in ``"(refit of candidate 'temperature' on all rows)"``.
    **Folds and weights.** With an integer ``cv``, the number of folds is
    ``min(cv, m)`` for ``m`` the row count of the smallest class (at least
    2). Integer ``sample_weight`` (weights that are whole multiples of one
    unit, :ref:`sample-weights`) fits exactly like repeated rows, the choice
    included: the stratified folds split the repeated rows (a row of weight 3
    is 3 rows there; with its canonical order the fold assignment is that of
    the repeated data set), and a row enters a fold's training and test
    parts with the number of its copies in each as its weight (so it can sit
    on both sides, as its copies would). ``m`` then counts repeated rows.
    Other weights (or more than ``MAX_REPEATED_ROWS`` = 10 million repeated
    rows) weight the fits and the fold losses while the folds split the
    rows themselves; a splitter given as ``cv`` always splits the rows.
    ``fit`` does not run on dask arrays (most
    candidates' fits do not); predictions do, blockwise, like the chosen
    candidate's. ``to_torch`` and the ONNX export return the chosen
    candidate's map.

    References
    ----------
    T. Hastie, R. Tibshirani, J. Friedman, "The Elements of Statistical
    Learning", 2nd ed., 2009, Sec. 7.10.

    D. Holzmüller, E. Berta, F. Bach, M. I. Jordan, "CalArena: ...", 2026,
    arXiv:2605.30188 (methods often raise test log-loss; compare by proper
    scores).

    Examples
    --------
    >>> from skcal import AutoCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(2000, 3)  # over-confident logits
    >>> auto = AutoCalibrator().fit(X, y)
    >>> auto.best_name_
    'temperature'
    >>> list(auto.cv_results_["candidate"])
    ['identity', 'temperature', 'vector', 'structured-vector', 'matrix', 'smoothed-isotonic']
    """


    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "candidates": [list, None],
        "scoring": [StrOptions({"nll", "brier"})],
        "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split", "get_n_splits"]),
               Iterable],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        candidates=None,
        *,
        scoring="nll",
        cv=5,
        refit=True,
        n_jobs=None,
        random_state=0,
        input_type=DEFAULT_INPUT_TYPE,
        classes=None,
        backend="auto",
    ):
        store_params(self, locals())

    def _candidate_list(self, n_samples, n_classes):
        if self.candidates is None:
            return default_candidates(n_samples, n_classes)
        from ..utils.discovery import method_name

        out = []
        for i, c in enumerate(self.candidates):
            name, est = c if isinstance(c, tuple) and len(c) == 2 else (None, c)
            if not isinstance(est, BaseCalibrator):
                raise ValueError(
                    f"candidates[{i}] must be an skcal calibrator or a (name, "
                    f"calibrator) pair, got {type(est).__name__}."
                )
            check_inner(est, "AutoCalibrator")
            out.append((name or method_name(type(est)), est))
        if not out:
            raise ValueError("candidates is an empty list; give at least one calibrator.")
        names = [n for n, _ in out]
        if len(set(names)) != len(names):
            raise ValueError(f"candidate names must be unique, got {names}.")
        return out

    def _fit(self, Z, y, sample_weight, xp):
        y = to_numpy(y).astype(np.int64)
        sw = None if sample_weight is None else to_numpy(sample_weight).astype(np.float64)
        n, K = Z.shape
        if not isinstance(self.cv, Integral):  # a splitter or splits: in row order
            splits = split_rows(self.cv, np.zeros((n, 1)), y, "AutoCalibrator")
            folds = [(np.asarray(tr), None if sw is None else sw[tr],
                      np.asarray(te), None if sw is None else sw[te])
                     for tr, te in splits]
        else:
            repeats = None if sw is None else _repetitions(sw)
            counts = np.bincount(y, weights=repeats, minlength=K)
            present = counts[counts > 0]
            n_splits = self.cv
            if present.min() < self.cv:
                k = int(np.flatnonzero(counts == present.min())[0])
                label = self.classes_[k:k + 1].tolist()[0]
                rows = f"class {label!r} has {int(present.min())} of {int(counts.sum())} rows"
                if present.min() < 2:
                    raise ValueError(
                        f"AutoCalibrator needs at least 2 rows of every class for its "
                        f"stratified folds, but {rows}. Use more calibration data, or "
                        "fit one calibrator directly."
                    )
                n_splits = int(present.min())
                warnings.warn(
                    f"AutoCalibrator uses {n_splits} folds instead of cv={self.cv}: "
                    f"{rows}, and stratified folds need one per fold.",
                    UserWarning,
                    stacklevel=_caller_stacklevel(),
                )
            folds = _stratified_folds(Z, y, n_splits, self.random_state, repeats, sw)
        # the size rules count rows in units of one row (:ref:`sample-weights`),
        # as repeated rows would
        n_rows = int(round(weighted_rows(sw, n)))
        cands = self._candidate_list(n_rows, K)
        cols = np.arange(K)
        jobs = [(c, fold) for _, c in cands for fold in folds]
        if self.n_jobs in (None, 1):
            res = [_fit_and_score(c, Z, y, fold, self.scoring, cols) for c, fold in jobs]
        else:
            from joblib import Parallel, delayed

            res = Parallel(n_jobs=self.n_jobs)(
                delayed(_fit_and_score)(c, Z, y, fold, self.scoring, cols,
                                        list(warnings.filters))
                for c, fold in jobs
            )
        k = len(folds)
        loss = np.array([r[0] for r in res], dtype=np.float64).reshape(len(cands), k)
        fit_t = np.array([r[1] for r in res]).reshape(len(cands), k)
        score_t = np.array([r[2] for r in res]).reshape(len(cands), k)
        errors = [next((r[3] for r in res[i * k:(i + 1) * k] if r[3]), "")
                  for i in range(len(cands))]
        _warn_once_per_candidate(cands, [r[4] for r in res], k)
        failed = ~np.isfinite(loss).all(axis=1)
        loss[failed] = np.nan
        scores = -loss
        mean = scores.mean(axis=1)
        order = np.argsort(np.where(np.isnan(mean), np.inf, -mean), kind="stable")
        rank = np.empty(len(cands), dtype=np.int32)
        rank[order] = np.arange(1, len(cands) + 1)
        results = {
            "candidate": np.array([n for n, _ in cands], dtype=object),
            "params": [est for _, est in cands],
            **{f"split{j}_test_score": scores[:, j] for j in range(k)},
            "mean_test_score": mean,
            "std_test_score": scores.std(axis=1),
            "rank_test_score": rank,
            "mean_fit_time": fit_t.mean(axis=1),
            "std_fit_time": fit_t.std(axis=1),
            "mean_score_time": score_t.mean(axis=1),
            "std_score_time": score_t.std(axis=1),
            "error": np.array(errors, dtype=object),
        }
        self.cv_results_ = results
        self.n_splits_ = k
        if failed.all():
            warnings.warn(
                "Every candidate failed in at least one fold (first error: "
                f"{errors[0]}); AutoCalibrator uses no calibration (the identity map).",
                UserWarning,
                stacklevel=_caller_stacklevel(),
            )
            self.best_index_ = -1
            self.best_score_ = np.nan
            self.best_name_ = "identity"
            chosen = IdentityCalibrator()
        else:
            self.best_index_ = one_se_choice(loss)
            self.best_score_ = float(mean[self.best_index_])
            self.best_name_ = cands[self.best_index_][0]
            chosen = cands[self.best_index_][1]
        if self.refit:
            with warnings.catch_warnings(record=True) as caught:
                self.best_calibrator_ = clone(chosen).set_params(
                    classes=cols, input_type="logits"
                ).fit(Z, y, sample_weight=sw)
            # at the user's call, as the fold warnings (the candidate's own
            # stacklevel would point inside AutoCalibrator)
            for category, message in dict.fromkeys((w.category, str(w.message))
                                                   for w in caught):
                _reissue(category, message,
                         f"refit of candidate {self.best_name_!r} on all rows")
        return self

    def _chosen(self):
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError(
                "AutoCalibrator(refit=False) only cross-validates its candidates; "
                "set refit=True to predict with the chosen one."
            )
        return self.best_calibrator_

    def _predict_log_proba(self, Z, xp):
        return self._chosen()._predict_log_proba(Z, xp)

    def _predict_proba(self, Z, xp):
        return self._chosen()._predict_proba(Z, xp)

    def _torch_spec(self):
        return self._chosen()._torch_spec()
