"""Array-type helpers, re-exported from :mod:`skcal._backend`.

Backend selection and the array-type tests live in :mod:`skcal._backend`
(:mod:`~skcal._backend._dispatch` and :mod:`~skcal._backend._array`), which
imports nothing else from skcal; this module only re-exports them so that
existing ``from skcal.utils._array import ...`` lines keep working while
other branches are merged. New code imports from :mod:`skcal._backend`.
"""

from .._backend._array import (  # noqa: F401
    is_dask_array,
    is_torch_tensor,
    like_input,
    to_backend,
    to_numpy,
)
from .._backend._dispatch import get_backend  # noqa: F401

__all__ = [
    "is_torch_tensor",
    "is_dask_array",
    "get_backend",
    "to_numpy",
    "to_backend",
    "like_input",
]
