"""Steps and journal readers shared by the §4 scenario tests (C1, C2 and the C7 parking scenarios).

Inputs: the emulated world with the fake GitHub, a kubernetes_asyncio client on it and the real controller
run in-process (``harness.Controller``). Outputs: the scale set brought to a known state (Running at its
generation, or parked in Outdated by runners that reject their image), edits applied as merge patches,
and readers over the controller's journal: the ARS transitions, the observed versions of each object, the
effects decided and their results.

Every wait is on a condition with a deadline. Where a scenario says "nothing happens", the test waits for a
journaled pass of the controller that read the change (a decision whose ``seq`` is at or after the record
of the change) and then asserts, so no assertion depends on time passing.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client

from sim.world import World
from statemachines.decisions import Transition
from statemachines.kinds import AL, ARS, ER, ERS
from store.records import Record, RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.e2e.controller.harness import required as required
from tests.e2e.controller.harness import revisions as revisions
from tests.helpers import eventually

TIMEOUT = 60.0
# The fake refuses runners older than MINIMUM: a runner built from REJECTED_IMAGE registers and exits 7.
MINIMUM = "2.330.0"
REJECTED_IMAGE = "ghcr.io/actions/actions-runner:2.329.0"


# -- the cluster ---------------------------------------------------------------------------------------------


async def listeners(kube: client.ApiClient) -> list[dict[str, Any]]:
    return await harness.items(kube, AL, CONTROLLER_NS)


def generations(ars: dict[str, Any]) -> tuple[int, int]:
    """The scale set's (metadata.generation, status.observedGeneration)."""
    return int(ars["metadata"].get("generation") or 0), int(
        (ars.get("status") or {}).get("observedGeneration") or 0
    )


def uid(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["uid"])


# -- the journal ---------------------------------------------------------------------------------------------


async def last_seq(journal: Path) -> int:
    """The seq of the journal's last record (0 for an empty journal)."""
    return max((r.seq or 0 for r in await harness.journaled(journal)), default=0)


async def observed(journal: Path, kind: str, after: int = 0) -> list[Record]:
    """The observed versions of ``kind`` journaled after ``after``, in order."""
    return [
        r
        for r in await harness.journaled(journal, {RecordType.OBSERVED})
        if r.kind == kind and (r.seq or 0) > after
    ]


async def ars_decisions(journal: Path, after: int = 0) -> list[Record]:
    return [
        r
        for r in await harness.journaled(journal, {RecordType.DECISION})
        if r.kind == ARS and r.name == "arc" and (r.seq or 0) > after
    ]


async def ars_transitions(journal: Path, after: int = 0) -> list[Transition]:
    return [t for r in await ars_decisions(journal, after) for t in harness.transitions_of(r)]


def read_generations(transition: Transition) -> tuple[int, int]:
    """The (generation, observedGeneration) an ARS transition recorded: the generation its pass read and
    the observedGeneration its status write left."""
    revisions = transition.revisions
    return int(revisions["generation"]), int(revisions["observedGeneration"])


def phase_path(transitions: list[Transition]) -> list[str]:
    """The phases the transitions went through, starting with the first one's source, repeats collapsed."""
    if not transitions:
        return []
    phases = [transitions[0].from_, *(t.to for t in transitions)]
    return [phase for phase, _ in itertools.groupby(phases)]


async def effects(journal: Path, effect_type: str, target_kind: str, after: int = 0) -> list[Record]:
    """The effects of ``effect_type`` (``CreateObject``, ``DeleteObject``, ...) on a ``target_kind`` object
    decided after ``after``."""
    return [
        r
        for r in await harness.journaled(journal, {RecordType.EFFECT})
        if (r.seq or 0) > after
        and r.body.get("type") == effect_type
        and (r.body.get("target") or {}).get("kind") == target_kind
    ]


async def failed_results(journal: Path, key_prefix: str, after: int = 0) -> list[Record]:
    """The failed results of the effects whose key starts with ``key_prefix`` (``delete:Kind/``)."""
    return [
        r
        for r in await harness.journaled(journal, {RecordType.EFFECT_RESULT})
        if (r.seq or 0) > after
        and str(r.body.get("key", "")).startswith(key_prefix)
        and r.body.get("ok") is False
    ]


async def first_observed(journal: Path, kind: str, has: Any, after: int = 0) -> int:
    """The seq of the first observed ``kind`` version after ``after`` whose object satisfies ``has``; 0 if
    none yet."""
    return next((r.seq or 0 for r in await observed(journal, kind, after) if has(r.body["object"])), 0)


def decided_effects(decision: Record) -> list[str]:
    """A decision's effects as the decision record lists them: ``Type:key``."""
    return [str(e) for e in decision.body["effects"]]


# -- a running scale set -------------------------------------------------------------------------------------


async def running_at_generation(
    kube: client.ApiClient, what: str = "the scale set Running"
) -> dict[str, Any]:
    """Wait until the ARS is Running with observedGeneration = generation and one listener that is not
    being deleted; return the ARS."""

    async def running() -> dict[str, Any] | None:
        ars = await harness.get(kube, ARS, "arc")
        found = await listeners(kube)
        if ars is None or (ars.get("status") or {}).get("phase") != "Running":
            return None
        gen, obs = generations(ars)
        settled = len(found) == 1 and not found[0]["metadata"].get("deletionTimestamp")
        return ars if gen == obs and settled else None

    found: dict[str, Any] = await eventually(running, timeout=TIMEOUT, what=what)
    return found


