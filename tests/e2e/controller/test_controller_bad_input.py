"""Bad input on one scale set never stalls another, and the user is told: every bad input the controller
handles, one row of ``CASES`` each, run beside a good scale set through the real controller, the emulated
cluster and the fake GitHub.

For each row the bad scale set gets the row's condition False with the row's reason, one Warning Event
with that reason (emitted once, however often the input is retried) and an error-level log line; what
must not exist for it does not (the row's ``absent``: for input the spec shows, no runner set, no listener,
no registration in the Actions service; for a pod template the API server refuses, no runner pod; for a
derived object the API server refuses, that object); the good one reaches Running; once the input is fixed
the bad one reaches Running with the condition True and its listener up.

A derived object the API server refuses (``refused``: the listener's Role, the runner set, a runner, built
from metadata a user put in the spec that is not a label) is also named in the condition's message and in
an error log line of the refused create, and asked again with a growing backoff rather than every second.

Adding a bad input is adding a ``Case`` to ``CASES``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from kubernetes_asyncio import client

from actions.client import ClientSettings
from actions.retrying import RetryPolicy
from sim.github.faults import GitHubFault
from sim.world import World
from statemachines import (
    arsconditions,
    autoscalinglisteners,
    conditions,
    desired,
    ephemeralrunnersets,
    kinds,
    pods,
    refusals,
)
from statemachines.snapshots import Settings
from store.records import RecordType
from tests import keys
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, PAT, Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
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
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "runner",
                "image": harness.RUNNER_IMAGE,
                "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            }
        ],
    }
}
AZURE_KEY_VAULT = {
    "type": "azure_key_vault",
    "azureKeyVault": {
        "url": "https://arcsm.vault.azure.net",
        "tenantId": "tenant",
        "clientId": "client",
        "certificatePath": "/nonexistent/vault/cert.pem",
    },
}
GOOD_TEMPLATE = {
    "spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": harness.RUNNER_IMAGE}]}
}
# A pod template whose container is not called "runner": no runner would ever register from it.
NO_RUNNER_TEMPLATE = {
    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": harness.RUNNER_IMAGE}]}
}
BAD_CA = "bad-ca"
CA_KEY = "ca.crt"
SERVER_TLS = {"certificateFrom": {"configMapKeyRef": {"name": BAD_CA, "key": CA_KEY}}}
PROXY_SECRET = "proxy-auth"
PROXY_AUTH = {"username": "squid", "password": "proxyPassw0rdNeverShown"}
# Not a label key (a space): the scale set takes it, an object built from it is refused.
BAD_LABELS = {"labels": {"not a key": "x"}}
FIXED_LABELS = {"labels": {"not a key": None, "team": "x"}}  # a merge patch: the bad key removed

SETTINGS = Settings(controller_namespace=CONTROLLER_NS)

Kube = client.ApiClient
Step = Callable[[World, Kube], Awaitable[None]]


async def nothing(world: World, kube: Kube) -> None:
    return None


async def runner_pods(kube: Kube) -> list[str]:
    found = await client.CoreV1Api(kube).list_namespaced_pod(NS)
    return [pod.metadata.name for pod in found.items if pod.metadata.name.startswith(f"{BAD}-")]


async def listeners_of(kube: Kube) -> list[str]:
    listeners = await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
    return [al["spec"]["autoscalingRunnerSetName"] for al in listeners]


async def nothing_made(world: World, kube: Kube) -> None:
    """Input the spec shows stops the scale set before anything is made for it."""
    assert await harness.phase(kube, BAD) == "Pending"
    assert await harness.get(kube, "EphemeralRunnerSet", BAD) is None
    assert await listeners_of(kube) == [GOOD]
    assert world.github.scale_set(BAD) is None  # in any scope


async def no_runner_pod(world: World, kube: Kube) -> None:
    assert await harness.phase(kube, BAD) == "Running"
    assert await runner_pods(kube) == []


async def no_listener_role(world: World, kube: Kube) -> None:
    ars = await harness.required(kube, "AutoscalingRunnerSet", BAD)
    listener = desired.listener_ref(ars, SETTINGS).name
    roles = (await client.RbacAuthorizationV1Api(kube).list_namespaced_role(NS)).items
    assert listener not in [role.metadata.name for role in roles]
    assert not await listener_up(kube, BAD)


async def no_runner_set(world: World, kube: Kube) -> None:
    assert await harness.get(kube, "EphemeralRunnerSet", BAD) is None
    assert await listeners_of(kube) == [GOOD]


async def no_runner(world: World, kube: Kube) -> None:
    runners = await harness.items(kube, "EphemeralRunner")
    assert [r["metadata"]["name"] for r in runners if r["metadata"]["name"].startswith(f"{BAD}-")] == []
    assert await runner_pods(kube) == []


@dataclass(frozen=True)
class Case:
    """One bad input: the bad scale set's spec fields, what it then reports, and how a user fixes it."""

    id: str
    spec: Callable[[World], dict[str, Any]]
    reason: str
    fix: Step
    condition: str = arsconditions.CONFIGURATION_VALID
    setup: Step = nothing
    # What must not exist for the bad scale set while it reports the problem (asserts it).
    absent: Step = nothing_made
    # The kind of the derived object the API server refuses, "" when the input is not such an object.
    refused: str = ""

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


