"""Discovery of skcal's public calibrators, like :func:`sklearn.utils.discovery.all_estimators`.

The common estimator checks, the torch-parity tests, ``skcal benchmark``'s
default methods, the speed benchmark's growth table and the API reference are
all driven by :func:`all_calibrators`, so a new calibrator cannot skip them.
"""

import importlib
import inspect
import pkgutil
import re

__all__ = ["all_calibrators", "method_name", "calibrator_family"]

#: Subpackages and modules never searched: they hold no calibrator, and some
#: import an optional dependency (torch, matplotlib) when imported.
_SKIP = {
    "skcal.cli",
    "skcal.benchmark",
    "skcal.datasets",
    "skcal.display",
    "skcal.metrics",
    "skcal.torch",
    "skcal.onnx",
    "skcal.io",
    "skcal._cli_calibrate",
    "skcal.utils",
    "skcal._backend",
}

#: Families of calibrators by subpackage.
_FAMILIES = {"skcal.scaling": "scaling", "skcal.ovr": "ovr"}


def calibrator_family(cls):
    """``"scaling"`` (maps of the whole logit vector), ``"ovr"`` (per-class maps) or ``"other"``.

    Parameters
    ----------
    cls : type
        A calibrator class; its subpackage decides the family.

    Returns
    -------
    family : {"scaling", "ovr", "other"}
    """
    return _FAMILIES.get(".".join(cls.__module__.split(".")[:2]), "other")


def method_name(cls):
    """Short method name of a calibrator class, as ``skcal benchmark`` lists it.

    The class name without its ``Scaler`` / ``Calibrator`` suffix, in lower case
    with words joined by ``-``: ``TemperatureScaler`` -> ``"temperature"``,
    ``EnsembleTemperatureScaler`` -> ``"ensemble-temperature"``.

    Parameters
    ----------
    cls : type
        A calibrator class.

    Returns
    -------
    name : str
    """
    name = re.sub(r"(Scaler|Calibrator)$", "", cls.__name__) or cls.__name__
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def all_calibrators(family=None):
    """Every public calibrator of skcal, as ``(name, class)`` pairs sorted by name.

    A calibrator is a concrete subclass of :class:`skcal.base.BaseCalibrator`
    named in the ``__all__`` of an skcal module. Modules whose optional
    dependencies are missing are skipped (their import raises ImportError).

    Parameters
    ----------
    family : {"scaling", "ovr", "other"} or None, default=None
        Only calibrators of this family (see :func:`calibrator_family`);
        None for all.

    Returns
    -------
    calibrators : list of (str, type)
        Class names and classes.

    Raises
    ------
    ValueError
        For an unknown ``family``.

    Examples
    --------
    >>> from skcal.utils.discovery import all_calibrators
    >>> names = [name for name, _ in all_calibrators(family="ovr")]
    >>> "PlattScaler" in names and "TemperatureScaler" not in names
    True
    """
    if family not in (None, "scaling", "ovr", "other"):
        raise ValueError(
            f"family must be 'scaling', 'ovr', 'other' or None, got {family!r}."
        )
    import skcal
    from skcal.base import BaseCalibrator

    found = {}
    modules = [skcal]
    # pkgutil.walk_packages would import every package to walk into it, the
    # skipped ones too (skcal.benchmark imports torch): walk by hand instead
    todo = list(pkgutil.iter_modules(skcal.__path__, prefix="skcal."))
    while todo:
        info = todo.pop(0)
        if info.name.endswith("._torch") or any(
            info.name == s or info.name.startswith(s + ".") for s in _SKIP
        ):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional dependency is missing
            continue
        modules.append(module)
        if info.ispkg:
            todo.extend(pkgutil.iter_modules(module.__path__, prefix=info.name + "."))
    for module in modules:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseCalibrator)
                and not obj.__dict__.get("_abstract", False)
                and not obj.__name__.startswith("Base")
            ):
                found[obj.__name__] = obj
    out = sorted(found.items())
    if family is not None:
        out = [(n, c) for n, c in out if calibrator_family(c) == family]
    return out
