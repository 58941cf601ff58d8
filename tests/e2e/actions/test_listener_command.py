"""``arcsm listener`` as a process: it reads an upstream-shaped config.json, reaches the emulated cluster
through ``--kubeconfig`` or ``$KUBECONFIG`` (the flag winning), opens a message session on the fake
GitHub and scales the EphemeralRunnerSet, and on SIGTERM deletes its session and exits 0, having imported
nothing of the emulator; a bad config exits 1 with one line on stderr. A config whose credentials are in
Azure Key Vault has them read from the fake Azure, through the vault's proxy, trusting the CA bundle
``SSL_CERT_FILE`` names; a vault without the secret ends it with exit 1 and an error saying so.

Inputs: a ``World`` with a fake GitHub in this process, the installed console script in a subprocess.
"""

from __future__ import annotations

import asyncio
import json
import os
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
from tests import azurevault
from tests.e2e.actions.runnersets import (
    PAT,
    SCALE_SET,
    config_json,
    create_namespace,
    create_runner_set,
    read_runner_set,
)
from tests.helpers import (
    ARCSM,
    CLUSTER_VARIABLES,
    eventually,
    kubeconfig_as,
    modules_in,
    of_packages,
    reporting_modules,
)

# RFC 3339 in UTC with milliseconds, e.g. 2026-12-01T23:25:38.123Z.
RFC3339_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with World(seed=1, github=GitHubFake(settings=GitHubSettings(long_poll_seconds=0.2), seed=1)) as w:
        w.github.allow_pat(PAT)
        yield w


async def listener_process(*args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        ARCSM, "listener", *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )


async def prepare(world: World, kube: client.ApiClient, tmp_path: Path) -> tuple[int, Path]:
    """A scale set on the fake GitHub, its EphemeralRunnerSet, and a listener config.json (JSON logs)
    for it: the scale set's id and the config's path."""
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
    return scale_set.id, config


async def scale_and_stop(
    world: World, kube: client.ApiClient, scale_set_id: int, *args: str, env: dict[str, str] | None = None
) -> list[str]:
    """``arcsm listener ARGS`` until it opened its session and scaled the runner set to minRunners, then
    SIGTERM: it must exit 0 with its session deleted. Its stderr lines."""
    proc = await listener_process(*args, env=env)
    try:
        await eventually(lambda: world.github.state.session_of(scale_set_id), what="a session", timeout=20)
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
    assert world.github.state.session_of(scale_set_id) is None
    return lines


def patched_by(world: World) -> set[str]:
    """Who patched the EphemeralRunnerSet: the tokens of those requests, as the emulator logged them."""
    return {r.user for r in world.requests if r.method == "PATCH" and "/ephemeralrunnersets/" in r.path}


def environment(tmp_path: Path, **variables: str) -> dict[str, str]:
    """This process's environment without what points at a cluster, a home of its own, and ``variables``."""
    kept = {k: v for k, v in os.environ.items() if k not in CLUSTER_VARIABLES}
    return {**kept, "HOME": str(tmp_path / "home"), **variables}


async def test_the_listener_command_scales_and_stops_on_sigterm(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    scale_set_id, config = await prepare(world, kube, tmp_path)
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    lines = await scale_and_stop(
        world, kube, scale_set_id, "--config", str(config), "--kubeconfig", str(kubeconfig)
    )
    logged = [json.loads(line) for line in lines]
    assert all(RFC3339_MS.fullmatch(entry["time"]) for entry in logged), logged[0]
    assert any("message session" in entry["msg"] and "opened" in entry["msg"] for entry in logged)
    assert all(PAT not in line for line in lines)


async def test_the_listener_finds_the_cluster_through_kubeconfig_and_imports_no_emulator(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    scale_set_id, config = await prepare(world, kube, tmp_path)
    from_env = kubeconfig_as(world, tmp_path / "from-env", "env-user")
    report_env, report = reporting_modules(tmp_path)
    listed = os.pathsep.join([str(tmp_path / "missing"), str(from_env)])
    env = environment(tmp_path, KUBECONFIG=listed, **report_env)
    await scale_and_stop(world, kube, scale_set_id, "--config", str(config), env=env)
    assert patched_by(world) == {"env-user"}
    modules = modules_in(report)
    assert "actions.listener" in modules
    assert not of_packages(modules, "sim", "fastapi", "uvicorn"), of_packages(
        modules, "sim", "fastapi", "uvicorn"
    )


async def test_the_listener_s_kubeconfig_flag_wins_over_kubeconfig(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    scale_set_id, config = await prepare(world, kube, tmp_path)
    flag = kubeconfig_as(world, tmp_path / "flag", "flag-user")
    env = environment(tmp_path, KUBECONFIG=str(kubeconfig_as(world, tmp_path / "from-env", "env-user")))
    await scale_and_stop(
        world, kube, scale_set_id, "--config", str(config), "--kubeconfig", str(flag), env=env
    )
    assert patched_by(world) == {"flag-user"}


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


def with_vault(config: Path, vault: azurevault.Vault, lookup_key: str = azurevault.VAULT_SECRET) -> None:
    """Rewrite ``config`` as upstream's controller writes a vault scale set's: no credentials, the vault
    named (here with its proxy, in the form of Go's httpproxy.Config)."""
    raw = json.loads(config.read_text())
    raw.update(
        github_token="",
        vault_type="azure_key_vault",
        vault_lookup_key=lookup_key,
        azure_key_vault={
            "url": vault.url,
            "tenant_id": azurevault.TENANT,
            "client_id": azurevault.CLIENT,
            "certificate_path": str(vault.certificate_path),
            "proxy": {"HTTPProxy": "", "HTTPSProxy": vault.proxy_url_with_credentials, "NoProxy": ""},
        },
    )
    config.write_text(json.dumps(raw))


async def test_the_listener_command_reads_its_credentials_from_azure_key_vault(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    scale_set_id, config = await prepare(world, kube, tmp_path)
    async with azurevault.serving(tmp_path / "akv", token=PAT) as vault:
        with_vault(config, vault)
        env = environment(tmp_path, SSL_CERT_FILE=str(vault.ca_path))
        kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
        lines = await scale_and_stop(
            world, kube, scale_set_id, "--config", str(config), "--kubeconfig", str(kubeconfig), env=env
        )
        assert vault.fake.requests_to(f"/secrets/{azurevault.VAULT_SECRET}")
        assert {"login.microsoftonline.com", f"{azurevault.VAULT}.vault.azure.net"} <= set(
            vault.proxy.tunnelled
        )
    said = "\n".join(lines)
    assert not [s for s in (PAT, *vault.secrets()) if s in said]


async def test_a_listener_whose_vault_has_no_such_secret_exits_1_saying_so(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    _, config = await prepare(world, kube, tmp_path)
    async with azurevault.serving(tmp_path / "akv", token=PAT) as vault:
        with_vault(config, vault, lookup_key="no-such-secret")
        env = environment(tmp_path, SSL_CERT_FILE=str(vault.ca_path))
        kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
        proc = await listener_process("--config", str(config), "--kubeconfig", str(kubeconfig), env=env)
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1
    [line] = [json.loads(line)["msg"] for line in stderr.decode().splitlines() if '"error"' in line]
    assert f"the Key Vault {vault.url} has no secret 'no-such-secret'" in line, line
    assert azurevault.PROXY_PASSWORD not in stderr.decode()
