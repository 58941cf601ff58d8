"""The error model of §6.3: typeName first (by substring), then the status; ids quoted; one line."""

from __future__ import annotations

import json

import pytest

from actions import errors

QUALIFIED = "GitHub.DistributedTask.WebApi.{}, GitHub.DistributedTask.WebApi"


def info(status: int, body: object = None, *, text: str = "", **headers: str) -> errors.ResponseInfo:
    raw = text.encode() if body is None else json.dumps(body).encode()
    content_type = "text/plain" if body is None else "application/json"
    return errors.ResponseInfo.parse(
        method="POST",
        url="https://svc/_apis/x",
        status=status,
        body=raw,
        headers={"Content-Type": content_type, **headers},
    )


TYPE_NAMES = {
    # typeName: (status, class, transient?)
    "AgentExistsException": (409, errors.RunnerExistsError, False),
    "AgentNotFoundException": (404, errors.RunnerNotFoundError, False),
    "JobStillRunningException": (400, errors.JobStillRunningError, True),
}


@pytest.mark.parametrize("type_key", TYPE_NAMES)
@pytest.mark.parametrize("qualified", [False, True])
def test_type_name_decides_the_class(type_key: str, qualified: bool) -> None:
    status, error_class, transient = TYPE_NAMES[type_key]
    type_name = QUALIFIED.format(type_key) if qualified else type_key
    error = errors.from_response(info(status, {"typeName": type_name, "message": "m"}))
    assert type(error) is error_class
    assert isinstance(error, errors.Transient) is transient
    assert isinstance(error, errors.Terminal) is not transient


@pytest.mark.parametrize("status", [200, 400, 409, 500, 503])
def test_type_name_wins_over_status(status: int) -> None:
    error = errors.from_response(info(status, {"typeName": "JobStillRunningException", "message": "busy"}))
    assert isinstance(error, errors.JobStillRunningError)


STATUSES = {
    429: errors.ServiceUnavailable,
    500: errors.ServiceUnavailable,
    502: errors.ServiceUnavailable,
    503: errors.ServiceUnavailable,
    501: errors.RequestRejected,
    400: errors.RequestRejected,
    401: errors.AuthenticationFailed,
    403: errors.AuthenticationFailed,
    404: errors.NotFound,
    409: errors.RequestRejected,
    200: errors.RequestRejected,
}


@pytest.mark.parametrize("status", STATUSES)
def test_status_decides_without_a_known_type_name(status: int) -> None:
    error = errors.from_response(info(status, {"typeName": "SomethingElseException", "message": "m"}))
    assert type(error) is STATUSES[status]
    assert isinstance(error, errors.Transient) is (status == 429 or (status >= 500 and status != 501))


def test_retry_after_travels_on_transient_errors() -> None:
    error = errors.from_response(info(429, {"message": "slow down"}), retry_after=12.0)
    assert isinstance(error, errors.ServiceUnavailable)
    assert error.retry_after == 12.0


def test_message_quotes_status_type_message_and_ids_on_one_line() -> None:
    body = {"typeName": QUALIFIED.format("AgentExistsException"), "message": "A runner named\n'x' exists."}
    error = errors.from_response(info(409, body, ActivityId="act-1", **{"X-GitHub-Request-Id": "req-2"}))
    text = str(error)
    assert text.startswith("POST https://svc/_apis/x answered 409: GitHub.DistributedTask.WebApi.AgentExists")
    assert "A runner named 'x' exists." in text
    assert text.endswith("(ActivityId act-1, X-GitHub-Request-Id req-2)")
    assert "\n" not in text
    assert error.response is not None and error.response.type_name.startswith("GitHub.")


def test_text_plain_body_is_kept_raw() -> None:
    error = errors.from_response(info(500, text="upstream connect error"))
    assert error.response is not None
    assert error.response.type_name == ""
    assert error.response.message == "upstream connect error"


def test_json_without_message_keeps_the_body() -> None:
    error = errors.from_response(info(400, ["not", "an", "object"]))
    assert error.response is not None and error.response.message == '["not", "an", "object"]'


def test_token_shaped_text_from_a_server_is_scrubbed() -> None:
    body = {
        "message": "bad token ghp_abcdefghijklmnop and eyJhbGciOi.eyJzdWIiOiIx.c2ln and Bearer abcdefgh12345"
    }
    text = str(errors.from_response(info(401, body)))
    for secret in ("ghp_abcdefghijklmnop", "eyJhbGciOi", "abcdefgh12345"):
        assert secret not in text
    assert text.count("***") == 3


def test_long_messages_are_cut() -> None:
    error = errors.from_response(info(400, {"message": "x" * 5000}))
    assert len(str(error)) < 400


def test_hierarchy() -> None:
    assert issubclass(errors.Transient, errors.ActionsError)
    assert issubclass(errors.Terminal, errors.ActionsError)
    assert issubclass(errors.InvalidConfigUrl, ValueError)
    assert issubclass(errors.RunnerExistsError, errors.RequestRejected)
    assert issubclass(errors.MessageQueueTokenExpired, errors.Transient)
