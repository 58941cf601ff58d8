"""The controller's configuration: small frozen settings per concern, composed under ``ControllerSettings``.

Each package owns the settings it reads (``watchers.WatchSettings``, ``store.settings.JournalSettings``,
``statemachines.snapshots.Settings``, ``actions.client.ClientSettings``); the executor's is
``controller.executor.contexts.ExecutorSettings``; the loop adds ``QueueSettings`` and ``ReconcileSettings``;
``arcsm run`` builds the root once from its flags.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from api.limits import HttpLimits
from controller.executor.contexts import ExecutorSettings
from controller.loop.kubeconfigs import Source
from statemachines.snapshots import Settings as MachineSettings
from store.settings import JournalSettings
from watchers.settings import WatchSettings

if TYPE_CHECKING:
    from actions.azurekeyvault import Reach
    from actions.client import ClientSettings


@dataclass(frozen=True)
class QueueSettings:
    """The work queue: how many keys reconcile at once, and how soon a key is retried after a failed
    reconcile: the longer of its own backoff (``backoff_initial`` doubling up to ``backoff_max``) and its
    kind's token bucket (``rate`` retries per second, bursts of ``burst``). Watch events and timers queue
    a key at once: no rate limit applies to them. The bucket's defaults are controller-runtime's, which
    gives each controller (each kind here) a bucket of 10 per second in bursts of 100: it spaces out the
    retries when a whole kind fails at once (an outage of the cluster, the journal or the Actions
    service), and work that did not fail never waits on it.

    ``workers`` bounds the reconciles in flight across all kinds; ``per_kind`` bounds those of one kind
    (upstream ARC's max concurrent reconciles per controller). A kind it does not name is bounded by
    ``workers`` only. A key of a kind at its bound waits in the queue without holding a worker, so
    other kinds keep going."""

    workers: int = 8
    backoff_initial: float = 0.005
    backoff_max: float = 300.0
    rate: float = 10.0
    burst: int = 100
    per_kind: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, not {self.workers}")
        for kind, bound in self.per_kind.items():
            if bound < 1:
                raise ValueError(f"the concurrent reconciles of {kind} must be at least 1, not {bound}")
        if not 0 < self.backoff_initial <= self.backoff_max:
            raise ValueError(
                f"backoff: need 0 < initial <= maximum, got {self.backoff_initial} and {self.backoff_max}"
            )
        if self.rate <= 0 or self.burst < 1:
            raise ValueError(
                f"the retry rate needs rate > 0 and burst >= 1, got {self.rate} and {self.burst}"
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
    # On SIGTERM, how long the reconciles in flight may take to finish before they are abandoned (their
    # effects without a result stay in the outbox); below a pod's default 30 s termination grace period.
    drain_timeout: float = 20.0

    def __post_init__(self) -> None:
        if self.effect_timeout <= 0 or self.settle_timeout < 0 or self.drain_timeout < 0:
            raise ValueError(
                f"need effect_timeout > 0, settle_timeout >= 0 and drain_timeout >= 0, got "
                f"{self.effect_timeout}, {self.settle_timeout} and {self.drain_timeout}"
            )


@dataclass(frozen=True)
class HttpSettings:
    """Where the controller serves its HTTP API (phase history, journal, health, metrics): ``host`` and
    ``port`` (0 picks a free one; the address is logged), the ``limits`` it keeps to (connections,
    timeouts, event streams: ``api.limits``), and whether it adds the operator's ``/debug/`` routes
    (``api.debugging``)."""

    host: str = "127.0.0.1"
    port: int = 8080
    limits: HttpLimits = field(default_factory=HttpLimits)
    debug_endpoints: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"the HTTP port must be from 0 to 65535, not {self.port}")


@dataclass(frozen=True)
class LeaderElectionSettings:
    """Leader election on a coordination.k8s.io/v1 Lease (``controller.loop.leading``), with client-go's
    timings: a holder renews every ``retry_period`` seconds and steps down when no renewal succeeded for
    ``renew_deadline``; another candidate takes the lease once it saw it unchanged for ``lease_duration``.
    ``identity`` names this replica in ``holderIdentity`` (the pod name plus a random suffix)."""

    identity: str
    namespace: str = "arc-systems"
    lease_name: str = "arcsm-controller"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        if not self.identity or not self.lease_name or not self.namespace:
            raise ValueError("leader election needs an identity, a lease name and a namespace")
        if not 0 < self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError(
                "leader election needs 0 < retry period < renew deadline < lease duration, got "
                f"{self.retry_period}, {self.renew_deadline} and {self.lease_duration}"
            )
        if self.lease_duration < 1:
            raise ValueError(f"the lease duration must be at least 1 s, not {self.lease_duration}")


@dataclass(frozen=True)
class ControllerSettings:
    journal_path: Path
    # How to reach the cluster: kubeconfig files, or the pod's service account (``kubeconfigs.find``).
    cluster: Source = field(default_factory=Source.service_account)
    journal: JournalSettings = field(default_factory=JournalSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    queue: QueueSettings = field(default_factory=QueueSettings)
    reconcile: ReconcileSettings = field(default_factory=ReconcileSettings)
    # The Kubernetes client rate limit (qps, burst) is the executor's: its requests are the writes.
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    # The Actions clients' retries, rate limit and request timeout (one client per scale set's scope).
    actions: ClientSettings = field(default_factory=lambda: _client_settings())
    # How a scale set's Azure Key Vault is reached: the CA bundle $SSL_CERT_FILE names, this host's files.
    vault: Reach = field(default_factory=lambda: _vault_reach())
    machines: MachineSettings = field(default_factory=MachineSettings)
    # None: no HTTP API (``arcsm run --http HOST:PORT`` turns it on).
    http: HttpSettings | None = None
    # None: this replica leads at once (one replica); else it decides only while it holds the Lease.
    leader_election: LeaderElectionSettings | None = None
    # Without leader election, the Lease checked once at start: while another replica holds it, the run
    # is refused (``leading.LeaseHeld``) rather than fight that replica over the same objects.
    checked_lease: LeaderElectionSettings | None = None
    # This replica's Pod (the downward API's POD_NAME), in the controller namespace: the object of the
    # Events about the controller itself (its journal failing); "" puts them on the Lease, if any.
    pod_name: str = ""

    def __post_init__(self) -> None:
        # Listeners and their objects live in the controller namespace: watch it too when the watch is
        # limited to some namespaces.
        namespaces = self.watch.namespaces
        if namespaces and self.machines.controller_namespace not in namespaces:
            watch = dataclasses.replace(
                self.watch, namespaces=(*namespaces, self.machines.controller_namespace)
            )
            object.__setattr__(self, "watch", watch)


def _vault_reach() -> Reach:
    """The process's own way to a vault (``Reach.from_environ``), imported when a run is built."""
    from actions.azurekeyvault import Reach

    return Reach.from_environ(os.environ)


def _client_settings() -> ClientSettings:
    """The Actions client's defaults, imported when a run is built: ``arcsm run --help`` loads no client."""
    from actions.client import ClientSettings

    return ClientSettings()
