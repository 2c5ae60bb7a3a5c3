"""Tabulate the paper's two real tasks once, for the deterministic benchmark problems.

The studies of experiments/paper/fabolas_svm.py and fastcv.py train scikit-learn models
inside the BO loop and count live wall-clock seconds: slow and not reproducible. This
script evaluates both tasks ONCE on a grid of settings and writes the tables that
:mod:`mumbo_jax.benchmarks.problems.real` interpolates (registered as ``svm_fabolas``,
``fastcv_svm`` and ``fastcv_svm_cv``):

* ``svm_fabolas.json`` (paper Section 4.2): an RBF SVM on the digits split of
  :func:`mumbo_jax.benchmarks.hpo.digits_split` (training images nudged to 5390,
  359 validation images), log2 C and log2 gamma on an ``--svm-grid`` x ``--svm-grid`` grid
  over [-10, 10]^2, trained on the nested training fractions 1/64, 1/32, ..., 1 of one
  seeded order (:class:`~mumbo_jax.benchmarks.hpo.SubsetSVM`, seed 0); stored: the
  number of misclassified validation images per (fraction, log2 C, log2 gamma) and the
  measured mean fit-and-score seconds per fraction, and the cost model fitted to them
  (``t0 + c s^alpha``, :func:`fit_cost_model`).
* ``fastcv_svm.json`` (paper Section 4.3): an RBF SVM by 10-fold CV error on 200 digits
  (:func:`mumbo_jax.benchmarks.hpo.fastcv_svm`, seed 0) on a ``--cv-grid`` x ``--cv-grid``
  grid; stored: the misclassified images per (fold, log2 C, log2 gamma) and each fold's size.

Errors are stored as integer counts (exact); seconds are what this machine measured
(informative only: the problems' costs are a fixed model fitted to them, never live time).

    python experiments/paper/tabulate_real_tasks.py          # 11 x 11 SVM grid, 21 x 21 CV grid
    python experiments/paper/tabulate_real_tasks.py --only svm --refit-cost   # the cost fit only
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import time

import numpy as np

from mumbo_jax.benchmarks import hpo

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "mumbo_jax" / "benchmarks" / "data"
FRACTION_EXPONENTS = tuple(range(-6, 1))  # z = log2 s: 1/64 ... 1


def _grid(n):
    lo, hi = hpo.SVM_BOUNDS[0]
    return np.linspace(lo, hi, n)


def tabulate_svm(n_grid: int) -> dict:
    split = hpo.digits_split(seed=0)
    obj = hpo.SubsetSVM(split, seed=0)
    g = _grid(n_grid)
    n_valid = len(split.y_valid)
    wrong = np.zeros((len(FRACTION_EXPONENTS), n_grid, n_grid), dtype=int)
    seconds = np.zeros_like(wrong, dtype=float)
    t0 = time.time()
    for k, z in enumerate(FRACTION_EXPONENTS):
        for i, c in enumerate(g):
            for j, gam in enumerate(g):
                err, sec = obj((c, gam), float(z))
                wrong[k, i, j] = int(round(err * n_valid))
                seconds[k, i, j] = sec
        print(f"svm: fraction 2^{z} done ({time.time() - t0:.0f} s, mean {seconds[k].mean():.3f} s a fit)", flush=True)
    n_train = [max(20, int(np.ceil(2.0**z * len(obj.order)))) for z in FRACTION_EXPONENTS]
    return {
        "task": "RBF SVC on digits (hpo.digits_split(seed=0), SubsetSVM(seed=0)): validation misclassifications",
        "log2_C": g.tolist(), "log2_gamma": g.tolist(), "log2_fraction": list(FRACTION_EXPONENTS),
        "n_train": n_train, "n_valid": n_valid,
        "wrong": wrong.tolist(),  # [fraction, log2 C, log2 gamma]
        "mean_seconds": seconds.mean(axis=(1, 2)).round(5).tolist(),
        "median_seconds": np.median(seconds, axis=(1, 2)).round(5).tolist(),
    }


def fit_cost_model(rec: dict) -> dict:
    """The cost model of ``svm_fabolas``: ``t(s) = t0 + c s^alpha`` fitted to the measured
    mean seconds per fraction (least squares on log seconds; a fixed overhead plus a power
    law smooths the timing noise of a shared machine). Returns ``{t0, c, alpha}``."""
    from scipy.optimize import least_squares

    s = 2.0 ** np.asarray(rec["log2_fraction"], float)
    t = np.asarray(rec["mean_seconds"], float)
    fit = least_squares(lambda p: np.log(np.exp(p[0]) + np.exp(p[1]) * s ** p[2]) - np.log(t),
                        [np.log(t[0]), np.log(t[-1]), 2.0])
    return {"t0": float(np.exp(fit.x[0])), "c": float(np.exp(fit.x[1])), "alpha": float(fit.x[2]),
            "form": "seconds = t0 + c * fraction**alpha, least squares on log mean_seconds"}


def tabulate_fastcv(n_grid: int) -> dict:
    obj = hpo.fastcv_svm(seed=0)
    g = _grid(n_grid)
    wrong = np.zeros((obj.n_folds, n_grid, n_grid), dtype=int)
    seconds = []
    t0 = time.time()
    for i, c in enumerate(g):
        for j, gam in enumerate(g):
            for k in range(obj.n_folds):
                err, sec = obj((c, gam), k)
                wrong[k, i, j] = int(round(err * len(obj.folds[k])))
                seconds.append(sec)
        if i % 5 == 4 or i == n_grid - 1:
            print(f"fastcv: {i + 1}/{n_grid} rows of log2 C ({time.time() - t0:.0f} s)", flush=True)
    return {
        "task": "RBF SVC, 10-fold CV on 200 digits (hpo.fastcv_svm(seed=0)): misclassifications per fold",
        "log2_C": g.tolist(), "log2_gamma": g.tolist(), "fold_sizes": [len(f) for f in obj.folds],
        "wrong": wrong.tolist(),  # [fold, log2 C, log2 gamma]
        "mean_seconds": float(np.mean(seconds)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--svm-grid", type=int, default=11)
    ap.add_argument("--cv-grid", type=int, default=21)
    ap.add_argument("--only", choices=("svm", "fastcv"), default=None)
    ap.add_argument("--out", default=str(DATA))
    ap.add_argument("--refit-cost", action="store_true",
                    help="only refit the SVM cost model to the seconds already in svm_fabolas.json")
    args = ap.parse_args(argv)
    import sklearn

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {"sklearn": sklearn.__version__, "numpy": np.__version__, "python": platform.python_version(),
           "generated_by": "experiments/paper/tabulate_real_tasks.py"}
    if args.only in (None, "fastcv"):
        rec = tabulate_fastcv(args.cv_grid) | env
        (out / "fastcv_svm.json").write_text(json.dumps(rec, separators=(",", ":")) + "\n")
    if args.only in (None, "svm"):
        path = out / "svm_fabolas.json"
        rec = json.loads(path.read_text()) if args.refit_cost else tabulate_svm(args.svm_grid) | env
        rec["cost_model"] = fit_cost_model(rec)
        print(f"svm cost model: {rec['cost_model']}", flush=True)
        path.write_text(json.dumps(rec, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
