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


def _nav_pages(section: str) -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text()
    block = text.split(f"  - {section}:\n", 1)[1].split("\n  - ", 1)[0]
    return re.findall(r":\s+([\w./-]+\.md)\s*$", block, flags=re.M)


def test_the_landing_page_links_every_tutorial_and_how_to():
    index = (ROOT / "docs" / "index.md").read_text()
    pages = _nav_pages("Tutorials") + _nav_pages("How-to")
    assert "howto/write-a-model.md" in pages
    missing = [p for p in pages if f"]({p})" not in index]
    assert not missing, missing


def test_mathjax_is_served_with_the_site():
    """The equations render offline: no script from another host, MathJax itself in docs/."""
    text = (ROOT / "mkdocs.yml").read_text()
    scripts = re.findall(r"^  - (\S+)", text.split("extra_javascript:\n", 1)[1].split("\n\n", 1)[0], flags=re.M)
    assert scripts and not [s for s in scripts if "://" in s], scripts
    assert all((ROOT / "docs" / s).is_file() for s in scripts), scripts
    assert any(s.endswith("tex-mml-chtml.js") for s in scripts)
    assert list((ROOT / "docs" / "javascripts" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))


def test_the_api_reference_hides_private_members():
    text = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r'filters:\s*\["!\^_"\]', text), "mkdocstrings must filter out names starting with _"


def test_the_config_reference_keeps_absolute_value_bars():
    """A |value| in a key's doc stays |value| in the markdown table (not 'orvalueor', not a
    cell break), and a type's choice list reads 'or'."""
    from mumbo_jax.run.schema import Field, Section, render_markdown

    fields = (Field("tol", float, "at most tol * max(|value|, 1)", default=1.0),
              Field("kind", str, "which", default="a", choices=("a", "b")))
    md = render_markdown([Section("demo", "demo", fields)])
    row = next(line for line in md.splitlines() if line.startswith("| `tol`"))
    assert "&#124;value&#124;" in row and "orvalueor" not in row and row.count("|") == 5
    assert '"a" or "b"' in next(line for line in md.splitlines() if line.startswith("| `kind`"))
    markdown = pytest.importorskip("markdown")
    import html

    page = markdown.markdown(md, extensions=["tables"])
    assert "max(|value|, 1)" in html.unescape(page) and page.count("<td>") == 8  # 2 rows of 4 cells


def test_citation_changelog_and_classifiers():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf"^version: {re.escape(project['version'])}$", cff, flags=re.M)
    assert "preferred-citation:" in cff and "MUMBO" in cff
    assert f"## [{project['version']}]" in (ROOT / "CHANGELOG.md").read_text()
    # the classifiers list the Python versions CI tests, from the lowest that requires-python allows
    versions = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert versions and versions[0] == project["requires-python"].removeprefix(">=")
    install = (ROOT / "docs" / "howto" / "install.md").read_text()
    assert all(f"CI tests Python {v}" in install for v in versions)
