"""Array types: recognise torch tensors and dask arrays, convert between libraries.

Torch tensors and dask arrays are recognised without importing either library
(they are looked up in ``sys.modules``); :func:`to_numpy`, :func:`to_backend`
and :func:`like_input` move arrays between them. This module imports no
kernel module (the kernels import it); :mod:`skcal._backend._dispatch` picks
the kernel module for an input.
"""

import sys

import numpy as np

__all__ = [
    "is_torch_tensor",
    "is_dask_array",
    "to_numpy",
    "to_backend",
    "like_input",
    "probability_log_dtype",
    "host_array",
]


def is_torch_tensor(x):
    """Whether ``x`` is a ``torch.Tensor``, without importing torch.

    torch is only looked up in ``sys.modules``: a process that never imported
    it cannot hold a tensor.
    """
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def is_dask_array(x):
    """Whether ``x`` is a ``dask.array.Array`` (``dask.array`` looked up in ``sys.modules``)."""
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(x, dask_array.Array)


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
    """``Z`` as an array of the kernel module ``xp``.

    A NumPy array goes to torch without a copy (``xp.from_numpy``) and a tensor
    to NumPy through :func:`to_numpy`; otherwise ``Z`` is returned as is.

    Parameters
    ----------
    Z : ndarray, torch.Tensor or dask.array.Array
        Validated logits.
    xp : module
        A kernel module of :mod:`skcal._backend`
        (:func:`skcal._backend._dispatch.get_backend`).

    Returns
    -------
    ndarray, torch.Tensor or dask.array.Array
        ``Z`` in the array type ``xp`` computes with.
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

    Parameters
    ----------
    out : ndarray, torch.Tensor or dask.array.Array
        A result computed by the kernels.
    X : object
        The user's input, whose type and device ``out`` follows.

    Returns
    -------
    ndarray, torch.Tensor or dask.array.Array
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


def probability_log_dtype(dtype):
    """The dtype in which probabilities of ``dtype`` are turned into logits.

    Parameters
    ----------
    dtype : numpy or torch floating dtype

    Returns
    -------
    numpy.dtype or torch.dtype
        float32 for 16-bit floats (float16, bfloat16), whose smallest normal
        number (6.1e-5 for float16) would otherwise floor every small
        probability and whose ``log`` would round to 3 digits; ``dtype``
        itself otherwise. Every float16 value is exact in float32, so the
        logits of float16 probabilities are those of the same values in
        float64 up to float32 rounding.
    """
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = np.dtype(dtype)
        return np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    torch = sys.modules["torch"]
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def host_array(x):
    """A torch tensor as a NumPy array (see :func:`to_numpy`); anything else unchanged.

    For labels and other inputs that scikit-learn's own checks read next
    (``column_or_1d``): lists, Series and arrays reach them as given.

    Parameters
    ----------
    x : object

    Returns
    -------
    object
    """
    return to_numpy(x) if is_torch_tensor(x) else x
