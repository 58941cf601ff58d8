"""The ``scale`` subresource of Deployments, ReplicaSets and StatefulSets (autoscaling/v1 ``Scale``).

``kubectl scale`` and horizontal autoscalers never write a workload's spec: they read and write its
``scale`` subresource, a ``Scale`` object whose ``spec.replicas`` is the workload's and whose status
carries the observed ``status.replicas`` and the workload's selector as a string. A write of the
``Scale`` becomes an update of ``spec.replicas`` on the workload itself (generation and all), as
kube-apiserver's ``ScaleREST`` does: a ``resourceVersion`` in the ``Scale`` is a precondition on the
workload's, and the answer is the ``Scale`` of the updated workload.

Known limits: only autoscaling/v1 is served (no ``extensions``/``apps/v1beta*`` Scale versions); the
Scale's ``metadata`` holds name, namespace, uid, resourceVersion and creationTimestamp only, as upstream.
"""

from __future__ import annotations

from typing import Any

from sim import errors, patches, selectors, strategic
from sim.apiserver import JSON_PATCH, MERGE, STRATEGIC, ApiServer, Result
from sim.kinds import Kind
from sim.store import Obj


def scale_of(obj: Obj) -> Obj:
    """The autoscaling/v1 ``Scale`` of a workload (zero replicas are omitted, as Go's omitempty does)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    selector = selectors.from_label_selector(spec.get("selector"))
    scale_status: Obj = {"replicas": int(status.get("replicas") or 0)}
    if selector is not None and str(selector):
        scale_status["selector"] = str(selector)
    replicas = int(spec.get("replicas") or 0)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": replicas} if replicas else {},
        "status": scale_status,
    }


def get(api: ApiServer, kind: Kind, namespace: str, name: str) -> Obj:
    return scale_of(api.get(kind, namespace, name))


def update(
    api: ApiServer, kind: Kind, namespace: str, name: str, body: Any, *, dry_run: bool = False
) -> Result:
    """PUT ``.../scale``: ``spec.replicas`` of ``body`` becomes the workload's."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request was not a JSON object")
    existing = api.get(kind, namespace, name)
    # A resourceVersion in the Scale is a precondition on the workload (a conflict names the workload).
    rv = str((body.get("metadata") or {}).get("resourceVersion") or existing["metadata"]["resourceVersion"])
    replicas = (body.get("spec") or {}).get("replicas") or 0
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise errors.bad_request(
            'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '
            f"{patches.go_json_kind(replicas)} into Go struct field ScaleSpec.spec.replicas of type int32"
        )
    if replicas < 0:
        raise errors.invalid(
            "Scale",
            "autoscaling",
            name,
            [errors.invalid_value("spec.replicas", replicas, "must be greater than or equal to 0")],
        )
    spec = {**(existing.get("spec") or {}), "replicas": replicas}
    meta = {**existing["metadata"], "resourceVersion": rv}
    written = api.update(kind, namespace, name, {**existing, "metadata": meta, "spec": spec}, dry_run=dry_run)
    return Result(200, scale_of(written.body), written.warnings)


def patch(
    api: ApiServer,
    kind: Kind,
    namespace: str,
    name: str,
    body: Any,
    content_type: str,
    *,
    dry_run: bool = False,
) -> Result:
    """PATCH ``.../scale``: the patch applies to the ``Scale``, then as ``update``."""
    current = get(api, kind, namespace, name)
    try:
        if content_type == MERGE and isinstance(body, dict):
            result = patches.merge_patch(current, body)
        elif content_type == JSON_PATCH:
            result = patches.json_patch(current, body)
        elif content_type == STRATEGIC and isinstance(body, dict):
            result = strategic.strategic_merge_patch(current, body, "Scale")
        elif content_type in (MERGE, STRATEGIC):
            raise errors.bad_request("error decoding patch: the patch is not a JSON object")
        else:
            raise errors.unsupported_media_type(content_type, [JSON_PATCH, MERGE, STRATEGIC])
    except patches.PatchFailed as exc:
        raise errors.patch_rejected(str(exc)) from exc
    return update(api, kind, namespace, name, result, dry_run=dry_run)
