"""Steps and readers shared by the runner-spec revision scenarios (spec §4.3, §4.4) and the C5 checks
(§4.8, §4.9).

Inputs: the emulated world with the fake GitHub, a kubernetes_asyncio client on it, the real controller run
in-process (``harness.Controller``). Outputs: a scale set brought to a known state (Running with idle or
busy runners, a runner set Outdated), edits applied as merge patches, readers over the journal (observed
versions, effects decided, effect results), and ``Passes``: every reconcile the controller made, as its
machine saw and decided it.

Publishing a runner spec on the runner set. The ARS publishes a changed runner spec only once the runner
set has no pending or running runner (the drain deferral, §2.1 step 9e); idle runners count, and nothing
scales them down while the listener is gone (§8 item 2), so with idle runners an image edit on the ARS
waits for good. The scenarios that start from idle or busy runners at ``rev > app`` (4.3-B, 4.3-C) are
about the runner set, so they make the image edit while the controller is stopped: the ARS template
(``change_image``), and on the runner set what the ARS writes once drained (``publish_image``: the new
image in ``ephemeralRunnerSpec``, ``actionableRevision = max(rev, app) + 1``). The controller then starts
on the same journal: the ARS finds no drift and never publishes on its own, the runner set cleans up for
the new revision.

Every wait is on a condition with a deadline. "Nothing happens" is asserted over passes ``Passes`` saw
reading the state in question, never over time passing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.loop import reconciling
from sim.github.records import Job
from sim.world import World
from statemachines.autoscalinglisteners import ANNOTATION_STATE as LISTENER_STATE
from statemachines.decisions import Decision
from statemachines.effects import DeleteObject
from statemachines.kinds import AL as AL
from statemachines.kinds import ARS, ER, ERS
from statemachines.naming import ANNOTATION_ACTIONABLE_REVISION
from statemachines.phases import ListenerState
from statemachines.snapshots import Snapshot
from store.records import Record, RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, MERGE_PATCH, required, revisions
from tests.e2e.controller.scenario_steps import ars_transitions as ars_transitions
from tests.e2e.controller.scenario_steps import last_seq as last_seq
from tests.e2e.controller.scenario_steps import listeners
from tests.e2e.controller.scenario_steps import uid as uid
from tests.helpers import eventually

TIMEOUT = 60.0
# The fake refuses runners older than MINIMUM: a runner built from OLD_IMAGE registers and exits 7.
MINIMUM = "2.330.0"
OLD_IMAGE = "ghcr.io/actions/actions-runner:2.329.0"
IMAGE = "ghcr.io/actions/actions-runner:2.330.0"
NEXT_IMAGE = "ghcr.io/actions/actions-runner:2.331.0"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


# -- the cluster ---------------------------------------------------------------------------------------------


def status_of(obj: dict[str, Any] | None) -> dict[str, Any]:
    return dict((obj or {}).get("status") or {})


def runner_revision(runner: dict[str, Any]) -> str | None:
    """The runner's ``actions.github.com/actionable-revision`` annotation, as written."""
    annotations = runner["metadata"].get("annotations") or {}
    value = annotations.get(ANNOTATION_ACTIONABLE_REVISION)
    return None if value is None else str(value)


def has_job(runner: dict[str, Any]) -> bool:
    return bool(status_of(runner).get("jobId"))


async def create_scale_set(world: World, kube: client.ApiClient, image: str = IMAGE, **spec: Any) -> None:
    body = harness.scale_set_body(world, **spec)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = image
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"  # as the chart's runner template has it
    await harness.create(kube, body)


async def wait_started(kube: client.ApiClient) -> None:
    """The controller wrote a first phase: its journal exists and can be read."""

    async def started() -> bool:
        return await harness.phase(kube) is not None

    await eventually(started, timeout=TIMEOUT, what="a first phase written")


async def change_image(kube: client.ApiClient, image: str) -> None:
    """The user's edit: the runner image of the ARS template (the generation moves)."""
    template = {"spec": {"containers": [{"name": "runner", "image": image}]}}
    await harness.merge_patch(kube, ARS, "arc", {"spec": {"template": template}})


async def publish_image(kube: client.ApiClient, image: str) -> int:
    """Write on the runner set the runner spec the ARS publishes once drained (see the module docstring):
    ``image`` for the runner container, ``actionableRevision = max(rev, app) + 1``. Returns that revision."""
    ers = await required(kube, ERS)
    revision, applied = revisions(ers)
    pod_spec = ers["spec"]["ephemeralRunnerSpec"]["spec"]
    containers = [{**c, "image": image} if c.get("name") == "runner" else c for c in pod_spec["containers"]]
    published = max(revision, applied) + 1
    spec = {"actionableRevision": published, "ephemeralRunnerSpec": {"spec": {"containers": containers}}}
    await harness.merge_patch(kube, ERS, "arc", {"spec": spec})
    return published


async def running_with_idle_runners(world: World, kube: client.ApiClient, count: int) -> list[dict[str, Any]]:
    """The ARS Running at its generation, the runner set Running, ``count`` runners Running, registered
    and idle (online with the service)."""

    found: list[list[dict[str, Any]]] = []

    async def ready() -> bool:
        ars, ers = await harness.get(kube, ARS, "arc"), await harness.get(kube, ERS, "arc")
        runners = await harness.items(kube, ER)
        found[:] = [runners]
        return (
            ars is not None
            and ers is not None
            and status_of(ars).get("phase") == "Running"
            and status_of(ars).get("observedGeneration") == ars["metadata"]["generation"]
            and status_of(ers).get("phase") == "Running"
            and len(runners) == count
            and all(status_of(r).get("phase") == "Running" and status_of(r).get("runnerId") for r in runners)
            and sum(a.online and a.job is None for a in world.github.state.agents.values()) == count
        )

    await eventually(ready, timeout=TIMEOUT, what=f"the scale set Running with {count} idle runners")
    return found[0]


