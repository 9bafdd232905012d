"""torch kernels of :mod:`skcal.metrics._binning` (same names and rules).

Imported only when a metric receives a ``torch.Tensor``; the computation runs
in float64 on the tensor's device and only the per-bin sums (a few numbers
per bin) are copied to the host.
"""

import numpy as np
import torch

from ._binning import EDGE_RTOL


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
    """Unique equal-mass bin edges (weighted linear quantiles), as a tensor."""
    if w is not None:
        keep = w > 0
        x, w = x[keep], w[keep]
    v, order = torch.sort(x, stable=True)
    if v.shape[0] == 1:
        return torch.stack([v[0], v[0]])
    ww = torch.ones_like(v) if w is None else w[order]
    s = torch.cumsum(ww, 0)
    levels = (s - ww) / (s[-1] - ww[-1])
    q = torch.linspace(0.0, 1.0, n_bins + 1, dtype=torch.float64, device=x.device)
    # linear interpolation of (levels, v) at q, as numpy.interp
    j = (torch.searchsorted(levels, q, right=True) - 1).clamp_(0, v.shape[0] - 2)
    lo, hi = levels[j], levels[j + 1]
    t = ((q - lo) / (hi - lo)).clamp_(0.0, 1.0)
    edges = torch.where(t == 0, v[j], torch.where(t == 1, v[j + 1],
                                                   v[j] + t * (v[j + 1] - v[j])))
    edges[0], edges[-1] = v[0], v[-1]
    edges = torch.unique(edges)
    if edges.shape[0] == 1:
        edges = torch.cat([edges, edges])
    return edges


def bin_edges_and_ids(x, w, n_bins, strategy):
    """Bin edges and the bin index of every score (torch)."""
    if strategy == "uniform":
        edges = torch.linspace(0.0, 1.0, n_bins + 1, dtype=torch.float64,
                               device=x.device)
        return edges, uniform_bin_ids(x, n_bins)
    edges = quantile_edges(x, w, n_bins)
    return edges, torch.searchsorted(edges[1:-1].contiguous(), x, right=False)


def binned_sums(scores, targets, weight, n_bins, strategy):
    """Per-bin sums for each column of ``scores`` / ``targets`` (torch).

    Same contract as :func:`skcal.metrics._binning.binned_sums`; ``edges``,
    ``count`` and the sums come back as NumPy arrays, ``ids`` stays a tensor.
    """
    out = []
    for g in range(scores.shape[1]):
        x, y = scores[:, g].contiguous(), targets[:, g]
        edges, ids = bin_edges_and_ids(x, weight, n_bins, strategy)
        nb = edges.shape[0] - 1
        w = torch.ones_like(x) if weight is None else weight
        sums = torch.stack(
            [
                torch.bincount(ids, minlength=nb).to(torch.float64),
                torch.bincount(ids, weights=w, minlength=nb),
                torch.bincount(ids, weights=w * x, minlength=nb),
                torch.bincount(ids, weights=w * y, minlength=nb),
            ]
        ).cpu().numpy()
        out.append(
            dict(
                edges=edges.cpu().numpy(),
                ids=ids,
                count=sums[0].astype(np.int64),
                weight=sums[1],
                score_sum=sums[2],
                target_sum=sums[3],
            )
        )
    return out
