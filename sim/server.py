"""The emulated API server over HTTP: aiohttp handlers that parse Kubernetes requests, call the verbs of
``sim.apiserver`` and answer JSON objects or ``Status`` errors the way kube-apiserver does.

Every request is first authenticated (``sim.authenticating``), then its ``Impersonate-*`` headers, if any,
are authorized for the requester and make it act as the user they name (``sim.impersonating``), and
then, when it bears a token the emulator issued or impersonates, it is authorized by RBAC
(``sim.authorizing``): 401 and 403 come before faults and handlers, as in kube-apiserver's filter chain.
Requests with no token or another one, and no impersonation, are served unchecked.

Besides the Kubernetes API it serves a few test hooks under ``/_sim/`` (faults, dropping watches,
compaction, the request log) so a test can reach them when the emulator runs in another process.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import yaml
from aiohttp import web

from sim import (
    applying,
    authenticating,
    authorizing,
    decoding,
    deleteoptions,
    discovery,
    errors,
    impersonating,
    listing,
    managedfields,
    podlogs,
    protobuf,
    routing,
    scales,
    selfreviews,
    tables,
    tokenrequests,
    tokens,
    watching,
    wirejson,
)
from sim.apiserver import APPLY, MERGE, ApiServer, Result
from sim.faults import Fault, LoggedRequest
from sim.kinds import Kind

log = logging.getLogger("arcsm.sim")

_YAML_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, when PyYAML has it


class _YamlLoader(_YAML_BASE):  # type: ignore[misc]
    """YAML as kube-apiserver reads it (converted to JSON): timestamps stay strings."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _YAML_BASE.yaml_implicit_resolvers.items()
}


