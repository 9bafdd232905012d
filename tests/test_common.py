"""Generic checks over every skcal calibrator: scikit-learn's and skcal's own."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import skcal
from skcal.utils.estimator_checks import (
    SKLEARN_CHECKS_NOT_APPLICABLE,
    parametrize_with_calibrator_checks,
)

_NAMES = [
    "TemperatureScaler",
    "VectorScaler",
    "PlattScaler",
    "IsotonicScaler",
    "LocalTemperatureScaler",
]


def _calibrators():
    return [getattr(skcal, n)() for n in _NAMES if hasattr(skcal, n)]


def _expected_failed_checks(estimator):
    return SKLEARN_CHECKS_NOT_APPLICABLE


@parametrize_with_checks(_calibrators(), expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@parametrize_with_calibrator_checks(_calibrators())
def test_calibrator_checks(estimator, check):
    check(estimator)


def test_all_core_calibrators_exported():
    missing = [n for n in _NAMES if not hasattr(skcal, n)]
    assert not missing, f"not exported from skcal: {missing}"
