"""Simulated runner and listener containers for the kubelet (``sim.runtimes``), recognised by name.

``register`` installs them on a kubelet's runtime registry for a world with a fake GitHub
(``World(github=True)`` does it):

* a container named ``runner`` is a GitHub Actions runner started from its JIT config: the env
  ``ACTIONS_RUNNER_INPUT_JITCONFIG`` (a value, or a ``secretKeyRef`` read from the Secret as stored, as the
  kubelet would); its version is the image tag (``ghcr.io/actions/actions-runner:2.329.0``; a tag that is
  not a version, such as ``latest``, counts as current). It connects (``GitHubFake.register_runner``); a
  runner older than the service's minimum is refused and **exits 7**, as the real runner does when it
  is outdated; otherwise it waits idle for a job, runs it for ``GitHubSettings.job_seconds``
  (JobStarted, JobCompleted) and **exits 0**. It prints what ``run.sh`` prints (``√ Connected to GitHub``,
  its version, ``Listening for Jobs``, ``Running job: NAME``, ``Job NAME completed with result:
  Succeeded``), which ``kubectl logs`` shows. Deleted while idle it goes offline and exits 143; deleted
  while running, its job fails. A missing or unusable JIT config exits 1.
* a container named ``listener`` is arcsm's own listener (``actions.listener.run_listener``), in
  process: its config is the file at ``$LISTENER_CONFIG_PATH`` (default
  ``/etc/gha-listener/config.json``), read through the pod's volume mounts from the Secret behind them
  (the ``listener-config`` volume of the ``<AL>-config`` Secret, key ``config.json``); it reaches the
  world's API server as the pod's service account (named in an unsigned token, which the emulator serves
  unchecked) and runs until the pod is deleted, then deletes its session and exits 0. A bad config or
  a terminal error exits 1. With a ``metrics_addr`` in its config it serves its metrics (spec §5.5) at
  ``metrics_endpoint`` on that port of its pod's address (``status.podIP``, a loopback address: see
  ``sim.podaddresses``) whatever host the address names, as a pod's own network namespace would have
  it, and stops serving when it exits. When a process container (``sim.processes``, which shares the
  node's network) holds that port on every address, it serves no metrics and says so in a warning.
  A config whose credentials are in Azure Key Vault has them read as the process in the pod would: the
  client certificate at its ``certificate_path`` and the CA bundle its ``SSL_CERT_FILE`` names, both
  through the pod's Secret volumes. Its
  log lines go to the pod's log as ``arcsm listener``'s would (``sim.listenerlogs``).

Nothing here logs a JIT config or a token.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import logging
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim import listenerlogs, runtimes
from sim.github.errors import ServiceError
from sim.github.fake import GitHubFake
from sim.github.records import version_tuple
from sim.store import Obj

log = logging.getLogger("arcsm.sim.containers")

RUNNER = "runner"
LISTENER = "listener"
JIT_CONFIG_ENV = "ACTIONS_RUNNER_INPUT_JITCONFIG"
CURRENT_RUNNER_VERSION = "2.330.0"  # what a non-version image tag (``latest``) stands for, at least
OUTDATED_EXIT = 7
FAILED_EXIT = 1


def register(
    registry: runtimes.Runtimes,
    *,
    github: GitHubFake | None,
    kube_url: Callable[[], str],
    ca_file: Callable[[], Path] | None = None,
) -> None:
    """Run containers named ``runner`` and ``listener`` as the simulated runner (with ``github``) and the
    arcsm listener (see ``SimulatedListener`` for ``ca_file``)."""
    if github is not None:
        registry.register_name(RUNNER, SimulatedRunner(github))
    registry.register_name(LISTENER, SimulatedListener(kube_url, ca_file))


# -- what a container sees: its env and its mounted files ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SecretKey:
    """Where a value a container sees comes from: key ``key`` of Secret ``name`` in the pod's namespace."""

    name: str
    key: str


def secret_data(secret: Obj | None, key: str) -> bytes | None:
    """The decoded value of ``key`` in a Secret as the API serves it; None when absent or not base64."""
    data = secret.get("data") if secret is not None else None
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def env_source(container: Obj, name: str) -> str | SecretKey | None:
    """The container's env var ``name``: its ``value``, or the Secret key its ``valueFrom.secretKeyRef``
    names; None if unset."""
    for entry in container.get("env") or []:
        if not isinstance(entry, dict) or entry.get("name") != name:
            continue
        if "value" in entry:
            return str(entry["value"] or "")
        ref = (entry.get("valueFrom") or {}).get("secretKeyRef") or {}
        return SecretKey(str(ref.get("name", "")), str(ref.get("key", "")))
    return None


