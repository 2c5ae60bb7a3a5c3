"""No import cycle among the modules of mumbo_jax.

The graph is read from the source with ``ast`` (nothing is imported): an edge A -> B for
every ``import`` / ``from ... import`` in module A that names module B of the package
(``from mumbo_jax.bo import batch`` is an edge to ``mumbo_jax.bo.batch``; ``from
mumbo_jax.bo.batch import X`` too; relative imports are resolved). Imports inside
functions count as well as module-level ones: a function-level import that closes a
cycle only hides it (the two modules still need each other), and the cycles this test
was written against (``bo/settings -> bo/batch -> bo/stages -> bo/settings``,
``bo/asktell <-> bo/safe_recommendation``) ran through such lazy imports. Not counted:
imports under ``if TYPE_CHECKING:`` (never executed; annotations only) and modules
loaded by name at run time (``importlib.import_module``, as the package's lazy
top-level names and the contrib rules' discovery do). An edge from a module to its own
package's ``__init__`` is an edge like any other.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = "mumbo_jax"
ROOT = pathlib.Path(__file__).resolve().parents[1] / PACKAGE


def modules(root: pathlib.Path = ROOT) -> dict[str, pathlib.Path]:
    """``{dotted module name: file}`` for every ``.py`` file of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _known(name: str, mods) -> str:
    """The deepest module of the package that ``name`` lies in."""
    while name not in mods and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _targets(module: str, node: ast.stmt, mods) -> list[str]:
    if isinstance(node, ast.Import):
        return [_known(a.name, mods) for a in node.names if a.name.split(".")[0] == PACKAGE]
    if node.level:  # relative: from its package (a package's __init__ is its own package)
        package = module if mods[module].name == "__init__.py" else module.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            package = package.rsplit(".", 1)[0]
        base = package + ("." + node.module if node.module else "")
    else:
        base = node.module or ""
    if base.split(".")[0] != PACKAGE:
        return []
    return [base + "." + a.name if base + "." + a.name in mods else _known(base, mods) for a in node.names]


def _is_type_checking(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imports(module: str, mods) -> list[tuple[str, int]]:
    """``[(imported module, line)]``: every import of a package module in ``module``'s
    source, at any depth (functions, classes, branches), but ``if TYPE_CHECKING:`` blocks."""
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                for sub in child.orelse:  # an else branch does run
                    visit_stmt(sub)
                continue
            visit_stmt(child)

    def visit_stmt(node):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend((t, node.lineno) for t in _targets(module, node, mods))
        else:
            visit(node)

    visit(ast.parse(mods[module].read_text(encoding="utf-8")))
    return found


def graph(root: pathlib.Path = ROOT) -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line}}`` over the package (self-imports dropped)."""
    mods = modules(root)
    out = {}
    for m in mods:
        edges = {}
        for t, line in imports(m, mods):
            if t != m:
                edges.setdefault(t, line)
        out[m] = edges
    return out


def cycles(g: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each
    sorted; a self-loop cannot occur (dropped in :func:`graph`)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in g:
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g.get(w, {})))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def _describe(comp: list[str], g) -> str:
    inside = set(comp)
    edges = [f"{a} -> {b} (line {line})" for a in comp for b, line in sorted(g[a].items()) if b in inside]
    return "; ".join(edges)


def test_the_package_has_no_import_cycle():
    g = graph()
    assert len(g) > 50  # the scan found the package
    found = cycles(g)
    assert not found, "import cycles: " + " | ".join(_describe(c, g) for c in found)


def test_the_scan_sees_lazy_relative_and_guarded_imports(tmp_path):
    """The scan itself (guards the test above): a cycle through a function-level import
    and a relative import is found; one through ``TYPE_CHECKING`` is not."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from . import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from mumbo_jax.sub.a import X\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from mumbo_jax.sub import d\n")
    (pkg / "sub" / "d.py").write_text("import mumbo_jax.sub.c\n")
    g = graph(pkg)
    assert g["mumbo_jax.sub.a"] == {"mumbo_jax.sub.b": 1} and g["mumbo_jax.sub.b"] == {"mumbo_jax.sub.a": 2}
    assert g["mumbo_jax.sub.c"] == {} and g["mumbo_jax.sub.d"] == {"mumbo_jax.sub.c": 1}
    assert cycles(g) == [["mumbo_jax.sub.a", "mumbo_jax.sub.b"]]


@pytest.mark.parametrize("module", ["mumbo_jax.bo.settings", "mumbo_jax.bo.batch", "mumbo_jax.bo.stages",
                                    "mumbo_jax.bo.asktell", "mumbo_jax.bo.safe_recommendation"])
def test_the_modules_of_the_old_cycles_import_on_their_own(module):
    """Each module of the two former cycles imports first in a fresh interpreter."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, timeout=300)
