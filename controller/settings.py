"""The controller's configuration: small frozen settings per concern, composed under ``ControllerSettings``.

Each package owns the settings it reads (``watchers.WatchSettings``, ``store.settings.JournalSettings``,
``statemachines.snapshots.Settings``); the executor's is ``controller.contexts.ExecutorSettings``; the
loop adds ``QueueSettings`` and ``ReconcileSettings``; ``arcsm run`` builds the root once from its flags.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from controller.contexts import ExecutorSettings
from statemachines.snapshots import Settings as MachineSettings
from store.settings import JournalSettings
from watchers.settings import WatchSettings


@dataclass(frozen=True)
class QueueSettings:
    """The work queue: how many keys reconcile at once, the per-key backoff after a failed reconcile and
    the rate at which reconciles start across all keys (``rate`` per second, bursts of ``burst``)."""

    workers: int = 8
    backoff_initial: float = 0.005
    backoff_max: float = 300.0
    rate: float = 50.0
    burst: int = 100

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, not {self.workers}")
        if not 0 < self.backoff_initial <= self.backoff_max:
            raise ValueError(
                f"backoff: need 0 < initial <= maximum, got {self.backoff_initial} and {self.backoff_max}"
            )
        if self.rate <= 0 or self.burst < 1:
            raise ValueError(
                f"the reconcile rate needs rate > 0 and burst >= 1, got {self.rate} and {self.burst}"
            )


@dataclass(frozen=True)
class ReconcileSettings:
    """How one reconcile runs: the time one effect may take before it is recorded as failed (the executor
    bounds each request; this bounds an effect whatever it does), whether the update predicates filter
    updates of owned objects (they only save reconciles; switching them off changes no outcome), and how
    long a key waits to observe its own writes."""

    effect_timeout: float = 300.0
    predicates: bool = True
    # How long a key waits for the watch events of its own writes before it is decided again.
    settle_timeout: float = 1.0

    def __post_init__(self) -> None:
        if self.effect_timeout <= 0 or self.settle_timeout < 0:
            raise ValueError(
                f"need effect_timeout > 0 and settle_timeout >= 0, got {self.effect_timeout} and "
                f"{self.settle_timeout}"
            )


@dataclass(frozen=True)
class ControllerSettings:
    journal_path: Path
    # None: the in-cluster configuration (the pod's service account).
    kubeconfig: Path | None = None
    journal: JournalSettings = field(default_factory=JournalSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    queue: QueueSettings = field(default_factory=QueueSettings)
    reconcile: ReconcileSettings = field(default_factory=ReconcileSettings)
    # The Kubernetes client rate limit (qps, burst) is the executor's: its requests are the writes.
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    machines: MachineSettings = field(default_factory=MachineSettings)

    def __post_init__(self) -> None:
        # Listeners and their objects live in the controller namespace: watch it too when the watch is
        # limited to some namespaces.
        namespaces = self.watch.namespaces
        if namespaces and self.machines.controller_namespace not in namespaces:
            watch = dataclasses.replace(
                self.watch, namespaces=(*namespaces, self.machines.controller_namespace)
            )
            object.__setattr__(self, "watch", watch)
