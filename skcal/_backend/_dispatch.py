"""Backend selection: the kernel module that serves an input.

:func:`get_backend` is the one place that maps an array to its kernel module
(:mod:`skcal._backend._numpy`, :mod:`~skcal._backend._torch` or
:mod:`~skcal._backend._dask`); the kernel modules are imported lazily, so
that torch and dask are imported only once an input needs them. Like every
module of :mod:`skcal._backend`, it imports nothing else from skcal.
"""

from ._array import is_dask_array, is_torch_tensor

__all__ = ["get_backend"]


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
        from . import _dask

        return _dask
    if backend == "auto":
        backend = "torch" if is_torch_tensor(X) else "numpy"
    if backend == "torch":
        try:
            from . import _torch
        except ImportError as exc:  # pragma: no cover - torch is an optional extra
            raise ImportError(
                "backend='torch' needs PyTorch; install it with "
                "`pip install skcal[torch]`."
            ) from exc
        return _torch
    from . import _numpy

    return _numpy
