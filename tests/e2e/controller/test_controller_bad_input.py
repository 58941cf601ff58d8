"""Bad input on one scale set never stalls another: each case beside a good scale set, through the real
controller, the emulated cluster and the fake GitHub.

For each bad input the bad scale set gets ``ConfigurationValid`` False with the case's reason and a
Warning Event with that reason (emitted once), stays out of Running with nothing created for it, while
the good one reaches Running; once the input is fixed the bad one reaches Running with
``ConfigurationValid`` True.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from statemachines import arsconditions, conditions
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, PAT, Controller
from tests.helpers import eventually

TIMEOUT = 20.0
BAD = "bad"
GOOD = "good"
BAD_SECRET = "bad-config"
REJECTED_PAT = "ghp_notAllowedByTheService000000000000001"

Fix = Callable[[client.ApiClient], Awaitable[None]]


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with harness.github_world() as w:
        yield w


async def configuration(kube: client.ApiClient, name: str = BAD) -> dict[str, Any] | None:
    found = await harness.get(kube, "AutoscalingRunnerSet", name)
    return conditions.find((found or {}).get("status"), arsconditions.CONFIGURATION_VALID)


async def warning_reasons(kube: client.ApiClient, name: str = BAD) -> list[str]:
    events = await client.CoreV1Api(kube).list_namespaced_event(
        NS, field_selector=f"involvedObject.name={name},involvedObject.kind=AutoscalingRunnerSet"
    )
    return [event.reason for event in events.items if event.type == "Warning"]


async def write_secret(kube: client.ApiClient, data: dict[str, str], name: str = BAD_SECRET) -> None:
    """Create the Secret ``name`` holding ``data``, or replace what it holds."""
    core = client.CoreV1Api(kube)
    body = {"metadata": {"name": name, "namespace": NS}, "stringData": data}
    existing = [s for s in (await core.list_namespaced_secret(NS)).items if s.metadata.name == name]
    if existing:
        await core.replace_namespaced_secret(name, NS, body)
    else:
        await core.create_namespaced_secret(NS, body)


async def patch_spec(kube: client.ApiClient, spec: dict[str, Any]) -> None:
    await harness.merge_patch(kube, "AutoscalingRunnerSet", BAD, {"spec": spec}, NS)


async def events_journaled(journal: Path, reason: str) -> int:
    """How many Events of ``reason`` the controller decided to emit on the bad scale set."""
    decisions = await harness.journaled(journal, {RecordType.DECISION})
    return sum(
        1
        for record in decisions
        if record.name == BAD
        for effect in record.body["effects"]
        if effect.startswith("EmitEvent:") and effect.endswith(f":{reason}")
    )


async def bad_input_story(
    world: World, kube: client.ApiClient, tmp_path: Path, bad: dict[str, Any], reason: str, fix: Fix
) -> None:
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, harness.scale_set_body(world, GOOD))
        await harness.create(kube, harness.scale_set_body(world, BAD, **bad))

        async def reported() -> bool:
            found = await configuration(kube)
            return (
                found is not None
                and (found["status"], found["reason"]) == ("False", reason)
                and reason in await warning_reasons(kube)
            )

        await eventually(reported, timeout=TIMEOUT, what=f"ConfigurationValid False ({reason}) and its Event")

        async def good_running() -> bool:
            return await harness.phase(kube, GOOD) == "Running"

        await eventually(good_running, timeout=TIMEOUT, what="the good scale set Running beside the bad one")
        good = await harness.get(kube, "AutoscalingRunnerSet", GOOD)
        ready = conditions.find((good or {}).get("status"), conditions.READY)
        assert ready is not None and ready["status"] == "True"
        found = await configuration(kube)
        assert found is not None and "\n" not in found["message"]
        assert PAT not in found["message"] and REJECTED_PAT not in found["message"]
        assert await harness.phase(kube, BAD) == "Pending"
        assert await harness.get(kube, "EphemeralRunnerSet", BAD) is None
        listeners = await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
        assert [al["spec"]["autoscalingRunnerSetName"] for al in listeners] == [GOOD]
        assert world.github.scale_set(BAD) is None

        await fix(kube)

        async def recovered() -> bool:
            found = await configuration(kube)
            return (
                await harness.phase(kube, BAD) == "Running"
                and found is not None
                and (found["status"], found["reason"]) == ("True", arsconditions.VALID)
            )

        await eventually(
            recovered, timeout=TIMEOUT, what="the fixed scale set Running with a valid configuration"
        )
        assert world.github.scale_set(BAD) is not None
        assert await harness.phase(kube, GOOD) == "Running"
        # One Event for the problem, however many times it was retried.
        assert await events_journaled(controller.journal, reason) == 1


async def test_a_malformed_config_url(world: World, kube: client.ApiClient, tmp_path: Path) -> None:
    async def fix(kube: client.ApiClient) -> None:
        await patch_spec(kube, {"githubConfigUrl": world.github_url + "/org"})

    bad = {"githubConfigUrl": world.github_url + "/org/repo/extra"}
    await bad_input_story(world, kube, tmp_path, bad, "InvalidConfigUrl", fix)


async def test_a_missing_config_secret(world: World, kube: client.ApiClient, tmp_path: Path) -> None:
    async def fix(kube: client.ApiClient) -> None:
        await write_secret(kube, {"github_token": PAT})

    bad = {"githubConfigSecret": BAD_SECRET}
    await bad_input_story(world, kube, tmp_path, bad, "ConfigSecretMissing", fix)


async def test_an_incomplete_config_secret(world: World, kube: client.ApiClient, tmp_path: Path) -> None:
    await write_secret(kube, {"github_app_id": "12345"})

    async def fix(kube: client.ApiClient) -> None:
        await write_secret(kube, {"github_token": PAT})

    bad = {"githubConfigSecret": BAD_SECRET}
    await bad_input_story(world, kube, tmp_path, bad, "ConfigSecretIncomplete", fix)


async def test_max_runners_below_min_runners(world: World, kube: client.ApiClient, tmp_path: Path) -> None:
    async def fix(kube: client.ApiClient) -> None:
        await patch_spec(kube, {"minRunners": 0})

    await bad_input_story(
        world, kube, tmp_path, {"minRunners": 2, "maxRunners": 1}, "InvalidRunnerLimits", fix
    )


async def test_credentials_the_service_rejects(world: World, kube: client.ApiClient, tmp_path: Path) -> None:
    await write_secret(kube, {"github_token": REJECTED_PAT})

    async def fix(kube: client.ApiClient) -> None:
        await write_secret(kube, {"github_token": PAT})

    bad = {"githubConfigSecret": BAD_SECRET}
    await bad_input_story(world, kube, tmp_path, bad, "CredentialsRejected", fix)
