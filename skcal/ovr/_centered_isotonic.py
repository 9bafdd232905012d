"""Centered isotonic regression (Oron & Flournoy 2017) on log-odds scores.

:func:`centered_isotonic_knots` turns SciPy's pool-adjacent-violators fit
(:func:`scipy.optimize.isotonic_regression`, the one scikit-learn's
isotonic regression calls) into the knots of the
centered map; :class:`CenteredIsotonicScaler` evaluates and exports them with
:class:`~skcal.IsotonicScaler`'s interpolation code.
"""

import numpy as np
# the PAVA that scikit-learn's isotonic_regression calls, without its
# validation (~0.14 ms a call, once per class)
from scipy.optimize import isotonic_regression

from .._backend._numpy import chunk_rows
from .._backend._sort import radix_pays, sort_values
from ..utils._docstrings import substitute_docstring
from ._isotonic import IsotonicScaler

__all__ = ["CenteredIsotonicScaler", "centered_isotonic_knots"]

#: Adjacent isotonic values closer than this fraction of the largest |value|
#: are one level set (one block): they differ only by rounding.
LEVEL_RTOL = 1e-12


def _pooled_by_argsort(s, t, sample_weight):
    """Distinct scores ``ux`` (sorted), their total weights ``W`` and mean targets ``m``.

    Rows of weight 0 are left out; equal scores are pooled.
    """
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, np.float64)
    keep = w > 0
    if not keep.all():
        s, t, w = s[keep], t[keep], w[keep]
    # ties are pooled below, so the order within them is free: no stable sort
    order = np.argsort(s)
    return _pooled_ties(s[order], t[order], w[order])


def _pooled_ties(xs, t, w=None):
    """Distinct scores, total weights and mean targets of rows sorted by score (``w=None``: unit weights)."""
    starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))
    if w is None:
        w = np.ones_like(xs)
    if starts.size == xs.size:  # distinct scores: no pooling
        return xs, w, t
    W = np.add.reduceat(w, starts)
    return xs[starts], W, np.add.reduceat(w * t, starts) / W


def _runs_of_pooled(ux, W, m):
    """Runs of consecutive distinct scores with equal mean targets: ``(ux, W, rs, mr, Wr)``.

    From the distinct scores ``ux``, their weights ``W`` and mean targets
    ``m``: the runs' first positions ``rs`` in ``ux``, their mean targets
    ``mr`` and total weights ``Wr`` (the form :func:`_knots_of_runs` takes).
    """
    run = np.empty(ux.size, dtype=bool)
    run[0] = True
    np.not_equal(m[1:], m[:-1], out=run[1:])
    rs = np.flatnonzero(run)
    if rs.size == ux.size:
        return ux, W, rs, m, W
    return ux, W, rs, m[rs], np.add.reduceat(W, rs)


#: Unweighted 0/1 targets whose smaller class has at most this fraction of
#: the rows (one-vs-rest of many classes) are pooled by value sorts, not an
#: argsort of the rows.
_SORTED_MINORITY = 0.125


def _alternating_runs(xs, n, rs, first):
    """Groups of runs of 0/1 targets along ``n`` distinct sorted scores ``xs`` (unit weights).

    The targets change value at each of ``rs``, the runs' first positions
    (``rs[0] = 0``); ``first`` is the target of the first run. Each run of
    1s is pooled with the run of 0s after it (the isotonic fit is equal on
    any two neighbours whose targets decrease, so PAVA would pool them
    first), which halves PAVA's input; a leading run of 0s is a group of
    its own. Returns :func:`_runs_of_pooled`'s tuple with ``W = None`` (unit
    weights), the groups in place of the runs.
    """
    off = 0 if first else 1
    up = rs[off::2]  # first position of each run of 1s
    down = rs[off + 1::2]  # one past its last (missing for a final run of 1s)
    gs = np.concatenate((np.zeros(off, dtype=up.dtype), up))  # a copy: ``rs`` is freed after
    Wg = np.empty(gs.size)
    np.subtract(gs[1:], gs[:-1], out=Wg[:-1])
    Wg[-1] = n - gs[-1]
    mg = np.empty(gs.size)
    mg[:off] = 0.0
    np.subtract(down, up[:down.size], out=mg[off:off + down.size])
    if down.size < up.size:
        mg[-1] = n - up[-1]
    mg /= Wg
    return xs, None, gs, mg, Wg