async def settled(world: World, kube: client.ApiClient, runners: int) -> None:
    """``running_with_idle_runners``, and every object at rest: the runner set's counters final and its
    total on the ARS, the runners ready, the listener pod running and its state recorded Running."""
    await running_with_idle_runners(world, kube, runners)

    async def at_rest() -> bool:
        ars, ers = await required(kube, ARS), await required(kube, ERS)
        counters = ("runningEphemeralRunners", "pendingEphemeralRunners")
        core = client.CoreV1Api(kube)
        pods = (await core.list_namespaced_pod(CONTROLLER_NS)).items
        accounts = (await core.list_namespaced_service_account(CONTROLLER_NS)).items
        return (
            status_of(ars).get("currentRunners") == runners  # the other counters follow only its changes
            and status_of(ers).get("currentReplicas") == runners
            and [status_of(ers).get(c) for c in counters] == [runners, 0]
            and all(status_of(r).get("ready") is True for r in await harness.items(kube, ER))
            and len(await listeners(kube)) == 1
            and [pod.status.phase for pod in pods] == ["Running"]
            and any(
                (sa.metadata.annotations or {}).get(LISTENER_STATE) == ListenerState.RUNNING.value
                for sa in accounts
            )
        )

    await eventually(at_rest, timeout=TIMEOUT, what="the scale set at rest")


def queue_job(world: World) -> Job:
    scale_set = world.github.scale_set("arc")
    assert scale_set is not None, "the Actions scale set is missing"
    (job,) = world.github.queue_jobs(scale_set.id)
    return job


async def runner_running(world: World, kube: client.ApiClient, job: Job) -> dict[str, Any]:
    """The EphemeralRunner executing ``job``, once its status shows the job."""

    async def busy() -> dict[str, Any] | None:
        started = world.github.state.jobs[job.runner_request_id]
        if not started.runner_name or started.finish_time is not None:
            return None
        runner = await harness.get(kube, ER, started.runner_name)
        return runner if runner is not None and has_job(runner) else None

    found: dict[str, Any] = await eventually(busy, timeout=TIMEOUT, what="a runner executing the job")
    return found


# -- the journal ---------------------------------------------------------------------------------------------


async def observed(journal: Path, kind: str, name: str | None = None) -> list[Record]:
    return [
        r
        for r in await harness.journaled(journal, {RecordType.OBSERVED})
        if r.kind == kind and (name is None or r.name == name)
    ]


async def effects_on(
    journal: Path, kind: str, name: str, namespace: str = harness.NS
) -> list[dict[str, Any]]:
    """The bodies of the journaled effects whose target is the object, whoever decided them."""
    target = {"kind": kind, "namespace": namespace, "name": name}
    return [
        dict(r.body)
        for r in await harness.journaled(journal, {RecordType.EFFECT})
        if r.body.get("target") == target
    ]


async def failed_results(journal: Path, key_part: str) -> list[Record]:
    """The effect results that failed, of effects whose key contains ``key_part``."""
    return [
        r
        for r in await harness.journaled(journal, {RecordType.EFFECT_RESULT})
        if r.body.get("ok") is False and key_part in str(r.body.get("key", ""))
    ]


# -- every pass of the controller --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pass:
    """One reconcile: what the machine read and what it decided (a no-op is not journaled)."""

    snapshot: Snapshot
    decision: Decision

    @property
    def key(self) -> tuple[str, str, str]:
        s = self.snapshot.subject
        return s.kind, s.namespace, s.name

    def deletes(self, kind: str) -> bool:
        return any(isinstance(e, DeleteObject) and e.target.kind == kind for e in self.decision.effects)

    def enters(self, phase: str) -> bool:
        return any(t.to == phase for t in self.decision.transitions)


@dataclass
class Passes:
    """A read-only spy on ``controller.loop.reconciling.DECIDERS``: each machine's decision is recorded and
    returned unchanged, so the controller runs as it would without it."""

    seen: list[Pass] = field(default_factory=list)

    @classmethod
    def install(cls, monkeypatch: pytest.MonkeyPatch) -> Passes:
        spy = cls()
        for kind, decide in list(reconciling.DECIDERS.items()):
            monkeypatch.setitem(reconciling.DECIDERS, kind, spy._wrap(decide))
        return spy

    def _wrap(self, decide: Callable[[Snapshot], Decision]) -> Callable[[Snapshot], Decision]:
        def spied(snapshot: Snapshot) -> Decision:
            decision = decide(snapshot)
            self.seen.append(Pass(snapshot, decision))
            return decision

        return spied

    def mark(self) -> int:
        return len(self.seen)

    def since(self, mark: int, kind: str | None = None) -> list[Pass]:
        return [p for p in self.seen[mark:] if kind is None or p.snapshot.subject.kind == kind]


# -- the API server's request log -------------------------------------------------------------------------


def writes_since(world: World, mark: int) -> list[str]:
    """The write requests (POST, PUT, PATCH, DELETE) the API server answered since ``mark``."""
    return [f"{r.method} {r.path} -> {r.status}" for r in world.requests[mark:] if r.method in WRITE_METHODS]


def patches_not_merge(world: World) -> list[str]:
    """The PATCH requests whose body was not a JSON merge patch."""
    return [
        f"{r.path}: {r.content_type}"
        for r in world.requests
        if r.method == "PATCH" and r.content_type != MERGE_PATCH
    ]
