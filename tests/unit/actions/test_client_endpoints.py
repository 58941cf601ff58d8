"""Every endpoint of §6.4 against the stub: method, path, query, headers, body, and the typed result."""

from __future__ import annotations

import json

import httpx
import pytest

from actions import errors
from actions.messages import JobAvailable, JobCompleted, JobStarted
from actions.models import Label, RunnerScaleSet
from actions.redaction import SecretStr
from actions.sessions import MessageQueue
from tests.unit.actions.servicestub import MakeClient, ServiceStub, json_body, reply, sequence

SETS = "/tenant/1/_apis/runtime/runnerscalesets"
AGENTS = "/tenant/1/_apis/distributedtask/pools/0/agents"
SCALE_SET = {
    "id": 7,
    "name": "arc",
    "runnerGroupId": 1,
    "runnerGroupName": "Default",
    "labels": [{"type": "System", "name": "arc"}],
    "RunnerSetting": {"disableUpdate": True},
    "createdOn": "2025-01-01T12:00:00.1234567Z",
    "runnerJitConfigUrl": "https://svc/jit",
    "statistics": {"totalAvailableJobs": 1, "totalIdleRunners": 2},
}
QUEUE_URL = "https://broker.example.com/tenant/1/queue/7?sessionId=s-1"
SESSION = {
    "sessionId": "s-1",
    "ownerName": "listener-pod",
    "runnerScaleSet": SCALE_SET,
    "messageQueueUrl": QUEUE_URL,
    "messageQueueAccessToken": "mq-token-1",
    "statistics": {"totalAssignedJobs": 3},
}


def last(stub: ServiceStub) -> httpx.Request:
    return stub.requests[-1]


async def test_get_runner_group_by_name(stub: ServiceStub, make_client: MakeClient) -> None:
    group = {"id": 3, "name": "my group", "size": 2, "isDefaultGroup": False}
    stub.route("GET", r"/runnergroups/$", reply(200, {"count": 1, "value": [group]}))
    found = await make_client().get_runner_group_by_name("my group")
    assert (found.id, found.name, found.size, found.is_default_group) == (3, "my group", 2, False)
    request = last(stub)
    assert request.url.path == "/tenant/1/_apis/runtime/runnergroups/"
    assert request.url.params["groupName"] == "my group"


@pytest.mark.parametrize(
    ("listing", "error"),
    [
        ({"count": 0, "value": []}, errors.RunnerGroupNotFound),
        ({"count": 2, "value": [{"id": 1}, {"id": 2}]}, errors.ProtocolError),
    ],
)
async def test_runner_group_none_or_many_is_an_error(
    stub: ServiceStub, make_client: MakeClient, listing: object, error: type[Exception]
) -> None:
    stub.route("GET", r"/runnergroups/$", reply(200, listing))
    with pytest.raises(error):
        await make_client().get_runner_group_by_name("x")


