"""Output folders: made and proven writable before any work, and files replaced
atomically, so that an unwritable ``--out`` fails in a second with one line (exit 2)
instead of after a whole study, and a crash never leaves half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mumbo_jax.run.schema import ConfigError

__all__ = ["prepare_output", "write_atomic"]


def prepare_output(path) -> Path:
    """Create the folder ``path`` (and its parents) and check that a file can be
    written in it.

    Raises:
        ConfigError: it is not a folder, cannot be created, or is not writable
            (one line naming the path and the reason).
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"output path {path} exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".mumbo-write-test-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise ConfigError(f"output folder {path} is not writable: {e.strerror or e}") from None
    return path


def write_atomic(path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (atomic on
    POSIX): readers see the old file or the new one, never half of one."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path
