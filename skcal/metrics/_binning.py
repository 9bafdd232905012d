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
    Equal-mass bins. Edges are weighted quantiles of the scores at levels
    ``0, 1/M, ..., 1``: sort the scores ``v_1 <= ... <= v_n`` (zero-weight
    samples excluded) with weights ``w_i`` and cumulative weights ``S_i``,
    place ``v_i`` at level ``S_{i-1} / S_{n-1}`` and interpolate linearly.
    With unit weights this is NumPy's default ("linear") quantile, so the
    bins equal those of ``calibration_curve(..., strategy="quantile")``.
    Duplicate edges (ties in the scores) are merged, so fewer than ``n_bins``
    bins may result; bins are closed on the right as above, with the
    smallest score in the first bin. No edge rule can crash on ties.

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


def quantile_levels(x, w):
    """Sorted scores and their quantile levels (see the module docstring)."""
    if w is not None:
        keep = w > 0
        x, w = x[keep], w[keep]
    order = np.argsort(x, kind="stable")
    v = x[order]
    if v.shape[0] == 1:
        return v, np.zeros(1)
    ww = np.ones_like(v) if w is None else w[order]
    s = np.cumsum(ww)
    return v, (s - ww) / (s[-1] - ww[-1])


def _unit_weight_edges(x, n_bins):
    """``np.interp(q, levels, v)`` for unit weights without the level vector.

    With unit weights the level of the ``i``-th smallest score is exactly
    ``i / (n - 1)``, so each quantile is interpolated on a 4-point window of
    the sorted scores around ``q (n - 1)``: the same numbers as interpolating
    on all levels, with one sorted copy of ``x`` as the only ``(n,)`` vector.
    """
    v = np.sort(x)
    n = v.shape[0]
    if n == 1:
        return v, None
    q = np.linspace(0.0, 1.0, n_bins + 1)
    edges = np.empty(n_bins + 1)
    for j, qj in enumerate(q):
        lo = min(max(int(qj * (n - 1)) - 1, 0), max(n - 4, 0))
        hi = min(lo + 4, n)
        levels = np.arange(lo, hi, dtype=np.float64) / (n - 1)
        edges[j] = np.interp(qj, levels, v[lo:hi])
    return v, edges


def quantile_edges(x, w, n_bins):
    """Unique equal-mass bin edges of float64 scores ``x`` with weights ``w``."""
    if w is None:
        v, edges = _unit_weight_edges(x, n_bins)
    else:
        v, levels = quantile_levels(x, w)
    if v.shape[0] == 1:
        return np.array([v[0], v[0]])
    if w is not None:
        edges = np.interp(np.linspace(0.0, 1.0, n_bins + 1), levels, v)
    edges[0], edges[-1] = v[0], v[-1]
    edges = np.unique(edges)
    if edges.shape[0] == 1:
        edges = np.array([edges[0], edges[0]])
    return edges