def mounted_source(pod: Obj, container: Obj, path: str) -> SecretKey | None:
    """The Secret key a Secret volume mounted over ``path`` in the container shows there, else None."""
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or [] if isinstance(v, dict)}
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        root = str(mount.get("mountPath", "")).rstrip("/")
        if not root or not path.startswith(root + "/"):
            continue
        relative = path[len(root) + 1 :]
        secret: Any = (volumes.get(mount.get("name")) or {}).get("secret")
        if not isinstance(secret, dict):
            continue
        key = relative
        for item in secret.get("items") or []:  # items remap keys to paths
            if isinstance(item, dict) and item.get("path") == relative:
                key = str(item.get("key", ""))
        return SecretKey(str(secret.get("secretName", "")), key)
    return None


def _stored_secret(ctx: runtimes.ContainerContext, ref: SecretKey) -> bytes | None:
    return secret_data(ctx.objects.get(("", "secrets", ctx.namespace, ref.name)), ref.key)


def env_value(ctx: runtimes.ContainerContext, name: str) -> str | None:
    """The container's env var ``name``, a Secret's value read as stored; None if unset."""
    source = env_source(ctx.container, name)
    if not isinstance(source, SecretKey):
        return source
    raw = _stored_secret(ctx, source)
    return None if raw is None else raw.decode("utf-8", errors="replace")


def mounted_file(ctx: runtimes.ContainerContext, path: str) -> bytes | None:
    """The content of ``path`` in the container when a Secret volume is mounted over it, else None."""
    source = mounted_source(ctx.pod, ctx.container, path)
    return None if source is None else _stored_secret(ctx, source)


def image_version(image: str, *, minimum: str) -> str:
    """The runner version an image tag stands for; a tag that is not a version is current."""
    reference = image.split("@", 1)[0]
    tag = reference.rsplit(":", 1)[1] if ":" in reference.rsplit("/", 1)[-1] else ""
    if version_tuple(tag) is not None:
        return tag
    current, least = version_tuple(CURRENT_RUNNER_VERSION), version_tuple(minimum)
    return (
        minimum if least is not None and current is not None and least > current else CURRENT_RUNNER_VERSION
    )


# -- the runner ------------------------------------------------------------------------------------------


def runner_time(ctx: runtimes.ContainerContext) -> str:
    """The runner's timestamp prefix (.NET's universal sortable format)."""
    return _runner_time(ctx.node.clock)


