"""The Actions service (§6.4) of each tenant, under ``/tenant/{n}/_apis/``.

Admin endpoints need ``Authorization: Bearer <admin JWT>`` for that tenant (401 when missing, invalid or
expired, 403 for another tenant's) and ``?api-version=…`` (400 without). The message queue
(``…/runnerscalesets/{id}/sessions/{sessionId}/messages``, GET; DELETE ``…/messages/{messageId}``) and
``acquirejobs`` need ``Bearer <messageQueueAccessToken>`` of that scale set's session instead (401 when
it is unknown or expired: the listener then refreshes the session and retries once).

GetMessage long-polls up to ``settings.long_poll_seconds`` and answers 202 with no body when nothing
came; ``X-ScaleSetMaxCapacity`` caps how many jobs ``acquirejobs`` will assign to the set.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any

from aiohttp import web

from sim.github import bodies, errors, jitconfigs
from sim.github.changes import wait_any
from sim.github.records import DEFAULT_GROUP_ID, Message, Session
from sim.github.responses import credential, json_response, read_json

if TYPE_CHECKING:
    from sim.github.fake import GitHubFake

PREFIX = "/tenant/{tenant:\\d+}/_apis"
SCALE_SETS = PREFIX + "/runtime/runnerscalesets"
AGENTS = PREFIX + "/distributedtask/pools/{pool:\\d+}/agents"
MAX_CAPACITY = "X-ScaleSetMaxCapacity"


def _int(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f"{name} must be an integer, not {value!r}") from None


def _labels(value: Any) -> list[dict[str, str]] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise errors.bad_request("labels must be a list of {type, name} objects")
    return [{"type": str(v.get("type") or ""), "name": str(v.get("name") or "")} for v in value]


async def _body_object(request: web.Request) -> dict[str, Any]:
    body = await read_json(request)
    if body is None and not (await request.read()).strip():
        return {}
    if not isinstance(body, dict):
        raise errors.bad_request("The request body must be a JSON object.")
    return body


class ActionsApi:
    def __init__(self, fake: GitHubFake) -> None:
        self.fake = fake
        self.state = fake.state

    # -- authentication ----------------------------------------------------------------------------------

    def _admin(self, request: web.Request) -> int:
        """The tenant of an admin request, after its token and api-version are checked."""
        tenant_id = int(request.match_info["tenant"])
        token = credential(request, "Bearer")
        if not token:
            raise errors.unauthorized()
        grant = self.fake.tokens.check_admin_token(token)
        if grant.tenant_id != tenant_id:
            raise errors.forbidden("The admin token was issued for another tenant.")
        if not request.query.get("api-version"):
            raise errors.bad_request("The api-version query parameter is required.")
        self.state.tenant_by_id(tenant_id)
        return tenant_id

    def _queue_session(self, request: web.Request) -> Session:
        """The session a message-queue token belongs to; it must be this scale set's, in this tenant."""
        token = credential(request, "Bearer")
        if not token:
            raise errors.unauthorized()
        session = self.state.sessions.get(self.fake.tokens.check_message_token(token))
        scale_set_id = int(request.match_info["id"])
        scale_set = self.state.scale_sets.get(scale_set_id)
        if (
            session is None
            or session.scale_set_id != scale_set_id
            or scale_set is None
            or scale_set.tenant_id != int(request.match_info["tenant"])
            or request.match_info.get("session", session.id) != session.id
        ):
            raise errors.unauthorized("The message queue token does not belong to this session.")
        return session

    def _base(self, tenant_id: int) -> str:
        return self.fake.actions_base(tenant_id)

    # -- runner groups and scale sets --------------------------------------------------------------------

    async def runner_groups(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        groups = self.state.groups(tenant_id, request.query.get("groupName"))
        return json_response({"count": len(groups), "value": [bodies.group(self.state, g) for g in groups]})

    async def list_scale_sets(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        group_id = _int(request.query.get("runnerGroupId"), "runnerGroupId")
        found = self.state.find_scale_sets(tenant_id, group_id, request.query.get("name"))
        base = self._base(tenant_id)
        return json_response(
            {"count": len(found), "value": [bodies.scale_set(self.state, s, base) for s in found]}
        )

    async def create_scale_set(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        body = await _body_object(request)
        setting = body.get("RunnerSetting")
        created = self.state.create_scale_set(
            tenant_id,
            name=str(body.get("name") or ""),
            runner_group_id=int(body.get("runnerGroupId") or DEFAULT_GROUP_ID),
            labels=_labels(body.get("labels")),
            runner_setting=setting if isinstance(setting, dict) else None,
        )
        return json_response(bodies.scale_set(self.state, created, self._base(tenant_id)))

    async def get_scale_set(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        found = self.state.scale_set(tenant_id, int(request.match_info["id"]))
        return json_response(bodies.scale_set(self.state, found, self._base(tenant_id)))

    async def update_scale_set(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        body = await _body_object(request)
        setting = body.get("RunnerSetting")
        group_id = body.get("runnerGroupId")
        updated = self.state.update_scale_set(
            tenant_id,
            int(request.match_info["id"]),
            name=str(body["name"]) if body.get("name") else None,
            runner_group_id=int(group_id) if group_id else None,
            labels=_labels(body.get("labels")),
            runner_setting=setting if isinstance(setting, dict) else None,
        )
        return json_response(bodies.scale_set(self.state, updated, self._base(tenant_id)))

    async def delete_scale_set(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        scale_set_id = int(request.match_info["id"])
        for session in [s for s in self.state.sessions.values() if s.scale_set_id == scale_set_id]:
            self.fake.tokens.forget_session(session.id)
        self.state.delete_scale_set(tenant_id, scale_set_id)
        return web.Response(status=204)

    # -- runners -----------------------------------------------------------------------------------------

    async def generate_jit_config(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        body = await _body_object(request)
        name = str(body.get("name") or "")
        if not name:
            raise errors.bad_request("A JIT runner configuration needs the runner's name.")
        agent = self.state.add_agent(
            tenant_id,
            int(request.match_info["id"]),
            name=name,
            work_folder=str(body.get("workFolder") or ""),
            secret=secrets.token_urlsafe(32),
        )
        scope = self.state.tenants[tenant_id].scope
        encoded = jitconfigs.encode(
            agent, server_url=self._base(tenant_id), github_url=self.fake.config_url(scope.path)
        )
        return json_response({"runner": bodies.agent(agent), "encodedJITConfig": encoded})

    async def list_agents(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        name = request.query.get("agentName")
        if name is None:
            found = [a for a in self.state.agents.values() if a.tenant_id == tenant_id]
        else:
            found = self.state.agents_named(tenant_id, name)
        return json_response({"count": len(found), "value": [bodies.agent(a) for a in found]})

    async def get_agent(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        return json_response(bodies.agent(self.state.agent(tenant_id, int(request.match_info["agent"]))))

    async def remove_agent(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        self.state.remove_agent(tenant_id, int(request.match_info["agent"]))
        return web.Response(status=204)

    # -- sessions and the message queue ------------------------------------------------------------------

    def _session_response(self, tenant_id: int, session: Session) -> web.Response:
        token = self.fake.tokens.issue_message_token(session.id, self.fake.settings.message_token_seconds)
        base = self._base(tenant_id)
        queue_url = (
            f"{base}_apis/runtime/runnerscalesets/{session.scale_set_id}/sessions/{session.id}/messages"
        )
        return json_response(bodies.session(self.state, session, base, queue_url=queue_url, token=token))

    async def create_session(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        body = await _body_object(request)
        owner = str(body.get("ownerName") or "")
        session = self.state.create_session(tenant_id, int(request.match_info["id"]), owner)
        return self._session_response(tenant_id, session)

    async def refresh_session(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        scale_set_id = int(request.match_info["id"])
        self.state.scale_set(tenant_id, scale_set_id)
        session = self.state.session(scale_set_id, request.match_info["session"])
        session.last_seen = self.state.clock()
        return self._session_response(tenant_id, session)

    async def delete_session(self, request: web.Request) -> web.Response:
        tenant_id = self._admin(request)
        scale_set_id = int(request.match_info["id"])
        self.state.scale_set(tenant_id, scale_set_id)
        self.state.delete_session(scale_set_id, request.match_info["session"])
        self.fake.tokens.forget_session(request.match_info["session"])
        return web.Response(status=204)

    async def get_message(self, request: web.Request) -> web.Response:
        session = self._queue_session(request)
        last = _int(request.query.get("lastMessageId"), "lastMessageId") or 0
        capacity = _int(request.headers.get(MAX_CAPACITY), MAX_CAPACITY)
        if capacity is not None and capacity < 0:
            raise errors.bad_request(f"{MAX_CAPACITY} must not be negative.")
        found = await self._long_poll(session, last, capacity)
        if found is None:
            return web.Response(status=202)
        scale_set = self.state.scale_sets[session.scale_set_id]
        return json_response(bodies.message(found, self._base(scale_set.tenant_id)))

    async def _long_poll(self, session: Session, last: int, capacity: int | None) -> Message | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.fake.settings.long_poll_seconds
        session.polling += 1
        try:
            while True:
                changed = self.fake.changes.current(session.scale_set_id)
                if session.id not in self.state.sessions or self.fake.closing.is_set():
                    return None
                found = self.state.poll(session, last, capacity)
                if found is not None:
                    return found
                if not await wait_any([changed, self.fake.closing], deadline - loop.time()):
                    return None
        finally:
            session.polling -= 1
            session.last_seen = self.state.clock()

    async def delete_message(self, request: web.Request) -> web.Response:
        session = self._queue_session(request)
        self.state.delete_message(session, int(request.match_info["message"]))
        return web.Response(status=204)

    async def acquire_jobs(self, request: web.Request) -> web.Response:
        session = self._queue_session(request)
        if not request.query.get("api-version"):
            raise errors.bad_request("The api-version query parameter is required.")
        body = await read_json(request)
        if not isinstance(body, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in body
        ):
            raise errors.bad_request("The request body must be a JSON list of runner request ids.")
        acquired = self.state.acquire(session, body)
        return json_response({"count": len(acquired), "value": acquired})


def add_routes(app: web.Application, fake: GitHubFake) -> None:
    api = ActionsApi(fake)
    r = app.router
    r.add_get(PREFIX + "/runtime/runnergroups/", api.runner_groups)
    r.add_get(PREFIX + "/runtime/runnergroups", api.runner_groups)
    r.add_get(SCALE_SETS, api.list_scale_sets)
    r.add_post(SCALE_SETS, api.create_scale_set)
    one = SCALE_SETS + "/{id:\\d+}"
    r.add_get(one, api.get_scale_set)
    r.add_patch(one, api.update_scale_set)
    r.add_delete(one, api.delete_scale_set)
    r.add_post(one + "/generatejitconfig", api.generate_jit_config)
    r.add_post(one + "/sessions", api.create_session)
    r.add_patch(one + "/sessions/{session}", api.refresh_session)
    r.add_delete(one + "/sessions/{session}", api.delete_session)
    r.add_post(one + "/acquirejobs", api.acquire_jobs)
    r.add_get(one + "/sessions/{session}/messages", api.get_message)
    r.add_delete(one + "/sessions/{session}/messages/{message:\\d+}", api.delete_message)
    r.add_get(AGENTS, api.list_agents)
    r.add_get(AGENTS + "/{agent:\\d+}", api.get_agent)
    r.add_delete(AGENTS + "/{agent:\\d+}", api.remove_agent)
