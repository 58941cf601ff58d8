"""Bad input on an AutoscalingRunnerSet: the pass stops before creating anything, the phase stays Pending
(or where it was), ``ConfigurationValid`` is False with the reason, one Warning Event per distinct
problem, a retry after a backoff read from the condition, and recovery once the input is fixed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from statemachines import arsconditions, conditions, desired
from statemachines.effects import (
    ActionsCall,
    ActionsOp,
    CreateObject,
    DeleteObject,
    EmitEvent,
    MergePatch,
    RequeueAfter,
)
from statemachines.pods import format_time
from tests.unit.statemachines.arsworld import ARS_REF, ERS_REF, NOW, World, new_ars, running_world


def configuration(world: World) -> dict[str, Any] | None:
    return conditions.find(world.ars.get("status"), arsconditions.CONFIGURATION_VALID)


def warnings(world: World) -> list[str]:
    return [e.reason for e in world.effects_of(EmitEvent) if e.type == "Warning"]


def created(world: World) -> list[str]:
    return [e.target.kind for e in world.effects_of(CreateObject)]


def fresh(**spec: Any) -> World:
    world = World()
    world.add(new_ars(**spec))
    return world


def assert_recovers(world: World) -> None:
    world.settle()
    world.set_status(ERS_REF, appliedActionableRevision=1, phase="Running", currentReplicas=0)
    world.settle()
    assert world.phase == "Running"
    valid = configuration(world)
    assert valid is not None and (valid["status"], valid["reason"]) == ("True", "Valid")


AKV = {"url": "https://kv.vault.azure.net/", "tenantId": "t", "clientId": "c", "certificatePath": "/c.pem"}
SPEC_PROBLEMS = [
    pytest.param({"githubConfigUrl": "not a url"}, "InvalidConfigUrl", id="url-not-absolute"),
    pytest.param({"githubConfigUrl": "https://github.com/a/b/c"}, "InvalidConfigUrl", id="url-no-scope"),
    pytest.param({"githubConfigSecret": ""}, "ConfigSecretMissing", id="no-secret-named"),
    pytest.param({"minRunners": 3, "maxRunners": 1}, "InvalidRunnerLimits", id="max-below-min"),
    pytest.param({"githubConfigUrl": "https://github.com/örg"}, "InvalidConfigUrl", id="url-unicode"),
    pytest.param({"githubConfigUrl": "https://github.com/%C3%B6rg"}, "InvalidConfigUrl", id="url-escaped"),
    pytest.param({"vaultConfig": {"type": "azure_key_vault"}}, "VaultConfigInvalid", id="vault-no-block"),
    pytest.param({"vaultConfig": {"type": "hashicorp"}}, "VaultConfigInvalid", id="vault-unknown-type"),
    pytest.param(
        {"vaultConfig": {"type": "azure_key_vault", "azureKeyVault": {**AKV, "clientId": ""}}},
        "VaultConfigInvalid",
        id="vault-no-client",
    ),
    pytest.param(
        {"vaultConfig": {"type": "azure_key_vault", "azureKeyVault": {**AKV, "url": "http://kv"}}},
        "VaultConfigInvalid",
        id="vault-url-not-https",
    ),
    pytest.param(
        {
            "vaultConfig": {
                "type": "azure_key_vault",
                "azureKeyVault": AKV,
                "proxy": {"https": {"url": "p:x"}},
            }
        },
        "InvalidProxyUrl",
        id="vault-proxy-url",
    ),
    pytest.param({"proxy": {"https": {"url": "http://proxy:port"}}}, "InvalidProxyUrl", id="proxy-port"),
    pytest.param(
        {"proxy": {"http": {"url": "proxy.internal:3128"}}}, "InvalidProxyUrl", id="proxy-no-scheme"
    ),
    pytest.param(
        {"template": {"spec": {"containers": [{"name": "main", "image": "x"}]}}},
        "RunnerContainerMissing",
        id="no-runner-container",
    ),
]


@pytest.mark.parametrize(("spec", "reason"), SPEC_PROBLEMS)
def test_bad_spec_input_stops_before_anything_is_created(spec: dict[str, Any], reason: str) -> None:
    world = fresh(**spec)
    world.step()  # finalizer
    found = world.step()

    assert world.phase == "Pending"
    assert world.actions.calls == [] and created(world) == []
    condition = configuration(world)
    assert condition is not None and (condition["status"], condition["reason"]) == ("False", reason)
    assert "\n" not in condition["message"] and condition["observedGeneration"] == 1
    assert warnings(world) == [reason]
    assert RequeueAfter(ARS_REF, arsconditions.RETRY_MIN) in found.effects
    # One status patch: the Pending write and the conditions together.
    assert len([e for e in found.effects if isinstance(e, MergePatch)]) == 1


@pytest.mark.parametrize(("spec", "reason"), SPEC_PROBLEMS)
def test_a_fixed_spec_recovers(spec: dict[str, Any], reason: str) -> None:
    world = fresh(**spec)
    world.step(), world.step()
    good = new_ars()["spec"]
    world.edit(ARS_REF, {"spec": {key: good.get(key) for key in spec}})
    assert_recovers(world)
    assert warnings(world) == [reason]


def test_the_same_problem_is_reported_once_and_retried_with_a_growing_delay() -> None:
    world = fresh(minRunners=3, maxRunners=1)
    world.step(), world.step()
    assert warnings(world) == ["InvalidRunnerLimits"]
    since = configuration(world)["lastTransitionTime"]  # type: ignore[index]
    assert since == format_time(NOW)

    delays = []
    for elapsed in (0, 2, 30, 200, 3600):
        world.now = NOW + timedelta(seconds=elapsed)
        retried = world.step()
        assert [type(e) for e in retried.effects] == [RequeueAfter], retried.effects
        delays.append(retried.effects[0].seconds)  # type: ignore[attr-defined]
    assert delays == [5.0, 5.0, 30.0, 200.0, 300.0]
    assert warnings(world) == ["InvalidRunnerLimits"]
    assert configuration(world)["lastTransitionTime"] == since  # type: ignore[index]


def test_a_new_problem_gets_its_own_event() -> None:
    world = fresh(minRunners=3, maxRunners=1)
    world.step(), world.step()
    world.edit(ARS_REF, {"spec": {"maxRunners": 2}})  # still below: another message, another Event
    world.step()
    assert "spec.maxRunners (2)" in configuration(world)["message"]  # type: ignore[index]
    world.edit(ARS_REF, {"spec": {"githubConfigUrl": "nope"}})
    world.step()
    world.step()
    assert warnings(world) == ["InvalidRunnerLimits", "InvalidRunnerLimits", "InvalidConfigUrl"]
    assert configuration(world)["reason"] == "InvalidConfigUrl"  # type: ignore[index]


@pytest.mark.parametrize(
    ("low", "high"),
    [(None, 1), (2, None), (2, 2), (0, 5)],
)
def test_runner_limits_are_only_wrong_when_both_are_set_and_max_is_below_min(
    low: int | None, high: int | None
) -> None:
    spec = {k: v for k, v in (("minRunners", low), ("maxRunners", high)) if v is not None}
    world = fresh(**spec)
    assert_recovers(world)
    assert warnings(world) == []


def test_bad_limits_on_a_running_scale_set_keep_its_listener_and_runner_set() -> None:
    world = running_world()
    listener, ers = world.listener, world.ers
    world.edit(ARS_REF, {"spec": {"minRunners": 4, "maxRunners": 2}})
    world.step()
    world.step()
    assert world.phase == "Pending"
    assert world.effects_of(DeleteObject) == [] and world.effects_of(CreateObject) == []
    assert [e.target for e in world.effects_of(MergePatch)] == [ARS_REF]
    assert world.listener == listener and world.ers == ers
    assert configuration(world)["reason"] == "InvalidRunnerLimits"  # type: ignore[index]
    world.edit(ARS_REF, {"spec": {"maxRunners": 6}})
    world.settle()
    assert world.phase == "Running"
    assert configuration(world)["reason"] == "Valid"  # type: ignore[index]


# -- what the executor answers: the config Secret and the credentials ------------------------------------

CALL_PROBLEMS = [
    pytest.param("ConfigSecretMissing", "ConfigSecretMissing", id="secret-missing"),
    pytest.param("ConfigSecretIncomplete", "ConfigSecretIncomplete", id="secret-incomplete"),
    pytest.param("AuthenticationFailed", "CredentialsRejected", id="credentials-rejected"),
    pytest.param("InvalidConfigUrl", "InvalidConfigUrl", id="url-refused-by-the-client"),
    pytest.param("ServiceUnreachable", "ConfigUrlUnreachable", id="url-not-answering"),
    pytest.param("RootCAMissing", "RootCAMissing", id="root-ca-missing"),
    pytest.param("RootCAInvalid", "RootCAInvalid", id="root-ca-not-pem"),
    pytest.param("ProxySecretMissing", "ProxySecretMissing", id="proxy-secret-missing"),
    pytest.param("InvalidProxyUrl", "InvalidProxyUrl", id="proxy-url-refused-by-the-client"),
]


@pytest.mark.parametrize(("error", "reason"), CALL_PROBLEMS)
def test_a_call_blaming_the_configuration_sets_the_condition_and_is_asked_again(
    error: str, reason: str
) -> None:
    world = fresh()
    world.actions.failing[ActionsOp.GET_RUNNER_SCALE_SET] = error
    world.actions.failure_message = "the Secret default/creds: the config Secret has no credentials"
    world.step(), world.step()  # finalizer; Pending and the call asked
    assert configuration(world) is None  # nothing learned yet
    found = world.step()

    assert world.phase == "Pending" and created(world) == []
    condition = configuration(world)
    assert condition is not None and (condition["status"], condition["reason"]) == ("False", reason)
    quoted = {"InvalidConfigUrl": "", "ConfigUrlUnreachable": "GitHub at github.com"}
    assert quoted.get(reason, "default/creds") in condition["message"]
    assert warnings(world) == [reason]  # not ActionsCallFailed
    calls = [e for e in found.effects if isinstance(e, ActionsCall)]
    assert [c.op for c in calls] == [ActionsOp.GET_RUNNER_SCALE_SET]
    assert RequeueAfter(ARS_REF, arsconditions.RETRY_MIN) in found.effects

    again = world.step()
    assert [type(e) for e in again.effects] == [ActionsCall, RequeueAfter]
    assert warnings(world) == [reason]

    world.actions.failing.clear()  # the Secret created or fixed: the next ask answers
    assert_recovers(world)
    assert world.actions.ops().count(ActionsOp.CREATE_RUNNER_SCALE_SET) == 1


def test_a_runner_group_that_does_not_exist_is_reported_once_and_asked_again() -> None:
    world = fresh(runnerGroup="blue")
    world.actions.failing[ActionsOp.GET_RUNNER_GROUP_BY_NAME] = "RunnerGroupNotFound"
    for _ in range(5):
        world.step()
    condition = configuration(world)
    assert condition is not None and (condition["status"], condition["reason"]) == (
        "False",
        "RunnerGroupNotFound",
    )
    assert "'blue'" in condition["message"] and warnings(world) == ["RunnerGroupNotFound"]
    assert world.actions.ops().count(ActionsOp.GET_RUNNER_GROUP_BY_NAME) >= 2 and created(world) == []
    world.actions.failing.clear()  # the group created in GitHub: the next ask answers
    assert_recovers(world)


def test_a_rejected_credential_message_never_quotes_the_service_answer() -> None:
    world = fresh()
    world.actions.failing[ActionsOp.GET_RUNNER_SCALE_SET] = "AuthenticationFailed"
    world.actions.failure_message = "POST https://x/registration-token answered 401 (X-GitHub-Request-Id 1A)"
    world.step(), world.step(), world.step()
    world.actions.failure_message = "POST https://x/registration-token answered 401 (X-GitHub-Request-Id 2B)"
    world.step(), world.step()
    assert warnings(world) == ["CredentialsRejected"]
    message = configuration(world)["message"]  # type: ignore[index]
    assert "Request-Id" not in message and "default/creds" in message


def test_steps_seven_and_eight_report_rejected_credentials_too() -> None:
    world = running_world(runnerGroup="blue")
    world.actions.failing[ActionsOp.GET_RUNNER_GROUP_BY_NAME] = "AuthenticationFailed"
    world.edit(ARS_REF, {"spec": {"runnerGroup": "green"}})
    world.step(), world.step()
    assert configuration(world)["reason"] == "CredentialsRejected"  # type: ignore[index]
    world.actions.failing.clear()
    world.settle()
    assert world.phase == "Running" and configuration(world)["reason"] == "Valid"  # type: ignore[index]


def test_an_outage_is_no_configuration_problem() -> None:
    world = fresh()
    world.actions.failing[ActionsOp.GET_RUNNER_SCALE_SET] = "ServiceUnavailable"
    world.step(), world.step(), world.step()
    assert configuration(world) is None
    assert warnings(world) == ["ActionsCallFailed"]


def test_a_deleting_scale_set_warns_at_every_attempt_and_writes_no_condition() -> None:
    world = running_world()
    world.ars["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    world.actions.failing[ActionsOp.DELETE_RUNNER_SCALE_SET] = "AuthenticationFailed"
    for _ in range(5):
        world.step()
    assert warnings(world) == ["CredentialsRejected", "CredentialsRejected"]
    assert configuration(world)["reason"] == "Valid"  # type: ignore[index]
    world.actions.failing.clear()
    world.settle()
    assert world.get(desired.KIND_ARS, "default", "arc") is None


def test_a_deleting_scale_set_whose_config_secret_is_gone_finishes_and_says_what_it_left() -> None:
    world = running_world()
    scale_set_id = desired.scale_set_id(world.ars)
    world.ars["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    world.actions.failing[ActionsOp.DELETE_RUNNER_SCALE_SET] = "ConfigSecretMissing"
    world.settle()
    assert world.get(desired.KIND_ARS, "default", "arc") is None
    left = [e for e in world.effects_of(EmitEvent) if e.reason == "ScaleSetLeftRegistered"]
    assert [e.type for e in left] == ["Warning"]
    assert f"scale set {scale_set_id} stays registered" in left[0].message
    assert "default/creds" in left[0].message and "\n" not in left[0].message
    assert world.actions.ops().count(ActionsOp.DELETE_RUNNER_SCALE_SET) == 1  # asked once, not for ever


def refused_by_the_runner_set(world: World, generation: int | None = None) -> None:
    ers = world.ers or {}
    gen = ers["metadata"].get("generation") if generation is None else generation
    refused = {
        "type": "Ready",
        "status": "False",
        "observedGeneration": gen,
        "reason": arsconditions.PODS_REFUSED,
        "message": "the API server refuses the runner pods: spec.containers[0].image: Required value",
    }
    world.set_status(ERS_REF, conditions=[refused])


def test_runner_pods_the_api_refuses_make_a_running_scale_set_not_ready_and_warn_once() -> None:
    world = running_world()
    refused_by_the_runner_set(world)
    world.settle()

    ready = conditions.find(world.ars.get("status"), conditions.READY)
    assert ready is not None and (ready["status"], ready["reason"]) == ("False", arsconditions.PODS_REFUSED)
    assert "spec.containers[0].image" in ready["message"]
    assert world.phase == "Running" and warnings(world) == [arsconditions.PODS_REFUSED]

    world.set_status(ERS_REF, conditions=[])  # the runner set's runners run again
    world.settle()
    ready = conditions.find(world.ars.get("status"), conditions.READY)
    assert ready is not None and ready["status"] == "True"


def test_a_refusal_said_of_an_earlier_runner_set_generation_is_not_read() -> None:
    world = running_world()
    refused_by_the_runner_set(world, generation=0)
    world.settle()
    ready = conditions.find(world.ars.get("status"), conditions.READY)
    assert ready is not None and ready["status"] == "True" and warnings(world) == []
