"""Config URLs and the URLs derived from them (spec §6.1, §1.9).

A config URL (``githubConfigUrl``) names a scope and a GitHub host:

    https://github.com/my-org                      organization  my-org
    https://github.com/my-org/my-repo              repository    my-org / my-repo
    https://github.com/enterprises/my-enterprise   enterprise    my-enterprise

The GitHub API base is ``<scheme>://api.<host>`` for a hosted GitHub (github.com, www.github.com →
api.github.com, github.localhost, ``*.ghe.com``) and ``<scheme>://<host>/api/v3`` for GitHub Enterprise
Server, which every other host is, and every host is when ``GITHUB_ACTIONS_FORCE_GHES`` is set.

Actions-service paths are joined under the base URL that the runner-registration step returns, and get
``api-version=6.0-preview`` unless they carry an api-version already.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from actions import errors

API_VERSION: Final = "6.0-preview"
FORCE_GHES_ENV: Final = "GITHUB_ACTIONS_FORCE_GHES"
HOSTED_HOSTS: Final = frozenset({"github.com", "www.github.com", "github.localhost"})
HOSTED_SUFFIX: Final = ".ghe.com"
LABEL_VALUE_LIMIT: Final = 63
LABEL_TRIM_SUFFIX: Final = "-trim"


class Scope(StrEnum):
    ENTERPRISE = "enterprise"
    ORGANIZATION = "organization"
    REPOSITORY = "repository"


@dataclass(frozen=True)
class ConfigUrl:
    """A parsed config URL. ``url`` is the input trimmed of ``/``: what runner-registration is sent."""

    url: str
    scheme: str
    netloc: str
    scope: Scope
    hosted: bool
    enterprise: str = ""
    organization: str = ""
    repository: str = ""

    @property
    def api_base(self) -> str:
        """The GitHub REST API root, without a trailing slash."""
        if not self.hosted:
            return f"{self.scheme}://{self.netloc}/api/v3"
        if self.netloc.lower() == "www.github.com":
            return f"{self.scheme}://api.github.com"
        return f"{self.scheme}://api.{self.netloc}"

    def api_url(self, path: str) -> str:
        return self.api_base + "/" + path.lstrip("/")

    @property
    def registration_token_url(self) -> str:
        if self.scope is Scope.ENTERPRISE:
            owner = f"enterprises/{self.enterprise}"
        elif self.scope is Scope.ORGANIZATION:
            owner = f"orgs/{self.organization}"
        else:
            owner = f"repos/{self.organization}/{self.repository}"
        return self.api_url(f"{owner}/actions/runners/registration-token")

    def labels(self) -> dict[str, str]:
        """The ``enterprise``/``organization``/``repository`` label values (§1.9), trimmed to fit."""
        return {
            "enterprise": trim_label_value(self.enterprise),
            "organization": trim_label_value(self.organization),
            "repository": trim_label_value(self.repository),
        }


def parse_config_url(raw: str, *, environ: Mapping[str, str] | None = None) -> ConfigUrl:
    """Parse ``githubConfigUrl``; raise ``InvalidConfigUrl`` with a one-line reason."""
    env = os.environ if environ is None else environ
    text = raw.strip().strip("/")
    try:
        parts = urlsplit(text)
        netloc = parts.netloc
        hostname = parts.hostname or ""
        _ = parts.port  # raises ValueError on a port that is not a number
    except ValueError as exc:
        raise _invalid(raw, f"it does not parse ({exc})") from exc
    if parts.scheme not in ("http", "https"):
        raise _invalid(raw, "it must start with https:// (or http://)")
    if "@" in netloc:
        raise errors.InvalidConfigUrl(
            "invalid GitHub config URL: it must not carry credentials; put them in the config Secret"
        )
    if not hostname:
        raise _invalid(raw, "it has no host")
    segments = parts.path.strip("/").split("/")
    if any(not segment for segment in segments) or len(segments) > 2:
        raise _invalid(raw, "expected https://<host>/<org>, /<owner>/<repo> or /enterprises/<enterprise>")
    url = ConfigUrl(
        url=text,
        scheme=parts.scheme,
        netloc=netloc,
        scope=Scope.ORGANIZATION,
        hosted=is_hosted(hostname, environ=env),
        organization=segments[0],
    )
    if len(segments) == 1:
        return url
    if segments[0].lower() == "enterprises":
        return replace(url, scope=Scope.ENTERPRISE, organization="", enterprise=segments[1])
    return replace(url, scope=Scope.REPOSITORY, repository=segments[1])


def is_hosted(hostname: str, *, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if FORCE_GHES_ENV in env:
        return False
    host = hostname.lower()
    return host in HOSTED_HOSTS or host.endswith(HOSTED_SUFFIX)


def trim_label_value(value: str) -> str:
    if len(value) > LABEL_VALUE_LIMIT:
        return value[: LABEL_VALUE_LIMIT - len(LABEL_TRIM_SUFFIX)] + LABEL_TRIM_SUFFIX
    return value.strip("-_.")


def service_url(base: str, path: str, query: Mapping[str, str] | None = None) -> str:
    """``path`` (which may carry a query) joined under the Actions service ``base``, plus ``query``
    and ``api-version`` unless present. Query values are escaped; keys are sorted, as Go encodes them."""
    base_parts = urlsplit(base)
    path_parts = urlsplit(path)
    joined = base_parts.path.rstrip("/") + "/" + path_parts.path.lstrip("/")
    params = dict(parse_qsl(base_parts.query, keep_blank_values=True))
    params.update(parse_qsl(path_parts.query, keep_blank_values=True))
    params.update(query or {})
    params.setdefault("api-version", API_VERSION)
    encoded = urlencode(sorted(params.items()))
    return urlunsplit((base_parts.scheme, base_parts.netloc, joined, encoded, ""))


def _invalid(raw: str, reason: str) -> errors.InvalidConfigUrl:
    shown = raw if "@" not in raw else "<a URL with credentials>"
    return errors.InvalidConfigUrl(f"invalid GitHub config URL {shown!r}: {reason}")
