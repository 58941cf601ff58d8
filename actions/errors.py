"""What can go wrong talking to GitHub and the Actions service, classified by what the caller must do.

    ActionsError
    ├── Transient                      retry later (``retry_after``: seconds, when the service said)
    │   ├── ServiceUnavailable         429 or 5xx, after the client's own retries
    │   │   └── ServiceUnreachable     no answer at all: connection refused, a timeout, no such host
    │   ├── JobStillRunningError       typeName JobStillRunningException: the runner is busy
    │   ├── MessageQueueTokenExpired   401 from the message queue: refresh the session
    │   └── KubeUnavailable            a listener's Kubernetes patch failed: 429, 5xx, 409, transport
    └── Terminal                       the same call will fail the same way
        ├── InvalidConfiguration       a bad config URL or credentials (also a ValueError)
        │   ├── InvalidConfigUrl
        │   └── InvalidCredentials
        ├── ProtocolError              an answer arcsm cannot use: bad JSON, a missing field, two matches
        ├── RunnerGroupNotFound        no runner group with that name
        ├── KubeRejected               a listener's Kubernetes patch was refused: 401, 403, 404, 422
        └── RequestRejected            any other non-success answer
            ├── AuthenticationFailed   401 or 403
            ├── NotFound               404 without a known typeName
            │   └── ScaleSetNotFound   typeName RunnerScaleSetNotFoundException: no scale set of that id
            ├── RunnerExistsError      typeName AgentExistsException
            └── RunnerNotFoundError    typeName AgentNotFoundException

Errors built from a response carry ``response`` (a ``ResponseInfo``): the method and URL (without the
query), the status, the service's ``typeName`` and message, and the ``ActivityId`` and
``X-GitHub-Request-Id`` headers, which are quoted in the message. Following §6.3 the typeName decides
before the status code does, and it matches by substring (the service sends namespaced names).
Messages are one line, and text quoted from a server is scrubbed of anything shaped like a token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from actions import redaction


class ActionsError(Exception):
    """The root of every error this package raises."""

    def __init__(self, message: str, *, response: ResponseInfo | None = None) -> None:
        super().__init__(message)
        self.response = response


class Transient(ActionsError):
    def __init__(
        self, message: str, *, response: ResponseInfo | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, response=response)
        self.retry_after = retry_after


class Terminal(ActionsError):
    pass


class ServiceUnavailable(Transient):
    pass


class ServiceUnreachable(ServiceUnavailable):
    """The request got no answer (a transport error), after the client's own retries: a config URL or
    proxy that points nowhere looks like this, so callers may tell it apart from an outage."""


class JobStillRunningError(Transient):
    pass


class MessageQueueTokenExpired(Transient):
    pass


class KubeUnavailable(Transient):
    pass


class InvalidConfiguration(Terminal, ValueError):
    pass


class InvalidConfigUrl(InvalidConfiguration):
    pass


class InvalidCredentials(InvalidConfiguration):
    pass


class ProtocolError(Terminal):
    pass


class RunnerGroupNotFound(Terminal):
    pass


class KubeRejected(Terminal):
    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class RequestRejected(Terminal):
    pass


class AuthenticationFailed(RequestRejected):
    pass


class NotFound(RequestRejected):
    pass


class ScaleSetNotFound(NotFound):
    """The scale set the call names does not exist (any more): deleted in GitHub, or never made there."""


class RunnerExistsError(RequestRejected):
    pass


class RunnerNotFoundError(RequestRejected):
    pass


# typeName substring → error class, checked in order (§6.3).
TYPE_NAMES: tuple[tuple[str, type[ActionsError]], ...] = (
    ("AgentExistsException", RunnerExistsError),
    ("AgentNotFoundException", RunnerNotFoundError),
    ("JobStillRunningException", JobStillRunningError),
    ("RunnerScaleSetNotFoundException", ScaleSetNotFound),
)


@dataclass(frozen=True)
class ResponseInfo:
    """The parts of a non-success response that an error reports."""

    method: str
    url: str
    status: int
    type_name: str = ""
    message: str = ""
    activity_id: str = ""
    request_id: str = ""

    @classmethod
    def parse(
        cls, *, method: str, url: str, status: int, body: bytes, headers: Mapping[str, str]
    ) -> ResponseInfo:
        """Read ``{"typeName", "message"}`` from a JSON body, or keep a text body raw (scrubbed)."""
        lowered = {key.lower(): value for key, value in headers.items()}
        text = body.decode("utf-8", errors="replace").strip()
        type_name, message = "", text
        content_type = lowered.get("content-type", "")
        if "json" in content_type or text.startswith("{"):
            type_name, message = _exception_fields(text)
        return cls(
            method=method,
            url=url,
            status=status,
            type_name=redaction.one_line(type_name, limit=200),
            message=redaction.one_line(message),
            activity_id=redaction.one_line(lowered.get("activityid", ""), limit=100),
            request_id=redaction.one_line(lowered.get("x-github-request-id", ""), limit=100),
        )

    def describe(self) -> str:
        parts = [f"{self.method} {self.url} answered {self.status}"]
        if self.type_name:
            parts.append(self.type_name)
        if self.message:
            parts.append(self.message)
        text = ": ".join(parts)
        ids = [f"ActivityId {self.activity_id}"] if self.activity_id else []
        ids += [f"X-GitHub-Request-Id {self.request_id}"] if self.request_id else []
        return f"{text} ({', '.join(ids)})" if ids else text


def _exception_fields(text: str) -> tuple[str, str]:
    try:
        data: Any = json.loads(text)
    except ValueError:
        return "", text
    if not isinstance(data, dict):
        return "", text
    type_name = data.get("typeName")
    message = data.get("message")
    return (
        type_name if isinstance(type_name, str) else "",
        message if isinstance(message, str) else text,
    )


def from_response(info: ResponseInfo, *, retry_after: float | None = None) -> ActionsError:
    """The error for a non-success response: by typeName first, then by status code."""
    text = info.describe()
    for needle, error_class in TYPE_NAMES:
        if needle in info.type_name:
            if issubclass(error_class, Transient):
                return error_class(text, response=info, retry_after=retry_after)
            return error_class(text, response=info)
    if info.status == 429 or (info.status >= 500 and info.status != 501):
        return ServiceUnavailable(text, response=info, retry_after=retry_after)
    if info.status in (401, 403):
        return AuthenticationFailed(text, response=info)
    if info.status == 404:
        return NotFound(text, response=info)
    return RequestRejected(text, response=info)
