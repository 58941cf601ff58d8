"""Replicas of the controller for the leader election e2e tests: ``arcsm run --leader-elect`` subprocesses.

Inputs: the ``World`` (its kubeconfig), a directory, a name (the pod name: ``HOSTNAME``, so the Lease's
holder reads ``<name>_<suffix>``) and the election timings. Outputs: ``Replica`` starts the process on
its own journal with the HTTP API on a free port (read from its log), answers its role (``/readyz``)
and the phase history it serves, and stops it by SIGKILL or SIGTERM. ``lease`` reads the Lease the
replicas compete for, and ``LeaseVersions`` records every version of it the API server stores;
``registrations_without_runner`` finds runners the fake Actions service still has
registered with no EphemeralRunner left for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from kubernetes_asyncio import client, watch

from sim.world import World
from tests import helpers
from tests.e2e.controller import harness
from tests.helpers import eventually

LEASE = "arcsm-controller"
SERVING = re.compile(r"serving the HTTP API on (\S+)")


@dataclass(frozen=True)
class Timings:
    lease_duration: float
    renew_deadline: float
    retry_period: float

    def flags(self) -> list[str]:
        return [
            "--lease-duration",
            str(self.lease_duration),
            "--renew-deadline",
            str(self.renew_deadline),
            "--retry-period",
            str(self.retry_period),
        ]


@dataclass
class Replica:
    world: World
    directory: Path
    name: str
    timings: Timings
    proc: asyncio.subprocess.Process | None = None
    url: str = ""
    log: list[str] = field(default_factory=list)
    _reader: asyncio.Task[None] | None = None

    @property
    def journal(self) -> Path:
        return self.directory / f"{self.name}.db"

    async def start(self) -> None:
        assert self.proc is None or self.proc.returncode is not None, f"{self.name} is running"
        kubeconfig = self.world.write_kubeconfig(self.directory / "kubeconfig")
        self.url = ""
        self.proc = await asyncio.create_subprocess_exec(
            *harness.run_command(
                self.journal, kubeconfig, "--http", "127.0.0.1:0", "--leader-elect", *self.timings.flags()
            ),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "HOSTNAME": self.name},
        )
        self._reader = asyncio.create_task(self._read_log(self.proc))
        await eventually(lambda: self.url, timeout=20, what=f"{self.name} serving its HTTP API")

    async def _read_log(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        async for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.log.append(line)
            try:
                message = str(json.loads(line).get("msg", ""))
            except ValueError:
                message = line
            if (found := SERVING.search(message)) is not None:
                self.url = found.group(1)

    async def readiness(self) -> dict[str, Any]:
        async with httpx.AsyncClient(base_url=self.url, timeout=5) as http:
            answer = await http.get("/readyz")
        body: dict[str, Any] = answer.json()
        return body

    async def role(self) -> str:
        return str((await self.readiness())["role"])

    async def phases(self, name: str = "arc") -> list[dict[str, Any]]:
        """The scale set's phase history as this replica serves it, every page."""
        items: list[dict[str, Any]] = []
        after: int | None = 0
        async with httpx.AsyncClient(base_url=self.url, timeout=10) as http:
            while after is not None:
                answer = await http.get(
                    f"/api/v1/namespaces/{harness.NS}/autoscalingrunnersets/{name}/phases",
                    params={"after": after, "limit": 50},
                )
                if answer.status_code == 404:
                    return []
                answer.raise_for_status()
                items.extend(answer.json()["items"])
                after = answer.json()["next"]
        return items

    async def kill(self) -> None:
        """SIGKILL: nothing is flushed, the Lease is not released."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()
        await self._ended()

    async def terminate(self, timeout: float = 30) -> int:
        """SIGTERM, as Kubernetes stops a pod; the exit status (SIGKILL after ``timeout``: the grace
        period)."""
        assert self.proc is not None
        await helpers.terminate(self.proc, timeout)
        await self._ended()
        return self.proc.returncode if self.proc.returncode is not None else -1

    async def _ended(self) -> None:
        assert self.proc is not None
        await asyncio.wait_for(self.proc.wait(), timeout=10)
        if self._reader is not None:
            await asyncio.wait_for(self._reader, timeout=10)

    def failure(self) -> str:
        """The last lines of the replica's log, for an assertion message."""
        return "\n".join(self.log[-30:])


