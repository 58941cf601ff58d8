"""A scale set whose GitHub credentials are in Azure Key Vault (``spec.vaultConfig``), as upstream ARC 0.12
on reads them: the controller and the listener each read the vault secret ``githubConfigSecret`` names,
with a client certificate, through the vault's proxy, and nothing read from the vault is journaled, logged
or served.

Inputs: each world with the fake GitHub; the fake Azure (``sim.keyvault``: Microsoft Entra's token endpoint
and Key Vault over HTTPS with a CA of its own) behind its forward proxy, which asks for credentials; the
client certificate as a file for the controller (run in-process, as on its pod's filesystem) and, at the
same path, in a Secret volume of the listener's pod (``listenerTemplate``), beside the CA bundle its
``SSL_CERT_FILE`` names. No Kubernetes Secret has the name ``githubConfigSecret`` gives.

Outputs: the scale set reaches Running with a listener whose config carries no credentials, runs two jobs,
parks when its runners are refused and recovers on an image fix (the seed's story), and is deleted with its
registration; the journal file, every log line and the HTTP API's answers hold no vault secret, no proxy
password and no certificate key. Bad vault input (no answer, a wrong tenant or client, no certificate file,
no such secret, a secret that is no GitHub credential) is ``ConfigurationValid`` False naming the field
and a Warning Event, while a scale set beside it runs, and fixing it recovers the scale set.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client

from actions.azurekeyvault import Reach
from sim.github.records import JobState
from sim.world import World
from statemachines import conditions, naming
from statemachines.arsconditions import CONFIGURATION_VALID
from statemachines.kinds import AL, ARS, ER, ERS
from tests import azurevault
from tests.azurevault import (
    CLIENT,
    NOT_CREDENTIALS,
    OTHER_TENANT,
    PROXY_PASSWORD,
    PROXY_USER,
    TENANT,
    VAULT,
    VAULT_SECRET,
    Vault,
)
from tests.e2e.controller import harness
from tests.e2e.controller.harness import CONTROLLER_NS, NS, PAT, Controller, merge_patch
from tests.e2e.controller.test_controller_seed_story import (
    MINIMUM,
    NEW_IMAGE,
    OLD_IMAGE,
    assert_recovered,
    wait_parked,
)
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
PROXY_SECRET = "vault-proxy"
CERTS_SECRET = "akv-client"  # the listener's copy of the certificate and the fake Azure's CA
GOOD, BAD = "arc", "beside"  # the seed story's steps follow the scale set "arc"


def vault_config(vault: Vault, **azure: str) -> dict[str, Any]:
    """The ``vaultConfig`` of the tests' scale sets, ``azure`` replacing fields of ``azureKeyVault``."""
    block = {
        "url": vault.url,
        "tenantId": TENANT,
        "clientId": CLIENT,
        "certificatePath": str(vault.certificate_path),
        **azure,
    }
    https = {"url": vault.proxy.url, "credentialSecretRef": PROXY_SECRET}
    return {"type": "azure_key_vault", "azureKeyVault": block, "proxy": {"https": https}}


def listener_template(vault: Vault) -> dict[str, Any]:
    """Upstream's way to give the listener the certificate: a volume at the same path, and here the CA
    bundle of the fake Azure named by ``SSL_CERT_FILE``."""
    container = {
        "name": "listener",
        "env": [{"name": "SSL_CERT_FILE", "value": str(vault.ca_path)}],
        "volumeMounts": [{"name": "akv", "mountPath": str(vault.directory), "readOnly": True}],
    }
    volume = {"name": "akv", "secret": {"secretName": CERTS_SECRET}}
    return {"spec": {"containers": [container], "volumes": [volume]}}


@contextlib.asynccontextmanager
async def azure(kube: client.ApiClient, directory: Path) -> AsyncIterator[Vault]:
    """The fake Azure, with the listener's copy of the files and the proxy's credentials as Secrets."""
    async with azurevault.serving(directory / "akv", token=PAT) as vault:
        core = client.CoreV1Api(kube)
        files = {"client.pem": vault.certificate_path.read_bytes(), "ca.crt": vault.ca_path.read_bytes()}
        data = {name: base64.b64encode(value).decode() for name, value in files.items()}
        await core.create_namespaced_secret(CONTROLLER_NS, {"metadata": {"name": CERTS_SECRET}, "data": data})
        credentials = {"username": PROXY_USER, "password": PROXY_PASSWORD}
        await core.create_namespaced_secret(
            NS, {"metadata": {"name": PROXY_SECRET}, "stringData": credentials}
        )
        yield vault


