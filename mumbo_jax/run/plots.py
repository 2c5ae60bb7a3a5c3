"""Plots of benchmark runs (matplotlib, Agg canvas: no display needed).

The main plot is the paper's: simple regret of the incumbent (the recommendation: by
default the maximiser of the posterior mean at the target fidelity over the whole box)
against the cost spent after the initial design, log scale; ``mumbo-jax run`` draws the median over seeds with the 25-75 %
quartile band (the statistic its summary line reports), ``compare`` the mean +-
standard error (as its table).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

__all__ = ["REGRET_FLOOR", "INCUMBENT", "step_interpolate", "regret_statistics", "regret_quantiles", "plot_regret"]

REGRET_FLOOR = 1e-12  # regrets are clipped here on the log axis (a regret may be exactly 0)
INCUMBENT = ("incumbent: the recommendation (recommendation.rule; by default 'robust': the posterior mean's maximiser where "
             "its lower bound beats the best x measured at the target, else that x)")


def step_interpolate(cost_spent, values, grid):
    """Values of a step curve on a cost grid: at cost ``c`` the value of the last
    entry with ``cost_spent <= c`` (before the first entry: the first value; after the
    last: the last value, i.e. the run's final state is held).

    Args:
        cost_spent: ``[n]`` non-decreasing costs (NaN entries are dropped).
        values: ``[n]`` values after each cost.
        grid: ``[m]`` costs.

    Returns:
        ``[m]`` array.
    """
    cost_spent, values = np.asarray(cost_spent, float), np.asarray(values, float)
    keep = np.isfinite(cost_spent) & np.isfinite(values)
    cost_spent, values = cost_spent[keep], values[keep]
    if cost_spent.size == 0:
        return np.full(np.shape(grid), np.nan)
    idx = np.searchsorted(cost_spent, np.asarray(grid, float), side="right") - 1
    return values[np.clip(idx, 0, len(values) - 1)]


def _curves_on_grid(curves, n_grid, max_cost):
    """``(grid [m], regret [seeds, m])``: every seed's curve step-interpolated on the common
    cost grid ``[0, max_cost]`` (default: the largest cost spent by any seed)."""
    if not curves:
        raise ValueError("no curves to summarise")
    if max_cost is None:
        max_cost = max(float(np.nanmax(np.asarray(c, float))) for c, _ in curves)
    grid = np.linspace(0.0, max(max_cost, 0.0), n_grid)
    return grid, np.stack([step_interpolate(c, r, grid) for c, r in curves])


def regret_statistics(curves: Sequence[tuple], n_grid: int = 400, max_cost: float | None = None):
    """Mean and standard error over seeds of step-interpolated regret curves.

    Args:
        curves: one ``(cost_spent [n], regret [n])`` pair per seed.
        n_grid: points of the common cost grid ``[0, max_cost]``.
        max_cost: end of the grid (default: the largest cost spent by any seed).

    Returns:
        ``(grid [m], mean [m], stderr [m])``; the standard error is 0 for one seed.
    """
    grid, on_grid = _curves_on_grid(curves, n_grid, max_cost)
    n = np.sum(np.isfinite(on_grid), axis=0)
    # where fewer than two seeds have data (a seed stopped early), the mean is that seed's
    # value (NaN where none has) and the standard error 0, without numpy's warnings
    filled = np.where(np.isfinite(on_grid), on_grid, 0.0)
    mean = np.where(n > 0, filled.sum(axis=0) / np.maximum(n, 1), np.nan)
    dev = np.where(np.isfinite(on_grid), on_grid - mean, 0.0)
    std = np.sqrt((dev ** 2).sum(axis=0) / np.maximum(n - 1, 1))
    stderr = np.where(n > 1, std / np.sqrt(np.maximum(n, 1)), 0.0)
    return grid, mean, stderr


def regret_quantiles(curves: Sequence[tuple], quantiles=(0.25, 0.5, 0.75), n_grid: int = 400,
                     max_cost: float | None = None):
    """Quantiles over seeds of step-interpolated regret curves (seeds without data at a
    cost are left out there).

    Args:
        curves: one ``(cost_spent [n], regret [n])`` pair per seed.
        quantiles: the quantiles (default: lower quartile, median, upper quartile).
        n_grid, max_cost: the common cost grid ``[0, max_cost]`` as in
            :func:`regret_statistics`.

    Returns:
        ``(grid [m], values [len(quantiles), m])`` (NaN where no seed has data).
    """
    grid, on_grid = _curves_on_grid(curves, n_grid, max_cost)
    out = np.full((len(quantiles), grid.size), np.nan)
    has = np.isfinite(on_grid).any(axis=0)
    if has.any():
        out[:, has] = np.nanquantile(on_grid[:, has], quantiles, axis=0)
    return grid, out


def plot_regret(curves, path, title: str = "", budget: float | None = None, show_seeds: bool = True,
                statistic: str = "median"):
    """Simple regret of the incumbent against cost spent after the initial design, log y:
    the median over seeds with the 25-75 % band (``statistic="median"``) or the mean
    +- standard error (``"mean"``). A caption says what the incumbent is.

    Args:
        curves: ``[(cost_spent, regret), ...]`` for one method, or a mapping
            ``{label: [(cost_spent, regret), ...]}`` to compare methods on one axis.
        path: output file (the format follows the suffix, e.g. ``.png``), replaced atomically.
        title: the axes title.
        budget: if given, a dotted vertical line at this cost.
        show_seeds: draw each seed's step curve faintly behind the mean.

    Regrets are clipped at :data:`REGRET_FLOOR` so that an exact 0 stays on the log axis.
    ``statistic`` must be ``"median"`` or ``"mean"`` (ValueError otherwise).

    Returns:
        The path written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if statistic not in ("median", "mean"):
        raise ValueError(f"statistic must be 'median' or 'mean', got {statistic!r}")
    groups: Mapping = curves if isinstance(curves, Mapping) else {None: curves}
    fig = Figure(figsize=(6.4, 4.8), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, (label, group) in enumerate(groups.items()):
        color = f"C{i}"
        if statistic == "median":
            grid, (low, centre, high) = regret_quantiles(list(group))
            names = ("median", "25-75 % of seeds")
        else:
            grid, centre, se = regret_statistics(list(group))
            low, high, names = centre - se, centre + se, ("mean", "\u00b1 standard error")
        if show_seeds:
            for c, r in group:
                c, r = np.asarray(c, float), np.asarray(r, float)
                keep = np.isfinite(c) & np.isfinite(r)
                ax.step(c[keep], np.maximum(r[keep], REGRET_FLOOR), where="post", color=color, alpha=0.3, lw=0.8)
        n = len(group)
        name = f"{label} " if label is not None else ""
        ax.plot(grid, np.maximum(centre, REGRET_FLOOR), color=color, lw=2,
                label=f"{name}{names[0]} ({n} seed{'s' * (n > 1)})")
        if n > 1:
            ax.fill_between(grid, np.maximum(low, REGRET_FLOOR), np.maximum(high, REGRET_FLOOR),
                            color=color, alpha=0.25, lw=0, label=f"{name}{names[1]}")
    if budget is not None:
        ax.axvline(budget, color="k", ls=":", lw=1, label="budget")
    ax.set_yscale("log")
    ax.set_xlabel("cost spent after the initial design")
    ax.set_ylabel("simple regret of the incumbent")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.text(0.01, 0.01, INCUMBENT + ";\nsimple regret = |optimum - f(incumbent)| at the target fidelity",
             fontsize="x-small", color="0.3")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")  # the same suffix: savefig's format follows it
    fig.savefig(tmp)
    os.replace(tmp, path)  # atomic: an interrupted run leaves the last whole plot, never half of one
    return path
