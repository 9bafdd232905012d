"""The shared docstring text of the calibrators' common parameters."""

import pytest

from skcal.utils._docstrings import SHARED_DOCS, substitute_docstring
from skcal.utils.discovery import all_calibrators


def test_substitute_docstring_indents_entries():
    def f():
        """Doc.

        Parameters
        ----------
        %(classes)s
        x : int
        """

    substitute_docstring(f)
    lines = f.__doc__.splitlines()
    i = lines.index("        classes : array-like of shape (n_classes,), default=None")
    assert lines[i + 1].startswith("            Labels of the columns")
    assert "%(" not in f.__doc__
    assert "        x : int" in lines


def test_substitute_docstring_unknown_name_raises():
    class C:
        """%(no_such_entry)s"""

    with pytest.raises(KeyError, match="no_such_entry"):
        substitute_docstring(C)


def test_substitute_docstring_leaves_missing_docstring():
    def f():
        pass

    assert substitute_docstring(f) is f and f.__doc__ is None


@pytest.mark.parametrize("name, cls", all_calibrators())
def test_calibrator_docstrings_have_no_placeholders(name, cls):
    # a docstring built by "..." + x + "..." is not a docstring (__doc__ None)
    assert cls.__doc__, f"{name} has no docstring"
    assert "%(" not in cls.__doc__
    # the shared parameters are documented (with the shared text or their own)
    for key in ("classes", "backend"):
        if key in cls().get_params():
            assert f"    {key} : " in cls.__doc__, (name, key)


def test_shared_entries_start_with_the_parameter_name():
    for key, text in SHARED_DOCS.items():
        assert text.startswith(f"{key} : "), key