def vaulted(world: World, vault: Vault, name: str = GOOD, **spec: Any) -> dict[str, Any]:
    body = harness.scale_set_body(world, name, githubConfigSecret=VAULT_SECRET, **spec)
    body["spec"]["vaultConfig"] = vault_config(vault)
    body["spec"]["listenerTemplate"] = listener_template(vault)
    return body


def controller_for(world: World, directory: Path, vault: Vault) -> Controller:
    """The controller, trusting the fake Azure's CA as ``SSL_CERT_FILE`` would make it."""
    controller = Controller(world, directory)
    controller.settings = dataclasses.replace(controller.settings, vault=Reach(ca_bundle=vault.served.ca_pem))
    return controller


async def running_with_listener(kube: client.ApiClient, name: str) -> bool:
    ars = await harness.get(kube, ARS, name)
    listeners = [
        a
        for a in await harness.items(kube, AL, CONTROLLER_NS)
        if a["spec"].get("autoscalingRunnerSetName") == name
    ]
    return bool(ars and (ars.get("status") or {}).get("phase") == "Running" and listeners)


async def listener_config(kube: client.ApiClient) -> dict[str, Any]:
    """The config.json of the one listener (its ``<AL>-config`` Secret)."""
    [listener] = await harness.items(kube, AL, CONTROLLER_NS)
    name = naming.listener_config_secret_name(listener["metadata"]["name"])
    secret = await client.CoreV1Api(kube).read_namespaced_secret(name, CONTROLLER_NS)
    config: dict[str, Any] = json.loads(base64.b64decode(secret.data["config.json"]))
    return config


async def served_answers(world: World, directory: Path) -> str:
    """What the HTTP API answers about the journal the story left: history, records, the scale set."""
    async with harness.serving(world, directory) as (_, base), httpx.AsyncClient(base_url=base) as http:
        paths = (
            f"/api/v1/namespaces/{NS}/autoscalingrunnersets/{GOOD}/phases",
            "/api/v1/journal?limit=1000",
            f"/api/v1/namespaces/{NS}/autoscalingrunnersets/{GOOD}",
            "/metrics",
        )
        return "".join([(await http.get(path)).text for path in paths])


async def test_a_scale_set_with_its_credentials_in_azure_key_vault_runs_parks_recovers_and_goes(
    world: World, kube: client.ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with azure(kube, tmp_path) as vault, controller_for(world, tmp_path, vault) as controller:
        await harness.create(kube, vaulted(world, vault, minRunners=0))
        await eventually(
            lambda: running_with_listener(kube, GOOD), timeout=TIMEOUT, what="Running with its listener"
        )
        ars = await harness.required(kube, ARS, GOOD)
        valid = conditions.find(ars["status"], CONFIGURATION_VALID)
        assert valid is not None and valid["status"] == "True", valid

        registered = world.github.scale_set(GOOD)
        assert registered is not None

        async def session_open() -> bool:
            return any(s.scale_set_id == registered.id for s in world.github.state.sessions.values())

        # The listener's config names the vault and its proxy, and holds no GitHub credentials: the
        # session it opened was opened with what it read from the vault itself.
        await eventually(session_open, timeout=TIMEOUT, what="the listener's message session")
        config = await listener_config(kube)
        assert (config["vault_type"], config["vault_lookup_key"]) == ("azure_key_vault", VAULT_SECRET)
        assert not config.get("github_token") and not config.get("github_app_private_key")
        assert config["azure_key_vault"]["proxy"]["HTTPSProxy"].startswith(f"http://{PROXY_USER}:")
        assert {"login.microsoftonline.com", f"{VAULT}.vault.azure.net"} <= set(vault.proxy.tunnelled)
        assert vault.fake.requests_to(f"/secrets/{VAULT_SECRET}")

        jobs = world.github.queue_jobs(registered.id, 2)
        await eventually(
            lambda: all(job.state is JobState.COMPLETED for job in jobs),
            timeout=TIMEOUT,
            what="both jobs run by runners registered with the vault's credentials",
        )
        assert [job.result for job in jobs] == ["succeeded", "succeeded"]

        # The seed's story: the service refuses the runners' version, the scale set parks at zero; an
        # image the service takes recovers it.
        world.github.configure(min_runner_version=MINIMUM)
        template = {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": OLD_IMAGE}]}
        }
        await merge_patch(kube, ARS, GOOD, {"spec": {"minRunners": 1, "template": template}})
        await wait_parked(kube)
        parked_revision, _ = harness.revisions(await harness.required(kube, ERS, GOOD))
        fixed = {"spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": NEW_IMAGE}]}}
        await merge_patch(kube, ARS, GOOD, {"spec": {"template": fixed}})
        await assert_recovered(world, kube, controller, parked_revision)

        await harness.delete(kube, ARS, GOOD)

        async def gone() -> bool:
            left = [await harness.items(kube, kind) for kind in (ARS, ERS, ER)]
            return not any(left) and not await harness.items(kube, AL, CONTROLLER_NS)

        await eventually(gone, timeout=TIMEOUT, what="the scale set and everything it made deleted")
        assert world.github.scale_set(GOOD) is None, "the registration at GitHub was left behind"

    secrets = (PAT, *vault.secrets())
    journal = controller.journal.read_bytes() + b"".join(
        p.read_bytes() for p in controller.journal.parent.glob("journal.db-*")
    )
    assert not [s for s in secrets if s.encode() in journal], "a vault secret is in the journal file"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert not [s for s in secrets if s in logged], "a vault secret was logged"
    answers = await served_answers(world, tmp_path)
    assert GOOD in answers and not [s for s in secrets if s in answers], "a vault secret was served"