#: The low 63 bits of an int64.
_LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)


def _sorted_with_targets(s, t):
    """The scores ``s`` sorted and the boolean targets ``t`` in their order, from one value sort; or None.

    The float64 bits of each score, read as an int64 whose low 63 bits are
    flipped for negative scores, order like the scores (``-0.0`` just below
    ``+0.0``). Less the unused range between the largest negative key and the
    smallest non-negative one, these keys span less than ``2**63`` unless the
    scores reach both towards 0 and far from it on both sides of 0 (e.g.
    ``-0.0`` and ``+0.0`` with scores of magnitude 2 or more of both signs):
    None then. Otherwise each key, less the smallest, shifted left by one bit
    with the target in the freed last bit fits 64 bits, and one value sort of
    these (several times faster than an argsort of the rows and its
    gathers: radix passes where :func:`~skcal._backend._sort.radix_pays`,
    else ``np.sort``, of them as the bits of positive floats where they fit)
    gives both exactly: the sorted keys decode to the sorted scores bit
    for bit, and their last bits are the targets (in any order among equal
    scores).
    """
    b = s.view(np.int64)
    k = b >> 63
    k &= _LOW63
    k ^= b
    lo, hi = int(k.min()), int(k.max())
    above = 0  # the keys from ``above`` up are the non-negative ones
    gap = 0
    if hi - lo >= 2**63:  # keys of both signs: close the range between them
        u = k.view(np.uint64)  # (the negative keys above the others)
        above = int(u.max()) - 2**64 + 1
        gap = int(u.min()) - above
        hi -= gap
        if hi - lo >= 2**63:
            return None
        for sl in chunk_rows(k.size, 1, chunk_bytes=_GAP_CHUNK_BYTES):
            c = u[sl]
            m = c >> np.uint64(63)  # 1 for the negative keys
            m -= np.uint64(1)  # all ones for the others: they are lowered by the gap
            m &= np.uint64(gap)
            c -= m  # modulo 2**64: the gap may exceed the int64 range
    # the keys less ``offset``, doubled and with the target, are the bits of
    # finite positive normal floats where they fit (their float sort, faster
    # here, orders them as integers), else int64s: the keys then span
    # [-2**62, 2**62) less it
    as_float = 2 * (hi - lo) + 2**52 < _INF_BITS
    offset = lo - 2**51 if as_float else lo + 2**62
    k -= offset
    k <<= 1
    k |= t
    if radix_pays():  # np.sort is not SIMD here: radix passes on the int64 keys
        k = sort_values(k)
    elif as_float:
        k.view(np.float64).sort()
    else:
        k.sort()
    lab = k.view(np.uint8)[_LOW_BYTE::8] & 1  # the last bits
    k >>= 1
    k += offset
    n_neg = int(np.searchsorted(k, above))  # sorted: the negative keys first
    if gap:
        k.view(np.uint64)[n_neg:] += np.uint64(gap)
    k[:n_neg] ^= _LOW63
    return k.view(np.float64), lab.view(bool)


#: The bits of +inf as an int64 (larger ones are NaN).
_INF_BITS = 0x7FF0000000000000


#: Row chunk of the gap's closing in :func:`_sorted_with_targets` (its temporary, in cache).
_GAP_CHUNK_BYTES = 1 << 17


#: Position of the lowest byte of an int64 among its bytes.
_LOW_BYTE = 0 if np.little_endian else 7


def _distinct(xs):
    """Whether the sorted scores ``xs`` are all distinct."""
    return bool(np.all(xs[1:] != xs[:-1]))


