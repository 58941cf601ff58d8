"""Scale set names of any valid length run: every name arcsm derives from one fits the API's limits.

Upstream's chart caps a scale set name at 45 characters, which is what keeps the names its controller
derives (``<name>-<hash>-listener`` for the listener pod, ServiceAccount, Role and RoleBinding; the
``actions.github.com/scale-set-name`` label) within 63. Applied directly, an AutoscalingRunnerSet may
have any DNS subdomain name, and the emulated API server refuses an over-long name or label value as
kube-apiserver does. Through the real controller, each name below reaches Running with its listener
process up and runs a job, beside a short-named scale set.

A derived object the API server refuses for another reason (metadata a user put in the spec that is not a
label) is bad input: its rows are in ``test_controller_bad_input``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from sim.github.records import JobState
from sim.world import World
from statemachines import conditions, desired, naming
from statemachines.snapshots import Settings
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
SHORT = "arc"
NAMES = {
    45: "l" * 45,  # upstream's chart cap: the derived names are upstream's
    46: "m" * 46,  # the listener name would be 64 characters
    63: "runners-" + "n" * 55,  # the longest name a label value can hold
    120: "team.runners-" + "o" * 107,  # a DNS subdomain: shortened names and labels
}


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
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
