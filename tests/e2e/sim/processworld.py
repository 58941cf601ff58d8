"""A world whose kubelet runs a test image as real processes, shared by the process-container tests.

``process_world()`` is the default world (whose kubelet gives pods loopback addresses, ``127.244.x.y``, so
the test and the kubelet's probes reach a process container on its pod IP) with the test image
registered. ``register(world)`` registers the image ``testimg``:
this interpreter running ``SERVER``, a small HTTP server on the port given as its argument that tells
the test what it sees (``/env``, ``/file?path=``, ``/write?path=``, ``/kube``: kubernetes_asyncio's
in-cluster config listing pods and secrets), answers ``/readyz`` and ``/healthz`` as the test sets them
(``/ready``, ``/unready``, ``/sicken``), prints to stdout and stderr, and on SIGTERM prints a line and
exits with ``$EXIT_ON_TERM`` (or ignores it when ``IGNORE_SIGTERM=1``).

``MOUNTS_ALLOWED`` (``sim.processes.mounts_allowed``) says whether this machine lets a process have a
private mount namespace (root or CAP_SYS_ADMIN); the tests that need one skip without it.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client

from sim import processes
from sim.world import World
from tests.helpers import eventually

NS = "default"
IMAGE = "testimg"

SERVER = r"""
import http.server, json, os, signal, sys, urllib.parse

state = {"ready": False, "healthy": True}
print("serving on port", sys.argv[1], flush=True)
print("a line on stderr", file=sys.stderr, flush=True)


def on_term(signum, frame):
    if os.environ.get("IGNORE_SIGTERM") == "1":
        print("ignoring SIGTERM", flush=True)
        return
    print("terminating on SIGTERM", flush=True)
    os._exit(int(os.environ.get("EXIT_ON_TERM", "0")))


signal.signal(signal.SIGTERM, on_term)


def kube():
    import asyncio
    from kubernetes_asyncio import client, config

    async def run():
        config.load_incluster_config()
        out = {"host": client.Configuration.get_default_copy().host}
        async with client.ApiClient() as api:
            core = client.CoreV1Api(api)
            for what, call in (("pods", core.list_namespaced_pod), ("secrets", core.list_namespaced_secret)):
                try:
                    await call(os.environ["POD_NAMESPACE"])
                    out[what] = [200, ""]
                except client.ApiException as exc:
                    out[what] = [exc.status, json.loads(exc.body)["message"]]
        return out

    return asyncio.run(run())


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        code, body = 200, b"ok"
        if url.path == "/env":
            body = json.dumps(dict(os.environ)).encode()
        elif url.path == "/file":
            try:
                with open(q["path"]) as f:
                    content = f.read()
                mode = os.stat(q["path"]).st_mode & 0o777
                body = json.dumps({"content": content, "mode": mode}).encode()
            except OSError as exc:
                code, body = 404, str(exc.strerror).encode()
        elif url.path == "/write":
            try:
                with open(q["path"], "w") as f:
                    f.write("written in the pod")
            except OSError as exc:
                code, body = 500, str(exc.strerror).encode()
        elif url.path == "/kube":
            body = json.dumps(kube()).encode()
        elif url.path == "/readyz":
            code = 200 if state["ready"] else 503
        elif url.path == "/healthz":
            code = 200 if state["healthy"] else 500
        elif url.path in ("/ready", "/unready"):
            state["ready"] = url.path == "/ready"
        elif url.path == "/sicken":
            state["healthy"] = False
        else:
            code = 404
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), Handler).serve_forever()
"""


MOUNTS_ALLOWED = processes.mounts_allowed()
needs_mounts = pytest.mark.skipif(
    not MOUNTS_ALLOWED, reason="this machine gives no private mount namespace (needs root or CAP_SYS_ADMIN)"
)


def image(**overrides: Any) -> processes.Image:
    fields: dict[str, Any] = {"entrypoint": (sys.executable, "-c", SERVER), "env": {"PATH": "/usr/bin:/bin"}}
    fields.update(overrides)
    return processes.Image(**fields)


def register(world: World) -> None:
    world.kubelet.runtimes.register_image(IMAGE, processes.ProcessRuntime(image()))


@contextlib.asynccontextmanager
async def process_world() -> AsyncIterator[World]:
    """A world with every simulated controller (its kubelet hands out loopback pod addresses, which the
    host reaches) and the test image registered."""
    async with World(seed=1) as world:
        register(world)
        yield world


def server_container(port: int, **fields: Any) -> dict[str, Any]:
    env = [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    return {"name": "main", "image": IMAGE, "args": [str(port)], "env": env, **fields}


def pod_body(name: str, container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [container], **spec}}


async def ask(pod_ip: str, port: int, route: str, **params: str) -> tuple[int, Any]:
    """GET ``route`` of the server in the pod: (status, the JSON answer or its text)."""
    async with httpx.AsyncClient(timeout=30) as http:
        resp = await http.get(f"http://{pod_ip}:{port}{route}", params=params)
    try:
        return resp.status_code, json.loads(resp.text)
    except ValueError:
        return resp.status_code, resp.text


async def running(core: client.CoreV1Api, name: str, *, timeout: float = 30.0) -> Any:
    """The pod once its container runs (its status carries the pod IP)."""

    async def up() -> Any:
        pod = await core.read_namespaced_pod(name, NS)
        statuses = pod.status.container_statuses or []
        return pod if statuses and statuses[0].state.running is not None else None

    return await eventually(up, timeout=timeout, what=f"pod {name} running")


async def serving(core: client.CoreV1Api, name: str, port: int, *, timeout: float = 30.0) -> str:
    """The pod IP once the server in the pod answers."""
    pod = await running(core, name, timeout=timeout)

    async def answers() -> bool:
        try:
            code, _ = await ask(pod.status.pod_ip, port, "/healthz")
        except httpx.HTTPError:
            return False
        return code in (200, 500)

    await eventually(answers, timeout=timeout, what=f"the server of {name} answering")
    return str(pod.status.pod_ip)