def _runs_of_unit(s, t, pos_rows=None):
    """:func:`_runs_of_pooled` for unit weights and 0/1 targets.

    ``t`` is a boolean mask, or None with ``pos_rows`` the rows of target 1.
    The scores are value-sorted. With distinct scores (the usual case for
    continuous scores) the runs of equal targets along them come from a
    value sort of keys that carry the target (:func:`_sorted_with_targets`)
    or, when the smaller class holds at most :data:`_SORTED_MINORITY` of the
    rows, from the smaller class's sorted scores placed by bisection among
    all (sorted by :func:`~skcal._backend._sort.sort_values`): stretches of
    consecutive positions are its runs, the gaps between them the other
    class's. Equal scores are pooled first: by
    counting the smaller class's scores at each distinct score, or along
    that value sort (an argsort of the rows where its keys do not fit) for
    balanced classes.
    """
    n = s.size
    n_pos = int(np.count_nonzero(t)) if pos_rows is None else len(pos_rows)
    negatives_fewer = 2 * n_pos > n
    if min(n_pos, n - n_pos) > _SORTED_MINORITY * n:
        if t is None:
            t = np.zeros(n, dtype=bool)
            t[pos_rows] = True
        xs_lab = _sorted_with_targets(s, t)
        if xs_lab is None:
            order = np.argsort(s)
            xs_lab = s[order], t[order]
        xs, lab = xs_lab
        if not _distinct(xs):
            return _runs_of_pooled(*_pooled_ties(xs, lab.astype(np.float64)))
        rs = np.flatnonzero(np.concatenate([[True], lab[1:] != lab[:-1]]))
        return _alternating_runs(xs, n, rs, lab[0])
    xs = sort_values(s)
    if negatives_fewer:
        few = s[~t] if t is not None else np.delete(s, pos_rows)
    else:
        few = s[t] if t is not None else s[pos_rows]
    few = np.sort(few)
    if not _distinct(xs):  # ties: pool equal scores first
        starts = np.flatnonzero(np.concatenate([[True], xs[1:] != xs[:-1]]))
        ux = xs[starts]
        W = np.diff(np.append(starts, n)).astype(np.float64)
        count = np.bincount(np.searchsorted(ux, few), minlength=ux.size).astype(np.float64)
        return _runs_of_pooled(ux, W, (W - count if negatives_fewer else count) / W)
    if few.size == 0:  # one run
        return _alternating_runs(xs, n, np.zeros(1, dtype=np.intp), negatives_fewer)
    pos = np.searchsorted(xs, few)
    brk = np.flatnonzero(pos[1:] != pos[:-1] + 1)
    a1 = pos[np.concatenate([[0], brk + 1])]  # first position of each run of the smaller class
    b1 = pos[np.append(brk, pos.size - 1)] + 1  # one past its last
    rs = np.empty(2 * a1.size + 1, dtype=np.intp)  # 0, a1[0], b1[0], a1[1], b1[1], ...
    rs[0] = 0
    rs[1::2] = a1
    rs[2::2] = b1
    if b1[-1] == n:  # no run of the larger class after the last
        rs = rs[:-1]
    if a1[0] == 0:  # the smaller class's run comes first
        return _alternating_runs(xs, n, rs[1:], not negatives_fewer)
    return _alternating_runs(xs, n, rs, negatives_fewer)


def _clip_knots(xk, yk, lo, hi):
    """Knots of ``clip(g, lo, hi)`` for the non-decreasing piecewise-linear ``g`` through ``(xk, yk)``.

    Where a segment crosses ``lo`` or ``hi`` the crossing becomes a knot, so
    that interpolating the clipped knots is exactly the clipped map.
    """
    xs, ys = [xk[:1]], [yk[:1]]
    for level in (lo, hi):
        i = np.flatnonzero((yk[:-1] < level) & (yk[1:] > level))
        if i.size:
            x_cross = xk[i] + (level - yk[i]) * (xk[i + 1] - xk[i]) / (yk[i + 1] - yk[i])
            xs.append(x_cross)
            ys.append(np.full(i.size, level))
    xs.append(xk[1:])
    ys.append(yk[1:])
    x, y = np.concatenate(xs), np.concatenate(ys)
    order = np.argsort(x, kind="stable")
    x, y = x[order], np.clip(y[order], lo, hi)
    # a crossing that rounds onto an existing knot: keep one knot per x
    keep = np.concatenate([x[1:] != x[:-1], [True]])
    return x[keep], y[keep]


