"""What the controller e2e tests share: the world, the controller run in-process, and reading its journal.

Inputs: an emulated cluster with the fake GitHub (``sim.world.World(github=True)``: its kubelet runs
``runner`` and ``listener`` containers as simulated runners and arcsm's own listener), a PAT the fake
accepts in a Secret beside the scale set. Outputs: ``Controller`` runs ``controller.loop.running.run`` (the
real composition root: real journal on disk under ``tmp_path``, real watchers, real executor) as a
task, stops it as SIGTERM would, and starts it again on the same journal. Nothing is mocked.

The journal is locked by the running controller; ``journaled`` reads it through a read-only connection,
as ``arcsm journal export`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from controller.loop import running
from controller.loop.kubeconfigs import Source
from controller.loop.settings import ControllerSettings, HttpSettings, QueueSettings
from sim.world import World
from statemachines import decisions, kinds
from statemachines.decisions import Transition
from statemachines.effects import ObjectRef
from statemachines.snapshots import Settings as MachineSettings
from store import reading, schema
from store.records import Record, RecordType
from store.settings import JournalSettings
from tests import worlds
from tests.e2e.controller import recording
from tests.helpers import ARCSM, eventually
from watchers.settings import WatchSettings

GROUP, VERSION = kinds.GROUP, kinds.VERSION
PLURALS = kinds.PLURALS
MERGE_PATCH = "application/merge-patch+json"
NS = "default"
CONTROLLER_NS = "arc-systems"
PAT = "ghp_controllerE2eToken00000000000000001"
SECRET = "github-config"
RUNNER_IMAGE = "ghcr.io/actions/actions-runner:2.330.0"


@contextlib.asynccontextmanager
async def github_world(kind: str = worlds.EMULATED) -> AsyncIterator[World]:
    """A world of ``kind`` (``tests.worlds``) with the fake GitHub accepting the tests' PAT."""
    async with worlds.open_world(kind, github=True) as world:
        world.github.allow_pat(PAT)
        try:
            yield world
        finally:
            await stop_pods(world)


async def stop_pods(world: World) -> None:
    """Delete the pods left running while the fake GitHub is still up: a listener stopped after it spends
    its retries on a service that is gone. Workloads first, which would make their pods again."""
    async with client.ApiClient(world.configuration()) as api:
        core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
        for namespace in (NS, CONTROLLER_NS):
            await apps.delete_collection_namespaced_deployment(namespace)
            await apps.delete_collection_namespaced_stateful_set(namespace)
            await core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)

        async def gone() -> bool:
            pods = [(await core.list_namespaced_pod(namespace)).items for namespace in (NS, CONTROLLER_NS)]
            return not any(pods)

        await eventually(gone, timeout=10, what="the pods stopped")


async def create_secret(api: client.ApiClient, namespace: str = NS, name: str = SECRET) -> None:
    body = {"metadata": {"name": name, "namespace": namespace}, "stringData": {"github_token": PAT}}
    await client.CoreV1Api(api).create_namespaced_secret(namespace, body)


async def service_account_token(api: client.ApiClient, account: str, namespace: str = CONTROLLER_NS) -> str:
    """A token of ServiceAccount ``account`` (the TokenRequest subresource), valid for an hour."""
    answer = await client.CoreV1Api(api).create_namespaced_service_account_token(
        account, namespace, {"spec": {"expirationSeconds": 3600}}
    )
    return str(answer.status.token)


def scale_set_body(world: World, name: str = "arc", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": name, "namespace": NS, "labels": {"app.kubernetes.io/version": "0.13.0"}},
        "spec": {
            "githubConfigUrl": world.github_url + "/org",
            "githubConfigSecret": SECRET,
            "minRunners": 0,
            "maxRunners": 3,
            # restartPolicy Never, as upstream's chart gives runner pods: a finished runner is not restarted.
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": RUNNER_IMAGE}]}
            },
            **spec,
        },
    }


def run_command(journal: Path, kubeconfig: Path, *flags: str) -> list[str]:
    """``arcsm run`` on ``journal`` against the cluster of ``kubeconfig``, watching the test namespaces."""
    return [
        ARCSM,
        "run",
        "--journal",
        str(journal),
        "--kubeconfig",
        str(kubeconfig),
        "--namespace",
        NS,
        "--controller-namespace",
        CONTROLLER_NS,
        *flags,
    ]


async def create(api: client.ApiClient, body: dict[str, Any]) -> dict[str, Any]:
    namespace = body["metadata"]["namespace"]
    created: dict[str, Any] = await client.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURALS[body["kind"]], body
    )
    return created


