"""Where a process finds its cluster: the precedence of kubectl and of controller-runtime's ``GetConfig``.

``find(explicit)`` answers, in order:

1. ``explicit`` (``--kubeconfig PATH``, or ``ARCSM_KUBECONFIG``): that file, alone;
2. ``$KUBECONFIG``: its files, separated by ``os.pathsep``, merged as kubectl merges them (empty entries
   and missing files skipped; the first file to set ``current-context`` or to name a cluster, user or
   context wins: ``actions.kubepatching.configuration`` loads them so);
3. in a pod (``KUBERNETES_SERVICE_HOST`` set and the service account token present): the pod's service
   account;
4. ``~/.kube/config`` when it exists;

and otherwise raises ``NoCluster``, one line saying what it tried. ``$KUBECONFIG`` set to files none of
which exists is an error too, not a reason to look further, as for kubectl and controller-runtime.

It only looks: no file is parsed and no client imported here, so a command decides on what it found
(``arcsm run`` elects a leader by default only with the service account) before anything starts, and
``arcsm run --help`` reads ``Source`` from the settings without the Kubernetes client.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

# Where Kubernetes mounts a pod's service account (client-go's and kubernetes_asyncio's constants).
SERVICE_ACCOUNT: Final = Path("/var/run/secrets/kubernetes.io/serviceaccount")
TOKEN: Final = SERVICE_ACCOUNT / "token"
CA: Final = SERVICE_ACCOUNT / "ca.crt"


class NoCluster(Exception):
    """No configuration to reach a cluster was found where it was looked for; the message says where."""


class Origin(enum.Enum):
    """Where the configuration was found, as a person would name it."""

    EXPLICIT = "--kubeconfig"
    ENVIRONMENT = "$KUBECONFIG"
    SERVICE_ACCOUNT = "the pod's service account"
    HOME = "~/.kube/config"


@dataclass(frozen=True)
class Source:
    """A cluster's configuration: kubeconfig ``files`` (merged in order), or none for the service account."""

    origin: Origin
    files: tuple[Path, ...] = ()

    @classmethod
    def kubeconfig(cls, path: Path) -> Source:
        """One kubeconfig file, as ``--kubeconfig`` names it."""
        return cls(Origin.EXPLICIT, (path,))

    @classmethod
    def service_account(cls) -> Source:
        return cls(Origin.SERVICE_ACCOUNT)

    @property
    def in_cluster(self) -> bool:
        return self.origin is Origin.SERVICE_ACCOUNT

    def __str__(self) -> str:
        if self.in_cluster:
            return self.origin.value
        return f"{', '.join(map(str, self.files))} ({self.origin.value})"


def find(
    explicit: Path | None,
    *,
    explicit_flag: str = "--kubeconfig",
    environ: Mapping[str, str] = os.environ,
    home: Path | None = None,
    token: Path | None = None,
) -> Source:
    """The first of: ``explicit``, ``$KUBECONFIG``, the service account in a pod, ``~/.kube/config``.

    ``explicit_flag`` names ``explicit`` in messages; ``environ``, ``home`` (default: the user's) and
    ``token`` (default: ``TOKEN``) are the process's own unless a test gives others. Raises ``NoCluster``.
    """
    token = token if token is not None else TOKEN
    if explicit is not None:
        if not explicit.is_file():
            raise NoCluster(f"cannot use the kubeconfig {explicit}: no such file")
        return Source.kubeconfig(explicit)
    listed = environ.get("KUBECONFIG", "")
    if listed:
        present = tuple(Path(p) for p in listed.split(os.pathsep) if p and Path(p).is_file())
        if not present:
            raise NoCluster(f"$KUBECONFIG names no file that exists: {listed}")
        return Source(Origin.ENVIRONMENT, present)
    in_pod = bool(environ.get("KUBERNETES_SERVICE_HOST"))
    if in_pod and token.is_file():
        return Source.service_account()
    home_config = (home if home is not None else Path.home()) / ".kube" / "config"
    if home_config.is_file():
        return Source(Origin.HOME, (home_config,))
    pod = f"no service account token at {token}" if in_pod else "not in a pod (KUBERNETES_SERVICE_HOST unset)"
    raise NoCluster(
        f"no cluster to reach: no {explicit_flag}, $KUBECONFIG unset, {pod}, and no {home_config}"
    )
