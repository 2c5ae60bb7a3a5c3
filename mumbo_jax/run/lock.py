"""One writer per run folder: an advisory lock held for the whole of a command.

Every command that writes a run folder (``run``, ``compare``, ``tune``, ``resume``)
takes ``RUN_DIR/.mumbo-lock`` with :func:`run_lock` before it reads or writes anything
there. The lock is ``fcntl.flock`` on that file (exclusive, non-blocking): the kernel
releases it when the holder's process ends, however it ends (``kill -9`` included), so
a dead holder never blocks a later command. The file also holds the holder's identity
(JSON: host, pid, command, start time), written after the lock is taken; a second
writer is refused with :class:`RunLockedError` naming that holder, and a new holder
that finds a previous holder's identity reports it as a stale lock it took over.

A command that ends (done, failed or interrupted) removes the lock file; one killed
(``kill -9``) leaves it, with its identity, for the next holder to report. Removal is
safe against the classic race (a second process locking the file just removed while a
third creates a new one): a holder unlinks the file while it still holds the lock, and
:func:`acquire` keeps a lock only on the file that is still at the path (same inode),
else it retries.

:func:`check_free` is the same refusal without taking the lock; it imports nothing heavy,
so the command line calls it before JAX starts.

Limits: ``flock`` is advisory (a process that does not ask for the lock is not
stopped) and on network file systems it depends on the server (Linux NFSv4 maps it to
byte-range locks, which work across hosts; older NFS may lock only per host). POSIX
only (``fcntl``).
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import os
import socket
import threading
import time
from pathlib import Path

from mumbo_jax.run.schema import ConfigError

__all__ = ["LOCK_NAME", "RunLockedError", "RunLock", "run_lock", "acquire", "check_free", "release_all",
           "read_holder", "holder_alive"]

LOCK_NAME = ".mumbo-lock"


class RunLockedError(ConfigError):
    """The run folder is held by another live process (exit 2 on the command line)."""


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def read_holder(folder) -> dict | None:
    """The identity recorded in ``folder``'s lock file (``{"host", "pid", "command",
    "started"}``), or ``None`` when there is none (never locked, released, or being
    written this instant)."""
    path = Path(folder) / LOCK_NAME
    for _ in range(20):  # the holder truncates, then writes: a moment of empty file
        try:
            text = path.read_text()
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            return None
        if text.strip():
            try:
                info = json.loads(text)
                return info if isinstance(info, dict) else None
            except ValueError:
                pass
        time.sleep(0.005)
    return None


def holder_alive(info: dict) -> bool | None:
    """Whether the holder ``info`` is a live process: True/False on this host, ``None``
    (unknown) for another host."""
    if info.get("host") != socket.gethostname():
        return None
    try:
        pid = int(info.get("pid"))
    except (TypeError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def _describe(info: dict | None) -> str:
    if not info:
        return "another process (its identity is not recorded yet)"
    return (f"{info.get('command', 'a mumbo-jax command')} (host {info.get('host', '?')}, pid {info.get('pid', '?')}, "
            f"started {info.get('started', '?')})")


class RunLock:
    """The held lock of one run folder (from :func:`run_lock`); :meth:`release` (or the
    end of the ``with`` block) gives it up.

    Attributes:
        path: the lock file.
        holder: this holder's identity as written in the file.
        stale: the identity of an earlier holder that died without releasing it, or ``None``.
    """

    def __init__(self, path: Path, fd: int, holder: dict, stale: dict | None):
        self.path, self._fd, self.holder, self.stale = path, fd, holder, stale
        self._releasing = threading.Lock()
        _HELD.add(self)

    def release(self):
        """Remove the lock file (while still holding it) and unlock (idempotent; safe from
        another thread, as :func:`release_all`)."""
        with self._releasing:
            self._release()

    def _release(self):
        _HELD.discard(self)
        if self._fd is None:
            return
        try:
            if _same_file(self._fd, self.path):
                os.unlink(self.path)
        except OSError:  # cannot remove it (a read-only folder): leave it empty, as released
            try:
                os.ftruncate(self._fd, 0)
            except OSError:
                pass
        try:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


_HELD: set = set()  # the locks this process holds


def release_all() -> None:
    """Release every lock this process holds (the command line's Ctrl-C watcher calls it
    just before it ends the process)."""
    for held in list(_HELD):
        held.release()


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is the file at ``path`` now (not one removed since it was opened)."""
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _refuse(folder, info: dict | None):
    raise RunLockedError(f"{folder} is in use by {_describe(info)}; wait for it to finish or stop it (a killed "
                         "holder releases the folder at once)")


