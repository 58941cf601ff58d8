"""The one reading of a failed Kubernetes request (``kube.failures.Failure``), from real answers of the
emulated API server over HTTP: kubernetes_asyncio's ``ApiException``, a raw answer as the watchers read
it, a watch ERROR event's Status, and a connection that nothing answers."""

from __future__ import annotations

import json
import socket
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from kube.failures import UNANSWERED, Failure
from sim.faults import Fault
from sim.world import World

NS = "default"


def config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}}


async def failure_of(call: Any) -> Failure:
    with pytest.raises(ApiException) as raised:
        await call
    return Failure.from_api_exception(raised.value)


async def test_not_found_is_read_from_the_status(kube: client.ApiClient) -> None:
    failure = await failure_of(client.CoreV1Api(kube).read_namespaced_config_map("absent", NS))
    assert (failure.code, failure.reason, failure.phrase) == (404, "NotFound", "Not Found")
    assert "absent" in failure.message
    assert failure.not_found and not (failure.conflict or failure.gone or failure.retryable)
    assert failure.retry_after is None and failure.text == ""


async def test_a_second_create_is_a_conflict(kube: client.ApiClient) -> None:
    core = client.CoreV1Api(kube)
    await core.create_namespaced_config_map(NS, config_map("twice"))
    failure = await failure_of(core.create_namespaced_config_map(NS, config_map("twice")))
    assert (failure.code, failure.reason) == (409, "AlreadyExists")
    assert failure.conflict and not failure.retryable


@pytest.mark.parametrize(
    ("code", "reason", "retryable", "gone"),
    [
        (410, "Expired", False, True),
        (429, "TooManyRequests", True, False),
        (500, "InternalError", True, False),
        (503, "ServiceUnavailable", True, False),
        (504, "Timeout", True, False),
    ],
)
async def test_injected_answers(
    world: World, kube: client.ApiClient, code: int, reason: str, retryable: bool, gone: bool
) -> None:
    world.inject(Fault(verb="list", path=r"/configmaps$", code=code, message="boom"))
    failure = await failure_of(client.CoreV1Api(kube).list_namespaced_config_map(NS))
    assert (failure.code, failure.reason, failure.message) == (code, reason, "boom")
    assert (failure.retryable, failure.gone) == (retryable, gone)
    assert failure.reason_or_default() == reason


async def test_retry_after_from_an_api_exception(world: World, kube: client.ApiClient) -> None:
    world.inject(Fault(verb="get", path=r"/configmaps/slow$", code=429, retry_after=3, message="slow down"))
    failure = await failure_of(client.CoreV1Api(kube).read_namespaced_config_map("slow", NS))
    assert failure.retry_after == 3.0 and failure.retryable


async def test_a_raw_answer_reads_the_same(world: World, kube: client.ApiClient) -> None:
    world.inject(Fault(verb="list", path=r"/configmaps$", code=503, retry_after=2, message="busy"))
    resp = await client.CoreV1Api(kube).list_namespaced_config_map(NS, _preload_content=False)
    try:
        body = await resp.read()
    finally:
        resp.release()
    failure = Failure.from_answer(resp.status, body, resp.headers)
    assert (failure.code, failure.reason, failure.message, failure.retry_after) == (
        503,
        "ServiceUnavailable",
        "busy",
        2.0,
    )


def test_retry_after_header_first_then_the_details() -> None:
    body = json.dumps({"kind": "Status", "code": 429, "details": {"retryAfterSeconds": 7}})
    assert Failure.from_answer(429, body, {"Retry-After": "4"}).retry_after == 4.0
    assert Failure.from_answer(429, body, {}).retry_after == 7.0
    assert Failure.from_answer(429, body, {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}).retry_after == 7.0
    assert Failure.from_answer(503, "{}", {"Retry-After": "-5"}).retry_after == 0.0
    assert Failure.from_answer(503, "{}", {}).retry_after is None


def test_a_body_that_is_not_a_status() -> None:
    failure = Failure.from_answer(502, b"<html>bad gateway</html>" + b"x" * 500, {}, phrase="Bad Gateway")
    assert (failure.reason, failure.message, failure.phrase) == ("", "", "Bad Gateway")
    assert failure.text.startswith("<html>bad gateway</html>") and len(failure.text) == 200
    assert failure.retryable and failure.reason_or_default() == "Failed"
    assert Failure.from_answer(400, b"", {}).reason_or_default() == "BadRequest"


def test_a_watch_error_event_carries_its_own_code() -> None:
    event = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
    failure = Failure.from_status(event)
    assert (failure.code, failure.gone, failure.message) == (410, True, "too old resource version")
    assert Failure.from_status({"reason": "InternalError"}).code == 500
    assert Failure.from_status({"code": "not a number"}).code == 500


async def test_no_answer_at_all() -> None:
    with socket.socket() as sock:  # a port that was just free: nothing listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    configuration = client.Configuration(host=f"http://127.0.0.1:{port}")
    async with client.ApiClient(configuration) as api:
        with pytest.raises(UNANSWERED) as raised:
            await client.CoreV1Api(api).read_namespaced_config_map("any", NS)
    assert isinstance(raised.value, aiohttp.ClientError)
    failure = Failure.unanswered(raised.value)
    assert (failure.code, failure.reason, failure.phrase) == (0, "", type(raised.value).__name__)
    assert failure.retryable and failure.reason_or_default() == "ServiceUnavailable"
