"""Utilities: calibrator discovery, input validation and estimator checks.

The public submodules (:mod:`~skcal.utils.discovery`,
:mod:`~skcal.utils.validation`, :mod:`~skcal.utils.estimator_checks`) are
imported on first attribute access, so ``import skcal;
skcal.utils.discovery.all_calibrators()`` works without importing them first
and ``import skcal.utils`` stays cheap.
"""

import importlib

_SUBMODULES = ("discovery", "estimator_checks", "validation")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"skcal.utils.{name}")
    raise AttributeError(f"module 'skcal.utils' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
