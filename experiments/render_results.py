"""Regenerate every results table of docs/RESULTS.md and docs/performance.md (and any in
README.md) from the committed data under data/ and docs/results/.

    python experiments/render_results.py            # rewrite the tables in place
    python experiments/render_results.py --check    # exit 1 and name what is stale

A table lives between two markers in the markdown,

    <!-- render: NAME ARG -->
    ...generated text...
    <!-- /render -->

and is rebuilt from the data named by ``NAME ARG``. The renderers live in
``experiments/render/``, one module per report section (``driver.RENDERERS`` maps each
NAME to its function; each module's docstring names its data and the script that writes
them):

* ``sweeps.py``: RESULTS, the paper's figures (``compare``, ``summary``, ``sweep``, ``verdict``);
* ``studies.py``: RESULTS, the levers, synchronous batches, asynchronous workers
  (``ablation``, ``batch_study_defaults``, ``async_study``, ``fastcv``);
* ``speed.py``: README and performance, the speed of a decision, a step, a sweep;
* ``compile.py``: performance, compilation;
* ``large_n.py``: performance, large n, long runs, mumbo-jax beside BoTorch;
* ``seed_studies.py``: performance, the paired seed studies;
* ``driver.py``: the markers, the pages, ``--check``; ``common.py``: what they share.

``tests/test_results.py`` checks that the committed files equal what this renders (no
runs: it reads the data only).
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from render import *  # noqa: E402,F401,F403  (the renderers, for tests and callers of this module)
from render.driver import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(doc=__doc__))
