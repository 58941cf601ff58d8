"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager, kube-scheduler.

``ControlPlane`` starts the binaries ``sim.controlplane.build`` made, each on free loopback ports, in the
order a cluster needs them::

    async with ControlPlane(bin_dir, crds=load_crds()) as cluster:
        cluster.write_kubeconfig(path)        # the admin's kubeconfig (client certificate, cluster CA)
        config = cluster.configuration()     # the same as a kubernetes_asyncio Configuration

1. etcd, a throwaway member (``--unsafe-no-fsync``), ready when ``/health`` says so;
2. kube-apiserver with secure serving only, its own CA (``sim.controlplane.pki``), client-certificate
   authentication, RBAC, the default admission plugins and OwnerReferencesPermissionEnforcement,
   service-account tokens signed with a key of the test world and an audit log at the Metadata level
   (``audit_log``, read by ``sim.controlplane.auditing``); ready when ``/readyz`` answers ``ok``;
3. the CRDs given, installed and Established, and the namespaces given, before
4. kube-controller-manager (every default controller, among them the garbage collector, namespace,
   Deployment/ReplicaSet/StatefulSet, ServiceAccount and token controllers) and kube-scheduler, each
   ready on its ``/healthz``. Installing the CRDs first spares the garbage collector's 30 s rediscovery.

The components' flags are envtest's and kwok's, with what a cluster that runs pods needs on top.
``stop()`` ends each process by its own pid (SIGTERM, then SIGKILL), newest first; its logs stay in
``log_dir`` (``<component>.log``), which a failed test prints the tail of (``tail(component)``). Every
process is told to die with its parent, so a killed test run leaves none behind.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import aiohttp
import yaml

from sim.controlplane import auditing, pki

HOST = "127.0.0.1"
START_TIMEOUT = 120.0  # per component; a busy 2-core machine takes tens of seconds for kube-apiserver
SERVICE_CIDR = "10.0.0.0/24"
CLUSTER_CIDR = "10.244.0.0/16"


class ControlPlaneError(Exception):
    """A component did not start; the message says which and ends with its last log line."""


class PortTaken(ControlPlaneError):
    """A component exited because a port picked free for it was taken before it bound it."""


# How often a component is started again on other free ports when one it was given was taken first: a
# port free when picked may be another process's (an outgoing connection's local port) by the time the
# component binds it, the more often the busier the machine.
BIND_ATTEMPTS = 3


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # PR_SET_PDEATHSIG: the kernel sends SIGKILL to this process when the one that started it exits.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    os.setpgrp()


