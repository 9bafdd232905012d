"""skcal.utils._params.store_params: an ``__init__``'s arguments as attributes."""

import inspect

import pytest

from skcal import CalibratedClassifier, CalibratedEnsemble, ClassifierLogits, GroupedCalibrator
from skcal.benchmark._peers import LogitPassthroughClassifier
from skcal.display import ReliabilityDisplay
from skcal.utils._params import store_params
from skcal.utils.discovery import all_calibrators


class _Stored:
    def __init__(self, a, b=2, *, c=None):
        store_params(self, locals())
        super().__init__()  # the __class__ cell of super() is not stored


def test_store_params_stores_exactly_the_arguments():
    obj = _Stored(1, c="x")
    assert vars(obj) == {"a": 1, "b": 2, "c": "x"}


def _estimators():
    return [cls for _, cls in all_calibrators()] + [
        CalibratedClassifier, CalibratedEnsemble, ClassifierLogits, GroupedCalibrator,
        LogitPassthroughClassifier, ReliabilityDisplay,
    ]


@pytest.mark.parametrize("cls", _estimators(), ids=lambda c: c.__name__)
def test_every_parameter_is_stored_as_given(cls):
    # a distinct object per parameter: get_params returns each one itself
    names = [
        p.name for p in inspect.signature(cls).parameters.values()
        if p.kind is not p.VAR_KEYWORD
    ]
    given = {name: object() for name in names}
    est = cls(**given)
    # the display is not an estimator: its parameters are its attributes
    params = est.get_params(deep=False) if hasattr(est, "get_params") else vars(est)
    assert set(params) == set(names)
    assert all(params[name] is given[name] for name in names)
