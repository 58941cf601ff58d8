"""Server-side Tables (meta.k8s.io ``Table``): what ``kubectl get`` prints, as kube-apiserver converts it.

Custom resources get the Name column and their CRD's ``additionalPrinterColumns`` (apiextensions'
table convertor: a column's JSONPath with missing keys allowed, the first result, the cell by the
column's type; a CRD with no columns has Age). The built-in kinds kubectl users look at have their
printers' columns (``COLUMNS``: the definitions and a cell function per kind); every other kind has the
default convertor's Name and Created At. Cells of priority-1 columns are always sent: kubectl shows
them under ``-o wide``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sim import builtinprinters, errors, events, wirejson
from sim.kinds import Kind
from sim.tablecolumns import (
    AGE,
    CREATED_DOC,
    NAME,
    NAME_DOC,
    Printer,
    age,
    column,
    human_duration,
    simple,
)
from sim.tablecolumns import meta as _meta
from sim.tablecolumns import parse_time as _time

Obj = dict[str, Any]

MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


# -- negotiation -------------------------------------------------------------------------------------


def negotiate(accept: str) -> str | None:
    """The Table version (``v1`` or ``v1beta1``) when it is the client's first acceptable type, None for
    a plain object; 406 when nothing in ``Accept`` is served (as kube-apiserver's negotiation)."""
    if not accept.strip():
        return None
    for clause in accept.split(","):
        media, *raw = (p.strip() for p in clause.split(";"))
        params = dict(p.split("=", 1) for p in raw if "=" in p)
        media = media.lower()
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            if media in ("application/json", "application/*", "*/*") and params.get("v") in ("v1", "v1beta1"):
                return params["v"]
            continue
        if "as" in params:
            continue  # PartialObjectMetadata and other conversions are not served
        if media in (*MEDIA_TYPES, "application/*", "*/*") or media.endswith("+json"):
            return None
    raise errors.ApiError(
        406, "NotAcceptable", "only the following media types are accepted: " + ", ".join(MEDIA_TYPES)
    )


# -- ages and JSONPath -------------------------------------------------------------------------------


_STEP = re.compile(
    r"""\.(?P<field>[A-Za-z0-9_-]+)|\[(?P<index>-?\d+)\]|\[['"](?P<key>[^'"]+)['"]\]"""
    r"""|\[\?\(@\.(?P<fpath>[A-Za-z0-9_.-]+)\s*==\s*['"](?P<fvalue>[^'"]*)['"]\)\]|\[\*\]|\.\*"""
)


def json_path(path: str, obj: Any) -> list[Any]:
    """The results of a simple JSONPath (``.a.b``, ``[n]``, ``['k']``, ``[*]``, ``[?(@.x=="y")]``) with
    missing keys allowed, as client-go's jsonpath finds them for printer columns."""
    nodes = [obj]
    pos = 0
    path = path.strip()
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return []
        pos = m.end()
        out: list[Any] = []
        for node in nodes:
            if m["field"] is not None or m["key"] is not None:
                key = m["field"] if m["field"] is not None else m["key"]
                if isinstance(node, dict) and key in node:
                    out.append(node[key])
            elif m["index"] is not None:
                i = int(m["index"])
                if isinstance(node, list) and -len(node) <= i < len(node):
                    out.append(node[i])
            elif m["fpath"] is not None:
                if isinstance(node, list):
                    for item in node:
                        found = json_path("." + m["fpath"], item)
                        if found and _text(found[0]) == m["fvalue"]:
                            out.append(item)
            elif isinstance(node, list):
                out.extend(node)
            elif isinstance(node, dict):
                out.extend(node.values())
        nodes = out
    return nodes


def _text(value: Any) -> str:
    """client-go jsonpath's printing: JSON for objects and lists, Go's ``%v`` for scalars."""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def crd_cell(type_: str, value: Any, now: datetime) -> Any:
    """apiextensions' ``cellForJSONValue`` (strings are printed as jsonpath prints them)."""
    if value is None:
        return None
    if type_ == "string":
        return _text(value)
    if type_ == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if type_ == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if type_ == "boolean" and isinstance(value, bool):
        return value
    if type_ == "date" and isinstance(value, str):
        t = _time(value)
        return "<invalid>" if t is None else human_duration((now - t).total_seconds())
    return None


# -- the built-in kinds' printers --------------------------------------------------------------------


def _pod(obj: Obj, now: datetime) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    containers = spec.get("containers") or []
    statuses = status.get("containerStatuses") or []
    reason = status.get("reason") or status.get("phase") or ""
    restarts, ready = 0, 0
    last_restart: datetime | None = None
    for i, init in enumerate(status.get("initContainerStatuses") or []):
        restarts += init.get("restartCount", 0)
        state = init.get("state") or {}
        if (state.get("terminated") or {}).get("exitCode", 1) == 0 and "terminated" in state:
            continue
        if "terminated" in state:
            t = state["terminated"]
            reason = "Init:" + (t.get("reason") or f"ExitCode:{t.get('exitCode', 0)}")
        elif (state.get("waiting") or {}).get("reason") not in (None, "", "PodInitializing"):
            reason = "Init:" + state["waiting"]["reason"]
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        break
    else:
        for cs in reversed(statuses):
            restarts += cs.get("restartCount", 0)
            finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
            when = _time(finished)
            if when is not None and (last_restart is None or when > last_restart):
                last_restart = when
            state = cs.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif (state.get("terminated") or {}).get("reason"):
                reason = state["terminated"]["reason"]
            elif "terminated" in state:
                t = state["terminated"]
                reason = f"Signal:{t['signal']}" if t.get("signal") else f"ExitCode:{t.get('exitCode', 0)}"
            elif "running" in state and cs.get("ready"):
                ready += 1
    if _meta(obj).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    restarts_cell = str(restarts)
    if last_restart is not None:
        restarts_cell += f" ({human_duration((now - last_restart).total_seconds())} ago)"
    gates = spec.get("readinessGates") or []
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    gates_cell = (
        f"{sum(1 for g in gates if conditions.get(g.get('conditionType')) == 'True')}/{len(gates)}"
        if gates
        else "<none>"
    )
    return [
        _meta(obj).get("name", ""),
        f"{ready}/{len(containers)}",
        reason,
        restarts_cell,
        age(_meta(obj).get("creationTimestamp"), now),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_cell,
    ]


def _event(obj: Obj, now: datetime) -> list[Any]:
    first = (
        age(obj.get("firstTimestamp"), now) if obj.get("firstTimestamp") else age(obj.get("eventTime"), now)
    )
    last = age(obj.get("lastTimestamp"), now) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 0
    series = obj.get("series")
    if isinstance(series, dict):
        last, count = age(series.get("lastObservedTime"), now), series.get("count", 0)
    elif count == 0:
        count = 1
    involved = obj.get("involvedObject") or {}
    target = involved.get("kind", "").lower()
    if involved.get("name"):
        target += "/" + involved["name"]
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    host = source.get("host") or obj.get("reportingInstance") or ""
    source_cell = (f"{component}, {host}" if host else component) or "<none>"
    return [
        last,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        source_cell,
        (obj.get("message") or "").strip(),
        first,
        int(count),
        _meta(obj).get("name", ""),
    ]


COLUMNS: Mapping[tuple[str, str], Printer] = {
    ("", "pods"): Printer(
        (
            NAME,
            column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
            column("Status", description="The aggregate status of the containers in this pod."),
            column(
                "Restarts",
                description="The number of times the containers in this pod have been restarted and when the "
                "last container in this pod has restarted.",
            ),
            AGE,
            column("IP", description="podIP address allocated to the pod.", priority=1),
            column("Node", description="The node the pod is bound to.", priority=1),
            column("Nominated Node", description="The node the scheduler nominated for the pod.", priority=1),
            column("Readiness Gates", description="The pod's readiness gates.", priority=1),
        ),
        _pod,
    ),
    ("", "events"): Printer(
        (
            column("Last Seen", description="The time at which the most recent occurrence was recorded."),
            column("Type", description="Type of this event (Normal, Warning)."),
            column("Reason", description="The reason for the transition into the object's current status."),
            column("Object", description="The object that this event is about."),
            column("Subobject", description="The field of the object, if any.", priority=1),
            column("Source", description="The component reporting this event.", priority=1),
            column("Message", description="A human-readable description of the status of this operation."),
            column("First Seen", description="The time at which the event was first recorded.", priority=1),
            column("Count", "integer", "The number of times this event has occurred.", priority=1),
            {**column("Name", description=NAME_DOC, priority=1), "format": "name"},
        ),
        _event,
    ),
    ("", "namespaces"): Printer(
        (NAME, column("Status", description="The status of the namespace"), AGE),
        simple(lambda o: (o.get("status") or {}).get("phase", "")),
    ),
    ("", "secrets"): Printer(
        (
            NAME,
            column("Type", description="Used to facilitate programmatic handling of secret data."),
            column("Data", description="The number of items in the secret."),
            AGE,
        ),
        simple(lambda o: o.get("type", ""), lambda o: len(o.get("data") or {})),
    ),
    ("", "configmaps"): Printer(
        (NAME, column("Data", description="The number of items in the configmap."), AGE),
        simple(lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})),
    ),
    ("", "serviceaccounts"): Printer(
        (NAME, column("Secrets", description="The number of secrets of the service account."), AGE),
        simple(lambda o: len(o.get("secrets") or [])),
    ),
    ("coordination.k8s.io", "leases"): Printer(
        (NAME, column("Holder", description="The holder of the lease."), AGE),
        simple(lambda o: (o.get("spec") or {}).get("holderIdentity") or ""),
    ),
    **builtinprinters.PRINTERS,
}
DEFAULT = (NAME, column("Created At", "date", CREATED_DOC))


