"""Runtime infrastructure: how the library's programs are compiled, kept and run, apart
from what they compute.

* :mod:`~mumbo_jax.runtime.xla_options`: the ``jit`` the numerical modules compile with
  (per-program XLA compile options);
* :mod:`~mumbo_jax.runtime.compilation_cache`: JAX's persistent compilation cache folder;
* :mod:`~mumbo_jax.runtime.programs`: compiled programs held in memory, kept under the
  operating system's limit on memory maps;
* :mod:`~mumbo_jax.runtime.prefetch`: compiling the next buffer size in the background;
* :mod:`~mumbo_jax.runtime.timing`: the drivers' per-stage clocks;
* :mod:`~mumbo_jax.runtime.sharding`: seeds over devices and hosts;
* :mod:`~mumbo_jax.runtime.draws`: random draws that compile small (Philox bits from
  XLA's random-bit generator);
* :mod:`~mumbo_jax.runtime.process_options`: switching the process-wide ones on.
* :mod:`~mumbo_jax.runtime.tracing`: whether values are known now or traced
  (:func:`~mumbo_jax.runtime.tracing.is_concrete`, the one test the input checks use).

Nothing here imports the numerical packages (``gp``, ``acquisition``, ``bo``) but
:mod:`mumbo_jax.gp.precision` (``draws``' float64 check) and, lazily, what the process
options switch on.
"""

__all__: list[str] = []  # a namespace of modules
