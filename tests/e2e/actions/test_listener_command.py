"""``arcsm listener`` as a process: it reads an upstream-shaped config.json, reaches the emulated cluster
through ``--kubeconfig``, opens a message session on the fake GitHub and scales the EphemeralRunnerSet,
and on SIGTERM deletes its session and exits 0; a bad config exits 1 with one line on stderr.

Inputs: a ``World`` with a fake GitHub in this process, the installed console script in a subprocess.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from actions.client import ActionsClient, ClientSettings, RateLimit
from actions.credentials import PersonalAccessToken
from actions.models import RunnerScaleSet
from actions.redaction import SecretStr
from sim.github import GitHubFake, GitHubSettings
from sim.world import World
from tests.e2e.actions.runnersets import (
    PAT,
    SCALE_SET,
    config_json,
    create_namespace,
    create_runner_set,
    read_runner_set,
)
from tests.helpers import ARCSM, eventually

# RFC 3339 in UTC with milliseconds, e.g. 2026-12-01T23:25:38.123Z.
RFC3339_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with World(seed=1, github=GitHubFake(settings=GitHubSettings(long_poll_seconds=0.2), seed=1)) as w:
        w.github.allow_pat(PAT)
        yield w


async def listener_process(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        ARCSM, "listener", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )


async def test_the_listener_command_scales_and_stops_on_sigterm(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    async with ActionsClient(
        config_url=world.github.config_url("my-org"),
        credentials=PersonalAccessToken(token=SecretStr(PAT)),
        settings=ClientSettings(rate_limit=RateLimit(max_rate=1000)),
    ) as admin:
        scale_set = await admin.create_runner_scale_set(RunnerScaleSet(name=SCALE_SET, runner_group_id=1))
    await create_namespace(kube)
    await create_runner_set(kube, world.github.config_url("my-org"), scale_set.id)
    config = tmp_path / "config.json"
    raw = config_json(world.github.config_url("my-org"), scale_set.id, min_runners=2, max_runners=4)
    config.write_text(json.dumps({**raw, "log_format": "json", "log_level": "info"}))
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")

    proc = await listener_process("--config", str(config), "--kubeconfig", str(kubeconfig))
    try:
        await eventually(lambda: world.github.state.session_of(scale_set.id), what="a session", timeout=20)
        await eventually(
            lambda: _equals(read_runner_set(kube), (0, 2)), what="scaled to minRunners", timeout=10
        )
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 15)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.stderr is not None
    lines = (await proc.stderr.read()).decode().splitlines()
    assert code == 0, lines[-5:]
    assert world.github.state.session_of(scale_set.id) is None
    logged = [json.loads(line) for line in lines]
    assert all(RFC3339_MS.fullmatch(entry["time"]) for entry in logged), logged[0]
    assert any("message session" in entry["msg"] and "opened" in entry["msg"] for entry in logged)
    assert all(PAT not in line for line in lines)


async def _equals(value: Awaitable[object], expected: object) -> bool:
    return await value == expected


async def test_a_bad_config_exits_1_with_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(config_json("https://github.com/my-org", 0, min_runners=1, max_runners=2)))
    proc = await listener_process("--config", str(config))
    _, stderr = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert stderr.decode().splitlines() == [
        f"arcsm listener: the listener config {config}: runner_scale_set_id is missing or 0; "
        "it is the scale set's id on GitHub"
    ]
