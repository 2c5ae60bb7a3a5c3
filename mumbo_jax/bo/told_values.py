"""The x and y told to :class:`mumbo_jax.bo.asktell.AskTell`: x is one point (a
``[1, d]`` array is a ValueError, not silently flattened: a batch of one and a point
look alike only by accident), and how large a y may be, and when a y is an outlier
worth a warning.

The model standardises y (subtracts the mean, divides by the standard deviation), so one
value many orders of magnitude away from the others becomes the whole signal: every
other observation is then a rounding error, and the recommendation follows the outlier.

* ``|y| > MAX_ABS_Y`` is a ValueError naming the point: squares of such values overflow
  float64 in the scaling, and no objective a user tunes produces them on purpose (a
  crashed training run returning ``1e308`` is a failure: tell it with
  :meth:`~mumbo_jax.bo.asktell.AskTell.tell_failure`, or rescale the objective, e.g. its
  logarithm).
* A finite y further than ``OUTLIER_FACTOR`` times the range of the values told so far
  from their median (at least :data:`OUTLIER_MIN_TOLD` of them, with a positive range)
  is accepted with an :class:`OutlierWarning` naming the point.
"""

from __future__ import annotations

import warnings

import numpy as np

from mumbo_jax.bo.asktell_checks import real

__all__ = ["checked_x", "MAX_ABS_Y", "OUTLIER_FACTOR", "OUTLIER_MIN_TOLD", "OutlierWarning", "checked_y"]

MAX_ABS_Y = 1e100  # a told |y| above this is a ValueError
OUTLIER_FACTOR = 1e3  # a y this many ranges of the earlier y away from their median is warned about
OUTLIER_MIN_TOLD = 3  # earlier values needed before any value is called an outlier


class OutlierWarning(UserWarning):
    """A told y lies orders of magnitude away from the values told before it."""


def checked_x(x, dim: int) -> np.ndarray:
    """``x`` as a flat float array of ``dim`` numbers (a scalar when ``dim`` is 1), or a
    ValueError: a [1, d] array (pass ``x[0]``), the wrong count, or not numbers."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.number) or x.size != dim or x.ndim > 1:
        hint = " (one point: pass x[0] of a [1, d] array)" if x.ndim > 1 and x.size == dim else ""
        raise ValueError(f"x must have {dim} coordinates (numbers) in a flat list or 1-D array, got shape "
                         f"{x.shape} of dtype {x.dtype}{hint}")
    return x.astype(float).reshape(-1)


def checked_y(y, x, z, told) -> float:
    """``y`` as a float, checked (module docstring): a ValueError naming ``(x, z)`` for a
    non-finite y or ``|y| > MAX_ABS_Y``; an :class:`OutlierWarning` for an outlier against
    ``told`` (the y told before it)."""
    where = f"at x={np.asarray(x).tolist()}, z={z}"
    try:
        v = real("y", y)
    except ValueError as e:
        raise ValueError(f"{e} ({where})") from None
    if abs(v) > MAX_ABS_Y:
        raise ValueError(f"y={v:.6g} {where}: |y| must be at most {MAX_ABS_Y:g} (the model standardises y, and "
                         "values this large overflow it); rescale the objective (e.g. its logarithm) or, for a "
                         "broken evaluation, call tell_failure(x, z)")
    if len(told) >= OUTLIER_MIN_TOLD:
        prev = np.asarray(told, float)
        spread = float(prev.max() - prev.min())
        mid = float(np.median(prev))
        if spread > 0 and abs(v - mid) > OUTLIER_FACTOR * spread:
            warnings.warn(f"y={v:.6g} {where} lies {abs(v - mid) / spread:.3g} times the range of the "
                          f"{len(prev)} values told before it from their median ({mid:.6g}): the model will "
                          "treat every other value as almost equal; if it is a broken evaluation, tell it with "
                          "tell_failure instead", OutlierWarning, stacklevel=3)
    return v
