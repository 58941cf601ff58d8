"""The executor's effect results (``statemachines.effectresults.EffectResult``), built from what an effect
did or the error it raised. The body each is journaled as:

    success: {"ok": true, ...facts}
    failure: {"ok": false, "error": CLASS, "message": TEXT}          (+ "retryAfter": seconds, when known)

``CLASS`` is the Kubernetes Status reason for a Kubernetes request (``Invalid``, ``Forbidden``,
``AlreadyExists``, ``NotFound``, ``Conflict``, ...); for an Actions call the service's verdict
(``RunnerExists``, ``RunnerNotFound``, ``JobStillRunning``) or the client's error class name
(``ServiceUnavailable``, ``ServiceUnreachable``, ``AuthenticationFailed``, ``RunnerGroupNotFound``, ...); for
a scope that cannot be resolved ``ConfigSecretMissing`` (the named config Secret does not exist, or none is
named), ``ConfigSecretIncomplete`` (it holds no usable credentials), ``RootCAMissing`` / ``RootCAInvalid``
(githubServerTLS's ConfigMap or key is missing, or holds no PEM), ``ProxySecretMissing``, ``InvalidProxyUrl``,
``CredentialsUnavailable`` (a Secret cannot be read now) or ``InvalidConfiguration``.

A result is journaled, so a message passes two filters before it is written: ``redaction.one_line``
(anything shaped like a token; one line, bounded) and the exact secret values the effect handled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from actions import errors as actions_errors
from actions import redaction
from controller.executor.errors import ExecutionError
from statemachines.effectresults import EffectResult

# The Actions verdicts machines branch on, by the client's error class.
ACTIONS_CLASSES: Final[tuple[tuple[type[actions_errors.ActionsError], str], ...]] = (
    (actions_errors.RunnerExistsError, "RunnerExists"),
    (actions_errors.RunnerNotFoundError, "RunnerNotFound"),
    (actions_errors.JobStillRunningError, "JobStillRunning"),
)


def ok(**facts: object) -> EffectResult:
    return EffectResult.success(**facts)


def failed(
    error: str, message: str, *, retry_after: float | None = None, secrets: Iterable[str] = ()
) -> EffectResult:
    return EffectResult.failure(error, clean(message, secrets), retry_after=retry_after)


def from_execution(exc: ExecutionError, secrets: Iterable[str] = ()) -> EffectResult:
    return failed(exc.error, str(exc), retry_after=exc.retry_after, secrets=secrets)


def actions_class(exc: actions_errors.ActionsError) -> str:
    for error_class, name in ACTIONS_CLASSES:
        if isinstance(exc, error_class):
            return name
    return type(exc).__name__


def from_actions(exc: actions_errors.ActionsError, secrets: Iterable[str] = ()) -> EffectResult:
    retry_after = exc.retry_after if isinstance(exc, actions_errors.Transient) else None
    return failed(actions_class(exc), str(exc), retry_after=retry_after, secrets=secrets)


def clean(message: str, secrets: Iterable[str] = ()) -> str:
    """``message`` without the given secret values and anything shaped like a token, on one line."""
    for secret in secrets:
        if secret:
            message = message.replace(secret, redaction.MASK)
    return redaction.one_line(message)
