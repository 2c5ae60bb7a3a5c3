"""A crash-safe, append-only journal of a tuning run (JSON lines).

One file per run (``RUN_DIR/journal.jsonl``). Line 1 is the header (``{"type":
"header", ...}``: the configuration, written and synced before any evaluation);
every later line is one record (an evaluation, a session start, the end of the run).

Durability: each record is one ``write`` of a complete line followed by ``flush`` and
``os.fsync``, so once :meth:`Journal.append` returns the record survives a SIGKILL of
the process (and, as far as the file system honours fsync, a power cut). Creating the
file also syncs its folder, so the file itself survives.

What a crash can leave behind: at most the last line is incomplete (the process died
inside ``write``), or, on some file systems after a power cut, filled with NUL bytes.
:func:`read_journal` drops such a last line with a :class:`TornJournalWarning`; the
evaluation it held was not acknowledged, so a resumed run simply redoes it. Any other
unreadable line is corruption, not a crash, and raises :class:`JournalError`.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

__all__ = ["JOURNAL_NAME", "JournalError", "TornJournalWarning", "Journal", "read_journal"]

JOURNAL_NAME = "journal.jsonl"


class JournalError(ValueError):
    """A journal that cannot be used: missing, without a header, or corrupt."""


class TornJournalWarning(UserWarning):
    """The journal's last line was incomplete (a crash during its write) and is ignored."""


def _dumps(record: dict) -> bytes:
    # strict JSON (NaN/inf are not JSON): callers store non-finite numbers as null
    return (json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n").encode()


def _sync_dir(path: Path):
    """fsync a folder so that a newly created entry in it is durable (POSIX)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. platforms that cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Journal:
    """An open journal, appended to record by record (use :meth:`create` or :meth:`reopen`)."""

    def __init__(self, path: Path, fh):
        self.path, self._fh = Path(path), fh

    @classmethod
    def create(cls, path, header: dict) -> "Journal":
        """Create a new journal with its header line (refuses to overwrite a file)."""
        path = Path(path)
        try:
            fh = open(path, "xb")
        except FileExistsError:
            raise JournalError(f"{path} already exists: resume that run, or choose another output folder") from None
        journal = cls(path, fh)
        journal.append({"type": "header", **header})
        _sync_dir(path.parent)
        return journal

    @classmethod
    def reopen(cls, path, warn=None) -> tuple["Journal", dict, list[dict]]:
        """Open an existing journal to append to it: ``(journal, header, records)``.

        A torn last line is dropped (warned about) and cut from the file, so that the
        next record starts on a fresh line."""
        path = Path(path)
        header, records, good = read_journal(path, warn=warn)
        if good < path.stat().st_size:
            os.truncate(path, good)
        fh = open(path, "ab")
        os.fsync(fh.fileno())
        return cls(path, fh), header, records

    def append(self, record: dict):
        """Write one record as one line; returns once it is flushed and fsync'ed."""
        self._fh.write(_dumps(record))
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self):
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_journal(path, warn=None) -> tuple[dict, list[dict], int]:
    """Read a journal: ``(header, records, n_good_bytes)``.

    ``records`` are the lines after the header, in order; ``n_good_bytes`` is the length
    of the file up to the end of the last intact line.

    Args:
        path: the journal file.
        warn: ``callable(message)`` for a torn last line (default: ``warnings.warn``
            with :class:`TornJournalWarning`).

    Raises:
        JournalError: no file, no intact header, or an unreadable line before the last.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise JournalError(f"{path}: no journal here (is this a run folder made by `mumbo-jax tune`?)") from None
    lines = data.split(b"\n")
    # a complete file ends with "\n": the last piece is then empty
    tail, lines = lines[-1], lines[:-1]
    parsed, good = [], 0
    torn = None
    if tail:
        torn = f"an incomplete last line ({len(tail)} bytes without a newline)"
    for i, line in enumerate(lines):
        try:
            rec = json.loads(line.decode())
            if not isinstance(rec, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            if i == len(lines) - 1 and not tail:
                torn = f"an unreadable last line ({len(line)} bytes: {e})"
                break
            raise JournalError(f"{path}: line {i + 1} is corrupt ({e}); only the last line may be torn by a "
                               "crash") from None
        parsed.append(rec)
        good += len(line) + 1
    if not parsed or parsed[0].get("type") != "header":
        raise JournalError(f"{path}: no intact header line (the run crashed before it started?); "
                           "start it again with `mumbo-jax tune`")
    if torn is not None:
        msg = (f"{path}: ignoring {torn}, left by a crash while writing; the evaluation it held "
               "was not recorded and will be redone")
        if warn is None:
            warnings.warn(msg, TornJournalWarning, stacklevel=2)
        else:
            warn(msg)
    return parsed[0], parsed[1:], good
