"""Secrets never show: ``SecretStr`` in every printable form, and a whole flow logged at DEBUG."""

from __future__ import annotations

import json
import logging
import pickle

import pytest

from actions import redaction
from actions.credentials import GitHubApp
from actions.models import RunnerScaleSet
from actions.redaction import SecretStr
from actions.sessions import MessageQueue
from tests.unit.actions.servicestub import (
    INSTALLATION_TOKEN,
    REGISTRATION_TOKEN,
    MakeClient,
    ServiceStub,
    reply,
)


def test_secret_str_never_prints_its_value() -> None:
    secret = SecretStr("ghp_topsecretvalue")
    for text in (
        repr(secret),
        str(secret),
        f"{secret}",
        f"{secret!r}",
        "%s" % (secret,),  # noqa: UP031 - the logging module formats this way
        f"{secret:>30}",
    ):
        assert "topsecret" not in text
    with pytest.raises(TypeError):
        json.dumps(secret)
    with pytest.raises(TypeError):
        pickle.dumps(secret)
    assert secret.reveal() == "ghp_topsecretvalue"


def test_secret_str_compares_by_value() -> None:
    assert SecretStr("a") == SecretStr("a") and SecretStr("a") != SecretStr("b")
    assert hash(SecretStr("a")) == hash(SecretStr("a"))
    assert SecretStr("a") != "a"
    assert not SecretStr("") and len(SecretStr("abc")) == 3


def test_scrub() -> None:
    assert redaction.scrub("token ghs_abcdefghijklmnopqrstuvwxyz ok") == "token *** ok"
    assert redaction.scrub("RemoteAuth AAAAAAAAAAAAAAAAAAAAAAAAAAAAA") == "***"
    assert redaction.scrub("plain words stay") == "plain words stay"


SCALE_SET = {"id": 7, "name": "arc", "runnerGroupId": 1}
JIT = "eyJqaXQiOiJjb25maWcifQ-OPAQUE-JIT-CONFIG"
MQ_TOKEN = "message-queue-token-value-0001"


async def test_a_full_flow_logged_at_debug_carries_no_secret(
    stub: ServiceStub,
    make_client: MakeClient,
    app_credentials: GitHubApp,
    rsa_pem: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue_url = "https://broker.example.com/queue/7?sessionId=s-1"
    session = {"sessionId": "s-1", "messageQueueUrl": queue_url, "messageQueueAccessToken": MQ_TOKEN}
    stub.route("POST", r"/runnerscalesets$", reply(200, SCALE_SET))
    stub.route(
        "POST",
        r"/generatejitconfig$",
        reply(200, {"runner": {"id": 1, "name": "r"}, "encodedJITConfig": JIT}),
    )
    stub.route("POST", r"/sessions$", reply(200, session))
    stub.route("GET", r"/queue/7$", reply(401))
    stub.route("PATCH", r"/sessions/s-1$", reply(200, session))
    stub.route("DELETE", r"/sessions/s-1$", reply(204))
    stub.route(
        "DELETE", r"/agents/1$", reply(400, {"typeName": "JobStillRunningException", "message": "busy"})
    )
    caplog.set_level(logging.DEBUG)
    client = make_client(credentials=app_credentials)
    errors_seen: list[str] = []
    await client.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))
    jit = await client.generate_jit_runner_config(7, "r")
    async with await MessageQueue.open(client, scale_set_id=7, owner_name="me") as queue:
        try:
            await queue.get_message(last_message_id=0, max_capacity=1)
        except Exception as exc:
            errors_seen.append(f"{exc!r} {exc}")
    try:
        await client.remove_runner(1)
    except Exception as exc:
        errors_seen.append(f"{exc!r} {exc}")
    assert len(errors_seen) == 2

    app_jwt = stub.requests[0].headers["Authorization"].removeprefix("Bearer ")
    secrets = [INSTALLATION_TOKEN, REGISTRATION_TOKEN, MQ_TOKEN, JIT, app_jwt, *stub.admin_tokens]
    secrets += [line for line in rsa_pem.splitlines() if "PRIVATE KEY" not in line][:3]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert caplog.records, "expected the flow to log something at DEBUG"
    shown = "\n".join([logged, *errors_seen, repr(jit), repr(client.system_info), repr(app_credentials)])
    for secret in secrets:
        assert secret not in shown