def self_signed_ca() -> str:
    """A PEM root CA of its own (the fake GitHub is plain HTTP: the trust store only has to accept it)."""
    return keys.self_signed(ec.generate_private_key(ec.SECP256R1()), "arcsm test CA", ca=True).decode()


def config_map_holding(data: dict[str, str]) -> Step:
    """Create the ConfigMap ``BAD_CA`` holding ``data``, or replace what it holds."""

    async def write(world: World, kube: Kube) -> None:
        core = client.CoreV1Api(kube)
        body = {"metadata": {"name": BAD_CA, "namespace": NS}, "data": data}
        existing = [c for c in (await core.list_namespaced_config_map(NS)).items if c.metadata.name == BAD_CA]
        if existing:
            await core.replace_namespaced_config_map(BAD_CA, NS, body)
        else:
            await core.create_namespaced_config_map(NS, body)

    return write


async def a_root_ca(world: World, kube: Kube) -> None:
    await config_map_holding({CA_KEY: self_signed_ca()})(world, kube)


def proxied(world: World, url: str, **server: str) -> dict[str, Any]:
    """A ``proxy`` block whose proxy the fake GitHub's host bypasses (``noProxy``), so only reading the
    block is tried, not the proxy."""
    host = world.github_url.split("://", 1)[1].rsplit(":", 1)[0]
    return {"https": {"url": url, **server}, "http": {"url": url, **server}, "noProxy": [host]}


async def the_proxy_credentials(world: World, kube: Kube) -> None:
    await write_secret(kube, PROXY_AUTH, name=PROXY_SECRET)


