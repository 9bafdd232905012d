"""Lookup kernels of the non-parametric per-class maps, for NumPy arrays and torch tensors.

Step functions (histogram, BBQ, scaling-binning, Venn-Abers) and piecewise
polynomials (splines) evaluated elementwise on the device of their input.
Like :mod:`skcal._backend._ovr`, each function dispatches on the array type and
never imports torch (it is looked up in ``sys.modules`` once a tensor arrives).
"""


import numpy as np

from ._ovr import _torch_of, stack_columns

__all__ = ["step_lookup", "step_lookup_columns", "piecewise_poly", "elementwise", "log_sigmoid"]


def _knots_like(v, x):
    """``v`` as float64 NumPy for NumPy ``x``, else a tensor of ``x``'s dtype and device."""
    v, torch = np.asarray(v, dtype=np.float64), _torch_of(x)
    return v if torch is None else torch.as_tensor(v, dtype=x.dtype, device=x.device)


def _searchsorted(x, edges, right):
    """Number of ``edges`` below ``x`` (``<= x`` when ``right``), as an index array."""
    torch = _torch_of(x)
    if torch is None:
        return np.searchsorted(edges, x, side="right" if right else "left")
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
    return _knots_like(values, x)[_searchsorted(x, edges, right)]


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
    C = _knots_like(coefs, x)
    o, c0, c1, c2, c3 = (C[:, i][j] for i in range(5))
    d = x - o
    return c0 + d * (c1 + d * (c2 + d * c3))


def elementwise(name, x):
    """``log``, ``exp``, ``log1p`` or ``expm1`` of an array or tensor."""
    return getattr(_torch_of(x) or np, name)(x)


def log_sigmoid(x):
    """``log sigmoid(x)`` elementwise.

    NumPy: ``-(max(-x, 0) + log1p(exp(-|x|)))`` with ``exp`` skipped where it
    would underflow (``|x| > 700``; the term is then below 1e-304), which
    avoids the floating-point unit's slow path for subnormal results (SciPy's
    ``log_expit`` is several times slower on logits of magnitude 700+). torch:
    ``torch.nn.functional.logsigmoid``.
    """
    torch = _torch_of(x)
    if torch is not None:
        return torch.nn.functional.logsigmoid(x)
    a = np.abs(x)
    e = np.exp(-a, out=np.zeros_like(a), where=a < 700.0)
    return -(np.maximum(-x, 0.0) + np.log1p(e))


#: :func:`step_lookup_columns` uses its cell table when no column has more
#: edges than this (histogram and scaling-binning maps have ``n_bins - 1``).
TABLE_MAX_EDGES = 64
#: Cells of the uniform grid over each column's edge range.
_TABLE_CELLS = 1024


def _cell_tables(edges):
    """Per column: origin, cells per unit, and the edge count of every grid cell (-1: mixed).

    Cell ``c`` (``-1 <= c <= NB + 1``, ``NB`` = :data:`_TABLE_CELLS`) holds the
    points whose ``floor((x - lo) * inv)``, clipped, is ``c``; its entry is
    ``#{edges <= x}`` where that is the same on the cell widened by half a
    cell each side (so the rounding of the cell cannot matter), else -1.
    Cell -1 is ``x < lo`` (count 0), cell ``NB + 1`` above the last edge.
    """
    K, NB = len(edges), _TABLE_CELLS
    lo, inv = np.zeros(K), np.zeros(K)
    T = np.empty((K, NB + 3), dtype=np.int32)
    c = np.arange(NB + 1, dtype=np.float64)
    for k, e in enumerate(edges):
        e = np.asarray(e, dtype=np.float64)
        if e.size == 0:
            T[k] = 0
            continue
        span = float(e[-1] - e[0])
        if not span > 0:
            span = max(abs(float(e[0])), 1.0)
        lo[k], inv[k] = e[0], NB / span
        a = np.searchsorted(e, e[0] + (c - 0.5) / inv[k], side="right")
        b = np.searchsorted(e, e[0] + (c + 1.5) / inv[k], side="right")
        T[k, 0] = 0  # x < lo: no edge <= x
        T[k, 1:-1] = np.where(a == b, a, -1)
        T[k, -1] = e.size  # beyond the last edge by more than half a cell
    return lo, inv, T


def step_lookup_columns(S, edges, values):
    """:func:`step_lookup` of every column: ``out[:, k] = values[k][#{edges[k] <= S[:, k]}]``.

    Parameters
    ----------
    S : ndarray or torch.Tensor of shape (n, K)
        Points, evaluated on their own device.
    edges, values : sequences of K ndarrays
        Per column, as ``edges`` and ``values`` of :func:`step_lookup`
        (``right=True``).

    Returns
    -------
    ndarray or torch.Tensor of shape (n, K), float64 for NumPy input.

    Notes
    -----
    NumPy input with at most :data:`TABLE_MAX_EDGES` edges per column: the
    edge count of each entry comes from a per-column table over a uniform
    grid of the edge range (:func:`_cell_tables`, all columns at once), by
    ``searchsorted`` in a cell near an edge: identical to
    :func:`step_lookup`'s for finite and infinite points (not NaN, which
    validated logits never hold). Otherwise one ``searchsorted`` per column.
    """
    K = len(edges)
    big = max((np.size(e) for e in edges), default=0) > TABLE_MAX_EDGES
    if _torch_of(S) is not None or big or S.shape[0] * K < 4096:
        cols = [step_lookup(S[:, j], e, v) for j, (e, v) in enumerate(zip(edges, values))]
        return stack_columns(cols)
    NB = _TABLE_CELLS
    lo, inv, T = _cell_tables(edges)
    sizes = np.array([np.size(v) for v in values])
    voff = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
    T = np.where(T >= 0, T + voff[:, None], -1).astype(np.int32)  # flat value indices
    t = S - lo
    with np.errstate(invalid="ignore"):  # inf * 0 in a column without edges
        t *= inv
    t += 1.0  # the table column: cell + 1 (truncation is floor from here on)
    np.clip(t, 0.0, NB + 2, out=t)
    empty = np.array([np.size(e) == 0 for e in edges])
    if empty.any():  # every entry of the table row is the count 0
        t[:, empty] = 0.0
    cell = t.astype(np.intp)
    cell += np.arange(K) * (NB + 3)
    code = T.ravel().take(cell, mode="clip")
    r, k = np.nonzero(code < 0)
    if r.size:
        order = np.argsort(k, kind="stable")
        r, k = r[order], k[order]
        bounds = np.flatnonzero(np.diff(k)) + 1
        for rr, kk in zip(np.split(r, bounds), np.split(k, bounds)):
            j = int(kk[0])
            code[rr, j] = np.searchsorted(edges[j], S[rr, j], side="right") + voff[j]
    return np.concatenate([np.asarray(v, dtype=np.float64) for v in values]).take(code)
