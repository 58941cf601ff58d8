"""Bad input on one scale set never stalls another, and the user is told: every bad input the controller
handles, one row of ``CASES`` each, run beside a good scale set through the real controller, the emulated
cluster and the fake GitHub.

For each row the bad scale set gets the row's condition False with the row's reason, one Warning Event
with that reason (emitted once, however often the input is retried) and an error-level log line; what
must not exist for it does not (for input the spec shows: no runner set, no listener, no registration in
the Actions service; for a pod template the API server refuses: no runner pod); the good one reaches
Running; once the input is fixed the bad one reaches Running with the condition True.

Adding a bad input is adding a ``Case`` to ``CASES``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from actions.client import ClientSettings
from actions.retrying import RetryPolicy
from sim.github.faults import GitHubFault
from sim.world import World
from statemachines import arsconditions, conditions, kinds
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, PAT, Controller
from tests.helpers import eventually

TIMEOUT = 30.0
BAD = "bad"
GOOD = "good"
BAD_SECRET = "bad-config"
REJECTED_PAT = "ghp_notAllowedByTheService000000000000001"
# Nothing listens on port 1 of the loopback: a connection there is refused at once.
NOWHERE = "http://127.0.0.1:1/org"
SLOW_ORG = "slow-org"
# The Actions clients give up on a request after this long, and retry once, so a config URL that does not
# answer is reported within seconds (the default is minutes).
CLIENTS = ClientSettings(timeout=2.0, retry=RetryPolicy(retries=1, min_wait=0.1, max_wait=0.1))
# A runner pod the API server refuses: it requests more CPU than its limit.
REFUSED_TEMPLATE = {
    "spec": {
        "containers": [
            {
                "name": "runner",
                "image": harness.RUNNER_IMAGE,
                "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            }
        ]
    }
}
AZURE_KEY_VAULT = {
    "type": "azure_key_vault",
    "azureKeyVault": {
        "url": "https://arcsm.vault.azure.net",
        "tenantId": "tenant",
        "clientId": "client",
        "certificatePath": "/etc/vault/cert.pem",
    },
}
GOOD_TEMPLATE = {"spec": {"containers": [{"name": "runner", "image": harness.RUNNER_IMAGE}]}}

Kube = client.ApiClient
Step = Callable[[World, Kube], Awaitable[None]]


async def nothing(world: World, kube: Kube) -> None:
    return None


@dataclass(frozen=True)
class Case:
    """One bad input: the bad scale set's spec fields, what it then reports, and how a user fixes it."""

    id: str
    spec: Callable[[World], dict[str, Any]]
    reason: str
    fix: Step
    condition: str = arsconditions.CONFIGURATION_VALID
    setup: Step = nothing
    # The problem shows only once runners are made: the bad scale set runs, its runners' pods are refused.
    runs: bool = False

    def holds(self, found: dict[str, Any] | None) -> bool:
        """Whether ``found``, the observed condition, says the input is fixed."""
        valid = self.condition != arsconditions.CONFIGURATION_VALID or (found or {}).get("reason") == "Valid"
        return found is not None and found["status"] == "True" and valid


async def write_secret(kube: Kube, data: dict[str, str], name: str = BAD_SECRET) -> None:
    """Create the Secret ``name`` holding ``data``, or replace what it holds."""
    core = client.CoreV1Api(kube)
    body = {"metadata": {"name": name, "namespace": NS}, "stringData": data}
    existing = [s for s in (await core.list_namespaced_secret(NS)).items if s.metadata.name == name]
    if existing:
        await core.replace_namespaced_secret(name, NS, body)
    else:
        await core.create_namespaced_secret(NS, body)


def patch_spec(spec: dict[str, Any]) -> Step:
    async def fix(world: World, kube: Kube) -> None:
        await harness.merge_patch(kube, "AutoscalingRunnerSet", BAD, {"spec": spec}, NS)

    return fix


def secret_holding(data: dict[str, str]) -> Step:
    async def write(world: World, kube: Kube) -> None:
        await write_secret(kube, data)

    return write


