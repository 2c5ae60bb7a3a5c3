"""The committed results tables equal what experiments/render_results.py renders from
the committed data (no runs: the data files are read, nothing is recomputed by BO)."""

import importlib.util
import json
import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _renderer():
    spec = importlib.util.spec_from_file_location("render_results", ROOT / "experiments" / "render_results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rr = _renderer()
RENDERED = rr.render_all(ROOT)


@pytest.mark.parametrize("rel", sorted(RENDERED))
def test_committed_tables_equal_the_rendered_ones(rel):
    committed = (ROOT / rel).read_text()
    assert committed == RENDERED[rel], f"{rel} is stale: run `python experiments/render_results.py`"


def _tables_outside_markers(text):
    """Markdown table header lines that no render marker encloses."""
    inside = np.zeros(len(text), bool)
    for m in rr.MARKER.finditer(text):
        inside[m.start():m.end()] = True
    return [m.group(0) for m in re.finditer(r"^\|.*\|\n\|(?:-+\|)+$", text, flags=re.M) if not inside[m.start()]]


def _without_robust_section(text):
    """RESULTS.md less its "## A robust default" section, which the robust-default study's
    own report (experiments/studies/robust_report.py) generates and checks."""
    head, sep, rest = text.partition("## A robust default")
    return head + (rest[rest.find("\n## "):] if sep and "\n## " in rest else "")


def test_every_results_table_is_rendered_from_data():
    # RESULTS.md: every table but the table of levers (whose numbers the next test checks)
    loose = _tables_outside_markers(_without_robust_section((ROOT / "docs" / "RESULTS.md").read_text()))
    assert [t.split("\n")[0] for t in loose] == ["| lever (`BOSettings`) | outcome | data |"], loose
    # the performance page and the README: no table outside a render marker
    assert not _tables_outside_markers((ROOT / "docs" / "performance.md").read_text())
    assert not _tables_outside_markers((ROOT / "README.md").read_text())
    names = {name for doc in rr.DOCS if (ROOT / doc).is_file() for name, _ in rr.markers((ROOT / doc).read_text())}
    assert {"speed", "bo_studies", "step_overhead", "overhead_mtbo", "verdict", "summary", "sweep", "ablation",
            "async_study"} <= names


def test_every_committed_sweep_is_shown():
    text = (ROOT / "docs" / "RESULTS.md").read_text()
    shown = {arg for name, arg in rr.markers(text) if name in ("compare", "summary")}
    linked = set(re.findall(r"\]\(results/([\w-]+)/", text))
    committed = {p.parent.name for p in (ROOT / "docs" / "results").glob("*/results.json")}
    assert committed <= shown | linked, committed - shown - linked


# numbers RESULTS.md states outside tables that are facts, not measurements
FACTS = {"0.0625"}  # the smallest two-sided Wilcoxon p with 5 seeds


def test_every_prose_number_of_results_is_in_a_rendered_table():
    """Each decimal number (and each percentage but the 95 % of the interval) in the prose
    of RESULTS.md, the table of levers included, appears in a table rendered from the
    data: the page's own render blocks, or the tables of the data files it links."""
    text = _without_robust_section((ROOT / "docs" / "RESULTS.md").read_text())
    rendered = "".join(m.group(4) for m in rr.MARKER.finditer(text))
    prose = re.sub(r"```.*?```", "", rr.MARKER.sub("", text), flags=re.S)
    tables = []
    for f in sorted(set(re.findall(r"data/ablations/([\w+.-]+\.json)", prose))):
        if f.startswith("batchd_"):
            tables.append(rr.render_batch_study_defaults(ROOT, f.removeprefix("batchd_")))
        else:
            tables.append(rr.render_ablation(ROOT, f))
    for name in set(re.findall(r"\]\(results/([\w-]+)/", prose)):
        tables.append(rr.compare_table(json.loads((ROOT / "docs" / "results" / name / "results.json").read_text())))
    hay = rendered + "".join(tables)
    numbers = re.findall(r"(?<![\w.])(\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+)(?![\w.])", prose)
    assert numbers
    in_tables = set(re.findall(r"(?<![\w.])(\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+)(?![\w.]|x\b)", hay))
    in_tables |= set(re.findall(r"(?<![\w.])(\d+\.\d+)x\b", hay))  # speed-ups: "6.6x"
    missing = sorted(set(numbers) - in_tables - FACTS)
    assert not missing, f"RESULTS.md states numbers no rendered table shows: {missing}"
    percents = set(re.findall(r"(\d+) %", prose)) - {"95", "1", "5"}  # the interval's level; the floors' settings
    assert not sorted(p for p in percents if not re.search(rf"(?<![\d.]){p} %", hay))


def test_results_page_is_short_and_keeps_the_lead_section():
    text = (ROOT / "docs" / "RESULTS.md").read_text()
    assert len(text.splitlines()) <= 500
    assert "## A robust default" in text
    assert text.index("## Protocol") < text.index("## The paper's figures")
    assert not re.search(r"^#.*\b(session|round|issue) \d+", text, flags=re.M | re.I)


def test_table_md_is_the_compare_output():
    # the renderer's table.md text is exactly what `mumbo-jax compare --render-only` writes
    from mumbo_jax.run import compare

    src = ROOT / "docs" / "results" / "hartmann3_full" / "results.json"
    results = json.loads(src.read_text())
    records = {lab: r["per_seed"] for lab, r in results["strategies"].items()}
    text = compare.markdown_table({lab: r["summary"] for lab, r in results["strategies"].items()})
    assert rr.compare_table(results) == text + "\n" + compare.paired_table(records)


def test_sweep_facts_come_from_the_records():
    res = json.loads((ROOT / "docs" / "results" / "hartmann3_full" / "results.json").read_text())
    text = rr.render_sweep(ROOT, "hartmann3_full")
    minutes = sum(r["wall_time_s"] for r in res["strategies"].values()) / 60
    assert f"{minutes:.1f} min in all" in text
    worst = max(o for r in res["strategies"].values() for s in r["per_seed"] for o in s["overheads"] if o)
    assert f"{worst:.1f} s" in text
    capped = [(lab, s["seed"]) for lab, r in res["strategies"].items() for s in r["per_seed"]
              if s["cost_spent"][-1] < res["budget"]]
    assert all(f"{lab} seed {seed} (" in text for lab, seed in capped) and text.count(" seed ") == len(capped)


@pytest.mark.parametrize("p_holm, ref_lower, other_lower, word", [
    (0.01, 8, 2, "below"), (0.01, 2, 8, "above"), (0.06, 9, 1, "level"), (None, 0, 0, "tied")])
def test_verdict_cell_uses_the_adjusted_p(p_holm, ref_lower, other_lower, word):
    cell = rr.verdict_cell({"p_holm": p_holm, "p_value": None if p_holm is None else p_holm / 3,
                            "reference_lower": ref_lower, "other_lower": other_lower})
    assert cell.startswith(word)


def test_a_comparison_without_pairs_is_not_compared_and_not_in_the_family():
    from scipy import stats

    from mumbo_jax.run import compare

    def seeds(ids, scale):
        return [{"seed": k, "regret": [1.0, scale * (k + 1) ** 1.5]} for k in ids]

    records = {"mumbo-10": seeds(range(8), 1.0), "ei": seeds(range(8), 3.0), "mes": seeds(range(50, 58), 1.0)}
    _, rows = compare.paired_comparisons(records, "mumbo-10")
    assert rows["mes"]["n"] == 0 and rr.verdict_cell(rows["mes"]).startswith("not compared")
    raw = stats.wilcoxon(np.log10([(k + 1) ** 1.5 for k in range(8)]),
                         np.log10([3.0 * (k + 1) ** 1.5 for k in range(8)])).pvalue
    assert rows["ei"]["p_holm"] == pytest.approx(raw)  # a family of one: the empty test is not counted
    assert rr.verdict_cell(rows["ei"]).startswith("below")


def test_unknown_markers_and_missing_data_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown renderer 'nope'"):
        rr.render_text("<!-- render: nope -->\n<!-- /render -->", ROOT)
    with pytest.raises(ValueError, match="data/speed.json not found"):
        rr.render_text("<!-- render: speed -->\nold\n<!-- /render -->", tmp_path)


def test_check_mode_reports_a_stale_table(tmp_path):
    for rel in rr.DOCS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "speed.json").write_text((ROOT / "data" / "speed.json").read_text())
    (tmp_path / "README.md").write_text("## Speed\n<!-- render: speed -->\nan old table\n<!-- /render -->\n")
    (tmp_path / "docs" / "RESULTS.md").write_text("nothing generated\n")
    assert rr.stale(tmp_path) == ["README.md"]
    (tmp_path / "README.md").write_text(rr.render_all(tmp_path)["README.md"])
    assert rr.stale(tmp_path) == [] and "an old table" not in (tmp_path / "README.md").read_text()
