"""``GitHubFake``: the composition root of the fake GitHub and Actions service, and its Python API.

::

    async with GitHubFake(settings=GitHubSettings(long_poll_seconds=0.5)) as fake:
        config_url = fake.config_url("my-org")          # http://127.0.0.1:PORT/my-org
        ...                                             # the controller creates a scale set
        fake.queue_jobs(scale_set_id, 2)                # offered to its session as JobAvailable
        registration = fake.register_runner(jit, "2.330.0")     # the simulated runner connects
        job = await fake.run_job(registration.runner_id, seconds=fake.settings.job_seconds)

The HTTP surface is described in ``sim.github.server``; the rules of the model in ``sim.github.state``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

from aiohttp import web

from sim.github import jitconfigs, scopes
from sim.github.changes import Changes
from sim.github.faults import Call, GitHubFault
from sim.github.jobs import JobSource, JobSpec
from sim.github.records import Agent, Clock, Job, RunnerGroup, ScaleSet, Statistics
from sim.github.server import Server
from sim.github.state import State
from sim.github.tokens import App, Tokens


@dataclass(frozen=True)
class GitHubSettings:
    long_poll_seconds: float = 20.0  # GetMessage answers 202 after this long without a message
    job_seconds: float = 1.0  # how long a simulated job runs (run_job's default)
    min_runner_version: str = "0.0.0"  # older runners are refused at registration (they exit 7)
    admin_token_seconds: float = 3600.0
    message_token_seconds: float = 3600.0
    installation_token_seconds: float = 3600.0
    registration_token_seconds: float = 3600.0
    session_timeout: float = 120.0  # a session nobody polled for this long can be replaced


@dataclass(frozen=True)
class Registration:
    """What a runner learns when it connects with its JIT config."""

    runner_id: int
    name: str
    scale_set_id: int
    version: str
    accepted: bool  # False: the version is below min_runner_version; the runner should exit 7

    def as_json(self) -> dict[str, Any]:
        return {
            "runnerId": self.runner_id,
            "name": self.name,
            "scaleSetId": self.scale_set_id,
            "version": self.version,
            "accepted": self.accepted,
        }


class GitHubFake:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        settings: GitHubSettings | None = None,
        clock: Clock | None = None,
        seed: int | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.clock: Clock = clock or time.time
        self.changes = Changes()
        self.closing = asyncio.Event()
        self._settings = settings or GitHubSettings()
        self.state = State(
            clock=self.clock,
            seed=seed,
            session_timeout=self._settings.session_timeout,
            on_change=self.changes.notify,
        )
        self.tokens = Tokens(clock=self.clock)
        self.jobs = JobSource(self.state, self.changes)
        self.faults: list[GitHubFault] = []
        self.calls: list[Call] = []
        self.server = Server(self)
        self.url = ""
        self._runner: web.AppRunner | None = None

    @property
    def settings(self) -> GitHubSettings:
        return self._settings

    @settings.setter
    def settings(self, value: GitHubSettings) -> None:
        self._settings = value
        self.state.session_timeout = value.session_timeout

    def configure(self, **changes: Any) -> GitHubSettings:
        """Change some settings while running, e.g. ``fake.configure(min_runner_version="2.330.0")``."""
        self.settings = replace(self._settings, **changes)
        return self._settings

    # -- lifecycle -------------------------------------------------------------------------------------

    async def start(self) -> GitHubFake:
        self.closing.clear()
        self._runner = web.AppRunner(
            self.server.app, handle_signals=False, access_log=None, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self.port
        self.url = f"http://{self.host}:{self.port}"
        return self

    async def stop(self) -> None:
        self.closing.set()  # long polls answer 202 at once
        for fault in self.faults:
            fault.release()  # held calls answer too
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> GitHubFake:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- URLs ------------------------------------------------------------------------------------------

    def config_url(self, scope: str) -> str:
        """A ``githubConfigUrl`` for ``org``, ``owner/repo`` or ``enterprises/name`` on this fake."""
        return f"{self.url}/{scope.strip('/')}"

    @property
    def api_url(self) -> str:
        """The GitHub API base a GHES client derives from ``config_url``."""
        return f"{self.url}/api/v3"

    def actions_base(self, tenant_id: int) -> str:
        return f"{self.url}/tenant/{tenant_id}/"

    # -- credentials and tokens ------------------------------------------------------------------------

    def register_app(
        self, app_id: str, *, public_key: str | None = None, installation_ids: list[int] | None = None
    ) -> App:
        """Accept App JWTs from this app only (plus other registered ones); see ``sim.github.tokens``."""
        return self.tokens.register_app(app_id, public_key=public_key, installation_ids=installation_ids)

    def allow_pat(self, token: str) -> None:
        """Accept this PAT; once one is allowed, other PATs get 401 Bad credentials."""
        self.tokens.allow_pat(token)

    def expire_admin_tokens(self) -> None:
        """Every admin token issued so far answers 401 from now on (clients must re-register)."""
        self.tokens.expire_admin_tokens()

    def expire_message_queue_tokens(self, scale_set_id: int | None = None) -> int:
        """Expire the message-queue tokens of one scale set's session (or all); returns how many."""
        sessions = [s.id for s in self.state.sessions.values() if scale_set_id in (None, s.scale_set_id)]
        return self.tokens.expire_message_tokens(sessions if scale_set_id is not None else None)

    def expire_installation_tokens(self) -> None:
        self.tokens.expire_installation_tokens()

    def expire_registration_tokens(self) -> None:
        self.tokens.expire_registration_tokens()

    # -- the model -------------------------------------------------------------------------------------

    def add_runner_group(self, scope: str, name: str) -> RunnerGroup:
        """A runner group named ``name`` in the tenant of ``scope`` (``org``, ``owner/repo``, …)."""
        return self.state.add_group(scopes.from_path(scope), name)

    def scale_set(self, name: str, scope: str | None = None) -> ScaleSet | None:
        """The scale set called ``name`` (in ``scope``, if given), or None."""
        for found in self.state.scale_sets.values():
            tenant = self.state.tenants[found.tenant_id]
            if found.name.lower() == name.lower() and (
                scope is None or tenant.scope.key == scopes.from_path(scope).key
            ):
                return found
        return None

    def runner(self, name: str) -> Agent | None:
        return next((a for a in self.state.agents.values() if a.name.lower() == name.lower()), None)

    def statistics(self, scale_set_id: int) -> Statistics:
        return self.state.statistics(scale_set_id)

    def delete_scale_set(self, scale_set_id: int) -> bool:
        """Delete the scale set as a user does in GitHub's settings (its runners, session and jobs go with
        it, as DeleteRunnerScaleSet does); True if there was one."""
        found = self.state.scale_sets.get(scale_set_id)
        if found is None:
            return False
        session = self.state.session_of(scale_set_id)
        if session is not None:
            self.tokens.forget_session(session.id)
        self.state.delete_scale_set(found.tenant_id, scale_set_id)
        return True

    def drop_session(self, scale_set_id: int) -> bool:
        """Forget the scale set's session as if it had timed out; True if there was one."""
        session = self.state.session_of(scale_set_id)
        if session is None:
            return False
        self.tokens.forget_session(session.id)
        self.state.delete_session(scale_set_id, session.id)
        return True

    # -- jobs and runners ------------------------------------------------------------------------------

    def queue_jobs(self, scale_set_id: int, count: int = 1, spec: JobSpec | None = None) -> list[Job]:
        return self.jobs.queue(scale_set_id, count, spec)

    def register_runner(self, jit_config: str, version: str) -> Registration:
        """A simulated runner starts with its JIT config and reports its version.

        The runner becomes online and idle if ``version`` ≥ ``min_runner_version``; otherwise it stays
        offline and ``accepted`` is False (the container should exit 7). Raises ``ValueError`` for a
        config this fake did not issue and ``errors.ServiceError`` (AgentNotFoundException) when the
        runner's registration was removed meanwhile.
        """
        identity = jitconfigs.decode(jit_config)
        agent, accepted = self.state.connect_agent(
            identity.agent_id, identity.secret, version, self.settings.min_runner_version
        )
        return Registration(agent.id, agent.name, agent.scale_set_id, version, accepted)

    async def next_job_for(
        self, runner_id: int, *, timeout: float | None = None, stopping: asyncio.Event | None = None
    ) -> Job | None:
        return await self.jobs.next_job_for(runner_id, timeout=timeout, stopping=stopping)

    def complete_job(self, runner_request_id: int, result: str = "succeeded") -> Job | None:
        return self.jobs.complete(runner_request_id, result)

    async def run_job(
        self,
        runner_id: int,
        *,
        seconds: float | None = None,
        result: str = "succeeded",
        stopping: asyncio.Event | None = None,
        timeout: float | None = None,
        on_start: Callable[[Job], None] | None = None,
    ) -> Job | None:
        """Wait for a job, run it ``seconds`` (default ``settings.job_seconds``), complete it."""
        duration = self.settings.job_seconds if seconds is None else seconds
        return await self.jobs.run_job(
            runner_id, seconds=duration, result=result, stopping=stopping, timeout=timeout, on_start=on_start
        )

    def disconnect_runner(self, runner_id: int) -> Job | None:
        """The runner process ended: idle → offline; busy → its job fails. Returns the failed job."""
        return self.state.disconnect_agent(runner_id)

    def cancel_job(self, runner_request_id: int) -> Job | None:
        return self.state.cancel_job(runner_request_id)

    # -- test hooks ------------------------------------------------------------------------------------

    def inject(self, fault: GitHubFault) -> GitHubFault:
        self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        for fault in self.faults:
            fault.release()
        self.faults.clear()

    def clear_calls(self) -> None:
        self.calls.clear()

    def calls_to(self, method: str, path_contains: str) -> list[Call]:
        """The logged calls with this method whose path contains ``path_contains``."""
        return [c for c in self.calls if c.method == method.upper() and path_contains in c.path]
