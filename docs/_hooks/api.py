"""MkDocs hook: the API reference, one page per public module, generated at build time.

Every module of ``mumbo_jax`` with a non-empty ``__all__`` gets ``api/<module>.md``, which
renders (mkdocstrings) the names of its ``__all__`` defined there; a name that a module
re-exports is listed with a link to the page of its home module (the deepest module that
lists it in ``__all__``), so each object is documented once. ``api/index.md`` lists every
module and the top-level names. ``public_names()`` is what tests/test_docs.py checks.
"""

from __future__ import annotations

import importlib
import pathlib
import pkgutil

from mkdocs.structure.files import File

PACKAGE = "mumbo_jax"
DOCS = pathlib.Path(__file__).resolve().parents[1]
# optional pages written by others: put into the nav when they exist
OPTIONAL_HOWTO = [("Long runs and resuming", "howto/long-runs.md"), ("Unreliable cheap sources", "howto/robust.md")]
RULE_PAGES = ("tutorials/decision-rule.md", "tutorials/own-rule.md", "howto/decision-rule.md",
              "howto/write-a-rule.md", "howto/decision-rules.md", "tutorials/rules.md")


def public_modules() -> dict[str, list[str]]:
    """``{module name: its __all__}`` for every module of the package that has one."""
    root = importlib.import_module(PACKAGE)
    out = {PACKAGE: list(root.__all__)}
    for info in pkgutil.walk_packages(root.__path__, PACKAGE + "."):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        mod = importlib.import_module(info.name)
        names = list(getattr(mod, "__all__", []) or [])
        if names:
            out[info.name] = names
    return out


def homes(modules: dict[str, list[str]]) -> dict[tuple[str, str], str]:
    """``{(module, name): home module}``: where the object behind each public name is
    documented (the deepest module listing the same object under the same name)."""
    objs = {m: importlib.import_module(m) for m in modules}
    listing: dict[str, list[str]] = {}
    for m, names in modules.items():
        for n in names:
            listing.setdefault(n, []).append(m)
    out = {}
    for m, names in modules.items():
        for n in names:
            obj = getattr(objs[m], n)
            same = [o for o in listing[n] if getattr(objs[o], n, None) is obj]
            defined = getattr(obj, "__module__", None)
            if defined in same:  # a function or class: its own module when it is public
                out[(m, n)] = defined
            else:
                out[(m, n)] = max(same, key=lambda o: (o.count("."), o))
    return out


def public_names() -> dict[str, str]:
    """``{"module.name": page}`` for every public name (tests: each has a page)."""
    modules = public_modules()
    return {f"{m}.{n}": f"api/{h}.md" for (m, n), h in homes(modules).items()}


def module_page(module: str, names: list[str], home: dict) -> str:
    """The markdown of ``api/<module>.md``: the names of ``names`` whose home (``home``, from
    :func:`homes`) is ``module`` rendered there, the others in a table linking to their home."""
    own = [n for n in names if home[(module, n)] == module]
    other = [n for n in names if home[(module, n)] != module]
    lines = [f"# `{module}`", ""]
    if own:
        lines += [f"::: {module}", "    options:", "      members:"]
        lines += [f"        - {n}" for n in own]
        lines.append("")
    else:
        lines += [f"::: {module}", "    options:", "      members: false", ""]
    if other:
        lines += ["## Re-exported here", "", "| name | documented in |", "|---|---|"]
        lines += [f"| `{n}` | [`{home[(module, n)]}`]({home[(module, n)]}.md#{home[(module, n)]}.{n}) |"
                  for n in other]
        lines.append("")
    return "\n".join(lines)


def _index(modules: dict, home: dict) -> str:
    lines = ["# API reference", "",
             "Generated from the docstrings: one page per public module, each listing the "
             "names of its `__all__` (a re-exported name links to the module that defines it).", "",
             "## Top-level names (`import mumbo_jax as mj`)", "", "| name | documented in |", "|---|---|"]
    for n in modules[PACKAGE]:
        h = home[(PACKAGE, n)]
        link = f"[`{h}`]({h}.md#{h}.{n})" if h != PACKAGE else f"[`{PACKAGE}`]({PACKAGE}.md)"
        lines.append(f"| `mj.{n}` | {link} |")
    lines += ["", "## Modules", ""]
    lines += [f"* [`{m}`]({m}.md)" for m in sorted(modules) if m != PACKAGE]
    return "\n".join(lines) + "\n"


def _in_nav(nav, rel) -> bool:
    if isinstance(nav, str):
        return nav == rel
    if isinstance(nav, dict):
        return any(_in_nav(v, rel) for v in nav.values())
    if isinstance(nav, list):
        return any(_in_nav(v, rel) for v in nav)
    return False


def on_config(config):
    nav = config["nav"]
    howto = next((item for item in nav if isinstance(item, dict) and "How-to" in item), None)
    if howto is not None:
        for title, rel in OPTIONAL_HOWTO:
            if (DOCS / rel).is_file() and not _in_nav(nav, rel):
                howto["How-to"].append({title: rel})
    tutorials = next((item for item in nav if isinstance(item, dict) and "Tutorials" in item), None)
    if tutorials is not None:
        for rel in RULE_PAGES:
            if (DOCS / rel).is_file() and not _in_nav(nav, rel):
                tutorials["Tutorials"].append({"Your own decision rule": rel})
    modules = public_modules()
    api = next((item for item in nav if isinstance(item, dict) and "API reference" in item), None)
    if api is not None:
        api["API reference"] = [{"Overview": "api/index.md"}] + [
            {m: f"api/{m}.md"} for m in sorted(modules) if m != PACKAGE] + [{PACKAGE: f"api/{PACKAGE}.md"}]
    return config


def on_files(files, config):
    modules = public_modules()
    home = homes(modules)
    pages = {"api/index.md": _index(modules, home)}
    for m, names in modules.items():
        pages[f"api/{m}.md"] = module_page(m, names, home)
    for rel, text in pages.items():
        files.append(File.generated(config, rel, content=text))
    return files
