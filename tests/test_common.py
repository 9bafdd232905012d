"""Generic checks over every skcal calibrator: scikit-learn's and skcal's own."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import skcal
from skcal.utils.discovery import all_calibrators
from skcal.utils.estimator_checks import (
    SKLEARN_CHECKS_NOT_APPLICABLE,
    parametrize_with_calibrator_checks,
)

#: The first four calibrators; every calibrator is checked through the registry.
_CORE = ["TemperatureScaler", "VectorScaler", "PlattScaler", "IsotonicScaler"]


def _calibrators():
    return [cls() for _, cls in all_calibrators()]


#: Per-calibrator scikit-learn checks that cannot pass, with the reason.
_EXPECTED_FAILURES = {
    "AutoCalibrator": {
        "check_sample_weight_equivalence_on_dense_data": (
            "its choice is cross-validated over folds of rows, and a repeated row "
            "can fall into several folds where its weight cannot (scikit-learn "
            "marks CalibratedClassifierCV so for the same reason); the refit of "
            "the chosen calibrator follows the weights"
        ),
        "check_fit2d_1feature": (
            "its 10 rows hold 3 of one class, too few for 5 stratified folds: "
            "AutoCalibrator raises a ValueError that says so (tests/test_auto.py "
            "tests that message), not one about the single feature"
        ),
    },
    "DirichletCalibrator": {
        "check_sample_weight_equivalence_on_dense_data": (
            "its data leave 10 of 13 classes absent: their probabilities (~1e-9) are "
            "set by the penalty alone and agree to ~1e-7 relative, not the 1e-7 "
            "relative asked of every entry; skcal's check_sample_weight_equivalence "
            "(logit data, every class present) passes"
        ),
    },
}


def _expected_failed_checks(estimator):
    extra = _EXPECTED_FAILURES.get(type(estimator).__name__, {})
    if not getattr(estimator, "_sample_weight_is_repetition", True):
        return {
            **SKLEARN_CHECKS_NOT_APPLICABLE,
            "check_sample_weight_equivalence_on_dense_data": (
                "the fit holds a prior counted in rows (Platt's target smoothing), "
                "so that it is invariant to rescaling the weights (issue 16): an "
                "integer weight is not a repeated row there"
            ),
            **extra,
        }
    return {**SKLEARN_CHECKS_NOT_APPLICABLE, **extra}


@parametrize_with_checks(_calibrators(), expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@parametrize_with_calibrator_checks(_calibrators())
def test_calibrator_checks(estimator, check):
    check(estimator)


def test_all_core_calibrators_exported():
    missing = [n for n in _CORE if not hasattr(skcal, n)]
    assert not missing, f"not exported from skcal: {missing}"


def test_registry_lists_every_public_calibrator():
    # every BaseCalibrator subclass exported from skcal is in the registry
    from skcal.base import BaseCalibrator

    exported = {
        n
        for n in skcal.__all__
        if isinstance(getattr(skcal, n), type)
        and issubclass(getattr(skcal, n), BaseCalibrator)
    }
    registered = {n for n, _ in all_calibrators()}
    assert set(_CORE) <= registered
    assert exported <= registered
    families = {n: c for n, c in all_calibrators("ovr")}
    assert {"PlattScaler", "IsotonicScaler"} <= set(families)
    assert not {"TemperatureScaler", "VectorScaler"} & set(families)
