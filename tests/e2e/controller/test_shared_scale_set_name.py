"""Two scale sets that name the same Actions scale set (same config URL, runner group and
``runnerScaleSetName``) never share it, and a scale set deleted behind arcsm's back is registered again.

Inputs: the real controller in-process (``harness.Controller``), the cluster and the fake GitHub over HTTP.
Outputs asserted on the world: the conditions, Events and annotations of the scale sets, the listeners, and
the scale sets the fake holds.

* The second claim is refused: its ``ConfigurationValid`` is False (``ScaleSetNameTaken``) naming the first
  owner as namespace/name, with one Warning Event; it gets no scale set id, no runner set and no listener,
  whether it lives beside the first or in another namespace.
* Deleting the refused one leaves the first one's scale set alone; deleting the first one frees the name,
  and the refused one then registers a scale set of its own and runs.
* A scale set deleted in GitHub (its id now answers 404) is noticed through its listener, which cannot open a
  session: the scale set gets a Warning Event (``ScaleSetGone``), registers again under a new id, and runs
  with a listener on the new id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from statemachines import arsconditions, conditions, naming
from statemachines.kinds import AL, ARS, ERS
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
SHARED = "shared-name"
OTHER_NS = "team-b"


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def scale_set_id(obj: dict[str, Any] | None) -> int | None:
    value = (
        ((obj or {}).get("metadata") or {}).get("annotations", {}).get(naming.ANNOTATION_RUNNER_SCALE_SET_ID)
    )
    return int(value) if value else None


async def configuration_valid(kube: client.ApiClient, name: str, namespace: str) -> dict[str, Any] | None:
    found = await harness.get(kube, ARS, name, namespace)
    return conditions.find((found or {}).get("status"), arsconditions.CONFIGURATION_VALID)


async def refused(kube: client.ApiClient, name: str, namespace: str) -> dict[str, Any] | None:
    found = await configuration_valid(kube, name, namespace)
    return found if found and found.get("status") == conditions.FALSE else None


async def events(kube: client.ApiClient, name: str, namespace: str, kind: str = "Warning") -> list[Any]:
    listed = await client.CoreV1Api(kube).list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={name},involvedObject.kind={ARS}"
    )
    return [event for event in listed.items if event.type == kind]


async def listeners_of(kube: client.ApiClient, name: str, namespace: str) -> list[dict[str, Any]]:
    return [
        al
        for al in await harness.items(kube, AL, CONTROLLER_NS)
        if (al.get("spec") or {}).get("autoscalingRunnerSetName") == name
        and (al.get("spec") or {}).get("autoscalingRunnerSetNamespace") == namespace
        and not al["metadata"].get("deletionTimestamp")
    ]


async def running(kube: client.ApiClient, name: str, namespace: str = NS) -> dict[str, Any] | None:
    """The scale set once it is Running at its generation with its listener; else None."""
    ars = await harness.get(kube, ARS, name, namespace)
    status = (ars or {}).get("status") or {}
    if ars is None or status.get("phase") != "Running":
        return None
    if status.get("observedGeneration") != ars["metadata"].get("generation"):
        return None
    return ars if await listeners_of(kube, name, namespace) else None


async def second_namespace(kube: client.ApiClient) -> None:
    await client.CoreV1Api(kube).create_namespace({"metadata": {"name": OTHER_NS}})
    await harness.create_secret(kube, OTHER_NS)


def body(world: World, name: str, namespace: str) -> dict[str, Any]:
    found = harness.scale_set_body(world, name, runnerScaleSetName=SHARED)
    found["metadata"]["namespace"] = namespace
    return found


async def first_and_refused(world: World, kube: client.ApiClient, namespace: str) -> int:
    """``first`` (in NS) Running on the scale set SHARED, then ``second`` (in ``namespace``) refused; the
    scale set's id."""
    await harness.create(kube, body(world, "first", NS))
    first = await eventually(
        lambda: running(kube, "first"), timeout=TIMEOUT, what="the first scale set Running"
    )
    owned = scale_set_id(first)
    assert owned is not None
    await harness.create(kube, body(world, "second", namespace))
    condition = await eventually(
        lambda: refused(kube, "second", namespace), timeout=TIMEOUT, what="the second claim refused"
    )
    assert condition["reason"] == "ScaleSetNameTaken"
    assert f"{NS}/first" in condition["message"] and SHARED in condition["message"]

    async def warned() -> list[Any]:
        return [e for e in await events(kube, "second", namespace) if e.reason == "ScaleSetNameTaken"]

    warning = (await eventually(warned, timeout=TIMEOUT, what="the refusal's Warning Event"))[0]
    assert f"{NS}/first" in warning.message
    second = await harness.required(kube, ARS, "second", namespace)
    assert scale_set_id(second) is None
    assert await harness.get(kube, ERS, "second", namespace) is None
    assert await listeners_of(kube, "second", namespace) == []
    assert len(world.github.state.scale_sets) == 1 and owned in world.github.state.scale_sets
    assert scale_set_id(await running(kube, "first")) == owned
    return owned