async def get(api: client.ApiClient, kind: str, name: str, namespace: str = NS) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = await client.CustomObjectsApi(api).get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURALS[kind], name
        )
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return found


async def required(
    api: client.ApiClient, kind: str, name: str = "arc", namespace: str = NS
) -> dict[str, Any]:
    found = await get(api, kind, name, namespace)
    assert found is not None, f"{kind} {name} is missing"
    return found


async def merge_patch(
    api: client.ApiClient,
    kind: str,
    name: str,
    patch: dict[str, Any],
    namespace: str = NS,
    *,
    status: bool = False,
) -> dict[str, Any]:
    """A merge patch of the object (``status``: of its status subresource), as a user or tool sends it."""
    custom = client.CustomObjectsApi(api)
    send = custom.patch_namespaced_custom_object_status if status else custom.patch_namespaced_custom_object
    patched: dict[str, Any] = await send(  # type: ignore[call-arg]
        GROUP, VERSION, namespace, PLURALS[kind], name, patch, _content_type=MERGE_PATCH
    )
    return patched


def revisions(ers: dict[str, Any]) -> tuple[int, int]:
    """The runner set's (spec.actionableRevision, status.appliedActionableRevision)."""
    return (
        int((ers.get("spec") or {}).get("actionableRevision") or 0),
        int((ers.get("status") or {}).get("appliedActionableRevision") or 0),
    )


async def items(api: client.ApiClient, kind: str, namespace: str = NS) -> list[dict[str, Any]]:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURALS[kind]
    )
    return list(listed["items"])


async def delete(api: client.ApiClient, kind: str, name: str, namespace: str = NS) -> None:
    await client.CustomObjectsApi(api).delete_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURALS[kind], name
    )


async def phase(api: client.ApiClient, name: str = "arc") -> str | None:
    found = await get(api, "AutoscalingRunnerSet", name)
    return None if found is None else (found.get("status") or {}).get("phase")


async def journaled(path: Path, types: Collection[RecordType] | None = None) -> list[Record]:
    """The journal's records (of ``types``), read beside the controller that holds it open."""
    db = await schema.connect(path, read_only=True)
    try:
        sql, args = reading.query(
            after=0, through=None, limit=None, kind=None, namespace=None, name=None, types=types
        )
        return await reading.select(db, sql, args)
    finally:
        await db.close()


async def phases_journaled(path: Path, name: str = "arc") -> list[tuple[str, str, str]]:
    """(from, to, trigger) of every ARS transition in the journal's decision records, in order."""
    return [
        (t.from_, t.to, t.trigger)
        for record in await journaled(path, {RecordType.DECISION})
        if record.kind == kinds.ARS and record.name == name
        for t in transitions_of(record)
    ]


def transitions_of(record: Record) -> tuple[Transition, ...]:
    """The transitions a decision record holds."""
    subject = ObjectRef(record.kind, record.namespace, record.name)
    return decisions.transitions_from_json(record.body, subject)


@dataclass
class Controller:
    """``arcsm run`` in-process: ``start``, ``stop`` (as SIGTERM does), ``start`` again on the journal.

    A clean ``stop`` exports the journal to ``record_to`` when it is set (``recording``: the test's
    ``tests/journals/<name>.jsonl.gz`` under ``ARCSM_RECORD_JOURNALS=1``, else None), unless something other
    than a controller wrote to the journal during the test (then the recording is removed).
    """

    world: World
    directory: Path
    settings: ControllerSettings = field(init=False)
    task: asyncio.Task[int] | None = None
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    runs: int = 0
    record_to: Path | None = field(default_factory=recording.target)

    def __post_init__(self) -> None:
        kubeconfig = self.world.write_kubeconfig(self.directory / "kubeconfig")
        self.settings = ControllerSettings(
            journal_path=self.directory / "journal.db",
            cluster=Source.kubeconfig(kubeconfig),
            journal=JournalSettings(durable=False),
            watch=WatchSettings(resync=None),
            queue=QueueSettings(workers=4),
            machines=MachineSettings(controller_namespace=CONTROLLER_NS, listener_image="arcsm:e2e"),
        )

    @property
    def journal(self) -> Path:
        return self.settings.journal_path

    def start(self) -> None:
        assert self.task is None or self.task.done(), "the controller is running"
        self.stop_event = asyncio.Event()
        journal = self.journal
        recording.starting(journal)
        self.task = asyncio.create_task(running.run(self.settings, stop=self.stop_event), name="arcsm run")
        self.task.add_done_callback(lambda _: recording.ended(journal))
        self.runs += 1

    async def stop(self, *, export: bool = True) -> int:
        """Stop as SIGTERM does; then export the journal if ``record_to`` is set and ``export``."""
        assert self.task is not None
        self.stop_event.set()
        async with asyncio.timeout(30):
            code = await self.task
        if export and self.record_to is not None:
            await recording.record(self.journal, self.record_to)
        return code

    def with_token(self, token: str) -> None:
        """Reach the cluster with ``token`` instead of the world's admin: the controller then has nothing
        but the grants of the account the token is of."""
        config = self.world.kubeconfig()
        config["users"][0]["user"] = {"token": token}
        kubeconfig = self.directory / "token.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))
        self.settings = dataclasses.replace(self.settings, cluster=Source.kubeconfig(kubeconfig))

    async def __aenter__(self) -> Controller:
        self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self.task is not None and not self.task.done():
            await self.stop(export=exc_type is None)


