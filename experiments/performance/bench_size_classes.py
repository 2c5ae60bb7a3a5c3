"""What the buffer size classes cost in padding, against the earlier 32-row steps.

    python experiments/performance/bench_size_classes.py [--n0 18] [--n-max 3000]

A run that grows from ``n0`` to ``n_max`` observations one at a time is padded at each
step to the buffer that holds n + 1 rows. Prints, for the size classes of
:func:`mumbo_jax.bo.stages.buffer_size` and for the earlier rule (multiples of 32 up to
512 rows, of 64 up to 1024, of 128 up to 2048, ...), the number of sizes met (each one
compilation of every program) and the padding's cost over the run: the sum over steps
of B^2 (a step's solves against candidates, the appends) and of B^3 (a factorisation)
divided by the same sums without padding (B = n + 1). Writes the figures to
``data/compile/size_classes.json``. Pure arithmetic: no JAX program runs.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mumbo_jax.bo import stages  # noqa: E402


def earlier_buffer_size(n: int, min_buffer: int = 32) -> int:
    """The rule before the size classes: a multiple of 32 up to 16 steps (512 rows), then
    of 64 up to 1024, and so on."""
    need = max(int(n) + 1, int(min_buffer))
    step = 32
    while need > 16 * step:
        step *= 2
    return -(-need // step) * step


def padding(rule, n0: int, n_max: int) -> dict:
    ns = range(n0, n_max + 1)
    sizes = [rule(n) for n in ns]
    ratio = lambda p: sum(b ** p for b in sizes) / sum((n + 1) ** p for n in ns)
    worst = max(b / (n + 1) for n, b in zip(ns, sizes) if n >= 96) if n_max >= 96 else None
    return {"sizes": len(set(sizes)), "quadratic_cost_ratio": ratio(2), "cubic_cost_ratio": ratio(3),
            "worst_rows_ratio_from_96": worst}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n0", type=int, default=18, help="observations after the initial design (Hartmann-3: 18)")
    p.add_argument("--n-max", type=int, default=3000)
    p.add_argument("--out", default=str(ROOT / "data" / "compile" / "size_classes.json"))
    a = p.parse_args(argv)
    rows = []
    for n_max in sorted({300, 1000, a.n_max}):
        for name, rule in (("size classes", stages.buffer_size), ("32-row steps (earlier)", earlier_buffer_size)):
            rows.append({"rule": name, "n0": a.n0, "n_max": n_max, **padding(rule, a.n0, n_max)})
    print(f"{'rule':<24} {'n':>11} {'sizes':>6} {'B^2 / n^2':>10} {'B^3 / n^3':>10} {'worst B / n':>12}")
    for r in rows:
        print(f"{r['rule']:<24} {r['n0']:>4}-{r['n_max']:<6} {r['sizes']:>6} {r['quadratic_cost_ratio']:>10.3f} "
              f"{r['cubic_cost_ratio']:>10.3f} {r['worst_rows_ratio_from_96']:>12.3f}")
    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": "python experiments/performance/bench_size_classes.py", "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
