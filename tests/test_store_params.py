"""skcal.utils._params.store_params: an ``__init__``'s arguments as attributes."""

import inspect

import pytest

from skcal import CalibratedClassifier, CalibratedEnsemble, ClassifierLogits, GroupedCalibrator
from skcal.benchmark._peers import LogitPassthroughClassifier
from skcal.display import ReliabilityDisplay
from skcal.ovr import OneVsRestCalibrator
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


@pytest.mark.parametrize(
    "cls", _estimators() + [OneVsRestCalibrator], ids=lambda c: c.__name__
)
def test_unexpected_keyword_names_the_class_itself(cls):
    # not the shared base whose __init__ it inherits (_TemperatureParameters,
    # _VectorParameters, IsotonicScaler, BaseCalibrator)
    with pytest.raises(TypeError) as info:
        cls(foo=1)
    assert str(info.value) == (
        f"{cls.__name__}.__init__() got an unexpected keyword argument 'foo'"
    )


def test_inherited_init_copy_keeps_signature_defaults_and_super():
    from skcal import TemperatureScaler, VectorScaler
    from skcal.scaling._temperature import _TemperatureParameters
    from skcal.scaling._vector import _VectorParameters

    for cls, base in [(TemperatureScaler, _TemperatureParameters),
                      (VectorScaler, _VectorParameters)]:
        init, shared = cls.__dict__["__init__"], base.__dict__["__init__"]
        assert init is not shared and init.__qualname__ == f"{cls.__name__}.__init__"
        assert init.__code__.co_code == shared.__code__.co_code
        assert inspect.signature(init) == inspect.signature(shared)
        assert init.__defaults__ == shared.__defaults__
        assert init.__kwdefaults__ == shared.__kwdefaults__
        assert cls().get_params() == shared.__kwdefaults__

    class _Base:
        def __init__(self, *, a=1):
            store_params(self, locals())
            super().__init__()

    from skcal.utils._params import rename_inherited_init

    class _Child(_Base):
        pass

    rename_inherited_init(_Child)
    assert vars(_Child(a=3)) == {"a": 3}  # super() in the copy still works
    with pytest.raises(TypeError, match=r"<locals>\._Child\.__init__\(\) takes 1 positional"):
        _Child(3)
