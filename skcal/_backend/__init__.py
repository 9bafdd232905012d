"""The dispatch layer: calibration kernels as pure functions, one module per array library.

:func:`~skcal._backend._dispatch.get_backend` maps an input to its kernel
module: ``_numpy.py`` and ``_torch.py`` expose the same names and signatures
(only ``_torch.py`` imports torch), ``_dask.py`` the same names computed
blockwise; ``_shared.py`` holds what is written once around the per-library
sweeps, ``_array.py`` the array types. Every pass over a logit matrix runs
over row chunks and accumulates in float64 (no whole up-cast copy). Nothing
here imports anything else from skcal (``tests/test_import_cycles.py``).
"""
