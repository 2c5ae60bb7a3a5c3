"""Seeds sharded over devices with ``jax.sharding``, on one host or several.

The compiled driver's lock-step programs (:mod:`mumbo_jax.bo.compiled`,
``batching="shard"``) run every seed's stage as one vmapped program; here the seed axis
of their inputs is laid out over a 1-D :class:`jax.sharding.Mesh` with the axis
``"seeds"`` (:func:`seed_mesh`, every device of every process by default), and the
programs follow the data: each device runs its own seeds, with no change in what any
seed computes.

Several hosts: start JAX's multi-process runtime first (:func:`initialize`, a thin
wrapper of ``jax.distributed.initialize`` that also reads ``MUMBO_COORDINATOR``,
``MUMBO_NUM_PROCESSES`` and ``MUMBO_PROCESS_ID``); every process then runs the same
program on the same seeds, the mesh spans all their devices, and :func:`to_host` gathers
the seed-sharded results onto every process.
"""

from __future__ import annotations

import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["SEED_AXIS", "seed_mesh", "seed_sharding", "padded_count", "put", "to_host", "initialize"]

SEED_AXIS = "seeds"


def seed_mesh(devices=None) -> Mesh:
    """A 1-D mesh with the axis ``"seeds"`` over ``devices`` (default ``jax.devices()``:
    every device of every process)."""
    devices = jax.devices() if devices is None else list(devices)
    if not devices:
        raise ValueError("seed_mesh needs at least one device")
    return Mesh(np.asarray(devices), (SEED_AXIS,))


def seed_sharding(mesh: Mesh) -> NamedSharding:
    """Arrays with a leading seed axis split over the mesh's ``"seeds"`` axis."""
    if SEED_AXIS not in mesh.axis_names:
        raise ValueError(f"the mesh needs an axis named {SEED_AXIS!r}, got {mesh.axis_names}")
    return NamedSharding(mesh, PartitionSpec(SEED_AXIS))


def padded_count(n_seeds: int, mesh: Mesh) -> int:
    """Seeds a sharded run carries: ``n_seeds`` rounded up to a multiple of the devices
    (the extra lanes repeat the last seed and are dropped)."""
    size = mesh.shape[SEED_AXIS]
    return -(-int(n_seeds) // size) * size


def put(a, sharding: NamedSharding) -> jax.Array:
    """Host data (the same on every process) laid out over the mesh."""
    return jax.device_put(np.asarray(a), sharding)


def to_host(a) -> np.ndarray:
    """A (possibly seed-sharded, possibly multi-process) array as one numpy array on
    this process: gathered from the other processes where this one does not hold it all."""
    if isinstance(a, jax.Array) and not a.is_fully_addressable:
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(a, tiled=True))
    return np.asarray(a)


def initialize(coordinator: str | None = None, num_processes: int | None = None,
               process_id: int | None = None) -> bool:
    """Start JAX's multi-process runtime (``jax.distributed.initialize``) for a run over
    several processes or hosts; arguments left out come from ``MUMBO_COORDINATOR``
    (``host:port`` of process 0), ``MUMBO_NUM_PROCESSES`` and ``MUMBO_PROCESS_ID``.
    Does nothing and returns False when neither names a coordinator (one process);
    True once started. On CPU the processes exchange data through gloo."""
    coordinator = coordinator or os.environ.get("MUMBO_COORDINATOR")
    if not coordinator:
        if num_processes is not None or process_id is not None:
            raise ValueError("--num-processes/--process-id need a coordinator (--coordinator HOST:PORT or "
                             "MUMBO_COORDINATOR)")
        return False
    num_processes = num_processes if num_processes is not None else os.environ.get("MUMBO_NUM_PROCESSES")
    process_id = process_id if process_id is not None else os.environ.get("MUMBO_PROCESS_ID")
    if num_processes is None or process_id is None:
        raise ValueError("a multi-process run needs the number of processes and this process's id "
                         "(--num-processes/--process-id or MUMBO_NUM_PROCESSES/MUMBO_PROCESS_ID)")
    num_processes, process_id = int(num_processes), int(process_id)
    if num_processes < 1 or not 0 <= process_id < num_processes:
        raise ValueError(f"process_id must be in [0, {num_processes}), got {process_id}")
    # CPU devices of different processes talk through gloo (no effect on accelerators);
    # set before any backend starts, as the initialisation itself must be
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes, process_id=process_id)
    return True