def centered_isotonic_knots(s, t, sample_weight=None, *, y_min=None, y_max=None):
    """Knots of the centered isotonic regression of targets ``t`` on scores ``s``.

    Parameters
    ----------
    s : ndarray of shape (n_samples,)
        Scores, finite; used in float64.
    t : ndarray of shape (n_samples,)
        Targets (0/1 for calibration; any reals).
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights; rows of weight 0 are left out.
    y_min, y_max : float, default=None
        Bounds of the returned map (None: unbounded).

    Returns
    -------
    x : ndarray of shape (m,), float64
        Strictly increasing knots (``m >= 1``).
    y : ndarray of shape (m,), float64
        Non-decreasing values; the map is ``np.interp(s, x, y)`` (constant
        beyond the ends).

    Notes
    -----
    Equal scores are pooled (their weights summed, their targets averaged
    with weights). The pool-adjacent-violators algorithm (SciPy's) gives
    the isotonic fit ``g``, constant on *blocks* of consecutive distinct
    scores (its level sets; adjacent values within :data:`LEVEL_RTOL` of
    the largest ``|g|`` are one block, since they differ only by rounding). Centered isotonic regression (Oron & Flournoy 2017, Sec. 2.2)
    replaces each block by one knot at its weighted score centre
    ``sum_block w_j s_j / sum_block w_j`` with the block's value, and
    interpolates linearly between knots, so the map is strictly increasing
    from the first centre to the last. As in the ``cir-model`` package that
    probmetrics wraps: the first and last blocks also keep a knot at the
    lowest and highest score (the map is flat from there to their
    centres), and a block whose value is exactly 0 or 1 keeps both its end
    scores instead of its centre (the map stays at 0 or 1 on all of it).
    The bounds are applied to the interpolated map, by adding the knots
    where it crosses them.

    Runs of consecutive distinct scores with equal mean targets are pooled
    before PAVA (the isotonic fit is constant on each run), which changes
    the work, not the fit: a one-vs-rest target with few positives has only
    about twice as many runs as positives; each run of 1s is also pooled
    with the run of 0s after it (PAVA would pool them first). Unweighted
    boolean targets are ordered by value sorts instead of an argsort of the
    rows (:func:`_runs_of_unit`): of integer keys that carry the target, or
    of the scores and of the smaller class's scores.
    """
    s = np.asarray(s, dtype=np.float64)
    t = np.asarray(t)
    if sample_weight is None and t.dtype == bool:
        runs = _runs_of_unit(s, t)
    else:
        runs = _runs_of_pooled(*_pooled_by_argsort(s, t.astype(np.float64, copy=False), sample_weight))
    return _knots_of_runs(*runs, y_min=y_min, y_max=y_max)


def _knots_of_runs(ux, W, rs, mr, Wr, *, y_min=None, y_max=None):
    """:func:`centered_isotonic_knots` from the runs of :func:`_runs_of_pooled`."""
    # the isotonic fit is constant on each run of equal means (replacing two
    # unequal fitted values over equal targets by one in between lowers the
    # loss), so PAVA runs on the runs, with their weights
    fit = isotonic_regression(mr, weights=Wr)
    r = fit.blocks.copy()  # PAVA's blocks: runs r[i]..r[i + 1] - 1
    v = fit.x[r[:-1]]  # their values
    gw = fit.weights.copy()
    del fit
    # level sets of the fit: adjacent blocks whose values are equal up to the
    # rounding of the pooled means (PAVA does not pool equal neighbours, and
    # the weights' scale can decide whether two equal means round alike)
    new = np.empty(v.size, dtype=bool)
    new[0] = True
    np.greater(v[1:] - v[:-1], LEVEL_RTOL * max(float(np.max(np.abs(v))), 1e-300), out=new[1:])
    li = np.flatnonzero(new)  # first block of each level set
    Wb = np.add.reduceat(gw, li)
    value = np.clip(np.add.reduceat(gw * v, li) / Wb, v[li], v[np.append(li[1:], v.size) - 1])
    start = rs[r[li]]  # first distinct score of each level set
    first = ux[start]
    last = ux[np.append(start[1:], ux.size) - 1]
    centre = np.clip(np.add.reduceat(ux if W is None else W * ux, start) / Wb, first, last)
    if value[0] == 0.0:
        centre[0] = last[0]
    if value[-1] == 1.0:
        centre[-1] = first[-1]
    x = np.concatenate([[first[0]], centre, [last[-1]]])
    y = np.concatenate([[value[0]], value, [value[-1]]])
    distinct = np.concatenate([[True], x[1:] != x[:-1]])
    x, y = x[distinct], y[distinct]
    lo = -np.inf if y_min is None else float(y_min)
    hi = np.inf if y_max is None else float(y_max)
    if y[0] < lo or y[-1] > hi:
        x, y = _clip_knots(x, y, lo, hi)
    return x, y


