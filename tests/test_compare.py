"""mumbo-jax compare: config schema, summary statistics and a tiny end-to-end sweep."""

import json
import math

import numpy as np
import pytest

from mumbo_jax.bo import rules
from mumbo_jax.run import cli, compare
from mumbo_jax.run.config import (
    DEPRECATED_LABELS, STRATEGY_PRESETS, ConfigError, load_compare_config, parse_compare_config,
)
from tests.bo_helpers import FAST_RECOMMENDATION_TOML, FAST_TOML

BASE = {"compare": {"problem": "forrester", "budget": 30, "strategies": ["mumbo-10", "ei"]}}


def _with(**compare_keys):
    data = {"compare": {**BASE["compare"], **compare_keys}}
    return data


def test_presets_and_tables_build_settings():
    cfg = parse_compare_config({**_with(strategies=["mumbo-1", "mumbo-10-exact", "mtbo-200", "fast"]),
                                "settings": {"maximiser": {"n_candidates": 500}},
                                "strategies": {"fast": {"strategy": "mumbo", "gstar": {"samples": 3}},
                                               "mtbo-200": {"options": {"mtbo": {"representers": 20}}}}})
    s = cfg.settings
    assert (s["mumbo-1"].gstar.samples, s["mumbo-1"].strategy) == (1, "mumbo")
    assert s["mumbo-10-exact"].gstar.method == "exact"
    assert dict(s["mtbo-200"].options["mtbo"]) == {"samples": 200, "representers": 20}
    assert s["fast"].gstar.samples == 3 and all(v.maximiser.n_candidates == 500 for v in s.values())
    assert cfg.seeds == 20 and cfg.out == "runs/compare"
    assert cfg.replace(seeds=2, budget=5.0).seeds == 2
    for label, preset in STRATEGY_PRESETS.items():  # every preset names a registered rule
        assert preset["strategy"] in rules.STRATEGIES
    assert all(STRATEGY_PRESETS[name] == {"strategy": name} for name in rules.STRATEGIES if name != "mes")


