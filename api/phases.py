"""Phase history: the transitions the machines recorded, and the phase changes observed between them.

A ``decision`` record carries ``transitions`` (from, to, trigger, reason, revisions, subject); each one
becomes a ``PhaseItem`` stamped with the record's seq and time, ``source`` "decided". Where this replica
did not decide (another replica led), the phase changes of the objects it observed fill the gap, ``source``
"observed", without repeating a decided transition when its write comes back (``continuity``).

A record may carry several transitions (a pass may write Pending and go on), so a page ends at a record
boundary: ``next`` is the seq of the last record read, and a page holds at most ``limit`` items unless a
single record alone holds more. A page reads the decision and observed records of the filter from the
journal's start (an observed change needs the phase before it), a chunk at a time, and returns the items
after ``after``.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Iterable, Mapping
from typing import Any

from api import continuity
from api.models import PhaseItem, PhasePage
from api.ports import RecordReader
from store.records import Record, RecordType

SCAN = 500  # records read per query while filling a page
HISTORY = frozenset({RecordType.DECISION, RecordType.OBSERVED})


class Kind(enum.StrEnum):
    AUTOSCALING_RUNNER_SET = "AutoscalingRunnerSet"
    EPHEMERAL_RUNNER_SET = "EphemeralRunnerSet"
    EPHEMERAL_RUNNER = "EphemeralRunner"
    AUTOSCALING_LISTENER = "AutoscalingListener"


class Plural(enum.StrEnum):
    """The resource names of the four kinds, as in their CRDs and in URLs."""

    AUTOSCALINGRUNNERSETS = "autoscalingrunnersets"
    EPHEMERALRUNNERSETS = "ephemeralrunnersets"
    EPHEMERALRUNNERS = "ephemeralrunners"
    AUTOSCALINGLISTENERS = "autoscalinglisteners"

    @property
    def kind(self) -> Kind:
        return _KIND_OF[self]


_KIND_OF = {plural: kind for plural, kind in zip(Plural, Kind, strict=True)}


def kind_named(text: str) -> Kind | None:
    """The kind a user names by kind, plural or singular, in any case (``ars`` short names too)."""
    lowered = text.strip().lower()
    for plural, kind in _KIND_OF.items():
        short = "".join(ch for ch in kind.value if ch.isupper()).lower()
        if lowered in (kind.value.lower(), plural.value, plural.value[:-1], short):
            return kind
    return None


def items_of(record: Record) -> list[PhaseItem]:
    """The phase transitions a decision record took, as API items (none for another record type)."""
    if record.type is not RecordType.DECISION or record.seq is None:
        return []
    transitions = record.body.get("transitions")
    if not isinstance(transitions, list):
        return []
    return [_item(record, t) for t in transitions if isinstance(t, Mapping)]


def _item(record: Record, transition: Mapping[str, Any]) -> PhaseItem:
    subject = transition.get("subject")
    subject = subject if isinstance(subject, Mapping) else {}
    revisions = transition.get("revisions")
    assert record.seq is not None
    return PhaseItem(
        seq=record.seq,
        at=record.at,
        kind=str(subject.get("kind") or record.kind),
        namespace=str(subject.get("namespace") or record.namespace),
        name=str(subject.get("name") or record.name),
        uid=record.uid,
        from_=str(transition.get("from") or "") or None,
        to=str(transition.get("to") or ""),
        trigger=str(transition.get("trigger") or ""),
        reason=str(transition.get("reason") or ""),
        revisions={
            str(k): v
            for k, v in (revisions.items() if isinstance(revisions, Mapping) else ())
            if isinstance(v, int) and not isinstance(v, bool)
        },
        source=continuity.DECIDED,
    )


async def page(
    reader: RecordReader,
    *,
    after: int,
    limit: int,
    kind: str | None = None,
    namespace: str | None = None,
    name: str | None = None,
) -> PhasePage:
    """Up to ``limit`` transitions recorded after seq ``after`` (oldest first) matching the filters."""
    history = continuity.History(items_of)
    items: list[PhaseItem] = []
    cursor = 0
    while True:
        batch = await reader.read(
            after=cursor, limit=SCAN, kind=kind, namespace=namespace, name=name, types=HISTORY
        )
        for record in batch:
            found = history.feed(record)
            seq = record.seq or cursor
            if seq <= after:
                cursor = seq
                continue
            if found and items and len(items) + len(found) > limit:
                return PhasePage(items=items, next=cursor)
            items.extend(found)
            cursor = seq
            if len(items) >= limit:
                return PhasePage(items=items, next=cursor)
        if len(batch) < SCAN:
            return PhasePage(items=items, next=None)


async def last(reader: RecordReader, *, kind: str, namespace: str, name: str, count: int) -> list[PhaseItem]:
    """The last ``count`` transitions of one object, oldest first (reads the object's records)."""
    history = continuity.History(items_of)
    kept: collections.deque[PhaseItem] = collections.deque(maxlen=count)
    cursor = 0
    while True:
        batch = await reader.read(
            after=cursor, limit=SCAN, kind=kind, namespace=namespace, name=name, types=HISTORY
        )
        kept.extend(_flatten(history.feed(record) for record in batch))
        if len(batch) < SCAN:
            return list(kept)
        cursor = batch[-1].seq or cursor


async def known(reader: RecordReader, *, kind: str, namespace: str, name: str) -> bool:
    """Whether the journal holds any record about the object (observed, decided or acted on)."""
    return bool(await reader.read(after=0, limit=1, kind=kind, namespace=namespace, name=name))


def _flatten(groups: Iterable[list[PhaseItem]]) -> Iterable[PhaseItem]:
    for group in groups:
        yield from group
