"""The fleet at a glance: every scale set with what an operator checks first, filtered, sorted and paged
here, so a page over 1,000 scale sets reads one page of them.

``overview`` answers a ``FleetPage`` from the projection (the objects now) and the phase history index:

* per scale set (``ScaleSetSummary``): its phase, its ``Ready`` and ``ConfigurationValid`` conditions,
  ``minRunners`` and ``maxRunners``, its runner set's replicas (what it wants now), its runners by phase
  (``scalesets.runners_by_phase``), its listener's ``Ready`` condition and pod phase, the newest Warning
  Event about the scale set, its runner set or its listener (``PhaseIndex.warning``), and ``changedAt``,
  the newest ``lastTransitionTime`` of its conditions;
* filters: ``namespace``, ``search`` (a part of the name), ``phase`` and ``ready``. The counts
  (``phases``, ``ready``, ``runners``) and ``recent`` cover the scale sets the namespace and search keep,
  so the phase and readiness filters are chosen from them;
* order: ``attention`` (the default) first what needs a look (Outdated or bad configuration, then not
  Ready, then failed runners), then by namespace and name; ``name``; ``changed`` (newest first).

Only the page's items are built as models; everything else is counted from the objects. Warning Events
and ``recent`` come from the index once it has read the whole journal (``history.live``): before, they
are null and empty rather than partial.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api import phases, scalesets
from api.models import FleetPage, HistoryState, ListenerSummary, ScaleSetSummary
from api.phaseindex import PhaseIndex
from api.ports import JournalView, Objects
from statemachines.jsonvalues import as_mappings, int_or_none, section, str_or_none

RECENT = 10  # phase changes listed with the fleet
Key = tuple[str, str]


class Order(enum.StrEnum):
    ATTENTION = "attention"
    NAME = "name"
    CHANGED = "changed"


@dataclass(frozen=True)
class _Seen:
    """One scale set as the overview filters, counts and sorts it."""

    namespace: str
    name: str
    ars: Mapping[str, Any]
    phase: str
    ready: str  # its Ready condition's status, Unknown without one
    valid: str
    runners: dict[str, int]
    changed_at: str

    @property
    def rank(self) -> int:
        if self.phase == "Outdated" or self.valid == "False":
            return 0
        if self.ready != "True":
            return 1
        return 2 if self.runners.get("Failed") else 3


def _seen(objects: Objects, ars: Mapping[str, Any]) -> _Seen:
    meta, status = section(ars, "metadata"), section(ars, "status")
    statuses = {
        str(c.get("type")): str(c.get("status") or "Unknown") for c in as_mappings(status.get("conditions"))
    }
    times = [
        str(c.get("lastTransitionTime"))
        for c in as_mappings(status.get("conditions"))
        if c.get("lastTransitionTime")
    ]
    return _Seen(
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        ars=ars,
        phase=str_or_none(status.get("phase")) or "",
        ready=statuses.get(scalesets.READY, "Unknown"),
        valid=statuses.get(scalesets.CONFIGURATION_VALID, "Unknown"),
        runners=scalesets.runners_by_phase(objects, ars),
        changed_at=max(times, default=""),
    )


def _sorted(seen: list[_Seen], order: Order) -> list[_Seen]:
    if order is Order.CHANGED:
        by_name = sorted(seen, key=lambda s: (s.namespace, s.name))
        return sorted(by_name, key=lambda s: s.changed_at, reverse=True)
    if order is Order.ATTENTION:
        return sorted(seen, key=lambda s: (s.rank, s.namespace, s.name))
    return sorted(seen, key=lambda s: (s.namespace, s.name))


def listeners(objects: Objects) -> dict[Key, Mapping[str, Any]]:
    """The AutoscalingListeners by the scale set their spec names (namespace, name)."""
    found: dict[Key, Mapping[str, Any]] = {}
    for al in objects.items(phases.Kind.AUTOSCALING_LISTENER):
        spec = section(al, "spec")
        key = (
            str(spec.get("autoscalingRunnerSetNamespace") or ""),
            str(spec.get("autoscalingRunnerSetName") or ""),
        )
        found.setdefault(key, al)
    return found


def listener_summary(objects: Objects, al: Mapping[str, Any] | None) -> ListenerSummary | None:
    if al is None:
        return None
    meta = section(al, "metadata")
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    pod = objects.get("Pod", namespace, name)
    return ListenerSummary(
        name=name,
        namespace=namespace,
        ready=scalesets.condition(al, scalesets.READY),
        pod_phase=None if pod is None else str_or_none(section(pod, "status").get("phase")),
    )


def _summary(
    objects: Objects, index: PhaseIndex | None, seen: _Seen, al: Mapping[str, Any] | None
) -> ScaleSetSummary:
    sets = scalesets.runner_sets(objects, seen.ars)
    ers = sets[0] if sets else None
    spec = section(seen.ars, "spec")
    return ScaleSetSummary(
        namespace=seen.namespace,
        name=seen.name,
        uid=str(section(seen.ars, "metadata").get("uid") or ""),
        phase=seen.phase or None,
        ready=scalesets.condition(seen.ars, scalesets.READY),
        configuration_valid=scalesets.condition(seen.ars, scalesets.CONFIGURATION_VALID),
        min_runners=int_or_none(spec.get("minRunners")),
        max_runners=int_or_none(spec.get("maxRunners")),
        desired=None if ers is None else int_or_none(section(ers, "spec").get("replicas")),
        runners=seen.runners,
        runner_set=None if ers is None else str(section(ers, "metadata").get("name") or ""),
        listener=listener_summary(objects, al),
        last_warning=scalesets.latest_warning(
            index, scalesets.warned_keys(seen.namespace, seen.name, ers, al)
        ),
        changed_at=seen.changed_at or None,
    )


def _counted(seen: list[_Seen]) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    by_phase: dict[str, int] = {}
    by_ready = dict.fromkeys(("True", "False", "Unknown"), 0)
    runners = dict.fromkeys(scalesets.RUNNER_PHASES, 0)
    for one in seen:
        by_phase[one.phase] = by_phase.get(one.phase, 0) + 1
        by_ready[one.ready if one.ready in by_ready else "Unknown"] += 1
        for phase, count in one.runners.items():
            runners[phase] = runners.get(phase, 0) + count
    return by_phase, by_ready, runners


async def overview(
    journal: JournalView,
    index: PhaseIndex | None,
    *,
    namespace: str | None = None,
    search: str | None = None,
    phase: str | None = None,
    ready: str | None = None,
    order: Order = Order.ATTENTION,
    offset: int = 0,
    limit: int = 100,
) -> FleetPage:
    """The scale sets matching the filters, ``limit`` of them from ``offset``, and the fleet counted."""
    objects = journal.projection
    seen = [_seen(objects, ars) for ars in objects.items(phases.Kind.AUTOSCALING_RUNNER_SET, namespace)]
    if search:
        needle = search.lower()
        seen = [s for s in seen if needle in s.name.lower()]
    by_phase, by_ready, runners = _counted(seen)
    keep = {(s.namespace, s.name) for s in seen}
    matching = [
        s for s in seen if (phase is None or s.phase == phase) and (ready is None or s.ready == ready)
    ]
    page = _sorted(matching, order)[offset : offset + limit]
    found = listeners(objects) if page else {}
    live = index is not None and index.live
    recent = (
        index.newest(
            kind=phases.Kind.AUTOSCALING_RUNNER_SET, count=RECENT, keep=lambda ns, name: (ns, name) in keep
        )
        if index is not None and live
        else []
    )
    return FleetPage(
        total=len(matching),
        offset=offset,
        items=[_summary(objects, index, s, found.get((s.namespace, s.name))) for s in page],
        phases=by_phase,
        ready=by_ready,
        runners=runners,
        recent=recent,
        history=HistoryState(live=live, folded=0 if index is None else index.seq, last_seq=journal.last_seq),
    )
