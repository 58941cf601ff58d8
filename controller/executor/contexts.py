"""What every effect function of the executor is given: its settings and its collaborators.

``ExecutorSettings`` is the executor's slice of the configuration (kopf-style: one small frozen dataclass
per concern); ``Context`` bundles the Kubernetes adapter, the Actions clients and a clock for the
timestamps of Events (the executor is the I/O edge, so it may read the wall clock; decisions never do).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # For the annotations only: ``ExecutorSettings`` is read by ``arcsm run``'s option declarations,
    # which must not pay for the Kubernetes and Actions clients (``controller.commands.lazycommands``).
    from controller.executor.actionsclients import ActionsClients
    from controller.executor.kubewriting import Kube


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ExecutorSettings:
    """``qps``/``burst``: the token bucket every Kubernetes request takes from (client-go's defaults);
    ``request_timeout``: seconds per Kubernetes request; ``event_component``: ``source.component`` of
    the Events the controller emits."""

    qps: float = 20.0
    burst: int = 30
    request_timeout: float = 30.0
    event_component: str = "arcsm"


@dataclass(frozen=True)
class Context:
    kube: Kube
    clients: ActionsClients
    settings: ExecutorSettings
    now: Callable[[], datetime] = field(default=utc_now)
