"""``ActionsClient``: every endpoint of the Actions service that arcsm uses (spec §6.4), typed.

    async with ActionsClient(config_url="https://github.com/my-org", credentials=creds,
                             system_info=SystemInfo(subsystem="controller")) as client:
        group = await client.get_runner_group_by_name("Default")
        scale_set = await client.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=group.id))

One client holds one ``httpx.AsyncClient`` (5-minute timeout, redirects followed, the proxy from the
environment, an optional extra root CA; its own connection pool, or the ``transport`` it is given, such
as a pool shared by many clients, ``pooling.Pool``), one rate limiter and one admin connection
(``auth.AdminAuth``), so a caller caches a client per config URL and credentials, as §2.0 describes.
Every Actions-service request first makes sure the admin connection is fresh; message-queue requests
and ``acquire_jobs`` carry the session's message-queue token instead (see ``sessions`` for the
refresh-once-on-401 wrapper a listener uses). A 401 on an admin-token request means the token was
revoked before its ``exp``: the client registers again and sends the request once more.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Awaitable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from types import TracebackType

import httpx
from aiolimiter import AsyncLimiter

from actions import auth, errors, tls, urls, wire
from actions.clocks import SYSTEM_CLOCK, Clock
from actions.credentials import Credentials
from actions.messages import MessageSession, RunnerScaleSetMessage
from actions.models import AcquirableJob, JitConfig, RunnerGroup, RunnerReference, RunnerScaleSet
from actions.redaction import SecretStr
from actions.retrying import RetryPolicy, Sleep
from actions.sending import Authorization, Reply, Sender
from actions.useragent import SystemInfo, user_agent

SCALE_SETS = "_apis/runtime/runnerscalesets"
RUNNER_GROUPS = "_apis/runtime/runnergroups/"  # the trailing slash is part of the upstream path
AGENTS = "_apis/distributedtask/pools/0/agents"
MESSAGE_ACCEPT = f"application/json; api-version={urls.API_VERSION}"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RateLimit:
    """At most ``max_rate`` requests per ``time_period`` seconds, bursts up to ``max_rate``."""

    max_rate: float = 20.0
    time_period: float = 1.0


@dataclass(frozen=True)
class ClientSettings:
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    rate_limit: RateLimit = field(default_factory=RateLimit)
    timeout: float = 300.0
    refresh_margin: float = 60.0


class ActionsClient:
    def __init__(
        self,
        *,
        config_url: urls.ConfigUrl | str,
        credentials: Credentials,
        system_info: SystemInfo | None = None,
        settings: ClientSettings | None = None,
        clock: Clock = SYSTEM_CLOCK,
        sleep: Sleep = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
        root_ca: str = "",
    ) -> None:
        self.config_url = urls.parse_config_url(config_url) if isinstance(config_url, str) else config_url
        self.system_info = system_info or SystemInfo()
        settings = settings or ClientSettings()
        self._http = httpx.AsyncClient(
            transport=transport,
            timeout=settings.timeout,
            follow_redirects=True,
            verify=_tls_context(root_ca),  # shared by every client of the same root CA
        )
        self._sender = Sender(
            http=self._http,
            limiter=AsyncLimiter(settings.rate_limit.max_rate, settings.rate_limit.time_period),
            policy=settings.retry,
            sleep=sleep,
            user_agent=lambda: user_agent(self.system_info),
        )
        self._auth = auth.AdminAuth(
            config_url=self.config_url,
            credentials=credentials,
            sender=self._sender,
            clock=clock,
            margin=timedelta(seconds=settings.refresh_margin),
        )

    async def __aenter__(self) -> ActionsClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def set_scale_set_id(self, scale_set_id: int) -> None:
        """Name the scale set in the User-Agent once it is known (§2.0)."""
        self.system_info = replace(self.system_info, scale_set_id=scale_set_id)

    async def admin_connection(self) -> auth.AdminConnection:
        """The current admin connection, registering first if there is none or it is about to expire."""
        return await self._auth.connection()

    # Runner groups and scale sets.

    async def get_runner_group_by_name(self, name: str) -> RunnerGroup:
        reply = await self._call("GET", RUNNER_GROUPS, query={"groupName": name}, expect={200})
        item = _single(reply, what=f"runner groups named {name!r}")
        if item is None:
            raise errors.RunnerGroupNotFound(
                f"no runner group named {name!r}; create it in the GitHub settings or fix spec.runnerGroup"
            )
        return RunnerGroup.from_wire(item)

    async def get_runner_scale_set(self, runner_group_id: int, name: str) -> RunnerScaleSet | None:
        query = {"runnerGroupId": str(runner_group_id), "name": name}
        reply = await self._call("GET", SCALE_SETS, query=query, expect={200})
        item = _single(reply, what=f"runner scale sets named {name!r} in group {runner_group_id}")
        return None if item is None else RunnerScaleSet.from_wire(item)

    async def get_runner_scale_set_by_id(self, scale_set_id: int) -> RunnerScaleSet:
        reply = await self._call("GET", f"{SCALE_SETS}/{scale_set_id}", expect={200})
        return RunnerScaleSet.from_wire(reply.object())

    async def create_runner_scale_set(self, scale_set: RunnerScaleSet) -> RunnerScaleSet:
        reply = await self._call("POST", SCALE_SETS, body=scale_set.as_wire(), expect={200})
        return RunnerScaleSet.from_wire(reply.object())

    async def update_runner_scale_set(
        self, scale_set_id: int, *, name: str | None = None, runner_group_id: int | None = None
    ) -> RunnerScaleSet:
        body: wire.RunnerScaleSetWire = {}
        if name is not None:
            body["name"] = name
        if runner_group_id is not None:
            body["runnerGroupId"] = runner_group_id
        if not body:
            raise ValueError("update_runner_scale_set needs a name or a runner_group_id")
        reply = await self._call("PATCH", f"{SCALE_SETS}/{scale_set_id}", body=body, expect={200})
        return RunnerScaleSet.from_wire(reply.object())

    async def delete_runner_scale_set(self, scale_set_id: int) -> None:
        await self._call("DELETE", f"{SCALE_SETS}/{scale_set_id}", expect={204})

    # Runners.

    async def generate_jit_runner_config(
        self, scale_set_id: int, name: str, *, work_folder: str = ""
    ) -> JitConfig:
        """Register a runner ``name`` and return its JIT config; ``RunnerExistsError`` on a name clash."""
        body: wire.JitConfigRequest = {"name": name, "workFolder": work_folder}
        path = f"{SCALE_SETS}/{scale_set_id}/generatejitconfig"
        reply = await self._call("POST", path, body=body, expect={200})
        return JitConfig.from_wire(reply.object())

    async def get_runner(self, runner_id: int) -> RunnerReference:
        reply = await self._call("GET", f"{AGENTS}/{runner_id}", expect={200})
        return RunnerReference.from_wire(reply.object())

    async def get_runner_by_name(self, name: str) -> RunnerReference | None:
        reply = await self._call("GET", AGENTS, query={"agentName": name}, expect={200})
        item = _single(reply, what=f"runners named {name!r}")
        return None if item is None else RunnerReference.from_wire(item)

    async def remove_runner(self, runner_id: int) -> None:
        """Unregister a runner; ``JobStillRunningError`` while it runs a job."""
        await self._call("DELETE", f"{AGENTS}/{runner_id}", expect={204})

    # Message sessions and the message queue.

    async def create_message_session(self, scale_set_id: int, owner_name: str) -> MessageSession:
        body: wire.SessionRequest = {"ownerName": owner_name}
        reply = await self._call("POST", f"{SCALE_SETS}/{scale_set_id}/sessions", body=body, expect={200})
        return MessageSession.from_wire(reply.object())

    async def refresh_message_session(self, scale_set_id: int, session_id: str) -> MessageSession:
        reply = await self._call("PATCH", f"{SCALE_SETS}/{scale_set_id}/sessions/{session_id}", expect={200})
        return MessageSession.from_wire(reply.object())

    async def delete_message_session(self, scale_set_id: int, session_id: str) -> None:
        await self._call("DELETE", f"{SCALE_SETS}/{scale_set_id}/sessions/{session_id}", expect={204})

    async def get_message(
        self, queue_url: str, queue_token: SecretStr, *, last_message_id: int, max_capacity: int
    ) -> RunnerScaleSetMessage | None:
        """Long-poll the queue: a message, or None when the poll timed out (202)."""
        if max_capacity < 0:
            raise ValueError("max_capacity must not be negative")
        url = httpx.URL(queue_url)
        if last_message_id > 0:
            url = url.copy_set_param("lastMessageId", str(last_message_id))
        reply = await self._sender.send(
            "GET",
            str(url),
            auth=Authorization("Bearer", queue_token),
            headers={"Accept": MESSAGE_ACCEPT, "X-ScaleSetMaxCapacity": str(max_capacity)},
            expect={200, 202},
            message_queue=True,
        )
        return None if reply.status == 202 else RunnerScaleSetMessage.from_wire(reply.object())

    async def delete_message(self, queue_url: str, queue_token: SecretStr, message_id: int) -> None:
        url = httpx.URL(queue_url)
        url = url.copy_with(path=url.path.rstrip("/") + f"/{message_id}")
        await self._sender.send(
            "DELETE", str(url), auth=Authorization("Bearer", queue_token), expect={204}, message_queue=True
        )

    async def acquire_jobs(
        self, scale_set_id: int, queue_token: SecretStr, request_ids: Collection[int]
    ) -> tuple[int, ...]:
        """Ask for jobs by ``runnerRequestId``; the answer lists the ones acquired."""
        connection = await self._auth.connection()
        path = f"{SCALE_SETS}/{scale_set_id}/acquirejobs"
        reply = await self._sender.send(
            "POST",
            urls.service_url(connection.actions_url, path),
            auth=Authorization("Bearer", queue_token),
            body=list(request_ids),
            expect={200},
            message_queue=True,
        )
        values = wire.as_list(reply.object().get("value") or [], what="acquirejobs")
        acquired = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        if len(acquired) != len(values):
            raise errors.ProtocolError("acquirejobs: the answer must list integer ids")
        return tuple(acquired)

    async def get_acquirable_jobs(self, scale_set_id: int) -> tuple[AcquirableJob, ...]:
        """The jobs waiting for this scale set (not in §6.4; 204 means none)."""
        reply = await self._call("GET", f"{SCALE_SETS}/{scale_set_id}/acquirablejobs", expect={200, 204})
        if reply.status == 204:
            return ()
        items = wire.as_list(reply.object().get("value") or [], what="acquirablejobs")
        return tuple(AcquirableJob.from_wire(wire.as_object(item, what="acquirable job")) for item in items)

    async def _call(
        self,
        method: str,
        path: str,
        *,
        expect: Collection[int],
        query: Mapping[str, str] | None = None,
        body: object = None,
    ) -> Reply:
        def send(connection: auth.AdminConnection) -> Awaitable[Reply]:
            return self._sender.send(
                method,
                urls.service_url(connection.actions_url, path, query),
                auth=Authorization("Bearer", connection.token),
                body=body,
                expect=expect,
            )

        connection = await self._auth.connection()
        try:
            return await send(connection)
        except errors.AuthenticationFailed as exc:
            if exc.response is None or exc.response.status != 401:
                raise
            # The admin token was refused before its exp (revoked): register again, once.
            log.info("the admin token was refused; registering again")
            self._auth.invalidate(connection)
        return await send(await self._auth.connection())


def _single(reply: Reply, *, what: str) -> wire.Json | None:
    """The one item of a ``{"count", "value"}`` listing, None for none; two or more is an error."""
    data = reply.object()
    items = wire.as_list(data.get("value") or [], what=what)
    count = wire.integer(data, "count", what=what) if "count" in data else len(items)
    if count == 0:
        return None
    if count > 1:
        raise errors.ProtocolError(f"{count} {what} found, expected at most one")
    if not items:
        raise errors.ProtocolError(f"{what}: count is 1 but the value list is empty")
    return wire.as_object(items[0], what=what)


def _tls_context(root_ca: str) -> ssl.SSLContext:
    """The shared context of ``root_ca`` (``tls.context``): the default trust store without one."""
    try:
        return tls.context(root_ca)
    except ssl.SSLError as exc:
        raise errors.InvalidConfiguration(
            f"the server root CA is not a valid PEM certificate: {exc}"
        ) from exc
