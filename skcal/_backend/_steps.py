"""Lookup kernels of the non-parametric per-class maps, for NumPy arrays and torch tensors.

Step functions (histogram, BBQ, scaling-binning, Venn-Abers) and piecewise
polynomials (splines) evaluated elementwise on the device of their input.
Like :mod:`skcal._backend._ovr`, each function dispatches on the array type and
never imports torch (it is looked up in ``sys.modules`` once a tensor arrives).
"""

import sys

import numpy as np

from ._ovr import backend_name

__all__ = ["step_lookup", "piecewise_poly", "elementwise", "log_sigmoid"]


def _knots_like(v, x):
    torch = sys.modules["torch"]
    return torch.as_tensor(np.asarray(v), dtype=x.dtype, device=x.device)


def _searchsorted(x, edges, right):
    """Number of ``edges`` below ``x`` (``<= x`` when ``right``), as an index array."""
    if backend_name(x) == "numpy":
        return np.searchsorted(edges, x, side="right" if right else "left")
    torch = sys.modules["torch"]
    return torch.searchsorted(_knots_like(edges, x), x.contiguous(), right=right)


def step_lookup(x, edges, values, *, right=True):
    """Piecewise-constant function: ``values[#{edges <= x}]``.

    Parameters
    ----------
    x : ndarray or torch.Tensor of shape (n,)
        Points (float64; float32 on MPS), evaluated on their own device.
    edges : ndarray of shape (m,)
        Non-decreasing breakpoints.
    values : ndarray of shape (m + 1,)
        Value on each of the ``m + 1`` cells ``(-inf, e_0), [e_0, e_1), ...,
        [e_{m-1}, inf)``.
    right : bool, default=True
        A point equal to an edge belongs to the cell above it (``True``) or
        below it (``False``: cells ``(-inf, e_0], (e_0, e_1], ...``).

    Returns
    -------
    ndarray or torch.Tensor of shape (n,)
        In ``x``'s array type, dtype and device.
    """
    j = _searchsorted(x, edges, right)
    if backend_name(x) == "numpy":
        return np.asarray(values, dtype=np.float64)[j]
    return _knots_like(values, x)[j]


def piecewise_poly(x, breaks, coefs):
    """Piecewise cubic polynomial, local to the left end of each piece.

    Parameters
    ----------
    x : ndarray or torch.Tensor of shape (n,)
        Points, evaluated on their own device.
    breaks : ndarray of shape (m,)
        Increasing breakpoints, ``m >= 1``.
    coefs : ndarray of shape (m + 1, 5)
        Row ``j`` is ``(o, c0, c1, c2, c3)`` for the cell ``j`` of
        :func:`step_lookup` (``j = #{breaks <= x}``): the value there is
        ``c0 + c1 d + c2 d^2 + c3 d^3`` with ``d = x - o``.

    Returns
    -------
    ndarray or torch.Tensor of shape (n,)
    """
    j = _searchsorted(x, breaks, right=True)
    C = np.asarray(coefs, dtype=np.float64)
    if backend_name(x) != "numpy":
        C = _knots_like(C, x)
    o, c0, c1, c2, c3 = (C[:, i][j] for i in range(5))
    d = x - o
    return c0 + d * (c1 + d * (c2 + d * c3))


def elementwise(name, x):
    """``log``, ``exp``, ``log1p`` or ``expm1`` of an array or tensor."""
    if backend_name(x) == "numpy":
        return getattr(np, name)(x)
    return getattr(sys.modules["torch"], name)(x)


def log_sigmoid(x):
    """``log sigmoid(x)`` elementwise.

    NumPy: ``-(max(-x, 0) + log1p(exp(-|x|)))`` with ``exp`` skipped where it
    would underflow (``|x| > 700``; the term is then below 1e-304), which
    avoids the floating-point unit's slow path for subnormal results (SciPy's
    ``log_expit`` is several times slower on logits of magnitude 700+). torch:
    ``torch.nn.functional.logsigmoid``.
    """
    if backend_name(x) != "numpy":
        return sys.modules["torch"].nn.functional.logsigmoid(x)
    a = np.abs(x)
    e = np.exp(-a, out=np.zeros_like(a), where=a < 700.0)
    return -(np.maximum(-x, 0.0) + np.log1p(e))
