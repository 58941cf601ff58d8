"""What runs in the containers of the simulated kubelet (``sim.kubelet``): the container runtime registry.

``Runtimes`` maps a predicate over (pod, container) to an ``async def runtime(ctx: ContainerContext) -> int``
returning the exit code; ``register_image`` and ``register_name`` cover the usual cases, the latest
registration wins. ``default_runtime`` runs until the pod is deleted, or exits with the code in annotation
``sim.arcsm.io/exit-code`` after ``sim.arcsm.io/run-seconds`` (float, default 0). Annotation
``sim.arcsm.io/fail`` selects a failure mode: ``ErrImagePull`` (waiting ErrImagePull then ImagePullBackOff,
phase stays Pending), ``OOMKilled`` (terminated reason OOMKilled, exit 137, after run-seconds) or
``Evicted`` (after run-seconds: containers killed, phase Failed, ``status.reason: Evicted``); the kubelet
acts out ``ErrImagePull`` and ``Evicted``, ``default_runtime`` ``OOMKilled``.

A runtime that runs a real process (``sim.processes``) is a ``StagedRuntime``: the kubelet awaits its
``start`` before it reports the container running, so a container that cannot be made
(``ContainerConfigError``: waiting ``CreateContainerConfigError``, tried again) or started
(``StartError``: terminated ``StartError``, exit code 128) is reported as a real kubelet would; with
``host_volumes`` the kubelet first sets the pod's volumes up on the host (``sim.volumes``) and hands their
directories, a log file and a scratch directory over in ``ContainerContext.host``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from sim import nodeapi, podlogs, store

EXIT_CODE = "sim.arcsm.io/exit-code"
RUN_SECONDS = "sim.arcsm.io/run-seconds"
FAIL = "sim.arcsm.io/fail"

SIGTERM_EXIT = 143
SIGKILL_EXIT = 137


class ContainerConfigError(Exception):
    """The container cannot be made from its spec as things are (a Secret or key it needs is missing):
    the kubelet reports it waiting ``CreateContainerConfigError`` with this message and tries again."""


class StartError(Exception):
    """The container's process could not be started (its command is not there, the machine refuses the
    mounts): terminated ``StartError``, exit code 128, with this message; restartPolicy says what next."""


@dataclass(frozen=True)
class HostVolume:
    """A pod volume set up on the host: its directory, and whether the volume is read-only itself
    (secret, configMap, downwardAPI and projected volumes always are; a claim or hostPath may be)."""

    path: Path
    read_only: bool = False


@dataclass(frozen=True)
class HostFiles:
    """Where one run of a container keeps its files on the host."""

    volumes: Mapping[str, HostVolume]  # the pod's volumes by name
    log: Path  # the run's log file (CRI format, ``sim.podlogs.LogWriter``)
    scratch: Path  # a directory of the run's own


@dataclass
class ContainerContext:
    """What a container runtime gets: its pod and container, and a way to hear it must stop."""

    node: nodeapi.NodeApi  # the kubelet's API (its clock, the pod as it is now)
    objects: nodeapi.Objects  # what the pod refers to (its Secrets, ConfigMaps), read when this run started
    pod: store.Obj  # the pod as stored when this run of the container started
    container: store.Obj  # its entry in spec.containers
    restart_count: int
    # Set when the container must stop (the pod was deleted, or a probe failed): SIGTERM, then
    # ``grace`` seconds to exit before SIGKILL. Return an exit code.
    stopping: asyncio.Event
    reason: str | None = None  # a runtime may set the terminated reason (default Completed/Error)
    message: str | None = None  # ... and its message
    grace: float = 30.0
    pod_ip: str = ""
    host_ip: str = ""
    host: HostFiles | None = field(default=None, repr=False)  # for a StagedRuntime with host_volumes
    log: Path | None = field(default=None, repr=False)  # this run's log file (``kubectl logs``), if kept

    def print(self, *lines: str) -> None:
        """Write ``lines`` to this run's stdout, which ``kubectl logs`` shows (if a log is kept)."""
        if self.log is None:
            return
        writer = podlogs.LogWriter(self.log, "stdout")
        for line in lines:
            writer.write(line.encode() + b"\n")

    @property
    def namespace(self) -> str:
        return str(store.meta(self.pod).get("namespace", ""))

    @property
    def pod_name(self) -> str:
        return str(store.meta(self.pod).get("name", ""))

    @property
    def pod_uid(self) -> str:
        return str(store.meta(self.pod).get("uid", ""))

    @property
    def name(self) -> str:
        return str(self.container.get("name", ""))

    @property
    def annotations(self) -> dict[str, str]:
        ann = store.meta(self.pod).get("annotations")
        return dict(ann) if isinstance(ann, dict) else {}

    def current_pod(self) -> store.Obj | None:
        """The pod as stored now (None once it is gone or replaced by another pod of the same name)."""
        pod = self.node.pod(self.namespace, self.pod_name)
        return pod if pod is not None and store.meta(pod).get("uid") == self.pod_uid else None


