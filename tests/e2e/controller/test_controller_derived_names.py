"""Scale set names of any valid length run: every name arcsm derives from one fits the API's limits.

Upstream's chart caps a scale set name at 45 characters, which is what keeps the names its controller
derives (``<name>-<hash>-listener`` for the listener pod, ServiceAccount, Role and RoleBinding; the
``actions.github.com/scale-set-name`` label) within 63. Applied directly, an AutoscalingRunnerSet may
have any DNS subdomain name, and the emulated API server refuses an over-long name or label value as
kube-apiserver does. Through the real controller, each name below reaches Running with its listener
process up and runs a job, beside a short-named scale set.

A derived object the API server refuses for another reason (metadata a user put in the spec that is not a
label) is reported on the scale set (``Ready`` False with a reason and a one-line message naming the
object, one Warning Event, an error log line), asked again with a growing backoff rather than every
second, and built once the spec is fixed, while the short-named scale set beside it runs.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.github.records import JobState
from sim.world import World
from statemachines import (
    arsconditions,
    conditions,
    desired,
    ephemeralrunnersets,
    naming,
    pods,
    refusals,
)
from statemachines.snapshots import Settings
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, Controller
from tests.helpers import eventually

TIMEOUT = 60.0
SHORT = "arc"
NAMES = {
    45: "l" * 45,  # upstream's chart cap: the derived names are upstream's
    46: "m" * 46,  # the listener name would be 64 characters
    63: "runners-" + "n" * 55,  # the longest name a label value can hold
    120: "team.runners-" + "o" * 107,  # a DNS subdomain: shortened names and labels
}


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with harness.github_world() as w:
        yield w


async def listener_running(kube: client.ApiClient, name: str) -> bool:
    ars = await harness.get(kube, "AutoscalingRunnerSet", name)
    if ars is None or (ars.get("status") or {}).get("phase") != "Running":
        return False
    ready = conditions.find(ars.get("status"), conditions.READY)
    if ready is None or ready["status"] != "True":
        return False
    listener = desired.listener_ref(ars, harness_settings()).name
    pods = (await client.CoreV1Api(kube).list_namespaced_pod(CONTROLLER_NS)).items
    return any(p.metadata.name == listener and p.status.phase == "Running" for p in pods)


def harness_settings() -> Settings:
    return Settings(controller_namespace=CONTROLLER_NS)


async def test_scale_set_names_of_any_length_run_a_job(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with Controller(world, tmp_path):
        await harness.create(kube, harness.scale_set_body(world, SHORT))
        for name in NAMES.values():
            await harness.create(kube, harness.scale_set_body(world, name))

        for length, name in [(0, SHORT), *NAMES.items()]:

            async def running(name: str = name) -> bool:
                return await listener_running(kube, name)

            await eventually(
                running, timeout=TIMEOUT, what=f"the {length or len(SHORT)}-character set with its listener"
            )

        for name in [SHORT, *NAMES.values()]:
            scale_set = world.github.scale_set(name)
            assert scale_set is not None, name
            (job,) = world.github.queue_jobs(scale_set.id, 1)

            async def done(job: object = job) -> bool:
                return getattr(job, "state", None) is JobState.COMPLETED

            await eventually(done, timeout=TIMEOUT, what=f"a job run on the {len(name)}-character set")
            assert job.result == "succeeded"

        # The listener objects carry the derived names, within the limits, and short names are upstream's.
        for name in [SHORT, *NAMES.values()]:
            ars = await harness.required(kube, "AutoscalingRunnerSet", name)
            listener = desired.listener_ref(ars, harness_settings()).name
            assert len(listener) <= 63
            role = await client.RbacAuthorizationV1Api(kube).read_namespaced_role(listener, NS)
            assert role.metadata.labels["auto-scaling-listener-name"] == listener
            ers = await harness.required(kube, "EphemeralRunnerSet", name)
            assert ers["metadata"]["labels"][naming.LABEL_SCALE_SET_NAME] == naming.name_label(name)
        assert len(naming.name_label(NAMES[63])) == 63 and naming.name_label(NAMES[63]) == NAMES[63]
        ars = await harness.required(kube, "AutoscalingRunnerSet", NAMES[45])
        assert desired.listener_ref(ars, harness_settings()).name.startswith(NAMES[45] + "-")


# -- a derived object the API server refuses ----------------------------------------------------------------

BAD = "bad"
# Not a label key (a space): the scale set takes it, the listener's Role built from it is refused.
BAD_LABELS = {"labels": {"not a key": "x"}}
FIXED_LABELS = {"labels": {"not a key": None, "team": "x"}}  # a merge patch: the bad key removed


async def ready_of(kube: client.ApiClient, name: str) -> dict[str, Any] | None:
    found = await harness.get(kube, "AutoscalingRunnerSet", name)
    return conditions.find((found or {}).get("status"), conditions.READY)


async def warnings(kube: client.ApiClient, name: str) -> list[tuple[str, str]]:
    events = await client.CoreV1Api(kube).list_namespaced_event(
        NS, field_selector=f"involvedObject.name={name},involvedObject.kind=AutoscalingRunnerSet"
    )
    return [(e.reason, e.message) for e in events.items if e.type == "Warning"]


async def refusals_journaled(journal: Path, kind: str) -> list[datetime]:
    """When the API server refused a create of a ``kind`` (journal times, in order)."""
    results = await harness.journaled(journal, {RecordType.EFFECT_RESULT})
    return [
        parse_time(r.at)
        for r in results
        if str(r.body.get("key", "")).startswith(f"create:{kind}/") and r.body.get("error") == "Invalid"
    ]


def parse_time(value: object) -> datetime:
    parsed = pods.parse_time(value)
    assert parsed is not None
    return parsed


async def refused_story(
    world: World,
    kube: client.ApiClient,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    *,
    field: str,
    kind: str,
    reason: str,
    **spec: Any,
) -> None:
    """The scale set whose ``field`` metadata builds an object the API server refuses reports it (Ready
    False, one Warning Event, an error log line), asks again with a growing backoff, and runs once the
    field is fixed; the good scale set beside it runs throughout."""
    caplog.set_level(logging.ERROR, logger="controller.executing")
    async with Controller(world, tmp_path) as controller:
        await harness.create(kube, harness.scale_set_body(world, SHORT))
        await harness.create(kube, harness.scale_set_body(world, BAD, **{field: BAD_LABELS}, **spec))

        async def reported() -> bool:
            ready = await ready_of(kube, BAD)
            return (
                ready is not None
                and (ready["status"], ready["reason"]) == ("False", reason)
                and reason in [r for r, _ in await warnings(kube, BAD)]
            )

        await eventually(reported, timeout=TIMEOUT, what=f"Ready False ({reason}) and its Event")
        ready = await ready_of(kube, BAD)
        assert ready is not None
        assert "\n" not in ready["message"] and f"refused to create the {kind} " in ready["message"]
        assert "not a key" in ready["message"], ready["message"]
        await eventually(lambda: listener_running(kube, SHORT), timeout=TIMEOUT, what="the good set running")

        # Asked again with a backoff, not once a second: at least 5 s apart, and never closer together.
        async def three_refusals() -> bool:
            return len(await refusals_journaled(controller.journal, kind)) >= 3

        await eventually(three_refusals, timeout=TIMEOUT, what=f"three refused {kind} creates")
        times = await refusals_journaled(controller.journal, kind)
        gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
        assert all(gap >= refusals.RETRY_MIN - 0.5 for gap in gaps), gaps
        assert gaps[1] >= gaps[0] - 0.5, gaps
        assert [r for r, _ in await warnings(kube, BAD)].count(reason) == 1
        logged = [r for r in caplog.records if r.levelno == logging.ERROR and "refused" in r.getMessage()]
        assert logged and f"create:{kind}/" in logged[0].getMessage()

        await harness.merge_patch(kube, "AutoscalingRunnerSet", BAD, {"spec": {field: FIXED_LABELS}})
        await eventually(lambda: listener_running(kube, BAD), timeout=TIMEOUT, what="the fixed set running")
        ready = await ready_of(kube, BAD)
        assert ready is not None and ready["status"] == "True"
        assert await listener_running(kube, SHORT)


async def test_a_refused_listener_role_is_reported_and_retried_with_backoff(
    world: World, kube: client.ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await refused_story(
        world,
        kube,
        tmp_path,
        caplog,
        field="listenerRoleMetadata",
        kind="Role",
        reason="ListenerObjectRejected",
    )


async def test_a_refused_runner_set_is_reported_and_retried_with_backoff(
    world: World, kube: client.ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await refused_story(
        world,
        kube,
        tmp_path,
        caplog,
        field="ephemeralRunnerSetMetadata",
        kind="EphemeralRunnerSet",
        reason=arsconditions.RUNNER_SET_REJECTED,
    )


async def test_a_refused_runner_is_reported_and_retried_with_backoff(
    world: World, kube: client.ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await refused_story(
        world,
        kube,
        tmp_path,
        caplog,
        field="ephemeralRunnerMetadata",
        kind="EphemeralRunner",
        reason=ephemeralrunnersets.RUNNER_REJECTED,
        minRunners=1,
    )
