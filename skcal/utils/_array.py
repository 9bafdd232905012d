"""Array-namespace helpers: recognise torch tensors without importing torch."""

import sys

import numpy as np

__all__ = ["is_torch_tensor", "get_backend", "to_numpy"]


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
    """
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
