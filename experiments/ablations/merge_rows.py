"""Build one ablation results file (data/ablations/) from rows of others, so a
table compares runs made at different times on the same seeds (the first row is the
reference of the table's paired tests).

    python experiments/ablations/merge_rows.py --out nuts_hartmann3_b150_s0-9.json \
        s10b_hartmann3_b150_s0-9.json:mumbo+faces+local+inc_global+cal \
        s10b_hartmann3_b150_s0-9.json:mumbo+faces+local+inc_global+cal+nuts4 \
        "s10b_hartmann3_b150_s0-9.json:mumbo+faces+local+inc_global+cal+nuts=NUTS, 8 samples"

Each row is ``FILE:VARIANT`` or ``FILE:VARIANT=NEW NAME``; the files must share the
problem, budget and seeds.
"""

from __future__ import annotations

import argparse
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "data" / "ablations"


def merge(out: str, rows: list[str]) -> dict:
    merged = None
    for row in rows:
        name, _, variant = row.partition(":")
        variant, _, new = variant.partition("=")
        res = json.loads((ROOT / name).read_text())
        if variant not in res["variants"]:
            raise ValueError(f"{name} has no variant {variant!r}; it has {sorted(res['variants'])}")
        if merged is None:
            merged = dict(res, variants={})
        for key in ("problem", "budget", "seeds"):
            if res[key] != merged[key]:
                raise ValueError(f"{name}: {key} {res[key]!r} differs from the first file's {merged[key]!r}")
        merged["variants"][new or variant] = res["variants"][variant]
    (ROOT / out).write_text(json.dumps(merged))
    return merged


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="file name under data/ablations/")
    ap.add_argument("rows", nargs="+", help="FILE:VARIANT or FILE:VARIANT=NEW NAME")
    args = ap.parse_args(argv)
    merged = merge(args.out, args.rows)
    print(f"{args.out}: {list(merged['variants'])}")


if __name__ == "__main__":
    main()
