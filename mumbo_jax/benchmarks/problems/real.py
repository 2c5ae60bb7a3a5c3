r"""The paper's two real tasks as deterministic, tabulated problems (Sections 4.2 and 4.3).

The real tuners of ``experiments/paper/fabolas_svm.py`` and ``fastcv.py`` train scikit-learn
models inside the loop and count live wall-clock seconds. Here both tasks were evaluated ONCE
on a grid (``experiments/paper/tabulate_real_tasks.py``; the tables ship as package data in
``mumbo_jax/benchmarks/data/``) and a problem's ``f(x, z)`` interpolates the table: pure,
JAX-traceable and the same on every machine. The costs are fixed models, never live time.

==================  ===  ===================================  ==================================
name                d    fidelity                             cost
==================  ===  ===================================  ==================================
``svm_fabolas``     2    continuous u in [0, 1]: data         10 at the full data; a fixed part
                         fraction s = 2^(6 (u - 1)), 1/64..1  plus a power law of s fitted to
                                                              the measured fit times (below)
``fastcv_svm``      2    10 folds (discrete), target = mean   1 per fold (one fit)
``fastcv_svm_cv``   2    one: the 10-fold CV mean             10 (ten fits)
==================  ===  ===================================  ==================================

All three are minimised validation errors of an RBF SVM with ``x = (log2 C, log2 gamma)``
in ``[-10, 10]^2`` (FABOLAS' box), bilinear in ``x`` between the grid nodes.

* ``svm_fabolas`` (FABOLAS, Klein et al. 2017): the validation error on 359 digits of an
  SVM trained on a fraction s of 5390 training images (digits nudged by one pixel,
  :func:`mumbo_jax.benchmarks.hpo.digits_split`), nested subsets of one seeded order
  (:class:`~mumbo_jax.benchmarks.hpo.SubsetSVM`). Tabulated at s = 1/64, 1/32, ..., 1; the
  fidelity ``u = 1 + log2(s) / 6`` is linear in log2 s (``u = 0, 1/2, 1`` are s = 1/64,
  1/8, 1) and the interpolation is linear in u between the tabulated fractions. Target
  ``u = 1`` (the full data). Cost: ``t0 + c s^alpha`` fitted to the measured mean seconds
  per fraction (over the grid; alpha = 2.2), scaled so that the full data costs 10:
  1/64 of the data costs 0.011, 1/8 costs 0.11, 1/2 costs 2.2.
* ``fastcv_svm`` (FASTCV, Swersky et al. 2013): fidelity k in 0..9 is the error on fold k
  of 10-fold CV on 200 digits (:func:`mumbo_jax.benchmarks.hpo.fastcv_svm`) of the SVM
  trained on the other nine folds; the TARGET is the fold mean (``Problem.target_weights``,
  a :func:`mumbo_jax.gp.posterior.task_mean` target). Every fold costs 1.
* ``fastcv_svm_cv``: the same target as a single-fidelity problem, one query = the whole
  10-fold CV at cost 10: standard BO by K-fold CV, on the same regret scale.

Piecewise-(bi/tri)linear interpolation attains its extremes at grid nodes, so the stored
optima are exact: the best table entry at the target, checked in ``tests/test_real_tasks.py``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.benchmarks.problems.problem import Array, as_x, check_concrete_fidelity
from mumbo_jax.runtime.xla_options import jit

__all__ = ["svm_table", "svm_cost_model", "fastcv_table", "svm_fabolas", "svm_fabolas_cost", "fastcv_svm", "fastcv_svm_cv",
           "fraction_of", "fidelity_of", "SVM_LOG2_FRACTIONS", "SVM_FULL_COST", "N_FOLDS", "CV_COST"]

SVM_LOG2_FRACTIONS = tuple(range(-6, 1))  # the tabulated fractions 1/64 .. 1
SVM_FULL_COST = 10.0
N_FOLDS = 10
CV_COST = float(N_FOLDS)  # a K-fold CV evaluation is K fits


@functools.cache
def _load(name: str) -> dict:
    return json.loads((resources.files("mumbo_jax.benchmarks") / "data" / name).read_text())


@functools.cache
def svm_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(grid [n], error [7, n, n], mean seconds [7])`` of ``svm_fabolas``: validation
    error per (fraction 1/64 .. 1, log2 C, log2 gamma) and the measured mean seconds per fraction."""
    d = _load("svm_fabolas.json")
    grid = np.asarray(d["log2_C"], float)
    if not np.array_equal(grid, np.asarray(d["log2_gamma"], float)) or d["log2_fraction"] != list(SVM_LOG2_FRACTIONS):
        raise ValueError("svm_fabolas.json: unexpected grid")
    err = np.asarray(d["wrong"], float) / float(d["n_valid"])
    return grid, err, np.asarray(d["mean_seconds"], float)


