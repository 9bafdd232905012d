"""The bin rules behind every binned calibration metric (NumPy kernels).

:func:`uniform_bin_ids` and :func:`quantile_edges` define the bins;
:mod:`skcal.metrics._rows` applies them row chunk by row chunk and
accumulates the per-bin sums from which the calibration errors,
:func:`~skcal.metrics.reliability_curve` and
:class:`~skcal.display.ReliabilityDisplay` are all computed. ``_torch.py``
implements the same kernels for tensors; everything after the per-bin sums
is shared NumPy code.

Bin rules
---------
``strategy="uniform"``
    ``n_bins`` bins of equal width on [0, 1], closed on the right:
    bin ``m`` (0-based) holds ``m / M < s <= (m + 1) / M``, except that 0.0
    falls in the first bin. 1.0 falls in the last bin. This is the rule of Guo
    et al. (2017) and of :func:`sklearn.calibration.calibration_curve`.
    Scores are binned in float64. A score within a relative
    :data:`EDGE_RTOL` (2**-21, i.e. 8 float32 ulps) of an interior edge
    ``k / M`` is treated as lying on it, so a value that lies on an edge
    falls in the same bin whether it arrives as float32 or float64 (the
    float32 rounding of ``k / M`` differs from ``k / M`` by up to 2**-24
    relative).
``strategy="quantile"``
    Equal-mass bins. Edges are the inverted-CDF weighted quantiles of the
    scores at levels ``q_j = j / M``, ``j = 0..M``: sort the scores
    ``v_1 <= ... <= v_n`` (zero-weight samples excluded) with weights ``w_i``
    and cumulative weights ``S_i = w_1 + ... + w_i``; edge ``j`` is the
    smallest ``v_i`` with ``S_i >= q_j S_n`` (the first and last edges are
    ``v_1`` and ``v_n``). This is NumPy's ``method="inverted_cdf"`` quantile
    (Hyndman and Fan's definition 1), the one quantile definition that
    depends on the weights only through the cumulative weight fractions: an
    integer weight gives exactly the bins of the repeated rows, and scaling
    every weight changes nothing. (The "linear" quantile of
    :func:`sklearn.calibration.calibration_curve` interpolates between
    neighbouring order statistics, so repeating every row moves its edges.)
    The comparison allows a relative :data:`QUANTILE_RTOL` for the rounding
    of ``S_i``. Duplicate edges (ties in the scores) are merged, so fewer
    than ``n_bins`` bins may result; bins are closed on the right as above,
    with the smallest score in the first bin. No edge rule can crash on ties.

    **Few distinct scores.** When the scores (of positive weight) take at
    most ``n_bins`` distinct values ``u_1 < ... < u_k``, every value gets a
    bin of its own: the edges are ``u_1``, the midpoints
    ``u_j + (u_{j+1} - u_j) / 2`` and ``u_k`` (``k`` bins). The quantile rule
    above would put the smallest value and the first edge in one bin (7
    distinct scores and 10 bins give 6 bins, the two smallest values merged),
    although there are enough bins to keep every value apart. A bin edge
    therefore never merges two distinct values while bins are left, and
    never splits one value (ties share a bin under both rules).

Bins with zero total weight are reported as empty and skipped by the metrics.
"""

import numpy as np

#: Relative distance to an interior uniform edge within which a score is
#: treated as lying on the edge (see the module docstring).
EDGE_RTOL = 2.0**-21


def uniform_bin_ids(x, n_bins):
    """Bin index in 0..n_bins-1 of float64 scores ``x`` for equal-width bins."""
    t = np.maximum(x * n_bins, 0.5)  # every t <= 1 lands in bin 0
    r = np.rint(t)
    snap = (np.abs(t - r) <= EDGE_RTOL * r) & (r >= 1) & (r <= n_bins - 1)
    t = np.where(snap, r, t)
    return np.clip(np.ceil(t).astype(np.int64) - 1, 0, n_bins - 1)


#: Relative tolerance of the comparison ``S_i >= q S_n`` of the equal-mass
#: rule: a cumulative weight within it of a level counts as reaching it, so
#: that sums rounded differently (weights ``[2, 1]`` against the rows
#: repeated) pick the same sample.
QUANTILE_RTOL = 1e-9


def edge_positions(n_bins, n=None, cumulative=None):
    """Sorted-sample index of each equal-mass edge (inverted-CDF quantiles).

    Parameters
    ----------
    n_bins : int
    n : int, optional
        Number of unit-weight samples (then ``cumulative`` is not needed:
        the cumulative weights are ``1..n``).
    cumulative : ndarray of shape (n,), optional
        Cumulative weights ``S_1..S_n`` of the sorted samples.

    Returns
    -------
    ndarray of shape (n_bins + 1,), int64
        For each level ``q_j = j / n_bins``, the smallest ``i`` (0-based) with
        ``S_i >= q_j S_n`` (within :data:`QUANTILE_RTOL`).
    """
    if cumulative is None:
        t = np.arange(n_bins + 1, dtype=np.float64) * (n / n_bins)
        idx = np.ceil(t * (1.0 - QUANTILE_RTOL)).astype(np.int64) - 1
        return np.clip(idx, 0, n - 1)
    total = cumulative[-1]
    t = np.arange(n_bins + 1, dtype=np.float64) * (total / n_bins)
    idx = np.searchsorted(cumulative, t * (1.0 - QUANTILE_RTOL), side="left")
    return np.clip(idx, 0, cumulative.shape[0] - 1)


def _distinct_edges(u, xp):
    """Edges giving each of the sorted distinct values ``u`` a bin of its own.

    ``u[0]``, the midpoints of neighbours and ``u[-1]``; a midpoint that
    rounds up onto the upper value (adjacent floats) is moved to the lower
    one, so that the upper value stays in its own (right-closed) bin.
    """
    if u.shape[0] == 1:
        return xp.concatenate([u, u])
    lo, hi = u[:-1], u[1:]
    mid = lo + (hi - lo) / 2
    mid = xp.where(mid >= hi, lo, mid)
    return xp.concatenate([u[:1], mid, u[-1:]])


def quantile_edges(x, w, n_bins):
    """Unique equal-mass bin edges of float64 scores ``x`` with weights ``w``.

    The inverted-CDF weighted quantiles of the module docstring (NumPy's
    ``np.quantile(x, q, method="inverted_cdf", weights=w)``), or one bin per
    distinct value when there are at most ``n_bins`` of them.
    """
    if w is not None:
        keep = w > 0
        x, w = x[keep], w[keep]
    if w is None:
        v = np.sort(x)
    else:
        order = np.argsort(x, kind="stable")
        v = x[order]
    step = np.flatnonzero(v[1:] != v[:-1])  # the last index of each run of ties
    if step.shape[0] + 1 <= n_bins:  # at most n_bins distinct values
        return _distinct_edges(np.concatenate([v[step], v[-1:]]), np)
    if w is None:
        idx = edge_positions(n_bins, n=v.shape[0])
    else:
        idx = edge_positions(n_bins, cumulative=np.cumsum(w[order]))
    edges = np.unique(v[idx])
    edges[0], edges[-1] = v[0], v[-1]
    return edges