@dataclass(frozen=True)
class LeaseVersion:
    """One version of the Lease as the API server stored it."""

    resource_version: int
    holder: str
    duration: int
    transitions: int
    acquire_time: str
    renew_time: str


class LeaseVersions:
    """Every version of the Lease the API server stores, in order, from the moment it is made: a watch
    on it from the resource version of a first list, on either world (a watch delivers each write, however
    quickly the next one follows, and starts again where it stopped when the server ends it).

    Use it as an async context manager around the story it records."""

    def __init__(self, world: World) -> None:
        self.versions: list[LeaseVersion] = []
        self._world = world
        self._task: asyncio.Task[None] | None = None
        self._watching = asyncio.Event()

    async def __aenter__(self) -> LeaseVersions:
        self._task = asyncio.create_task(self._watch())
        await eventually(self._watching.is_set, timeout=20, what="the Lease watched")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _watch(self) -> None:
        async with client.ApiClient(self._world.configuration()) as api:
            leases = client.CoordinationV1Api(api)
            selector = f"metadata.name={LEASE}"
            listed = await leases.list_namespaced_lease(harness.CONTROLLER_NS, field_selector=selector)
            assert not listed.items, "the Lease exists before its versions are recorded"
            since = listed.metadata.resource_version
            while True:
                stream = watch.Watch().stream(
                    leases.list_namespaced_lease,
                    harness.CONTROLLER_NS,
                    field_selector=selector,
                    resource_version=since,
                    timeout_seconds=60,
                    _request_timeout=90,
                )
                self._watching.set()
                async with stream as events:
                    async for event in events:
                        lease = event["raw_object"]
                        since = lease["metadata"]["resourceVersion"]
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self._record(lease)

    def _record(self, lease: dict[str, Any]) -> None:
        spec = lease.get("spec") or {}
        self.versions.append(
            LeaseVersion(
                resource_version=int(lease["metadata"]["resourceVersion"]),
                holder=str(spec.get("holderIdentity") or ""),
                duration=int(spec.get("leaseDurationSeconds") or 0),
                transitions=int(spec.get("leaseTransitions") or 0),
                acquire_time=str(spec.get("acquireTime") or ""),
                renew_time=str(spec.get("renewTime") or ""),
            )
        )

    def since(self, count: int) -> list[LeaseVersion]:
        """The versions stored after the first ``count``."""
        return self.versions[count:]

    async def taken_by(self, name: str, *, since: int = 0, timeout: float = 30) -> list[LeaseVersion]:
        """The versions stored after the first ``since``, once the watch has delivered one held by the
        replica ``name``: the watch may deliver a write after a read of the Lease has already seen it."""

        def taken() -> list[LeaseVersion] | None:
            versions = self.since(since)
            return versions if any(v.holder.startswith(f"{name}_") for v in versions) else None

        what = f"the Lease taken by {name}"
        found: list[LeaseVersion] = await eventually(taken, timeout=timeout, what=what)
        return found


async def lease(kube: client.ApiClient) -> Any:
    return await client.CoordinationV1Api(kube).read_namespaced_lease(LEASE, harness.CONTROLLER_NS)


async def holder(kube: client.ApiClient) -> str:
    try:
        return str((await lease(kube)).spec.holder_identity or "")
    except client.ApiException as exc:
        if exc.status == 404:
            return ""
        raise


async def registrations_without_runner(world: World, kube: client.ApiClient) -> list[str]:
    """Runner names the fake Actions service has registered for which no EphemeralRunner exists."""
    runners = {r["metadata"]["name"] for r in await harness.items(kube, "EphemeralRunner")}
    return sorted(a.name for a in world.github.state.agents.values() if a.name not in runners)
