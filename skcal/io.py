"""Safe persistence of skcal estimators with ``skops.io`` (needs the ``skops`` extra).

``skops.io`` stores an estimator as a zip of JSON and NumPy arrays and, when
loading, refuses every type that the caller has not trusted, so loading an
untrusted file cannot run code as ``pickle.load`` can. This is the format
scikit-learn recommends for files from untrusted sources.

Examples
--------
>>> import numpy as np, os, tempfile
>>> from skcal import TemperatureScaler
>>> from skcal.io import dump, load
>>> rng = np.random.default_rng(0)
>>> Z = rng.normal(size=(100, 3)) * 3
>>> y = (Z + 3 * rng.normal(size=(100, 3))).argmax(axis=1)
>>> ts = TemperatureScaler().fit(Z, y)
>>> path = os.path.join(tempfile.mkdtemp(), "ts.skops")
>>> dump(ts, path)
>>> load(path).temperature_ == ts.temperature_
True

Without these helpers, the same call with ``skops.io`` itself is::

    import skops.io as sio
    from skcal.io import trusted_types
    sio.dump(model, "model.skops")
    model = sio.load("model.skops", trusted=trusted_types())
"""

import importlib
import inspect
from pathlib import Path

__all__ = ["dump", "load", "trusted_types"]


def trusted_types():
    """Fully qualified names of skcal's own types, to pass as ``trusted=``.

    Returns
    -------
    names : list of str
        Every public estimator class of skcal (calibrators,
        ``ClassifierLogits``, ``CalibratedClassifier``) and the private
        ``_CalibratedPair`` that ``CalibratedClassifier`` stores, e.g.
        ``"skcal._temperature.TemperatureScaler"``. NumPy arrays, Python
        builtins and scikit-learn's public estimators are trusted by
        ``skops`` by default; :func:`load` also trusts the other
        scikit-learn classes a file holds (see there).
    """
    import skcal
    from sklearn.base import BaseEstimator

    from .utils.discovery import all_calibrators

    public = [getattr(skcal, n) for n in skcal.__all__]
    classes = [cls for _, cls in all_calibrators()] + [
        c for c in public if isinstance(c, type) and issubclass(c, BaseEstimator)]
    from ._backend._matrix import Features  # a NamedTuple of plain values
    from .meta._calibrated import _CalibratedPair

    classes += [Features, _CalibratedPair]
    return sorted({f"{c.__module__}.{c.__qualname__}" for c in classes})


def _skops():
    try:
        import skops.io as sio
    except ImportError:
        raise ImportError(
            "skcal.io needs skops; install it with pip install 'skcal[skops]'"
        ) from None
    return sio


def dump(estimator, file):
    """Write an estimator to a ``.skops`` file.

    Parameters
    ----------
    estimator : estimator
        Any skcal estimator (fitted or not).
    file : str or path-like or file object
        Where to write.
    """
    _skops().dump(estimator, file)


def _sklearn_classes(names):
    """The names among ``names`` that are classes defined by scikit-learn.

    skops trusts scikit-learn's public estimators but not the classes they
    store (``TreePredictor`` of ``HistGradientBoostingClassifier``, ``Tree``
    of the forests, ``KDTree`` and the distance metrics of the neighbours
    models). A name is kept if its module is ``sklearn`` or below and it
    names a class there; functions (which an estimator such as
    ``FunctionTransformer`` could call) and every other type are not.
    """
    kept = []
    for name in names:
        module, _, attr = name.rpartition(".")
        if module.split(".")[0] != "sklearn":
            continue
        try:
            obj = getattr(importlib.import_module(module), attr, None)
        except ImportError:
            continue
        if inspect.isclass(obj):
            kept.append(name)
    return kept


def load(file, *, trusted=None):
    """Read an estimator written by :func:`dump`, trusting skcal's and scikit-learn's classes.

    The trusted types are :func:`trusted_types` (skcal's), skops' defaults
    (NumPy, Python builtins, scikit-learn's public estimators), every class
    defined by scikit-learn that ``skops.io.get_untrusted_types`` reports for
    this file (the internal classes of fitted scikit-learn estimators, e.g.
    ``TreePredictor`` of a ``HistGradientBoostingClassifier``), and
    ``trusted``. Functions and types of other packages are trusted only
    through ``trusted``.

    Parameters
    ----------
    file : str or path-like or file object
        A ``.skops`` file (a file object is read to its end).
    trusted : list of str, default=None
        Extra type names to trust (e.g. the classifier wrapped by a
        ``CalibratedClassifier`` when it is not a scikit-learn estimator).
        Check them with ``skops.io.get_untrusted_types(file=...)`` first.

    Returns
    -------
    estimator : estimator

    Raises
    ------
    skops.io.exceptions.UntrustedTypesFoundException
        If the file holds a type that is none of the above.
    """
    sio = _skops()
    data = file.read() if hasattr(file, "read") else Path(file).read_bytes()
    allowed = trusted_types() + _sklearn_classes(sio.get_untrusted_types(data=data))
    return sio.loads(data, trusted=allowed + list(trusted or []))
