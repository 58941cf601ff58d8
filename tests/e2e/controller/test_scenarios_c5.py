"""Spec §4.8 and §4.9 (C5) end to end: a settled scale set reconciled again writes nothing, patches are
JSON merge patches, and a runner created without finalizers gets both in one patch.

The real controller on a real journal, the emulated cluster (its request log is what the controller sent)
and the fake Actions service. ``revision_steps.Passes`` records every reconcile the controller makes, so
"reconciled again" is a pass observed, not a wait.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.world import World
from statemachines.effects import MergePatch
from statemachines.naming import FINALIZER_EPHEMERAL_RUNNER, FINALIZER_RUNNER_REGISTRATION
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, MERGE_PATCH, Controller, required
from tests.e2e.controller.revision_steps import (
    AL,
    ARS,
    ER,
    ERS,
    TIMEOUT,
    Passes,
    create_scale_set,
    last_seq,
    patches_not_merge,
    running_with_idle_runners,
    settled,
    writes_since,
)
from tests.helpers import eventually


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> Passes:
    return Passes.install(monkeypatch)


async def test_4_8_a_settled_scale_set_reconciled_again_makes_no_write(
    world: World, kube: client.ApiClient, tmp_path: Path, passes: Passes
) -> None:
    """I8.1, I8.3: a settled Running scale set (ARS, runner set, one idle runner, listener) is reconciled
    again by restarting the controller on its journal, which decides every object once at start. Every one
    of those passes is a no-op, the API server receives no POST, PUT, PATCH or DELETE, and every PATCH the
    test saw was a JSON merge patch."""
    controller = Controller(world, tmp_path)
    async with controller:
        await create_scale_set(world, kube, minRunners=1)
        await settled(world, kube, 1)
    recorded = await last_seq(controller.journal)
    (runner,) = await harness.items(kube, ER)
    (listener,) = await harness.items(kube, AL, CONTROLLER_NS)
    keys = {
        (ARS, harness.NS, "arc"),
        (ERS, harness.NS, "arc"),
        (ER, harness.NS, runner["metadata"]["name"]),
        (AL, CONTROLLER_NS, listener["metadata"]["name"]),
    }
    mark, requests = passes.mark(), len(world.requests)

    async with controller:

        def every_object_reconciled() -> bool:
            return keys <= {p.key for p in passes.since(mark)}

        await eventually(
            every_object_reconciled, timeout=TIMEOUT, what="a pass of every object after the restart"
        )
        acted = [p.decision for p in passes.since(mark) if not p.decision.is_noop]
        assert not acted, acted
        assert writes_since(world, requests) == []

    decided = [
        r
        for r in await harness.journaled(controller.journal, {RecordType.DECISION})
        if (r.seq or 0) > recorded
    ]
    assert not decided, [(r.kind, r.name, r.body["note"]) for r in decided]
    assert any(r.method == "PATCH" for r in world.requests), "no patch at all: I8.3 checked nothing"
    assert patches_not_merge(world) == []


async def test_4_9_a_runner_created_without_finalizers_gets_both_in_one_patch(
    world: World, kube: client.ApiClient, tmp_path: Path, passes: Passes
) -> None:
    """I9.1: an EphemeralRunner created with ``finalizers: []`` gets, on its first reconcile, exactly one
    metadata patch adding the runner finalizer then the registration finalizer.

    The runner is standalone (no owner): the EphemeralRunner machine needs only its spec (the runner set's
    ephemeralRunnerSpec, with the scale set id and the config Secret), and without an owner no runner set
    counts it as its own and deletes it as surplus while the test looks."""
    async with Controller(world, tmp_path):
        await create_scale_set(world, kube)
        await running_with_idle_runners(world, kube, 0)
        ers = await required(kube, ERS)
        name = "arc-standalone"
        body = {
            "apiVersion": f"{harness.GROUP}/{harness.VERSION}",
            "kind": ER,
            "metadata": {"name": name, "namespace": harness.NS, "finalizers": []},
            "spec": ers["spec"]["ephemeralRunnerSpec"],
        }
        mark, requests = passes.mark(), len(world.requests)
        await harness.create(kube, body)
        path = f"/apis/{harness.GROUP}/{harness.VERSION}/namespaces/{harness.NS}/ephemeralrunners/{name}"

        async def finalized() -> list[str]:
            runner = await harness.get(kube, ER, name)
            return list((runner or {}).get("metadata", {}).get("finalizers") or [])

        finalizers = await eventually(finalized, timeout=TIMEOUT, what="the runner's finalizers added")
        assert finalizers == [FINALIZER_EPHEMERAL_RUNNER, FINALIZER_RUNNER_REGISTRATION]

        first = next(p for p in passes.since(mark, ER) if p.snapshot.subject.name == name)
        assert first.snapshot.meta.get("finalizers") == []
        patches = [e for e in first.decision.effects if isinstance(e, MergePatch) and not e.subresource]
        assert [e.patch for e in patches] == [{"metadata": {"finalizers": finalizers}}]
        sent = [r for r in world.requests[requests:] if r.method == "PATCH" and r.path == path]
        assert [r.content_type for r in sent] == [MERGE_PATCH], sent