# -- tables ------------------------------------------------------------------------------------------


def printer(kind: Kind) -> Printer:
    """How ``kind``'s objects become rows."""
    if kind.is_custom:
        crd_columns = kind.extra.get("printerColumns") or (
            {
                "name": "Age",
                "type": "date",
                "jsonPath": ".metadata.creationTimestamp",
                "description": CREATED_DOC,
            },
        )
        defs = tuple(
            column(
                c["name"],
                c.get("type", "string"),
                c.get("description")
                or f"Custom resource definition column (in JSONPath format): {c['jsonPath']}",
                priority=int(c.get("priority", 0)),
            )
            | {"format": c.get("format", "")}
            for c in crd_columns
        )

        def crd_cells(obj: Obj, now: datetime) -> list[Any]:
            cells: list[Any] = [_meta(obj).get("name", "")]
            for c in crd_columns:
                found = json_path(c["jsonPath"], obj)
                cells.append(crd_cell(c.get("type", "string"), found[0], now) if found else None)
            return cells

        return Printer((NAME, *defs), crd_cells)
    by_kind = COLUMNS.get(kind.key)
    if by_kind is not None:
        return by_kind

    def default_cells(obj: Obj, now: datetime) -> list[Any]:
        meta = _meta(obj)
        created = _time(meta.get("creationTimestamp"))
        stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else "0001-01-01T00:00:00Z"
        return [meta.get("name", ""), stamp]

    return Printer(DEFAULT, default_cells)


