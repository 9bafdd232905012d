"""Calibration kernels as pure functions, one module per array library.

``_numpy.py`` and ``_torch.py`` expose the same names and signatures; only
``_torch.py`` imports torch. Every pass over a logit matrix runs over row
chunks and accumulates in float64, so that half-precision input is never
up-cast as a whole and peak extra memory stays bounded by the chunk size.
"""