@pytest.mark.parametrize("data, message", [
    ({}, "missing section \\[compare\\]"),
    ({"compare": {"problem": "forrester", "budget": 30}}, "strategies is required"),
    (_with(strategies=[]), "non-empty array"),
    (_with(strategies=["mumbo-10", "mumbo-10"]), "duplicate"),
    (_with(strategies=["kg"]), "neither a preset"),
    (_with(strategies=["boca"]), "needs a continuous fidelity"),
    ({**_with(problem="currin_continuous", strategies=["mf_gp_ucb"])}, "needs discrete fidelities"),
    (_with(seeds=0), "seeds must be >= 1"),
    (_with(budget=-1), "budget must be"),
    (_with(problem="nope"), "unknown problem"),
    (_with(colour="red"), "unknown key 'colour'"),
    ({**BASE, "settings": {"strategy": "ei"}}, "strategy belongs"),
    ({**BASE, "settings": {"gstar": {"samples": 2.5}}}, "samples must be an integer"),
    ({**BASE, "strategies": {"mine": {"strategy": "ei"}}}, "not listed"),
    ({**_with(strategies=["mine"]), "strategies": {"mine": {"gstar": {"samples": 2}}}}, "needs a strategy"),
    ({**_with(strategies=["mine"]), "strategies": {"mine": {"strategy": "ei", "bogus": 1}}},
     "unknown key 'bogus' in \\[strategies.mine\\]"),
])
def test_bad_configs_are_clear_errors(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_compare_config(data, source="c.toml")


def test_cost_to_reach_and_summary():
    c, r = [0, 1, 3, 6], [1.0, 0.05, 0.005, 0.0001]
    assert compare.cost_to_reach(c, r, 1e-2) == 3 and compare.cost_to_reach(c, r, 1e-3) == 6
    assert compare.cost_to_reach(c, r, 1e-5) == math.inf
    seeds = [{"cost_spent": c, "regret": r, "overheads": [0.1, 0.3], "n_target": 1},
             {"cost_spent": [0, 2], "regret": [1.0, 0.02], "overheads": [0.2, None], "n_target": 0},
             {"cost_spent": [0, 5], "regret": [0.5, 0.001], "overheads": [0.4], "n_target": 1}]
    s = compare.summarise_strategy(seeds)
    finals = np.array([1e-4, 0.02, 0.001])
    assert s["final_regret_median"] == pytest.approx(0.001)
    assert s["final_regret_mean"] == pytest.approx(finals.mean())
    assert s["final_regret_se"] == pytest.approx(finals.std(ddof=1) / np.sqrt(3))
    assert s["cost_to_reach"]["0.01"] == {"median_cost": 5.0, "reached": 2}  # median of (3, inf, 5)
    assert s["cost_to_reach"]["0.001"] == {"median_cost": 6.0, "reached": 2}  # median of (6, inf, 5)
    assert s["median_overhead_s"] == pytest.approx(0.25)
    table = compare.markdown_table({"a": s})
    assert "| a | 1.00e-03 |" in table and "5 (2/3)" in table


def test_paired_comparison_counts_and_exact_wilcoxon():
    rec = lambda seed, final: {"seed": seed, "regret": [1.0, final]}
    ref = [rec(k, 1e-4 * (k + 1)) for k in range(20)]
    # ten to twenty times worse, distinct differences (no tied ranks: the exact null distribution applies)
    worse = [rec(k, 1e-4 * (k + 1) * 10 ** (1 + k / 100)) for k in range(20)] + [rec(99, 1.0)]  # 99: unpaired
    c = compare.paired_comparison(ref, worse)
    assert (c["n"], c["reference_lower"], c["other_lower"], c["ties"]) == (20, 20, 0, 0)
    assert c["median_log10_ratio"] == pytest.approx(-1.095)
    # all 20 differences of one sign, no ties: exact two-sided signed-rank p = 2 / 2^20
    assert c["p_value"] == pytest.approx(2.0 / 2**20, rel=1e-9)
    mixed = [rec(0, 1e-4), rec(1, 1e-2), rec(2, 0.0)]
    c = compare.paired_comparison([rec(0, 1e-3), rec(1, 1e-3), rec(2, 0.0)], mixed)
    assert (c["reference_lower"], c["other_lower"], c["ties"]) == (1, 1, 1)  # exact zeros tie at the floor
    assert compare.paired_comparison([rec(0, 0.5)], [rec(0, 0.5)])["p_value"] is None
    table = compare.paired_table({"mumbo-10": ref, "ei": worse})
    assert "| ei | 20/20 | 0/20 | 0 | -1.10 | 1.9e-06 | 1.9e-06 |" in table  # one test: Holm changes nothing
    assert "Holm p (1 test)" in table


def test_holm_adjust_matches_a_hand_computation():
    # m = 4 tests: sorted 0.01, 0.02, 0.03, 0.04 -> 4*0.01, 3*0.02, 2*0.03, 1*0.04 = 0.04, 0.06, 0.06, 0.04,
    # then the running maximum (step-down): 0.04, 0.06, 0.06, 0.06; returned in the input order
    assert compare.holm_adjust([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    # None (every pair tied: no test) is not counted in m; values are capped at 1
    assert compare.holm_adjust([None, 0.5, 0.001, None]) == [None, pytest.approx(0.5), pytest.approx(0.002), None]
    assert compare.holm_adjust([0.6, 0.7]) == pytest.approx([1.0, 1.0])
    assert compare.holm_adjust([]) == [] and compare.holm_adjust([None]) == [None]
    # ties keep the same adjusted value whatever their order
    assert compare.holm_adjust([0.02, 0.02, 0.5]) == pytest.approx([0.06, 0.06, 0.5])
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        compare.holm_adjust([0.1, 1.5])
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        compare.holm_adjust([float("nan")])


def _holm_reference(p):
    """Holm by its definition: reject H_(j) for the smallest j with p_(j) > alpha / (m - j + 1)
    and stop; the adjusted p-value of a test is the smallest alpha at which it is rejected."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])

    def rejected(alpha):
        out = set()
        for j, i in enumerate(order):
            if p[i] * (m - j) > alpha:  # p_(j) > alpha / (m - j + 1), 1-based j
                break
            out.add(i)
        return out

    grid = sorted({min(1.0, p[i] * k) for i in range(m) for k in range(1, m + 1)})  # candidate thresholds
    return [next((a for a in grid if i in rejected(a)), 1.0) for i in range(m)]


def test_holm_adjust_equals_the_sequential_rejection_rule():
    rng = np.random.default_rng(3)
    for _ in range(30):
        p = list(rng.uniform(0, 0.2, rng.integers(1, 9)) ** rng.uniform(0.5, 3))
        assert compare.holm_adjust(p) == pytest.approx(_holm_reference(p), rel=1e-12)


def test_paired_table_adjusts_over_its_rows():
    rec = lambda seed, final: {"seed": seed, "regret": [1.0, final]}
    ref = [rec(k, 1e-3) for k in range(8)]
    worse = [rec(k, 1e-2 * (1 + k / 10)) for k in range(8)]  # 8 of 8 lower: exact p = 2/256
    mixed = [rec(k, 1e-3 * (10 if k % 2 else 0.1) * (1 + k / 10)) for k in range(8)]
    same = [rec(k, 1e-3) for k in range(8)]  # every pair tied: no test
    records = {"mumbo-10": ref, "ei": worse, "mes": mixed, "random": same}
    reference, rows = compare.paired_comparisons(records)
    raw = [rows[k]["p_value"] for k in ("ei", "mes")]
    assert reference == "mumbo-10" and rows["random"]["p_value"] is None and rows["random"]["p_holm"] is None
    assert raw[0] == pytest.approx(2 / 256)
    assert [rows[k]["p_holm"] for k in ("ei", "mes")] == pytest.approx(_holm_reference(raw))
    table = compare.paired_table(records)
    assert "Holm p (2 tests)" in table
    assert f"| ei | 8/8 | 0/8 | 0 | -1.13 | {raw[0]:.2g} | {2 * raw[0]:.2g} |" in table
    assert "| random | 0/8 | 0/8 | 8 | +0.00 | n/a | n/a |" in table
    with pytest.raises(ValueError, match="reference 'kg'"):
        compare.paired_comparisons(records, "kg")


SMALL_ACQUISITION = FAST_TOML + FAST_RECOMMENDATION_TOML  # the settings of the small end-to-end compare runs


def test_compare_cli_end_to_end(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"""
[compare]
problem = "forrester"
budget = 15
seeds = 2
max_evals = 2
strategies = ["mumbo-1", "ei", "random"]
out = "{tmp_path / 'out'}"
{SMALL_ACQUISITION}""")
    assert cli.main(["compare", str(cfg), "--strategies", "ei,random"]) == 0
    out = tmp_path / "out"
    res = json.loads((out / "results.json").read_text())
    assert list(res["strategies"]) == ["ei", "random"]
    for label, r in res["strategies"].items():
        assert len(r["per_seed"]) == 2
        for s in r["per_seed"]:
            assert len(s["regret"]) == len(s["cost_spent"]) == len(s["z"]) + 1 <= 3
            assert all(o is None or o > 0 for o in s["overheads"])
        if label in ("ei", "random"):  # target only
            assert all(z == 0 for s in r["per_seed"] for z in s["z"])
    assert (out / "comparison.png").stat().st_size > 10_000
    assert "| ei |" in (out / "table.md").read_text()
    assert "against ei:" in (out / "table.md").read_text() and "| random | " in (out / "table.md").read_text()
    # --resume keeps finished strategies (nothing is run again); --render-only redraws
    (out / "table.md").unlink()
    assert cli.main(["compare", str(cfg), "--strategies", "ei,random", "--resume"]) == 0
    assert json.loads((out / "results.json").read_text()) == res
    (out / "comparison.png").unlink()
    assert cli.main(["compare", str(cfg), "--render-only"]) == 0
    assert (out / "comparison.png").is_file() and (out / "table.md").is_file()
    # bad labels and configs exit 2 without running
    assert cli.main(["compare", str(cfg), "--strategies", "kg"]) == 2
    assert cli.main(["compare", str(tmp_path / "missing.toml")]) == 2
    assert "error" in capsys.readouterr().err


def test_shipped_configs_are_valid():
    import glob

    files = sorted(glob.glob("configs/compare_*.toml"))
    assert len(files) == 6
    for f in files:
        cfg = load_compare_config(f)
        assert cfg.seeds == 20 and "mumbo-10" in cfg.strategies
        assert not set(cfg.strategies) & set(DEPRECATED_LABELS), f  # the rules' own names, not the old spellings


def test_seed_groups_and_merged_records():
    assert compare.seed_groups(list(range(10)), 1, 2) == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]
    assert compare.seed_groups(list(range(10)), 2, 2) == [list(range(10))]
    assert compare.seed_groups(list(range(10)), 5, 2) == [list(range(10))]
    assert compare.seed_groups([0, 1], 1, 4) == [[0], [1]]
    seed = lambda i, r: {"seed": i, "cost_spent": [0.0, 1.0], "regret": [1.0, r], "z": [0], "n_target": 1,
                         "overheads": [0.1]}
    parts = [{"settings": {"a": 1}, "wall_time_s": 5.0, "summary": {}, "per_seed": [seed(0, 0.1), seed(2, 0.3)]},
             {"settings": {"a": 1}, "wall_time_s": 7.0, "summary": {}, "per_seed": [seed(1, 0.2)]}]
    merged = compare.merge_records(parts)
    assert [s["seed"] for s in merged["per_seed"]] == [0, 1, 2]
    assert merged["wall_time_s"] == 7.0
    assert merged["summary"] == compare.summarise_strategy([seed(0, 0.1), seed(1, 0.2), seed(2, 0.3)])
    assert merged["seed_groups"] == [{"seeds": [0, 2], "wall_time_s": 5.0}, {"seeds": [1], "wall_time_s": 7.0}]
    assert compare.merge_records(parts[:1]) is parts[0]


@pytest.mark.slow
def test_compare_workers_give_the_sequential_results(tmp_path):
    """--workers 2: two strategies at once in spawned processes, one core each, the same
    records as one after another (measured on the 2-core machine: see the README)."""
    cfg = tmp_path / "c.toml"
    text = """
[compare]
problem = "forrester"
budget = 15
seeds = 2
max_evals = 3
strategies = ["ei", "random"]
out = "OUT"
""" + FAST_TOML + FAST_RECOMMENDATION_TOML
    runs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        cfg.write_text(text.replace("OUT", str(out)))
        assert cli.main(["compare", str(cfg), "--workers", str(workers)]) == 0
        runs[workers] = json.loads((out / "results.json").read_text())
    assert list(runs[2]["strategies"]) == ["ei", "random"]
    # one strategy, two workers: its two seeds in two processes
    out = tmp_path / "split"
    cfg.write_text(text.replace("OUT", str(out)))
    assert cli.main(["compare", str(cfg), "--workers", "2", "--strategies", "ei"]) == 0
    split = json.loads((out / "results.json").read_text())["strategies"]["ei"]
    assert [g["seeds"] for g in split["seed_groups"]] == [[0], [1]]
    for label, b_run in (("ei", split), ("ei", runs[2]["strategies"]["ei"]), ("random", runs[2]["strategies"]["random"])):
        a, b = runs[1]["strategies"][label]["per_seed"], b_run["per_seed"]
        assert [s["seed"] for s in a] == [s["seed"] for s in b] == [0, 1]
        for sa, sb in zip(a, b):
            assert sa["z"] == sb["z"]
            np.testing.assert_allclose(np.asarray(sa["regret"], float), np.asarray(sb["regret"], float), rtol=1e-9)


def test_compare_runs_batch_strategies_and_draws_regret_per_batch(tmp_path):
    """A [strategies.<label>] table with batch.size: whole batches in the results, the
    batch size recorded, and the figure's third panel (regret against batches)."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"""
[compare]
problem = "forrester"
budget = 15
seeds = 1
max_evals = 5
strategies = ["mumbo-q2"]
out = "{tmp_path / 'out'}"
{SMALL_ACQUISITION}[strategies.mumbo-q2]
strategy = "mumbo"
batch.size = 2
batch.rule = "believer"
""")
    assert cli.main(["compare", str(cfg)]) == 0
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    (s,) = res["strategies"]["mumbo-q2"]["per_seed"]
    assert s["batch_size"] == 2 and len(s["z"]) in (2, 4)  # whole batches, never past max_evals = 5
    assert [o is not None for o in s["overheads"]] == [True, False] * (len(s["z"]) // 2)  # one record per batch
    assert (tmp_path / "out" / "comparison.png").stat().st_size > 10_000


def test_wilcoxon_p_is_exact_without_ties_and_normal_with_them():
    """The signed-rank p-value against enumerating all 2^n sign patterns (no ties) and the
    tie-corrected normal approximation written out (ties): the same on every scipy release."""
    import itertools

    from scipy import stats as sps

    from mumbo_jax.run.compare import wilcoxon_p

    d = np.random.default_rng(0).normal(size=10)
    ranks = sps.rankdata(np.abs(d))
    t = ranks[d > 0].sum()
    totals = np.array(list(itertools.product([0, 1], repeat=10))) @ ranks
    exact = min(1.0, 2 * min(np.mean(totals <= t), np.mean(totals >= t)))
    assert wilcoxon_p(d) == pytest.approx(exact, rel=1e-12)

    d = np.repeat([0.5, -0.2, 1.0, 0.3, 0.7], 4) * np.tile([1, 1, 1, -1], 5)  # n = 20, every |d| four times
    ranks = sps.rankdata(np.abs(d))
    n, t = len(d), ranks[d > 0].sum()
    _, counts = np.unique(np.abs(d), return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24 - np.sum(counts ** 3 - counts) / 48
    normal = 2 * sps.norm.sf(abs(t - n * (n + 1) / 4) / np.sqrt(var))
    assert wilcoxon_p(d) == pytest.approx(normal, rel=1e-10)
