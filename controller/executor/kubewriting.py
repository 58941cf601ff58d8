"""The executor's Kubernetes requests, with kubernetes_asyncio, for any kind, behind one token bucket.

Effects name objects by API kind (``ObjectRef("Pod", ns, name)``); ``KINDS`` maps each kind arcsm writes
or reads to its group, version and plural (the four custom resources' rows come from
``statemachines.kinds``), and every request goes to the generic REST path built from it
(``/api/v1/namespaces/{ns}/pods/{name}``, ``/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}``),
so one adapter serves the four custom resources and the core and RBAC kinds alike.

* Merge patches are sent as ``application/merge-patch+json`` whatever the kind (kubernetes_asyncio would
  pick a strategic merge patch for a dict body on a core kind); status writes go to ``/status``.
* Every request, reads included, first takes a token from an ``aiolimiter`` bucket that holds ``burst``
  tokens and refills at ``qps`` a second (client-go's QPS/burst).
* ``ApiException`` and transport failures are read as a ``kube.failures.Failure`` and raised here, and
  only here, as ``errors.KubeError`` whose ``error`` is the Status ``reason`` (by HTTP code when the
  body has none).

kubernetes_asyncio logs every response body at DEBUG, Secrets included; ``Kube`` installs a filter that
drops those records, so no log level shows a token or a JIT config.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import quote

from aiolimiter import AsyncLimiter
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from controller.executor.errors import KubeError
from controller.executor.observing import Observations
from kube import failures
from statemachines import kinds
from statemachines.effects import ObjectRef

JSON: Final = "application/json"
MERGE_PATCH: Final = "application/merge-patch+json"
RBAC_GROUP: Final = "rbac.authorization.k8s.io"
NOT_FOUND: Final = "NotFound"
CONFLICT: Final = "Conflict"
UNKNOWN_KIND: Final = "UnknownKind"
MESSAGE_LIMIT: Final = 500


@dataclass(frozen=True)
class KindInfo:
    group: str
    version: str
    plural: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


KINDS: Final[Mapping[str, KindInfo]] = {
    **{arc.kind: KindInfo(arc.group, arc.version, arc.plural) for arc in kinds.ALL},
    "Pod": KindInfo("", "v1", "pods"),
    "Secret": KindInfo("", "v1", "secrets"),
    "ConfigMap": KindInfo("", "v1", "configmaps"),
    "ServiceAccount": KindInfo("", "v1", "serviceaccounts"),
    "Event": KindInfo("", "v1", "events"),
    "Role": KindInfo(RBAC_GROUP, "v1", "roles"),
    "RoleBinding": KindInfo(RBAC_GROUP, "v1", "rolebindings"),
    "Lease": KindInfo("coordination.k8s.io", "v1", "leases"),  # only what the controller's Events are on
}


def kind_info(kind: str) -> KindInfo:
    info = KINDS.get(kind)
    if info is None:
        raise KubeError(UNKNOWN_KIND, f"arcsm does not know where the kind {kind!r} is served")
    return info


def collection_path(kind: str, namespace: str) -> str:
    info = kind_info(kind)
    root = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    return f"{root}/namespaces/{quote(namespace, safe='')}/{info.plural}"


def object_path(ref: ObjectRef, subresource: str = "") -> str:
    path = f"{collection_path(ref.kind, ref.namespace)}/{quote(ref.name, safe='')}"
    return f"{path}/{subresource}" if subresource else path


class ObjectReader(Protocol):
    """Reads one object (the executor reads Secrets and ConfigMaps for what effects must never carry)."""

    async def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        """The object as JSON; ``KubeError`` (NotFound, Forbidden, ...) when it cannot be read."""
        ...


class _DropResponseBodies(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("response body")


_BODY_FILTER: Final = _DropResponseBodies()


def silence_response_bodies() -> None:
    """Stop kubernetes_asyncio logging response bodies (they hold Secret data). Idempotent."""
    logger = logging.getLogger("kubernetes_asyncio.client.rest")
    if _BODY_FILTER not in logger.filters:
        logger.addFilter(_BODY_FILTER)


class Kube:
    """Requests through ``api``, at most ``burst`` at once and ``qps`` a second on average."""

    def __init__(
        self,
        api: client.ApiClient,
        *,
        qps: float,
        burst: int,
        timeout: float,
        observations: Observations | None = None,
    ) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("qps must be positive and burst at least 1")
        self._api = api
        self._observations = observations or Observations(None)
        self._limiter = AsyncLimiter(burst, burst / qps)
        self._timeout = timeout
        silence_response_bodies()

    async def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        ref = ObjectRef(kind, namespace, name)
        try:
            found: dict[str, Any] = await self._request("GET", object_path(ref))
        except KubeError as exc:
            if exc.reason == NOT_FOUND:
                await self._observations.gone(ref)
            raise
        await self._observations.answered(kind, found)
        return found

    async def create(self, kind: str, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        info = kind_info(kind)
        meta = dict(body.get("metadata") or {})
        meta.setdefault("namespace", namespace)
        full = {"apiVersion": info.api_version, "kind": kind, **body, "metadata": meta}
        created: dict[str, Any] = await self._request("POST", collection_path(kind, namespace), body=full)
        await self._observations.answered(kind, created)
        return created

    async def merge_patch(
        self, ref: ObjectRef, patch: Mapping[str, Any], *, subresource: str = ""
    ) -> dict[str, Any]:
        path = object_path(ref, subresource)
        patched: dict[str, Any] = await self._request("PATCH", path, body=patch, content_type=MERGE_PATCH)
        if not subresource:
            await self._observations.answered(ref.kind, patched)
        return patched

    async def delete(self, ref: ObjectRef, *, uid: str = "", propagation: str = "") -> None:
        try:
            answer = await self._request("DELETE", object_path(ref), body=delete_options(uid, propagation))
        except KubeError as exc:
            if exc.reason == NOT_FOUND:
                await self._observations.gone(ref)
            elif exc.reason == CONFLICT and uid and self._observations.reports(ref.kind):
                # The name holds another object than the one meant (recreated by another replica, say):
                # no watch shows this kind, so what the name holds now is read and reported.
                with contextlib.suppress(KubeError):
                    await self.get(ref.kind, ref.namespace, ref.name)
            raise
        await self._deleted(ref, answer)

    async def delete_matching(self, kind: str, namespace: str, label_selector: str) -> int:
        """Delete every ``kind`` in ``namespace`` matching ``label_selector``, one by one as upstream does (a
        list, then a delete each: RBAC grants neither chart ``deletecollection``); how many were deleted."""
        query = [("labelSelector", label_selector)]
        listed = await self._request("GET", collection_path(kind, namespace), query=query)
        items = listed.get("items") if isinstance(listed, Mapping) else None
        deleted = 0
        for item in items if isinstance(items, list) else ():
            meta = item.get("metadata") or {} if isinstance(item, Mapping) else {}
            ref = ObjectRef(kind, namespace, str(meta.get("name") or ""))
            try:
                await self.delete(ref, uid=str(meta.get("uid") or ""))
            except KubeError as exc:
                if exc.reason not in (NOT_FOUND, CONFLICT):
                    raise
                continue
            deleted += 1
        return deleted

    async def _deleted(self, ref: ObjectRef, answer: Any) -> None:
        if not self._observations.reports(ref.kind):
            return
        obj = answer if isinstance(answer, Mapping) and answer.get("kind") == ref.kind else None
        meta = (obj or {}).get("metadata")
        if obj is not None and isinstance(meta, Mapping) and meta.get("deletionTimestamp"):
            await self._observations.answered(ref.kind, obj)
        else:
            await self._observations.gone(ref, obj)

    async def _request(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        query: Sequence[tuple[str, str]] = (),
        content_type: str = JSON,
    ) -> Any:
        async with self._limiter:
            try:
                return await self._api.call_api(
                    path,
                    method,
                    query_params=list(query),
                    header_params={"Accept": JSON, "Content-Type": content_type},
                    body=dict(body) if body is not None else None,
                    response_types_map={200: "object", 201: "object", 202: "object"},
                    auth_settings=["BearerToken"],
                    _return_http_data_only=True,
                    _request_timeout=self._timeout,
                )
            except ApiException as exc:
                raise translate(exc) from exc
            except failures.UNANSWERED as exc:
                failure = failures.Failure.unanswered(exc)
                raise KubeError(
                    failure.reason_or_default(),
                    f"{method} {path}: the API server could not be reached ({failure.phrase})",
                ) from exc


def delete_options(uid: str, propagation: str) -> dict[str, Any]:
    options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
    if uid:
        options["preconditions"] = {"uid": uid}
    if propagation:
        options["propagationPolicy"] = propagation
    return options


def translate(exc: ApiException) -> KubeError:
    """The ``KubeError`` for an error answer: the Status reason (else the code's), the message on one line."""
    failure = failures.Failure.from_api_exception(exc)
    message = " ".join((failure.message or failure.phrase or f"answered {failure.code}").split())
    if len(message) > MESSAGE_LIMIT:
        message = message[: MESSAGE_LIMIT - 1] + "…"
    return KubeError(failure.reason_or_default(), message, code=failure.code, retry_after=failure.retry_after)
