"""Backoff with jitter for failed requests, on tenacity.

A ``Retry-After`` the server sent (429, 503) sets the wait; otherwise it grows exponentially from
``Backoff.initial`` to ``Backoff.maximum`` with jitter, so watchers that failed together do not come back
together.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

import tenacity

from store.errors import JournalWriteFailed
from watchers.errors import ApiError, Expired, WatchError
from watchers.settings import Backoff

Retry = Callable[..., Awaitable[Any]]


class BackoffWait(tenacity.wait.wait_base):
    def __init__(self, backoff: Backoff, rand: random.Random | None = None) -> None:
        self._backoff = backoff
        self._random = rand or random.Random()

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        if isinstance(exc, ApiError) and exc.retry_after is not None:
            jitter = self._random.uniform(0, self._backoff.initial)
            return min(exc.retry_after, self._backoff.retry_after_max) + jitter
        growth = 2.0 ** min(retry_state.attempt_number - 1, 32)
        jitter = self._random.uniform(0, self._backoff.initial)
        return min(self._backoff.initial * growth + jitter, self._backoff.maximum)


def retryable(exc: BaseException) -> bool:
    """Failed requests are retried; a 410 is not (the caller re-lists)."""
    return isinstance(exc, WatchError) and not isinstance(exc, Expired)


def policy(
    backoff: Backoff,
    *,
    retry_on: Callable[[BaseException], bool] = retryable,
    logger: logging.Logger,
    what: str,
) -> tenacity.AsyncRetrying:
    """Retry forever on what ``retry_on`` accepts, logging each failure before the wait."""

    def before_sleep(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        level, quiet = logging.WARNING, isinstance(exc, WatchError | JournalWriteFailed)
        if isinstance(exc, JournalWriteFailed):
            level = logging.DEBUG  # the journal reports its outage once, not once per failed append
        elif not isinstance(exc, WatchError) or (isinstance(exc, ApiError) and not exc.transient):
            level = logging.ERROR
        logger.log(
            level,
            "%s failed (attempt %d): %s; retrying in %.2fs",
            what,
            state.attempt_number,
            exc,
            wait,
            exc_info=None if quiet else exc,
        )

    return tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception(retry_on),
        wait=BackoffWait(backoff),
        stop=tenacity.stop_never,
        before_sleep=before_sleep,
        reraise=True,
    )
