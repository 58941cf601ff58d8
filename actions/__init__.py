"""The GitHub Actions service client and the listener. Tokens and JIT configs never leave this package
except to the Kubernetes Secrets they are written to.

The client (spec §6), by module:

| module | holds |
|---|---|
| ``urls`` | config URL parsing (scope, GitHub API base, hosted vs GHES), Actions-service URL joining |
| ``credentials`` | the PAT and GitHub App credential forms, read from a config Secret |
| ``auth`` | the App JWT, installation and registration tokens, the admin connection and its refresh |
| ``client`` | ``ActionsClient``: every endpoint, typed |
| ``sessions`` | ``MessageQueue``: a listener's message session, refreshed once on an expired token |
| ``models``, ``messages`` | the typed results; ``wire`` the JSON shapes and checked readers |
| ``sending``, ``retrying``, ``useragent`` | one request: headers, rate limit, retries, error mapping |
| ``errors`` | ``ActionsError`` → ``Transient`` / ``Terminal`` and the §6.3 classes |
| ``redaction``, ``clocks`` | ``SecretStr`` (never printed) and the injectable clock |

The listener (spec §5), by module:

| module | holds |
|---|---|
| ``listener`` | ``run_listener``: the §5.3 loop, its retry policy and the ``ScaleTarget`` port |
| ``listenerconfig`` | ``config.json`` (§5.2): read and validated into ``ListenerConfig`` |
| ``scaler`` | the pure §5.4 state machine: patch ids, targets, the patch bodies |
| ``kubepatching`` | ``ScaleTarget`` with kubernetes_asyncio: merge patches of the ERS and runner status |
| ``listenermetrics`` | the §5.5 metrics on a private registry, and their HTTP endpoint |

Rules: every secret is a ``redaction.SecretStr`` until the moment it goes into a header; nothing here
logs a header or a body; the package imports nothing of the project but ``kube.failures``, the one
reading of a failed Kubernetes request (for ``kubepatching``).
"""

from actions.client import ActionsClient, ClientSettings, RateLimit
from actions.credentials import Credentials, GitHubApp, PersonalAccessToken
from actions.errors import ActionsError, Terminal, Transient
from actions.redaction import SecretStr
from actions.retrying import RetryPolicy
from actions.sessions import MessageQueue
from actions.urls import ConfigUrl, Scope, parse_config_url
from actions.useragent import SystemInfo

__all__ = [
    "ActionsClient",
    "ActionsError",
    "ClientSettings",
    "ConfigUrl",
    "Credentials",
    "GitHubApp",
    "MessageQueue",
    "PersonalAccessToken",
    "RateLimit",
    "RetryPolicy",
    "Scope",
    "SecretStr",
    "SystemInfo",
    "Terminal",
    "Transient",
    "parse_config_url",
]
