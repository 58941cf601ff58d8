"""Phase history: the transitions the machines recorded, and the phase changes observed between them.

A ``decision`` record carries ``transitions`` (from, to, trigger, reason, revisions, subject), read back by
``statemachines.decisions.transitions_from_json``; each one becomes a ``PhaseItem`` stamped with the
record's seq and time, ``source`` "decided". Where this replica did not decide (another replica led), the
phase changes of the objects it observed fill the gap, ``source`` "observed", without repeating a decided
transition when its write comes back (``phasehistory``).

An object's history ends with its deletion (``to`` None, trigger ``deleted``; ``phasehistory``). Items that
re-affirm a phase (from = to) are folded like the others, and left out of a page or of an object's last
items when ``reaffirmed`` is False (the routes' default; ``phasehistory.reaffirms``).

A record may carry several transitions (a pass may write Pending and go on), so a page ends at a record
boundary: ``next`` is the seq of the page's last item (the value to pass as ``after``; the scan and the
index agree on it), and a page holds at most ``limit`` items unless a single record alone holds more.

The app answers from its ``phaseindex.PhaseIndex`` (``served_page``, ``served_last``); ``page`` and
``last`` scan the journal instead, for what the index does not hold and for ``arcsm history``, which reads
a journal file offline: they read the decision and observed records of the filter from the journal's start
(an observed change needs the phase before it), a chunk at a time, and return the items after ``after``.

While the index first folds the journal (``PhaseIndex.live`` is false), a request does not wait for it:
one object's history (``scoped``: its records are found by the journal's object index, so the scan costs
that object's records, not the journal's) and any request on a journal of at most ``SCAN_WHILE_LOADING``
records are scanned at once; any other answers ``Loading`` (the routes' 503 with Retry-After), so
requests neither wait nor compete with the fold by full scans.
"""

from __future__ import annotations

import asyncio
import collections
import enum
from collections.abc import Iterable

from api import phasehistory
from api.models import PhaseItem, PhasePage
from api.phaseindex import PhaseIndex
from api.ports import JournalView
from statemachines import decisions, kinds
from statemachines.effects import ObjectRef
from store.ports import JournalReader
from store.records import Record, RecordType

SCAN = 500  # records read per query while filling a page
CATCH_UP = 5.0  # seconds a request waits for the index to fold what was committed before it scans instead
SCAN_WHILE_LOADING = 20_000  # records: a larger journal answers 503 until the index has folded it
FOLD_RATE = 20_000  # records the index folds per second, about, for the Retry-After of a 503
HISTORY = frozenset({RecordType.DECISION, RecordType.OBSERVED})


class Loading(Exception):
    """The phase history index is still folding a journal too large to scan per request."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("the phase history is still being loaded from the journal; retry in a few seconds")
        self.retry_after = retry_after


class Kind(enum.StrEnum):
    """The four ARC kinds (``statemachines.kinds``), as the API's kind filter takes them."""

    AUTOSCALING_RUNNER_SET = kinds.AUTOSCALING_RUNNER_SET.kind
    EPHEMERAL_RUNNER_SET = kinds.EPHEMERAL_RUNNER_SET.kind
    EPHEMERAL_RUNNER = kinds.EPHEMERAL_RUNNER.kind
    AUTOSCALING_LISTENER = kinds.AUTOSCALING_LISTENER.kind


class Plural(enum.StrEnum):
    """The resource names of the four kinds, as in their CRDs and in URLs (``statemachines.kinds``)."""

    AUTOSCALINGRUNNERSETS = kinds.AUTOSCALING_RUNNER_SET.plural
    EPHEMERALRUNNERSETS = kinds.EPHEMERAL_RUNNER_SET.plural
    EPHEMERALRUNNERS = kinds.EPHEMERAL_RUNNER.plural
    AUTOSCALINGLISTENERS = kinds.AUTOSCALING_LISTENER.plural

    @property
    def kind(self) -> Kind:
        return _KIND_OF[self]


_KIND_OF = {Plural(arc.plural): Kind(arc.kind) for arc in kinds.ALL}


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
    subject = ObjectRef(record.kind, record.namespace, record.name)
    return [_item(record, t) for t in decisions.transitions_from_json(record.body, subject)]


def _item(record: Record, transition: decisions.Transition) -> PhaseItem:
    assert record.seq is not None
    return PhaseItem(
        seq=record.seq,
        at=record.at,
        kind=transition.subject.kind,
        namespace=transition.subject.namespace,
        name=transition.subject.name,
        uid=record.uid,
        from_=transition.from_ or None,
        to=transition.to,
        trigger=transition.trigger,
        reason=transition.reason,
        revisions=dict(transition.revisions),
        source=phasehistory.DECIDED,
    )


