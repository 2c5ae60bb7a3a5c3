"""Add the seeds of study records made elsewhere to a study's folder.

``robust.py --one PROBLEM STRATEGY --seed-list ...`` run on another machine (or in another
folder) writes ``<problem>__<strategy>.json`` with those seeds alone; this appends them to
the file of the same name in ``--into``, as a rerun with more ``--seeds`` would. The
settings must agree (recommendation rule, budget, cap, levers); a seed already in the
target file is kept, not replaced. Each seed keeps its ``code`` and ``stack``, so the
report names where it ran. The target file is replaced atomically.

    python experiments/studies/merge_records.py /tmp/device/*/*.json --into data/uncapped
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SAME = ("problem", "strategy", "incumbent_rule", "budget", "max_evals", "levers")


def merge(old: dict | None, new: dict) -> tuple[dict, list[int]]:
    """``(merged record, seeds added)``: ``new``'s seeds that ``old`` lacks appended
    (``old`` None: ``new`` itself). Raises ValueError naming the setting that differs."""
    if old is None:
        return new, sorted(r["seed"] for r in new["seeds"])
    for key in SAME:
        if old.get(key) != new.get(key):
            raise ValueError(f"{key} differs: {old.get(key)!r} here, {new.get(key)!r} in the new record")
    have = {r["seed"] for r in old["seeds"]}
    added = [r for r in new["seeds"] if r["seed"] not in have]
    merged = {**old, "seeds": sorted(old["seeds"] + added, key=lambda r: r["seed"]),
              "wall_s": old["wall_s"] + (new["wall_s"] if added else 0.0)}
    return merged, sorted(r["seed"] for r in added)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--into", type=Path, required=True)
    args = ap.parse_args(argv)
    args.into.mkdir(parents=True, exist_ok=True)
    failed = 0
    for path in args.records:
        target = args.into / path.name
        try:
            merged, added = merge(json.loads(target.read_text()) if target.exists() else None,
                                  json.loads(path.read_text()))
        except (ValueError, KeyError, json.JSONDecodeError) as err:
            print(f"{path}: not merged into {target}: {err}")
            failed += 1
            continue
        if added:
            tmp = target.with_suffix(".tmp")
            tmp.write_text(json.dumps(merged))
            tmp.replace(target)
        print(f"{path} -> {target}: seeds {added or 'none new'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
