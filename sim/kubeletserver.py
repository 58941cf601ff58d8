"""The kubelet's own HTTPS endpoint on a real control plane: what kube-apiserver's ``pods/log`` reaches.

kube-apiserver answers ``GET …/pods/NAME/log`` (``kubectl logs``) by checking the pod and container
itself and then proxying to the kubelet of the pod's node: ``https://ADDRESS:PORT/containerLogs/
NAMESPACE/POD/CONTAINER`` with the same query (``follow``, ``previous``, ``tailLines``, ``timestamps``,
``sinceSeconds``, ``limitBytes``), at the Node's ``InternalIP`` and ``daemonEndpoints.kubeletEndpoint``
port. ``KubeletServer`` serves that route from the kubelet's log files, as the emulator's API server
serves ``pods/log`` itself (``sim.podlogs``), reading the pods the kubelet's watch delivered.

It listens on loopback with a serving certificate of the cluster CA and serves only clients with a
certificate of that CA (kube-apiserver's ``--kubelet-client-certificate``), as a kubelet's
``--client-ca-file`` has it. Known limits: no ``exec``, ``attach``, ``portForward``, ``stats`` or
``metrics``; a client's identity is not authorized further (a real kubelet asks SubjectAccessReviews).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from sim import errors, podlogs
from sim.store import Obj, ObjectKey

Pods = Callable[[str, str], Obj | None]  # (namespace, name) -> the pod as the kubelet knows it


class _KnownPods:
    """The pods the kubelet knows, as ``sim.podlogs`` reads objects."""

    def __init__(self, pods: Pods) -> None:
        self.pods = pods

    def get(self, key: ObjectKey, /) -> Obj | None:
        return self.pods(key[2], key[3]) if key[:2] == ("", "pods") else None


class KubeletServer:
    """``/containerLogs/…`` and ``/healthz`` over HTTPS; ``port`` is known once ``start`` returned."""

    def __init__(
        self, pods: Pods, logs_root: Callable[[], Path | None], *, ssl_context: ssl.SSLContext, host: str
    ) -> None:
        self.logs = podlogs.PodLogs(_KnownPods(pods), logs_root)
        self.ssl_context = ssl_context
        self.host = host
        self.port = 0
        self._runner: web.AppRunner | None = None
        app = web.Application()
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._container_logs)
        app.router.add_get("/healthz", self._healthz)
        self.app = app

    async def start(self) -> int:
        self._runner = web.AppRunner(self.app, handle_signals=False, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0, ssl_context=self.ssl_context)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _container_logs(self, request: web.Request) -> web.StreamResponse:
        info = request.match_info
        try:
            return await self.logs.serve(request, info["namespace"], info["pod"], container=info["container"])
        except errors.ApiError as err:
            return web.Response(status=err.code, text=err.message)


def server_context(cert: Path, key: Path, client_ca: Path) -> ssl.SSLContext:
    """Serve with ``cert`` and ``key``; ask every client for a certificate of ``client_ca``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    context.load_verify_locations(cafile=str(client_ca))
    context.verify_mode = ssl.CERT_REQUIRED
    return context
