"""The bin rules behind every binned calibration metric.

:func:`uniform_bin_ids` and :func:`quantile_edges` define the bins;
:mod:`skcal.metrics._rows` applies them row chunk by row chunk and
accumulates the per-bin sums from which the calibration errors,
:func:`~skcal.metrics.reliability_curve` and
:class:`~skcal.display.ReliabilityDisplay` are all computed. The kernels
live in :mod:`skcal._backend._numpy` (re-exported here) and, with the same
names and rules for tensors, in ``skcal._backend._torch``; this module
documents the rules. Everything after the per-bin sums is shared NumPy code.

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
    ``u_j + (u_{j+1} - u_j) / 2`` and ``u_k`` (``k`` bins), where the quantile
    rule would merge the two smallest values (7 distinct scores and 10 bins
    give 6 bins). A bin edge therefore never merges two distinct values while
    bins are left, and never splits one value (ties share a bin).

Bins with zero total weight are reported as empty and skipped by the metrics.
"""

from .._backend._numpy import (  # noqa: F401 - the rules documented above
    EDGE_RTOL,
    QUANTILE_RTOL,
    MetricOps,
    quantile_edges,
    uniform_bin_ids,
)


def bin_ids(s, w, n_bins, strategy):
    """``(ids, n_bins_effective)``: the int64 bin of every NumPy score ``s``."""
    if strategy == "uniform":
        return uniform_bin_ids(s, n_bins), n_bins
    edges = quantile_edges(s, w, n_bins)
    return MetricOps.quantile_ids(edges, s), edges.shape[0] - 1
