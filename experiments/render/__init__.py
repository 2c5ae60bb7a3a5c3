"""The renderers of the results tables, one module per report section (see
``experiments/render_results.py``, the command, and ``driver.RENDERERS``)."""

from .common import *  # noqa: F401,F403
from .compile import *  # noqa: F401,F403
from .driver import *  # noqa: F401,F403
from .large_n import *  # noqa: F401,F403
from .seed_studies import *  # noqa: F401,F403
from .speed import *  # noqa: F401,F403
from .studies import *  # noqa: F401,F403
from .sweeps import *  # noqa: F401,F403
