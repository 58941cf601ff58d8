"""What runs in a container on the emulated node: a runner, arcsm's listener, or something that waits.

A container named ``runner`` is a GitHub Actions runner against the fake GitHub (``sim.containers``:
its JIT config from the env, a version from the image tag, exit 7 when outdated, 0 after its job); one
named ``listener`` is arcsm's listener, its config read from the Secret mounted at
``$LISTENER_CONFIG_PATH``, reaching the API server with a token of the pod's service account that the
node asks for (TokenRequest, bound to the pod), as a kubelet projects it. Anything else runs until its pod
is deleted and then exits 143, or exits at once with the code in annotation ``sim.arcsm.io/exit-code``.

The node reads what a container needs (Secrets) through the API, as the node it stands for would.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim import containers, podlogs, runtimes
from sim.github.fake import GitHubFake
from sim.node.kubeapi import ApiError, KubeApi

log = logging.getLogger("arcsm.sim.node")

TOKEN_SECONDS = 3600


@dataclass
class Container:
    """One run of a container: its pod (as bound), its spec entry, where it prints and when it must stop."""

    api: KubeApi
    pod: dict[str, Any]
    spec: dict[str, Any]
    stopping: asyncio.Event
    log_path: Path | None
    pod_ip: str

    @property
    def namespace(self) -> str:
        return str(self.pod["metadata"]["namespace"])

    @property
    def pod_name(self) -> str:
        return str(self.pod["metadata"]["name"])

    def print(self, *lines: str) -> None:
        if self.log_path is None:
            return
        writer = podlogs.LogWriter(self.log_path, "stdout")
        for line in lines:
            writer.write(line.encode() + b"\n")

    async def secret_value(self, ref: containers.SecretKey) -> bytes | None:
        """A Secret's value, read through the API as the node is allowed to (Node authorizer)."""
        try:
            secret = await self.api.get(f"/api/v1/namespaces/{self.namespace}/secrets/{ref.name}")
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        return containers.secret_data(secret, ref.key)

    async def env(self, name: str) -> str | None:
        source = containers.env_source(self.spec, name)
        if not isinstance(source, containers.SecretKey):
            return source
        raw = await self.secret_value(source)
        return None if raw is None else raw.decode("utf-8", errors="replace")

    async def mounted_file(self, path: str) -> bytes | None:
        """``path`` in the container when a Secret volume is mounted over it, else None."""
        source = containers.mounted_source(self.pod, self.spec, path)
        return None if source is None else await self.secret_value(source)

    async def service_account_token(self) -> str:
        """A token of the pod's service account bound to the pod, as the kubelet projects one."""
        spec = self.pod.get("spec") or {}
        account = str(spec.get("serviceAccountName") or "default")
        meta = self.pod["metadata"]
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "expirationSeconds": TOKEN_SECONDS,
                "boundObjectRef": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
            },
        }
        answer = await self.api.create(
            f"/api/v1/namespaces/{self.namespace}/serviceaccounts/{account}/token", request
        )
        return str((answer.get("status") or {}).get("token") or "")


Runtime = Callable[[Container], Awaitable[int]]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class Runtimes:
    """Picks what runs a container by its name: the runner, the listener, or a container that waits."""

    def __init__(self, *, github: GitHubFake | None, api_url: str, ca_file: Path | None) -> None:
        self.github = github
        self.api_url = api_url
        self.ca_file = ca_file

    def resolve(self, spec: dict[str, Any]) -> Runtime:
        name = spec.get("name")
        if self.github is not None and name == containers.RUNNER:
            return self.runner
        if name == containers.LISTENER:
            return self.listener
        return waiting

    async def runner(self, c: Container) -> int:
        assert self.github is not None
        return await containers.run_runner(
            self.github,
            where=f"runner pod {c.namespace}/{c.pod_name}",
            jit_config=await c.env(containers.JIT_CONFIG_ENV),
            image=str(c.spec.get("image", "")),
            out=c.print,
            stopping=c.stopping,
            clock=_now,
        )

    async def listener(self, c: Container) -> int:
        from kubernetes_asyncio.client import Configuration

        from actions import listenerconfig

        path = await c.env(listenerconfig.CONFIG_PATH_ENV) or listenerconfig.DEFAULT_PATH
        configuration = Configuration(host=self.api_url)
        if self.ca_file is not None:
            configuration.ssl_ca_cert = str(self.ca_file)
        configuration.api_key = {"BearerToken": await c.service_account_token()}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
        return await containers.run_listener_container(
            where=f"listener pod {c.namespace}/{c.pod_name}",
            path=path,
            content=await c.mounted_file(path),
            kube=configuration,
            pod_name=c.pod_name,
            pod_ip=c.pod_ip,
            out=c.print,
            stopping=c.stopping,
        )


async def waiting(c: Container) -> int:
    """Run until the pod is deleted (143), or exit at once with annotation ``sim.arcsm.io/exit-code``."""
    code = ((c.pod.get("metadata") or {}).get("annotations") or {}).get(runtimes.EXIT_CODE)
    if code is not None:
        return int(code)
    await c.stopping.wait()
    return runtimes.SIGTERM_EXIT