@substitute_docstring
class CenteredIsotonicScaler(IsotonicScaler):
    """Centered isotonic calibration: isotonic regression made strictly increasing.

    Isotonic regression (:class:`IsotonicScaler`) is a step function: every
    pooled block of scores gets one probability, which ties the calibrated
    probabilities of different inputs and so lowers ranking metrics (AUC).
    Centered isotonic regression (CIR, Oron & Flournoy 2017) keeps the
    isotonic fit's values but puts each block's value at the block's score
    centre and interpolates linearly between centres: the map is strictly
    increasing between the first and the last centre. A binary problem fits
    one map of the log-odds ``s = z_1 - z_0`` (or the 1-D score given as
    ``X``); a multiclass problem one per class on its one-vs-rest log-odds,
    renormalised.

    Parameters
    ----------
    %(calibrator_params)s
    clip : float in [0, 0.5) or None, default=1e-6
        ``eps``: the map is ``clip(cir(s), eps, 1 - eps)``, so that no
        predicted probability is exactly 0 or 1 and the log loss stays
        finite. ``None`` (or 0): the plain CIR map.

    Attributes
    ----------
    calibrators_ : list of sklearn.isotonic.IsotonicRegression
        One per map (one for ``classes_[1]`` in the binary case, one per
        class otherwise), holding the CIR knots: ``X_thresholds_`` (strictly
        increasing log-odds scores) and ``y_thresholds_`` (probabilities);
        ``predict`` of each interpolates them.
    classes_ : ndarray of shape (n_classes,)
        Class labels; column ``j`` of ``X`` is ``classes_[j]``.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (1 for a 1-D binary score).

    See Also
    --------
    IsotonicScaler : the step-function fit CIR starts from.
    centered_isotonic_knots : the knots of one map.

    Notes
    -----
    **Fit.** Per map: the pool-adjacent-violators fit (SciPy's) of the 0/1
    targets "``y == class``" on the distinct scores (equal scores pooled,
    with ``sample_weight``), then the CIR knots of
    :func:`~skcal.ovr._centered_isotonic.centered_isotonic_knots`: each
    pooled block becomes one knot at its weighted score centre with the
    block's value; the lowest and highest calibration scores keep the first
    and last block values (flat ends), and a block of value exactly 0 or 1
    keeps its two ends. Exact and not iterative. Sample weights enter the
    block values and centres only as weighted means, so integer weights fit
    exactly like repeated rows and rescaling every weight changes nothing.

    **Prediction** interpolates linearly between the knots (constant beyond
    the calibration range), clips to ``[eps, 1 - eps]`` (the crossings are
    knots, so the clip is exact), and renormalises multiclass rows as
    :class:`IsotonicScaler` does; the same knots are exported to torch and
    ONNX.

    References
    ----------
    A. P. Oron, N. Flournoy, "Centered Isotonic Regression: Point and
    Interval Estimation for Dose-Response Studies", Statistics in
    Biopharmaceutical Research 9(3), 258-267, 2017.

    B. Zadrozny, C. Elkan, "Transforming classifier scores into accurate
    multiclass probability estimates", KDD 2002 (isotonic calibration,
    one-vs-rest).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import CenteredIsotonicScaler, IsotonicScaler
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 2)
    >>> p_cir = CenteredIsotonicScaler().fit(X, y).predict_proba(X)[:, 1]
    >>> p_iso = IsotonicScaler().fit(X, y).predict_proba(X)[:, 1]
    >>> len(np.unique(p_cir)) > 10 * len(np.unique(p_iso))  # far fewer ties
    True
    """

    # parameters, their constraints and __init__: IsotonicScaler's

    _fit_reads_score_view = True

    def _fit_map(self, s, t, sample_weight, label):
        cal = self._new_calibrator()  # IsotonicRegression(y_min=eps, y_max=1 - eps)
        return self._set_knots(cal, *centered_isotonic_knots(s, t, sample_weight, **self._bounds(cal)))

    def _bounds(self, cal):
        bounded = bool(self.clip)
        return {"y_min": cal.y_min if bounded else None, "y_max": cal.y_max if bounded else None}

    def _fit_sorted(self, s, pos_rows):
        """The map of one unweighted class whose positives are the rows ``pos_rows``.

        Called by :meth:`IsotonicScaler._fit_multiclass` (score blocks in
        cache, one argsort of ``y`` for all classes' positives); the runs
        come from :func:`_runs_of_unit` (value sorts, no argsort of the rows).
        """
        cal = self._new_calibrator()
        runs = _runs_of_unit(s, None, pos_rows)
        return self._set_knots(cal, *_knots_of_runs(*runs, **self._bounds(cal)))
