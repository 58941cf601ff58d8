"""The fake Actions service's model: tenants, runner groups, scale sets, agents (runners), message
sessions with their queues, and jobs. Pure: no I/O, no asyncio, the clock injected.

Every operation is a method of ``State``; the ones that break a service rule raise
``errors.ServiceError`` with the status and ``typeName`` the real service answers (§6.3, §6.5).
``on_change`` is called after every mutation with the id of the scale set it changed (None: it may
concern any), so the async layer wakes only the long polls and runners of that set.

A job goes AVAILABLE (queued, offered to the scale set's session as JobAvailable) → ASSIGNED (acquired
through acquirejobs: JobAssigned) → RUNNING (an idle runner of the set took it: JobStarted) → COMPLETED
(JobCompleted; the ephemeral runner's agent is removed). Deleting the scale set CANCELs what is left.
Job messages go only to the session that exists when they happen; a new session is offered every job
still AVAILABLE, and a completion re-offers them (capacity may have blocked an earlier acquire).

Statistics (§6.4) are counted per scale set: available = AVAILABLE jobs; acquired = assigned =
ASSIGNED + RUNNING (the fake assigns on acquire); running = RUNNING; registered = its agents (a JIT
config registers one); busy = agents running a job; idle = online agents without one.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from sim.github import errors
from sim.github.records import (
    DEFAULT_GROUP,
    DEFAULT_GROUP_ID,
    Agent,
    Clock,
    Job,
    JobEvent,
    JobState,
    Message,
    RunnerGroup,
    ScaleSet,
    Session,
    Statistics,
    Tenant,
    version_at_least,
)
from sim.github.scopes import Scope


class State:
    def __init__(
        self,
        *,
        clock: Clock,
        seed: int | None = None,
        session_timeout: float = 120.0,
        on_change: Callable[[int | None], None] | None = None,
    ) -> None:
        self.clock = clock
        self.session_timeout = session_timeout
        self.on_change: Callable[[int | None], None] = on_change or (lambda scale_set_id: None)
        self.tenants: dict[int, Tenant] = {}
        self.scale_sets: dict[int, ScaleSet] = {}
        self.agents: dict[int, Agent] = {}
        self.sessions: dict[str, Session] = {}
        self.jobs: dict[int, Job] = {}
        # Per scale set, its unfinished jobs in queue order (what statistics, offers and runners read),
        # and its session's id: so a change costs the same however many sets and jobs there are.
        self._unfinished: dict[int, dict[int, Job]] = {}
        self._session_ids: dict[int, str] = {}
        self._tenant_ids: dict[str, int] = {}
        self._rand = random.Random(seed)
        self._last = {"tenant": 0, "scale_set": 0, "agent": 0, "job": 0, "run": 1000, "message": 0}

    def _next(self, what: str) -> int:
        self._last[what] += 1
        return self._last[what]

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self._rand.getrandbits(128), version=4))

    # -- tenants and runner groups ---------------------------------------------------------------------

    def tenant(self, scope: Scope) -> Tenant:
        """The tenant of ``scope``, created with its Default group (id 1) on first use."""
        tenant_id = self._tenant_ids.get(scope.key)
        if tenant_id is not None:
            return self.tenants[tenant_id]
        tenant = Tenant(self._next("tenant"), scope)
        tenant.groups[DEFAULT_GROUP_ID] = RunnerGroup(DEFAULT_GROUP_ID, tenant.id, DEFAULT_GROUP, True)
        self.tenants[tenant.id] = tenant
        self._tenant_ids[scope.key] = tenant.id
        return tenant

    def tenant_by_id(self, tenant_id: int) -> Tenant:
        tenant = self.tenants.get(tenant_id)
        if tenant is None:
            raise errors.not_found(f"No tenant {tenant_id}.")
        return tenant

    def add_group(self, scope: Scope, name: str) -> RunnerGroup:
        tenant = self.tenant(scope)
        if self.groups(tenant.id, name):
            raise ValueError(f"runner group {name!r} already exists in {scope.path}")
        group = RunnerGroup(max(tenant.groups) + 1, tenant.id, name)
        tenant.groups[group.id] = group
        self.on_change(None)
        return group

    def groups(self, tenant_id: int, name: str | None = None) -> list[RunnerGroup]:
        groups = self.tenant_by_id(tenant_id).groups.values()
        return [g for g in groups if name is None or g.name.lower() == name.lower()]

    def group(self, tenant_id: int, group_id: int) -> RunnerGroup:
        group = self.tenant_by_id(tenant_id).groups.get(group_id)
        if group is None:
            raise errors.group_not_found(group_id)
        return group

    def group_size(self, tenant_id: int, group_id: int) -> int:
        sets = {
            s.id
            for s in self.scale_sets.values()
            if (s.tenant_id, s.runner_group_id) == (tenant_id, group_id)
        }
        return sum(1 for a in self.agents.values() if a.scale_set_id in sets)

    # -- scale sets ------------------------------------------------------------------------------------

    def find_scale_sets(self, tenant_id: int, group_id: int | None, name: str | None) -> list[ScaleSet]:
        return [
            s
            for s in self.scale_sets.values()
            if s.tenant_id == tenant_id
            and (group_id is None or s.runner_group_id == group_id)
            and (name is None or s.name.lower() == name.lower())
        ]

    def scale_set(self, tenant_id: int, scale_set_id: int) -> ScaleSet:
        found = self.scale_sets.get(scale_set_id)
        if found is None or found.tenant_id != tenant_id:
            raise errors.scale_set_not_found(scale_set_id)
        return found

    def create_scale_set(
        self,
        tenant_id: int,
        *,
        name: str,
        runner_group_id: int,
        labels: list[dict[str, str]] | None = None,
        runner_setting: dict[str, Any] | None = None,
    ) -> ScaleSet:
        if not name.strip():
            raise errors.bad_request("A runner scale set needs a name.")
        self.group(tenant_id, runner_group_id)
        if self.find_scale_sets(tenant_id, runner_group_id, name):
            raise errors.scale_set_exists(name, runner_group_id)
        labels = [dict(label) for label in labels or []] or [{"name": name}]
        for label in labels:
            label["type"] = label.get("type") or "System"
        created = ScaleSet(
            id=self._next("scale_set"),
            tenant_id=tenant_id,
            name=name,
            runner_group_id=runner_group_id,
            labels=labels,
            runner_setting=dict(runner_setting or {}),
            created_on=self.clock(),
        )
        self.scale_sets[created.id] = created
        self.on_change(created.id)
        return created

    def update_scale_set(
        self,
        tenant_id: int,
        scale_set_id: int,
        *,
        name: str | None = None,
        runner_group_id: int | None = None,
        labels: list[dict[str, str]] | None = None,
        runner_setting: dict[str, Any] | None = None,
    ) -> ScaleSet:
        current = self.scale_set(tenant_id, scale_set_id)
        group_id = current.runner_group_id if runner_group_id is None else runner_group_id
        new_name = name or current.name
        self.group(tenant_id, group_id)
        if any(s.id != current.id for s in self.find_scale_sets(tenant_id, group_id, new_name)):
            raise errors.scale_set_exists(new_name, group_id)
        current.name, current.runner_group_id = new_name, group_id
        if labels:
            current.labels = [{**label, "type": label.get("type") or "System"} for label in labels]
        if runner_setting is not None:
            current.runner_setting = dict(runner_setting)
        self.on_change(scale_set_id)
        return current

    def delete_scale_set(self, tenant_id: int, scale_set_id: int) -> None:
        """Remove the set with its agents and session; unfinished jobs are canceled. Unknown ids: no-op."""
        found = self.scale_sets.get(scale_set_id)
        if found is None or found.tenant_id != tenant_id:
            return
        del self.scale_sets[scale_set_id]
        for agent in [a for a in self.agents.values() if a.scale_set_id == scale_set_id]:
            del self.agents[agent.id]
        session_id = self._session_ids.pop(scale_set_id, None)
        if session_id is not None:
            del self.sessions[session_id]
        now = self.clock()
        for job in self._unfinished.pop(scale_set_id, {}).values():
            job.state, job.result, job.finish_time = JobState.CANCELED, "canceled", now
        self.on_change(scale_set_id)

    def statistics(self, scale_set_id: int) -> Statistics:
        jobs = self._unfinished.get(scale_set_id, {}).values()
        agents = [a for a in self.agents.values() if a.scale_set_id == scale_set_id]
        acquired = sum(1 for j in jobs if j.state in (JobState.ASSIGNED, JobState.RUNNING))
        return Statistics(
            available=sum(1 for j in jobs if j.state == JobState.AVAILABLE),
            acquired=acquired,
            assigned=acquired,
            running=sum(1 for j in jobs if j.state == JobState.RUNNING),
            registered=len(agents),
            busy=sum(1 for a in agents if a.busy),
            idle=sum(1 for a in agents if a.online and not a.busy),
        )

    # -- agents (runners) --------------------------------------------------------------------------------

    def add_agent(
        self, tenant_id: int, scale_set_id: int, *, name: str, work_folder: str, secret: str
    ) -> Agent:
        """Register a runner for a JIT config; its name must be new within the tenant (§6.5)."""
        self.scale_set(tenant_id, scale_set_id)
        if self.agents_named(tenant_id, name):
            raise errors.agent_exists(name)
        agent = Agent(self._next("agent"), tenant_id, name, scale_set_id, work_folder or "_work", secret)
        self.agents[agent.id] = agent
        self.on_change(scale_set_id)
        return agent

    def agents_named(self, tenant_id: int, name: str) -> list[Agent]:
        return [
            a for a in self.agents.values() if a.tenant_id == tenant_id and a.name.lower() == name.lower()
        ]

    def agent(self, tenant_id: int, agent_id: int) -> Agent:
        found = self.agents.get(agent_id)
        if found is None or found.tenant_id != tenant_id:
            raise errors.agent_not_found(agent_id)
        return found

    def remove_agent(self, tenant_id: int, agent_id: int) -> None:
        """204 semantics: unknown ids (0 included) are already removed; a busy runner is refused."""
        found = self.agents.get(agent_id)
        if found is None or found.tenant_id != tenant_id:
            return
        if found.busy:
            raise errors.job_still_running(agent_id)
        del self.agents[agent_id]
        self.on_change(found.scale_set_id)

    def connect_agent(self, agent_id: int, secret: str, version: str, minimum: str) -> tuple[Agent, bool]:
        """A runner started with its JIT config: online and idle if ``version`` ≥ ``minimum``.

        Returns the agent and whether its version is accepted; a rejected runner stays offline.
        """
        found = self.agents.get(agent_id)
        if found is None:
            raise errors.agent_not_found(agent_id)
        if found.secret != secret:
            raise errors.unauthorized(f"The credential of runner {agent_id} is not valid.")
        accepted = version_at_least(version, minimum)
        found.version = version
        found.online = accepted
        self.on_change(found.scale_set_id)
        return found, accepted

    def disconnect_agent(self, agent_id: int) -> Job | None:
        """The runner process went away. An idle one goes offline; a busy one's job fails (and the
        ephemeral agent is removed, as after any job). Returns the failed job, if any."""
        found = self.agents.get(agent_id)
        if found is None:
            return None
        if found.job is not None:
            return self.complete_job(found.job, "failed")
        found.online = False
        self.on_change(found.scale_set_id)
        return None

    # -- message sessions ----------------------------------------------------------------------------------

    def create_session(self, tenant_id: int, scale_set_id: int, owner: str) -> Session:
        """At most one per scale set (409); one with no poll for ``session_timeout`` is abandoned."""
        self.scale_set(tenant_id, scale_set_id)
        now = self.clock()
        existing = self.session_of(scale_set_id)
        if existing is not None:
            if existing.polling or now - existing.last_seen <= self.session_timeout:
                raise errors.session_conflict(self.scale_sets[scale_set_id].name)
            del self.sessions[existing.id]
        session = Session(self._uuid(), scale_set_id, owner, now)
        session.pending = [JobEvent("JobAvailable", replace(j)) for j in self._available(scale_set_id)]
        self.sessions[session.id] = session
        self._session_ids[scale_set_id] = session.id
        self.on_change(scale_set_id)
        return session

    def session(self, scale_set_id: int, session_id: str) -> Session:
        found = self.sessions.get(session_id)
        if found is None or found.scale_set_id != scale_set_id:
            raise errors.session_not_found(session_id)
        return found

    def session_of(self, scale_set_id: int) -> Session | None:
        session_id = self._session_ids.get(scale_set_id)
        return None if session_id is None else self.sessions.get(session_id)

    def delete_session(self, scale_set_id: int, session_id: str) -> None:
        del self.sessions[self.session(scale_set_id, session_id).id]
        del self._session_ids[scale_set_id]
        self.on_change(scale_set_id)

    def poll(self, session: Session, last_message_id: int, max_capacity: int | None) -> Message | None:
        """The oldest message after ``last_message_id`` not yet deleted, sealing pending job messages
        into a new one if there is none; None when there is nothing to say (the caller long-polls)."""
        session.last_seen = self.clock()
        if max_capacity is not None:
            session.max_capacity = max_capacity
        session.queue = [m for m in session.queue if m.id > last_message_id]
        if not session.queue and session.pending:
            sealed = Message(self._next("message"), session.pending, self.statistics(session.scale_set_id))
            session.pending = []
            session.queue.append(sealed)
        return session.queue[0] if session.queue else None

    def delete_message(self, session: Session, message_id: int) -> None:
        session.queue = [m for m in session.queue if m.id != message_id]
        self.on_change(session.scale_set_id)

    def acquire(self, session: Session, request_ids: Iterable[int]) -> list[int]:
        """Acquire the still-available jobs among ``request_ids`` for the session's scale set, up to
        the capacity the listener announced in its latest poll."""
        scale_set_id = session.scale_set_id
        room: int | None = None
        if session.max_capacity is not None:
            room = max(0, session.max_capacity - self.statistics(scale_set_id).assigned)
        acquired: list[int] = []
        now = self.clock()
        for request_id in dict.fromkeys(request_ids):
            job = self.jobs.get(request_id)
            if job is None or job.scale_set_id != scale_set_id or job.state != JobState.AVAILABLE:
                continue
            if room is not None and len(acquired) >= room:
                break
            job.state, job.scale_set_assign_time = JobState.ASSIGNED, now
            acquired.append(request_id)
            self._emit("JobAssigned", job)
        self.on_change(scale_set_id)
        return acquired

    # -- jobs ------------------------------------------------------------------------------------------

    def _available(self, scale_set_id: int) -> list[Job]:
        jobs = self._unfinished.get(scale_set_id, {}).values()
        return [j for j in jobs if j.state == JobState.AVAILABLE]

    def _finished(self, job: Job) -> None:
        """``job`` left the unfinished states: it no longer counts for its scale set."""
        self._unfinished.get(job.scale_set_id, {}).pop(job.runner_request_id, None)

    def _emit(self, kind: str, job: Job) -> None:
        session = self.session_of(job.scale_set_id)
        if session is not None:
            session.pending.append(JobEvent(kind, replace(job, labels=list(job.labels))))

    def queue_job(
        self,
        scale_set_id: int,
        *,
        owner: str,
        repository: str,
        workflow_ref: str,
        display_name: str,
        event_name: str,
        labels: list[str] | None = None,
    ) -> Job:
        scale_set = self.scale_sets.get(scale_set_id)
        if scale_set is None:
            raise LookupError(f"no runner scale set {scale_set_id}")
        job = Job(
            runner_request_id=self._next("job"),
            scale_set_id=scale_set_id,
            job_id=self._uuid(),
            owner=owner,
            repository=repository,
            workflow_ref=workflow_ref,
            display_name=display_name,
            event_name=event_name,
            workflow_run_id=self._next("run"),
            labels=list(labels) if labels is not None else [scale_set.name],
            queue_time=self.clock(),
        )
        self.jobs[job.runner_request_id] = job
        self._unfinished.setdefault(scale_set_id, {})[job.runner_request_id] = job
        self._emit("JobAvailable", job)
        self.on_change(scale_set_id)
        return job

    def take_job(self, agent_id: int) -> Job | None:
        """Give the oldest assigned job of the agent's scale set to the agent, if it is online and idle."""
        agent = self.agents.get(agent_id)
        if agent is None or not agent.online or agent.busy:
            return None
        unfinished = self._unfinished.get(agent.scale_set_id, {}).values()
        job = next((j for j in unfinished if j.state == JobState.ASSIGNED), None)
        if job is None:
            return None
        job.state, job.runner_assign_time = JobState.RUNNING, self.clock()
        job.runner_id, job.runner_name = agent.id, agent.name
        agent.job = job.runner_request_id
        self._emit("JobStarted", job)
        self.on_change(agent.scale_set_id)
        return job

    def complete_job(self, runner_request_id: int, result: str = "succeeded") -> Job | None:
        """Finish a running job: JobCompleted, its ephemeral agent removed, available jobs re-offered.

        An assigned job without a runner can be completed too (e.g. ``canceled``). Returns None when the
        job is unknown or already finished.
        """
        job = self.jobs.get(runner_request_id)
        if job is None or job.state not in (JobState.ASSIGNED, JobState.RUNNING):
            return None
        job.state, job.result, job.finish_time = JobState.COMPLETED, result, self.clock()
        self._finished(job)
        agent = self.agents.get(job.runner_id)
        if agent is not None and agent.job == runner_request_id:
            del self.agents[agent.id]
        self._emit("JobCompleted", job)
        for available in self._available(job.scale_set_id):
            self._emit("JobAvailable", available)
        self.on_change(job.scale_set_id)
        return job

    def cancel_job(self, runner_request_id: int) -> Job | None:
        """Cancel a job nobody runs yet: an available one just disappears, an assigned one completes
        with result ``canceled``. Running jobs are left alone (None)."""
        job = self.jobs.get(runner_request_id)
        if job is None:
            return None
        if job.state == JobState.ASSIGNED:
            return self.complete_job(runner_request_id, "canceled")
        if job.state != JobState.AVAILABLE:
            return None
        job.state, job.result, job.finish_time = JobState.CANCELED, "canceled", self.clock()
        self._finished(job)
        self.on_change(job.scale_set_id)
        return job
