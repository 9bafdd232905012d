"""Helpers shared by the torch and ONNX exports (no optional imports)."""

import numpy as np

__all__ = ["padded_knots"]


def padded_knots(xs, ys):
    """Stack knot lists of different lengths into (n_maps, M) tables.

    Each map gets at least one knot past its last one (at +1, +2, ... with
    the last value), so that ``searchsorted(..., right=True) - 1`` of a
    clamped score is always a segment start and no segment has zero width.
    """
    m = max(len(x) for x in xs) + 1
    X = np.empty((len(xs), m))
    Y = np.empty((len(xs), m))
    for k, (x, y) in enumerate(zip(xs, ys)):
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        n = len(x)
        X[k, :n], Y[k, :n] = x, y
        step = max(1.0, abs(x[-1]))  # a positive width even at 1e20
        X[k, n:] = x[-1] + step * np.arange(1, m - n + 1)
        Y[k, n:] = y[-1]
    return X, Y
