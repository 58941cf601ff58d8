"""A listener deleted during an Actions outage leaves its message session; its replacement reclaims it.

Real composition root, real journal, emulated cluster with the fake GitHub; the listener pods run arcsm's
listener in the simulated kubelet with its default settings (a 409 on the session waits 30 s, as
upstream's does). The fake keeps a session nobody polls for two minutes, as the service does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes_asyncio import client

from actions.kubepatching import SESSION_ANNOTATION
from sim.github import GitHubFault
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.helpers import eventually

TIMEOUT = 60.0


@pytest.mark.both_worlds
async def test_a_listener_deleted_in_an_outage_leaves_a_session_its_replacement_reclaims(
    tmp_path: Path, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        fake = world.github
        async with Controller(world, tmp_path):
            await harness.create(kube, harness.scale_set_body(world, minRunners=0, maxRunners=2))

            async def recorded() -> str | None:
                scale_set = fake.scale_set("arc")
                session = fake.state.session_of(scale_set.id) if scale_set is not None else None
                ers = await harness.get(kube, "EphemeralRunnerSet", "arc")
                if session is None or ers is None:
                    return None
                annotations = ers["metadata"].get("annotations") or {}
                return session.id if annotations.get(SESSION_ANNOTATION) == session.id else None

            stale = await eventually(recorded, timeout=TIMEOUT, what="the listener's session recorded")
            (listener,) = await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
            old_uid = listener["metadata"]["uid"]

            fake.inject(GitHubFault(path="/tenant/", status=503, times=None))
            await harness.delete(kube, "AutoscalingListener", listener["metadata"]["name"], CONTROLLER_NS)

            async def old_pod_gone() -> bool:
                pods = (await client.CoreV1Api(kube).list_namespaced_pod(CONTROLLER_NS)).items
                return not any(
                    ref.uid == old_uid for p in pods for ref in (p.metadata.owner_references or [])
                )

            await eventually(old_pod_gone, timeout=TIMEOUT, what="the old listener pod gone")
            assert fake.calls_to("DELETE", f"/sessions/{stale}"), "the old listener tried to delete it"
            assert all(c.status == 503 for c in fake.calls_to("DELETE", f"/sessions/{stale}"))
            scale_set = fake.scale_set("arc")
            assert scale_set is not None
            assert (session := fake.state.session_of(scale_set.id)) is not None and session.id == stale
            fake.clear_faults()

            async def replaced() -> bool:
                session = fake.state.session_of(scale_set.id)
                return session is not None and session.id != stale

            await eventually(replaced, timeout=TIMEOUT, what="the replacement's session")
            conflicts = [c for c in fake.calls_to("POST", "/sessions") if c.status == 409]
            assert len(conflicts) <= 1, conflicts
            assert [c.status for c in fake.calls_to("DELETE", f"/sessions/{stale}")][-1] == 204

            fake.queue_jobs(scale_set.id, 1)

            async def runner_made() -> bool:
                return bool(await harness.items(kube, "EphemeralRunner"))

            await eventually(runner_made, timeout=TIMEOUT, what="a runner for the queued job")
