"""The schema layer: one description per key drives validation, messages and docs (the
the docs' configuration reference (docs/howto/configs-cli.md) is generated from it and must stay in sync)."""

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.run import cli, config
from mumbo_jax.run.schema import ConfigError, Field, Section, check_sections, render_markdown, render_text
from mumbo_jax.run.tune import TUNE_SECTIONS

CONFIG_REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "howto" / "configs-cli.md"
ALL_SECTIONS = config.RUN_SECTIONS + config.COMPARE_SECTIONS + TUNE_SECTIONS


def fail(msg):
    raise ConfigError(msg)


def message(field: Field, value) -> str:
    with pytest.raises(ConfigError) as info:
        field.check(value, "[s]", fail)
    return str(info.value)


def test_field_types_ranges_and_choices():
    n = Field("n", int, "count", low=1)
    assert n.check(3, "[s]", fail) == 3
    assert message(n, 0) == "[s] n must be >= 1, got 0"
    assert message(n, 2.0) == "[s] n must be an integer, got float 2.0"
    assert message(n, True) == "[s] n must be an integer, got boolean True"
    x = Field("x", float, "rate", low=0, low_open=True, high=1)
    assert x.check(1, "[s]", fail) == 1.0 and isinstance(x.check(1, "[s]", fail), float)
    assert message(x, 0) == "[s] x must be > 0, got 0"
    assert message(x, 1.5) == "[s] x must be <= 1, got 1.5"
    assert message(x, float("nan")) == "[s] x must be a finite number, got nan"
    assert message(x, "0.5") == "[s] x must be a number, got string '0.5'"
    registry = ["a"]
    c = Field("c", str, "name", choices=lambda: registry, noun="thing")
    registry.append("b")  # read when checked, not when declared
    assert c.check("b", "[s]", fail) == "b"
    assert message(c, "z") == "[s] c: unknown thing 'z'; allowed: a, b"
    lst = Field("l", list, "labels", items=str, nonempty=True)
    assert message(lst, []) == "[s] l must be a non-empty array, got []"
    assert message(lst, ["a", 1]) == "[s] l must be an array of strings, got ['a', 1]"
    assert message(Field("o", str, "out"), "  ") == "[s] o must be a non-empty string"


def test_section_validate_and_check_sections():
    s = Section("s", "doc", (Field("a", int, "a", required=True), Field("b", str, "b", default="x")), required=True)
    assert s.validate({"a": 1}, fail) == {"a": 1, "b": "x"}
    with pytest.raises(ConfigError, match=r"^unknown key 'c' in \[s\]; allowed keys: a, b$"):
        s.validate({"a": 1, "c": 2}, fail)
    with pytest.raises(ConfigError, match=r"^\[s\] a is required$"):
        s.validate({}, fail)
    with pytest.raises(ConfigError, match=r"^missing section \[s\] \(it needs at least a\)$"):
        check_sections({}, [s], fail)
    with pytest.raises(ConfigError, match=r"^unknown section or key 't'; allowed sections: \[s\]$"):
        check_sections({"s": {}, "t": {}}, [s], fail)
    with pytest.raises(ConfigError, match=r"^'s' must be a section \[s\], got integer 3$"):
        check_sections({"s": 3}, [s], fail)


def test_settings_sections_are_generated_from_the_records():
    """One [settings.<record>] section per record of BOSettings, one key per field, with
    the field's default and the doc of its metadata; at most 12 names at the top."""
    records = {f.name: f for f in dataclasses.fields(BOSettings) if f.name not in ("strategy", "options")}
    sections = {s.name: s for s in config.SETTINGS_SECTIONS}
    assert list(sections) == [f"settings.{name}" for name in records]
    for name, rf in records.items():
        record = rf.default_factory()
        keys = {f.name: f for f in sections[f"settings.{name}"].fields}
        assert list(keys) == [f.name for f in dataclasses.fields(record)], name
        for f in dataclasses.fields(record):
            assert keys[f.name].default == f.default == getattr(record, f.name), (name, f.name)
            assert keys[f.name].doc == f.metadata["field"].doc, (name, f.name)
    public = [n for n in dir(BOSettings()) if not n.startswith("_")]
    assert len(public) <= 12, public


def test_every_key_is_documented():
    for section in ALL_SECTIONS:
        assert section.doc.strip(), section.name
        for f in section.fields:
            assert f.doc.strip() and "``" not in f.doc, (section.name, f.name)
        text, md = render_text([section]), render_markdown([section])
        assert all(f.name in text and f"`{f.name}`" in md for f in section.fields)


def test_docs_configuration_reference_is_generated_from_the_schema():
    """Regenerate with: mumbo-jax config-help --markdown (between the markers)."""
    text = CONFIG_REFERENCE.read_text()
    m = re.search(r"<!-- config-reference: start -->\n(.*?)<!-- config-reference: end -->", text, flags=re.S)
    assert m, "docs/howto/configs-cli.md lost its configuration reference markers"
    # in a fresh process: the rule table of this one holds whatever earlier tests registered, in their order
    fresh = subprocess.run([sys.executable, "-c", "import jax; jax.config.update('jax_enable_x64', True); "
                            "from mumbo_jax.run import cli; print(cli.config_help(markdown=True), end='')"],
                           capture_output=True, text=True, check=True)
    assert m.group(1) == fresh.stdout


def test_robustness_levers_and_models_in_a_run_config():
    """The robustness levers' settings and the icm_disc model pass through a run config; their
    ranges and choices are checked with the key named."""
    from mumbo_jax.run.config import parse_config, settings_from_config
    base = {"problem": "park", "budget": 10.0, "model": "icm_disc"}
    cfg = parse_config({"run": base, "settings": {"maximiser": {"boundary_frac": 0.0},
                                                   "recommendation": {"rule": "lcb"}}})
    s = settings_from_config(cfg)
    assert (s.maximiser.boundary_frac, s.recommendation.rule, cfg.model) == (0.0, "lcb", "icm_disc")
    for table, msg in (({"maximiser": {"boundary_frac": 1.5}}, r"\[settings.maximiser\] boundary_frac"),
                       ({"recommendation": {"rule": "best"}}, r"\[settings.recommendation\] rule")):
        with pytest.raises(ConfigError, match=msg):
            parse_config({"run": base, "settings": table})
    with pytest.raises(ConfigError, match="model"):
        parse_config({"run": {**base, "problem": "currin_continuous"}})
