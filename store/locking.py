"""One writer per journal: an advisory lock on a file beside the database, held while it is open.

Two controllers appending to one journal would hand out the same sequence numbers; the second to open
it is refused. The kernel releases the lock when the process dies, so a crash never leaves it stuck.
Readers (export, verify) do not take it: WAL lets them read while the writer appends.
"""

from __future__ import annotations

import fcntl
import os
import pathlib

from store.errors import JournalError, JournalLocked


def lock_path(path: pathlib.Path) -> pathlib.Path:
    return path.with_name(path.name + ".lock")


class FileLock:
    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: pathlib.Path) -> FileLock:
        """Lock the journal at ``path``; ``JournalLocked`` if another process has it open."""
        try:
            fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise JournalError(f"cannot open journal {path}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise JournalLocked(
                f"journal {path} is open in another process; stop that process or use another journal"
            ) from exc
        return cls(fd)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