Runtime = Callable[[ContainerContext], Awaitable[int]]
Predicate = Callable[[store.Obj, store.Obj], bool]


@runtime_checkable
class StagedRuntime(Protocol):
    """A runtime whose containers start in two steps: ``start`` returns once the process runs (raising
    ``ContainerConfigError`` or ``StartError`` when it cannot), with an awaitable of its exit code."""

    host_volumes: bool

    async def start(self, ctx: ContainerContext) -> Awaitable[int]: ...

    def __call__(self, ctx: ContainerContext) -> Awaitable[int]: ...


async def _stopped_within(ctx: ContainerContext, seconds: float) -> bool:
    """Wait up to ``seconds``; True when the pod was deleted meanwhile."""
    if ctx.stopping.is_set():
        return True
    try:
        await asyncio.wait_for(ctx.stopping.wait(), max(seconds, 0.0))
    except TimeoutError:
        return False
    return True


async def default_runtime(ctx: ContainerContext) -> int:
    """Run until the pod is deleted (exit 143), or exit as the ``sim.arcsm.io/*`` annotations say."""
    ann = ctx.annotations
    fail = ann.get(FAIL, "")
    code_text = ann.get(EXIT_CODE)
    if code_text is None and fail != "OOMKilled":
        await ctx.stopping.wait()
        return SIGTERM_EXIT
    if await _stopped_within(ctx, float(ann.get(RUN_SECONDS) or 0)):
        return SIGTERM_EXIT
    if fail == "OOMKilled":
        ctx.reason = "OOMKilled"
        return SIGKILL_EXIT
    return int(str(code_text))


def image_repository(image: str) -> str:
    """``ghcr.io/actions/actions-runner:2.0@sha256:…`` → ``ghcr.io/actions/actions-runner``."""
    image = image.split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    return image[:colon] if colon > slash else image


class Runtimes:
    """Which runtime runs a container: registered (predicate, runtime) pairs, the latest match wins."""

    def __init__(self, default: Runtime = default_runtime) -> None:
        self.default = default
        self._entries: list[tuple[Predicate, Runtime]] = []

    def register(self, predicate: Predicate, runtime: Runtime) -> None:
        self._entries.append((predicate, runtime))

    def register_image(self, image: str, runtime: Runtime) -> None:
        """Containers whose image is ``image``, or ``image`` with any tag/digest when it has none."""

        def matches(pod: store.Obj, container: store.Obj) -> bool:
            actual = str(container.get("image") or "")
            return actual == image or image_repository(actual) == image

        self.register(matches, runtime)

    def register_name(self, name: str, runtime: Runtime) -> None:
        """Containers named ``name``."""
        self.register(lambda pod, container: container.get("name") == name, runtime)

    def resolve(self, pod: store.Obj, container: store.Obj) -> Runtime:
        for predicate, runtime in reversed(self._entries):
            if predicate(pod, container):
                return runtime
        return self.default
