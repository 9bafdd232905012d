"""skcal: post-hoc probability calibration for scikit-learn and PyTorch.

Calibrators learn, on a held-out calibration set, a map from a classifier's
logits to honest probabilities, without retraining the classifier. Importing
skcal imports neither torch nor matplotlib (nor scikit-learn:
the estimators are imported on first use).
"""

import importlib

#: Public name -> the subpackage that defines it. Importing ``skcal`` imports
#: none of them (nor scikit-learn): each is imported on first attribute access
#: (PEP 562), so ``skcal --version`` and ``skcal --help`` start in well under a
#: second, and ``import skcal; skcal.utils.discovery.all_calibrators()`` works.
_EXPORTS = {
    **dict.fromkeys(
        ["AutoCalibrator", "CalibratedClassifier", "CalibratedEnsemble", "ClassifierLogits",
         "CovariateShiftWeights", "GroupedCalibrator", "IdentityCalibrator", "SmoothedCalibrator",
         "TopVersusAllCalibrator", "calibrate_ensemble", "covariate_shift_weights"],
        "meta"),
    **dict.fromkeys(
        ["BBQCalibrator", "BetaCalibrator", "CenteredIsotonicScaler",
         "HistogramCalibrator", "IsotonicScaler", "PlattScaler", "QuadraticScaler",
         "ScalingBinningCalibrator", "SplineCalibrator", "VennAbersCalibrator"], "ovr"),
    **dict.fromkeys(
        ["BiasCorrectedTemperatureScaler", "DirichletCalibrator",
         "EnsembleTemperatureScaler", "LocalTemperatureScaler", "MatrixScaler",
         "NoBiasVectorScaler", "StructuredVectorScaler", "TemperatureScaler",
         "VectorScaler", "adapt_to_label_shift"], "scaling"),
}

#: Subpackages and modules reachable as attributes of ``skcal`` without an
#: explicit import (``skcal.utils.discovery``, ``skcal.metrics``, ...).
_SUBMODULES = {
    "base", "benchmark", "cli", "datasets", "display", "exceptions", "io", "llm",
    "meta", "metrics", "onnx", "ovr", "scaling", "torch", "utils",
}

__version__ = "0.1.0"

#: The exported names in sorted order, then ``__version__``.
__all__ = [*sorted(_EXPORTS), "__version__"]


def __getattr__(name):
    """Import a public estimator or a subpackage on first access (PEP 562).

    Raises
    ------
    AttributeError
        For a name that is neither.
    """
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"skcal.{_EXPORTS[name]}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"skcal.{name}")
    raise AttributeError(f"module 'skcal' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
