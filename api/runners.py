"""A scale set's runners, a page at a time: those alive now, or those its runner set saw deleted.

* ``live``: the EphemeralRunners its runner sets own in the projection now, failed first, then pending
  (no phase and Unknown count as pending, as the runner set counts them), running, then the rest, each
  group by name, so what needs a look comes first and a row stays where it was while its phase holds;
* ``deleted``: the DELETED records of the runners of its current runner set (``DeletionReader``: the
  journal's owners index, no other record read), newest first, each shown as it was when deleted. A
  runner set that was replaced took its deleted runners' history with it (they named its uid).

Either list answers how many there are of both (``live``, ``deleted``), so the page shows both counts with
one request, and the journal's last seq (``lastSeq``), where a stream of what changes next starts. None
when the projection holds no such scale set.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from api import phases, scalesets
from api.models import RunnerPage, RunnerRow
from api.ports import JournalView
from statemachines.jsonvalues import int_or_none, section, str_or_none
from statemachines.phases import ErPhase
from store.records import Record

# The order of the live list: what needs a look first.
_RANK = {ErPhase.FAILED: 0, ErPhase.PENDING: 1, ErPhase.UNKNOWN: 1, ErPhase.NONE: 1, ErPhase.RUNNING: 2}


class Listed(enum.StrEnum):
    LIVE = "live"
    DELETED = "deleted"


def row(obj: Mapping[str, Any], deleted: Record | None = None) -> RunnerRow:
    meta, status = section(obj, "metadata"), section(obj, "status")
    return RunnerRow(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        uid=str(meta.get("uid") or ""),
        phase=str_or_none(status.get("phase")) or None,
        ready=scalesets.condition(obj, scalesets.READY),
        runner_id=int_or_none(status.get("runnerId")),
        created_at=str_or_none(meta.get("creationTimestamp")),
        terminating=bool(meta.get("deletionTimestamp")),
        deleted_seq=None if deleted is None else deleted.seq,
        deleted_at=None if deleted is None else deleted.at,
    )


def _rank(runner: Mapping[str, Any]) -> tuple[int, str]:
    phase = ErPhase.of(section(runner, "status").get("phase"))
    return _RANK.get(phase, 3), str(section(runner, "metadata").get("name") or "")


async def page(
    journal: JournalView, namespace: str, name: str, *, listed: Listed, offset: int, limit: int
) -> RunnerPage | None:
    """``limit`` runners of the list asked for from ``offset``, or None without such a scale set."""
    objects = journal.projection
    ars = objects.get(phases.Kind.AUTOSCALING_RUNNER_SET, namespace, name)
    if ars is None:
        return None
    sets = scalesets.runner_sets(objects, ars)
    alive = [
        runner
        for ers in sets
        for kind, ns, runner_name in objects.children(str(section(ers, "metadata").get("uid") or ""))
        if kind == phases.Kind.EPHEMERAL_RUNNER and (runner := objects.get(kind, ns, runner_name)) is not None
    ]
    owner = str(section(sets[0], "metadata").get("uid") or "") if sets else ""
    wanted = limit if listed is Listed.DELETED and owner else 0
    gone = await journal.deleted_children(
        owner, kind=phases.Kind.EPHEMERAL_RUNNER, offset=offset, limit=wanted
    )
    if listed is Listed.LIVE:
        items = [row(runner) for runner in sorted(alive, key=_rank)[offset : offset + limit]]
        total = len(alive)
    else:
        items = [row(section(r.body, "object"), r) for r in gone.records]
        total = gone.total
    return RunnerPage(
        total=total,
        offset=offset,
        items=items,
        live=len(alive),
        deleted=gone.total,
        last_seq=journal.last_seq,
    )
