"""Where a ``githubConfigUrl`` points: an enterprise, an organization or a repository (§6.1).

A scope is the unit the fake keeps apart: each gets its own Actions tenant (``/tenant/{n}/``), runner
groups, scale sets and runner names. Names compare case-insensitively, as on GitHub.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Scope:
    kind: str  # "enterprise", "organization" or "repository"
    owner: str  # the enterprise or organization (the owner of a repository)
    repository: str = ""

    @property
    def key(self) -> str:
        """The canonical, case-folded identity: ``enterprises/e``, ``orgs/o`` or ``repos/o/r``."""
        if self.kind == "enterprise":
            return f"enterprises/{self.owner.lower()}"
        if self.kind == "organization":
            return f"orgs/{self.owner.lower()}"
        return f"repos/{self.owner.lower()}/{self.repository.lower()}"

    @property
    def path(self) -> str:
        """The config URL path of this scope, without slashes: ``enterprises/e``, ``o`` or ``o/r``."""
        if self.kind == "enterprise":
            return f"enterprises/{self.owner}"
        if self.kind == "organization":
            return self.owner
        return f"{self.owner}/{self.repository}"


def from_path(path: str) -> Scope:
    """``/org`` → organization, ``/enterprises/e`` → enterprise, ``/owner/repo`` → repository."""
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) == 2 and parts[0].lower() == "enterprises":
        return Scope("enterprise", parts[1])
    if len(parts) == 1:
        return Scope("organization", parts[0])
    if len(parts) == 2:
        return Scope("repository", parts[0], parts[1])
    raise ValueError(f"{path!r} names no enterprise, organization or repository")


def from_url(url: str) -> Scope:
    """The scope of a ``githubConfigUrl`` (its host is not checked: the fake answers for any host)."""
    return from_path(urlsplit(url.strip()).path)
