"""The kubelet's Events about a pod (``Unhealthy``, ``Killing``, ``FailedMount``, ``Failed``, ...), as
client-go's event recorder writes them: a core/v1 Event named ``POD.<hex nanoseconds>`` in the pod's
namespace, ``involvedObject`` the pod (with ``fieldPath: spec.containers{NAME}`` for a container's),
``source`` {component kubelet, host the node}; the same event again increments ``count`` and
``lastTimestamp`` of the first instead of writing a new one (the recorder's aggregation, simplified to
identical events).

The container lifecycle's messages are kubelet's (``kuberuntime_container.go``, ``image_manager.go``):
``pulls`` for the image of a container about to start, ``CREATED``/``STARTED`` once it runs and
``STOPPING`` when the pod's deletion stops it. The node holds every image, so an image is pulled only
when its ``imagePullPolicy`` is ``Always``, and such a pull takes no time and reports size 0.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sim import errors
from sim.nodeapi import NodeApi
from sim.store import Obj
from sim.timestamps import format_time

log = logging.getLogger("arcsm.sim.kubelet")

COMPONENT = "kubelet"

CREATED = ("Created", "Created container: {name}")
STARTED = ("Started", "Started container {name}")
STOPPING = ("Killing", "Stopping container {name}")


def pulls(container: dict[str, Any]) -> list[tuple[str, str]]:
    """(reason, message) of the image events before ``container`` starts, as a node with every image."""
    image = str(container.get("image", ""))
    if container.get("imagePullPolicy") == "Always":
        return [
            ("Pulling", f'Pulling image "{image}"'),
            (
                "Pulled",
                f'Successfully pulled image "{image}" in 0s (0s including waiting). Image size: 0 bytes.',
            ),
        ]
    return [("Pulled", f'Container image "{image}" already present on machine')]


class Recorder:
    """Records the Events of one node's kubelet through its node API (``sim.nodeapi``)."""

    def __init__(self, api: NodeApi, *, host: str) -> None:
        self.api = api
        self.host = host
        self._seen: dict[tuple[str, str, str, str], tuple[str, int]] = {}

    async def record(
        self, pod: Obj, reason: str, message: str, *, warning: bool = False, container: str = ""
    ) -> None:
        meta = pod.get("metadata") or {}
        namespace, uid = str(meta.get("namespace", "")), str(meta.get("uid", ""))
        field_path = f"spec.containers{{{container}}}" if container else ""
        key = (uid, field_path, reason, message)
        now = format_time(self.api.clock())
        try:
            if key in self._seen:
                name, count = self._seen[key]
                patch = {"count": count + 1, "lastTimestamp": now}
                await self.api.patch_event(namespace, name, patch)
                self._seen[key] = (name, count + 1)
                return
        except errors.ApiError as err:
            if err.code != 404:
                log.info("kubelet: could not update event %s: %s", reason, err.message)
                return
        involved: dict[str, Any] = {
            "kind": "Pod",
            "namespace": namespace,
            "name": meta.get("name", ""),
            "uid": uid,
            "apiVersion": "v1",
        }
        if field_path:
            involved["fieldPath"] = field_path
        name = f"{meta.get('name', '')}.{time.time_ns():x}"
        body = {
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": {"component": COMPONENT, "host": self.host},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": "Warning" if warning else "Normal",
            "eventTime": None,
            "reportingComponent": COMPONENT,
            "reportingInstance": self.host,
        }
        try:
            await self.api.create_event(namespace, body)
        except errors.ApiError as err:
            log.info("kubelet: could not record event %s: %s", reason, err.message)
            return
        self._seen[key] = (name, 1)

    def forget(self, uid: str) -> None:
        """The pod is gone: drop what was recorded about it."""
        for key in [k for k in self._seen if k[0] == uid]:
            del self._seen[key]
