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

import sys

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
        builtins and scikit-learn's estimators are trusted by ``skops`` by
        default; nothing else is trusted.
    """
    import skcal
    from sklearn.base import BaseEstimator

    from .utils.discovery import all_calibrators

    classes = [cls for _, cls in all_calibrators()] + [
        getattr(skcal, n)
        for n in skcal.__all__
        if isinstance(getattr(skcal, n), type)
        and issubclass(getattr(skcal, n), BaseEstimator)
    ]
    from ._backend._matrix import Features  # a NamedTuple of plain values

    classes.append(Features)
    pair = getattr(sys.modules[skcal.CalibratedClassifier.__module__], "_CalibratedPair", None)
    if pair is not None:
        classes.append(pair)
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


def load(file, *, trusted=None):
    """Read an estimator written by :func:`dump`, trusting only skcal's types.

    Parameters
    ----------
    file : str or path-like
        A ``.skops`` file.
    trusted : list of str, default=None
        Extra type names to trust besides :func:`trusted_types` (e.g. the
        classifier wrapped by a ``CalibratedClassifier`` when it is not a
        scikit-learn estimator). Check them with
        ``skops.io.get_untrusted_types(file=...)`` first.

    Returns
    -------
    estimator : estimator

    Raises
    ------
    skops.io.exceptions.UntrustedTypesFoundException
        If the file holds a type that is neither skcal's, skops' default
        trusted types, nor in ``trusted``.
    """
    return _skops().load(file, trusted=trusted_types() + list(trusted or []))
