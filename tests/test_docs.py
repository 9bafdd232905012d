"""The documentation builds without warnings, and its code examples run.

- ``test_docs_build``: ``sphinx-build -W --keep-going -b html`` of ``docs/``
  into a temporary folder (every Sphinx or numpydoc warning fails the test).
  The example gallery is rendered with ``-D plot_gallery=0``: the examples
  are parsed and listed but not executed, to keep this test short.
- ``test_module_doctests``: the ``Examples`` sections of every module of the
  ``skcal`` package, run with :mod:`doctest` (a module whose optional
  dependency is not installed is skipped).
- ``test_docs_page_doctests``: the ``>>>`` examples of the documentation pages
  under ``docs/`` (they use the bundled data sets, never ``../shared/data``).
"""

import doctest
import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import skcal

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS_DIR = REPO_ROOT / "docs"
EXAMPLES_DIR = REPO_ROOT / "examples"

#: Optional dependencies: a module that needs a missing one is skipped.
OPTIONAL_MODULES = (
    "torch", "matplotlib", "tqdm", "psutil", "netcal", "probmetrics",
    "onnx", "onnxruntime", "skl2onnx", "skops", "pyarrow", "dask", "distributed",
)

DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _skcal_modules():
    names = [skcal.__name__]
    for info in pkgutil.walk_packages(skcal.__path__, prefix="skcal."):
        names.append(info.name)
    return sorted(names)


def _doc_pages():
    if not DOCS_DIR.is_dir():
        return []
    pages = []
    for path in sorted(DOCS_DIR.rglob("*.rst")):
        rel = path.relative_to(DOCS_DIR)
        if rel.parts[0] in ("_build", "generated", "auto_examples", "_templates"):
            continue
        if ">>>" in path.read_text(encoding="utf-8"):
            pages.append(rel.as_posix())
    return pages


def _missing_optional(exc):
    """Name of the optional dependency whose absence raised ``exc``, or None."""
    name = getattr(exc, "name", None) or ""
    root = name.split(".")[0]
    return root if root in OPTIONAL_MODULES else None


def _has_gallery():
    return any((EXAMPLES_DIR / f"README{ext}").exists() for ext in (".txt", ".rst"))


def test_docs_build(tmp_path):
    for module in ("sphinx", "numpydoc", "pydata_sphinx_theme"):
        pytest.importorskip(module)
    if _has_gallery():
        pytest.importorskip("sphinx_gallery")
    cmd = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q",
        "-b", "html", "-d", str(tmp_path / "doctrees"),
    ]
    if _has_gallery():
        # Render the gallery pages without executing the examples.
        cmd += ["-D", "plot_gallery=0"]
    cmd += [str(DOCS_DIR), str(tmp_path / "html")]
    proc = subprocess.run(
        cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, (
        f"sphinx-build failed (exit {proc.returncode}):\n{proc.stderr[-8000:]}"
        f"\n{proc.stdout[-2000:]}"
    )
    html = tmp_path / "html"
    for page in (
        "index.html",
        "api.html",
        "quickstart.html",
        "generated/skcal.TemperatureScaler.html",
        "user_guide/temperature.html",
        "user_guide/metrics.html",
    ):
        assert (html / page).is_file(), f"{page} was not built"
    # The committed reliability diagram is copied and shown.
    assert (html / "_static" / "reliability_cifar10_densenet40.png").is_file()
    index = (html / "index.html").read_text(encoding="utf-8")
    assert "reliability_cifar10_densenet40.png" in index
    ts_page = (html / "user_guide" / "temperature.html").read_text(encoding="utf-8")
    assert "reliability_cifar10_densenet40.png" in ts_page


@pytest.mark.parametrize("module_name", _skcal_modules())
def test_module_doctests(module_name):
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = _missing_optional(exc)
        if missing is None:
            raise
        pytest.skip(f"{module_name} needs the optional dependency {missing}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    tests = [t for t in finder.find(module, module_name) if t.examples]
    if not tests:
        return  # nothing to run
    report = []
    for test in tests:
        try:
            runner.run(test, out=report.append)
        except ImportError as exc:  # pragma: no cover - depends on the environment
            missing = _missing_optional(exc)
            if missing is None:
                raise
            pytest.skip(f"{test.name} needs the optional dependency {missing}")
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)


@pytest.mark.parametrize("page", _doc_pages())
def test_docs_page_doctests(page):
    text = (DOCS_DIR / page).read_text(encoding="utf-8")
    for name in OPTIONAL_MODULES:
        if f"import {name}" in text and importlib.util.find_spec(name) is None:
            pytest.skip(f"{page} needs the optional dependency {name}")
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, page, str(DOCS_DIR / page), 0)
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    report = []
    runner.run(test, out=report.append)
    assert runner.summarize(verbose=False).failed == 0, "".join(report)
