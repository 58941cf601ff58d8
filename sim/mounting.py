"""The first moments of a process container: a private mount namespace with the pod's volumes at their
mount paths, then ``exec`` of the container's command (what runc does before a container's process runs).

The process runtime (``sim.processes``) starts this file as a script, ``python -I mounting.py PLAN
STATUS``, in a new session with the container's stdout and stderr. PLAN is the read end of a pipe that
brings one JSON object {argv, env, workdir, hostname, scratch, image: [directory], mounts: [{source,
target, read_only, dir}]} (a pipe, not a file: the environment holds secret values); STATUS is the
write end of a pipe that stays silent when the command was exec'd (the descriptor closes on exec) and
otherwise receives one JSON object {message} before this process exits 128, which the runtime reports
as the container's ``StartError``. It needs nothing but the standard library, because it runs before
anything else.

What it does, in order: ``unshare(CLONE_NEWNS | CLONE_NEWUTS)`` (a private mount namespace and the pod's
host name; this needs root or CAP_SYS_ADMIN, and the error says so), every mount made private, each
source opened (so a later mount over a path cannot hide it), then for each mount from the shallowest
target to the deepest: the target made if missing, the source bind-mounted onto it; then the plan's
``image`` directories (the host directories an image's files are: the interpreter, the installed
packages) that a volume was mounted over are bound back, read-only, at their own paths inside it, as an
image's files would stay beside a volume; read-only ones are remounted read-only at the end; then the
working directory, then ``execvpe`` with the container's environment (its ``PATH`` finds the command,
as runc does).

A missing mount point is made without touching the host: inside a volume mounted before, it is a plain
directory (or file) in that volume; elsewhere the deepest existing directory above it is replaced, in
this namespace only, by a tmpfs holding the same entries (bind-mounted from the original, so they are
the host's own) plus the missing one. Entries added to that host directory later are not seen inside.
A mount point directly under ``/`` that the host lacks is refused: the root is not replaced.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
MS_RDONLY = 0x1
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_MOVE = 0x2000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
EXIT_START_ERROR = 128

_libc = ctypes.CDLL(None, use_errno=True)


class Failure(Exception):
    """The container cannot be started; the message is the StartError's."""


def _call(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(value: str | None) -> bytes | None:
        return None if value is None else os.fsencode(value)

    _call(_libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data)), f"mount {target}")


def _depth(path: str) -> int:
    return len([p for p in path.split("/") if p])


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class Namespace:
    """Mounts made in this process's private mount namespace."""

    def __init__(self, scratch: str) -> None:
        self.scratch = os.open(scratch, os.O_PATH | os.O_CLOEXEC)
        self.staged = 0
        self.writable: list[str] = []  # targets whose content is ours to add to (volumes, our tmpfs)

    def _overlay(self, directory: str) -> None:
        """Replace ``directory`` (here only) by a tmpfs holding its entries, so entries can be added."""
        self.staged += 1
        os.mkdir(str(self.staged), dir_fd=self.scratch)
        stage = f"/proc/self/fd/{self.scratch}/{self.staged}"
        mount("tmpfs", stage, "tmpfs", 0, "mode=755")
        info = os.stat(directory)
        os.chmod(stage, info.st_mode & 0o7777)
        os.chown(stage, info.st_uid, info.st_gid)
        with os.scandir(directory) as entries:
            for entry in entries:
                source, copy = os.path.join(directory, entry.name), os.path.join(stage, entry.name)
                if entry.is_symlink():
                    os.symlink(os.readlink(source), copy)
                elif entry.is_dir(follow_symlinks=False):
                    os.mkdir(copy)
                    mount(source, copy, None, MS_BIND | MS_REC)
                else:
                    with open(copy, "w"):
                        pass
                    mount(source, copy, None, MS_BIND)
        mount(stage, directory, None, MS_MOVE)
        self.writable.append(directory)

    def ensure(self, target: str, *, directory: bool) -> str:
        """``target`` with symlinks resolved, made to exist as a directory or a file."""
        target = os.path.realpath(target)
        if os.path.lexists(target):
            if directory and not os.path.isdir(target):
                raise Failure(f"mount point {target} exists and is not a directory")
            return target
        ancestor = os.path.dirname(target)
        while not os.path.isdir(ancestor):
            ancestor = os.path.dirname(ancestor)
        if not _under(ancestor, self.writable):
            if ancestor == "/":
                first = target.split("/")[1]
                raise Failure(
                    f"cannot make the mount point {target}: the host has no /{first} and the emulator does "
                    "not replace the root directory"
                )
            self._overlay(ancestor)
        parent = os.path.dirname(target)
        os.makedirs(parent, exist_ok=True)
        if directory:
            os.mkdir(target)
        else:
            with open(target, "w"):
                pass
        return target

    def bind(self, source_fd: int, target: str) -> None:
        mount(f"/proc/self/fd/{source_fd}", target, None, MS_BIND | MS_REC)
        self.writable.append(target)


