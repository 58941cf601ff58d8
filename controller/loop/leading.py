"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.

Only the leader decides and writes; every replica watches and journals (a warm standby), so the replica
that takes over starts from its own journal and loses no history.

* ``Elector.try_acquire_or_renew``: GET the Lease (create it when missing). Someone else holds it while its
  ``holderIdentity`` is set and its record (resourceVersion) has not changed for ``leaseDurationSeconds``
  on this replica's own monotonic clock (no clock of another machine is compared). Otherwise PUT it back
  with the resourceVersion read, as the holder: ``renewTime`` now, and on a change of holder a new
  ``acquireTime`` and ``leaseTransitions`` + 1. A 409 means another candidate won the race.
* ``acquire`` tries every ``retry_period`` (jittered) until it wins; ``hold`` renews every
  ``retry_period`` and returns once no renewal succeeded for ``renew_deadline``.
* ``leading`` is this replica's own check, made before every write (``LeaderOnly``, which raises
  ``NotLeading`` instead of writing): true while the last successful acquire or renew started less than
  ``renew_deadline`` ago. As ``renew_deadline`` <
  ``lease_duration``, a leader stops writing before any other candidate may take the Lease.
* ``refuse_if_held``: what a replica without leader election does at start (it leads at once, so it
  must not while another leads): read the Lease, and raise ``LeaseHeld`` when another replica holds it
  and renewed it within its duration (by the Lease's ``renewTime`` against this machine's clock: a
  one-off check cannot watch the record for a whole duration as a candidate does).
* ``Elector.claim`` and ``Elector.keep``: a replica without leader election then holds the Lease itself
  for as long as it runs, so a replica that elects (the chart's, started later) stands by instead of
  acting beside it. Its identity is its journal's (``claim_identity``: the host and the journal file's
  device and inode), so the same controller restarted on the same journal (after a ``kill -9``, say)
  takes its Lease back at once, while any other waits for it to expire. ``keep`` renews it every retry
  period and answers why when another replica took it (the run then stops); a claim the cluster refuses
  to store (no RBAC for Leases) is warned about once and the run goes on without it.
* ``release`` on a clean stop: the holder PUTs an empty ``holderIdentity`` (``leaseDurationSeconds`` 1),
  so the next candidate takes over on its next try instead of waiting for the Lease to expire.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from controller.loop.reconciling import Executor, NotLeading
from controller.loop.settings import LeaderElectionSettings
from kube.failures import UNANSWERED, Failure
from statemachines.effectresults import EffectResult
from statemachines.effects import Effect

log = logging.getLogger("arcsm.controller")


def default_identity() -> str:
    """The pod name (``HOSTNAME``, else the host name) plus a random suffix, so a restarted pod of the same
    name is a new candidate."""
    host = os.environ.get("HOSTNAME") or socket.gethostname() or "arcsm"
    return f"{host}_{secrets.token_hex(4)}"


def claim_identity(journal: os.PathLike[str] | str) -> str:
    """The identity a controller without leader election holds the Lease by: the host (``HOSTNAME``, else
    the host name) and the journal file's device and inode, so one journal is one controller."""
    host = os.environ.get("HOSTNAME") or socket.gethostname() or "arcsm"
    stat = os.stat(journal)
    digest = hashlib.sha256(f"{stat.st_dev}:{stat.st_ino}".encode()).hexdigest()[:8]
    return f"{host}_{digest}"


