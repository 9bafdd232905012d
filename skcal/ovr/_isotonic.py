"""Isotonic-regression calibration (Zadrozny & Elkan 2002) on log-odds scores.

The monotone fits are scikit-learn's :class:`~sklearn.isotonic.IsotonicRegression`
(pool-adjacent-violators); this module only chooses the scores, combines the
one-vs-rest outputs and evaluates the fitted step functions on any device.
"""

from numbers import Real

import numpy as np
from scipy.optimize import isotonic_regression
from sklearn.isotonic import IsotonicRegression
from sklearn.utils._param_validation import Interval

from .._backend._dispatch import get_backend
from .._backend._ovr import (
    interp_knots, ovr_interp_rows, ovr_row_stats, ovr_score_blocks, stack_columns,
)
from .._backend._sort import sort_values
from ..base import BaseCalibrator
from ..utils._docstrings import substitute_docstring
from ._base import OneVsRestCalibrator
from ..utils.validation import DEFAULT_INPUT_TYPE
from ..utils._params import store_params

__all__ = ["IsotonicScaler"]


@substitute_docstring
class IsotonicScaler(OneVsRestCalibrator):
    """Isotonic calibration: a non-decreasing step-linear map of the log-odds.

    A binary problem fits one monotone map from the log-odds score
    ``s = z_1 - z_0`` of ``classes_[1]`` (or the 1-D score given as ``X``) to
    ``P(classes_[1])``. A multiclass problem fits one map per class, "class k
    versus the rest", on that class's one-vs-rest log-odds, and renormalises
    the rows.

    Parameters
    ----------
    %(calibrator_params)s
    clip : float in [0, 0.5) or None, default=1e-6
        ``eps``: bound every fitted map to ``[eps, 1 - eps]`` (the ``y_min`` /
        ``y_max`` of the isotonic fits), so that no predicted probability is
        exactly 0 or 1 and the log loss, hence :meth:`score`, stays finite
        (a plain isotonic fit gives probability 0 to any test point scored
        below every positive calibration example, and one such row makes the
        log loss infinite). ``None`` (or 0) keeps the plain isotonic fit of
        Zadrozny & Elkan, identical to scikit-learn's
        ``CalibratedClassifierCV(method="isotonic")``.

    Attributes
    ----------
    calibrators_ : list of sklearn.isotonic.IsotonicRegression
        The fitted monotone maps: one (for ``classes_[1]``) in the binary case,
        one per class otherwise. Their ``X_thresholds_`` are log-odds scores and
        their ``y_thresholds_`` probabilities.
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted; column ``j`` of the output is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).

    See Also
    --------
    skcal.PlattScaler : parametric (sigmoid) counterpart.
    sklearn.calibration.CalibratedClassifierCV : ``method="isotonic"`` is the
        same binary map on a classifier's ``decision_function``.

    Notes
    -----
    **Fit.** Each map is
    ``IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=eps,
    y_max=1-eps)``
    fitted by scikit-learn's pool-adjacent-violators algorithm to the 0/1
    targets "``y == class``" with the given ``sample_weight``: it minimises
    ``sum_i w_i (g(s_i) - t_i)^2`` over non-decreasing ``g``, which is also the
    maximum-likelihood monotone calibration map. The algorithm is exact and
    not iterative, so there is no ``n_iter_`` and no convergence warning.
    Prediction interpolates linearly between the fitted knots; scores outside
    the calibration range take the value of the nearest end (never NaN).

    **Scores.** With ``p_i = softmax(z_i)`` the score of class ``k`` is its
    one-vs-rest log-odds ``s_ik = log p_ik - log(1 - p_ik)``, computed without
    cancellation (see :class:`skcal.PlattScaler`). Any increasing
    function of ``p_ik`` gives the same isotonic fit; the log-odds keep
    distinct scores distinct where ``p_ik`` rounds to 1 in floating point.
    For two classes ``s = z_1 - z_0``, so the fit equals scikit-learn's
    ``CalibratedClassifierCV(method="isotonic")`` on that decision function.

    **Multiclass renormalisation.** ``P_ik = g_k(s_ik) / sum_j g_j(s_ij)``.
    If every ``g_j(s_ij)`` is 0 (possible only with ``clip=None``), the row gets
    the uniform distribution ``1 / n_classes``, as in scikit-learn, instead of
    ``0 / 0``. With ``clip=eps`` every ``g_j`` lies in ``[eps, 1 - eps]``;
    binary probabilities are then in ``[eps, 1 - eps]`` exactly, and
    multiclass ones, after renormalisation, lie in
    ``[eps / (n_classes (1 - eps)), (1 - eps) / (1 - eps + (n_classes - 1) eps)]``,
    so they are never exactly 0 or 1.

    **Memory and devices.** The fit computes the scores of a block of
    classes at a time from four per-row statistics, class-major, in at most
    an eighth of the input's size (at least one column; never the
    (n_samples, n_classes) matrix); for a torch tensor the rows are copied to
    host memory as float64 chunk by chunk. Without sample weights each
    class's map comes from two value sorts (all scores, the positives'
    scores) and scikit-learn's PAVA on the group means, with the same knots
    as ``IsotonicRegression.fit``, which is used with weights. Prediction
    (scores, interpolation, renormalisation) runs on the tensor's device; a
    CPU tensor is evaluated through NumPy (``IsotonicRegression.predict``)
    and returned as a tensor. Multiclass NumPy logits are predicted in row
    chunks with work arrays allocated once, each class's knots looked up on
    a grid (:class:`~skcal._backend._numpy.InterpTable`, ``np.interp``'s
    values bit for bit).

    References
    ----------
    B. Zadrozny, C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD 2002.

    Examples
    --------
    >>> from skcal import IsotonicScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)
    >>> P = IsotonicScaler(clip=1e-3).fit(X, y).predict_proba(X)
    >>> P.shape, bool(P.min() >= 1e-3)  # clipped: no probability 0 or 1
    ((1000, 2), True)
    """

    _binary_log_odds_only = True

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "clip": [Interval(Real, 0, 0.5, closed="left"), None],
    }

    def __init__(self, *, input_type=DEFAULT_INPUT_TYPE, classes=None, backend="auto", clip=1e-6):
        store_params(self, locals())

    def _new_calibrator(self):
        eps = 0.0 if self.clip is None else float(self.clip)
        return IsotonicRegression(
            increasing=True, out_of_bounds="clip", y_min=eps, y_max=1.0 - eps
        )

    # Large chunks: each costs one interpolation per class (a fixed overhead).
    # CPU tensors through NumPy: torch's CPU kernels for these many small
    # elementwise ops are ~5x slower on a loaded machine (spin-waiting threads).
    _predict_chunk_bytes = 1 << 24
    _predict_on_host = True

    def _fit_map(self, s, t, sample_weight, label):
        return self._new_calibrator().fit(s, t.astype(np.float64), sample_weight)

    #: Largest score block of a multiclass fit, as a fraction of the input's size.
    _SCORE_BLOCK_FRACTION = 0.125

    def _fit_multiclass(self, Z, y, sample_weight):
        """All classes' maps from blocks of (contiguous) score columns.

        Unweighted columns are fitted by :meth:`_fit_sorted`, weighted ones by
        ``IsotonicRegression.fit``.
        """
        n, K = Z.shape
        itemsize = Z.element_size() if hasattr(Z, "element_size") else Z.dtype.itemsize
        budget = int(self._SCORE_BLOCK_FRACTION * n * K * itemsize)
        order = np.argsort(y, kind="stable")
        ends = np.cumsum(np.bincount(y, minlength=K))
        maps = []
        for c0, c1, S in ovr_score_blocks(Z, ovr_row_stats(Z), budget):
            for k in range(c0, c1):
                s = S[k - c0]
                cal = None
                if sample_weight is None:
                    start = ends[k - 1] if k else 0
                    cal = self._fit_sorted(s, order[start : ends[k]])
                if cal is None:
                    cal = self._fit_class(s, y == k, sample_weight, k)
                maps.append(cal)
        return maps

    def _fit_sorted(self, s, pos_rows):
        """``IsotonicRegression.fit(s, t)`` for unit weights (``t``: 1 on ``pos_rows``).

        scikit-learn sorts the rows, averages the targets of equal scores
        (``_make_unique``: a score at least ``eps = finfo.resolution`` above
        its group's first starts a new group) and runs PAVA on the group means
        weighted by their sizes. With unit weights the sorted values of all
        scores (by radix passes, :func:`~skcal._backend._sort.sort_values`) and
        of the positives' scores (no argsort) give the same groups,
        means and weights (:meth:`_pava_knots`). None (use scikit-learn's fit)
        when two scores differ by less than ``eps`` without being equal (its
        chained grouping).
        """
        xs = sort_values(s)
        d = xs[1:] - xs[:-1]
        eps = np.finfo(np.float64).resolution
        if d.min(initial=np.inf) >= eps:  # all scores distinct: one row per group
            ux, size = xs, None
        else:
            new = d >= eps
            if np.count_nonzero(d) != np.count_nonzero(new):  # a gap in (0, eps)
                return None
            first = np.flatnonzero(new) + 1
            ux = xs[np.concatenate(([0], first))]
            size = np.diff(np.concatenate(([0], first, [s.size]))).astype(np.float64)
        # every positive's score is one of the group values: its group by
        # bisection (sorted keys: each search starts where the last ended)
        g = np.searchsorted(ux, np.sort(s[pos_rows]), side="left")
        return self._pava_knots(ux, size, g)

    def _pava_knots(self, ux, size, g):
        """The fitted map on groups ``ux`` (sizes ``size``, None: all 1) holding the positives ``g``.

        ``g``: the sorted group of every positive row. scikit-learn's fit is
        PAVA (``isotonic_regression``) on every group's mean target, weighted
        by its size, then the knots where the fitted values change. The
        groups without positives (target 0) between two positives' groups
        are pooled first into one entry of their total size: SciPy's PAVA
        (Busing 2022) absorbs a run of zeros into the block before it without
        changing that block's weighted sum (``0 * w``), or pools them into a
        block of value 0, adding integer weights exactly, so every block
        value, and the knots, are those of the unpooled fit; PAVA then runs
        on at most ``2 * positives + 1`` entries instead of one per row.
        """
        n_groups = ux.size
        if g.size:
            starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
            gp = g[starts]  # groups holding positives, increasing
            n_pos = np.diff(np.append(starts, g.size)).astype(np.float64)
        else:
            gp = np.zeros(0, dtype=np.intp)
            n_pos = np.zeros(0)
        m = gp.size
        zero_lo = np.concatenate(([0], gp + 1))  # the runs of groups without positives
        zero_hi = np.append(gp, n_groups)  # (one past their last group)
        if size is None:
            w_pos = np.ones(m)
            w_zero = (zero_hi - zero_lo).astype(np.float64)
        else:
            w_pos = size[gp]
            csum = np.concatenate(([0.0], np.cumsum(size)))
            w_zero = csum[zero_hi] - csum[zero_lo]
        # entries: zero run 0, positives' group 0, zero run 1, ..., zero run m
        mean = np.zeros(2 * m + 1)
        mean[1::2] = np.divide(n_pos, w_pos, out=n_pos)
        w = np.empty(2 * m + 1)
        w[0::2], w[1::2] = w_zero, w_pos
        lo = np.empty(2 * m + 1, dtype=np.intp)
        lo[0::2], lo[1::2] = zero_lo, gp
        hi = np.empty(2 * m + 1, dtype=np.intp)
        hi[0::2], hi[1::2] = zero_hi - 1, gp
        full = w > 0  # empty zero runs (adjacent positives' groups) are no entries
        if not full.all():
            mean, w, lo, hi = mean[full], w[full], lo[full], hi[full]
        cal = self._new_calibrator()
        # SciPy's PAVA and the clip, as ``sklearn.isotonic.isotonic_regression``
        # (its parameter validation costs ~0.5 ms a call: 100 classes, 50 ms)
        yf = np.clip(isotonic_regression(mean, weights=w).x, cal.y_min, cal.y_max)
        # scikit-learn keeps the first and last group of every run of equal
        # fitted values: here the first group of a run's first entry and the
        # last group of its last entry
        change = np.flatnonzero(yf[1:] != yf[:-1])
        first = lo[np.concatenate(([0], change + 1))]
        last = hi[np.append(change, yf.size - 1)]
        level = yf[np.concatenate(([0], change + 1))]
        two = last > first  # runs of two knots (first, last), the others of one
        idx, yk = np.repeat(first, 1 + two), np.repeat(level, 1 + two)
        idx[np.cumsum(1 + two)[two] - 1] = last[two]
        return self._set_knots(cal, ux[idx], yk)

    @staticmethod
    def _set_knots(cal, x, y):
        """``cal`` (an unfitted ``IsotonicRegression``) fitted to the knots ``(x, y)``."""
        cal.increasing_ = True
        cal.X_min_, cal.X_max_ = x[0], x[-1]
        cal.X_thresholds_, cal.y_thresholds_ = x, y
        cal._build_f(x, y)
        return cal

    def _knots(self):
        return [(cal.X_thresholds_, cal.y_thresholds_) for cal in self.calibrators_]

    def _chunk(self, Zc, log):
        """Calibrated (log-)probabilities of a row chunk (multiclass: ``ovr_interp_proba``)."""
        if self._is_binary():
            return super()._chunk(Zc, log)
        return get_backend(Zc).ovr_interp_proba(self._scores(Zc), self._knots(), log)

    def _predict_rows(self, Z, log, mix=None):
        """Multiclass NumPy logits: :func:`~skcal._backend._ovr.ovr_interp_rows` (work arrays reused)."""
        if isinstance(Z, np.ndarray) and not self._is_binary():
            return ovr_interp_rows(Z, self._knots(), log, mix, self._predict_chunk_bytes)
        return None if mix is not None else super()._predict_rows(Z, log)

    def _mixed_proba(self, Z, keep, add):
        """``keep * predict_proba(Z) + add`` of validated multiclass NumPy logits, or None.

        The uniform mixture of :class:`~skcal.SmoothedCalibrator`, applied to
        each row chunk of the output as it is written (the same float
        operations as on the whole output); None where this path does not
        apply (binary, tensors), for the caller's own mixture.
        """
        return self._predict_rows(Z, False, (keep, add))

    def _map_scores(self, S):
        """Interpolate each class's fitted knots at its score column."""
        return stack_columns(
            [
                interp_knots(S[:, j], cal.X_thresholds_, cal.y_thresholds_)
                for j, cal in enumerate(self.calibrators_)
            ]
        )

    def _torch_spec(self):
        return {
            "kind": "ovr_interp",
            "x": [c.X_thresholds_ for c in self.calibrators_],
            "y": [c.y_thresholds_ for c in self.calibrators_],
        }