async def start_running(world: World, kube: client.ApiClient, **spec: Any) -> dict[str, Any]:
    """Create the scale set ``arc`` and wait until it runs at its generation; return the ARS."""
    await harness.create(kube, harness.scale_set_body(world, **spec))
    return await running_at_generation(kube)


# -- a parked scale set (C7) ---------------------------------------------------------------------------------


async def park(world: World, kube: client.ApiClient, controller: Controller) -> None:
    """Create a scale set (minRunners 1) whose runner image the service rejects, and wait until it is
    parked: Outdated, its runner set pinned at 0/0, no listener, and the rejected runners released."""
    body = harness.scale_set_body(world, minRunners=1)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = REJECTED_IMAGE
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"  # as the chart's runner template has it
    await harness.create(kube, body)

    async def journaling() -> bool:  # the journal exists once the controller wrote the first phase
        return await harness.phase(kube) is not None

    await eventually(journaling, timeout=TIMEOUT, what="a first phase written")
    await wait_parked(kube, controller.journal)


async def wait_parked(kube: client.ApiClient, journal: Path, after: int = 0) -> None:
    """The ARS recorded Outdated after ``after``, is Outdated now with its runner set pinned at 0/0 (not
    deleted), no listener exists and no runner without a job is left."""

    async def parked() -> bool:
        if not any(t.to == "Outdated" for t in await ars_transitions(journal, after)):
            return False
        idle = [r for r in await harness.items(kube, ER) if not (r.get("status") or {}).get("jobId")]
        if not (await pinned_without_listener(kube) and not idle):
            return False
        # The journal has seen the released runners go too: a story that then asserts "no runner
        # observed since" must not meet a deletion whose watch event was still on its way.
        last = {r.name: r.body.get("event") for r in await observed(journal, ER)}
        return all(event == "DELETED" for event in last.values())

    await eventually(
        parked,
        timeout=TIMEOUT,
        what="the scale set parked: Outdated, pinned at 0/0, no listener, no idle runner, and journaled so",
    )


async def pinned_without_listener(kube: client.ApiClient) -> bool:
    """The ARS is Outdated now, its runner set pinned at 0/0 (not deleted), and no listener exists."""
    ers = await harness.get(kube, ERS, "arc")
    return (
        await harness.phase(kube) == "Outdated"
        and ers is not None
        and ers["spec"].get("replicas") == 0
        and ers["spec"].get("patchID") == 0
        and not await listeners(kube)
    )


async def late_listener_patch(kube: client.ApiClient, journal: Path, replicas: int, patch_id: int) -> int:
    """Patch the runner set as a listener that lost the race with the park would, and wait until the
    parked scale set re-pinned it to 0/0 in a pass that read the patch (A7). Returns the seq of the observed
    patch: every pass decided from the journal at or after it read it."""
    mark = await last_seq(journal)
    await harness.merge_patch(kube, ERS, "arc", {"spec": {"replicas": replicas, "patchID": patch_id}})

    def patched(ers: dict[str, Any]) -> bool:
        return (ers.get("spec") or {}).get("replicas") == replicas

    seen = await eventually(
        lambda: first_observed(journal, ERS, patched, after=mark), timeout=TIMEOUT, what="the patch observed"
    )

    await eventually(
        lambda: repinned(kube, journal, after=seen, seen=seen),
        timeout=TIMEOUT,
        what=f"the late patch {replicas}/{patch_id} re-pinned to 0/0",
    )
    return int(seen)


async def repinned(kube: client.ApiClient, journal: Path, *, after: int, seen: int) -> bool:
    """The runner set is back at 0/0 and an ARS pass after ``after`` that read the fold at ``seen`` or later
    recorded the parked row (A7)."""
    ers = await required(kube, ERS)
    return (
        ers["spec"].get("replicas") == 0
        and ers["spec"].get("patchID") == 0
        and any(
            t.trigger == "parked" and r.body["seq"] >= seen
            for r in await ars_decisions(journal, after=after)
            for t in harness.transitions_of(r)
        )
    )


async def assert_runner_set_kept(kube: client.ApiClient, journal: Path) -> dict[str, Any]:
    """The runner set was created once and never deleted (no churn, §4.5-C); returns it."""
    ers = await required(kube, ERS)
    seen = await observed(journal, ERS)
    assert {r.uid for r in seen} == {uid(ers)}, "the runner set was recreated"
    assert seen and seen[0].body["event"] == "ADDED", "the runner set's creation was not observed"
    assert not [r for r in seen if r.body["event"] == "DELETED"], "the runner set was deleted"
    assert not await effects(journal, "DeleteObject", ERS), "a decision deleted the runner set"
    return ers


def create_scale_set_calls(world: World) -> int:
    """CreateRunnerScaleSet calls the fake answered (POST on the collection, not on a scale set's
    sessions or jobs)."""
    return len(
        [c for c in world.github.calls_to("POST", "runnerscalesets") if c.path.endswith("/runnerscalesets")]
    )
