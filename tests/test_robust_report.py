"""The robust-default report (experiments/studies/robust_report.py): its pages are what it
renders from the committed data (no runs: the data are read), and its statistics (seeds
stopped early, Holm families, the detectable factor) agree with independent computations."""

import importlib.util
import json
import math
import pathlib

import numpy as np
import pytest
from scipy import stats

ROOT = pathlib.Path(__file__).resolve().parents[1]
BASELINES = "ei,mes,mumbo,mt_ei,mf_gp_ucb,boca".split(",")


def _report():
    spec = importlib.util.spec_from_file_location("robust_report", ROOT / "experiments" / "studies" / "robust_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rr = _report()


# the development problems the multi-fidelity choice (the guard's mf_choice) was screened on
SCREEN = ["unrel_hartmann3_twotask", "unrel_branin_reliable", "unrel_hartmann3_partial", "unrel_hartmann3_reliable",
          "unrel_forrester_reliable", "unrel_branin_anti", "unrel_currin_negated", "unrel_forrester_biased"]
# (data folder ("screen+study": both, the screen's record first), reference, baselines, problems, relabel,
#  seeds, page with the summary, marker, report)
PAGES = [
    ("robust", "robust", BASELINES, None, None, None, "RESULTS.md", "robust-summary", "robust.md"),
    ("robust_heldout", "robust", BASELINES, None, None, None, "RESULTS.md", "robust-heldout-summary",
     "robust_heldout.md"),
    ("real_tasks", "robust", BASELINES, ["svm_fabolas"], None, None, "results/real_tasks.md", "real-tasks-summary",
     "real_tasks_svm.md"),
    ("real_tasks", "ei", ["mumbo", "mt_ei"], ["fastcv_svm"], {("fastcv_svm_cv", "ei"): ("fastcv_svm", "ei")}, 20,
     None, None, "real_tasks_fastcv.md"),
    ("trust_pilot", "robust_trust3", ["robust", "ei"], None, None, 25, None, None, "trust_pilot.md"),
    ("uncapped", "robust", BASELINES, None, None, None, "RESULTS.md", "uncapped-summary", "uncapped.md"),
    ("uncapped_screen+uncapped", "robust_mfc3", ["robust", "ei", "mt_ei", "mf_gp_ucb", "robust_mfc", "robust_ucb_mfc"],
     SCREEN, None, 20, None, None, "mf_choice_screen.md"),
]


@pytest.mark.parametrize("data, ref, baselines, only, relabel, seeds, page, marker, md", PAGES,
                         ids=[p[-1] for p in PAGES])
def test_summaries_and_reports_are_rendered_from_the_committed_data(data, ref, baselines, only, relabel, seeds,
                                                                    page, marker, md):
    paths = [ROOT / "data" / d for d in data.split("+")]  # "screen+study": a screen read beside its study
    if not any(paths[0].glob("*__*.json")):
        pytest.skip("no study data committed")
    runs = rr.load(paths, only, relabel, seeds)
    detail, summary, _, _ = rr.analyse(runs, ref, baselines)
    assert (ROOT / "docs" / "results" / md).read_text() == rr.report_text(detail, summary, runs), (
        f"stale: docs/results/{md} (RESULTS.md and docs/results/real_tasks.md give the commands)")
    if page:
        text = (ROOT / "docs" / page).read_text()
        assert rr.with_summary(text, summary, marker) == text, f"stale: the {marker} of docs/{page}"


# ---------------------------------------------------------------- synthetic runs


def _seed(seed, cost, regret):
    n = len(cost)
    return {"seed": seed, "cost_spent": list(cost), "regret": list(regret), "best_regret": list(regret),
            "z": [0.0] * n, "mean": [0.0] * n, "sd": [1.0] * n, "value": [0.0] * n,
            "overheads": [{"total": 0.1}] * n}


def _run(strategy, seeds, budget=10.0):
    return {"problem": "toy", "strategy": strategy, "budget": budget, "target_z": 0.0, "maximise": True,
            "seeds": [_seed(k, c, r) for k, (c, r) in seeds.items()]}


def _full(regrets):
    """Seeds spending the budget of 10 in one step each: regret 1 at cost 0, then ``r`` at 2.5, 5, 10."""
    return {k: ([0.0, 2.5, 5.0, 10.0], [1.0, r, r, r]) for k, r in enumerate(regrets)}


def _holm(ps):
    """Holm's step-down adjustment, written out: sorted p_(i) times (m - i), running maximum, capped at 1."""
    ps = list(ps)
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, run = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        run = max(run, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = run
    return out


def test_the_report_names_the_code_of_every_seed():
    seeds = [dict(_seed(i, [0, 1], [1, 0]), code=c) for i, c in enumerate(["abc123", "abc123", "def456-dirty"])]
    runs = {"p": {"robust": {"seeds": seeds[:2]}, "ei": {"seeds": seeds[2:] + [_seed(3, [0, 1], [1, 0])]}}}
    line = rr.provenance(runs)
    assert "abc123 (2 seeds), def456-dirty (1 seeds), unrecorded (1 seeds)" in line


def test_mumbo_level_target_is_checked_where_mumbo_beats_ei():
    """The "level with MUMBO" bullet names the problems where MUMBO beats EI (scipy's
    Wilcoxon, Holm over the checkpoints) and, there, a default median above 1.5x MUMBO's."""
    rng = np.random.default_rng(0)
    base = rng.uniform(1.0, 2.0, size=12)
    u = lambda: rng.uniform(0.8, 1.2, size=12)  # noqa: E731  (every run its own spread)
    mumbo, ei = base * u(), 10.0 * base * u()
    runs = {"toy": {"robust": _run("robust", _full(2.0 * base * u())), "mumbo": _run("mumbo", _full(mumbo)),
                    "ei": _run("ei", _full(ei))},
            "flat": {"robust": _run("robust", _full(base * u())), "mumbo": _run("mumbo", _full(base * u())),
                     "ei": _run("ei", _full(base * u()))}}
    st = {p: {s: rr.per_seed(r, 10.0) for s, r in by.items()} for p, by in runs.items()}
    p_each = stats.wilcoxon(np.log(mumbo), np.log(ei), zero_method="zsplit").pvalue  # the same at 25, 50, 100 %
    assert min(_holm([p_each] * 3)) < 0.05 and rr.beats(st["toy"]["mumbo"], st["toy"]["ei"])
    assert not rr.beats(st["flat"]["mumbo"], st["flat"]["ei"])
    _, summary, _, _ = rr.analyse(runs, "robust", ["ei", "mumbo"])
    line = next(x for x in summary if x.startswith("* Where MUMBO is significantly better than EI"))
    assert "(toy)" in line and "1.5 times MUMBO's on toy" in line


def test_checkpoint_values_carry_seeds_that_stopped_early():
    cost, regret = [0.0, 5.0, 9.0], [3.0, 2.0, 1.0]
    assert rr.at_cost(cost, regret, 5.0) == 2.0
    assert rr.at_cost(cost, regret, 20.0) == 1.0  # carried at its last regret, not dropped
    assert rr.stopped_before(cost, 20.0) and not rr.stopped_before(cost, 9.0)


def test_a_test_without_pairs_is_not_compared_and_leaves_the_holm_family():
    rng = np.random.default_rng(0)
    ref = rng.lognormal(size=8)
    ei = ref * rng.lognormal(1.0, 0.5, size=8)
    runs = {"toy": {"robust": _run("robust", _full(ref)), "ei": _run("ei", _full(ei)),
                    # MUMBO ran other seeds: no pair with the reference
                    "mumbo": _run("mumbo", {k + 100: v for k, v in _full(ref).items()})}}
    lines, summary, verdicts, _ = rr.analyse(runs, "robust", BASELINES)
    by = {(o, c): (v, f) for _, o, c, v, _, _, f in verdicts}
    assert all(by[("mumbo", c)][0] == "not compared" for c in rr.CHECKPOINTS)
    # the family is EI's three checkpoints only (Holm over 3, not 6)
    # (the regrets are the same at every checkpoint: three equal raw p, each adjusted 3 times)
    p = stats.wilcoxon(np.log(ref), np.log(ei)).pvalue
    adj = _holm([p, p, p])
    assert adj[0] < 0.05 < _holm([p] * 6)[0]  # with MUMBO's empty tests counted it would be "level"
    rows = [ln for ln in lines if ln.startswith("| ei |") and "%" in ln.split("|")[2]]
    assert len(rows) == 3
    for row, pa in zip(rows, adj):
        assert f"| {pa:.3g} |" in row
    assert pa < 0.05 and by[("ei", 1.0)][0] == "better"
    mumbo_rows = [ln for ln in lines if ln.startswith("| mumbo | ") and "%" in ln.split("|")[2]]
    assert mumbo_rows and all("not compared" in ln and "level" not in ln for ln in mumbo_rows)
    row = next(ln for ln in summary if ln.startswith("| toy |"))
    assert row.split("|")[10].strip() == "not compared"


def test_a_seed_stopped_by_the_cap_is_carried_marked_and_compared_at_matched_cost():
    ref = {k: ([0.0, 2.0, 4.0, 10.0], [1.0, 0.5, 0.2, 0.1 * (k + 1)]) for k in range(6)}
    other = {k: ([0.0, 2.0, 4.0, 10.0], [1.0, 0.6, 0.3, 0.05 * (k + 1)]) for k in range(6)}
    other[2] = ([0.0, 2.0, 4.0], [1.0, 0.6, 0.4])  # stopped by the cap at cost 4
    runs = {"toy": {"robust": _run("robust", ref), "mumbo": _run("mumbo", other)}}
    st = rr.per_seed(runs["toy"]["mumbo"], 10.0)
    assert st["rec"]["1"][2] == 0.4 and st["carried"]["1"] == [2] and st["carried"]["0.25"] == []
    assert st["stopped"] == 1 and st["n"] == 6
    finals = [0.05 * (k + 1) for k in range(6)]
    finals[2] = 0.4
    assert rr._median(st) == pytest.approx(float(np.median(finals)))  # all six seeds, the carried one included
    # matched cost: seed 2 of both sides at cost 4, where it stopped
    a, b, k = rr.matched(rr.per_seed(runs["toy"]["robust"], 10.0)["curves"], st["curves"], 10.0)
    assert k == 1 and a[2] == 0.2 and b[2] == 0.4 and a[0] == 0.1 and b[0] == 0.05
    lines, summary, verdicts, _ = rr.analyse(runs, "robust", BASELINES)
    la = np.log([a[s] for s in range(6)])
    lb = np.log([b[s] for s in range(6)])
    row = next(ln for ln in lines if ln.startswith("| mumbo | 100% |"))
    assert "6 (1 matched)" in row and f"| {stats.wilcoxon(la, lb).pvalue:.3g} |" in row
    assert "†1" in next(ln for ln in summary if ln.startswith("| toy |"))
    assert "1/6" in next(ln for ln in lines if ln.startswith("| mumbo | ") and "%" not in ln.split("|")[2])


def test_stopped_counts_use_each_strategys_own_seeds():
    runs = {"toy": {"robust": _run("robust", _full([0.1] * 20)),
                    "robust_mes": _run("robust_mes", {k: ([0.0, 2.0], [1.0, 0.5]) for k in range(5)})}}
    lines, *_ = rr.analyse(runs, "robust", BASELINES)
    assert any(ln.startswith("| robust_mes |") and ln.endswith("| 5/5 |") for ln in lines)
    assert any(ln.startswith("| robust |") and ln.endswith("| 0/20 |") for ln in lines)


@pytest.mark.parametrize("n, family, finite", [(5, 1, False), (6, 1, True), (6, 2, False), (9, 15, False),
                                               (10, 15, True)])
def test_detectable_factor_without_spread_is_set_by_the_smallest_p(n, family, finite):
    # equal differences: every shift makes them all positive, p = 2 / 2^n (exact): detectable
    # (factor 1) only if 2 / 2^n < 0.05 / family
    assert (2.0 / 2 ** n < 0.05 / family) == finite
    f = rr.detectable_factor(np.zeros(n), family)
    assert (f == pytest.approx(1.0, abs=1e-6)) if finite else math.isinf(f)


@pytest.mark.parametrize("seed, family", [(0, 1), (1, 15), (2, 6)])
def test_detectable_factor_is_the_smallest_shift_scipy_calls_significant(seed, family):
    d = np.random.default_rng(seed).normal(0.0, 1.5, size=20)
    f = rr.detectable_factor(d, family)
    c = d - np.median(d)
    level = 0.05 / family
    assert stats.wilcoxon(c + math.log(f) * 1.001).pvalue < level
    assert stats.wilcoxon(c + math.log(f) * 0.99).pvalue >= level
    assert 1.0 < f < math.exp(6 * 1.5)


def test_wall_times_table_sums_each_sweep_and_counts_every_seed_run():
    a, b = _run("robust", _full([0.1, 0.2])), _run("ei", _full([0.3, 0.4]))
    a["wall_s"], b["wall_s"], a["seeds_run"] = 120.0, 30.0, 5  # 5 seeds run, 2 kept for the tests
    lines = rr.wall_times({"toy": {"robust": a, "ei": b}, "other": {"ei": dict(b, wall_s=90.0)}})
    assert "| problem | ei | robust |" in lines
    assert "| toy | 0.5 (2) | 2.0 (5) |" in lines
    assert "| other | 1.5 (2) | - |" in lines
    assert lines[-1] == "In all 0.1 hours of one process (seeds in brackets)."


def test_a_screens_folder_is_read_beside_the_studys_and_the_first_folder_wins(tmp_path):
    screen, study = tmp_path / "screen", tmp_path / "study"
    screen.mkdir(), study.mkdir()
    (screen / "toy__variant.json").write_text(json.dumps(_run("variant", _full([0.1]))))
    (screen / "toy__ei.json").write_text(json.dumps(_run("ei", _full([0.5]))))
    (study / "toy__ei.json").write_text(json.dumps(_run("ei", _full([0.3, 0.4]))))
    (study / "toy__robust.json").write_text(json.dumps(_run("robust", _full([0.2, 0.2]))))
    runs = rr.load([screen, study])
    assert sorted(runs["toy"]) == ["ei", "robust", "variant"]
    assert len(runs["toy"]["ei"]["seeds"]) == 1  # the screen's own EI record, not the study's
    assert len(rr.load([study, screen])["toy"]["ei"]["seeds"]) == 2
    assert sorted(rr.load(study)["toy"]) == ["ei", "robust"]  # one folder, as before


@pytest.mark.parametrize("seed", range(3))
def test_the_fast_wilcoxon_p_is_scipys(seed):
    """Ties and zeros with 2-13 differences (scipy's permutation path) and beyond."""
    rng = np.random.default_rng(seed)
    for _ in range(8):  # scipy's own slow path is the reference: a second or so a case
        n = int(rng.integers(2, 16))
        d = np.round(rng.normal(size=n) * rng.choice([1, 3, 10])) / rng.choice([1, 2, 4])
        if not np.any(d):
            continue
        assert rr.wilcoxon_p(d) == stats.wilcoxon(d, zero_method="zsplit").pvalue
