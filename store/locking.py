"""One writer per journal: advisory locks held while it is open, on the database file itself and on a file
beside the name it was opened by.

Two controllers appending to one journal would hand out the same sequence numbers; the second to open
it is refused. The lock that matters is on the database file (its inode, ``flock``): every name of the
file, a symbolic or a hard link, reaches the same lock, whereas a lock named after the path given lets a
second writer in through another name (and SQLite keeps its write-ahead log beside the name it was
given, so through a hard link the two would not even share a log). ``flock`` is separate from SQLite's
own POSIX locks on the file, so it neither blocks SQLite nor is released when SQLite closes a
descriptor of the file. The lock on ``<name>.lock`` beside the path is also taken, as older arcsm
versions take only that one, and so that an import that writes a new journal in place of ``path`` holds
the name meanwhile.

The kernel releases the locks when the process dies, so a crash never leaves them stuck. Readers
(export, verify) take neither: WAL lets them read while the writer appends.
"""

from __future__ import annotations

import fcntl
import os
import pathlib

from store.errors import JournalError, JournalLocked


def lock_path(path: pathlib.Path) -> pathlib.Path:
    return path.with_name(path.name + ".lock")


class FileLock:
    def __init__(self, *fds: int) -> None:
        self._fds = list(fds)

    @classmethod
    def acquire(cls, path: pathlib.Path, *, database: bool = False) -> FileLock:
        """Lock the journal at ``path`` (``JournalLocked`` if another process has it open): the file beside
        its name, and with ``database`` the database file itself, created empty when missing."""
        fds = [_locked(lock_path(path), path)]
        try:
            if database:
                fds.append(_locked(path, path))
        except BaseException:
            _release(fds)
            raise
        return cls(*fds)

    def release(self) -> None:
        fds, self._fds = self._fds, []
        _release(fds)


def _locked(file: pathlib.Path, journal: pathlib.Path) -> int:
    try:
        fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise JournalError(f"cannot open journal {journal}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        raise JournalLocked(
            f"journal {journal} is open in another process (by this name or another link to the same "
            "file); stop that process or use another journal"
        ) from exc
    return fd


def _release(fds: list[int]) -> None:
    for fd in reversed(fds):
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
