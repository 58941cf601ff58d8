"""An outside write that lowers ``spec.actionableRevision`` below the applied revision: runners the spec
rejects still park the scale set without churn, and a spec update recovers it (C4, C7; spec §4.4, §4.5).

Inputs: the emulated cluster with the fake GitHub, the real controller on a real journal. A scale set with
one idle runner, its runner set at ``rev = app``; then someone (a tool, a restore, a hand edit) writes a
lower ``spec.actionableRevision`` on the runner set, and the service starts refusing the runner's version,
so every runner made from now on exits 7.

Outputs: the replacement of the runner the test deletes is built at the applied revision (a revision below
it means nothing newer), so once it exits 7 it is a current outdated runner, not a stale one: the set goes
Outdated and the scale set parks at zero with no listener, having made that one runner, and no further
one while a late listener patch is put back to zero. Before, it was stale (built "before" the applied
revision), so each rejected runner was deleted and replaced, round after round. An image fix then
recovers the scale set at ``max(rev, app) + 1``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.controller import harness
from tests.e2e.controller.harness import Controller, required, revisions
from tests.e2e.controller.revision_steps import (
    AL,
    ARS,
    ER,
    ERS,
    IMAGE,
    MINIMUM,
    NEXT_IMAGE,
    TIMEOUT,
    change_image,
    create_scale_set,
    observed,
    runner_revision,
    running_with_idle_runners,
    status_of,
)
from tests.e2e.controller.scenario_steps import late_listener_patch, pinned_without_listener
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

CHURN = 3  # runners made after the edit: more than one means rejected runners were replaced


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        w.github.configure(min_runner_version=MINIMUM)
        yield w


async def runners_made(journal: Path) -> set[str]:
    """The uids of every EphemeralRunner the journal observed."""
    return {r.uid for r in await observed(journal, ER)}


async def test_a_lowered_revision_parks_rejected_runners_without_churn(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path) as controller:
        await create_scale_set(world, kube, IMAGE, minRunners=1)
        (first,) = await running_with_idle_runners(world, kube, 1)
        revision, applied = revisions(await required(kube, ERS))
        assert revision == applied >= 1
        await harness.merge_patch(kube, ERS, "arc", {"spec": {"actionableRevision": applied - 1}})

        async def lowered() -> bool:
            return revisions(await required(kube, ERS)) == (applied - 1, applied)

        await eventually(lowered, timeout=TIMEOUT, what="the runner set's revision lowered")
        world.github.configure(min_runner_version=NEXT_IMAGE.rpartition(":")[2])
        before = await runners_made(controller.journal)
        await harness.delete(kube, ER, first["metadata"]["name"])

        async def parked_or_churning() -> tuple[bool, int] | None:
            made = len(await runners_made(controller.journal) - before)
            parked = await pinned_without_listener(kube)
            return (parked, made) if parked or made >= CHURN else None

        parked, made = await eventually(
            parked_or_churning, timeout=TIMEOUT, what="the scale set parked, or its rejected runners replaced"
        )
        assert parked and made == 1, f"{made} runners made after the revision was lowered, and no park"
        rejected = [r for r in await observed(controller.journal, ER) if r.uid not in before]
        assert {runner_revision(r.body["object"]) for r in rejected} == {str(applied)}
        assert status_of(await required(kube, ERS)).get("phase") == "Outdated"

        # A late listener patch is put back to zero, and nothing is made for it.
        await late_listener_patch(kube, controller.journal, 2, 7)
        assert len(await runners_made(controller.journal) - before) == 1
        assert revisions(await required(kube, ERS)) == (applied - 1, applied)

        # An image the service takes recovers the set at max(rev, app) + 1.
        await change_image(kube, NEXT_IMAGE)

        async def recovered() -> bool:
            ars, ers = await required(kube, ARS), await required(kube, ERS)
            return (
                status_of(ars).get("phase") == "Running"
                and revisions(ers) == (applied + 1, applied + 1)
                and len(await harness.items(kube, AL, harness.CONTROLLER_NS)) == 1
            )

        await eventually(recovered, timeout=TIMEOUT, what="the scale set recovered at the next revision")
        await running_with_idle_runners(world, kube, 1)
