"""The emulated node: registers a Node, renews its Lease, and runs the pods bound to it (``sim.node``).

    agent = NodeAgent(api, runtimes=Runtimes(github=fake, api_url=url, ca_file=ca), logs=directory)
    await agent.start()     # returns once the Node is Ready and schedulable
    ...
    await agent.stop()      # stops its pods' containers as a kubelet shutting down would, not the pods

It lists the pods with ``fieldSelector=spec.nodeName=NODE`` and watches from the list's resourceVersion
(re-listing after a 410 or a dropped watch): a new pod gets a ``pods.PodRun``; a pod with a
``deletionTimestamp`` is stopped within its ``deletionGracePeriodSeconds``; a pod that is gone takes its
containers with it. The Lease is renewed every ``renew_seconds`` (10 s, the kubelet's default for a 40 s
lease), so kube-controller-manager's node lifecycle controller keeps the node Ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from sim import podaddresses
from sim.node import pods
from sim.node.containers import Runtimes
from sim.node.kubeapi import ApiError, KubeApi

log = logging.getLogger("arcsm.sim.node")

NODE = "arcsm-node-1"
LEASE_SECONDS = 40
VERSION = "v1.34.4"
CAPACITY = {"cpu": "64", "memory": "256Gi", "pods": "1000", "ephemeral-storage": "500Gi"}


class NodeAgent:
    def __init__(
        self,
        api: KubeApi,
        *,
        runtimes: Runtimes,
        logs: Path,
        name: str = NODE,
        host_ip: str = "127.0.0.1",
        renew_seconds: float = 10.0,
        kubelet_version: str = VERSION,
    ) -> None:
        self.api = api
        self.runtimes = runtimes
        self.logs = logs
        self.name = name
        self.host_ip = host_ip
        self.renew_seconds = renew_seconds
        self.kubelet_version = kubelet_version
        self.runs: dict[str, pods.PodRun] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._loops: list[asyncio.Task[None]] = []

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self, timeout: float = 60.0) -> NodeAgent:
        await self._register()
        await self._renew()
        self._loops = [
            asyncio.create_task(self._lease_loop(), name=f"node {self.name}: lease"),
            asyncio.create_task(self._pod_loop(), name=f"node {self.name}: pods"),
        ]
        async with asyncio.timeout(timeout):
            while True:  # the node lifecycle controller lifts the not-ready taint within seconds
                if await self.schedulable():
                    return self
                await asyncio.sleep(0.2)

    async def stop(self) -> None:
        for task in self._loops:
            task.cancel()
        for run in self.runs.values():
            run.delete(0)
        tasks = [*self._loops, *self._tasks.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._loops.clear()
        self._tasks.clear()

    async def schedulable(self) -> bool:
        """Whether the Node is Ready and carries no taint (the not-ready taint goes once it is Ready)."""
        node = await self.api.get(f"/api/v1/nodes/{self.name}")
        conditions = (node.get("status") or {}).get("conditions") or []
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        return ready and not (node.get("spec") or {}).get("taints")

    # -- the Node and its Lease -------------------------------------------------------------------------

    async def _register(self) -> None:
        labels = {
            "kubernetes.io/hostname": self.name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "beta.kubernetes.io/arch": "amd64",
        }
        body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": self.name, "labels": labels}}
        try:
            await self.api.create("/api/v1/nodes", body)
        except ApiError as exc:
            if exc.status != 409:
                raise
        await self._report_status()

    async def _report_status(self) -> None:
        at = pods.now()

        def condition(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
            return {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastHeartbeatTime": at,
                "lastTransitionTime": at,
            }

        status = {
            "capacity": CAPACITY,
            "allocatable": CAPACITY,
            "addresses": [
                {"type": "InternalIP", "address": self.host_ip},
                {"type": "Hostname", "address": self.name},
            ],
            "conditions": [
                condition(
                    "MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory"
                ),
                condition(
                    "DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"
                ),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "nodeInfo": {
                "kubeletVersion": self.kubelet_version,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "containerRuntimeVersion": "arcsm://1.0",
                "osImage": "arcsm emulated node",
                "kernelVersion": "",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
        }
        await self.api.patch(f"/api/v1/nodes/{self.name}/status", {"status": status})

    async def _renew(self) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{self.name}"
        spec = {
            "holderIdentity": self.name,
            "leaseDurationSeconds": LEASE_SECONDS,
            "renewTime": pods.now_micro(),
        }
        try:
            await self.api.patch(path, {"spec": spec})
        except ApiError as exc:
            if exc.status != 404:
                raise
            node = await self.api.get(f"/api/v1/nodes/{self.name}")
            owner = {"apiVersion": "v1", "kind": "Node", "name": self.name, "uid": node["metadata"]["uid"]}
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": "kube-node-lease", "ownerReferences": [owner]},
                "spec": spec,
            }
            await self.api.create("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", body)

    async def _lease_loop(self) -> None:
        while True:
            await asyncio.sleep(self.renew_seconds)
            try:
                await self._renew()
            except (ApiError, OSError) as exc:  # the API server restarting: renew on the next beat
                log.warning("node %s: renewing its lease failed: %s", self.name, exc)

    # -- the pods bound here ---------------------------------------------------------------------------

    async def _pod_loop(self) -> None:
        selector = {"fieldSelector": f"spec.nodeName={self.name}"}
        while True:
            try:
                listed = await self.api.get("/api/v1/pods", selector)
                seen = set()
                for pod in listed.get("items") or []:
                    seen.add(pod["metadata"]["uid"])
                    self._dispatch("ADDED", pod)
                for uid in set(self.runs) - seen:
                    self._gone(uid)
                version = str(listed["metadata"]["resourceVersion"])
                while True:
                    async for event in self.api.watch(
                        "/api/v1/pods", {**selector, "resourceVersion": version}
                    ):
                        obj = event.get("object") or {}
                        if event.get("type") == "ERROR":
                            raise ApiError("WATCH", "/api/v1/pods", int(obj.get("code") or 500), obj)
                        version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                        if event.get("type") != "BOOKMARK":
                            self._dispatch(str(event.get("type")), obj)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a kubelet keeps watching whatever went wrong
                log.debug("node %s: pod watch ended (%s); listing again", self.name, exc)
                await asyncio.sleep(0.5)

    def _dispatch(self, kind: str, pod: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if kind == "DELETED":
            self._gone(uid)
            return
        run = self.runs.get(uid)
        if run is None:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                if meta.get("deletionTimestamp"):
                    self._start(pod, finished=True)
                return
            run = self._start(pod)
        run.pod = {**run.pod, "status": pod.get("status") or {}}
        if meta.get("deletionTimestamp"):
            run.delete(float(meta.get("deletionGracePeriodSeconds") or 0))

    def _start(self, pod: dict[str, Any], *, finished: bool = False) -> pods.PodRun:
        run = pods.PodRun(
            self.api,
            pod,
            runtimes=self.runtimes,
            host_ip=self.host_ip,
            pod_ip=podaddresses.allocate(),
            logs=self.logs,
        )
        uid = run.uid
        self.runs[uid] = run
        work = run.finish() if finished else run.run()
        task = asyncio.create_task(work, name=f"pod {run.namespace}/{run.name}")
        self._tasks[uid] = task
        task.add_done_callback(lambda t: self._ended(uid, t))
        return run

    def _ended(self, uid: str, task: asyncio.Task[None]) -> None:
        self._tasks.pop(uid, None)
        if not task.cancelled() and task.exception() is not None:
            log.warning("node %s: pod %s failed: %s", self.name, uid, task.exception())

    def _gone(self, uid: str) -> None:
        self.runs.pop(uid, None)
        task = self._tasks.pop(uid, None)
        if task is not None:
            task.cancel()
