"""The listener (spec §5.3): one scale set's message session, turned into EphemeralRunnerSet patches.

    code = await run_listener(config, kube=configuration, stop=stop_event)

The loop, as upstream runs it:

1. open a message session (``MessageQueue``) and scale once from its statistics (a session without
   statistics is a protocol error);
2. long-poll for a message with ``lastMessageId`` and ``X-ScaleSetMaxCapacity: max_runners``;
   * none (202): scale from the latest statistics, poll again;
   * a message: remember its id and statistics, acknowledge (delete) it, acquire its available jobs,
     record each started job on its EphemeralRunner's status, count completed ones, then scale from the
     message's ``totalAssignedJobs``.

A started job is recorded on the EphemeralRunner of its runner's name only while that runner's
``status.runnerId`` is the runner id the job names (``ScaleTarget.record_job``); upstream patches by
name alone. A listener behind the service reads a job after its runner is gone, and a new runner may
have the name by then: it must not be marked busy with a job it never ran.

Scaling is ``scaler.Scaler`` (§5.4); the Kubernetes writes go through the ``ScaleTarget`` port
(``kubepatching.KubeScaleTarget`` in a cluster).

Beyond upstream, which exits on any error and leaves recovery to a new pod: a ``Transient`` error — a 5xx
or 429 that outlived the client's own retries, a dropped connection or long poll, a message-queue token
refused again after the session refresh, a Kubernetes 5xx, 429 or 409 — is retried inside the loop with
exponential backoff (``ListenerSettings``), repeating only the step that failed, so ``lastMessageId``
and the scaler's state carry over; a 401 on the queue refreshes the session (``MessageQueue``) and keeps
``lastMessageId``; a session the service no longer knows (404) is replaced by a new one, which starts
over at message 0 as a new listener would; a 409 on creating the session (another session of the scale
set is alive) is retried a bounded number of times, ``session_conflict_wait`` apart, as upstream does.

Beyond upstream, too: a session left behind is reclaimed. A listener stopped while the service is out
cannot delete its session, and the service keeps it until it has gone unpolled for a while (minutes), so
upstream's replacement meets 409 after 409. Here each listener records the id of the session it opens on
its EphemeralRunnerSet (with its first patch of the set); a new listener whose first session meets a 409
deletes the session recorded there, which only a listener of the same set can have opened, and tries
again at once. Only a listener's first opening does this, so a listener whose session was taken over by
a newer one waits rather than takes it back. A ``Terminal`` error (bad credentials, a
configuration or protocol error, a Kubernetes 403/404) ends the listener: ``run_listener`` logs one line
and returns 1. Setting ``stop`` cancels the loop wherever it is and deletes the session; it returns 0.

Nothing here logs a token or a JIT config: secrets stay ``SecretStr`` and error texts are scrubbed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from actions import errors, kubepatching
from actions.azurekeyvault import Reach
from actions.client import ActionsClient
from actions.listenerconfig import ListenerConfig, with_vault_credentials
from actions.listenermetrics import DEFAULT_SPEC, ListenerMetrics, MetricsServer
from actions.messages import JobCompleted, JobStarted, RunnerScaleSetMessage
from actions.models import Statistics
from actions.scaler import Scaler, job_fields
from actions.sessions import MessageQueue
from actions.useragent import SystemInfo

log = logging.getLogger(__name__)

T = TypeVar("T")

SUBSYSTEM = "listener"


class ScaleTarget(Protocol):
    """The listener's Kubernetes side: the EphemeralRunnerSet and its runners."""

    async def patch_runner_set(self, body: Mapping[str, object], *, session_id: str | None = None) -> None:
        """Merge-patch the EphemeralRunnerSet with ``body``; with ``session_id``, also record that its
        listener opened that message session. Raise ``errors.Transient`` when a retry may succeed and
        ``errors.Terminal`` when it cannot."""
        ...

    async def record_job(self, name: str, runner_id: int, fields: Mapping[str, object]) -> bool:
        """Set the job ``fields`` in the status of EphemeralRunner ``name`` if, and only if, its
        ``status.runnerId`` is ``runner_id``, in one write. False when it is another runner, one not
        registered yet, or gone; raise as ``patch_runner_set`` does otherwise."""
        ...

    async def recorded_session(self) -> str | None:
        """The message session recorded last on the EphemeralRunnerSet, if any."""
        ...


