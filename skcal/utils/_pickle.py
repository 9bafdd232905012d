"""Pickling hook that records the skcal version (see :mod:`skcal.exceptions`)."""

import warnings

__all__ = ["VersionedPickleMixin"]

#: Key of the skcal version in an estimator's pickled ``__dict__``.
VERSION_KEY = "_skcal_version"


def _current_version():
    from .. import __version__

    return __version__


class VersionedPickleMixin:
    """Record ``skcal.__version__`` in pickles; warn when loading another version.

    Put it before :class:`sklearn.base.BaseEstimator` in the bases: it extends
    scikit-learn's own ``__getstate__`` / ``__setstate__`` (which do the same
    for the scikit-learn version).
    """

    def __getstate__(self):
        # (BaseEstimator.__getstate__ always returns a dict)
        return {**super().__getstate__(), VERSION_KEY: _current_version()}

    def __setstate__(self, state):
        if isinstance(state, dict):
            state = dict(state)
            original = state.pop(VERSION_KEY, "unknown")
            current = _current_version()
            if original != current:
                from ..exceptions import InconsistentVersionWarning

                warnings.warn(
                    InconsistentVersionWarning(
                        estimator_name=self.__class__.__name__,
                        current_skcal_version=current,
                        original_skcal_version=original,
                    ),
                    stacklevel=2,
                )
        super().__setstate__(state)