_PATIENCE_S = 0.2  # a lock held for an instant (a check_free, a holder writing its identity): retry this long


def _blocked(folder, deadline: float) -> dict | None:
    """After a refused ``flock``: the holder's identity when this is a real holder (a
    live one, or anyone once ``deadline`` passed), else None (try again: a lock taken
    for an instant, or an identity not written yet or left by a dead process)."""
    info = read_holder(folder)
    if (info is not None and holder_alive(info) is not False) or time.monotonic() > deadline:
        return info or {}
    time.sleep(0.005)
    return None


def check_free(folder) -> None:
    """Raise :class:`RunLockedError` (naming the holder, as :func:`acquire`) when another
    process holds ``folder``'s lock; otherwise return, creating nothing. Light: the
    command line calls it before the heavy imports. A folder that is free now may be
    taken before this process's own :func:`acquire`, which checks again."""
    path = Path(folder) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # no lock file (never locked, or released), or not one we can open: acquire() decides
        return
    deadline = time.monotonic() + _PATIENCE_S
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # shared: two checks never refuse each other
                return
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    return
            if not _same_file(fd, path):  # its holder has just removed it
                return
            info = _blocked(folder, deadline)
            if info is not None:
                _refuse(folder, info)
    finally:
        os.close(fd)


def acquire(folder, command: str) -> RunLock:
    """Take the lock of ``folder`` (which must exist) for ``command`` (e.g. ``"mumbo-jax
    tune"``), without waiting.

    Raises:
        RunLockedError: another live process holds it (the message names its host, pid,
            command and start time).
        ConfigError: the lock file cannot be created or opened.
    """
    path = Path(folder) / LOCK_NAME
    deadline = time.monotonic() + _PATIENCE_S
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as e:
            raise ConfigError(f"cannot create the lock file {path}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            moved = not _same_file(fd, path)
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ConfigError(f"cannot lock {path}: {e.strerror or e}") from None
            if moved:  # its holder has just removed it: lock the file at the path now
                continue
            info = _blocked(folder, deadline)
            if info is not None:
                _refuse(folder, info)
            continue
        if _same_file(fd, path):
            break
        os.close(fd)  # locked a file its holder removed meanwhile: lock the one at the path now
    try:
        old = os.read(fd, 65536)
        stale = None
        if old.strip():
            try:
                stale = json.loads(old)
            except ValueError:
                stale = {"unreadable": old[:200].decode(errors="replace")}
        holder = {"host": socket.gethostname(), "pid": os.getpid(), "command": command, "started": _now()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode(), 0)
        os.fsync(fd)
    except BaseException:
        os.close(fd)  # closing the only descriptor releases the lock
        raise
    return RunLock(path, fd, holder, stale if isinstance(stale, dict) else None)


@contextlib.contextmanager
def run_lock(folder, command: str, say=None):
    """``with run_lock(folder, "mumbo-jax run"):`` hold ``folder``'s lock for the block
    (see :func:`acquire`). ``say(message)`` is told when a stale lock (a holder that
    died without releasing it) was taken over."""
    lock = acquire(folder, command)
    try:
        if lock.stale is not None and say is not None:
            say(f"  taking over the lock of {folder} left by {_describe(lock.stale)}, which is no longer running")
        yield lock
    finally:
        lock.release()
