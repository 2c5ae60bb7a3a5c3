"""Does a committed study record still come out of the code at HEAD?

Reruns seeds of records written by ``robust.py`` (one JSON file per problem and strategy)
with the settings the record names (its levers, budget, cap and recommendation rule) and
compares each rerun with the record: the number of evaluations, the fidelities queried
and the recommendation's regret after every evaluation (to ``--rtol``). A record whose
seed differs was made by other code: its tables must name the code that produced them
(each seed records it, ``"code"``), or the study must be rerun. A seed recorded on another
numerical stack (its ``"stack"``: JAX release, backend, processor) need not agree bit for
bit here: a difference there is printed as such and does not fail the check.

    python experiments/studies/reproduce.py data/robust/currin__robust.json [--seeds 0] [--rtol 1e-6]

Prints one line per record and seed; exits 1 if any seed does not reproduce.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import robust as study  # noqa: E402

def settings_of(record: dict) -> tuple[dict, dict]:
    """``(maximiser, fit)`` fields that rebuild the record's levers (its flat names,
    :data:`robust.ALL_LEVERS`)."""
    levers, out = record["levers"], {"maximiser": {}, "fit": {}}
    for flat, (rec, field) in study.ALL_LEVERS.items():
        if flat in levers:
            out[rec][field] = levers[flat]
    # a record without the warm-refit levers ran with warm refits off (robust._levers omits
    # them exactly then)
    out["fit"].setdefault("warm_from", 0)
    return out["maximiser"], out["fit"]


def compare(old: dict, new: dict, rtol: float) -> str | None:
    """None if the rerun seed ``new`` reproduces ``old``, else what differs first."""
    if old["n_evals"] != new["n_evals"]:
        return f"{new['n_evals']} evaluations, the record {old['n_evals']}"
    za, zb = np.asarray(old["z"], float), np.asarray(new["z"], float)
    if not np.array_equal(za, zb):
        k = int(np.flatnonzero(za != zb)[0])
        return f"evaluation {k + 1} at fidelity {zb[k]:g}, the record {za[k]:g}"
    ra, rb = np.asarray(old["regret"], float), np.asarray(new["regret"], float)
    close = np.isclose(ra, rb, rtol=rtol, atol=0.0) | (ra == rb)
    if not close.all():
        k = int(np.flatnonzero(~close)[0])
        return f"regret after evaluation {k}: {rb[k]:.6g}, the record {ra[k]:.6g}"
    return None


def reproduce(path: Path, seeds: list[int], rtol: float) -> list[tuple[int, str, str | None]]:
    """``[(seed, the record's code, None or what differs)]`` for the record at ``path``."""
    record = json.loads(path.read_text())
    maximiser, fit = settings_of(record)
    by_seed = {r["seed"]: r for r in record["seeds"]}
    seeds = [s for s in seeds if s in by_seed]
    rerun = study.run_one(record["problem"], record["strategy"], seeds, record["incumbent_rule"],
                          record["max_evals"], False, record["budget"], fit or None, maximiser or None)
    if rerun["levers"] != record["levers"]:
        return [(s, by_seed[s].get("code", "unknown"), f"levers {rerun['levers']} cannot rebuild the record's "
                 f"{record['levers']}") for s in seeds]
    new = {r["seed"]: r for r in rerun["seeds"]}
    return [(s, by_seed[s].get("code", "unknown"), compare(by_seed[s], new[s], rtol)) for s in seeds]


def other_stack(recorded: dict | None, here: dict) -> str | None:
    """What differs between the stack a seed recorded and this one (None: the same, or
    not recorded, as for seeds older than the field)."""
    if not recorded:
        return None
    diff = [f"{k} {recorded.get(k)}" for k in ("jax", "backend", "cpu") if recorded.get(k) != here.get(k)]
    return ", ".join(diff) or None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--seeds", default="0", help="comma-separated seeds to rerun (those the record has)")
    ap.add_argument("--rtol", type=float, default=1e-6)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    failed, here = False, study.stack()
    for path in args.records:
        stacks = {r["seed"]: r.get("stack") for r in json.loads(path.read_text())["seeds"]}
        for seed, code, diff in reproduce(path, seeds, args.rtol):
            elsewhere = other_stack(stacks.get(seed), here)
            failed |= diff is not None and elsewhere is None
            verdict = "reproduces" if diff is None else f"DIFFERS: {diff}"
            if diff is not None and elsewhere:
                verdict += f" (recorded on another stack: {elsewhere}; not a regression here)"
            print(f"{path} seed {seed} (recorded at {code}): {verdict}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
