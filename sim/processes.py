"""A container runtime that runs a container as a real process on the host, for an image a composer
describes: tests, ``arcsm sim`` and ``arcsm demo`` register it on the kubelet's runtimes::

    image = processes.Image(entrypoint=("/usr/bin/python3",), env={"PATH": "/usr/bin:/bin"},
                            executables={"/ghalistener": (ARCSM, "listener")})
    world.kubelet.runtimes.register_image("arcsm", processes.ProcessRuntime(image))

``Image`` is what an image would hold: its ``entrypoint`` and ``cmd``, ``working_dir``, ``env`` (``PATH``
and friends), ``executables``: paths inside the image that stand for a host command line (the
container's command ``/ghalistener --flag`` runs ``ARCSM listener --flag``), and ``paths``: the host
directories its files are (with this interpreter's), which stay visible under a volume mounted over one
of their parents, as an image's files would.

``ProcessRuntime.start`` does what the kubelet and runc do for a container: the command line by the
Kubernetes rules (``command`` replaces the entrypoint and drops ``cmd``; ``args`` replace ``cmd``;
``$(VAR)`` expanded from the container's variables), the environment (the image's, then ``HOSTNAME`` = the
pod name and ``HOME``, then ``sim.environment.container_env`` with ``KUBERNETES_SERVICE_HOST``/``PORT``
naming the API server's HTTPS endpoint), the pod's volumes (``sim.volumes``) at each ``volumeMount``'s
``mountPath`` (``subPath``/``subPathExpr``, ``readOnly``) in a private mount namespace (``sim.mounting``),
and stdout/stderr to the run's log file (``sim.podlogs``). It returns once the command was exec'd and
raises ``runtimes.StartError`` when it could not be (not found, the machine refuses the mount namespace),
``runtimes.ContainerConfigError`` when the environment cannot be resolved.

Stopping (the pod deleted, or a liveness probe failed): SIGTERM to the process group, ``ctx.grace``
seconds, then SIGKILL; the exit code is the process's (128 + the signal when a signal ended it), and
what is left of the group is killed when the main process exits, as a container's cgroup is.

The process shares the node's network namespace, as a ``hostNetwork: true`` pod does: a server that
binds the wildcard address takes that port on every pod address, so two pods cannot both listen on one
port, and probes reach it on the pod IP only when the pod IP is an address of this host.

Known limits: no user, capabilities, resource limits, seccomp or PID namespace (the process runs as
the emulator's user, as root when the emulator is); ``terminationMessagePath`` is not mounted; init
containers are not run (the kubelet reports them completed).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim import environment, podlogs, runtimes

log = logging.getLogger("arcsm.sim.processes")

HELPER = Path(__file__).with_name("mounting.py")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Image:
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    working_dir: str = "/"
    env: Mapping[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH})
    executables: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Host directories the image's files are, besides this interpreter's (``sys.prefix``,
    # ``sys.base_prefix``): a volume mounted over one's parent does not hide it (``sim.mounting``).
    paths: tuple[str, ...] = ()

    def directories(self) -> list[str]:
        """The image's directories on the host, the interpreter's first."""
        return list(dict.fromkeys([sys.prefix, sys.base_prefix, *self.paths]))


@functools.cache
def mounts_allowed() -> bool:
    """Whether this machine lets a process make a private mount namespace, which every process container
    needs (root or CAP_SYS_ADMIN): a child process tries, so this one is left as it was."""
    probe = "import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).unshare(0x20000) != 0)"
    return subprocess.run([sys.executable, "-c", probe], check=False).returncode == 0


def command_line(image: Image, container: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """The argv of the container: Kubernetes' command/args rules over the image, ``$(VAR)`` expanded,
    an image executable replaced by its host command line."""
    command = [str(c) for c in container.get("command") or []]
    args = [str(a) for a in container.get("args") or []]

    def expand(items: Sequence[str]) -> list[str]:
        return [environment.expand(item, env.get) for item in items]

    if command:
        argv = expand(command) + expand(args)
    else:
        argv = list(image.entrypoint) + (expand(args) if args else list(image.cmd))
    if argv and argv[0] in image.executables:
        argv = [*image.executables[argv[0]], *argv[1:]]
    return argv


def process_env(image: Image, ctx: runtimes.ContainerContext) -> dict[str, str]:
    resolved = environment.container_env(
        ctx.objects, ctx.pod, ctx.container, pod_ip=ctx.pod_ip, host_ip=ctx.host_ip
    )
    env = {**image.env, "HOSTNAME": ctx.pod_name}
    env.setdefault("HOME", "/root")
    env.update(resolved)
    return env


def _mounts(ctx: runtimes.ContainerContext, env: Mapping[str, str]) -> list[dict[str, Any]]:
    assert ctx.host is not None
    out = []
    for mount in ctx.container.get("volumeMounts") or []:
        name = str(mount.get("name") or "")
        volume = ctx.host.volumes.get(name)
        if volume is None:
            raise runtimes.StartError(
                f'unable to start container process: volume "{name}" is not set up on the node'
            )
        source = volume.path
        sub = str(mount.get("subPath") or "")
        if mount.get("subPathExpr"):
            sub = environment.expand(str(mount["subPathExpr"]), env.get)
        if sub:
            source = source / sub
            if not source.exists() and not source.is_symlink():
                if volume.read_only:
                    raise runtimes.StartError(
                        f"unable to start container process: subPath {sub} is not in volume {name}"
                    )
                source.mkdir(parents=True, exist_ok=True)
            # A subPath is the file as it is now (a projected volume's updates do not reach it).
            source = source.resolve()
        out.append(
            {
                "source": str(source),
                "target": str(mount.get("mountPath") or ""),
                "read_only": bool(mount.get("readOnly")) or volume.read_only,
                "dir": source.is_dir(),
            }
        )
    return out


def _exit_code(returncode: int | None) -> int:
    if returncode is None:
        return 1
    return 128 - returncode if returncode < 0 else returncode


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


async def _pump(stream: asyncio.StreamReader | None, writer: podlogs.LogWriter) -> None:
    if stream is None:
        return
    try:
        while chunk := await stream.read(READ_CHUNK):
            writer.write(chunk)
    finally:
        writer.close()


def _write_all(fd: int, data: bytes) -> None:
    try:
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)
    except BrokenPipeError:
        pass  # the helper died before reading: its status says why


async def _read_all(fd: int) -> bytes:
    """Everything written to a pipe until its last writer closes it."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        return await reader.read()
    finally:
        transport.close()


