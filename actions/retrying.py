"""The retry policy for every request, after go-retryablehttp as the upstream client uses it (§6.2).

A request is retried up to ``retries`` (4) times when it fails with

* a transport error (connect, read or write error, timeout, a broken response, a proxy failure), except
  an unsupported URL scheme, a local protocol error or a failed certificate check, which repeat;
* an answer 429, or 5xx other than 501 (Not Implemented repeats too);
* an answer in the request's own extra set (runner-registration retries 401 and 403, §6.2 step 3).

The wait before retry *n* (1-based) is ``min_wait * 2**(n-1)`` capped at ``max_wait`` (1, 2, 4, 8 s),
unless the answer had ``Retry-After``, which is honoured as given. A ``Retry-After`` longer than
``max_wait`` is not slept through: the request gives up at once, and the caller gets a ``Transient``
error whose ``retry_after`` says when to come back (a controller requeues; nothing holds a connection
for minutes). There is no jitter: the upstream client has none, and the waits stay testable.

The decisions are pure functions of the policy, the attempt number and the failure; tenacity runs them.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

log = logging.getLogger(__name__)

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


class RetryableAnswer(Exception):
    """Raised inside an attempt for an answer the policy may retry; carries the (read) response."""

    def __init__(self, response: httpx.Response, retry_after: float | None) -> None:
        super().__init__(f"answered {response.status_code}")
        self.response = response
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 4
    min_wait: float = 1.0
    max_wait: float = 30.0

    def backoff(self, retry: int) -> float:
        """The wait before retry number ``retry`` (1-based) when the server named none."""
        return float(min(self.min_wait * 2 ** (retry - 1), self.max_wait))

    def should_retry(self, failure: BaseException) -> bool:
        if isinstance(failure, RetryableAnswer):
            return failure.retry_after is None or failure.retry_after <= self.max_wait
        return is_retryable_exception(failure)

    def wait(self, retry: int, failure: BaseException | None) -> float:
        if isinstance(failure, RetryableAnswer) and failure.retry_after is not None:
            return failure.retry_after
        return self.backoff(retry)


def is_retryable_status(status: int, extra: frozenset[int] = frozenset()) -> bool:
    return status == 429 or (500 <= status <= 599 and status != 501) or status in extra


def is_retryable_exception(failure: BaseException) -> bool:
    if not isinstance(failure, httpx.TransportError):
        return False
    if isinstance(failure, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
        return False
    return not _certificate_failure(failure)


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from ``now``: delta-seconds or an HTTP date; None if absent or bad."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


async def with_retries(
    attempt: Callable[[], Awaitable[T]], *, policy: RetryPolicy, sleep: Sleep, what: str
) -> T:
    """Run ``attempt`` under ``policy``. The last failure is re-raised as it was (a
    ``RetryableAnswer`` when the last answer was a retryable status)."""

    def wait(state: RetryCallState) -> float:
        return policy.wait(state.attempt_number, _failure(state))

    def before_sleep(state: RetryCallState) -> None:
        failure = _failure(state)
        delay = state.upcoming_sleep
        log.info(
            "retrying %s after %s in %.1fs (retry %d of %d)",
            what,
            failure,
            delay,
            state.attempt_number,
            policy.retries,
        )

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.retries + 1),
        wait=wait,
        retry=retry_if_exception(policy.should_retry),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    return await retrying(attempt)


def _failure(state: RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome is not None else None


def _certificate_failure(failure: BaseException) -> bool:
    cause: BaseException | None = failure
    for _ in range(10):  # exception chains are short; a bound keeps a cycle from looping
        if cause is None:
            return False
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False
