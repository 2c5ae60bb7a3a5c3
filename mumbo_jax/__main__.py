"""``python -m mumbo_jax run CONFIG.toml``: the same as the ``mumbo-jax`` script."""

import sys

from mumbo_jax.run.cli import main

sys.exit(main())
