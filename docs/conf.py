"""Sphinx configuration for the skcal documentation.

Build with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` from
the repository root (``-W``: every warning is an error). Add
``-D plot_gallery=0`` to render the example gallery without running it.
The build never reads ``../shared/data``: figures that need it are made by
``tools/make_docs_figures.py`` and committed under ``docs/_static/``.
"""

import os
import sys
from pathlib import Path

DOCS_DIR = Path(__file__).resolve().parent
REPO_ROOT = DOCS_DIR.parent

# Document the working tree even when skcal is not installed.
sys.path.insert(0, str(REPO_ROOT))

import skcal  # noqa: E402
from skcal.utils.discovery import all_calibrators  # noqa: E402

#: Titles of the calibrator families in the API reference.
_FAMILY_TITLES = (
    ("scaling", "Maps of the whole logit vector"),
    ("ovr", "Per-class maps, combined one-vs-rest"),
    ("other", "Other calibrators"),
)


def _public_path(name, cls):
    """``TemperatureScaler`` if exported from skcal, else e.g. ``llm.Name`` (in skcal.llm)."""
    if getattr(skcal, name, None) is cls:
        return name
    module = ".".join(p for p in cls.__module__.split(".") if not p.startswith("_"))
    # relative to the list's ``currentmodule`` (skcal): autosummary warns on
    # items that repeat the current module
    return f"{module.removeprefix('skcal.')}.{name}"


def _write_calibrator_list():
    """Write ``_calibrators.inc``, the API reference's list of every calibrator.

    Generated from :func:`skcal.utils.discovery.all_calibrators` at every
    build, so a new calibrator cannot be left out of the reference.
    """
    lines = [".. currentmodule:: skcal", ""]
    for family, title in _FAMILY_TITLES:
        found = all_calibrators(family)
        if not found:
            continue
        lines += [title, "-" * len(title), ""]
        lines += [".. autosummary::", "   :toctree: generated/", "   :template: class.rst",
                  "   :nosignatures:", ""]
        lines += [f"   {_public_path(name, cls)}" for name, cls in found]
        lines.append("")
    (DOCS_DIR / "_calibrators.inc").write_text("\n".join(lines), encoding="utf-8")


_write_calibrator_list()

# -- Project -----------------------------------------------------------------
project = "skcal"
author = "skcal developers"
copyright = "skcal developers"
version = skcal.__version__
release = skcal.__version__

# -- General -----------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
root_doc = "index"
default_role = "literal"
pygments_style = "sphinx"

# -- autodoc / autosummary / numpydoc ----------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "groupwise"}
autodoc_typehints = "none"
# numpydoc: the class template lists the methods itself (see
# _templates/autosummary/class.rst), so numpydoc does not add a second table.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Skip members a skcal class inherits from scikit-learn.

    ``get_params``, ``set_params``, ``set_output``, ``fit_transform`` and the
    metadata-routing helpers come from scikit-learn base classes; their
    docstrings cross-reference scikit-learn's own user guide labels, which do
    not exist in this project and would be warnings under ``-W``. They are
    documented by scikit-learn; the estimator pages keep skcal's own methods
    (including those defined once in :class:`skcal.base.BaseCalibrator`).
    """
    if skip or what != "class":
        return None
    module = getattr(obj, "__module__", None) or ""
    qualname = getattr(obj, "__qualname__", "")
    if callable(obj) and module and not module.startswith("skcal"):
        return True
    if callable(obj) and not module and "." in qualname:
        return True
    return None


# -- sphinx-gallery (examples/ at the repository root) -----------------------
EXAMPLES_DIR = REPO_ROOT / "examples"
HAS_GALLERY = any((EXAMPLES_DIR / f"README{ext}").exists() for ext in (".txt", ".rst"))
if HAS_GALLERY:
    extensions.append("sphinx_gallery.gen_gallery")
    sphinx_gallery_conf = {
        "examples_dirs": "../examples",
        "gallery_dirs": "auto_examples",
        "filename_pattern": r"/plot_",
        "ignore_pattern": r"__init__\.py",
        "backreferences_dir": "generated/backreferences",
        "doc_module": ("skcal",),
        "reference_url": {"skcal": None},
        "download_all_examples": False,
        "remove_config_comments": True,
        "within_subsection_order": "FileNameSortKey",
        "matplotlib_animations": False,
        "min_reported_time": 1,
    }
else:
    # Without examples/README.txt sphinx-gallery refuses to run; the gallery
    # page is then left out of the navigation (see index.rst).
    exclude_patterns.append("auto_examples")


def _gallery_tag(app, docname, source):
    """Replace ``|gallery_toctree|`` in index.rst with the gallery entry, if any."""
    if docname == "index":
        entry = "   auto_examples/index\n" if HAS_GALLERY else ""
        source[0] = source[0].replace("   |gallery_entry|\n", entry)


autosummary_context = {"has_gallery": HAS_GALLERY}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skcal {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "install": [], "quickstart": []}
html_show_sourcelink = False


def _generate_calibrator_stubs(app):
    """Autosummary stubs of the classes listed in ``_calibrators.inc``.

    autosummary only scans documents for its directives, not files they
    include, so the generated list's pages are made here.
    """
    from sphinx.ext.autosummary.generate import generate_autosummary_docs

    generate_autosummary_docs(
        ["_calibrators.inc"],
        suffix=".rst",
        base_path=app.srcdir,
        app=app,
        imported_members=app.config.autosummary_imported_members,
        overwrite=app.config.autosummary_generate_overwrite,
        encoding=app.config.source_encoding,
    )


def setup(app):
    app.connect("builder-inited", _generate_calibrator_stubs)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("source-read", _gallery_tag)
