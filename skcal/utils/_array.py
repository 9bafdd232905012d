"""Array-namespace helpers: recognise torch tensors and dask arrays without importing them."""

import sys

import numpy as np

__all__ = ["is_torch_tensor", "is_dask_array", "get_backend", "to_numpy"]


def is_torch_tensor(x):
    """Return True if ``x`` is a ``torch.Tensor``.

    torch is only looked up in ``sys.modules``: a process that never imported
    torch cannot hold a tensor, so this never imports it.

    Parameters
    ----------
    x : object
        Any object.

    Returns
    -------
    bool
    """
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def is_dask_array(x):
    """Return True if ``x`` is a ``dask.array.Array``.

    Like :func:`is_torch_tensor`, dask is only looked up in ``sys.modules``
    (a process that never imported ``dask.array`` cannot hold one).

    Parameters
    ----------
    x : object

    Returns
    -------
    bool
    """
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(x, dask_array.Array)


def get_backend(X, backend="auto"):
    """Return the kernel module (``skcal._backend._numpy`` or ``_torch``) for ``X``.

    Parameters
    ----------
    X : array-like or torch.Tensor
        The input whose type decides the backend when ``backend="auto"``.
    backend : {"auto", "numpy", "torch"}, default="auto"
        ``"auto"`` uses torch for a ``torch.Tensor`` and numpy otherwise.

    Returns
    -------
    module
        A module exposing the kernel functions of ``skcal._backend``.

    Raises
    ------
    ImportError
        If ``backend="torch"`` and torch is not installed.
    ValueError
        If ``X`` is a dask array and ``backend="torch"``.

    Notes
    -----
    A dask array always gets ``skcal._backend._dask`` (NumPy kernels per row
    block); ``backend="numpy"`` is accepted for it.
    """
    if is_dask_array(X):
        if backend == "torch":
            raise ValueError(
                "backend='torch' does not take a dask array; a dask array is "
                "computed blockwise with the NumPy kernels (backend='auto')."
            )
        from .._backend import _dask

        return _dask
    if backend == "auto":
        backend = "torch" if is_torch_tensor(X) else "numpy"
    if backend == "torch":
        try:
            from .._backend import _torch
        except ImportError as exc:  # pragma: no cover - torch is an optional extra
            raise ImportError(
                "backend='torch' needs PyTorch; install it with "
                "`pip install skcal[torch]`."
            ) from exc
        return _torch
    from .._backend import _numpy

    return _numpy


def to_numpy(x):
    """Return ``x`` as a NumPy array (a torch tensor is moved to the CPU).

    Parameters
    ----------
    x : array-like or torch.Tensor

    Returns
    -------
    ndarray
    """
    if is_torch_tensor(x):
        x = x.detach()
        if x.dtype.is_floating_point and x.dtype not in _NUMPY_FLOATS(x):
            x = x.float()
        return x.cpu().numpy()
    return np.asarray(x)


def _NUMPY_FLOATS(x):
    torch = sys.modules["torch"]
    return (torch.float16, torch.float32, torch.float64)


def to_backend(Z, xp):
    """``Z`` as an array of the kernel module ``xp`` (see :func:`get_backend`).

    A NumPy array goes to torch without a copy (``xp.from_numpy``) and a tensor
    to NumPy through :func:`to_numpy`; otherwise ``Z`` is returned as is.
    """
    if xp.name == "torch" and not is_torch_tensor(Z):
        return xp.from_numpy(Z)
    if xp.name == "numpy" and is_torch_tensor(Z):
        return to_numpy(Z)
    return Z


def like_input(out, X):
    """``out`` in the array type (and device) of the user's input ``X``.

    Tensor input gives a tensor on ``X``'s device; anything else a NumPy array.
    Integer or float NumPy arrays become tensors; other dtypes (e.g. text
    labels) stay NumPy arrays. A lazy dask result is returned as is.
    """
    if is_dask_array(out):
        return out
    if is_torch_tensor(X):
        if not is_torch_tensor(out):
            if not (
                np.issubdtype(out.dtype, np.floating)
                or np.issubdtype(out.dtype, np.integer)
            ):
                return out
            out = sys.modules["torch"].from_numpy(np.ascontiguousarray(out))
        return out.to(X.device)
    return to_numpy(out) if is_torch_tensor(out) else out
