"""What can go wrong executing an effect, classified by the error class its result reports.

    ExecutionError                  ``error`` is the class written into the effect result
    ├── KubeError                   the API server refused a request (``error`` = the Status ``reason``:
    │                               Invalid, Forbidden, AlreadyExists, NotFound, Conflict, ...) or could
    │                               not be reached (ServiceUnavailable, Timeout)
    └── ScopeUnavailable            an ActionsScope could not be turned into a client or credentials:
                                    a Secret could not be read (CredentialsUnavailable), nor the CA's
                                    ConfigMap (RootCAUnavailable), the credentials are malformed
                                    (InvalidCredentials); a scope with a vault reports what the vault
                                    says (``actions.azurekeyvault``'s reasons, Vault*). For the scope's
                                    own config Secret (``githubConfigSecret``) an Actions client
                                    reports the two cases a
                                    user must fix precisely: ConfigSecretMissing (no such Secret, or
                                    none named) and ConfigSecretIncomplete (no usable credentials in it);
                                    so for ``githubServerTLS`` and ``proxy``: RootCAMissing (no such
                                    ConfigMap, or no such key in it), RootCAInvalid (the value is not
                                    a PEM certificate), ProxySecretMissing (no credentialSecretRef
                                    Secret of that name) and InvalidProxyUrl (a proxy URL no client
                                    can use)

``ScopeUnavailable`` never reuses a Kubernetes reason: a missing credentials Secret must not read as
"NotFound" to a machine that treats NotFound as "already deleted" (DeleteRunnerScaleSet). Messages are
one line and never quote a Secret's values.
"""

from __future__ import annotations


class ExecutionError(Exception):
    """An effect failed; ``error`` is its result's class, ``str(self)`` its message."""

    def __init__(self, error: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.retry_after = retry_after


class KubeError(ExecutionError):
    """A Kubernetes request failed. ``code`` is the HTTP status (0 when there was no answer)."""

    def __init__(self, reason: str, message: str, *, code: int = 0, retry_after: float | None = None) -> None:
        super().__init__(reason, message, retry_after=retry_after)
        self.code = code

    @property
    def reason(self) -> str:
        return self.error


class ScopeUnavailable(ExecutionError):
    """The credentials, CA or proxy of an ActionsScope could not be resolved."""


CREDENTIALS_UNAVAILABLE = "CredentialsUnavailable"
ROOT_CA_UNAVAILABLE = "RootCAUnavailable"
INVALID_CREDENTIALS = "InvalidCredentials"
CONFIG_SECRET_MISSING = "ConfigSecretMissing"
CONFIG_SECRET_INCOMPLETE = "ConfigSecretIncomplete"
ROOT_CA_MISSING = "RootCAMissing"
ROOT_CA_INVALID = "RootCAInvalid"
PROXY_SECRET_MISSING = "ProxySecretMissing"
INVALID_PROXY_URL = "InvalidProxyUrl"
