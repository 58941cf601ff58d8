"""``kubectl logs`` of the simulated runner and listener pods in a world with the fake GitHub.

Inputs: ``World(github=GitHubFake(...))`` (0.2 s long polls, 0.05 s jobs, minimum runner version 2.330.0),
a kubeconfig for it, Debian's ``kubectl``; runner and listener pods built as the controller builds them
(the helpers of test_simulated_containers). Outputs: the runner's ``run.sh`` lines (connected, version,
listening, the job and its result; the deprecation error of an outdated one), the listener's log lines
in its config's format (JSON here), ``kubectl logs -f`` streaming each until its container ends, and no
secret in any pod log. Nothing is mocked.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from actions.client import ActionsClient, ClientSettings, RateLimit
from actions.credentials import PersonalAccessToken
from actions.models import RunnerScaleSet
from actions.redaction import SecretStr
from sim.github import GitHubFake, GitHubSettings
from sim.world import World
from tests.e2e.sim.test_simulated_containers import (
    CONTROLLER_NS,
    NS,
    PAT,
    create_runner_set,
    listener_config,
    listener_pod,
    runner_pod,
    terminated,
)
from tests.helpers import eventually
from tests.kubectl import KUBECTL, apply_flags, ok, requires_kubectl

pytestmark = requires_kubectl
RUNNER_TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ"


@pytest.fixture
async def world() -> AsyncIterator[World]:
    apply_flags()
    settings = GitHubSettings(long_poll_seconds=0.2, job_seconds=0.05, min_runner_version="2.330.0")
    async with World(seed=1, github=GitHubFake(settings=settings, seed=1)) as w:
        w.github.allow_pat(PAT)
        yield w


@pytest.fixture
async def actions(world: World) -> AsyncIterator[ActionsClient]:
    async with ActionsClient(
        config_url=world.github.config_url("my-org"),
        credentials=PersonalAccessToken(token=SecretStr(PAT)),
        settings=ClientSettings(rate_limit=RateLimit(max_rate=1000)),
    ) as c:
        yield c


class Follow:
    """``kubectl logs -f`` running in the background: its lines as they come, and its end."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    @classmethod
    async def start(cls, kubeconfig: Path, *args: str) -> Follow:
        assert KUBECTL is not None
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            str(kubeconfig),
            "logs",
            "-f",
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        return cls(proc)

    async def until(self, pattern: str, *, within: float = 30) -> None:
        """Read lines until one matches ``pattern`` (kubectl still running)."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(within):
            while not any(re.search(pattern, line) for line in self.lines):
                line = await self.proc.stdout.readline()
                assert line, f"kubectl logs -f ended before {pattern!r}: {self.lines}"
                self.lines.append(line.decode().rstrip("\n"))

    async def end(self, *, within: float = 30) -> list[str]:
        """The rest of the lines, once kubectl returns by itself (the container has ended)."""
        out, err = await asyncio.wait_for(self.proc.communicate(), within)
        assert self.proc.returncode == 0, err.decode()
        self.lines += out.decode().splitlines()
        return self.lines


async def test_kubectl_logs_follows_a_runner_and_a_listener_until_their_containers_end(
    world: World, kube: client.ApiClient, actions: ActionsClient, kubeconfig: Path
) -> None:
    fake = world.github
    scale_set_id = (await actions.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))).id
    await create_runner_set(kube)
    config = listener_config(world, scale_set_id, log_format="json", log_level="info")
    await listener_pod(kube, "arc-listener", config)
    await eventually(lambda: fake.state.session_of(scale_set_id), what="a message session", timeout=10)
    listener = await Follow.start(kubeconfig, "-n", CONTROLLER_NS, "arc-listener")
    await listener.until("message session .* opened")

    jit = await runner_pod(kube, actions, scale_set_id, "arc-runner-1", "2.330.0")
    await eventually(
        lambda: (a := fake.runner("arc-runner-1")) is not None and a.online, what="runner online"
    )
    runner = await Follow.start(kubeconfig, "-n", NS, "arc-runner-1")
    await runner.until("Listening for Jobs")  # streaming: the runner is idle, its container running
    (job,) = fake.queue_jobs(scale_set_id, 1)
    lines = await runner.end()  # returns once the runner's job is done and its container has exited
    assert lines[:3] == ["\u221a Connected to GitHub", "", "Current runner version: '2.330.0'"]
    assert [re.sub(RUNNER_TIME, "T", line) for line in lines[3:]] == [
        "T: Listening for Jobs",
        f"T: Running job: {job.display_name}",
        f"T: Job {job.display_name} completed with result: Succeeded",
    ]
    await terminated(kube, "arc-runner-1")
    assert await ok(kubeconfig, "logs", "arc-runner-1", "-n", NS) == "\n".join(lines) + "\n"

    await listener.until(f"job {job.runner_request_id} completed")
    await client.CoreV1Api(kube).delete_namespaced_pod("arc-listener", CONTROLLER_NS)
    entries = [json.loads(line) for line in await listener.end()]
    assert {e["level"] for e in entries} <= {"info", "warning"}
    assert all(e["logger"].startswith("actions.") and e["time"].endswith("Z") for e in entries)
    messages = [e["msg"] for e in entries]
    assert any(
        m.startswith(f"listener {NS}/arc-ers: job {job.runner_request_id} started on runner arc-runner-1")
        for m in messages
    )
    assert re.fullmatch(rf"listener {NS}/arc-ers: message session \S+ deleted", messages[-2]), messages[-2:]
    assert messages[-1] == f"listener {NS}/arc-ers stopped"

    admin = await actions.admin_connection()
    logs = "\n".join(lines) + "\n".join(listener.lines)
    assert not [s[:6] for s in {PAT, jit, admin.token.reveal()} if s in logs]


async def test_kubectl_logs_of_an_outdated_runner(
    world: World, kube: client.ApiClient, actions: ActionsClient, kubeconfig: Path
) -> None:
    scale_set_id = (await actions.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))).id
    await runner_pod(kube, actions, scale_set_id, "runner-old", "2.329.0")
    await terminated(kube, "runner-old")
    out = await ok(kubeconfig, "logs", "runner-old", "-n", NS)
    assert out.splitlines() == [
        "\u221a Connected to GitHub",
        "",
        "Current runner version: '2.329.0'",
        "An error occurred: Runner version v2.329.0 is deprecated and cannot receive messages.",
    ]
