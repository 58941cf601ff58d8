"""The fake GitHub over HTTP: the aiohttp application, its middleware (call log, faults, error bodies)
and the test hooks under ``/_sim/`` at the root of the port.

URL layout (one port; ``BASE`` is ``http://HOST:PORT``):

* ``BASE/api/v3/…``: the GitHub REST API a GHES-style ``githubConfigUrl`` (``BASE/org``,
  ``BASE/owner/repo``, ``BASE/enterprises/e``) leads a client to (``sim.github.restapi``);
* ``BASE/tenant/{n}/_apis/…``: the Actions service of tenant ``n``, the base URL runner-registration
  returns (``sim.github.actionsapi``);
* ``BASE/_sim/…``: the hooks, never logged as calls.

Errors on ``/api/v3`` answer GitHub's ``{"message", "documentation_url"}``; everything else answers the
Actions service's ``{"typeName", "message", …}`` (§6.3). Responses carry ``X-GitHub-Request-Id`` or
``ActivityId``. No log line carries a header or a body.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from sim.github import actionsapi, bodies, errors, restapi
from sim.github.faults import Call, GitHubFault
from sim.github.jobs import JobSpec
from sim.github.records import Job, JobState
from sim.github.responses import error_response, is_github_api, json_response, read_json

if TYPE_CHECKING:
    from sim.github.fake import GitHubFake

log = logging.getLogger("arcsm.sim.github")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def fault_response(fault: GitHubFault, path: str) -> web.Response:
    err: errors.ServiceError | errors.GitHubError
    if is_github_api(path):
        err = errors.GitHubError(fault.status, fault.message)
    else:
        err = errors.ServiceError(fault.status, fault.type_key or "InjectedFaultException", fault.message)
    resp = error_response(err)
    if fault.retry_after is not None:
        resp.headers["Retry-After"] = str(fault.retry_after)
    return resp


class Server:
    def __init__(self, fake: GitHubFake) -> None:
        self.fake = fake
        self.app = web.Application(middlewares=[self._middleware])
        restapi.add_routes(self.app, fake)
        actionsapi.add_routes(self.app, fake)
        self.app.router.add_route("*", "/_sim/{hook:.*}", self._hook)

    # -- middleware ------------------------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith("/_sim/"):
            return await self._hooked(request, handler)
        call = Call(request.method, request.path, request.query_string, await read_json(request))
        self.fake.calls.append(call)
        resp: web.StreamResponse | None = None
        try:
            resp = await self._faulted(request)
            if resp is None:
                resp = await handler(request)
        except (errors.ServiceError, errors.GitHubError) as err:
            resp = error_response(err)
        except web.HTTPException as exc:
            if exc.status not in (404, 405):
                call.status = exc.status
                raise
            resp = error_response(_routing_error(exc.status, request))
        except Exception as exc:  # a bug in the fake must still answer, and say so
            log.exception("fake GitHub: internal error on %s %s", request.method, request.path)
            resp = error_response(errors.ServiceError(500, "InternalServerError", type(exc).__name__))
        header = "X-GitHub-Request-Id" if is_github_api(request.path) else "ActivityId"
        resp.headers[header] = str(uuid.uuid4())
        call.status = resp.status
        return resp

    async def _faulted(self, request: web.Request) -> web.Response | None:
        for fault in list(self.fake.faults):
            if fault.take(request.method, request.path):
                if fault.latency:
                    await asyncio.sleep(fault.latency)
                await fault.held()
                if fault.status:
                    return fault_response(fault, request.path)
        return None

    async def _hooked(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except (ValueError, TypeError, LookupError) as exc:
            return json_response({"message": str(exc)}, 400)
        except (errors.ServiceError, errors.GitHubError) as err:
            return error_response(err)

    # -- /_sim/ hooks ----------------------------------------------------------------------------------

    async def _hook(self, request: web.Request) -> web.Response:
        hook, method = request.match_info["hook"].strip("/"), request.method
        fake = self.fake
        data = await read_json(request)
        if hook == "calls" and method == "GET":
            return json_response([c.as_json() for c in fake.calls])
        if hook == "calls" and method == "DELETE":
            fake.calls.clear()
            return json_response({"calls": 0})
        if hook == "faults":
            return self._faults_hook(method, data)
        if hook == "jobs" and method == "POST":
            return self._queue_jobs(_object(data))
        if hook == "jobs" and method == "GET":
            return json_response([bodies.job(j) for j in _jobs_in(fake, request.query.getall("state", []))])
        if hook.startswith("jobs/") and hook.endswith("/complete") and method == "POST":
            request_id = int(hook.split("/")[1])
            result = str(_object(data, allow_none=True).get("result") or "succeeded")
            done = fake.complete_job(request_id, result)
            if done is None:
                raise LookupError(f"job {request_id} is not running")
            return json_response(bodies.job(done))
        if hook == "state" and method == "GET":
            return json_response(bodies.snapshot(fake.state))
        if hook == "expire-tokens" and method == "POST":
            return self._expire(_object(data))
        if hook == "runners" and method == "POST":
            body = _object(data)
            registered = fake.register_runner(str(body["encodedJITConfig"]), str(body.get("version", "")))
            return json_response(registered.as_json(), 201)
        if hook == "runner-groups" and method == "POST":
            body = _object(data)
            group = fake.add_runner_group(str(body["scope"]), str(body["name"]))
            return json_response(bodies.group(fake.state, group), 201)
        if hook == "apps" and method == "POST":
            body = _object(data)
            ids = body.get("installationIds")
            fake.register_app(
                str(body["appId"]),
                public_key=body.get("publicKey"),
                installation_ids=[int(i) for i in ids] if ids is not None else None,
            )
            return json_response({"appId": str(body["appId"])}, 201)
        if hook == "pats" and method == "POST":
            fake.allow_pat(str(_object(data)["token"]))
            return json_response({}, 201)
        return json_response({"message": f"no hook {method} /_sim/{hook}"}, 404)

    def _faults_hook(self, method: str, data: Any) -> web.Response:
        if method == "POST":
            items = data if isinstance(data, list) else [_object(data)]
            for item in items:
                self.fake.inject(GitHubFault.from_json(_object(item)))
            return json_response({"faults": len(self.fake.faults)})
        if method == "DELETE":
            self.fake.clear_faults()
            return json_response({"faults": 0})
        return json_response([f.as_json() for f in self.fake.faults])

    def _queue_jobs(self, body: dict[str, Any]) -> web.Response:
        labels = body.get("labels")
        spec = JobSpec(
            owner=str(body.get("ownerName") or ""),
            repository=str(body.get("repositoryName") or ""),
            workflow=str(body.get("workflow") or JobSpec.workflow),
            ref=str(body.get("ref") or JobSpec.ref),
            display_name=str(body.get("jobDisplayName") or JobSpec.display_name),
            event_name=str(body.get("eventName") or JobSpec.event_name),
            labels=tuple(str(label) for label in labels) if isinstance(labels, list) else None,
        )
        count = int(body.get("count", 1))
        if count < 0:
            raise ValueError("count must not be negative")
        queued = self.fake.queue_jobs(int(body["scaleSetId"]), count, spec)
        return json_response({"jobs": [bodies.job(j) for j in queued]}, 201)

    def _expire(self, body: dict[str, Any]) -> web.Response:
        kind = str(body.get("kind") or "")
        fake = self.fake
        if kind == "admin":
            fake.expire_admin_tokens()
        elif kind == "message-queue":
            scale_set_id = body.get("scaleSetId")
            fake.expire_message_queue_tokens(int(scale_set_id) if scale_set_id is not None else None)
        elif kind == "installation":
            fake.expire_installation_tokens()
        elif kind == "registration":
            fake.expire_registration_tokens()
        else:
            raise ValueError("kind must be admin, message-queue, installation or registration")
        return json_response({"expired": kind})


def _jobs_in(fake: GitHubFake, states: list[str]) -> list[Job]:
    """The jobs in any of ``states`` (repeated or comma-separated ``?state=``), all of them when none is
    asked; an unknown state is a ``ValueError`` (400)."""
    wanted = {JobState(s) for value in states for s in value.split(",") if s}
    return [j for j in fake.state.jobs.values() if not wanted or j.state in wanted]


def _routing_error(status: int, request: web.Request) -> errors.ServiceError | errors.GitHubError:
    """No route (404) or no such method (405), in the shape of the API the path belongs to."""
    if is_github_api(request.path):
        return errors.github_not_found() if status == 404 else errors.GitHubError(405, "Method Not Allowed")
    return errors.not_found() if status == 404 else errors.method_not_allowed(request.method)


def _object(data: Any, *, allow_none: bool = False) -> dict[str, Any]:
    if data is None and allow_none:
        return {}
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    return data