@contextlib.asynccontextmanager
async def serving(
    world: World, directory: Path, timeout: float = 40.0, *, debug_endpoints: bool = False
) -> AsyncIterator[tuple[ControllerSettings, str]]:
    """``arcsm run`` in-process with its HTTP API on a free loopback port (with ``debug_endpoints``, as
    ``--debug-endpoints`` serves it): its settings and the API's base URL once it listens; stopped as
    SIGTERM stops it (exit 0) when the block ends."""
    base = Controller(world, directory).settings
    http = HttpSettings(host="127.0.0.1", port=0, debug_endpoints=debug_endpoints)
    settings = dataclasses.replace(base, http=http)
    urls: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(running.run(settings, stop=stop, on_http=urls.append))
    try:
        await eventually(lambda: urls or task.done(), timeout=timeout, what="the API listening")
        assert urls, task
        yield settings, urls[0]
    finally:
        stop.set()
        assert await asyncio.wait_for(task, timeout=timeout) == 0


async def run_to_exit(*command: str, timeout: float = 40.0) -> tuple[int, list[str]]:
    """Run ``command`` (an ``arcsm`` command line) until it exits: its status and its stderr's lines."""
    proc = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode if proc.returncode is not None else -1, stderr.decode().strip().splitlines()


def standalone_runner(ers: dict[str, Any], name: str) -> dict[str, Any]:
    """An EphemeralRunner named ``name`` with no owner (no runner set counts it), built from the runner
    set ``ers``'s runner spec."""
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": kinds.ER,
        "metadata": {"name": name, "namespace": NS},
        "spec": ers["spec"]["ephemeralRunnerSpec"],
    }


async def owners_admitted(world: World, user: str, namespace: str = NS) -> None:
    """On the real control plane, wait until kube-apiserver's admission knows arcsm's kinds as owners,
    once a test installed their CRDs itself (a chart that brings them). OwnerReferencesPermissionEnforcement
    finds an owner's resource through a discovery cache that the server serving custom resources
    refreshes every 30 s; until then it refuses (403) an ownerReference to such a kind that sets
    ``blockOwnerDeletion``, as a cluster running that plugin does right after such a chart. Asked as
    ``user`` (the controller's account: one allowed to update every ``finalizers`` is never asked for
    the mapping) by a server-side dry run of an EphemeralRunner owned by each kind, which stores
    nothing. Nothing to wait for on the emulator, which does not run that plugin."""
    if not worlds.is_real(world):
        return
    world_api = client.ApiClient(world.configuration())
    world_api.set_default_header("Impersonate-User", user)
    custom = client.CustomObjectsApi(world_api)

    def probe(kind: str) -> dict[str, Any]:
        owner = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": kind,
            "name": "owner",
            "uid": "00000000-0000-0000-0000-000000000000",
            "blockOwnerDeletion": True,
        }
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": kinds.ER,
            "metadata": {"name": "owner-probe", "namespace": namespace, "ownerReferences": [owner]},
            "spec": {
                "githubConfigUrl": "https://github.com/owner/repo",
                "githubConfigSecret": "probe",
                "runnerScaleSetId": 1,
                "spec": {"containers": [{"name": "runner", "image": "runner"}]},
            },
        }

    async def admitted() -> bool:
        for kind in (k.kind for k in kinds.ALL):
            try:
                await custom.create_namespaced_custom_object(
                    GROUP, VERSION, namespace, "ephemeralrunners", probe(kind), dry_run="All"
                )
            except ApiException as exc:
                if exc.status != 403:
                    raise
                return False
        return True

    async with world_api:
        await eventually(
            admitted, timeout=90, interval=0.5, what="kube-apiserver's admission to map arcsm's kinds"
        )