async def the_good_url(world: World, kube: Kube) -> None:
    await patch_spec({"githubConfigUrl": world.github_url + "/org"})(world, kube)


async def the_runner_group_created(world: World, kube: Kube) -> None:
    world.github.add_runner_group("org", "blue")


async def a_slow_github(world: World, kube: Kube) -> None:
    world.github.inject(GitHubFault(path=SLOW_ORG, latency=6.0, times=None))


async def github_answering(world: World, kube: Kube) -> None:
    world.github.clear_faults()


CASES = [
    Case(
        "malformed-config-url",
        lambda w: {"githubConfigUrl": w.github_url + "/org/repo/extra"},
        "InvalidConfigUrl",
        the_good_url,
    ),
    Case(
        "unicode-in-the-config-url-path",
        lambda w: {"githubConfigUrl": w.github_url + "/örg"},
        "InvalidConfigUrl",
        the_good_url,
    ),
    Case(
        "config-url-refusing-connections",
        lambda w: {"githubConfigUrl": NOWHERE},
        "ConfigUrlUnreachable",
        the_good_url,
    ),
    Case(
        "config-url-not-answering-in-time",
        lambda w: {"githubConfigUrl": f"{w.github_url}/{SLOW_ORG}"},
        "ConfigUrlUnreachable",
        github_answering,
        setup=a_slow_github,
    ),
    Case(
        "missing-config-secret",
        lambda w: {"githubConfigSecret": BAD_SECRET},
        "ConfigSecretMissing",
        secret_holding({"github_token": PAT}),
    ),
    Case(
        "incomplete-config-secret",
        lambda w: {"githubConfigSecret": BAD_SECRET},
        "ConfigSecretIncomplete",
        secret_holding({"github_token": PAT}),
        setup=secret_holding({"github_app_id": "12345"}),
    ),
    Case(
        "credentials-the-service-rejects",
        lambda w: {"githubConfigSecret": BAD_SECRET},
        "CredentialsRejected",
        secret_holding({"github_token": PAT}),
        setup=secret_holding({"github_token": REJECTED_PAT}),
    ),
    Case(
        "max-runners-below-min-runners",
        lambda w: {"minRunners": 2, "maxRunners": 1},
        "InvalidRunnerLimits",
        patch_spec({"minRunners": 0}),
    ),
    Case(
        "runner-group-that-does-not-exist",
        lambda w: {"runnerGroup": "blue"},
        "RunnerGroupNotFound",
        the_runner_group_created,
    ),
    Case(
        "vault-config",
        lambda w: {"vaultConfig": AZURE_KEY_VAULT},
        "VaultNotSupported",
        patch_spec({"vaultConfig": None}),
    ),
    Case(
        "pod-template-the-api-refuses",
        lambda w: {"minRunners": 1, "template": REFUSED_TEMPLATE},
        arsconditions.PODS_REFUSED,
        patch_spec({"template": GOOD_TEMPLATE}),
        condition=conditions.READY,
        runs=True,
    ),
]


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with harness.github_world() as w:
        yield w


async def condition(kube: Kube, case: Case, name: str = BAD) -> dict[str, Any] | None:
    found = await harness.get(kube, "AutoscalingRunnerSet", name)
    return conditions.find((found or {}).get("status"), case.condition)


async def warning_reasons(kube: Kube, name: str = BAD) -> list[str]:
    events = await client.CoreV1Api(kube).list_namespaced_event(
        NS, field_selector=f"involvedObject.name={name},involvedObject.kind=AutoscalingRunnerSet"
    )
    return [event.reason for event in events.items if event.type == "Warning"]


async def events_journaled(journal: Path, reason: str) -> int:
    """How many Events of ``reason`` the controller decided to emit on the bad scale set."""
    decisions = await harness.journaled(journal, {RecordType.DECISION})
    return sum(
        1
        for record in decisions
        if record.kind == kinds.ARS and record.name == BAD
        for effect in record.body["effects"]
        if effect.startswith("EmitEvent:") and effect.endswith(f":{reason}")
    )