def micro_time(moment: datetime) -> str:
    """A MicroTime as the API server parses it: UTC with exactly six fractional digits."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Observed:
    """The Lease as last read or written, and when (this replica's monotonic clock) it was first seen so."""

    resource_version: str
    holder: str
    duration: float
    transitions: int
    acquire_time: str
    at: float


class Elector:
    def __init__(
        self,
        api: client.ApiClient,
        settings: LeaderElectionSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.identity = settings.identity
        self._leases = client.CoordinationV1Api(api)
        self._clock = clock
        self._observed: Observed | None = None
        self._renewed_at: float | None = None  # when the last successful acquire or renew started

    @property
    def leading(self) -> bool:
        """Whether this replica may write now: its last acquire or renew succeeded within the deadline."""
        renewed = self._renewed_at
        return renewed is not None and self._clock() < renewed + self.settings.renew_deadline

    @property
    def holder(self) -> str:
        """The holder this replica last saw in the Lease ("" when none, or not read yet)."""
        return self._observed.holder if self._observed is not None else ""

    async def try_acquire_or_renew(self) -> bool:
        """One attempt to take or keep the Lease; True when this replica holds it now."""
        started, now = self._clock(), datetime.now(UTC)
        name, namespace = self.settings.lease_name, self.settings.namespace
        try:
            lease = await self._leases.read_namespaced_lease(name, namespace)
        except ApiException as exc:
            failure = Failure.from_api_exception(exc)
            if not failure.not_found:
                log.warning(
                    "cannot read the lease %s/%s: %s %s", namespace, name, failure.code, failure.phrase
                )
                return False
            return await self._create(now, started)
        spec = lease.spec
        holder = spec.holder_identity or ""
        duration = float(spec.lease_duration_seconds or self.settings.lease_duration)
        transitions = int(spec.lease_transitions or 0)
        version = str(lease.metadata.resource_version or "")
        acquired = micro_time(spec.acquire_time) if spec.acquire_time is not None else micro_time(now)
        # A version is timed from when its answer arrived (client-go's observedTime), not from before the
        # read: the holder may have renewed while the read was on its way.
        answered = self._clock()
        if self._observed is None or self._observed.resource_version != version:
            self._observed = Observed(version, holder, duration, transitions, acquired, answered)
        if holder and holder != self.identity and self._observed.at + duration > answered:
            return False  # held by another replica that renewed within its lease duration
        if holder != self.identity:
            transitions, acquired = transitions + 1, micro_time(now)
        body = self._body(now, acquire_time=acquired, transitions=transitions, resource_version=version)
        try:
            written = await self._leases.replace_namespaced_lease(name, namespace, body)
        except ApiException as exc:
            failure = Failure.from_api_exception(exc)
            if not failure.conflict:
                log.warning(
                    "cannot update the lease %s/%s: %s %s", namespace, name, failure.code, failure.phrase
                )
            return False  # 409: another candidate wrote it first
        self._won(written, started)
        return True

    async def _create(self, now: datetime, started: float) -> bool:
        body = self._body(now, acquire_time=micro_time(now), transitions=0)
        try:
            created = await self._leases.create_namespaced_lease(self.settings.namespace, body)
        except ApiException as exc:
            failure = Failure.from_api_exception(exc)
            if not failure.conflict:
                log.warning(
                    "cannot create the lease %s/%s: %s %s",
                    self.settings.namespace,
                    self.settings.lease_name,
                    failure.code,
                    failure.phrase,
                )
            return False
        self._won(created, started)
        return True

    def _body(
        self,
        now: datetime,
        *,
        acquire_time: str,
        transitions: int,
        resource_version: str | None = None,
        holder: str | None = None,
        duration: int | None = None,
    ) -> Any:
        """The Lease as JSON (kubernetes_asyncio sends a dict as it is; its model would format the
        MicroTimes its own way, which the API server may refuse)."""
        metadata: dict[str, Any] = {"name": self.settings.lease_name, "namespace": self.settings.namespace}
        if resource_version is not None:
            metadata["resourceVersion"] = resource_version
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": metadata,
            "spec": {
                "holderIdentity": self.identity if holder is None else holder,
                "leaseDurationSeconds": duration or max(1, round(self.settings.lease_duration)),
                "acquireTime": acquire_time,
                "renewTime": micro_time(now),
                "leaseTransitions": transitions,
            },
        }

    def _won(self, lease: Any, started: float) -> None:
        spec = lease.spec
        self._observed = Observed(
            resource_version=str(lease.metadata.resource_version or ""),
            holder=spec.holder_identity or "",
            duration=float(spec.lease_duration_seconds or self.settings.lease_duration),
            transitions=int(spec.lease_transitions or 0),
            acquire_time=micro_time(spec.acquire_time or datetime.now(UTC)),
            at=started,
        )
        if self._renewed_at is None or not self.leading:
            log.info(
                "leading: %s holds the lease %s/%s",
                self.identity,
                self.settings.namespace,
                self.settings.lease_name,
            )
        self._renewed_at = started

    async def acquire(self, stopping: asyncio.Event) -> bool:
        """Try every retry period until this replica holds the Lease (True) or ``stopping`` is set (False)."""
        log.info("standby: %s waits for the lease %s", self.identity, self.settings.lease_name)
        while not stopping.is_set():
            if await self._attempt(self.settings.renew_deadline):
                return True
            await _wait(stopping, self.settings.retry_period * random.uniform(1.0, 1.2))
        return False

    async def hold(self) -> None:
        """Renew every retry period while leading; return (no longer leading) once a renewal missed the
        renew deadline."""
        try:
            await self._renew_until_missed()
        except Exception:
            self._renewed_at = None  # a renewal that failed in an unforeseen way is a missed one
            raise

    async def _renew_until_missed(self) -> None:
        while True:
            await asyncio.sleep(self.settings.retry_period)
            renewed = self._renewed_at
            if renewed is None:
                return
            deadline = renewed + self.settings.renew_deadline
            remaining = deadline - self._clock()
            if remaining > 0 and await self._attempt(remaining):
                continue
            if self._clock() >= deadline:
                self._renewed_at = None
                log.warning(
                    "stepping down: %s could not renew the lease %s within %s s",
                    self.identity,
                    self.settings.lease_name,
                    self.settings.renew_deadline,
                )
                return

    async def _attempt(self, timeout: float) -> bool:
        try:
            async with asyncio.timeout(timeout):
                return await self.try_acquire_or_renew()
        except TimeoutError:
            return False
        except (*UNANSWERED, ValueError) as exc:  # unreachable, or an answer not a Lease
            log.warning("lease %s: %s", self.settings.lease_name, exc)
            return False

    async def claim(self, api: client.ApiClient) -> bool:
        """Take the Lease at once, as a replica without leader election: ``LeaseHeld`` while another
        replica renewed it within its duration (``refuse_if_held``), else write this replica in as its
        holder. False (warned) when the cluster would not store it; this replica then runs without it."""
        lease = await refuse_if_held(api, self.settings)
        if lease is not None:
            # Not held by anyone else (released, expired, or this journal's own): taken as a candidate
            # that has watched the record for a whole duration already.
            spec = lease.spec
            duration = float(spec.lease_duration_seconds or self.settings.lease_duration)
            self._observed = Observed(
                resource_version=str(lease.metadata.resource_version or ""),
                holder=spec.holder_identity or "",
                duration=duration,
                transitions=int(spec.lease_transitions or 0),
                acquire_time=micro_time(spec.acquire_time or datetime.now(UTC)),
                at=self._clock() - duration,
            )
        if await self._attempt(self.settings.renew_deadline):
            return True
        await refuse_if_held(api, self.settings)  # another replica won the race: say which
        log.warning(
            "running without holding the lease %s/%s: a replica that elects a leader will not see this one",
            self.settings.namespace,
            self.settings.lease_name,
        )
        return False

    async def keep(self, stopping: asyncio.Event) -> str | None:
        """Renew the claimed Lease every retry period until ``stopping`` is set (None); the reason, in one
        line, once another replica holds it (this one could not renew it for a whole duration)."""
        while not stopping.is_set():
            await _wait(stopping, self.settings.retry_period)
            if stopping.is_set() or await self._attempt(self.settings.renew_deadline):
                continue
            taken_by = self.holder
            if taken_by and taken_by != self.identity:
                return (
                    f"another controller, {taken_by}, took the Lease {self.settings.namespace}/"
                    f"{self.settings.lease_name} while this one could not renew it: stopping, so that only "
                    "one acts"
                )
        return None

    async def release(self) -> bool:
        """Give the Lease up (stop writing first): empty holder, so the next candidate takes it at once.
        True when released; False when this replica did not hold it or the update failed."""
        observed, self._renewed_at = self._observed, None
        if observed is None or observed.holder != self.identity:
            return False
        version = observed.resource_version
        try:
            async with asyncio.timeout(self.settings.renew_deadline):
                for last_try in (False, True):
                    try:
                        await self._release_at(observed, version)
                        break
                    except ApiException as exc:
                        # A renewal cut short by the stop may have landed after all: read the Lease
                        # again and release that version, while this replica still holds it.
                        if exc.status != HTTPStatus.CONFLICT or last_try:
                            raise
                        now_held = await self._leases.read_namespaced_lease(
                            self.settings.lease_name, self.settings.namespace
                        )
                        if (now_held.spec.holder_identity or "") != self.identity:
                            raise
                        version = str(now_held.metadata.resource_version or "")
        except (ApiException, *UNANSWERED) as exc:
            log.warning("could not release the lease %s: %s", self.settings.lease_name, exc)
            return False
        self._observed = None
        log.info("released the lease %s", self.settings.lease_name)
        return True

    async def _release_at(self, observed: Observed, resource_version: str) -> None:
        now = datetime.now(UTC)
        body = self._body(
            now,
            acquire_time=micro_time(now),
            transitions=observed.transitions,
            resource_version=resource_version,
            holder="",
            duration=1,
        )
        await self._leases.replace_namespaced_lease(self.settings.lease_name, self.settings.namespace, body)


class LeaseHeld(RuntimeError):
    """Another replica holds the Lease: a controller without leader election must not start."""


async def refuse_if_held(api: client.ApiClient, settings: LeaderElectionSettings) -> Any:
    """Raise ``LeaseHeld`` (one line: the Lease, its holder, what to do) while another replica holds the
    Lease and renewed it within its duration; a Lease missing, released, expired or held by this
    replica's own identity lets the run start. The Lease read (None when missing or unreadable)."""
    name, namespace = settings.lease_name, settings.namespace
    try:
        lease = await client.CoordinationV1Api(api).read_namespaced_lease(name, namespace)
    except ApiException as exc:
        failure = Failure.from_api_exception(exc)
        if not failure.not_found:
            log.warning(
                "cannot read the lease %s/%s to check that no other controller leads: %s %s",
                namespace,
                name,
                failure.code,
                failure.phrase,
            )
        return None
    spec = lease.spec
    holder, renewed = spec.holder_identity or "", spec.renew_time
    if not holder or renewed is None or holder == settings.identity:
        return lease
    duration = float(spec.lease_duration_seconds or settings.lease_duration)
    age = (datetime.now(UTC) - (renewed if renewed.tzinfo else renewed.replace(tzinfo=UTC))).total_seconds()
    if age < duration:
        raise LeaseHeld(
            f"another controller, {holder}, holds the Lease {namespace}/{name} (renewed {max(age, 0):.0f} s "
            f"ago, for {duration:.0f} s): stop it, or run this one with --leader-elect to stand by until it "
            "lets go"
        )
    return lease


async def _wait(event: asyncio.Event, seconds: float) -> None:
    """Wait ``seconds``, or less if ``event`` is set first."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        pass


class LeaderOnly:
    """The executor of a replica that may lose its Lease: every effect is refused unless the elector says
    this replica still leads, so a leader that cannot renew writes nothing.

    A refusal raises ``NotLeading`` rather than returning a failed result: the machines must not read a
    failure that never happened (no condition, no Warning event, no backoff), and the effect, left without
    a result, stays in the outbox for the next term to perform."""

    def __init__(self, executor: Executor, elector: Elector) -> None:
        self._executor = executor
        self._elector = elector

    async def execute(self, effect: Effect) -> EffectResult:
        if not self._elector.leading:
            raise NotLeading(
                f"{self._elector.identity} no longer holds the lease; the leader performs {effect.key}"
            )
        return await self._executor.execute(effect)
