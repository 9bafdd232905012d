"""Docstring text shared by every calibrator, substituted by a decorator.

The parameters that :class:`skcal.base.BaseCalibrator` defines for all
calibrators (``input_type``, ``classes``, ``backend``) are documented once,
here; a calibrator's docstring names them as ``%(input_type)s`` etc. (or all
three as ``%(calibrator_params)s``) and is decorated with
:func:`substitute_docstring`.
"""

import re
import textwrap

__all__ = ["SHARED_DOCS", "SHARED_TEXT", "substitute_docstring"]

#: The shared parameter entries, without indentation.
SHARED_DOCS = {
    "input_type": """\
input_type : {"logits", "probabilities"}, default="logits"
    What ``X`` holds. Probabilities are turned into logits by ``log``.""",
    "classes": """\
classes : array-like of shape (n_classes,), default=None
    Labels of the columns of ``X``, in column order (sorted or not). By
    default the sorted unique labels of ``y``; with integer labels ``0..K-1``
    that include 0 some classes may be absent. ``classes_`` is these labels
    sorted, and the columns are reordered to match it.""",
    "backend": """\
backend : {"auto", "numpy", "torch"}, default="auto"
    Array library used for the computation; ``"auto"`` follows the input.""",
}
#: Other shared text (same substitution): runs of parameters, paragraphs of Notes
#: and pieces of the methods' docstrings (:class:`skcal.base.BaseCalibrator`'s and
#: the meta-estimators').
SHARED_TEXT = {
    # the three above, the first entries of most calibrators
    "calibrator_params": "\n".join(
        SHARED_DOCS[name] for name in ("input_type", "classes", "backend")
    ),
    # Notes of the calibrators with a prior counted in rows (_weights.weight_unit)
    "weight_unit": """\
**Sample weights**: the prior counts rows (:ref:`sample-weights`). Its
weighted counts are divided by the weight of one row: 1 without weights;
the greatest common divisor of whole-number weights; ``c`` for other weights
``w_i = c m_i`` with whole ``m_i <= 16`` of gcd 1 (scaled integer weights);
otherwise (weights with a fractional part, such as class-balanced weights)
the mean positive weight. So integer weights fit exactly like repeated rows,
small integer weights fit alike at any scale (normalised to sum to 1, say),
other weights count one row per row, and unweighted data count their rows,
ties included (:func:`skcal.utils._weights.weight_unit`).""",
    # the Parameters section of predict_proba / predict_log_proba / predict / transform
    "predict_params": """\
Parameters
----------
X : array-like or torch.Tensor of shape (n_samples, n_classes), (n_samples, 1) or (n_samples,)
    Outputs of the same kind as in ``fit``.""",
    # the Returns section of predict_log_proba / transform
    "log_proba_returns": """\
Returns
-------
log_proba : ndarray or torch.Tensor of shape (n_samples, n_classes)""",
    # score's parameters after X, and its Returns section
    "score_y_returns": """\
y : array-like of shape (n_samples,)
    True labels; must be among ``classes_``.
sample_weight : array-like of shape (n_samples,), default=None

Returns
-------
score : float
    ``sum_i w_i log p_i[y_i] / sum_i w_i``; ``-inf`` when a true label has
    probability 0.""",
}

_FIELD = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)


def substitute_docstring(obj=None, *, entries=None):
    """Replace the lines ``%(name)s`` of ``obj.__doc__`` by shared entries.

    The entries are those of :data:`SHARED_DOCS` and :data:`SHARED_TEXT`. Each
    placeholder must stand alone on its line; the entry is indented like the
    placeholder. Unknown names raise ``KeyError`` at import time, so a typo
    cannot reach the documentation.

    Parameters
    ----------
    obj : class or function, optional
        Its ``__doc__`` is rewritten in place (``None`` is left alone, as under
        ``python -OO``). When omitted, a decorator is returned (for
        ``@substitute_docstring(entries=...)``).
    entries : dict of str to str, default=None
        Further entries, e.g. the parameters shared by the calibrators of one
        module, looked up before the shared ones.

    Returns
    -------
    obj or callable
        The same object, so this works as a decorator; without ``obj``, the
        decorator.
    """
    table = {**SHARED_DOCS, **SHARED_TEXT, **(entries or {})}
    if obj is None:
        return lambda o: substitute_docstring(o, entries=entries)
    if obj.__doc__:
        obj.__doc__ = _FIELD.sub(
            lambda m: textwrap.indent(table[m["name"]], m["indent"]), obj.__doc__
        )
    return obj