async def runner_pods(kube: Kube) -> list[str]:
    pods = await client.CoreV1Api(kube).list_namespaced_pod(NS)
    return [pod.metadata.name for pod in pods.items if pod.metadata.name.startswith(f"{BAD}-")]


def error_lines(caplog: pytest.LogCaptureFixture, reason: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and getattr(r, "object_name", "") == BAD and reason in r.getMessage()
    ]


async def assert_nothing_made_for_the_bad_one(world: World, kube: Kube, case: Case) -> None:
    if case.runs:
        assert await harness.phase(kube, BAD) == "Running"
        assert await runner_pods(kube) == []
        return
    assert await harness.phase(kube, BAD) == "Pending"
    assert await harness.get(kube, "EphemeralRunnerSet", BAD) is None
    listeners = await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
    assert [al["spec"]["autoscalingRunnerSetName"] for al in listeners] == [GOOD]
    assert world.github.scale_set(BAD) is None  # in any scope


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_bad_input_is_reported_and_recovers_beside_a_good_scale_set(
    case: Case, world: World, kube: Kube, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await case.setup(world, kube)
    controller = Controller(world, tmp_path)
    controller.settings = dataclasses.replace(controller.settings, actions=CLIENTS)
    async with controller:
        await harness.create(kube, harness.scale_set_body(world, GOOD))
        await harness.create(kube, harness.scale_set_body(world, BAD, **case.spec(world)))

        async def reported() -> bool:
            found = await condition(kube, case)
            return (
                found is not None
                and (found["status"], found["reason"]) == ("False", case.reason)
                and case.reason in await warning_reasons(kube)
            )

        await eventually(reported, timeout=TIMEOUT, what=f"{case.condition} False ({case.reason}), its Event")

        async def good_running() -> bool:
            return await harness.phase(kube, GOOD) == "Running"

        await eventually(good_running, timeout=TIMEOUT, what="the good scale set Running beside the bad one")
        good = await harness.get(kube, "AutoscalingRunnerSet", GOOD)
        ready = conditions.find((good or {}).get("status"), conditions.READY)
        assert ready is not None and ready["status"] == "True"
        found = await condition(kube, case)
        assert found is not None and found["message"] and "\n" not in found["message"]
        assert PAT not in found["message"] and REJECTED_PAT not in found["message"]
        assert error_lines(caplog, case.reason), f"no error-level log line says {case.reason}"
        assert not [r for r in caplog.records if PAT in r.getMessage() or REJECTED_PAT in r.getMessage()]
        await assert_nothing_made_for_the_bad_one(world, kube, case)

        await case.fix(world, kube)

        async def recovered() -> bool:
            found = await condition(kube, case)
            return await harness.phase(kube, BAD) == "Running" and case.holds(found)

        fixed = f"the fixed scale set Running, {case.condition} True"
        await eventually(recovered, timeout=TIMEOUT, what=fixed)
        assert world.github.scale_set(BAD) is not None
        assert await harness.phase(kube, GOOD) == "Running"
        # One Event for the problem, however many times it was retried.
        assert await events_journaled(controller.journal, case.reason) == 1


async def test_a_scale_set_deleted_while_its_config_url_is_refused_leaves_nothing_registered(
    world: World, kube: Kube, tmp_path: Path
) -> None:
    unicode = next(case for case in CASES if case.id == "unicode-in-the-config-url-path")
    async with Controller(world, tmp_path):
        await harness.create(kube, harness.scale_set_body(world, BAD, **unicode.spec(world)))

        async def reported() -> bool:
            found = await condition(kube, unicode)
            return found is not None and found["reason"] == unicode.reason

        await eventually(reported, timeout=TIMEOUT, what="the config URL refused")
        await harness.delete(kube, "AutoscalingRunnerSet", BAD)

        async def gone() -> bool:
            return await harness.get(kube, "AutoscalingRunnerSet", BAD) is None

        await eventually(gone, timeout=TIMEOUT, what="the refused scale set deleted")
        assert world.github.scale_set(BAD) is None
        assert not world.github.calls_to("POST", "runnerscalesets")