async def test_get_runner_scale_set(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("GET", r"/runnerscalesets$", reply(200, {"count": 1, "value": [SCALE_SET]}))
    found = await make_client().get_runner_scale_set(1, "arc")
    assert found is not None
    assert (found.id, found.name, found.runner_group_name, found.disable_update) == (
        7,
        "arc",
        "Default",
        True,
    )
    assert found.labels == (Label("arc", "System"),)
    assert found.created_on is not None and found.created_on.year == 2025
    assert found.statistics is not None and found.statistics.total_idle_runners == 2
    assert dict(last(stub).url.params) == {"runnerGroupId": "1", "name": "arc", "api-version": "6.0-preview"}


async def test_get_runner_scale_set_none_is_not_an_error(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("GET", r"/runnerscalesets$", reply(200, {"count": 0, "value": []}))
    assert await make_client().get_runner_scale_set(1, "arc") is None
    stub.route("GET", r"/runnerscalesets$", reply(200, {"count": 2, "value": [SCALE_SET, SCALE_SET]}))
    with pytest.raises(errors.ProtocolError, match="2 runner scale sets named 'arc'"):
        await make_client().get_runner_scale_set(1, "arc")


async def test_get_runner_scale_set_by_id(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("GET", r"/runnerscalesets/7$", reply(200, SCALE_SET))
    assert (await make_client().get_runner_scale_set_by_id(7)).id == 7
    stub.route("GET", r"/runnerscalesets/8$", reply(404, {"typeName": "RunnerScaleSetNotFoundException"}))
    with pytest.raises(errors.NotFound):
        await make_client().get_runner_scale_set_by_id(8)


async def test_create_runner_scale_set_defaults_its_label(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/runnerscalesets$", reply(200, SCALE_SET))
    created = await make_client().create_runner_scale_set(
        RunnerScaleSet(name="arc", runner_group_id=1, disable_update=True)
    )
    assert created.id == 7
    assert json_body(last(stub)) == {
        "name": "arc",
        "runnerGroupId": 1,
        "labels": [{"name": "arc", "type": "System"}],
        "RunnerSetting": {"disableUpdate": True},
    }


async def test_create_fills_empty_label_types(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/runnerscalesets$", reply(200, SCALE_SET))
    await make_client().create_runner_scale_set(
        RunnerScaleSet(name="arc", runner_group_id=1, labels=(Label("gpu", ""), Label("linux", "User")))
    )
    assert json_body(last(stub))["labels"] == [
        {"name": "gpu", "type": "System"},
        {"name": "linux", "type": "User"},
    ]


async def test_create_expects_200(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/runnerscalesets$", reply(201, SCALE_SET))
    with pytest.raises(errors.RequestRejected, match="answered 201"):
        await make_client().create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))


async def test_update_runner_scale_set_sends_only_what_changes(
    stub: ServiceStub, make_client: MakeClient
) -> None:
    stub.route("PATCH", r"/runnerscalesets/7$", reply(200, SCALE_SET))
    client = make_client()
    await client.update_runner_scale_set(7, runner_group_id=2)
    assert json_body(last(stub)) == {"runnerGroupId": 2}
    await client.update_runner_scale_set(7, name="renamed")
    assert json_body(last(stub)) == {"name": "renamed"}
    with pytest.raises(ValueError):
        await client.update_runner_scale_set(7)


async def test_delete_runner_scale_set(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("DELETE", r"/runnerscalesets/7$", reply(204))
    await make_client().delete_runner_scale_set(7)
    assert (last(stub).method, last(stub).url.path) == ("DELETE", f"{SETS}/7")


async def test_generate_jit_runner_config(stub: ServiceStub, make_client: MakeClient) -> None:
    answer = {
        "runner": {"id": 42, "name": "runner-a", "runnerScaleSetId": 7},
        "encodedJITConfig": "ZW5jb2RlZA==",
    }
    stub.route("POST", r"/generatejitconfig$", reply(200, answer))
    jit = await make_client().generate_jit_runner_config(7, "runner-a", work_folder="_work")
    assert (jit.runner.id, jit.runner.name, jit.runner.runner_scale_set_id) == (42, "runner-a", 7)
    assert jit.encoded_jit_config.reveal() == "ZW5jb2RlZA=="
    assert "ZW5jb2RlZA" not in repr(jit)
    assert last(stub).url.path == f"{SETS}/7/generatejitconfig"
    assert json_body(last(stub)) == {"name": "runner-a", "workFolder": "_work"}


async def test_jit_name_clash_maps_on_type_name(stub: ServiceStub, make_client: MakeClient) -> None:
    clash = {"typeName": "GitHub.DistributedTask.WebApi.AgentExistsException, x", "message": "exists"}
    stub.route("POST", r"/generatejitconfig$", reply(409, clash))
    with pytest.raises(errors.RunnerExistsError):
        await make_client().generate_jit_runner_config(7, "runner-a")


async def test_get_runner_and_by_name(stub: ServiceStub, make_client: MakeClient) -> None:
    runner = {"id": 42, "name": "runner-a", "runnerScaleSetId": 7, "status": "online"}
    stub.route("GET", r"/agents/42$", reply(200, runner))
    stub.route("GET", r"/agents$", reply(200, {"count": 1, "value": [runner]}))
    client = make_client()
    assert (await client.get_runner(42)).name == "runner-a"
    found = await client.get_runner_by_name("runner-a")
    assert found is not None and found.runner_scale_set_id == 7
    assert last(stub).url.params["agentName"] == "runner-a"
    stub.route("GET", r"/agents$", reply(200, {"count": 0, "value": []}))
    assert await client.get_runner_by_name("nobody") is None


async def test_remove_runner(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("DELETE", r"/agents/42$", reply(204))
    await make_client().remove_runner(42)
    assert last(stub).url.path == f"{AGENTS}/42"


@pytest.mark.parametrize(
    ("status", "type_name", "error"),
    [
        (400, "JobStillRunningException", errors.JobStillRunningError),
        (409, "JobStillRunningException", errors.JobStillRunningError),
        (404, "AgentNotFoundException", errors.RunnerNotFoundError),
        (200, "", errors.RequestRejected),
    ],
)
async def test_remove_runner_failures(
    stub: ServiceStub, make_client: MakeClient, status: int, type_name: str, error: type[Exception]
) -> None:
    stub.route("DELETE", r"/agents/42$", reply(status, {"typeName": type_name, "message": "m"}))
    with pytest.raises(error):
        await make_client().remove_runner(42)


async def test_sessions(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/runnerscalesets/7/sessions$", reply(200, SESSION))
    stub.route(
        "PATCH", r"/runnerscalesets/7/sessions/s-1$", reply(200, SESSION | {"messageQueueAccessToken": "t2"})
    )
    stub.route("DELETE", r"/runnerscalesets/7/sessions/s-1$", reply(204))
    client = make_client()
    session = await client.create_message_session(7, "listener-pod")
    assert json_body(last(stub)) == {"ownerName": "listener-pod"}
    assert (session.session_id, session.message_queue_url) == ("s-1", QUEUE_URL)
    assert session.message_queue_access_token.reveal() == "mq-token-1"
    assert "mq-token-1" not in repr(session)
    assert session.statistics is not None and session.statistics.total_assigned_jobs == 3
    assert session.runner_scale_set is not None and session.runner_scale_set.id == 7
    refreshed = await client.refresh_message_session(7, "s-1")
    assert refreshed.message_queue_access_token.reveal() == "t2"
    await client.delete_message_session(7, "s-1")


async def test_session_conflict_is_an_error(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/sessions$", reply(409, {"typeName": "RunnerScaleSetSessionConflictException"}))
    with pytest.raises(errors.RequestRejected, match="RunnerScaleSetSessionConflictException"):
        await make_client().create_message_session(7, "listener-pod")


def _message(
    message_id: int, jobs: list[dict[str, object]], message_type: str = "RunnerScaleSetJobMessages"
) -> dict[str, object]:
    return {
        "messageId": message_id,
        "messageType": message_type,
        "statistics": {"totalAssignedJobs": 1},
        "body": json.dumps(jobs),
    }


async def test_get_message_with_the_queue_token(stub: ServiceStub, make_client: MakeClient) -> None:
    jobs = [
        {
            "messageType": "JobAvailable",
            "runnerRequestId": 11,
            "acquireJobUrl": "https://svc/acq",
            "jobId": "j",
        },
        {"messageType": "JobStarted", "runnerRequestId": 12, "runnerId": 42, "runnerName": "runner-a"},
        {"messageType": "JobCompleted", "runnerRequestId": 13, "result": "succeeded", "runnerId": 43},
        {"messageType": "JobAssigned", "runnerRequestId": 14},
        {"messageType": "SomethingNew", "runnerRequestId": 15},
    ]
    stub.route("GET", r"/queue/7$", reply(200, _message(5, jobs)))
    message = await make_client().get_message(QUEUE_URL, SecretStr("mq"), last_message_id=4, max_capacity=10)
    assert message is not None and message.message_id == 5
    assert [type(j).__name__ for j in message.jobs] == [
        "JobAvailable",
        "JobStarted",
        "JobCompleted",
        "JobAssigned",
    ]
    assert message.available == (message.jobs[0],) and isinstance(message.jobs[0], JobAvailable)
    assert isinstance(message.jobs[1], JobStarted) and message.jobs[1].runner_name == "runner-a"
    assert isinstance(message.jobs[2], JobCompleted) and message.jobs[2].result == "succeeded"
    request = last(stub)
    assert request.headers["Authorization"] == "Bearer mq"
    assert request.headers["Accept"] == "application/json; api-version=6.0-preview"
    assert request.headers["X-ScaleSetMaxCapacity"] == "10"
    assert dict(request.url.params) == {"sessionId": "s-1", "lastMessageId": "4"}


async def test_get_message_202_is_none_and_first_poll_has_no_last_id(
    stub: ServiceStub, make_client: MakeClient
) -> None:
    stub.route("GET", r"/queue/7$", reply(202))
    assert (
        await make_client().get_message(QUEUE_URL, SecretStr("mq"), last_message_id=0, max_capacity=0) is None
    )
    assert "lastMessageId" not in last(stub).url.params


async def test_get_message_other_type_is_an_error(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("GET", r"/queue/7$", reply(200, _message(5, [], message_type="Other")))
    with pytest.raises(errors.ProtocolError, match="unsupported messageType 'Other'"):
        await make_client().get_message(QUEUE_URL, SecretStr("mq"), last_message_id=0, max_capacity=1)


async def test_queue_401_means_the_queue_token_expired(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("GET", r"/queue/7$", reply(401))
    with pytest.raises(errors.MessageQueueTokenExpired):
        await make_client().get_message(QUEUE_URL, SecretStr("mq"), last_message_id=0, max_capacity=1)


async def test_delete_message_keeps_the_queue_query(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("DELETE", r"/queue/7/5$", reply(204))
    await make_client().delete_message(QUEUE_URL, SecretStr("mq"), 5)
    assert str(last(stub).url) == "https://broker.example.com/tenant/1/queue/7/5?sessionId=s-1"
    assert last(stub).headers["Authorization"] == "Bearer mq"


async def test_acquire_jobs(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/acquirejobs$", reply(200, {"count": 1, "value": [11]}))
    acquired = await make_client().acquire_jobs(7, SecretStr("mq"), [11, 12])
    assert acquired == (11,)
    request = last(stub)
    assert request.url.path == f"{SETS}/7/acquirejobs"
    assert request.url.params["api-version"] == "6.0-preview"
    assert request.headers["Authorization"] == "Bearer mq"
    assert json_body(request) == [11, 12]


async def test_get_acquirable_jobs(stub: ServiceStub, make_client: MakeClient) -> None:
    job = {"runnerRequestId": 11, "messageType": "JobAvailable", "requestLabels": ["arc"]}
    stub.route("GET", r"/acquirablejobs$", sequence(reply(200, {"count": 1, "value": [job]}), reply(204)))
    client = make_client()
    jobs = await client.get_acquirable_jobs(7)
    assert [(j.runner_request_id, j.request_labels) for j in jobs] == [(11, ("arc",))]
    assert await client.get_acquirable_jobs(7) == ()


async def test_utf8_bom_is_stripped(stub: ServiceStub, make_client: MakeClient) -> None:
    body = b"\xef\xbb\xbf" + json.dumps(SCALE_SET).encode()
    stub.route("GET", r"/runnerscalesets/7$", lambda r: httpx.Response(200, content=body))
    assert (await make_client().get_runner_scale_set_by_id(7)).name == "arc"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>oops</html>", "the answer is not JSON"),
        (b"[]", "expected a JSON object"),
        (json.dumps({"name": "x"}).encode(), "field 'id' is missing"),
        (json.dumps({"id": "7"}).encode(), "field 'id' is a str, expected an integer"),
    ],
)
async def test_unusable_answers_are_protocol_errors(
    stub: ServiceStub, make_client: MakeClient, body: bytes, message: str
) -> None:
    stub.route("GET", r"/runnerscalesets/7$", lambda r: httpx.Response(200, content=body))
    with pytest.raises(errors.ProtocolError, match=message):
        await make_client().get_runner_scale_set_by_id(7)


async def test_message_queue_refreshes_the_session_once(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/sessions$", reply(200, SESSION))
    stub.route("PATCH", r"/sessions/s-1$", reply(200, SESSION | {"messageQueueAccessToken": "mq-token-2"}))
    stub.route("DELETE", r"/sessions/s-1$", reply(204))
    stub.route("GET", r"/queue/7$", sequence(reply(401), reply(202)))
    client = make_client()
    async with await MessageQueue.open(client, scale_set_id=7, owner_name="listener-pod") as queue:
        assert await queue.get_message(last_message_id=0, max_capacity=2) is None
        assert queue.session.message_queue_access_token.reveal() == "mq-token-2"
    polls = [r.headers["Authorization"] for r in stub.requests if r.url.path.endswith("/queue/7")]
    assert polls == ["Bearer mq-token-1", "Bearer mq-token-2"]
    assert stub.paths()[-1] == "DELETE /tenant/1/_apis/runtime/runnerscalesets/7/sessions/s-1"


async def test_message_queue_gives_up_after_one_refresh(stub: ServiceStub, make_client: MakeClient) -> None:
    stub.route("POST", r"/sessions$", reply(200, SESSION))
    stub.route("PATCH", r"/sessions/s-1$", reply(200, SESSION))
    stub.route("POST", r"/acquirejobs$", reply(401))
    queue = await MessageQueue.open(make_client(), scale_set_id=7, owner_name="listener-pod")
    with pytest.raises(errors.MessageQueueTokenExpired):
        await queue.acquire_jobs([1])
    assert len(stub.paths("acquirejobs")) == 2