def setup(plan: dict[str, Any]) -> None:
    try:
        _call(_libc.unshare(CLONE_NEWNS | CLONE_NEWUTS), "unshare(CLONE_NEWNS|CLONE_NEWUTS)")
    except OSError as exc:
        raise Failure(
            f"cannot give the container a private mount namespace ({exc.strerror}): the process runtime "
            "needs root or CAP_SYS_ADMIN"
        ) from None
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    hostname = os.fsencode(plan.get("hostname") or "")
    if hostname:
        _call(_libc.sethostname(hostname, len(hostname)), "sethostname")
    namespace = Namespace(plan["scratch"])
    mounts = sorted(plan.get("mounts") or [], key=lambda m: _depth(m["target"]))
    sources = []
    for m in mounts:
        try:
            sources.append(os.open(m["source"], os.O_PATH | os.O_CLOEXEC))
        except OSError as exc:
            raise Failure(f"cannot open the source of the mount at {m['target']}: {exc.strerror}") from None
    # The image's files are the host's own: a volume mounted over a directory that holds some of them
    # (an emptyDir at /tmp over a virtualenv under /tmp) must not hide them.
    image = sorted({os.path.realpath(p) for p in plan.get("image") or [] if os.path.isdir(p)}, key=_depth)
    outermost = [p for i, p in enumerate(image) if not _under(p, image[:i])]
    kept = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for p in outermost]
    read_only = []
    targets = []
    for m, fd in zip(mounts, sources, strict=True):
        target = namespace.ensure(m["target"], directory=bool(m.get("dir", True)))
        namespace.bind(fd, target)
        targets.append(target)
        if m.get("read_only"):
            read_only.append(target)
    for path, fd in kept:
        if any(path.startswith(t.rstrip("/") + "/") for t in targets):
            shown = namespace.ensure(path, directory=True)
            mount(f"/proc/self/fd/{fd}", shown, None, MS_BIND | MS_REC)
            read_only.append(shown)
    for target in reversed(read_only):
        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY)
    workdir = plan.get("workdir") or "/"
    if not os.path.isdir(workdir):
        namespace.ensure(workdir, directory=True)
    os.chdir(workdir)


def _report(fd: int, message: str) -> None:
    os.write(fd, json.dumps({"message": message}).encode())
    os.close(fd)


def main(args: list[str]) -> int:
    plan_fd, status_fd = int(args[0]), int(args[1])
    try:
        with os.fdopen(plan_fd, "rb") as f:
            plan = json.loads(f.read())
        setup(plan)
    except (Failure, OSError) as exc:
        _report(status_fd, f"unable to start container process: error mounting volumes: {exc}")
        return EXIT_START_ERROR
    argv, env = list(plan["argv"]), dict(plan["env"])
    os.set_inheritable(status_fd, False)  # closed by exec: the runtime reads end-of-file as started
    try:
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        where = (
            "executable file not found in $PATH"
            if "/" not in argv[0]
            else f"stat {argv[0]}: no such file or directory"
        )
        _report(status_fd, f'unable to start container process: exec: "{argv[0]}": {where}')
    except OSError as exc:
        _report(
            status_fd, f'unable to start container process: exec: "{argv[0]}": {(exc.strerror or "").lower()}'
        )
    return EXIT_START_ERROR


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
