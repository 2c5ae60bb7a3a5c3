"""A rule's knobs and their values as a read-only, hashable mapping that is also a pytree:
the knobs declared traced are its leaves (numbers the compiled programs take traced), its
keys and other values the static key of the programs (:class:`FrozenOptions`)."""

from __future__ import annotations

import jax

from mumbo_jax import knobs

__all__ = ["FrozenOptions"]


class FrozenOptions(dict):
    """A read-only, hashable mapping (knobs and their values; in
    :class:`mumbo_jax.bo.settings.BOSettings`, rule name -> such a mapping). A pytree whose
    leaves are its float values (traced by the compiled programs) and whose keys and other
    values are structure. A ``dict`` for ``dataclasses.asdict`` and JSON."""

    def __init__(self, *args, traced=(), **kwargs):
        super().__init__(*args, **kwargs)
        self._traced = tuple(traced)  # the keys whose values the programs take traced

    def _readonly(self, *args, **kwargs):
        raise TypeError("options are read-only; build new ones (Rule.with_options, BOSettings.replace)")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _readonly

    def __hash__(self):
        return hash(tuple(sorted((k, hash(v)) for k, v in self.items())))

    def __reduce__(self):
        return (_rebuild_options, (dict(self), self._traced))

    def __repr__(self):
        return f"FrozenOptions({dict.__repr__(self)})"


def _rebuild_options(items, traced):
    return FrozenOptions(items, traced=traced)


def _flatten_options(o):
    """Leaves: the values of the keys declared traced (``option(..., traced=True)``: UCB's
    beta, the robust guard's share), arrays (tracers inside a program) and the nested
    options of ``BOSettings.options``; the keys and every other value are the static part,
    so a sweep over a traced knob shares the programs."""
    leaf = tuple(k in o._traced or knobs.is_array(v) or isinstance(v, FrozenOptions) for k, v in o.items())
    children = [v for v, is_leaf in zip(o.values(), leaf) if is_leaf]
    static = tuple(None if is_leaf else v for v, is_leaf in zip(o.values(), leaf))
    return children, (tuple(o), leaf, static, o._traced)


def _unflatten_options(aux, children):
    keys, leaf, static, traced = aux
    it = iter(children)
    return FrozenOptions({k: next(it) if is_leaf else v for k, is_leaf, v in zip(keys, leaf, static)},
                         traced=traced)


jax.tree_util.register_pytree_node(FrozenOptions, _flatten_options, _unflatten_options)