@pytest.mark.parametrize("namespace", [NS, OTHER_NS], ids=["same-namespace", "other-namespace"])
async def test_a_second_claim_on_a_scale_set_name_is_refused_naming_the_first_owner(
    world: World, kube: client.ApiClient, tmp_path: Path, namespace: str
) -> None:
    if namespace != NS:
        await second_namespace(kube)
    async with Controller(world, tmp_path):
        await first_and_refused(world, kube, namespace)


async def test_deleting_either_claim_never_deletes_the_scale_set_the_other_one_uses(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path):
        owned = await first_and_refused(world, kube, NS)
        third = body(world, "third", NS)
        await harness.create(kube, third)
        await eventually(lambda: refused(kube, "third", NS), timeout=TIMEOUT, what="the third claim refused")
        session = await eventually(
            lambda: world.github.state.session_of(owned), timeout=TIMEOUT, what="the first one's session"
        )

        # The refused one goes: the first one's scale set stays, and so does its session.
        await harness.delete(kube, ARS, "second", NS)

        async def second_gone() -> bool:
            return await harness.get(kube, ARS, "second", NS) is None

        await eventually(second_gone, timeout=TIMEOUT, what="the refused scale set deleted")
        assert owned in world.github.state.scale_sets
        kept = world.github.state.session_of(owned)
        assert kept is not None and kept.id == session.id
        assert scale_set_id(await running(kube, "first")) == owned

        # The owner goes: the name is free, and the claim still waiting registers a scale set of its own.
        await harness.delete(kube, ARS, "first", NS)
        third_running = await eventually(
            lambda: running(kube, "third"), timeout=TIMEOUT, what="the third scale set Running"
        )
        assert await harness.get(kube, ARS, "first", NS) is None
        assert owned not in world.github.state.scale_sets
        new_id = scale_set_id(third_running)
        assert new_id is not None and new_id in world.github.state.scale_sets
        valid = await configuration_valid(kube, "third", NS)
        assert valid is not None and valid["status"] == conditions.TRUE


async def test_a_scale_set_deleted_behind_its_back_is_registered_again(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    fake = world.github
    async with Controller(world, tmp_path):
        await harness.create(kube, harness.scale_set_body(world, "arc"))
        first = await eventually(lambda: running(kube, "arc"), timeout=TIMEOUT, what="the scale set Running")
        old = scale_set_id(first)
        assert old is not None
        await eventually(
            lambda: fake.state.session_of(old) is not None, timeout=TIMEOUT, what="its listener's session"
        )

        assert fake.delete_scale_set(old)

        async def registered_again() -> dict[str, Any] | None:
            found = await running(kube, "arc")
            new = scale_set_id(found)
            if new is None or new == old or new not in fake.state.scale_sets:
                return None
            # The listener is read again: the one ``running`` saw may be replaced since.
            ids = [al["spec"]["runnerScaleSetId"] for al in await listeners_of(kube, "arc", NS)]
            return found if ids == [new] and fake.state.session_of(new) else None

        await eventually(registered_again, timeout=TIMEOUT, what="the scale set registered again")
        assert fake.scale_set("arc") is not None and fake.scale_set("arc").id != old  # type: ignore[union-attr]
        gone = [e for e in await events(kube, "arc", NS) if e.reason == "ScaleSetGone"]
        assert gone and str(old) in gone[0].message
        ers = await harness.required(kube, ERS, "arc", NS)
        assert ers["spec"]["ephemeralRunnerSpec"]["runnerScaleSetId"] == scale_set_id(
            await harness.get(kube, ARS, "arc", NS)
        )
