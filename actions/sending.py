"""Sending one request: User-Agent, authorization, the rate limit, retries, and mapping the answer.

Every request, to GitHub's API or to the Actions service, goes through ``Sender.send``:

1. the headers are built here, the secret going into ``Authorization`` only now (``SecretStr.reveal``);
2. each attempt waits for the client-side rate limit (an ``aiolimiter`` leaky bucket shared by the
   client), so retries count against it too;
3. retries follow ``retrying.RetryPolicy``;
4. an expected status gives a ``Reply`` (body read, UTF-8 BOM dropped when decoded); any other answer
   becomes the ``errors`` class of §6.3, and a transport failure that outlived its retries becomes
   ``ServiceUnreachable`` (a ``ServiceUnavailable``: no answer at all, which a bad URL or proxy gives).

Only the method, the URL without its query and the status are logged; never headers or bodies.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import httpx
from aiolimiter import AsyncLimiter

from actions import errors, retrying, wire
from actions.redaction import SecretStr

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Authorization:
    """An ``Authorization`` header: a scheme (Bearer, RemoteAuth) and a secret credential."""

    scheme: str
    credential: SecretStr

    def header(self) -> str:
        return f"{self.scheme} {self.credential.reveal()}"


@dataclass(frozen=True)
class Reply:
    method: str
    url: str
    status: int
    headers: httpx.Headers
    body: bytes

    def json(self) -> object:
        return wire.decode(self.body, what=f"{self.method} {self.url}")

    def object(self) -> wire.Json:
        return wire.as_object(self.json(), what=f"{self.method} {self.url}")


class Sender:
    def __init__(
        self,
        *,
        http: httpx.AsyncClient,
        limiter: AsyncLimiter,
        policy: retrying.RetryPolicy,
        sleep: retrying.Sleep,
        user_agent: Callable[[], str],
    ) -> None:
        self._http = http
        self._limiter = limiter
        self._policy = policy
        self._sleep = sleep
        self._user_agent = user_agent

    async def send(
        self,
        method: str,
        url: str,
        *,
        auth: Authorization,
        expect: Collection[int],
        content_type: str = "application/json",
        body: object = None,
        headers: Mapping[str, str] | None = None,
        retry_statuses: frozenset[int] = frozenset(),
        message_queue: bool = False,
    ) -> Reply:
        """Send and return the reply if its status is in ``expect``; raise an ``ActionsError`` else.

        ``message_queue`` marks a request made with the message-queue token: a 401 then means the
        token expired (``MessageQueueTokenExpired``)."""
        shown = str(httpx.URL(url).copy_with(query=None))
        request = self._http.build_request(
            method,
            url,
            headers={
                "Authorization": auth.header(),
                "Content-Type": content_type,
                "User-Agent": self._user_agent(),
                **(headers or {}),
            },
            content=None if body is None else json.dumps(body).encode("utf-8"),
        )

        async def attempt() -> httpx.Response:
            async with self._limiter:
                response = await self._http.send(request)
            log.debug("%s %s answered %d", method, shown, response.status_code)
            if response.status_code not in expect and retrying.is_retryable_status(
                response.status_code, retry_statuses
            ):
                raise retrying.RetryableAnswer(response, _retry_after(response))
            return response

        try:
            response = await retrying.with_retries(
                attempt, policy=self._policy, sleep=self._sleep, what=f"{method} {shown}"
            )
        except retrying.RetryableAnswer as answer:
            response = answer.response
        except httpx.TransportError as exc:
            raise errors.ServiceUnreachable(
                f"{method} {shown} failed: {type(exc).__name__}: {exc}".rstrip(": ")
            ) from exc
        if response.status_code in expect:
            return Reply(method, shown, response.status_code, response.headers, response.content)
        raise _error(method, shown, response, message_queue=message_queue)


def _retry_after(response: httpx.Response) -> float | None:
    return retrying.retry_after_seconds(response.headers.get("Retry-After"))


def _error(method: str, url: str, response: httpx.Response, *, message_queue: bool) -> errors.ActionsError:
    info = errors.ResponseInfo.parse(
        method=method,
        url=url,
        status=response.status_code,
        body=response.content.removeprefix(wire.UTF8_BOM),
        headers=response.headers,
    )
    if message_queue and response.status_code == 401:
        return errors.MessageQueueTokenExpired(
            f"{info.describe()}: the message queue token expired; refresh the session", response=info
        )
    return errors.from_response(info, retry_after=_retry_after(response))