async def a_good_proxy_url(world: World, kube: Kube) -> None:
    await patch_spec({"proxy": proxied(world, "http://proxy.internal:3128")})(world, kube)


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
        # The controller reads the client certificate from its own filesystem (its pod's, here the
        # host's): a path nothing is mounted at is named, before any request to Azure.
        "vault-client-certificate-missing",
        lambda w: {"vaultConfig": AZURE_KEY_VAULT},
        "VaultCertificateMissing",
        patch_spec({"vaultConfig": None}),
    ),
    Case(
        "pod-template-the-api-refuses",
        lambda w: {"minRunners": 1, "template": REFUSED_TEMPLATE},
        arsconditions.PODS_REFUSED,
        patch_spec({"template": GOOD_TEMPLATE}),
        condition=conditions.READY,
        absent=no_runner_pod,
    ),
    Case(
        "listener-role-the-api-refuses",
        lambda w: {"listenerRoleMetadata": BAD_LABELS},
        autoscalinglisteners.OBJECT_REJECTED,
        patch_spec({"listenerRoleMetadata": FIXED_LABELS}),
        condition=conditions.READY,
        absent=no_listener_role,
        refused="Role",
    ),
    Case(
        "runner-set-the-api-refuses",
        lambda w: {"ephemeralRunnerSetMetadata": BAD_LABELS},
        arsconditions.RUNNER_SET_REJECTED,
        patch_spec({"ephemeralRunnerSetMetadata": FIXED_LABELS}),
        condition=conditions.READY,
        absent=no_runner_set,
        refused="EphemeralRunnerSet",
    ),
    Case(
        "runner-the-api-refuses",
        lambda w: {"minRunners": 1, "ephemeralRunnerMetadata": BAD_LABELS},
        ephemeralrunnersets.RUNNER_REJECTED,
        patch_spec({"ephemeralRunnerMetadata": FIXED_LABELS}),
        condition=conditions.READY,
        absent=no_runner,
        refused="EphemeralRunner",
    ),
    Case(
        "server-tls-configmap-missing",
        lambda w: {"githubServerTLS": SERVER_TLS},
        "RootCAMissing",
        a_root_ca,
    ),
    Case(
        "server-tls-key-missing",
        lambda w: {"githubServerTLS": SERVER_TLS},
        "RootCAMissing",
        a_root_ca,
        setup=config_map_holding({"other.crt": "x"}),
    ),
    Case(
        "server-tls-value-not-pem",
        lambda w: {"githubServerTLS": SERVER_TLS},
        "RootCAInvalid",
        a_root_ca,
        setup=config_map_holding({CA_KEY: "not a certificate"}),
    ),
    Case(
        # Found in the scale set's namespace, by the scale set and by its listener alike (upstream's
        # listener reads it there too).
        "proxy-credential-secret-missing",
        lambda w: {"proxy": proxied(w, "http://proxy.internal:3128", credentialSecretRef=PROXY_SECRET)},
        "ProxySecretMissing",
        the_proxy_credentials,
    ),
    Case(
        "unparsable-proxy-url",
        lambda w: {"proxy": proxied(w, "http://proxy.internal:port")},
        "InvalidProxyUrl",
        a_good_proxy_url,
    ),
    Case(
        "pod-template-without-a-runner-container",
        lambda w: {"minRunners": 1, "template": NO_RUNNER_TEMPLATE},
        "RunnerContainerMissing",
        patch_spec({"template": GOOD_TEMPLATE}),
    ),
]


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
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


async def listener_up(kube: Kube, name: str) -> bool:
    """Whether the listener pod of the scale set ``name`` runs."""
    ars = await harness.get(kube, "AutoscalingRunnerSet", name)
    if ars is None:
        return False
    listener = desired.listener_ref(ars, SETTINGS).name
    found = (await client.CoreV1Api(kube).list_namespaced_pod(CONTROLLER_NS)).items
    return any(p.metadata.name == listener and p.status.phase == "Running" for p in found)


async def refusals_journaled(journal: Path, kind: str) -> list[datetime]:
    """When the API server refused a create of a ``kind`` (journal times, in order)."""
    results = await harness.journaled(journal, {RecordType.EFFECT_RESULT})
    times = [
        pods.parse_time(r.at)
        for r in results
        if str(r.body.get("key", "")).startswith(f"create:{kind}/") and r.body.get("error") == "Invalid"
    ]
    return [t for t in times if t is not None]


async def assert_asked_again_with_backoff(journal: Path, kind: str) -> None:
    """A refused create is asked again at least ``refusals.RETRY_MIN`` apart, never closer together."""

    async def three_refusals() -> bool:
        return len(await refusals_journaled(journal, kind)) >= 3

    await eventually(three_refusals, timeout=TIMEOUT, what=f"three refused {kind} creates")
    times = await refusals_journaled(journal, kind)
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert all(gap >= refusals.RETRY_MIN - 0.5 for gap in gaps), gaps
    assert gaps[1] >= gaps[0] - 0.5, gaps


