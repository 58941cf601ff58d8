"""A failed Kubernetes API request, read the same way by every edge: ``Failure``.

    Failure.from_api_exception(exc)         kubernetes_asyncio's ApiException (its typed and generic calls)
    Failure.from_answer(code, body, headers) a non-2xx answer read raw (the watchers' lists and watches)
    Failure.from_status(status)             a Status without an answer around it: a watch ERROR event
    Failure.unanswered(exc)                 no answer at all (``UNANSWERED``: aiohttp, a timeout, a socket)

What a ``Failure`` holds:

* ``code``: the HTTP status of the answer (a watch ERROR event: its Status ``code``, else 500); 0 when
  no answer came.
* ``reason`` and ``message``: the Status ``reason`` and ``message`` as sent, "" when the body had none;
  ``text``: the start of a body that is not a Status (a proxy's error page), else "".
* ``phrase``: the HTTP reason phrase kubernetes_asyncio reports, or for no answer the exception's class.
* ``retry_after``: the wait the server asked for, in seconds: the ``Retry-After`` header, else the
  Status ``details.retryAfterSeconds`` (the API server sends both, with the same value); None when
  neither is a number of seconds.

Predicates say what the caller does next: ``conflict`` (409: read again or let the other writer win),
``not_found`` (404), ``gone`` (410: the resourceVersion or continue token expired: list again) and
``retryable`` (no answer, 429 or 5xx: waiting is expected to help; anything else needs someone to act).
Each edge keeps its own exceptions and message wording; what it reads of an error comes from here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import aiohttp

if TYPE_CHECKING:  # kubernetes_asyncio's client package loads every API model: only the callers need it
    from kubernetes_asyncio.client.exceptions import ApiException

# What a request raises when no answer came: a refused or broken connection, a timeout, a socket error.
UNANSWERED: Final = (aiohttp.ClientError, TimeoutError, OSError)

TEXT_LIMIT: Final = 200
UNAVAILABLE: Final = "ServiceUnavailable"

# The reason a real API server gives for each code, for answers whose body is not a Status.
REASONS: Final = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: UNAVAILABLE,
    504: "Timeout",
}


@dataclass(frozen=True)
class Failure:
    code: int
    reason: str = ""
    message: str = ""
    retry_after: float | None = None
    phrase: str = ""
    text: str = ""

    @classmethod
    def from_api_exception(cls, exc: ApiException) -> Failure:
        return cls.from_answer(int(exc.status or 0), exc.body, exc.headers or {}, phrase=exc.reason or "")

    @classmethod
    def from_answer(cls, code: int, body: object, headers: Mapping[str, str], *, phrase: str = "") -> Failure:
        status = _status(body)
        text = "" if status is not None or not isinstance(body, str | bytes) else _start(body)
        return cls._of(status or {}, code, headers.get("Retry-After"), phrase=phrase, text=text)

    @classmethod
    def from_status(cls, status: Mapping[str, Any]) -> Failure:
        return cls._of(status, _code(status.get("code")) or 500, None)

    @classmethod
    def unanswered(cls, exc: BaseException) -> Failure:
        return cls(0, message=str(exc), phrase=type(exc).__name__)

    @classmethod
    def _of(
        cls, status: Mapping[str, Any], code: int, header: object, *, phrase: str = "", text: str = ""
    ) -> Failure:
        details = status.get("details")
        retry_after = _seconds(header)
        if retry_after is None and isinstance(details, Mapping):
            retry_after = _seconds(details.get("retryAfterSeconds"))
        reason, message = str(status.get("reason") or ""), str(status.get("message") or "")
        return cls(code, reason, message, retry_after, phrase, text)

    @property
    def conflict(self) -> bool:
        return self.code == 409

    @property
    def not_found(self) -> bool:
        return self.code == 404

    @property
    def gone(self) -> bool:
        return self.code == 410

    @property
    def retryable(self) -> bool:
        return self.code == 0 or self.code == 429 or self.code >= 500

    def reason_or_default(self) -> str:
        """The Status reason, else the one a real API server gives for the code (ServiceUnavailable
        without an answer, Failed for a code it has no name for)."""
        return self.reason or REASONS.get(self.code) or ("Failed" if self.code else UNAVAILABLE)


def _status(body: object) -> Mapping[str, Any] | None:
    """The body as a Status-like JSON object; None when it is not one."""
    try:
        data = json.loads(body) if isinstance(body, str | bytes) else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _start(body: str | bytes) -> str:
    return body[:TEXT_LIMIT].decode(errors="replace") if isinstance(body, bytes) else body[:TEXT_LIMIT]


def _code(value: object) -> int:
    if isinstance(value, bool):
        return 0
    try:
        return int(value) if isinstance(value, int | str) else 0
    except ValueError:
        return 0


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(str(value))
    except ValueError:
        return None  # an HTTP date (the API server sends seconds), or no number at all
    return max(0.0, seconds)
