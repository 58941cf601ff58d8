"""The simulated scheduler (apiserver-semantics.md §5, S59).

``Scheduler`` binds every pod that asks for the default scheduler (``spec.schedulerName`` empty or
``default-scheduler``) and has no ``nodeName`` through ``ApiServer.bind`` to ``NODE``, the one node of the
simulated cluster (served by ``sim.kubelet``); pods for other schedulers stay Pending and unbound.
A pod with PersistentVolumeClaims is bound only once ``sim.volumebinding`` says its claims allow it:
a missing claim leaves it Pending with ``PodScheduled=False`` (Unschedulable), a WaitForFirstConsumer
claim gets the node chosen for it and the pod waits for the claim to be bound; waiting pods are looked
at again whenever claims, volumes or storage classes change. A bound pod gets kube-scheduler's
``Scheduled`` Event ("Successfully assigned NS/POD to NODE", through events.k8s.io/v1).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sim import apiserver, recording, store, volumebinding, workqueue

# One logger for the simulated node's scheduler and kubelet.
log = logging.getLogger("arcsm.sim.kubelet")

NODE = "sim-node-1"
DEFAULT_SCHEDULER = "default-scheduler"
# kube-scheduler's events.k8s.io recorder names its instance after the host it runs on.
SCHEDULER_INSTANCE = f"{DEFAULT_SCHEDULER}-{NODE}"
TERMINAL = ("Succeeded", "Failed")


def _spec(pod: store.Obj) -> dict[str, Any]:
    spec = pod.get("spec")
    return spec if isinstance(spec, dict) else {}


def _phase(pod: store.Obj) -> str:
    status = pod.get("status")
    return str(status.get("phase") or "") if isinstance(status, dict) else ""


def schedulable(pod: store.Obj, node: str = NODE) -> bool:
    spec = _spec(pod)
    return (
        not spec.get("nodeName")
        and (spec.get("schedulerName") or DEFAULT_SCHEDULER) == DEFAULT_SCHEDULER
        and not workqueue.meta(pod).get("deletionTimestamp")
        and _phase(pod) not in TERMINAL
    )


class Scheduler(workqueue.QueueController[store.ObjectKey]):
    """Binds default-scheduler pods to ``node`` after ``delay`` seconds (run as a world controller)."""

    logger = log
    what = "scheduler: binding"

    def __init__(self, *, node: str = NODE, delay: float = 0.0) -> None:
        super().__init__()
        self.node = node
        self.delay = delay
        self._blocked: set[store.ObjectKey] = set()  # pods waiting on their volumes

    def on_event(self, event: store.Event) -> None:
        if event.key[:2] == ("", "pods") and event.type == "DELETED":
            self._blocked.discard(event.key)
        elif event.key[:2] == ("", "pods") and schedulable(event.obj):
            self._queue.add(event.key)
        elif event.key[:2] in volumebinding.WATCHED:
            for key in self._blocked:
                self._queue.add(key)

    def seed(self, api: apiserver.ApiServer) -> None:
        for pod in api.store.items(("", "pods")):
            if schedulable(pod):
                self._queue.add(("", "pods", workqueue.meta(pod)["namespace"], workqueue.meta(pod)["name"]))

    async def pause(self, key: store.ObjectKey) -> None:
        if self.delay > 0:
            await asyncio.sleep(self.delay)

    def handle(self, api: apiserver.ApiServer, key: store.ObjectKey) -> None:
        pod = api.store.get(key)
        self._blocked.discard(key)
        if pod is None or not schedulable(pod):
            return
        verdict = volumebinding.check(api, pod, self.node)
        if not verdict.bind:
            self._blocked.add(key)
            if verdict.unschedulable:
                volumebinding.report_unschedulable(api, pod, verdict.unschedulable)
            return
        m = workqueue.meta(pod)
        api.bind(
            key[2],
            key[3],
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": self.node},
            },
        )
        recording.record_v1(
            api,
            pod,
            recording.NORMAL,
            "Scheduled",
            f"Successfully assigned {key[2]}/{key[3]} to {self.node}",
            action="Binding",
            controller=DEFAULT_SCHEDULER,
            instance=SCHEDULER_INSTANCE,
        )