class Component:
    """One running binary: its process, its log file, and how to ask whether it is up.

    The process is a plain ``subprocess.Popen``, bound to no event loop: a control plane started on one
    loop (a spare started ahead in a thread of its own) is used, restarted and stopped from another."""

    def __init__(
        self, name: str, process: subprocess.Popen[bytes], log: Path, args: tuple[str, ...] = ()
    ) -> None:
        self.name = name
        self.process = process
        self.log = log
        self.args = args  # what it was started with, to start it again the same way

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    def tail(self, lines: int = 20) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    async def wait(self, timeout: float | None = None) -> int:
        """The exit status, once the process has exited (``TimeoutError`` after ``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.process.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} still runs")
            await asyncio.sleep(0.02)
        return code

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    async def stop(self, grace: float = 10.0) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            await self.wait(grace)
        except TimeoutError:
            self.kill()
            await self.wait()


class ControlPlane:
    """etcd, kube-apiserver, kube-controller-manager and kube-scheduler from ``bin_dir`` on loopback."""

    def __init__(
        self,
        bin_dir: Path,
        *,
        crds: Iterable[Mapping[str, Any]] = (),
        namespaces: tuple[str, ...] = ("arc-systems",),
        state_dir: Path | None = None,
        node_names: tuple[str, ...] = (),
        controller_manager: bool = True,
        scheduler: bool = True,
    ) -> None:
        self.bin_dir = bin_dir
        self.crds = [dict(c) for c in crds]
        self.namespaces = namespaces
        self._state_dir = state_dir
        self._owns_state_dir = state_dir is None
        self.node_names = node_names
        self.with_controller_manager = controller_manager
        self.with_scheduler = scheduler
        self.components: dict[str, Component] = {}
        self.files: pki.Files | None = None
        self.port = 0
        self.url = ""
        self.etcd_url = ""

    # -- where things are ----------------------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        if self._state_dir is None:
            self._state_dir = Path(tempfile.mkdtemp(prefix="arcsm-controlplane-"))
        return self._state_dir

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def audit_log(self) -> Path:
        """kube-apiserver's audit log (``sim.controlplane.auditing``): one JSON line a request."""
        return self.log_dir / "audit.log"

    def _audit_policy(self) -> Path:
        path = self.state_dir / "audit-policy.yaml"
        path.write_text(auditing.POLICY)
        return path

    @property
    def keys(self) -> pki.Files:
        if self.files is None:
            raise RuntimeError("the control plane has not been started")
        return self.files

    @property
    def ca_file(self) -> Path:
        return self.keys.ca

    @property
    def started(self) -> bool:
        return bool(self.components)

    def tail(self, component: str, lines: int = 20) -> str:
        found = self.components.get(component)
        return found.tail(lines) if found is not None else ""

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self) -> ControlPlane:
        try:
            await self._start()
        except BaseException:
            await self.stop(keep_state=True)
            raise
        return self

    async def _start(self) -> None:
        identities = (
            pki.ADMIN,
            pki.CONTROLLER_MANAGER,
            pki.SCHEDULER,
            pki.KUBELET_CLIENT,
            *map(pki.node, self.node_names),
        )
        self.files = pki.write(self.state_dir / "pki", identities)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        # etcd is started again on an empty data directory: the one it left was made for other ports.
        await self._on_free_ports(
            self._start_etcd, then=lambda: shutil.rmtree(self.state_dir / "etcd", ignore_errors=True)
        )
        await self._on_free_ports(self._start_apiserver)
        await self._install(self.crds, self.namespaces)
        if self.with_controller_manager:
            await self._on_free_ports(self._start_controller_manager)
        if self.with_scheduler:
            await self._on_free_ports(self._start_scheduler)

    @staticmethod
    async def _on_free_ports(
        start: Callable[[], Awaitable[None]], then: Callable[[], object] = lambda: None
    ) -> None:
        """``start`` a component, again on other free ports (after ``then``) while one it was given is
        taken first."""
        for attempt in range(1, BIND_ATTEMPTS + 1):
            try:
                await start()
                return
            except PortTaken:
                if attempt == BIND_ATTEMPTS:
                    raise
                then()

    async def stop(self, *, keep_state: bool = False) -> None:
        for component in reversed(list(self.components.values())):
            await component.stop()
        if self._owns_state_dir and self._state_dir is not None and not keep_state:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            self._state_dir = None

    async def __aenter__(self) -> ControlPlane:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # A failed block keeps the state directory, logs and all, for whoever reads the failure.
        await self.stop(keep_state=exc_type is not None)

    def _spawn(self, name: str, *args: str) -> Component:
        log = self.log_dir / f"{name}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(
                [str(self.bin_dir / name), *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                preexec_fn=_die_with_parent,
            )
        component = Component(name, process, log, args)
        self.components[name] = component
        return component

    # -- faults a test world plays -------------------------------------------------------------------

    async def restart_apiserver(
        self,
        *,
        down: float = 0.0,
        abrupt: bool = False,
        until: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        """Stop kube-apiserver (SIGKILL with ``abrupt``, else SIGTERM and its graceful shutdown), leave it
        down ``down`` seconds and until ``until`` returns, and start it again on the same port and etcd;
        returns once it is ready.

        Every watch and connection of every client breaks, as when a control plane node restarts."""
        apiserver = self.components["kube-apiserver"]
        if abrupt:
            apiserver.kill()
            await apiserver.wait()
        else:
            await apiserver.stop()
        if down > 0:
            await asyncio.sleep(down)  # the outage lasts this long; nothing is waited for
        if until is not None:
            await until()
        restarted = self._spawn("kube-apiserver", *apiserver.args)
        await self._wait_ready(restarted, f"{self.url}/readyz", client=pki.ADMIN)
        # Ready is not yet serving every resource: a custom resource's storage answers 429 "storage is
        # (re)initializing" for a while after /readyz says ok. Return once each CRD's list answers.
        for crd in self.crds:
            spec = crd["spec"]
            version = next(v["name"] for v in spec["versions"] if v.get("served", True))
            path = f"/apis/{spec['group']}/{version}/{spec['names']['plural']}?limit=1"
            await self._wait_ready(restarted, self.url + path, client=pki.ADMIN)

    async def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (as kube-apiserver does every 5 minutes);
        returns that revision. Watches resumed from before it after kube-apiserver restarts answer 410."""
        async with aiohttp.ClientSession(base_url=self.etcd_url) as session:
            async with session.post("/v3/kv/range", json={"key": "Lw=="}) as r:  # any key: "/"
                revision = int((await r.json())["header"]["revision"])
            async with session.post("/v3/kv/compaction", json={"revision": revision, "physical": True}) as r:
                r.raise_for_status()
        return revision

    async def _wait_ready(self, component: Component, url: str, *, client: pki.Identity | None) -> None:
        # kube-apiserver is verified with the cluster CA; the others serve a self-signed certificate.
        context = self._client_context(client) if client is not None else None
        deadline = time.monotonic() + START_TIMEOUT
        last = ""
        async with aiohttp.ClientSession() as session:
            while True:
                if component.returncode is not None:
                    error = PortTaken if "address already in use" in component.tail() else ControlPlaneError
                    raise error(
                        f"{component.name} exited with status {component.returncode}: "
                        f"{component.tail(1) or 'no output'} (log: {component.log})"
                    )
                try:
                    async with session.get(url, ssl=context or False, timeout=aiohttp.ClientTimeout(5)) as r:
                        body = await r.text()
                        if r.status == 200:
                            return
                        last = f"{r.status} {body.splitlines()[-1] if body else ''}"
                except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                    last = str(exc) or type(exc).__name__
                if time.monotonic() > deadline:
                    raise ControlPlaneError(
                        f"{component.name} was not ready within {START_TIMEOUT:.0f} s ({url}: {last}; "
                        f"log: {component.log})"
                    )
                await asyncio.sleep(0.2)

    def _client_context(self, identity: pki.Identity | None) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.keys.ca))
        if identity is not None:
            cert, key = self.keys.client(identity)
            context.load_cert_chain(str(cert), str(key))
        return context

    # -- the components ------------------------------------------------------------------------------

    async def _start_etcd(self) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://{HOST}:{client}"
        etcd = self._spawn(
            "etcd",
            "--name=arcsm",
            f"--data-dir={self.state_dir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls=http://{HOST}:{peer}",
            f"--initial-advertise-peer-urls=http://{HOST}:{peer}",
            f"--initial-cluster=arcsm=http://{HOST}:{peer}",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        )
        await self._wait_ready(etcd, f"{self.etcd_url}/health", client=None)

    async def _start_apiserver(self) -> None:
        files = self.keys
        self.port = free_port()
        self.url = f"https://{HOST}:{self.port}"
        apiserver = self._spawn(
            "kube-apiserver",
            f"--etcd-servers={self.etcd_url}",
            f"--bind-address={HOST}",
            f"--advertise-address={HOST}",
            f"--secure-port={self.port}",
            f"--tls-cert-file={files.serving_cert}",
            f"--tls-private-key-file={files.serving_key}",
            f"--client-ca-file={files.ca}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=Node,RBAC",
            # Beside the default plugins, the one some distributions run (OpenShift): setting
            # blockOwnerDeletion needs update on the owner's finalizers, so a chart missing that grant
            # is refused here as it would be there.
            "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
            "--allow-privileged=true",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={files.service_account_pub}",
            f"--service-account-signing-key-file={files.service_account_key}",
            "--endpoint-reconciler-type=none",
            # pods/log is proxied to the node's kubelet endpoint at its InternalIP (loopback here),
            # with a client certificate the kubelet asks for (sim.kubeletserver).
            "--kubelet-preferred-address-types=InternalIP",
            f"--kubelet-client-certificate={files.client(pki.KUBELET_CLIENT)[0]}",
            f"--kubelet-client-key={files.client(pki.KUBELET_CLIENT)[1]}",
            "--profiling=false",
            f"--cert-dir={self.state_dir / 'apiserver-certs'}",
            # Who asked what and its answer, one line a request (sim.controlplane.auditing).
            f"--audit-policy-file={self._audit_policy()}",
            f"--audit-log-path={self.audit_log}",
        )
        await self._wait_ready(apiserver, f"{self.url}/readyz", client=pki.ADMIN)

    async def _start_controller_manager(self) -> None:
        files = self.keys
        await self._start_client_component(
            "kube-controller-manager",
            pki.CONTROLLER_MANAGER,
            "--controllers=*",
            f"--service-account-private-key-file={files.service_account_key}",
            f"--root-ca-file={files.ca}",
            "--use-service-account-credentials=true",
            f"--cluster-cidr={CLUSTER_CIDR}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--node-monitor-grace-period=3m20s",
        )

    async def _start_scheduler(self) -> None:
        await self._start_client_component("kube-scheduler", pki.SCHEDULER)

    async def _start_client_component(self, name: str, identity: pki.Identity, *flags: str) -> None:
        """kube-controller-manager or kube-scheduler: a client of the API server as ``identity``, serving
        its health on a free port of its own; ready when ``/healthz`` answers."""
        kubeconfig = self._component_kubeconfig(name, identity)
        port = free_port()
        component = self._spawn(
            name,
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--authentication-skip-lookup=true",  # no front proxy: no request-header CA to look up
            "--leader-elect=false",
            f"--bind-address={HOST}",
            f"--secure-port={port}",
            "--kube-api-qps=1000",
            "--kube-api-burst=2000",
            f"--cert-dir={self.state_dir / (name + '-certs')}",
            *flags,
        )
        await self._wait_ready(component, f"https://{HOST}:{port}/healthz", client=None)

    # -- what the cluster holds at start -------------------------------------------------------------

    async def _install(self, crds: list[dict[str, Any]], namespaces: tuple[str, ...]) -> None:
        context = self._client_context(pki.ADMIN)
        async with aiohttp.ClientSession(base_url=self.url) as session:
            for crd in crds:
                async with session.post(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd, ssl=context
                ) as r:
                    if r.status not in (200, 201):
                        raise ControlPlaneError(
                            f"installing CRD {crd['metadata']['name']}: {r.status} {await r.text()}"
                        )
            for name in namespaces:
                body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                async with session.post("/api/v1/namespaces", json=body, ssl=context) as r:
                    if r.status not in (200, 201, 409):
                        raise ControlPlaneError(f"creating namespace {name}: {r.status} {await r.text()}")
            deadline = time.monotonic() + START_TIMEOUT
            for crd in crds:
                path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
                while not await _established(session, path, context):
                    if time.monotonic() > deadline:
                        raise ControlPlaneError(f"CRD {crd['metadata']['name']} was not Established")
                    await asyncio.sleep(0.1)

    # -- clients -------------------------------------------------------------------------------------

    def kubeconfig(
        self, *, identity: pki.Identity = pki.ADMIN, namespace: str = "default", embed: bool = True
    ) -> dict[str, Any]:
        """A kubeconfig for ``identity`` (the admin by default), the certificates embedded or by path."""
        files = self.keys
        cert, key = files.client(identity)
        if embed:
            cluster: dict[str, Any] = {"certificate-authority-data": _b64(files.ca)}
            user: dict[str, Any] = {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)}
        else:
            cluster = {"certificate-authority": str(files.ca)}
            user = {"client-certificate": str(cert), "client-key": str(key)}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "arcsm-real", "cluster": {"server": self.url, **cluster}}],
            "users": [{"name": identity.user, "user": user}],
            "contexts": [
                {
                    "name": "arcsm-real",
                    "context": {"cluster": "arcsm-real", "user": identity.user, "namespace": namespace},
                }
            ],
            "current-context": "arcsm-real",
            "preferences": {},
        }

    def write_kubeconfig(
        self, path: Path, *, identity: pki.Identity = pki.ADMIN, namespace: str = "default"
    ) -> Path:
        path.write_text(
            yaml.safe_dump(self.kubeconfig(identity=identity, namespace=namespace), sort_keys=False)
        )
        path.chmod(0o600)
        return path

    def _component_kubeconfig(self, name: str, identity: pki.Identity) -> Path:
        path = self.state_dir / f"{name}.kubeconfig"
        path.write_text(yaml.safe_dump(self.kubeconfig(identity=identity, embed=False), sort_keys=False))
        return path

    def configuration(self, identity: pki.Identity = pki.ADMIN) -> Any:
        """A kubernetes_asyncio ``Configuration`` authenticating as ``identity`` (imported lazily)."""
        from kubernetes_asyncio.client import Configuration

        files = self.keys
        cert, key = files.client(identity)
        config = Configuration(host=self.url)
        config.ssl_ca_cert = str(files.ca)
        config.cert_file = str(cert)
        config.key_file = str(key)
        return config


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


async def _established(session: aiohttp.ClientSession, path: str, context: ssl.SSLContext) -> bool:
    async with session.get(path, ssl=context) as r:
        if r.status != 200:
            return False
        body = await r.json()
    conditions = (body.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)
