"""What deleting a CustomResourceDefinition means to the API server (apiextensions-apiserver's CRD REST
storage and custom resource handler).

The first DELETE of a CRD does not remove it (``marked``): it gets ``deletionTimestamp``, the finalizer
``customresourcecleanup.apiextensions.k8s.io`` and the condition ``Terminating`` True
(``InstanceDeletionPending``), written straight to storage, so neither its generation nor its
``managedFields`` change and no grace period is set. A later DELETE is the generic one. The CRD's REST
storage checks the preconditions itself, with its own wording (``check_preconditions``). While the
condition is True, creating a custom resource of the CRD, by POST or by a server-side apply that would
create it, is refused 405 (``check_create``). The finalizer controller (``sim.crdfinalizer``) then
deletes the custom resources and removes the finalizer.

A CRD carries no finalizer before its deletion: upstream adds it on the first DELETE, not on create.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim import errors
from sim.kinds import Kind
from sim.store import Obj, Store

GROUP = "apiextensions.k8s.io"
CRDS = (GROUP, "customresourcedefinitions")
CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
TERMINATING = "Terminating"


def is_crd(kind: Kind) -> bool:
    return kind.key == CRDS


def crd_name(kind: Kind) -> str:
    """The name of the CRD that serves a custom resource kind."""
    return f"{kind.plural}.{kind.group}"


def condition(crd: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    status = crd.get("status") or {}
    for cond in status.get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def condition_true(crd: Mapping[str, Any], kind: str) -> bool:
    cond = condition(crd, kind)
    return cond is not None and cond.get("status") == "True"


def with_condition(crd: Obj, kind: str, status: str, reason: str, message: str, now: str) -> Obj:
    """``SetCRDCondition``: the condition set (appended when absent), its transition time moved only
    when its status changes."""
    old_status = dict(crd.get("status") or {})
    conditions = [dict(c) for c in old_status.get("conditions") or [] if isinstance(c, dict)]
    new = {"type": kind, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}
    for i, cond in enumerate(conditions):
        if cond.get("type") == kind:
            if cond.get("status") == status and cond.get("lastTransitionTime"):
                new["lastTransitionTime"] = cond["lastTransitionTime"]
            conditions[i] = new
            break
    else:
        conditions.append(new)
    return {**crd, "status": {**old_status, "conditions": conditions}}


def check_preconditions(existing: Obj, options: Mapping[str, Any]) -> None:
    """The CRD REST storage's own precondition checks (409, named by the resource)."""
    meta = existing["metadata"]
    pre = options.get("preconditions") or {}
    name = meta["name"]
    if pre.get("uid") and pre["uid"] != meta["uid"]:
        raise errors.conflict(
            CRDS[1],
            GROUP,
            name,
            f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {meta['uid']}",
        )
    if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
        raise errors.conflict(
            CRDS[1],
            GROUP,
            name,
            f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
            f"ResourceVersion in object meta: {meta['resourceVersion']}",
        )


def marked(existing: Obj, now: str) -> Obj:
    """The CRD as its first DELETE stores it: deleting, with the cleanup finalizer, Terminating."""
    meta = dict(existing["metadata"])
    meta.setdefault("deletionTimestamp", now)
    finalizers = list(meta.get("finalizers") or [])
    if CLEANUP not in finalizers:
        meta["finalizers"] = [*finalizers, CLEANUP]
    return with_condition(
        {**existing, "metadata": meta},
        TERMINATING,
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        now,
    )


def check_create(store: Store, kind: Kind) -> None:
    """405 when the CRD serving ``kind`` is terminating (the custom resource handler's refusal)."""
    crd = store.get((*CRDS, "", crd_name(kind)))
    if crd is not None and condition_true(crd, TERMINATING):
        raise errors.ApiError(
            405,
            "MethodNotAllowed",
            "create not allowed while custom resource definition is terminating",
            {"group": kind.group, "kind": kind.plural},
        )
