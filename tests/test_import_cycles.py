"""The import graph of skcal: no cycles, and ``skcal._backend`` at the bottom."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location(
        "import_cycles", ROOT / "tools" / "import_cycles.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def graph(tool):
    return tool.import_graph(ROOT)


def test_import_cycles_tool_finds_a_cycle(tool):
    # lazy (function-level) imports count, and so does a two-module loop
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert tool.import_cycles(graph) == [["a", "b", "c"]]
    assert tool.import_cycles({"a": {"b"}, "b": set()}) == []


def test_import_cycles_tool_counts_lazy_and_relative_imports(tool, tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from ..a import f\n")
    graph = tool.import_graph(tmp_path, "pkg")
    assert graph["pkg"] == set()  # __init__ re-exports are left out
    assert graph["pkg.a"] == {"pkg.sub", "pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a"}
    assert tool.import_cycles(graph) == [["pkg.a", "pkg.sub.b"]]


def test_import_cycles_none_in_skcal(tool, graph):
    assert "skcal.base" in graph and "skcal._backend._torch" in graph  # all read
    assert tool.import_cycles(graph) == []


def test_import_cycles_backend_imports_nothing_else_from_skcal(graph):
    assert any(m.startswith("skcal._backend.") for m in graph)
    outside = {
        (m, t)
        for m, targets in graph.items()
        if m.startswith("skcal._backend")
        for t in targets
        if not t.startswith("skcal._backend")
    }
    assert outside == set()
