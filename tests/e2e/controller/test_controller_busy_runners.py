"""A runner the service said is running a job is asked again later, and goes once its job is done.

Inputs: an emulated cluster and the fake GitHub, an EphemeralRunnerSet of its own (no listener, so no
runner status carries a job), runner containers that connect with their JIT config and then never exit
(a runner process stuck after its job: only a RemoveRunner can take it out), and the controller
in-process on a real journal. The runner takes a job, the set is scaled to zero, RemoveRunner answers
JobStillRunning; the job then completes. Nothing is mocked.
"""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client

from actions.client import ActionsClient
from actions.credentials import PersonalAccessToken
from actions.models import RunnerScaleSet
from actions.redaction import SecretStr
from sim import containers, runtimes
from sim.world import World
from store.records import RecordType
from tests.e2e.controller import harness
from tests.helpers import eventually

RUNNER_VERSION = "2.330.0"


def stuck_runner(world: World) -> runtimes.Runtime:
    async def run(ctx: runtimes.ContainerContext) -> int:
        jit_config = containers.env_value(ctx, containers.JIT_CONFIG_ENV)
        assert jit_config
        world.github.register_runner(jit_config, RUNNER_VERSION)
        await ctx.stopping.wait()
        return runtimes.SIGTERM_EXIT

    return run


def runner_set(world: World, scale_set_id: int, *, replicas: int, patch_id: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{harness.GROUP}/{harness.VERSION}",
        "kind": "EphemeralRunnerSet",
        "metadata": {"name": "busy", "namespace": harness.NS},
        "spec": {
            "replicas": replicas,
            "patchID": patch_id,
            "ephemeralRunnerSpec": {
                "githubConfigUrl": world.github_url + "/org",
                "githubConfigSecret": harness.SECRET,
                "runnerScaleSetId": scale_set_id,
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "runner", "image": harness.RUNNER_IMAGE}],
                },
            },
        },
    }


async def test_a_busy_runner_is_removed_once_its_job_has_finished(tmp_path: Any) -> None:
    async with harness.github_world() as world:
        world.kubelet.runtimes.register_name("runner", stuck_runner(world))
        actions = ActionsClient(
            config_url=world.github_url + "/org",
            credentials=PersonalAccessToken(token=SecretStr(harness.PAT)),
        )
        async with actions, client.ApiClient(world.configuration()) as kube:
            scale_set = await actions.create_runner_scale_set(RunnerScaleSet(name="busy", runner_group_id=1))
            await harness.create_secret(kube)
            await harness.create(kube, runner_set(world, scale_set.id, replicas=1, patch_id=1))
            async with harness.Controller(world, tmp_path) as controller:

                async def registered() -> dict[str, Any] | None:
                    (runner, *_) = await harness.items(kube, "EphemeralRunner") or [None]
                    if runner is None or not (runner.get("status") or {}).get("runnerId"):
                        return None
                    online = world.github.runner(runner["metadata"]["name"])
                    return runner if online is not None and online.online else None

                runner = await eventually(registered, timeout=30, what="the runner online")
                name, runner_id = runner["metadata"]["name"], runner["status"]["runnerId"]

                session = await actions.create_message_session(scale_set.id, "test")
                (job,) = world.github.queue_jobs(scale_set.id, 1)
                token = session.message_queue_access_token
                await actions.get_message(session.message_queue_url, token, last_message_id=0, max_capacity=1)
                await actions.acquire_jobs(scale_set.id, token, [job.runner_request_id])
                assert await world.github.next_job_for(runner_id, timeout=5) is not None

                agent = f"/agents/{runner_id}"
                await harness.merge_patch(
                    kube, "EphemeralRunnerSet", "busy", {"spec": {"replicas": 0, "patchID": 0}}
                )

                async def refused() -> bool:
                    return any(c.status == 400 for c in world.github.calls_to("DELETE", agent))

                await eventually(refused, timeout=30, what="RemoveRunner answered JobStillRunning")
                world.github.complete_job(job.runner_request_id)

                async def removed() -> bool:
                    return await harness.get(kube, "EphemeralRunner", name) is None

                await eventually(removed, timeout=90, what="the runner removed after its job")
                asked = [c.status for c in world.github.calls_to("DELETE", agent)]
                assert asked[0] == 400 and asked[-1] == 204, asked

                timers = await harness.journaled(controller.journal, {RecordType.TIMER})
                assert any(t.kind == "EphemeralRunnerSet" and t.name == "busy" for t in timers)
