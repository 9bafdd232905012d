"""torch kernels of :mod:`skcal.metrics._binning` (same names and rules).

Imported only when a metric receives a ``torch.Tensor``; the computation runs
in float64 on the tensor's device (row chunk by row chunk, see
:mod:`skcal.metrics._rows`) and only the per-bin sums (a few numbers per bin)
are copied to the host.
"""

import torch

from ._binning import EDGE_RTOL, QUANTILE_RTOL, _distinct_edges


def uniform_bin_ids(x, n_bins):
    """Bin index in 0..n_bins-1 of float64 scores ``x`` (equal-width bins).

    Same rule as the NumPy kernel. Rounding is done by integer conversion
    (``torch.round`` / ``torch.ceil`` are very slow on some CPU builds); for
    ``t >= 0.5`` it equals ``rint`` except at exact halves, which never snap.
    """
    t = (x * n_bins).clamp_(min=0.5)  # every t <= 1 lands in bin 0
    r = (t + 0.5).to(torch.int64)
    rf = r.to(t.dtype)
    snap = ((t - rf).abs() <= EDGE_RTOL * rf) & (r >= 1) & (r <= n_bins - 1)
    t = torch.where(snap, rf, t)
    fl = t.to(torch.int64)
    ceil = fl + (t > fl.to(t.dtype)).to(torch.int64)
    return (ceil - 1).clamp_(0, n_bins - 1)


def quantile_edges(x, w, n_bins):
    """Unique equal-mass bin edges (inverted-CDF weighted quantiles), as a tensor.

    Same rule as the NumPy kernel, the few-distinct-scores case included.
    """
    if w is not None:
        keep = w > 0
        x, w = x[keep], w[keep]
    distinct = torch.unique(x)  # sorted
    if distinct.shape[0] <= n_bins:
        return _distinct_edges(distinct, torch)
    v, order = torch.sort(x, stable=True)
    n = v.shape[0]
    levels = torch.arange(n_bins + 1, dtype=torch.float64, device=x.device)
    if w is None:
        t = levels * (n / n_bins)
        idx = torch.ceil(t * (1.0 - QUANTILE_RTOL)).to(torch.int64) - 1
    else:
        s = torch.cumsum(w[order], 0)
        t = levels * (s[-1] / n_bins)
        idx = torch.searchsorted(s, t * (1.0 - QUANTILE_RTOL), right=False)
    edges = v[idx.clamp_(0, n - 1)]
    edges[0], edges[-1] = v[0], v[-1]
    edges = torch.unique(edges)
    if edges.shape[0] == 1:
        edges = torch.cat([edges, edges])
    return edges