BAD_VAULT = [
    # (what is wrong, the vaultConfig.azureKeyVault fields or the secret name that make it so, reason,
    # the field the message names)
    ("no answer", {"url": "https://elsewhere.vault.example.com/"}, "VaultUnreachable", "azureKeyVault.url"),
    ("wrong tenant", {"tenantId": OTHER_TENANT}, "VaultAccessDenied", "tenantId"),
    ("unknown client", {"clientId": "not-registered"}, "VaultAccessDenied", "clientId"),
    (
        "no certificate file",
        {"certificatePath": "/nonexistent/client.pem"},
        "VaultCertificateMissing",
        "certificatePath",
    ),
    ("no such secret", {"githubConfigSecret": "no-such-secret"}, "VaultSecretMissing", "githubConfigSecret"),
    ("not a credential", {"githubConfigSecret": NOT_CREDENTIALS}, "VaultSecretInvalid", NOT_CREDENTIALS),
]


async def test_bad_vault_input_is_a_condition_naming_the_field_and_an_event_beside_a_running_scale_set(
    world: World, kube: client.ApiClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with azure(kube, tmp_path) as vault, controller_for(world, tmp_path, vault):
        await harness.create(kube, harness.scale_set_body(world, BAD))  # a scale set with a Secret, beside
        await harness.create(kube, vaulted(world, vault, GOOD))
        await eventually(
            lambda: running_with_listener(kube, GOOD), timeout=TIMEOUT, what="the vault scale set Running"
        )
        for what, change, reason, named in BAD_VAULT:
            fields = dict(change)
            spec: dict[str, Any] = {"githubConfigSecret": fields.pop("githubConfigSecret", VAULT_SECRET)}
            spec["vaultConfig"] = vault_config(vault, **fields)
            await merge_patch(kube, ARS, GOOD, {"spec": spec})

            async def reported(reason: str = reason, named: str = named) -> dict[str, Any] | None:
                ars = await harness.required(kube, ARS, GOOD)
                found = conditions.find(ars.get("status"), CONFIGURATION_VALID) or {}
                said = (found.get("status"), found.get("reason")) == ("False", reason)
                told = (
                    said and named in found["message"] and (reason, found["message"]) in await warnings(kube)
                )
                return found if told else None

            found = await eventually(
                reported, timeout=TIMEOUT, what=f"{what}: {reason} naming {named}, its Event"
            )
            assert "\n" not in found["message"], (what, found["message"])
            assert await harness.phase(kube, BAD) == "Running", f"{what}: the scale set beside it stopped"

        await merge_patch(
            kube,
            ARS,
            GOOD,
            {"spec": {"githubConfigSecret": VAULT_SECRET, "vaultConfig": vault_config(vault)}},
        )

        async def recovered() -> bool:
            ars = await harness.required(kube, ARS, GOOD)
            valid = conditions.find(ars.get("status"), CONFIGURATION_VALID)
            return bool(valid and valid["status"] == "True") and await running_with_listener(kube, GOOD)

        await eventually(recovered, timeout=TIMEOUT, what="the fixed vault scale set Running again")

    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert not [s for s in (PAT, *vault.secrets()) if s in logged], "a vault secret was logged"


async def warnings(kube: client.ApiClient, name: str = GOOD) -> list[tuple[str, str]]:
    """(reason, message) of the Warning Events on the scale set ``name``."""
    events = await client.CoreV1Api(kube).list_namespaced_event(
        NS, field_selector=f"involvedObject.name={name},involvedObject.kind=AutoscalingRunnerSet"
    )
    return [(event.reason, event.message) for event in events.items if event.type == "Warning"]


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w