@dataclass(frozen=True)
class ListenerSettings:
    backoff_initial: float = 1.0  # the first wait after a transient error; doubles per failure
    backoff_max: float = 30.0
    session_conflicts: int = 10  # 409s on creating the session before giving up
    session_conflict_wait: float = 30.0
    close_timeout: float = 5.0  # for deleting the session on the way out


class _SessionLost(Exception):
    """The service does not know the session any more (404): open a new one."""


class Listener:
    def __init__(
        self,
        config: ListenerConfig,
        *,
        client: ActionsClient,
        target: ScaleTarget,
        metrics: ListenerMetrics,
        owner_name: str,
        settings: ListenerSettings,
    ) -> None:
        self.config = config
        self.client = client
        self.target = target
        self.metrics = metrics
        self.owner_name = owner_name
        self.settings = settings
        self.scaler = Scaler(min_runners=config.min_runners, max_runners=config.max_runners)
        self.queue: MessageQueue | None = None
        self.last_message_id = 0
        self.statistics = Statistics()
        self.reclaimed: str | None = None  # the id of a session left behind that this listener deleted
        self._first_session = True

    @property
    def scale_set(self) -> str:
        return f"{self.config.ephemeral_runner_set_namespace}/{self.config.ephemeral_runner_set_name}"

    async def run_until(self, stop: asyncio.Event) -> None:
        """Run the loop until ``stop`` is set (then return) or a ``Terminal`` error (then raise it);
        either way the session is deleted."""
        work = asyncio.create_task(self._run(), name=f"listener {self.scale_set}")
        stopping = asyncio.create_task(stop.wait(), name=f"listener {self.scale_set} stop")
        try:
            await asyncio.wait({work, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            work.cancel()
            await asyncio.wait({work})
            await self._close_session()
        if not work.cancelled():
            work.result()

    # -- the loop --------------------------------------------------------------------------------------

    async def _run(self) -> None:
        self.metrics.publish_bounds(min_runners=self.config.min_runners, max_runners=self.config.max_runners)
        while True:
            queue = await self._open_session()
            try:
                await self._poll(queue)
            except _SessionLost as lost:
                log.warning(
                    "listener %s: the message session is gone (%s); opening a new one", self.scale_set, lost
                )
                self.queue = None
                self.last_message_id = 0

    async def _open_session(self) -> MessageQueue:
        conflicts = 0
        while True:
            try:
                queue = await self._retrying(
                    "create the message session",
                    lambda: MessageQueue.open(
                        self.client, scale_set_id=self.config.runner_scale_set_id, owner_name=self.owner_name
                    ),
                )
                break
            except errors.RequestRejected as exc:
                if _status(exc) != 409 or conflicts >= self.settings.session_conflicts:
                    raise
                conflicts += 1
                if await self._reclaim():
                    continue
                wait = self.settings.session_conflict_wait
                log.warning("listener %s: %s; trying again in %.1fs", self.scale_set, exc, wait)
                await asyncio.sleep(wait)
        self._first_session = False
        self.queue = queue
        session = queue.session
        log.info(
            "listener %s: message session %s opened for scale set %d",
            self.scale_set,
            session.session_id,
            self.config.runner_scale_set_id,
        )
        if session.statistics is None:
            raise errors.ProtocolError("the message session carries no statistics; cannot scale")
        self._record(session.statistics)
        await self._scale(session.statistics.total_assigned_jobs, session_id=session.session_id)
        return queue

    async def _reclaim(self) -> bool:
        """On a first session's 409: delete the session an earlier listener of this set recorded and could
        not delete. True when there was one to delete (it may have expired meanwhile)."""
        if not self._first_session or self.reclaimed is not None:
            return False
        stale = await self._retrying(
            "read the recorded message session", lambda: self.target.recorded_session()
        )
        if stale is None:
            return False
        self.reclaimed = stale
        log.warning(
            "listener %s: scale set %d still holds session %s of an earlier listener; deleting it",
            self.scale_set,
            self.config.runner_scale_set_id,
            stale,
        )
        try:
            await self._retrying(
                f"delete the earlier listener's session {stale}",
                lambda: self.client.delete_message_session(self.config.runner_scale_set_id, stale),
            )
        except errors.NotFound:
            log.info("listener %s: session %s had already expired", self.scale_set, stale)
        return True

    async def _poll(self, queue: MessageQueue) -> None:
        while True:
            message = await self._retrying(
                "get a message",
                lambda: queue.get_message(
                    last_message_id=self.last_message_id, max_capacity=self.config.max_runners
                ),
                session=True,
            )
            if message is None:
                await self._scale(self.statistics.total_assigned_jobs)
            else:
                await self._handle(queue, message)

    async def _handle(self, queue: MessageQueue, message: RunnerScaleSetMessage) -> None:
        self.last_message_id = message.message_id
        if message.statistics is not None:
            self._record(message.statistics)
        log.debug(
            "listener %s: message %d with %d job messages",
            self.scale_set,
            message.message_id,
            len(message.jobs),
        )
        await self._retrying(
            f"acknowledge message {message.message_id}",
            lambda: queue.delete_message(message.message_id),
            session=True,
        )
        available = [job.runner_request_id for job in message.available]
        if available:
            acquired = await self._retrying(
                "acquire jobs", lambda: queue.acquire_jobs(available), session=True
            )
            log.info(
                "listener %s: acquired %d of %d available jobs", self.scale_set, len(acquired), len(available)
            )
        for started in message.started:
            await self._job_started(started)
        for completed in message.completed:
            self._job_completed(completed)
        await self._scale(self.statistics.total_assigned_jobs)

    async def _job_started(self, job: JobStarted) -> None:
        log.info(
            "listener %s: job %d started on runner %s", self.scale_set, job.runner_request_id, job.runner_name
        )
        self.scaler.job_started()
        self.metrics.job_started(job)
        if not job.runner_name:
            return
        if job.runner_id <= 0:
            log.warning(
                "listener %s: job %d started on runner %s, but the message names no runner id; not recorded",
                self.scale_set,
                job.runner_request_id,
                job.runner_name,
            )
            return
        recorded = await self._retrying(
            f"record job {job.runner_request_id} on runner {job.runner_name}",
            lambda: self.target.record_job(job.runner_name, job.runner_id, job_fields(job)),
        )
        if not recorded:
            log.info(
                "listener %s: job %d ran on runner %s (id %d), and no EphemeralRunner %s is that runner "
                "now (gone, or a new runner of the name); not recorded",
                self.scale_set,
                job.runner_request_id,
                job.runner_name,
                job.runner_id,
                job.runner_name,
            )

    def _job_completed(self, job: JobCompleted) -> None:
        log.info(
            "listener %s: job %d completed (%s) on runner %s",
            self.scale_set,
            job.runner_request_id,
            job.result or "no result",
            job.runner_name,
        )
        self.scaler.job_completed()
        self.metrics.job_completed(job)

    async def _scale(self, assigned_jobs: int, *, session_id: str | None = None) -> None:
        """Patch the EphemeralRunnerSet for ``assigned_jobs``; the first patch of a session records it."""
        previous = self.scaler.target
        patch = self.scaler.desired(assigned_jobs)
        await self._retrying(
            "patch the EphemeralRunnerSet",
            lambda: self.target.patch_runner_set(patch.as_body(), session_id=session_id),
        )
        self.metrics.publish_desired(patch.replicas)
        level = logging.INFO if patch.replicas != previous else logging.DEBUG
        log.log(
            level,
            "listener %s: %d runners desired for %d assigned jobs (patch id %d)",
            self.scale_set,
            patch.replicas,
            assigned_jobs,
            patch.patch_id,
        )

    def _record(self, statistics: Statistics) -> None:
        self.statistics = statistics
        self.metrics.publish_statistics(statistics)

    # -- errors ----------------------------------------------------------------------------------------

    async def _retrying(self, what: str, call: Callable[[], Awaitable[T]], *, session: bool = False) -> T:
        """``call()``, retried with backoff while it fails ``Transient``; with ``session``, a 404 means the
        session is gone (``_SessionLost``)."""
        delay = self.settings.backoff_initial
        while True:
            try:
                return await call()
            except errors.NotFound as exc:
                if session:
                    raise _SessionLost(str(exc)) from exc
                raise
            except errors.Transient as exc:
                wait = max(delay, exc.retry_after or 0.0)
                log.warning("listener %s: %s failed; retrying in %.2fs: %s", self.scale_set, what, wait, exc)
                await asyncio.sleep(wait)
                delay = min(delay * 2, self.settings.backoff_max)

    async def _close_session(self) -> None:
        queue, self.queue = self.queue, None
        if queue is None:
            return
        try:
            async with asyncio.timeout(self.settings.close_timeout):
                await queue.close()
        except TimeoutError:
            log.warning(
                "listener %s: could not delete message session: no answer within %g s",
                self.scale_set,
                self.settings.close_timeout,
            )
        except errors.ActionsError as exc:
            log.warning("listener %s: could not delete message session: %s", self.scale_set, exc)
        else:
            log.info("listener %s: message session %s deleted", self.scale_set, queue.session.session_id)


def _status(exc: errors.ActionsError) -> int:
    return exc.response.status if exc.response is not None else 0


async def run_listener(
    config: ListenerConfig,
    *,
    kube: kubepatching.Kube = None,
    stop: asyncio.Event,
    client: ActionsClient | None = None,
    target: ScaleTarget | None = None,
    metrics: ListenerMetrics | None = None,
    owner_name: str | None = None,
    settings: ListenerSettings | None = None,
    serve_metrics: bool = True,
    vault: Reach | None = None,
) -> int:
    """Run the listener of ``config`` until ``stop`` is set; return the process exit code.

    ``kube`` reaches the cluster (an ``ApiClient`` left open, a ``Configuration``, or None for the pod's
    service account); ``target`` replaces it entirely (tests). ``client`` is an ``ActionsClient`` the
    caller owns (otherwise one is made from the config). ``metrics`` collects §5.5, served on
    ``config.metrics_addr`` unless ``serve_metrics`` is False. A config whose credentials are in a vault
    has them read first, reaching it with ``vault`` (default: this process's CA bundle and files). 0
    after ``stop``; 1 after a ``Terminal`` error (a vault's too, logged on one line) or a crash.
    """
    metrics = metrics or ListenerMetrics(
        scale_set_labels={
            "name": config.runner_scale_set_name,
            "namespace": config.ephemeral_runner_set_namespace,
            **config.config_url.labels(),
        },
        spec=config.metrics or DEFAULT_SPEC,
    )
    try:
        async with contextlib.AsyncExitStack() as stack:
            if client is None:
                if config.credentials is None:
                    config = await with_vault_credentials(config, vault or Reach.from_environ(os.environ))
                assert config.credentials is not None
                client = await stack.enter_async_context(
                    ActionsClient(
                        config_url=config.config_url,
                        credentials=config.credentials,
                        system_info=SystemInfo(subsystem=SUBSYSTEM, scale_set_id=config.runner_scale_set_id),
                        root_ca=config.server_root_ca,
                    )
                )
            if target is None:
                api = await stack.enter_async_context(kubepatching.connect(kube))
                target = kubepatching.KubeScaleTarget(
                    api,
                    namespace=config.ephemeral_runner_set_namespace,
                    name=config.ephemeral_runner_set_name,
                )
            if serve_metrics and config.metrics_addr:
                server = MetricsServer(metrics, addr=config.metrics_addr, endpoint=config.metrics_endpoint)
                await server.start()
                stack.push_async_callback(server.stop)
            listener = Listener(
                config,
                client=client,
                target=target,
                metrics=metrics,
                owner_name=owner_name or socket.gethostname(),
                settings=settings or ListenerSettings(),
            )
            await listener.run_until(stop)
    except errors.Terminal as exc:
        log.error(
            "listener %s/%s stopped: %s",
            config.ephemeral_runner_set_namespace,
            config.ephemeral_runner_set_name,
            exc,
        )
        return 1
    except OSError as exc:  # e.g. the metrics address is taken
        log.error(
            "listener %s/%s stopped: %s",
            config.ephemeral_runner_set_namespace,
            config.ephemeral_runner_set_name,
            exc,
        )
        return 1
    except Exception:
        log.exception(
            "listener %s/%s crashed", config.ephemeral_runner_set_namespace, config.ephemeral_runner_set_name
        )
        return 1
    log.info(
        "listener %s/%s stopped", config.ephemeral_runner_set_namespace, config.ephemeral_runner_set_name
    )
    return 0