def _as_json(value: Any) -> Any:
    """A YAML value in JSON's terms: map keys are strings (``true``, ``1``), as YAML-to-JSON makes them."""
    if isinstance(value, dict):
        return {_key_text(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    if isinstance(value, set | frozenset):  # !!set: a map of nulls
        return {_key_text(k): None for k in value}
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Who sent the request, once authenticated (None: the emulator serves it unchecked).
USER: web.RequestKey[authenticating.User | None] = web.RequestKey("user")


def parse_bool(value: str | None) -> bool:
    """Kubernetes query booleans (S05): absent, "false" in any case and "0" are false; anything else true."""
    if value is None:
        return False
    return value.lower() not in ("false", "0")


def _json_response(
    body: Any, status: int = 200, warnings: list[str] | None = None, headers: dict[str, str] | None = None
) -> web.Response:
    resp = web.Response(
        status=status,
        body=wirejson.dumps(body),
        content_type="application/json",
        headers=headers,
    )
    for w in warnings or []:
        resp.headers.add("Warning", '299 - "' + w.replace('"', '\\"') + '"')
    return resp


def _error_response(err: errors.ApiError) -> web.Response:
    return _json_response(err.status(), err.code, headers=err.headers or None)


def _negotiated(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
    """The answer in protobuf when the client lists it first in ``Accept`` and its kind has a message."""
    accept = request.headers.get("Accept", "").split(",")[0].split(";")[0].strip().lower()
    if accept != protobuf.MEDIA_TYPE or not isinstance(resp, web.Response) or resp.body is None:
        return resp
    if resp.content_type != "application/json":
        return resp
    obj = json.loads(resp.body)  # type: ignore[arg-type]
    if not protobuf.encodable(obj):
        return resp
    resp.body = protobuf.encode(obj)
    resp.content_type = protobuf.MEDIA_TYPE
    return resp


def _media_type(request: web.Request) -> str:
    return (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()


async def _body(request: web.Request, *, allow_empty: bool = False) -> Any:
    raw = await request.read()
    if not raw.strip():
        if allow_empty:
            return None
        raise errors.bad_request("the body of the request was empty")
    try:
        return json.loads(raw, object_pairs_hook=decoding.object_pairs)  # duplicate keys are remembered
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"the body of the request could not be decoded as JSON: {exc}") from exc


async def _patch_body(request: web.Request) -> Any:
    """A patch: JSON, or YAML (of which JSON is a part) for server-side apply."""
    if _media_type(request) != APPLY:
        return await _body(request)
    raw = await request.read()
    try:
        return json.loads(raw)  # most clients send JSON; it is much faster to read as such
    except (ValueError, UnicodeDecodeError):
        pass
    try:
        return _as_json(yaml.load(raw, Loader=_YamlLoader))  # a safe loader, without timestamps
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"error decoding YAML: {str(exc).splitlines()[0]}") from None


def _field_manager(request: web.Request, options: str = "") -> str:
    """``fieldManager``, else the user agent's product, as kube-apiserver names a write's manager (an
    apply must name its manager: it is left empty for ``sim.applying`` to refuse). ``options`` names the
    create or update options a given ``fieldManager`` is validated as (patches validate their own)."""
    given = request.query.get("fieldManager")
    if given and options:
        applying.check_field_manager(options, given)
    if given or _media_type(request) == APPLY:
        return given or ""
    return managedfields.manager_from_user_agent(request.headers.get("User-Agent", ""))


def _verb(request: web.Request, target: routing.Target | routing.Discovery) -> str:
    method = request.method
    if isinstance(target, routing.Discovery):
        return "get"
    if method == "GET":
        if target.name:
            return "get"
        return "watch" if parse_bool(request.query.get("watch")) else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if target.name else "deletecollection"
    return method.lower()


class Server:
    def __init__(self, api: ApiServer, *, bookmark_interval: float = 60.0) -> None:
        self.api = api
        self.bookmark_interval = bookmark_interval
        self.faults: list[Fault] = []
        self.requests: list[LoggedRequest] = []
        # The node's container logs (the world sets them when it has a kubelet): pods/log.
        self.pod_logs: podlogs.PodLogs | None = None
        self._watch_tasks: set[asyncio.Task[Any]] = set()
        self._watch_transports: set[asyncio.BaseTransport] = set()
        self.app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        self.app.router.add_get("/version", self._version)
        self.app.router.add_get("/version/", self._version)  # kubernetes_asyncio's VersionApi asks this
        for check in ("/healthz", "/livez", "/readyz"):
            self.app.router.add_get(check, self._healthy)
        self.app.router.add_get(discovery.OPENAPI_PREFIX, self._openapi_index)
        self.app.router.add_get(discovery.OPENAPI_PREFIX + "/{tail:.+}", self._openapi_group_version)
        for path in selfreviews.PATHS:
            self.app.router.add_post(path, self._self_review)
        self.app.router.add_route("*", "/_sim/{hook}", self._hook)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)

    # -- middleware: faults, the request log, error rendering -----------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        verb = ""
        status = 500
        answered_warnings: tuple[str, ...] = ()
        content_type = _media_type(request)
        # The request log names the user: an emulator token's account once authenticated, any other
        # bearer token as it is (tests use account names as tokens); never an emulator token itself.
        token = authenticating.bearer(request.headers.get("Authorization", ""))
        user_name = "" if tokens.issued_here(token) else token
        try:
            if not request.path.startswith("/_sim/"):
                try:
                    verb = _verb(request, routing.parse(self.api.registry, request.path))
                except errors.ApiError:
                    verb = "create" if request.path in selfreviews.PATHS else request.method.lower()
                user = authenticating.authenticate(
                    self.api.store, request.headers.get("Authorization", ""), now=self.api.clock()
                )
                # Impersonation comes after authentication and before authorization, as in
                # kube-apiserver's filter chain; the unchecked requester may impersonate anyone.
                requester = user if user is not None else authenticating.unchecked_user(token)
                user = impersonating.impersonated(self.api.store, requester, request.headers) or user
                request[USER] = user
                if user is not None:
                    user_name = user.name
                    authorizing.check(self.api.store, user, request.method, request.path, request.query)
                for fault in self.faults:
                    if fault.take(verb, request.path):
                        if fault.latency:
                            await asyncio.sleep(fault.latency)
                        err = fault.error()
                        if err is not None:
                            raise err
            resp = _negotiated(request, await handler(request))
            status = resp.status
            answered_warnings = tuple(resp.headers.getall("Warning", ()))
            return resp
        except errors.ApiError as err:
            status = err.code
            if (
                err.reason == "NotFound"
                and err.details == {}
                and not routing.go_restful_path(self.api.registry, request.path)
            ):
                # Paths outside the built-in API web services (custom resource groups, unknown groups
                # and versions) end at the server's mux: kube-apiserver 1.34 answers plain text there,
                # not a Status (S01).
                return web.Response(status=404, text="404 page not found\n", charset="utf-8")
            return _negotiated(request, _error_response(err))
        except impersonating.NoUser as exc:
            # responsewriters.InternalError: plain text, not a Status.
            status = 500
            text = f"Internal Server Error: {json.dumps(request.raw_path)}: {exc}"
            text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            return web.Response(
                status=500,
                text=text + "\n",
                content_type="text/plain",
                headers={"X-Content-Type-Options": "nosniff"},
            )
        except web.HTTPException:
            raise
        except Exception as exc:  # a bug in the emulator must still answer a Status, and say so
            log.exception("emulator error on %s %s", request.method, request.path)
            status = 500
            return _error_response(errors.internal(f"{type(exc).__name__}: {exc}"))
        finally:
            if not request.path.startswith("/_sim/"):
                self.requests.append(
                    LoggedRequest(
                        request.method,
                        request.path,
                        request.query_string,
                        verb,
                        content_type,
                        status,
                        user=user_name,
                        warnings=answered_warnings,
                    )
                )

    # -- discovery -----------------------------------------------------------------------------------

    async def _version(self, request: web.Request) -> web.Response:
        return _json_response(discovery.KUBE_VERSION)

    async def _healthy(self, request: web.Request) -> web.Response:
        return web.Response(text="ok", content_type="text/plain")

    async def _openapi_index(self, request: web.Request) -> web.Response:
        return _json_response(discovery.openapi_index(self.api.registry))

    async def _openapi_group_version(self, request: web.Request) -> web.Response:
        gv = discovery.parse_openapi_path(request.path)
        kinds = discovery.openapi_kinds(self.api.registry, *gv) if gv else None
        if kinds is None:
            raise errors.no_such_resource()
        return _json_response(await asyncio.to_thread(discovery.openapi_document, kinds))

    def _discovery(self, request: web.Request, target: routing.Discovery) -> web.Response:
        registry = self.api.registry
        if request.method != "GET":
            raise errors.method_not_allowed()
        if target.group is None:
            if request.path.rstrip("/") == "/api":
                return _json_response(discovery.api_versions(request.host))
            return _json_response(discovery.api_group_list(registry))
        if not target.version:
            group = discovery.api_group(registry, target.group)
            if group is None:
                raise errors.no_such_resource()
            return _json_response(group)
        return _json_response(discovery.api_resource_list(registry, target.group, target.version))

    async def _self_review(self, request: web.Request) -> web.Response:
        """``kubectl auth can-i`` and ``whoami``: a review answered for whoever sends it."""
        token = authenticating.bearer(request.headers.get("Authorization", ""))
        body = await self._object_body(request)
        answered = selfreviews.answer(request.path, self.api.store, request.get(USER), token, body)
        return _json_response(answered, 201)

    # -- resources -----------------------------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        target = routing.parse(self.api.registry, request.path)
        if isinstance(target, routing.Discovery):
            return self._discovery(request, target)
        method = request.method
        kind = target.kind
        q = request.query
        namespace = target.namespace
        field_validation = q.get("fieldValidation", "Warn")
        dry_run = q.get("dryRun") == "All"
        if target.kind.plural == "namespaces" and target.kind.group == "":
            namespace = ""
        ns = namespace or ""
        if not target.name:
            if method == "GET":
                if parse_bool(q.get("watch")):
                    return await self._watch(request, target)
                opts = listing.ListOptions(
                    label_selector=q.get("labelSelector", ""),
                    field_selector=q.get("fieldSelector", ""),
                    limit=_int(q.get("limit"), "limit"),
                    continue_token=q.get("continue", ""),
                    resource_version=q.get("resourceVersion", ""),
                    resource_version_match=q.get("resourceVersionMatch", ""),
                    send_initial_events=parse_bool(q["sendInitialEvents"])
                    if "sendInitialEvents" in q
                    else None,
                )
                return self._read(request, kind, listing.list_objects(self.api, kind, namespace, opts))
            if method == "POST":
                if kind.namespaced and namespace is None:
                    raise errors.method_not_allowed()
                body = await self._object_body(request)
                return self._result(
                    self.api.create(
                        kind,
                        ns,
                        body,
                        field_validation=field_validation,
                        dry_run=dry_run,
                        manager=_field_manager(request, "CreateOptions"),
                    )
                )
            if method == "DELETE":
                return await self._delete_collection(request, target)
            if kind.is_custom and method in ("PUT", "PATCH"):
                # The CRD handler takes these for update/patch, whose namer needs a name (S01).
                raise errors.bad_request("name must be provided")
            raise errors.method_not_allowed()
        if target.subresource:
            return await self._subresource(request, target, ns, field_validation, dry_run)
        if method == "GET":
            return self._read(request, kind, self.api.get(kind, ns, target.name))
        if method == "PUT":
            body = await self._object_body(request)
            return self._result(
                self.api.update(
                    kind,
                    ns,
                    target.name,
                    body,
                    field_validation=field_validation,
                    dry_run=dry_run,
                    manager=_field_manager(request, "UpdateOptions"),
                )
            )
        if method == "PATCH":
            body = await _patch_body(request)
            return self._result(
                self.api.patch(
                    kind,
                    ns,
                    target.name,
                    body,
                    _media_type(request),
                    field_validation=field_validation,
                    dry_run=dry_run,
                    manager=_field_manager(request),
                    force=parse_bool(request.query.get("force")) if "force" in request.query else False,
                )
            )
        if method == "DELETE":
            return self._result(self.api.delete(kind, ns, target.name, await self._delete_options(request)))
        raise errors.method_not_allowed()

    async def _subresource(
        self, request: web.Request, target: routing.Target, ns: str, field_validation: str, dry_run: bool
    ) -> web.StreamResponse:
        kind, method, sub = target.kind, request.method, target.subresource
        if sub == "status" and kind.status_subresource:
            if method == "GET":
                return _json_response(self.api.get(kind, ns, target.name))
            if method == "PUT":
                self._require_json(request)
                return self._result(
                    self.api.update(
                        kind,
                        ns,
                        target.name,
                        await _body(request),
                        subresource="status",
                        field_validation=field_validation,
                        dry_run=dry_run,
                        manager=_field_manager(request, "UpdateOptions"),
                    )
                )
            if method == "PATCH":
                return self._result(
                    self.api.patch(
                        kind,
                        ns,
                        target.name,
                        await _patch_body(request),
                        _media_type(request),
                        subresource="status",
                        field_validation=field_validation,
                        dry_run=dry_run,
                        manager=_field_manager(request),
                        force=parse_bool(request.query.get("force")) if "force" in request.query else False,
                    )
                )
            if kind.is_custom:
                # The CRD handler's NewMethodNotSupported (S01); built-ins answer go-restful's 405.
                verb = {"POST": "create", "DELETE": "delete"}.get(method, method.lower())
                qualified = errors.qualified(kind.plural, kind.group)
                raise errors.ApiError(
                    405,
                    "MethodNotAllowed",
                    f'{verb} is not supported on resources of kind "{qualified}"',
                    {"group": kind.group, "kind": kind.plural},
                )
            raise errors.method_not_allowed()
        if sub == "scale" and kind.scale:
            if method == "GET":
                return _json_response(scales.get(self.api, kind, ns, target.name))
            if method == "PUT":
                self._require_json(request)
                body = await _body(request)
                return self._result(scales.update(self.api, kind, ns, target.name, body, dry_run=dry_run))
            if method == "PATCH":
                body = await _body(request)
                return self._result(
                    scales.patch(self.api, kind, ns, target.name, body, _media_type(request), dry_run=dry_run)
                )
            raise errors.method_not_allowed()
        if sub == "binding" and kind.group == "" and kind.plural == "pods":
            if method != "POST":
                raise errors.method_not_allowed()
            return self._result(self.api.bind(ns, target.name, await _body(request)))
        if sub == "log" and kind.group == "" and kind.plural == "pods":
            if method != "GET":
                raise errors.method_not_allowed()
            if self.pod_logs is None:
                self.api.get(kind, ns, target.name)  # 404 for a missing pod
                return web.Response(body=b"", content_type="text/plain")
            return await self.pod_logs.serve(request, ns, target.name)
        if sub == "token" and kind.group == "" and kind.plural == "serviceaccounts":
            if method != "POST":
                raise errors.method_not_allowed()
            return self._result(
                tokenrequests.create_token(self.api, ns, target.name, await self._token_body(request))
            )
        if kind.is_custom:
            raise errors.not_found(kind.plural, kind.group, target.name)
        raise errors.no_such_resource()

    async def _token_body(self, request: web.Request) -> Any:
        """A TokenRequest in JSON, or in protobuf as kubectl's typed client sends it."""
        return await self._object_body(request)

    async def _object_body(self, request: web.Request) -> Any:
        """A request body in JSON, or in protobuf for the kinds ``sim.protoschemas`` declares."""
        if _media_type(request) == protobuf.MEDIA_TYPE:
            try:
                return protobuf.decode(await request.read())
            except (ValueError, UnicodeDecodeError):
                raise errors.unsupported_media_type(protobuf.MEDIA_TYPE, ["application/json"]) from None
        self._require_json(request)
        return await _body(request)

    def _require_json(self, request: web.Request) -> None:
        media = _media_type(request)
        if media and media not in ("application/json", "*/*") and not media.endswith("+json"):
            raise errors.unsupported_media_type(
                media, ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
            )

    def _read(self, request: web.Request, kind: Kind, body: Any) -> web.Response:
        """A read answered as the object, or as a Table when the client asks for one first."""
        version = tables.negotiate(request.headers.get("Accept", ""))
        if version is None:
            return _json_response(body)
        include = request.query.get("includeObject", "")
        now = self.api.clock()
        return _json_response(tables.table(kind, body, version=version, include_object=include, now=now))

    def _result(self, result: Result) -> web.Response:
        return _json_response(result.body, result.code, result.warnings)

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        if _media_type(request) == protobuf.MEDIA_TYPE and (await request.read()).strip():
            # client-go (Helm, kubectl) sends DeleteOptions in protobuf.
            body: Any = await self._object_body(request)
        else:
            body = await _body(request, allow_empty=True)
        if isinstance(body, dict):
            # A body is the options: the query is ignored then.
            deleteoptions.validate(body)
            return body
        q = request.query
        options: dict[str, Any] = {}
        if "gracePeriodSeconds" in q:
            options["gracePeriodSeconds"] = _int(q["gracePeriodSeconds"], "gracePeriodSeconds")
        if "propagationPolicy" in q:
            options["propagationPolicy"] = q["propagationPolicy"]
        if "orphanDependents" in q:
            options["orphanDependents"] = parse_bool(q["orphanDependents"])
        if "dryRun" in q:
            options["dryRun"] = q.getall("dryRun")
        deleteoptions.validate(options)
        return options

    async def _delete_collection(self, request: web.Request, target: routing.Target) -> web.Response:
        kind = target.kind
        options = await self._delete_options(request)
        q = request.query
        opts = listing.ListOptions(
            label_selector=q.get("labelSelector", ""), field_selector=q.get("fieldSelector", "")
        )
        listed = listing.list_objects(self.api, kind, target.namespace, opts)
        items = []
        for item in listed["items"]:
            meta = item["metadata"]
            try:
                items.append(self.api.delete(kind, meta.get("namespace", ""), meta["name"], options).body)
            except errors.ApiError as err:
                if err.code != 404:
                    raise
        listed["items"] = [i for i in items if i.get("kind") != "Status"]
        return _json_response(listed)

    async def _watch(self, request: web.Request, target: routing.Target) -> web.StreamResponse:
        q = request.query
        timeout = q.get("timeoutSeconds")
        opts = watching.WatchOptions(
            label_selector=q.get("labelSelector", ""),
            field_selector=q.get("fieldSelector", ""),
            resource_version=q.get("resourceVersion", ""),
            resource_version_match=q.get("resourceVersionMatch", ""),
            allow_bookmarks=parse_bool(q.get("allowWatchBookmarks")),
            send_initial_events=parse_bool(q["sendInitialEvents"]) if "sendInitialEvents" in q else None,
            timeout_seconds=float(_int(timeout, "timeoutSeconds")) if timeout else None,
        )
        # Bad options are plain HTTP errors; once the headers are out, problems are ERROR events.
        watching.check(target.kind, opts)
        as_table = tables.negotiate(request.headers.get("Accept", ""))
        include = q.get("includeObject", "")
        lines = watching.stream(
            self.api, target.kind, target.namespace, opts, bookmark_interval=self.bookmark_interval
        )
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        transport = request.transport
        if transport is not None:
            self._watch_transports.add(transport)
        try:
            async for chunk in lines:
                if as_table is not None:
                    chunk = tables.watch_line(
                        target.kind, chunk, version=as_table, include_object=include, now=self.api.clock()
                    )
                await resp.write(chunk)
            await resp.write_eof()
        except ConnectionResetError:
            pass  # the client went away, or the test dropped the connection
        finally:
            await lines.aclose()
            if transport is not None:
                self._watch_transports.discard(transport)
        return resp

    def drop_watches(self, *, abrupt: bool = False) -> int:
        """End every open watch: cleanly (end of stream) or abruptly (connection reset)."""
        if abrupt:
            transports = list(self._watch_transports)
            for transport in transports:
                transport.close()
            self.api.store.drop_watches()
            return len(transports)
        return self.api.store.drop_watches()

    # -- test hooks ----------------------------------------------------------------------------------

    async def _hook(self, request: web.Request) -> web.Response:
        hook = request.match_info["hook"]
        if hook == "faults" and request.method == "POST":
            data = await _body(request)
            faults = [Fault.from_json(f) for f in (data if isinstance(data, list) else [data])]
            self.faults.extend(faults)
            return _json_response({"faults": len(self.faults)})
        if hook == "faults" and request.method == "DELETE":
            self.faults.clear()
            return _json_response({"faults": 0})
        if hook == "drop-watches" and request.method == "POST":
            return _json_response(
                {"dropped": self.drop_watches(abrupt=parse_bool(request.query.get("abrupt")))}
            )
        if hook == "compact" and request.method == "POST":
            rv = request.query.get("resourceVersion")
            self.api.store.compact(int(rv) if rv else None)
            return _json_response({"compacted": self.api.store.compacted})
        if hook == "requests" and request.method == "GET":
            return _json_response([r.as_json() for r in self.requests])
        if hook == "revision" and request.method == "GET":
            return _json_response({"revision": self.api.store.revision})
        raise errors.no_such_resource()


def _int(value: str | None, name: str) -> int:
    if value is None or value == "":
        return 0
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f"invalid value for {name}: {value!r}") from None


__all__ = ["MERGE", "Server", "parse_bool"]
