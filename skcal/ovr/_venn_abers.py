"""Venn-Abers predictors (Vovk & Petej 2012; Vovk, Petej & Fedorova 2015): IVAP and CVAP."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._backend._ovr import stack_columns
from .._backend._steps import step_lookup
from ..base import BaseCalibrator
from ..utils._docstrings import substitute_docstring
from .._backend._array import like_input
from ._base import HostStepMapCalibrator, unzip_maps, warn_constant_scores
from ._binning import distinct_scores, unique_scores
from ..utils._weights import weight_unit
from ..utils._params import store_params

__all__ = ["VennAbersCalibrator", "venn_abers_table"]


def _f1(px, py):
    """Vovk et al. (2015) Algorithms 1-2: p1 at the positions of the distinct scores.

    ``px, py``: the cumulative sum diagram ``P_0 = (0, 0), ..., P_k`` as lists.
    Points are kept in plain lists (index ``i + 1`` holds ``P_i``, index 0
    the extra point ``P_{-1} = (-1, -1)``), the stacks are preallocated lists
    with an index of their top, and the geometric tests are inlined: this
    loop is the whole cost of the fit.
    """
    k = len(px) - 1
    X = [-1.0] + list(px)
    Y = [-1.0] + list(py)
    # Algorithm 1: lower convex hull of P_{-1}, P_0, ..., P_k (a stack)
    sx, sy = [0.0] * (k + 2), [0.0] * (k + 2)
    sx[0], sy[0], sx[1], sy[1] = X[0], Y[0], X[1], Y[1]
    top = 1
    for i in range(2, k + 2):
        x, y = X[i], Y[i]
        ax, ay = sx[top], sy[top]
        while top > 0:
            bx, by = sx[top - 1], sy[top - 1]
            if (ax - bx) * (y - ay) - (ay - by) * (x - ax) <= 0:
                top -= 1
                ax, ay = bx, by
            else:
                break
        top += 1
        sx[top], sy[top] = x, y
    # the hull reversed: its first point on top
    rx = sx[top::-1] + [0.0] * (k + 2)
    ry = sy[top::-1] + [0.0] * (k + 2)
    # Algorithm 2
    F1 = [0.0] * (k + 1)
    for i in range(1, k + 1):
        tx, ty, nx, ny = rx[top], ry[top], rx[top - 1], ry[top - 1]
        f = (ny - ty) / (nx - tx)
        F1[i] = f
        # P_{i-1} <- P_{i-2} + P_i - P_{i-1}
        x = X[i - 1] + X[i + 1] - X[i]
        y = Y[i - 1] + Y[i + 1] - Y[i]
        X[i], Y[i] = x, y
        if y >= ty + f * (x - tx):  # on or above the line top-nextToTop
            continue
        top -= 1
        while top > 0:
            ax, ay, bx, by = rx[top], ry[top], rx[top - 1], ry[top - 1]
            if (ax - x) * (by - ay) - (ay - y) * (bx - ax) <= 0:
                top -= 1
            else:
                break
        top += 1
        rx[top], ry[top] = x, y
    return F1


def _p1(W, Y, unit):
    """``p1`` of :func:`venn_abers_table` from the distinct scores' weights ``W`` and positive weights ``Y``."""
    px = [0.0] + (np.cumsum(W) / unit).tolist()
    py = [0.0] + (np.cumsum(Y) / unit).tolist()
    return np.array(_f1(px, py)[1:] + [1.0])  # p1[m]: m scores strictly below the test


def venn_abers_table(s, y, sample_weight=None, unit=None):
    """The two isotonic fits with a test point, for every possible test-score position.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
        Calibration scores.
    y : ndarray of shape (n_samples,), bool
        Calibration labels.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights; the test point weighs ``unit``.
    unit : float, default=None
        Weight of the test point; by default one row,
        :func:`~skcal.utils._weights.weight_unit` of the data (1 for unweighted
        data and integer weights, which act as copies).

    Returns
    -------
    scores : ndarray of shape (k,)
        The sorted distinct calibration scores (rows of weight 0 dropped).
    p0, p1 : ndarray of shape (k + 1,)
        For a test score ``x``: ``p0[#{scores <= x}]`` is the isotonic fit at
        ``x`` of the calibration set plus ``(x, 0)``, and
        ``p1[#{scores < x}]`` the fit at ``x`` of the set plus ``(x, 1)``.

    Notes
    -----
    The isotonic fit at a point is the slope of the greatest convex minorant
    of the cumulative sum diagram. Vovk, Petej & Fedorova (2015, Algorithms
    1-4) compute it for every position of the test point from one stack
    sweep per label (here Algorithms 1-2 twice, the second time on the
    reflected data): ``O(k)`` after an ``O(n log n)`` sort, exactly (no
    approximation of the extra point). Sample weights enter the diagram as
    the points' widths, the test point having width ``unit``.
    """
    u, W, Y = distinct_scores(s, y, sample_weight)
    if unit is None:
        unit = weight_unit(sample_weight)
    p1 = _p1(W, Y, unit)
    # p0 (Algorithms 3-4) is p1 mirrored: the fit with (x, 0) at x is 1 minus
    # the fit with (-x, 1) at -x of the data reflected (scores -s, labels not
    # y), where m scores at or below x are k - m strictly below -x
    p0 = 1.0 - _p1(W[::-1], (W - Y)[::-1], unit)[::-1]  # p0[m]: m scores at or below
    return u, np.clip(p0, 0.0, 1.0), np.clip(p1, 0.0, 1.0)