@functools.cache
def svm_cost_model() -> tuple[float, float, float]:
    """``(t0, c, alpha)``: the seconds ``t0 + c s^alpha`` of a fit on the fraction ``s``,
    fitted to the measured means (``experiments/paper/tabulate_real_tasks.py``)."""
    m = _load("svm_fabolas.json")["cost_model"]
    return float(m["t0"]), float(m["c"]), float(m["alpha"])


@functools.cache
def fastcv_table() -> tuple[np.ndarray, np.ndarray]:
    """``(grid [n], error [10, n, n])`` of ``fastcv_svm``: the error per (fold, log2 C, log2 gamma)."""
    d = _load("fastcv_svm.json")
    grid = np.asarray(d["log2_C"], float)
    sizes = np.asarray(d["fold_sizes"], float)
    if len(sizes) != N_FOLDS:
        raise ValueError(f"fastcv_svm.json: {len(sizes)} folds, expected {N_FOLDS}")
    return grid, np.asarray(d["wrong"], float) / sizes[:, None, None]


def _cell(grid, v):
    """Index of the cell of ``v`` on the uniform ``grid`` and the position in it, clamped to the grid."""
    lo, step, n = grid[0], (grid[-1] - grid[0]) / (len(grid) - 1), len(grid)
    t = jnp.clip((v - lo) / step, 0.0, n - 1.0)
    i = jnp.clip(jnp.floor(t), 0, n - 2).astype(jnp.int32)
    return i, t - i


def _bilinear(table, grid, x):
    """``table [n, n]`` (log2 C rows, log2 gamma columns) interpolated at ``x [2]``."""
    i, a = _cell(grid, x[0])
    j, b = _cell(grid, x[1])
    t00, t01 = table[i, j], table[i, j + 1]
    t10, t11 = table[i + 1, j], table[i + 1, j + 1]
    return (1 - a) * ((1 - b) * t00 + b * t01) + a * ((1 - b) * t10 + b * t11)


def fraction_of(u):
    """The data fraction ``s = 2^(6 (u - 1))`` of ``svm_fabolas``' fidelity ``u``."""
    return 2.0 ** (6.0 * (jnp.asarray(u, jnp.float64) - 1.0))


def fidelity_of(s):
    """``svm_fabolas``' fidelity ``u = 1 + log2(s) / 6`` of the data fraction ``s``."""
    return 1.0 + np.log2(s) / 6.0


def svm_fabolas(x: Array, z) -> Array:
    """Validation error of the RBF SVM at ``x = (log2 C, log2 gamma)`` trained on the data
    fraction ``2^(6 (z - 1))``: the table interpolated bilinearly in x and linearly in z
    between the tabulated fractions (``z`` float in [0, 1], may be traced; clamped)."""
    grid, err, _ = svm_table()
    x = as_x(x, 2)
    table = jnp.asarray(err)
    k, c = _cell(np.linspace(0.0, 1.0, len(SVM_LOG2_FRACTIONS)), jnp.asarray(z, jnp.float64))
    lo = _bilinear(jnp.take(table, k, axis=0), grid, x)
    hi = _bilinear(jnp.take(table, k + 1, axis=0), grid, x)
    return (1 - c) * lo + c * hi


def svm_fabolas_cost(z) -> Array:
    """Cost of ``svm_fabolas`` at fidelity ``z`` (traceable): the fitted seconds
    ``t0 + c s^alpha`` at the fraction ``s = 2^(6 (z - 1))`` (:func:`svm_cost_model`),
    scaled so that the full data (``z = 1``) costs 10."""
    t0, c, alpha = svm_cost_model()
    s = fraction_of(z)
    return SVM_FULL_COST * (t0 + c * s**alpha) / (t0 + c)


@jit
def _fold_core(x, k):
    grid, err = fastcv_table()
    return _bilinear(jnp.take(jnp.asarray(err), jnp.clip(k, 0, N_FOLDS - 1), axis=0), grid, x)


def fastcv_svm(x: Array, z) -> Array:
    """Error on fold ``z`` (integer 0..9, may be traced) of the SVM at ``x`` trained on the
    other nine folds, bilinear in ``x`` between the grid nodes."""
    check_concrete_fidelity(z, N_FOLDS, "fastcv_svm")
    return _fold_core(as_x(x, 2), jnp.asarray(z, jnp.int32))


@jit
def _cv_core(x):
    grid, err = fastcv_table()
    return _bilinear(jnp.asarray(err.mean(axis=0)), grid, x)


def fastcv_svm_cv(x: Array, z) -> Array:
    """The 10-fold CV error (the mean over folds) at ``x``; one fidelity, ``z = 0``."""
    check_concrete_fidelity(z, 1, "fastcv_svm_cv")
    return _cv_core(as_x(x, 2))
