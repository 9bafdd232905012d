"""Small real logit sets bundled with skcal, a loader for your own files, and
:func:`make_logits`, synthetic logits for examples.

Each loader returns a :class:`sklearn.utils.Bunch` with a calibration split
(``logits_val``, ``y_val``), a test split (``logits_test``, ``y_test``),
``n_classes``, ``name``, ``info`` and ``DESCR`` (source and licence).
"""

from ._base import *  # noqa: F403 (the loaders, as listed in _base.__all__)
from ._base import __all__ as _loaders

__all__ = [*_loaders, "make_logits"]


def __getattr__(name):
    # make_logits imports scikit-learn, which `skcal --help` (it lists the
    # bundled sets) must not load
    if name == "make_logits":
        from ._synthetic import make_logits

        return make_logits
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