class ProcessRuntime:
    """Runs containers of an ``Image`` as processes (a ``runtimes.StagedRuntime``)."""

    host_volumes = True

    def __init__(self, image: Image, *, python: str = sys.executable) -> None:
        self.image = image
        self.python = python

    async def __call__(self, ctx: runtimes.ContainerContext) -> int:
        return await (await self.start(ctx))

    async def start(self, ctx: runtimes.ContainerContext) -> Awaitable[int]:
        if ctx.host is None:
            raise runtimes.StartError("unable to start container process: the kubelet gave no host files")
        env = process_env(self.image, ctx)
        argv = command_line(self.image, ctx.container, env)
        if not argv:
            raise runtimes.StartError("unable to start container process: no command specified")
        scratch = ctx.host.scratch
        scratch.mkdir(parents=True, exist_ok=True)
        plan = {
            "argv": argv,
            "env": env,
            "workdir": str(ctx.container.get("workingDir") or self.image.working_dir or "/"),
            "hostname": ctx.pod_name[:63],
            "scratch": str(scratch),
            "image": self.image.directories(),
            "mounts": _mounts(ctx, env),
        }
        plan_read, plan_write = os.pipe()
        status_read, status_write = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                self.python,
                "-I",
                str(HELPER),
                str(plan_read),
                str(status_write),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(plan_read, status_write),
                start_new_session=True,
                env={},
                cwd="/",
            )
        except OSError as exc:
            for fd in (status_read, plan_write):
                os.close(fd)
            raise runtimes.StartError(f"unable to start container process: {exc}") from None
        finally:
            os.close(status_write)
            os.close(plan_read)
        pumps = [
            asyncio.ensure_future(_pump(proc.stdout, podlogs.LogWriter(ctx.host.log, "stdout"))),
            asyncio.ensure_future(_pump(proc.stderr, podlogs.LogWriter(ctx.host.log, "stderr"))),
        ]
        try:
            # The plan goes through a pipe (it holds secret values): written from a thread, as it may
            # be larger than the pipe holds before the helper reads.
            await asyncio.to_thread(_write_all, plan_write, json.dumps(plan).encode())
            report = await _read_all(status_read)
        except BaseException:
            await self._kill(proc, pumps)
            raise
        if report:
            await self._kill(proc, pumps)
            try:
                message = str(json.loads(report)["message"])
            except (ValueError, KeyError, TypeError):
                message = report.decode(errors="replace")
            raise runtimes.StartError(message)
        log.debug("processes: %s/%s %s runs as pid %d", ctx.namespace, ctx.pod_name, ctx.name, proc.pid)
        return self._run(ctx, proc, pumps)

    async def _kill(self, proc: asyncio.subprocess.Process, pumps: Sequence[asyncio.Future[None]]) -> None:
        _signal_group(proc.pid, signal.SIGKILL)
        await proc.wait()
        await asyncio.gather(*pumps, return_exceptions=True)

    async def _run(
        self,
        ctx: runtimes.ContainerContext,
        proc: asyncio.subprocess.Process,
        pumps: Sequence[asyncio.Future[None]],
    ) -> int:
        exited = asyncio.ensure_future(proc.wait())
        stop = asyncio.ensure_future(ctx.stopping.wait())
        try:
            await asyncio.wait({exited, stop}, return_when=asyncio.FIRST_COMPLETED)
            if not exited.done():
                _signal_group(proc.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(asyncio.shield(exited), max(ctx.grace, 0.0))
                except TimeoutError:
                    _signal_group(proc.pid, signal.SIGKILL)
                    await exited
            _signal_group(proc.pid, signal.SIGKILL)  # the rest of the container goes with its process
            await asyncio.gather(*pumps, return_exceptions=True)
            return _exit_code(proc.returncode)
        except asyncio.CancelledError:
            # The kubelet is going away: nothing of the container may outlive it.
            _signal_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(BaseException):
                await asyncio.shield(exited)
            raise
        finally:
            stop.cancel()
