"""What the journal keeps of an observed object: the fields the controller reads, nothing else.

Every observed object passes through ``slim`` at the watcher edge (``objects.normalize``, used by lists
and watch events alike) before it is journaled, so the journal, the projection folded from it, replay and
``arcsm journal verify`` all see the same slim object. Rules:

* every kind loses ``metadata.managedFields``: nothing reads it, and on a real cluster it is often the
  largest part of a small object;
* a Pod keeps ``apiVersion``, ``kind``, its whole ``metadata`` but ``managedFields`` (name, namespace,
  uid, resourceVersion, generation, labels, annotations, ownerReferences, deletionTimestamp,
  finalizers…) and of its status ``POD_STATUS`` plus the ``Ready`` conditions (no ``conditions`` when
there is none). Its ``spec`` (containers,
  volumes, tolerations: the largest part, and written once by whoever made the pod) is not kept, nor are
  the IPs, the QoS class and the other conditions. Pods are the churny kind: a runner pod is updated half
  a dozen times over one job, each update a whole object;
* every other kind is kept whole: the machines read the custom resources' specs and statuses, and write
  them back conditionally on their resourceVersion; Secrets are redacted as before (``records.redact``).

What is kept is what ``statemachines.pods``, ``statemachines.predicates`` (ER ← Pod),
``statemachines.listenerbackoff`` (a listener's start time), ``controller.loop.snapshotting`` and
``controller.loop.mapping`` (owners, names, deletion) and ``api/`` (a listener's phase and container state)
read of a Pod; ``tests/unit/watchers/test_slimming.py`` pins it by replaying every recorded journal with
each Pod traced, failing when a decision reads a Pod field this module drops.

A slim projection rather than patches against the previous version: each record stays a whole object, so
the projection, replay, retention (which may drop any record before its horizon), export/import and
``verify`` are unchanged in meaning and need no base version to read a record; and the unread part of a
Pod is what a patch would carry least of anyway (status changes are the updates). The cost is that the
journal no longer shows a Pod's spec; a field a machine starts to read must be added here, which the
pinning test makes a failing test rather than a silent wrong decision.

``unchanged`` says whether a watch update of a Pod changes nothing the journal keeps but its
resourceVersion; the watchers skip those (``streams.translate``, ``listing.diff``). Nothing reads a Pod's
resourceVersion (the controller never writes a Pod conditionally, and a watch resumes from the
resourceVersion the watcher holds in memory, a restart from a fresh list), so a Pod's journaled
resourceVersion may lag the server's. Other kinds are never skipped: their resourceVersions are what
conditional writes and the listener config's hash go by.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statemachines.jsonvalues import JsonObject, as_mapping

POD = "Pod"
# The Pod status fields kept whole (``statemachines.pods``, ``predicates.pod_projection``,
# ``listenerbackoff.run_seconds``).
POD_STATUS = ("phase", "reason", "message", "startTime", "containerStatuses", "initContainerStatuses")
# The only condition type anything reads of a Pod (``pods.pod_ready``).
POD_CONDITIONS = frozenset({"Ready"})


def slim(kind: str, obj: JsonObject) -> dict[str, Any]:
    """``obj`` (an observed object of ``kind``) as the journal keeps it."""
    meta = obj.get("metadata")
    out = dict(obj)
    if isinstance(meta, Mapping) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    if kind != POD:
        return out
    out.pop("spec", None)
    status = obj.get("status")
    if isinstance(status, Mapping):
        kept = {k: status[k] for k in POD_STATUS if k in status}
        if (conditions := kept_conditions(status.get("conditions"))) is not None:
            kept["conditions"] = conditions
        out["status"] = kept
    return out


def kept_conditions(value: object) -> object:
    """The conditions kept of a Pod's ``value``: those of a type in ``POD_CONDITIONS``; None (the field is
    left out) when none is, as a pod's scheduling moves only conditions nothing reads."""
    if not isinstance(value, list):
        return value
    kept = [c for c in value if not isinstance(c, Mapping) or c.get("type") in POD_CONDITIONS]
    return kept or None


def unchanged(kind: str, before: JsonObject | None, after: JsonObject) -> bool:
    """Whether ``after`` (slim) is ``before`` (slim, last journaled) with only its resourceVersion moved,
    for a kind whose resourceVersion nothing reads (Pods)."""
    if kind != POD or before is None:
        return False
    return _without_version(before) == _without_version(after)


def _without_version(obj: JsonObject) -> dict[str, Any]:
    meta = {k: v for k, v in as_mapping(obj.get("metadata")).items() if k != "resourceVersion"}
    return {**obj, "metadata": meta}
