"""Errors of the fake service, each rendered the way its real counterpart answers.

Hierarchy::

    FakeError                 root of everything the fake raises on purpose
    ├── ServiceError          an Actions service error: HTTP status plus the §6.3 body
    │                         {"typeName": "GitHub.DistributedTask.WebApi.<Key>, ...", "message": ...}
    └── GitHubError           a GitHub REST API error: {"message": ..., "documentation_url": ...}

Messages never quote a token, a JIT config or an Authorization header.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DOCS = "https://docs.github.com/rest"
TYPE_NAMESPACE = "GitHub.DistributedTask.WebApi"
# Scale-set message sessions are the runtime service's: their errors carry its namespace (as in the
# listener logs users post upstream, e.g. actions/actions-runner-controller#3922 and #4285).
RUNTIME_NAMESPACE = "GitHub.Actions.Runtime.WebApi"


class FakeError(Exception):
    """Root of the fake's own errors."""


@dataclass
class ServiceError(FakeError):
    status: int
    type_key: str  # e.g. AgentExistsException; the body's typeName is the qualified .NET name
    message: str
    namespace: str = TYPE_NAMESPACE

    def __str__(self) -> str:
        return f"{self.status} {self.type_key}: {self.message}"

    @property
    def type_name(self) -> str:
        return f"{self.namespace}.{self.type_key}, {self.namespace}"

    def body(self) -> dict[str, Any]:
        return {
            "$id": "1",
            "innerException": None,
            "message": self.message,
            "typeName": self.type_name,
            "typeKey": self.type_key,
            "errorCode": 0,
            "eventId": 3000,
        }


@dataclass
class GitHubError(FakeError):
    status: int
    message: str

    def __str__(self) -> str:
        return f"{self.status} {self.message}"

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "documentation_url": DOCS, "status": str(self.status)}


# -- the Actions service's errors, by what the client maps them to (§6.3) ---------------------------------


def agent_exists(name: str) -> ServiceError:
    return ServiceError(409, "AgentExistsException", f"A runner named '{name}' already exists.")


def agent_not_found(agent_id: int) -> ServiceError:
    return ServiceError(404, "AgentNotFoundException", f"No runner with id {agent_id} exists.")


def job_still_running(agent_id: int) -> ServiceError:
    return ServiceError(
        400,
        "JobStillRunningException",
        f"Runner {agent_id} is running a job and cannot be removed until the job finishes.",
    )


def scale_set_not_found(scale_set_id: int) -> ServiceError:
    # The runtime service's answer for an id it does not know, as listener logs quote it (e.g.
    # actions/actions-runner-controller#3935): a scale set deleted in the organization's settings.
    return ServiceError(
        404,
        "RunnerScaleSetNotFoundException",
        f"No runner scale set found with identifier {scale_set_id}.",
        RUNTIME_NAMESPACE,
    )


def scale_set_exists(name: str, group_id: int) -> ServiceError:
    return ServiceError(
        409,
        "RunnerScaleSetExistsException",
        f"A runner scale set named '{name}' already exists in runner group {group_id}.",
    )


def group_not_found(group_id: int) -> ServiceError:
    return ServiceError(404, "RunnerGroupNotFoundException", f"No runner group with id {group_id}.")


def session_conflict(scale_set_name: str) -> ServiceError:
    """What the service answers while another session of the scale set is alive. It names neither the
    session nor its owner, so the conflict alone does not tell a caller which session to delete."""
    return ServiceError(
        409,
        "RunnerScaleSetSessionConflictException",
        f"The actions runner scaleset {scale_set_name} already has an active session.",
        namespace=RUNTIME_NAMESPACE,
    )


def session_not_found(session_id: str) -> ServiceError:
    return ServiceError(404, "TaskAgentSessionExpiredException", f"No message session {session_id}.")


def bad_request(message: str) -> ServiceError:
    return ServiceError(400, "ArgumentException", message)


def unauthorized(message: str = "The access token is missing, invalid or expired.") -> ServiceError:
    return ServiceError(401, "VssUnauthorizedException", message)


def forbidden(message: str) -> ServiceError:
    return ServiceError(403, "AccessDeniedException", message)


def not_found(message: str = "The requested resource does not exist.") -> ServiceError:
    return ServiceError(404, "ResourceNotFoundException", message)


def method_not_allowed(method: str) -> ServiceError:
    return ServiceError(405, "MethodNotAllowedException", f"The method {method} is not allowed here.")


# -- the GitHub REST API's ---------------------------------------------------------------------------------


def bad_credentials() -> GitHubError:
    return GitHubError(401, "Bad credentials")


def bad_jwt(why: str) -> GitHubError:
    return GitHubError(401, f"A JSON web token could not be decoded: {why}")


def github_not_found() -> GitHubError:
    return GitHubError(404, "Not Found")
