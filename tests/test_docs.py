"""The documentation site's structure (the build itself, `mkdocs build --strict`, runs in
CI): every page of the nav exists, and the generated API reference gives every public
name of every public module a page."""

import importlib
import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _hook():
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    spec = importlib.util.spec_from_file_location("api_hook", ROOT / "docs" / "_hooks" / "api.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_nav_page_exists():
    text = (ROOT / "mkdocs.yml").read_text()
    pages = re.findall(r":\s+([\w./-]+\.md)\s*$", text, flags=re.M)
    assert "index.md" in pages and "RESULTS.md" in pages
    missing = [p for p in pages if not (ROOT / "docs" / p).is_file()]
    assert not missing, missing


def test_every_public_name_has_an_api_page():
    hook = _hook()
    modules = hook.public_modules()
    names = hook.public_names()
    for module, public in modules.items():
        for name in public:
            page = names[f"{module}.{name}"]
            home = page.removeprefix("api/").removesuffix(".md")
            # the page documents a module that lists the same object under that name
            assert name in modules[home], (module, name, home)
            assert getattr(importlib.import_module(home), name) is getattr(importlib.import_module(module), name)


def test_api_pages_render_each_name_once():
    hook = _hook()
    modules = hook.public_modules()
    home = hook.homes(modules)
    for module, public in modules.items():
        page = hook.module_page(module, public, home)
        own = [n for n in public if home[(module, n)] == module]
        for n in own:
            assert f"        - {n}\n" in page + "\n", (module, n)
        for n in set(public) - set(own):
            assert f"| `{n}` |" in page, (module, n)
