"""The retry policy (§6.2 HTTP behaviour): which failures are retried, how long each wait is, and what a
caller sees when the retries run out. Waits are recorded, never slept."""

from __future__ import annotations

import asyncio
import ssl
from datetime import UTC, datetime

import httpx
import pytest

from actions import errors, retrying
from actions.client import ClientSettings, RateLimit
from actions.retrying import RetryableAnswer, RetryPolicy
from tests.unit.actions.servicestub import MakeClient, ServiceStub, reply, sequence

GROUPS = r"/_apis/runtime/runnergroups/$"
ONE_GROUP = {"count": 1, "value": [{"id": 1, "name": "Default", "isDefaultGroup": True}]}


@pytest.mark.parametrize(
    ("status", "retried"),
    [(200, False), (201, False), (400, False), (401, False), (403, False), (404, False), (409, False),
     (429, True), (500, True), (501, False), (502, True), (503, True), (504, True), (599, True)],
)  # fmt: skip
def test_status_decisions(status: int, retried: bool) -> None:
    assert retrying.is_retryable_status(status) is retried


def test_extra_statuses_are_retried_only_when_asked() -> None:
    assert retrying.is_retryable_status(401, frozenset({401, 403}))
    assert not retrying.is_retryable_status(401)


def _cert_error() -> httpx.ConnectError:
    error = httpx.ConnectError("certificate verify failed")
    error.__cause__ = ssl.SSLCertVerificationError("self-signed")
    return error


@pytest.mark.parametrize(
    ("failure", "retried"),
    [
        (httpx.ConnectError("refused"), True),
        (httpx.ReadTimeout("slow"), True),
        (httpx.ConnectTimeout("slow"), True),
        (httpx.ReadError("reset"), True),
        (httpx.RemoteProtocolError("server hung up"), True),
        (httpx.ProxyError("proxy down"), True),
        (httpx.UnsupportedProtocol("gopher://"), False),
        (httpx.LocalProtocolError("bad header"), False),
        (_cert_error(), False),
        (ValueError("a bug"), False),
    ],
)
def test_exception_decisions(failure: BaseException, retried: bool) -> None:
    assert RetryPolicy().should_retry(failure) is retried


def test_backoff_doubles_from_one_second_and_caps_at_thirty() -> None:
    policy = RetryPolicy()
    assert [policy.backoff(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def _answer(status: int, retry_after: float | None) -> RetryableAnswer:
    return RetryableAnswer(httpx.Response(status), retry_after)


def test_retry_after_is_honoured_and_a_long_one_is_not_slept_through() -> None:
    policy = RetryPolicy()
    assert policy.wait(1, _answer(429, 7.0)) == 7.0
    assert policy.wait(3, _answer(503, None)) == 4.0
    assert policy.should_retry(_answer(429, 30.0))
    assert not policy.should_retry(_answer(429, 31.0))


def test_retry_after_parsing() -> None:
    now = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
    assert retrying.retry_after_seconds("5", now=now) == 5.0
    assert retrying.retry_after_seconds("-3", now=now) == 0.0
    assert retrying.retry_after_seconds("Wed, 01 Jan 2025 12:00:20 GMT", now=now) == 20.0
    assert retrying.retry_after_seconds("soon", now=now) is None
    assert retrying.retry_after_seconds(None, now=now) is None


async def test_a_5xx_burst_is_ridden_out(
    stub: ServiceStub, make_client: MakeClient, sleeps: list[float]
) -> None:
    stub.route("GET", GROUPS, sequence(reply(500), reply(502), reply(503), reply(200, ONE_GROUP)))
    group = await make_client().get_runner_group_by_name("Default")
    assert group.id == 1
    assert sleeps == [1.0, 2.0, 4.0]
    assert len(stub.paths("runnergroups")) == 4


async def test_four_retries_then_service_unavailable(
    stub: ServiceStub, make_client: MakeClient, sleeps: list[float]
) -> None:
    stub.route("GET", GROUPS, reply(503, {"message": "down"}, **{"Retry-After": "2"}))
    with pytest.raises(errors.ServiceUnavailable) as caught:
        await make_client().get_runner_group_by_name("Default")
    assert len(stub.paths("runnergroups")) == 5
    assert sleeps == [2.0, 2.0, 2.0, 2.0]
    assert caught.value.retry_after == 2.0
    assert "answered 503" in str(caught.value)


async def test_429_with_retry_after(stub: ServiceStub, make_client: MakeClient, sleeps: list[float]) -> None:
    stub.route(
        "GET",
        GROUPS,
        sequence(reply(429, {"message": "slow"}, **{"Retry-After": "3"}), reply(200, ONE_GROUP)),
    )
    await make_client().get_runner_group_by_name("Default")
    assert sleeps == [3.0]


async def test_a_long_retry_after_comes_back_to_the_caller_at_once(
    stub: ServiceStub, make_client: MakeClient, sleeps: list[float]
) -> None:
    stub.route("GET", GROUPS, reply(429, {"message": "secondary rate limit"}, **{"Retry-After": "600"}))
    with pytest.raises(errors.ServiceUnavailable) as caught:
        await make_client().get_runner_group_by_name("Default")
    assert sleeps == []
    assert caught.value.retry_after == 600.0


async def test_501_and_4xx_are_not_retried(
    stub: ServiceStub, make_client: MakeClient, sleeps: list[float]
) -> None:
    stub.route("GET", GROUPS, reply(501, {"message": "no"}))
    with pytest.raises(errors.RequestRejected):
        await make_client().get_runner_group_by_name("Default")
    assert sleeps == [] and len(stub.paths("runnergroups")) == 1


async def test_transport_errors_are_retried_then_reported(
    stub: ServiceStub, make_client: MakeClient, sleeps: list[float]
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    stub.route("GET", GROUPS, refuse)
    with pytest.raises(errors.ServiceUnreachable, match="ConnectError: connection refused") as caught:
        await make_client().get_runner_group_by_name("Default")
    assert sleeps == [1.0, 2.0, 4.0, 8.0]
    assert isinstance(caught.value, errors.ServiceUnavailable)  # still an outage to a listener
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


async def test_runner_registration_retries_401_and_403(
    stub: ServiceStub, make_client: MakeClient, sleeps: list[float]
) -> None:
    stub.route(
        "POST",
        r"/actions/runner-registration$",
        sequence(reply(401, {"message": "not yet"}), reply(403, {"message": "not yet"}), stub._admin),
    )
    stub.route("GET", GROUPS, reply(200, ONE_GROUP))
    await make_client().get_runner_group_by_name("Default")
    assert sleeps == [1.0, 2.0]


async def test_registration_token_401_is_not_retried(
    stub: ServiceStub, make_client: MakeClient, sleeps: list[float]
) -> None:
    stub.route("POST", r"/registration-token$", reply(401, {"message": "Bad credentials"}))
    with pytest.raises(errors.AuthenticationFailed, match="Bad credentials"):
        await make_client().get_runner_group_by_name("Default")
    assert sleeps == []


async def test_the_client_side_rate_limit_holds_requests_back(
    stub: ServiceStub, make_client: MakeClient
) -> None:
    stub.route("DELETE", r"/runnerscalesets/\d+$", reply(204))
    client = make_client(settings=ClientSettings(rate_limit=RateLimit(max_rate=3, time_period=60)))
    await client.delete_runner_scale_set(1)  # registration token, runner-registration, the delete: 3
    held = asyncio.create_task(client.delete_runner_scale_set(2))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not held.done()
    assert len(stub.requests) == 3
    held.cancel()
    with pytest.raises(asyncio.CancelledError):
        await held