@substitute_docstring
class VennAbersCalibrator(HostStepMapCalibrator):
    """Venn-Abers calibration: inductive (IVAP) or cross (CVAP) Venn-Abers predictors.

    Parameters
    ----------
    %(calibrator_params)s
    method : {"ivap", "cvap"}, default="ivap"
        ``"ivap"``: the inductive Venn-Abers predictor on the whole calibration
        set; ``"cvap"``: the cross Venn-Abers predictor, one IVAP per fold
        (each calibrated on the other folds) merged by geometric means.
    n_folds : int, default=5
        Folds of ``"cvap"``.

    Attributes
    ----------
    scores_ : ndarray or list
        Sorted distinct calibration scores of each map (for ``"cvap"`` a list
        over folds per class).
    p0_, p1_ : ndarray or list
        The precomputed isotonic fits (:func:`venn_abers_table`).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    skcal.IsotonicScaler : the isotonic fit without the test point.

    Notes
    -----
    **IVAP** (Vovk & Petej 2012; Vovk et al. 2015, Section 2). For a test
    score ``x``, fit isotonic regression to the calibration set plus
    ``(x, 0)`` and read its value ``p0`` at ``x``; likewise ``p1`` with
    ``(x, 1)``. The pair ``(p0, p1)``, ``p0 <= p1``, is a multiprobability
    prediction, perfectly calibrated in the sense of Venn predictors under
    exchangeability; :meth:`predict_interval` returns it. :meth:`predict_proba`
    returns the merged probability ``p = p1 / (1 - p0 + p1)``, which minimises
    the worst-case log loss over the pair (Vovk et al. 2015, Eq. 9), and lies
    in ``[p0, p1]``. The fits are exact, precomputed for every possible
    position of ``x`` among the calibration scores by Vovk et al.'s
    Algorithms 1-4 (1-2 run twice, see :func:`venn_abers_table`):
    ``O(n log n)`` fit, one binary search per prediction, batched over all
    test rows.

    **CVAP** (Vovk et al. 2015, Section 3). The calibration set is split into
    ``n_folds`` folds; IVAP ``j`` is calibrated on all folds but ``j``, giving
    ``(p0_j, p1_j)``; the merged probability is
    ``GM(p1) / (GM(1 - p0) + GM(p1))`` with ``GM`` the geometric mean over
    folds. In Vovk et al. each fold also retrains the underlying classifier;
    a post-hoc calibrator sees fixed scores, so here CVAP only averages over
    calibration subsets (combine with :class:`~skcal.CalibratedClassifier`
    for per-fold models). Folds are assigned by the rank of the distinct
    score modulo ``n_folds`` (deterministic; copies of a score stay together).
    :meth:`predict_interval` returns ``(1 - GM(1 - p0), GM(p1))`` sorted, the
    pair whose merge is ``p``.

    **Constant scores** (one distinct calibration score) give the base rate,
    ``p0 = p1``, with a ``UserWarning``: the data say nothing about the
    order of scores, and the pair of a test point at the one score would
    depend on the weight of the test point only.

    **Multiclass.** One-vs-rest: each class's merged ``p`` is renormalised
    over the classes; :meth:`predict_interval` returns the per-class pairs
    (not renormalised). The pairs bound the merged ``p`` of each class, not
    the renormalised ``predict_proba``, which lies outside its class's pair
    for most entries on a real set (53% on CIFAR-10, 10 classes).

    **Weights.** The test point added to each fit weighs one row (for CVAP,
    one row of the whole calibration set):

    %(weight_unit)s

    **Devices.** The fit sorts the scores on the CPU; prediction is two
    ``searchsorted`` lookups per class on the tensor's device.

    References
    ----------
    V. Vovk, I. Petej, "Venn-Abers predictors", UAI 2014 (arXiv:1211.0025, 2012).

    V. Vovk, I. Petej, V. Fedorova, "Large-scale probabilistic predictors with
    and without guarantees of validity", NeurIPS 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import VennAbersCalibrator
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)
    >>> va = VennAbersCalibrator().fit(X, y)
    >>> p0, p1 = va.predict_interval(X[:3])
    >>> p = va.predict_proba(X[:3])[:, 1]
    >>> bool(np.all((p0 <= p) & (p <= p1)))  # the point estimate is in the interval
    True
    """

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "method": [StrOptions({"ivap", "cvap"})],
        "n_folds": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, *, input_type="logits", classes=None, backend="auto", method="ivap",
                 n_folds=5):
        store_params(self, locals())

    def _fit_map(self, s, t, sample_weight, label):
        u = unique_scores(s, sample_weight)
        unit = weight_unit(sample_weight)
        if u.size == 1:  # constant scores: the base rate, p0 = p1
            w = np.ones(s.size) if sample_weight is None else sample_weight
            r = np.full(2, float(w[t].sum()) / float(w.sum()))
            warn_constant_scores("Venn-Abers", label)
            if self.method == "ivap":
                return u, r, r
            return [u] * self.n_folds, [r] * self.n_folds, [r] * self.n_folds
        if self.method == "ivap":
            return venn_abers_table(s, t, sample_weight, unit)
        # fold of each row: the rank of its distinct score modulo n_folds
        fold = np.unique(s, return_inverse=True)[1] % self.n_folds
        tables = []
        for f in range(self.n_folds):
            keep = fold != f
            w = None if sample_weight is None else sample_weight[keep]
            tables.append(venn_abers_table(s[keep], t[keep], w, unit))
        return tuple(list(v) for v in zip(*tables))

    def _set_maps(self, maps):
        self.scores_, self.p0_, self.p1_ = unzip_maps(maps)

    def _tables(self):
        if self._is_binary():
            return [(self.scores_, self.p0_, self.p1_)]
        return list(zip(self.scores_, self.p0_, self.p1_))

    def _pairs(self, x, table):
        """(p0, p1) of one score column: merged over folds for CVAP."""
        u, p0, p1 = table
        if self.method == "ivap":
            return step_lookup(x, u, p0, right=True), step_lookup(x, u, p1, right=False)
        K = len(u)
        g0 = g1 = 1.0  # products over the folds
        for uf, a, b in zip(u, p0, p1):
            g0 = g0 * (1.0 - step_lookup(x, uf, a, right=True))
            g1 = g1 * step_lookup(x, uf, b, right=False)
        return 1.0 - g0 ** (1.0 / K), g1 ** (1.0 / K)

    def _map_scores(self, S):
        cols = []
        for j, table in enumerate(self._tables()):
            p0, p1 = self._pairs(S[:, j], table)
            cols.append(p1 / (1.0 - p0 + p1))
        return stack_columns(cols)

    def predict_interval(self, X):
        """The multiprobability pair ``(p0, p1)`` of each row and class.

        Parameters
        ----------
        X : array-like or torch.Tensor of shape (n_samples, n_classes), (n_samples, 1) or (n_samples,)
            Outputs of the same kind as in ``fit``.

        Returns
        -------
        p0, p1 : ndarray or torch.Tensor
            Shape (n_samples,) for a binary problem (the pair of
            ``classes_[1]``), (n_samples, n_classes) otherwise (one-vs-rest
            pairs, not renormalised). ``p0 <= p1``, and the merged
            probability ``p1 / (1 - p0 + p1)`` lies between them; it is
            ``predict_proba`` for a binary problem, while with more than two
            classes ``predict_proba`` renormalises it over the classes and
            need not lie in the pair. float64
            for float64 input, float32 otherwise; tensors on the input's
            device for tensor input.

        Raises
        ------
        ValueError
            For invalid ``X``.
        sklearn.exceptions.NotFittedError
            If called before ``fit``.
        """
        check_is_fitted(self)
        Z, xp = self._prepare(self._validate_X(X, reset=False))
        m = 1 if self._is_binary() else Z.shape[1]
        out0, out1 = self._map_rows(Z, self._interval_chunk, [m, m])
        if m == 1:
            out0, out1 = out0[:, 0], out1[:, 0]
        return like_input(out0, X), like_input(out1, X)

    def _interval_chunk(self, Zc):
        """The sorted pairs ``(p0, p1)`` of a row chunk, one column per map."""
        S = self._scores(Zc)
        pairs = [self._pairs(S[:, j], table) for j, table in enumerate(self._tables())]
        if self.method == "cvap":
            pairs = [_sorted_pair(a, b) for a, b in pairs]
        return [stack_columns(c) for c in zip(*pairs)]


def _sorted_pair(a, b):
    """Elementwise ``(min, max)`` of two arrays or tensors of one kind."""
    swap = b < a
    return a + (b - a) * swap, b + (a - b) * swap
