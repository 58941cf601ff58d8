"""Backoff and error classification: what a watcher retries, how long it waits, what a Status means."""

from __future__ import annotations

import json
import random

import pytest
import tenacity

from watchers import errors, retrying
from watchers.settings import Backoff, WatchSettings

BACKOFF = Backoff(initial=0.5, maximum=8.0, retry_after_max=60.0)


def state_after(exc: BaseException, attempt: int) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(retry_object=tenacity.Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


@pytest.mark.parametrize("attempt", [1, 2, 3, 5, 10, 50])
def test_exponential_backoff_with_jitter_stays_within_bounds(attempt: int) -> None:
    wait = retrying.BackoffWait(BACKOFF, random.Random(1))
    seconds = wait(state_after(errors.TransportError("reset"), attempt))
    low = min(BACKOFF.initial * 2 ** (attempt - 1), BACKOFF.maximum)
    assert low <= seconds <= min(low + BACKOFF.initial, BACKOFF.maximum)


def test_retry_after_sets_the_wait_even_above_the_maximum() -> None:
    wait = retrying.BackoffWait(BACKOFF, random.Random(1))
    exc = errors.ApiError(429, "TooManyRequests", "slow down", retry_after=20)
    seconds = wait(state_after(exc, 1))
    assert 20 <= seconds <= 20 + BACKOFF.initial


def test_retry_after_is_capped() -> None:
    wait = retrying.BackoffWait(BACKOFF, random.Random(1))
    seconds = wait(state_after(errors.ApiError(503, "ServiceUnavailable", "", retry_after=3600), 1))
    assert seconds <= BACKOFF.retry_after_max + BACKOFF.initial


@pytest.mark.parametrize(
    ("exc", "retried"),
    [
        (errors.TransportError("reset"), True),
        (errors.ApiError(500, "InternalError", ""), True),
        (errors.ApiError(429, "TooManyRequests", ""), True),
        (errors.ApiError(403, "Forbidden", ""), True),  # retried too, logged as an error: RBAC may be fixed
        (errors.Expired(410, "Expired", ""), False),  # the caller re-lists instead
        (ValueError("a bug"), False),
    ],
)
def test_what_is_retried(exc: BaseException, retried: bool) -> None:
    assert retrying.retryable(exc) is retried


@pytest.mark.parametrize(
    ("status", "transient"), [(429, True), (500, True), (504, True), (403, False), (404, False)]
)
def test_transient_statuses(status: int, transient: bool) -> None:
    assert errors.ApiError(status, "", "").transient is transient


def test_from_response_reads_the_status_and_retry_after() -> None:
    body = json.dumps({"kind": "Status", "code": 429, "reason": "TooManyRequests", "message": "slow down"})
    exc = errors.from_response(429, body.encode(), {"Retry-After": "3"})
    assert (exc.status, exc.reason, exc.message, exc.retry_after) == (
        429,
        "TooManyRequests",
        "slow down",
        3.0,
    )


def test_from_response_takes_retry_after_from_the_details_too() -> None:
    body = json.dumps({"code": 503, "details": {"retryAfterSeconds": 2}})
    assert errors.from_response(503, body.encode(), {}).retry_after == 2.0


def test_a_410_is_expired_and_a_non_status_body_still_errs() -> None:
    assert isinstance(errors.from_status({"code": 410, "reason": "Expired"}), errors.Expired)
    exc = errors.from_response(502, b"<html>bad gateway</html>", {})
    assert exc.status == 502
    assert "bad gateway" in exc.message


def test_settings_reject_unknown_kinds_with_the_known_ones() -> None:
    with pytest.raises(
        ValueError, match="cannot watch Deployment: the watched kinds are AutoscalingRunnerSet"
    ):
        WatchSettings(kinds=("Deployment",))


def test_settings_give_one_watcher_per_kind_and_namespace() -> None:
    settings = WatchSettings(namespaces=("a", "b"), kinds=("Pod", "ServiceAccount"))
    assert [(k.kind, ns) for k, ns in settings.watched()] == [
        ("Pod", "a"),
        ("Pod", "b"),
        ("ServiceAccount", "a"),
        ("ServiceAccount", "b"),
    ]
    assert [(k.kind, ns) for k, ns in WatchSettings(kinds=("Role",)).watched()] == [("Role", None)]
