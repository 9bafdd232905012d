"""The bin rules behind every binned calibration metric.

:func:`uniform_bin_ids` and :func:`quantile_edges` define the bins;
:mod:`skcal.metrics._rows` applies them row chunk by row chunk and
accumulates the per-bin sums from which the calibration errors,
:func:`~skcal.metrics.reliability_curve` and
:class:`~skcal.display.ReliabilityDisplay` are all computed. The kernels
live in :mod:`skcal._backend._numpy` (re-exported here) and, with the same
names and rules for tensors, in ``skcal._backend._torch``. The rules are
stated for users in the Notes of :func:`~skcal.metrics.calibration_error`;
what the code adds to them:

``strategy="uniform"``
    Scores are binned in float64; a score within a relative :data:`EDGE_RTOL`
    (2**-21, 8 float32 ulps) of an interior edge ``k / M`` is on it, because
    the float32 rounding of ``k / M`` differs from it by up to 2**-24.
``strategy="quantile"``
    With the scores (of positive weight) sorted, ``v_1 <= ... <= v_n``, and
    cumulative weights ``S_i``, edge ``j`` is the smallest ``v_i`` with
    ``S_i >= (j / M) S_n`` (NumPy's ``method="inverted_cdf"``, Hyndman and
    Fan's definition 1), up to a relative :data:`QUANTILE_RTOL` for the
    rounding of ``S_i``. It is the one quantile that depends on the weights
    only through their cumulative fractions (scikit-learn's "linear" one
    moves when every row is repeated). With at most ``n_bins`` distinct
    values ``u_1 < ... < u_k`` the edges are ``u_1``, the midpoints
    ``u_j + (u_{j+1} - u_j) / 2`` and ``u_k``.
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