async def page(
    reader: JournalReader,
    *,
    after: int,
    limit: int,
    kind: str | None = None,
    namespace: str | None = None,
    name: str | None = None,
    raw_horizon: int = 0,
    reaffirmed: bool = True,
) -> PhasePage:
    """Up to ``limit`` transitions recorded after seq ``after`` (oldest first) matching the filters;
    ``raw_horizon``: the journal's (``phasehistory``); ``reaffirmed``: with the items that re-affirm a
    phase (``phasehistory.reaffirms``)."""
    history = phasehistory.History(items_of, raw_horizon=raw_horizon)
    items: list[PhaseItem] = []
    cursor = 0
    while True:
        batch = await reader.read(
            after=cursor, limit=SCAN, kind=kind, namespace=namespace, name=name, types=HISTORY
        )
        for record in batch:
            found = history.feed(record)
            if not reaffirmed:
                found = [item for item in found if not phasehistory.reaffirms(item)]
            seq = record.seq or cursor
            if seq <= after:
                cursor = seq
                continue
            if found and items and len(items) + len(found) > limit:
                return PhasePage(items=items, next=items[-1].seq)
            items.extend(found)
            cursor = seq
            if len(items) >= limit:
                return PhasePage(items=items, next=items[-1].seq)
        if len(batch) < SCAN:
            return PhasePage(items=items, next=None)


async def last(
    reader: JournalReader,
    *,
    kind: str,
    namespace: str,
    name: str,
    count: int,
    raw_horizon: int = 0,
    reaffirmed: bool = True,
) -> list[PhaseItem]:
    """The last ``count`` transitions of one object, oldest first (reads the object's records)."""
    history = phasehistory.History(items_of, raw_horizon=raw_horizon)
    kept: collections.deque[PhaseItem] = collections.deque(maxlen=count)
    cursor = 0
    while True:
        batch = await reader.read(
            after=cursor, limit=SCAN, kind=kind, namespace=namespace, name=name, types=HISTORY
        )
        found = _flatten(history.feed(record) for record in batch)
        kept.extend(item for item in found if reaffirmed or not phasehistory.reaffirms(item))
        if len(batch) < SCAN:
            return list(kept)
        cursor = batch[-1].seq or cursor


async def known(reader: JournalReader, *, kind: str, namespace: str, name: str) -> bool:
    """Whether the journal holds any record about the object (observed, decided or acted on)."""
    return bool(await reader.read(after=0, limit=1, kind=kind, namespace=namespace, name=name))


async def ready_index(
    index: PhaseIndex | None, journal: JournalView, *, scoped: bool = False
) -> PhaseIndex | None:
    """``index`` once it folded every record committed now; None when there is none or it cannot follow
    (the caller scans). While the index first folds a journal too large to scan, None for a request
    about one object (``scoped``), else raises ``Loading``."""
    if index is None:
        return None
    seq = journal.last_seq
    caught = index.seq >= seq
    if not caught:
        # The journal's tail skips records retention pruned without yielding anything: when none is left
        # up to ``seq``, the index has folded all there is.
        ahead = await journal.read(after=index.seq, limit=1)
        caught = not ahead or (ahead[0].seq or 0) > seq
    if caught:
        await index.reached(seq)
    if not index.live:
        if scoped or seq <= SCAN_WHILE_LOADING:
            return None
        raise Loading(retry_after=max(1, min(60, -(-(seq - index.seq) // FOLD_RATE))))
    try:
        async with asyncio.timeout(CATCH_UP):
            return index if await index.caught_up(seq) else None
    except TimeoutError:
        return None


async def served_page(
    index: PhaseIndex | None,
    journal: JournalView,
    *,
    after: int,
    limit: int,
    kind: str | None = None,
    namespace: str | None = None,
    name: str | None = None,
    reaffirmed: bool = True,
) -> PhasePage:
    """``page`` answered from the index when it holds everything after ``after``, else by a scan."""
    one = kind is not None and namespace is not None and name is not None
    ready = await ready_index(index, journal, scoped=one)
    found = (
        None
        if ready is None
        else ready.page(
            after=after, limit=limit, kind=kind, namespace=namespace, name=name, reaffirmed=reaffirmed
        )
    )
    if found is not None:
        return found
    return await page(
        journal,
        after=after,
        limit=limit,
        kind=kind,
        namespace=namespace,
        name=name,
        raw_horizon=phasehistory.raw_horizon(journal),
        reaffirmed=reaffirmed,
    )


async def served_last(
    index: PhaseIndex | None,
    journal: JournalView,
    *,
    kind: str,
    namespace: str,
    name: str,
    count: int,
    reaffirmed: bool = True,
) -> list[PhaseItem]:
    """``last`` answered from the index (the newest items it holds), else by a scan."""
    ready = await ready_index(index, journal, scoped=True)
    if ready is not None:
        found = ready.last(kind=kind, namespace=namespace, name=name, count=count, reaffirmed=reaffirmed)
        # Fewer than ``count`` held is all there is unless the index dropped some of this object's items.
        if len(found) >= count or not ready.trimmed((kind, namespace, name)):
            return found
    return await last(
        journal,
        kind=kind,
        namespace=namespace,
        name=name,
        count=count,
        raw_horizon=phasehistory.raw_horizon(journal),
        reaffirmed=reaffirmed,
    )


def _flatten(groups: Iterable[list[PhaseItem]]) -> Iterable[PhaseItem]:
    for group in groups:
        yield from group
