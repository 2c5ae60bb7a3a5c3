"""The public surface: every module of the package declares ``__all__``, and no
module of the package reaches into another's private names or past its ``__all__``.

Read from the source with ``ast`` (an import-time check would miss calls in function
bodies), so a new cross-module call to a private helper fails here.
"""

import ast
import importlib
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "mumbo_jax"
LAYERS = ("mumbo_jax.gp", "mumbo_jax.acquisition")


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


MODULES = sorted(_module_name(p) for p in PACKAGE.rglob("*.py"))
LAYER_MODULES = [m for m in MODULES if m != "mumbo_jax.__main__"]  # every module (the name is historical)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _source(modname: str) -> str:
    path = PACKAGE.parent / (modname.replace(".", "/") + ".py")
    if not path.exists():
        path = PACKAGE.parent / modname.replace(".", "/") / "__init__.py"
    return path.read_text()


def _cross_module_uses(modname: str, source: str | None = None):
    """(line, target module, name) for every ``alias.name`` and ``from target import name``
    in ``modname`` whose target is another module of the package."""
    tree = ast.parse(_source(modname) if source is None else source)
    aliases, uses = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("mumbo_jax") and a.asname:
                    aliases[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mumbo_jax"):
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in MODULES:  # a submodule: later used as alias.attr
                    aliases[a.asname or a.name] = full
                else:
                    uses.append((node.lineno, node.module, a.name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            uses.append((node.lineno, aliases[node.value.id], node.attr))
    return [u for u in uses if u[1] != modname]


@pytest.mark.parametrize("modname", LAYER_MODULES)
def test_every_layer_module_declares_all_and_its_names_exist(modname):
    mod = importlib.import_module(modname)
    assert isinstance(getattr(mod, "__all__", None), list), f"{modname} has no __all__"
    assert len(set(mod.__all__)) == len(mod.__all__), f"{modname}.__all__ repeats a name"
    missing = [n for n in mod.__all__ if not hasattr(mod, n) and f"{modname}.{n}" not in MODULES]
    assert not missing, (modname, missing)
    assert not [n for n in mod.__all__ if _is_private(n)], modname


def test_no_module_calls_another_modules_private_names():
    """No module of the package uses a private name of another module."""
    bad = [(m, line, target, name) for m in MODULES for line, target, name in _cross_module_uses(m)
           if _is_private(name)]
    assert not bad, bad


def test_calls_into_gp_and_acquisition_stay_inside_all():
    bad = []
    for m in MODULES:
        for line, target, name in _cross_module_uses(m):
            if target.startswith(LAYERS) and target in MODULES:
                exported = importlib.import_module(target).__all__
                if name not in exported and f"{target}.{name}" not in MODULES:
                    bad.append((m, line, f"{target}.{name}"))
    assert not bad, bad


def test_the_scanner_sees_private_calls():
    """The scan itself finds planted private uses in every import style (guards the tests above)."""
    planted = (
        "from mumbo_jax.gp import posterior\n"
        "import mumbo_jax.gp.models as m\n"
        "from mumbo_jax.acquisition.baselines import _pmin\n"
        "def f():\n"
        "    return posterior._joint_moments(1), m._check_noise(2), posterior.predict\n"
    )
    uses = {(t, n) for _, t, n in _cross_module_uses("mumbo_jax.bo.example", planted)}
    assert uses == {("mumbo_jax.gp.posterior", "_joint_moments"), ("mumbo_jax.gp.models", "_check_noise"),
                    ("mumbo_jax.acquisition.baselines", "_pmin"), ("mumbo_jax.gp.posterior", "predict")}