def _runner_time(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


class SimulatedRunner:
    """Prints what ``run.sh`` of an ephemeral runner prints: connected, its version, listening, the job."""

    def __init__(self, github: GitHubFake) -> None:
        self.github = github

    async def __call__(self, ctx: runtimes.ContainerContext) -> int:
        return await run_runner(
            self.github,
            where=f"runner pod {ctx.namespace}/{ctx.pod_name}",
            jit_config=env_value(ctx, JIT_CONFIG_ENV),
            image=str(ctx.container.get("image", "")),
            out=ctx.print,
            stopping=ctx.stopping,
            clock=ctx.node.clock,
        )


async def run_runner(
    github: GitHubFake,
    *,
    where: str,
    jit_config: str | None,
    image: str,
    out: Callable[..., None],
    stopping: asyncio.Event,
    clock: Callable[[], datetime],
) -> int:
    """One ephemeral runner from its JIT config, on any node: ``out`` prints its lines, ``stopping`` is
    SIGTERM; returns its exit code."""
    if not jit_config:
        log.warning("%s: %s is not set; the runner cannot configure itself", where, JIT_CONFIG_ENV)
        out("An error occurred: Not configured. Run config.(sh/cmd) to configure the runner.")
        return FAILED_EXIT
    version = image_version(image, minimum=github.settings.min_runner_version)
    try:
        registration = github.register_runner(jit_config, version)
    except (ValueError, ServiceError) as exc:
        log.warning("%s: the runner could not connect: %s", where, exc)
        out(f"An error occurred: {exc}")
        return FAILED_EXIT
    out("\u221a Connected to GitHub", "", f"Current runner version: '{version}'")
    if not registration.accepted:
        log.info("%s: runner %s %s is outdated; exiting %d", where, registration.name, version, OUTDATED_EXIT)
        out(f"An error occurred: Runner version v{version} is deprecated and cannot receive messages.")
        return OUTDATED_EXIT
    log.debug("%s: runner %s (id %d) is idle", where, registration.name, registration.runner_id)
    out(f"{_runner_time(clock)}: Listening for Jobs")
    job = await github.run_job(
        registration.runner_id,
        stopping=stopping,
        on_start=lambda job: out(f"{_runner_time(clock)}: Running job: {job.display_name}"),
    )
    if stopping.is_set():
        github.disconnect_runner(registration.runner_id)
        return runtimes.SIGTERM_EXIT
    if job is not None:
        log.debug("%s: job %d finished (%s)", where, job.runner_request_id, job.result)
        result = job.result[:1].upper() + job.result[1:]
        out(f"{_runner_time(clock)}: Job {job.display_name} completed with result: {result}")
    return 0


# -- the listener ----------------------------------------------------------------------------------------


class SimulatedListener:
    """arcsm's listener in process. Without ``ca_file`` it reaches the emulator at ``kube_url()`` with an
    unsigned token naming the pod's service account (the emulator's plain HTTP port takes it unchecked);
    with it, over HTTPS verified with that CA, bearing a token of the account bound to the pod that the
    kubelet asks for (TokenRequest), as a projected service-account token is."""

    def __init__(self, kube_url: Callable[[], str], ca_file: Callable[[], Path] | None = None) -> None:
        self.kube_url = kube_url
        self.ca_file = ca_file

    async def __call__(self, ctx: runtimes.ContainerContext) -> int:
        # Imported here: a world without listener pods needs neither the listener nor a client library.
        from kubernetes_asyncio.client import Configuration

        from actions import listenerconfig

        path = env_value(ctx, listenerconfig.CONFIG_PATH_ENV) or listenerconfig.DEFAULT_PATH
        configuration = Configuration(host=self.kube_url())
        account = str((ctx.pod.get("spec") or {}).get("serviceAccountName") or "default")
        token = f"system:serviceaccount:{ctx.namespace}:{account}"
        if self.ca_file is not None:
            configuration.ssl_ca_cert = str(self.ca_file())
            token = await bound_token(ctx, account)
        configuration.api_key = {"BearerToken": token}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
        return await run_listener_container(
            where=f"listener pod {ctx.namespace}/{ctx.pod_name}",
            path=path,
            content=mounted_file(ctx, path),
            kube=configuration,
            pod_name=ctx.pod_name,
            pod_ip=str((ctx.pod.get("status") or {}).get("podIP") or "127.0.0.1"),
            out=ctx.print,
            stopping=ctx.stopping,
            vault=vault_reach(ctx),
        )


def vault_reach(ctx: runtimes.ContainerContext) -> Any:
    """How the container reaches an Azure Key Vault: the CA bundle its ``SSL_CERT_FILE`` names and the
    files (the client certificate), both read through its Secret volumes, as a process in it would."""
    from actions.azurekeyvault import CA_BUNDLE_ENV, Reach

    bundle = env_value(ctx, CA_BUNDLE_ENV)
    return Reach(
        ca_bundle=mounted_file(ctx, bundle) if bundle else None,
        read_file=lambda path: mounted_file(ctx, path),
    )


async def bound_token(ctx: runtimes.ContainerContext, account: str, seconds: int = 3600) -> str:
    """A token of ``account`` bound to the container's pod, asked of the API by the kubelet."""
    meta = ctx.pod.get("metadata") or {}
    ref = {"apiVersion": "v1", "kind": "Pod", "name": meta.get("name"), "uid": meta.get("uid")}
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": seconds, "boundObjectRef": ref},
    }
    answer = await ctx.node.request_token(ctx.namespace, account, request)
    return str((answer.get("status") or {}).get("token") or "")


async def run_listener_container(
    *,
    where: str,
    path: str,
    content: bytes | None,
    kube: Any,
    pod_name: str,
    pod_ip: str,
    out: Callable[..., None],
    stopping: asyncio.Event,
    vault: Any = None,
) -> int:
    """arcsm's listener from the config file ``content`` (at ``path`` in the container), reaching the
    cluster with the kubernetes_asyncio Configuration ``kube`` and a vault with ``vault`` (an
    ``actions.azurekeyvault.Reach``), on any node; returns its exit code."""
    from actions import errors, listenerconfig
    from actions.listener import run_listener

    if content is None:
        log.warning("%s: no config at %s (mount the listener config Secret there)", where, path)
        return FAILED_EXIT
    try:
        config = listenerconfig.parse(content.decode("utf-8", errors="replace"), source=path)
    except errors.InvalidConfiguration as exc:
        log.warning("%s: %s", where, exc)
        return FAILED_EXIT
    if config.metrics_addr:
        address = f"{pod_ip}:{config.metrics_addr.rpartition(':')[2]}"
        if port_taken(address):
            # A process container (which shares the node's network, sim.processes) holds the port on
            # every pod address: a real pod would have its own. Serve no metrics rather than fail.
            log.warning("%s: %s is taken on the node by a host-network process; no metrics", where, address)
            address = ""
        config = dataclasses.replace(config, metrics_addr=address)
    with listenerlogs.capture(out, level=config.log_level, json_lines=config.log_format == "json"):
        return await run_listener(config, kube=kube, stop=stopping, owner_name=pod_name, vault=vault)


def port_taken(address: str) -> bool:
    """Whether ``host:port`` cannot be bound now (something listens on it, or on the wildcard)."""
    host, _, port = address.rpartition(":")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, int(port)))
        except OSError:
            return True
    return False
