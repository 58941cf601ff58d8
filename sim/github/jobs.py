"""The job source and the runner side of the fake: queue jobs for a scale set, and let a connected
runner take, run and finish them (§5.3, §6.5).

Queued jobs are offered to the scale set's session as JobAvailable; the listener acquires them
(``acquirejobs``), which assigns them to the scale set (JobAssigned); a simulated runner container then
calls ``next_job_for`` and gets the oldest assigned job (JobStarted), and ``complete`` finishes it
(JobCompleted; the ephemeral runner's registration is removed). ``run_job`` is the whole runner life in
one call: wait for a job, run it for ``seconds``, complete it, or fail it when the pod is stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from sim.github.changes import Changes, wait_any
from sim.github.records import Job, JobState
from sim.github.state import State


@dataclass(frozen=True)
class JobSpec:
    """What a queued job says about itself; empty owner and repository come from the scale set's scope."""

    owner: str = ""
    repository: str = ""
    workflow: str = ".github/workflows/ci.yaml"
    ref: str = "refs/heads/main"
    display_name: str = "build"
    event_name: str = "push"
    labels: tuple[str, ...] | None = None  # None: the scale set's name, as a workflow's runs-on


DEFAULT_REPOSITORY = "sim-repo"


class JobSource:
    def __init__(self, state: State, changes: Changes) -> None:
        self.state = state
        self.changes = changes

    def queue(self, scale_set_id: int, count: int = 1, spec: JobSpec | None = None) -> list[Job]:
        """Queue ``count`` jobs for the scale set (``LookupError`` if it does not exist)."""
        spec = spec or JobSpec()
        scale_set = self.state.scale_sets.get(scale_set_id)
        if scale_set is None:
            raise LookupError(f"no runner scale set {scale_set_id}")
        scope = self.state.tenants[scale_set.tenant_id].scope
        owner = spec.owner or scope.owner
        repository = spec.repository or scope.repository or DEFAULT_REPOSITORY
        return [
            self.state.queue_job(
                scale_set_id,
                owner=owner,
                repository=repository,
                workflow_ref=f"{owner}/{repository}/{spec.workflow}@{spec.ref}",
                display_name=spec.display_name,
                event_name=spec.event_name,
                labels=list(spec.labels) if spec.labels is not None else None,
            )
            for _ in range(count)
        ]

    async def next_job_for(
        self, runner_id: int, *, timeout: float | None = None, stopping: asyncio.Event | None = None
    ) -> Job | None:
        """Wait until runner ``runner_id`` is given a job and return it, started (JobStarted sent).

        None when the runner is not (or no longer) registered and online, e.g. removed while idle,
        when ``stopping`` is set, or after ``timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        agent = self.state.agents.get(runner_id)
        scale_set_id = agent.scale_set_id if agent is not None else 0
        while True:
            changed = self.changes.current(scale_set_id)
            agent = self.state.agents.get(runner_id)
            if agent is None or not agent.online or (stopping is not None and stopping.is_set()):
                return None
            if agent.job is not None:
                return self.state.jobs[agent.job]
            job = self.state.take_job(runner_id)
            if job is not None:
                return job
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return None
            await wait_any([changed] if stopping is None else [changed, stopping], remaining)

    def complete(self, runner_request_id: int, result: str = "succeeded") -> Job | None:
        """Finish a job (JobCompleted); None if it is unknown or already finished or canceled."""
        return self.state.complete_job(runner_request_id, result)

    async def run_job(
        self,
        runner_id: int,
        *,
        seconds: float,
        result: str = "succeeded",
        stopping: asyncio.Event | None = None,
        timeout: float | None = None,
        on_start: Callable[[Job], None] | None = None,
    ) -> Job | None:
        """Take the next job (``on_start`` is told), run it for ``seconds`` and complete it with ``result``.

        If ``stopping`` is set while the job runs, the runner is disconnected and the job fails. A job
        finished by someone else meanwhile (``complete``, a test letting a long job end) ends the run at
        once, as a runner's job ends when its last step does. Returns the finished job, or None if no job
        came (see ``next_job_for``).
        """
        job = await self.next_job_for(runner_id, timeout=timeout, stopping=stopping)
        if job is None:
            return None
        if on_start is not None:
            on_start(job)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            changed = self.changes.current(job.scale_set_id)
            if stopping is not None and stopping.is_set():
                self.state.disconnect_agent(runner_id)
                return self.state.jobs.get(job.runner_request_id)
            current = self.state.jobs.get(job.runner_request_id)
            if current is None or current.state is not JobState.RUNNING:
                return current
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await wait_any([changed] if stopping is None else [changed, stopping], remaining)
        self.complete(job.runner_request_id, result)
        return self.state.jobs.get(job.runner_request_id)
