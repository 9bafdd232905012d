"""Print the import cycles among skcal's modules.

Every ``import`` / ``from ... import`` statement of every module under
``skcal/`` is counted, including imports inside functions (lazy imports)
and under ``if TYPE_CHECKING:``.  Edges *from* a package's ``__init__.py``
are left out (re-exports), but edges *to* a package are kept.  The strongly
connected components of the resulting graph with more than one module (or a
module importing itself) are the import cycles.

Usage::

    python tools/import_cycles.py            # prints the cycles, exit 1 if any
    python tools/import_cycles.py --edges    # also prints every edge inside a cycle
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

__all__ = ["import_graph", "import_cycles"]

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "skcal"


def _module_name(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module, node, is_package):
    """Return the absolute names a ``from``/``import`` node refers to."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base)
        target = f"{prefix}.{node.module}" if node.module else prefix
    else:
        target = node.module
    # ``from pkg import name`` may import the submodule ``pkg.name``.
    return [target] + [f"{target}.{alias.name}" for alias in node.names]


def import_graph(root=ROOT, package=PACKAGE):
    """Return ``{module: set of imported skcal modules}``.

    Parameters
    ----------
    root : path-like, default=the repository root
        Folder that holds the package folder.
    package : str, default="skcal"
        The package to analyse.

    Returns
    -------
    graph : dict of str to set of str
        Edges from every module; those of ``__init__`` modules are empty.
    """
    root = Path(root)
    files = sorted((root / package).rglob("*.py"))
    modules = {_module_name(f, root): f for f in files}
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges = set()
        if not is_package:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                for target in _resolve(name, node, is_package):
                    # the longest existing module prefix of the target
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target and target != name:
                        edges.add(target)
        graph[name] = edges
    return graph


def import_cycles(graph):
    """Return the strongly connected components with more than one module.

    Parameters
    ----------
    graph : dict of str to set of str
        As returned by :func:`import_graph`.

    Returns
    -------
    cycles : list of list of str
        Each component sorted, the list sorted by its first module.
    """
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):  # Tarjan's algorithm, iterative to avoid deep recursion
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print the edges inside each cycle")
    args = parser.parse_args(argv)
    graph = import_graph()
    cycles = import_cycles(graph)
    n_files = sum(len(c) for c in cycles)
    print(f"{len(cycles)} import cycle(s) covering {n_files} module(s)")
    for comp in cycles:
        print("  " + ", ".join(comp))
        if args.edges:
            members = set(comp)
            for m in comp:
                for t in sorted(graph[m] & members):
                    print(f"      {m} -> {t}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