def _row_object(kind: Kind, obj: Obj, include: str, version: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        # The object as its own document: with its type, which list items leave out.
        return {"kind": kind.kind, "apiVersion": kind.api_version, **obj}
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": _meta(obj),
    }


def _printed(kind: Kind, obj: Obj) -> Obj:
    """What the printer reads: an events.k8s.io Event as the core Event it is stored as (upstream prints
    the internal type of both views)."""
    if kind.group == "events.k8s.io" and kind.plural == "events":
        return events.events_v1_to_core(obj)
    return obj


def table(kind: Kind, body: Obj, *, version: str, include_object: str, now: datetime) -> Obj:
    """A Table of one object or of a list (``body`` with ``items``)."""
    if include_object not in ("", "None", "Object", "Metadata"):
        raise errors.bad_request(
            f'includeObject: Unsupported value: "{include_object}": '
            'supported values: "None", "Metadata", "Object"'
        )
    p = printer(kind)
    items = body.get("items", [body])
    meta = _meta(body)
    out_meta = {"resourceVersion": meta.get("resourceVersion", "")}
    if "items" in body:
        if meta.get("continue"):
            out_meta["continue"] = meta["continue"]
        if "remainingItemCount" in meta:
            out_meta["remainingItemCount"] = meta["remainingItemCount"]
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": out_meta,
        "columnDefinitions": list(p.columns),
        "rows": [
            {
                "cells": p.cells(_printed(kind, item), now),
                "object": _row_object(kind, item, include_object or "Metadata", version),
            }
            for item in items
        ],
    }


def watch_line(kind: Kind, line: bytes, *, version: str, include_object: str, now: datetime) -> bytes:
    """Watch events with their objects as one-row Tables (bookmarks and errors as they are)."""
    out = []
    for raw in line.splitlines():
        event = json.loads(raw)
        if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
            event["object"] = table(
                kind, event["object"], version=version, include_object=include_object, now=now
            )
        out.append(wirejson.dumps(event) + b"\n")
    return b"".join(out)