def error_lines(caplog: pytest.LogCaptureFixture, reason: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and getattr(r, "object_name", "") == BAD and reason in r.getMessage()
    ]


def assert_refusal_told(case: Case, message: str, caplog: pytest.LogCaptureFixture) -> None:
    """The condition's message names the refused object and the API server's reason; the refused create
    has an error log line of its own."""
    assert f"refused to create the {case.refused} " in message and "not a key" in message, message
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert [line for line in logged if f"create:{case.refused}/" in line and "refused" in line], logged


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_bad_input_is_reported_and_recovers_beside_a_good_scale_set(
    case: Case, world: World, kube: Kube, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="controller.executor.executing")
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
        secrets = (PAT, REJECTED_PAT, PROXY_AUTH["password"])
        assert not [r for r in caplog.records if any(secret in r.getMessage() for secret in secrets)]
        assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
        await case.absent(world, kube)
        if case.refused:
            assert_refusal_told(case, found["message"], caplog)
            await assert_asked_again_with_backoff(controller.journal, case.refused)

        await case.fix(world, kube)

        async def recovered() -> bool:
            found = await condition(kube, case)
            running = await harness.phase(kube, BAD) == "Running" and case.holds(found)
            return running and await listener_up(kube, BAD)

        fixed = f"the fixed scale set Running, {case.condition} True, its listener up"
        await eventually(recovered, timeout=TIMEOUT, what=fixed)
        assert world.github.scale_set(BAD) is not None
        assert await harness.phase(kube, GOOD) == "Running"
        # One Event for the problem, however many times it was retried.
        assert await events_journaled(controller.journal, case.reason) == 1
        journaled = json.dumps([r.body for r in await harness.journaled(controller.journal)], default=str)
        assert not [secret for secret in secrets if secret in journaled], "a secret was journaled"


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


async def test_a_scale_set_whose_config_secret_is_gone_is_still_deleted_and_says_what_it_left(
    world: World, kube: Kube, tmp_path: Path
) -> None:
    """Deleting a scale set after its config Secret went: nothing can unregister it from GitHub any more,
    so the deletion finishes anyway (its runner and listener go too) and a Warning Event names the scale
    set left registered and how to remove it, rather than a deletion that hangs saying nothing."""
    async with Controller(world, tmp_path):
        await write_secret(kube, {"github_token": PAT})
        await harness.create(
            kube, harness.scale_set_body(world, BAD, githubConfigSecret=BAD_SECRET, minRunners=1)
        )

        async def running() -> bool:
            return await harness.phase(kube, BAD) == "Running" and bool(await runner_pods(kube))

        await eventually(running, timeout=TIMEOUT, what="the scale set Running with its runner")
        scale_set = world.github.scale_set(BAD)
        assert scale_set is not None
        await client.CoreV1Api(kube).delete_namespaced_secret(BAD_SECRET, NS)
        await harness.delete(kube, "AutoscalingRunnerSet", BAD)

        async def gone() -> bool:
            leftovers = [
                *[
                    r
                    for r in await harness.items(kube, "EphemeralRunner")
                    if r["metadata"]["name"].startswith(BAD)
                ],
                *[name for name in await listeners_of(kube) if name == BAD],
            ]
            return await harness.get(kube, "AutoscalingRunnerSet", BAD) is None and leftovers == []

        await eventually(gone, timeout=TIMEOUT, what="the scale set, its runner and its listener deleted")
        assert "ScaleSetLeftRegistered" in await warning_reasons(kube)
        events = await client.CoreV1Api(kube).list_namespaced_event(
            NS, field_selector=f"involvedObject.name={BAD}"
        )
        [message] = [e.message for e in events.items if e.reason == "ScaleSetLeftRegistered"]
        assert str(scale_set.id) in message and BAD_SECRET in message, message
