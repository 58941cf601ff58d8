"""One pod on the emulated node, from binding to the final delete, with its status written as a kubelet
writes it.

The sequence a pod's status goes through, each step one ``pods/status`` merge patch:

1. ``Pending``: hostIP, podIP, startTime, ``PodReadyToStartContainers`` and ``Initialized`` True,
   ``ContainersReady`` and ``Ready`` False, every container waiting ``ContainerCreating``;
2. ``Running``: every container running since its start, ready (no probes are run), ``Ready`` True;
3. once every container has exited (``restartPolicy: Never``; other policies restart a container after a
   second): ``Succeeded`` when all exited 0, else ``Failed``, each terminated with its exit code and
   reason ``Completed`` or ``Error``.

A deletion (a ``deletionTimestamp``) stops the containers (``stopping``, as SIGTERM) and gives them the
pod's grace period before they are cancelled (exit 137), writes the terminated statuses, then deletes the
pod with grace period 0 and a uid precondition, which is what removes it from the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from pathlib import Path
from typing import Any

from sim import runtimes
from sim.node.containers import Container, Runtimes
from sim.node.kubeapi import ApiError, KubeApi

log = logging.getLogger("arcsm.sim.node")

RESTART_DELAY = 1.0


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro() -> str:
    """A MicroTime (a Lease's renewTime)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _condition(kind: str, status: bool, at: str) -> dict[str, Any]:
    return {"type": kind, "status": "True" if status else "False", "lastTransitionTime": at}


class PodRun:
    """Runs one pod's containers and reports them; ``delete()`` starts a graceful stop."""

    def __init__(
        self, api: KubeApi, pod: dict[str, Any], *, runtimes: Runtimes, host_ip: str, pod_ip: str, logs: Path
    ) -> None:
        self.api = api
        self.pod = pod
        self.runtimes = runtimes
        self.host_ip = host_ip
        self.pod_ip = pod_ip
        self.logs = logs
        meta = pod["metadata"]
        self.namespace, self.name, self.uid = meta["namespace"], meta["name"], meta["uid"]
        self.path = f"/api/v1/namespaces/{self.namespace}/pods/{self.name}"
        self.stopping = asyncio.Event()
        self.grace = 30.0
        self.started_at = now()
        self.statuses: dict[str, dict[str, Any]] = {}
        self.restarts: dict[str, int] = {}

    @property
    def spec(self) -> dict[str, Any]:
        spec = self.pod.get("spec")
        return spec if isinstance(spec, dict) else {}

    def delete(self, grace: float) -> None:
        self.grace = max(0.0, grace)
        self.stopping.set()

    # -- the lifecycle -------------------------------------------------------------------------------

    async def run(self) -> None:
        containers = list(self.spec.get("containers") or [])
        try:
            await self._report("Pending", {c["name"]: _waiting("ContainerCreating") for c in containers})
            codes = await self._run_containers(containers)
            phase = "Succeeded" if all(code == 0 for code in codes.values()) else "Failed"
            await self._report(phase, {name: self._terminated(name, code) for name, code in codes.items()})
            await self.stopping.wait()
            await self._final_delete()
        except ApiError as exc:
            if exc.status in (404, 409):  # deleted or replaced behind our back: nothing left to report
                log.debug("pod %s/%s: %s", self.namespace, self.name, exc)
                return
            raise

    async def finish(self) -> None:
        """The final delete of a pod that had finished before this node saw it deleted."""
        with contextlib.suppress(ApiError):
            await self._final_delete()

    async def _run_containers(self, containers: list[dict[str, Any]]) -> dict[str, int]:
        tasks = {
            c["name"]: asyncio.create_task(self._supervise(c), name=f"pod {self.name}: {c['name']}")
            for c in containers
        }
        await self._report("Running", {name: self._running(name) for name in tasks})
        await asyncio.wait(tasks.values())
        return {name: task.result() for name, task in tasks.items()}

    async def _supervise(self, spec: dict[str, Any]) -> int:
        name = spec["name"]
        policy = self.spec.get("restartPolicy") or "Always"
        while True:
            self.statuses[name] = {"startedAt": now()}
            code = await self._run_once(spec)
            if self.stopping.is_set() or policy == "Never" or (policy == "OnFailure" and code == 0):
                return code
            self.restarts[name] = self.restarts.get(name, 0) + 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), RESTART_DELAY)
            if self.stopping.is_set():
                return code
            await self._report(
                "Running", {c["name"]: self._running(c["name"]) for c in self.spec["containers"]}
            )

    async def _run_once(self, spec: dict[str, Any]) -> int:
        stop = asyncio.Event()
        log_path = self.logs / f"{self.namespace}_{self.name}_{self.uid}" / f"{spec['name']}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        container = Container(self.api, self.pod, spec, stop, log_path, self.pod_ip)
        run = asyncio.create_task(self._exit_code(self.runtimes.resolve(spec), container))
        stopped = asyncio.create_task(self.stopping.wait())
        try:
            await asyncio.wait({run, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if run.done():
                return run.result()
            stop.set()  # SIGTERM, then the grace period
            try:
                return await asyncio.wait_for(asyncio.shield(run), self.grace)
            except TimeoutError:
                run.cancel()
                return runtimes.SIGKILL_EXIT
        finally:
            stopped.cancel()

    async def _exit_code(self, runtime: Any, container: Container) -> int:
        try:
            return int(await runtime(container))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("pod %s/%s: container %s failed", self.namespace, self.name, container.spec["name"])
            return 1

    async def _final_delete(self) -> None:
        options = {"gracePeriodSeconds": 0, "preconditions": {"uid": self.uid}}
        await self.api.delete(self.path, options)

    # -- status ----------------------------------------------------------------------------------------

    def _running(self, name: str) -> dict[str, Any]:
        started = self.statuses.get(name, {}).get("startedAt") or now()
        return {"state": {"running": {"startedAt": started}}, "ready": True, "started": True}

    def _terminated(self, name: str, code: int) -> dict[str, Any]:
        started = self.statuses.get(name, {}).get("startedAt") or now()
        reason = "Completed" if code == 0 else "Error"
        state = {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": now()}
        return {"state": {"terminated": state}, "ready": False, "started": False}

    async def _report(self, phase: str, states: dict[str, dict[str, Any]]) -> None:
        at = now()
        ready = phase == "Running"
        scheduled = [
            c
            for c in (self.pod.get("status") or {}).get("conditions") or []
            if c.get("type") == "PodScheduled"
        ]
        statuses = []
        for spec in self.spec.get("containers") or []:
            name = spec["name"]
            entry = {
                "name": name,
                "image": spec.get("image", ""),
                "imageID": "",
                "restartCount": self.restarts.get(name, 0),
                "ready": False,
                "started": False,
                **states.get(name, _waiting("ContainerCreating")),
            }
            if "running" in entry["state"] or "terminated" in entry["state"]:
                entry["containerID"] = f"arcsm://{self.uid[:8]}-{name}-{self.restarts.get(name, 0)}"
            statuses.append(entry)
        status: dict[str, Any] = {
            "phase": phase,
            "hostIP": self.host_ip,
            "hostIPs": [{"ip": self.host_ip}],
            "podIP": self.pod_ip,
            "podIPs": [{"ip": self.pod_ip}],
            "startTime": self.started_at,
            "conditions": [
                _condition("PodReadyToStartContainers", True, at),
                _condition("Initialized", True, at),
                _condition("Ready", ready, at),
                _condition("ContainersReady", ready, at),
                *scheduled,
            ],
            "containerStatuses": statuses,
        }
        await self.api.patch(self.path + "/status", {"metadata": {"uid": self.uid}, "status": status})


def _waiting(reason: str) -> dict[str, Any]:
    return {"state": {"waiting": {"reason": reason}}, "ready": False, "started": False}
