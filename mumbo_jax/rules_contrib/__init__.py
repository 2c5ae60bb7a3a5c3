"""Decision rules written as a user would write one: each module defines a
:class:`mumbo_jax.bo.rules.Rule` and registers it with :func:`mumbo_jax.bo.rules.register`.

The rule table imports every module of this package the first time a name outside the
built-in rules is looked up or the table is listed, so a new module here is a new
strategy for the loops, the configs, ``compare`` and ``mumbo-jax list``, with no edit
anywhere else (docs/howto/write-a-rule.md).

* :mod:`mumbo_jax.rules_contrib.mf_kg`: the multi-fidelity knowledge gradient ``mf_kg``
  (Wu, Toscano-Palmerin, Frazier & Wilson, UAI 2019), discretised.
* :mod:`mumbo_jax.rules_contrib.mf_gibbon`: sequential multi-fidelity GIBBON
  ``mf_gibbon`` (Moss, Leslie, Gonzalez & Rayson, JMLR 2021).
"""

__all__: list[str] = []
