"""The update predicates are only an optimisation: with them off the controller reaches the same end state.

The same story runs twice, each on a fresh world (``sim.world.World(github=True)``) with the real
controller: once with ``ReconcileSettings(predicates=True)`` and once with ``predicates=False``. A scale set
with minRunners 1 is created and reaches Running with its runner running; its maxRunners is edited and
the edit applied; then it is deleted and everything it owned is cleaned up. Both runs must end the same:
the scale set's phase path (Pending then Running for each generation, as §3.1 requires), the last phase
the runner set and each runner were given and that every runner reached Running, how many runners,
runner sets and listeners were made, the EphemeralRunnerSet's spec and status after the edit, the runner
count, and nothing left after the delete.

Outcomes are compared, not the interleaving: whether a runner is written Pending before Running depends
on whether its pod is already running when its pass reads it, and a loaded machine decides that.

``bench/reconcile_predicates.py`` runs ``story`` too and counts what the predicates save.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client

from controller.loop.settings import ReconcileSettings
from sim.world import World
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.helpers import eventually

TIMEOUT = 60.0
MAX_RUNNERS = 9  # the edit: from 3 (or from minRunners when higher)


@dataclass
class Ended:
    """What one run of the story ended with."""

    path: list[str]  # the scale set's phases in order, repeats folded
    last: dict[str, str]  # per "kind/name" of the runner set and runners, the last phase it was given
    reached: dict[str, set[str]]  # per "kind/name" of the same, the phases it was given
    made: dict[str, int]  # per kind, how many objects of it were observed (distinct uids)
    runner_set: dict[str, Any]  # the EphemeralRunnerSet's spec and status after the edit
    runners: int  # EphemeralRunners after the edit
    left: list[str]  # objects left after the delete
    decisions: int  # decision records in the journal


GENERATED = ("EphemeralRunner", "AutoscalingListener")  # kinds whose names differ from world to world
KINDS = ("AutoscalingRunnerSet", "EphemeralRunnerSet", *GENERATED)


def _phases(decisions: list[Any]) -> dict[str, list[str]]:
    """Each subject's phases from the decision records, repeats folded. Runners and listeners, whose names
    are random or hash the spec, are numbered in the order they first appear (``EphemeralRunner#1``)."""
    found: dict[str, list[str]] = {}
    numbered: dict[tuple[str, str], str] = {}
    for record in decisions:
        for t in record.body["transitions"]:
            kind, name = t["subject"]["kind"], t["subject"]["name"]
            if kind in GENERATED:
                count = sum(k == kind for k, _ in numbered)
                name = numbered.setdefault((kind, name), f"#{count + 1}")
            seen = found.setdefault(f"{kind}/{name}", [])
            if not seen or seen[-1] != t["to"]:
                seen.append(t["to"])
    return found


def _made(observed: list[Any]) -> dict[str, int]:
    """How many objects of each of the four kinds the journal observed."""
    uids: dict[str, set[str]] = {}
    for record in observed:
        if record.kind in KINDS:
            uids.setdefault(record.kind, set()).add(record.body["object"]["metadata"]["uid"])
    return {kind: len(found) for kind, found in uids.items()}


async def _runners_running(api: client.ApiClient, runners: int) -> bool:
    found = await harness.items(api, "EphemeralRunner")
    return [(r.get("status") or {}).get("phase") for r in found] == ["Running"] * runners


async def _settled(api: client.ApiClient, runners: int, *, after: int = 0) -> int:
    """The scale set's generation once it is Running at a generation above ``after`` with its ``runners``
    runners running and the runner set saying so; 0 until then."""
    ars = await harness.get(api, "AutoscalingRunnerSet", "arc")
    ers = await harness.get(api, "EphemeralRunnerSet", "arc")
    if ars is None or ers is None:
        return 0
    generation = ars["metadata"]["generation"]
    status, ers_status = ars.get("status") or {}, ers.get("status") or {}
    settled = (
        generation > after
        and status.get("observedGeneration") == generation
        and status.get("phase") == "Running"
        and ers_status.get("phase") == "Running"
        and ers_status.get("runningEphemeralRunners") == runners
        and await _runners_running(api, runners)
    )
    return generation if settled else 0


def _settled_after(api: client.ApiClient, runners: int, generation: int) -> Callable[[], Awaitable[int]]:
    return lambda: _settled(api, runners, after=generation)


async def _left(api: client.ApiClient) -> list[str]:
    objects = [
        await harness.get(api, "AutoscalingRunnerSet", "arc"),
        await harness.get(api, "EphemeralRunnerSet", "arc"),
        *await harness.items(api, "EphemeralRunner"),
        *await harness.items(api, "AutoscalingListener", CONTROLLER_NS),
    ]
    return [f"{o['kind']}/{o['metadata']['name']}" for o in objects if o is not None]


async def story(world: World, directory: Path, *, predicates: bool, runners: int = 1) -> Ended:
    """Create (minRunners ``runners``) → Running with its runners; edit maxRunners; delete. The controller
    runs on a journal under ``directory`` with the predicates on or off."""
    controller = Controller(world, directory)
    controller.settings = dataclasses.replace(
        controller.settings, reconcile=ReconcileSettings(predicates=predicates)
    )
    async with client.ApiClient(world.configuration()) as api:
        await harness.create_secret(api)
        async with controller:
            await harness.create(
                api, harness.scale_set_body(world, minRunners=runners, maxRunners=max(3, runners))
            )
            created = await eventually(
                _settled_after(api, runners, 0), timeout=TIMEOUT, what="Running with its runners"
            )

            await harness.merge_patch(
                api, "AutoscalingRunnerSet", "arc", {"spec": {"maxRunners": MAX_RUNNERS}}
            )

            async def edited() -> bool:
                listeners = await harness.items(api, "AutoscalingListener", CONTROLLER_NS)
                maxima = [al["spec"].get("maxRunners") for al in listeners]
                return maxima == [MAX_RUNNERS] and await _settled(api, runners, after=created) > 0

            await eventually(edited, timeout=TIMEOUT, what="the maxRunners edit applied")
            ers = await harness.get(api, "EphemeralRunnerSet", "arc")
            assert ers is not None
            # Condition times are the clock of each run; what a condition says is compared.
            conditions = [
                {k: v for k, v in c.items() if k != "lastTransitionTime"}
                for c in ers["status"].get("conditions", [])
            ]
            runner_set = {"spec": ers["spec"], "status": {**ers["status"], "conditions": conditions}}
            runners = len(await harness.items(api, "EphemeralRunner"))

            await harness.delete(api, "AutoscalingRunnerSet", "arc")

            async def gone() -> bool:
                return not await _left(api)

            await eventually(gone, timeout=TIMEOUT, what="the scale set and its objects gone")
            left = await _left(api)
            decisions = await harness.journaled(controller.journal, {RecordType.DECISION})
            observed = await harness.journaled(controller.journal, {RecordType.OBSERVED})
    # The fake GitHub listens on a port of its own in each world.
    spec = runner_set["spec"]["ephemeralRunnerSpec"]
    spec["githubConfigUrl"] = spec["githubConfigUrl"].replace(world.github_url, "<github>")
    phases = _phases(decisions)
    path = phases.pop("AutoscalingRunnerSet/arc", [])
    # A listener is deleted and rebuilt by the edit; whether it had reached Running before is timing.
    kept = {s: seen for s, seen in phases.items() if not s.startswith("AutoscalingListener/")}
    last = {subject: seen[-1] for subject, seen in kept.items()}
    reached = {subject: set(seen) for subject, seen in kept.items()}
    return Ended(path, last, reached, _made(observed), runner_set, runners, left, len(decisions))


async def test_switching_the_predicates_off_changes_no_outcome(tmp_path: Path) -> None:
    ended: dict[bool, Ended] = {}
    for predicates in (True, False):
        directory = tmp_path / f"predicates-{predicates}"
        directory.mkdir()
        async with harness.github_world() as world:
            ended[predicates] = await story(world, directory, predicates=predicates)
            assert world.github.scale_set("arc") is None

    on, off = ended[True], ended[False]
    assert on.path == ["Pending", "Running", "Pending", "Running"], on.path  # created, then edited
    runners = [subject for subject in on.reached if subject.startswith("EphemeralRunner/")]
    assert runners and all("Running" in on.reached[r] for r in runners), on.reached
    assert on.made["EphemeralRunner"] == 1 and on.made["EphemeralRunnerSet"] == 1, on.made
    assert on.runners == 1 and not on.left
    assert off.path == on.path
    assert off.last == on.last
    assert all("Running" in off.reached[r] for r in runners), off.reached
    assert off.made == on.made
    assert off.runner_set == on.runner_set
    assert (off.runners, off.left) == (on.runners, on.left)
