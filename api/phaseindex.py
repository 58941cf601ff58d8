"""The phase history of one app, kept in memory and fed as records commit.

``PhaseIndex.follow`` tails the journal from its first record (as ``metrics`` follows it) and folds every
record into one ``phasehistory.History``; the items it yields are kept in seq order, and per object. A
page, an object's last transitions and the scale set view are answered from memory, so a request costs
the items it returns, not a scan of the journal.

* Whole: re-affirmations (``phasehistory.reaffirms``) are held like every item; a page or an object's last
  items leave them out when asked (``reaffirmed=False``), so one index serves both answers.
* Fresh: a request first waits until the index has folded every record committed when it arrived
  (``caught_up``), so an answer never lags the journal it is read beside. Records retention pruned are
  skipped by the tail without a word, so a request that finds none left up to the journal's last seq
  moves the index there itself (``reached``).
* Live: the index is ``live`` once it first reached the journal's end; until then requests do not wait
  for it (``phases.ready_index``: one object's history, and any request on a small journal, is scanned;
  anything else on a large one answers 503).
* Bounded: ``keep`` items are held (the newest; 50,000 by default). An item is held as a ``Held`` tuple
  with its repeated strings interned (about a third of a ``PhaseItem`` model's memory); the models are
  built only for the items a request returns. The oldest are dropped
  in batches, once a quarter more than ``keep`` is held, so up to 1.25 × ``keep`` items are held at times.
  Dropping moves the ``horizon``: a page that starts before it is answered by a scan of the journal
  (``phases.page``) instead, as are all requests when the index cannot follow (it is restarting after an
  error, or the app serves without one). The objects that lost items are remembered (``trimmed``; past
  ``keep`` of them, every object counts as trimmed), so an object's last items come from memory unless
  it lost some. Retention may since have pruned the records of items the index still holds; the index
  keeps serving them (history is worth more than the seqs it came from).
* Scale sets kept whole: the items of scale sets, runner sets and listeners (``KEPT``) stay with their
  object when the oldest are dropped, up to ``KEPT_ITEMS`` per object (past that its oldest go and it
  counts as trimmed), until the object's history has ended before the horizon. On a journal of 20,000
  runners the runners' items fill ``keep`` many times over, and without this every scale set view and
  history would be a scan of the scale set's records (each runner's change observes it again); these
  objects are few, so the memory stays bounded by the fleet, not by the journal.
* Resilient: an error while following is logged and the follow restarts where it stopped, after a backoff
  that doubles from ``RESTART`` up to ``RESTART_MAX`` seconds (back to ``RESTART`` once a record folds).
* The scale set view's validator: the seq of the last observed record about each object the view shows
  (``observed_seq``, kept only for the four ARC kinds and Pods while they exist), so its ETag changes when
  something it shows does, not on every append.
* Warnings: the last Warning Event arcsm emitted about each object (an ``EmitEvent`` effect record whose
  event type is Warning, ``warning``), kept while the object exists (its DELETED drops it), for the
  fleet overview and the scale set view.
* Filled a page at a time: until it is live, the index reads the journal ``CATCH_UP`` records per read
  and wakes the requests waiting on it once per page (waking them per record cost a quarter of the
  fill), then tails it from there; the event loop is held for one page at a time. (Reading only the
  record types it folds was slower: SQLite takes the type index and sorts.)
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import sys
from collections.abc import Callable, Iterable
from typing import NamedTuple, Protocol

from api import phasehistory
from api.models import PhaseItem, PhasePage
from statemachines.jsonvalues import section, str_or_none
from store.errors import JournalClosed
from store.ports import JournalReader, JournalTail
from store.records import Record, RecordType

log = logging.getLogger("arcsm.api")

KEEP = 50_000  # items held in memory
RESTART = 0.5  # seconds before following again after an error, doubled per failure in a row
RESTART_MAX = 30.0
OBSERVED_KINDS = phasehistory.KINDS | {"Pod"}
CATCH_UP = 1_000  # records read at a time while the index first fills
KEPT = frozenset({"AutoscalingRunnerSet", "EphemeralRunnerSet", "AutoscalingListener"})
KEPT_ITEMS = 1_000  # items a kept object holds at most

Key = tuple[str, str, str]


class Followed(JournalReader, JournalTail, Protocol):
    """What the index follows: a journal it reads while it fills, then tails."""


class Warned(NamedTuple):
    """The last Warning Event arcsm emitted about an object (``EmitEvent`` effect record)."""

    seq: int
    at: str
    kind: str
    namespace: str
    name: str
    reason: str
    message: str

    @classmethod
    def of(cls, record: Record) -> Warned | None:
        """The Warning ``record`` emits, or None (another effect, or a Normal Event)."""
        body = record.body
        if body.get("type") != "EmitEvent" or body.get("event_type") != "Warning":
            return None
        target = section(body, "target")
        return cls(
            record.seq or 0,
            record.at,
            str_or_none(target.get("kind")) or record.kind,
            str_or_none(target.get("namespace")) or record.namespace,
            str_or_none(target.get("name")) or record.name,
            str_or_none(body.get("reason")) or "",
            str_or_none(body.get("message")) or "",
        )


class Held(NamedTuple):
    """One ``PhaseItem`` as the index holds it: its fields in order, the revisions as pairs."""

    seq: int
    at: str
    kind: str
    namespace: str
    name: str
    uid: str
    from_: str | None
    to: str | None
    trigger: str
    reason: str
    revisions: tuple[tuple[str, int], ...]
    source: str

    @classmethod
    def of(cls, item: PhaseItem) -> Held:
        return cls(
            item.seq,
            item.at,
            sys.intern(item.kind),
            sys.intern(item.namespace),
            sys.intern(item.name),
            sys.intern(item.uid),
            None if item.from_ is None else sys.intern(item.from_),
            None if item.to is None else sys.intern(item.to),
            sys.intern(item.trigger),
            sys.intern(item.reason),
            tuple((sys.intern(name), value) for name, value in item.revisions.items()),
            sys.intern(item.source),
        )

    def as_item(self) -> PhaseItem:
        return PhaseItem(
            seq=self.seq,
            at=self.at,
            kind=self.kind,
            namespace=self.namespace,
            name=self.name,
            uid=self.uid,
            from_=self.from_,
            to=self.to,
            trigger=self.trigger,
            reason=self.reason,
            revisions=dict(self.revisions),
            source=self.source,
        )


class PhaseIndex:
    def __init__(self, items_of_decision: phasehistory.ItemsOf, *, keep: int = KEEP) -> None:
        self.keep = keep
        self.seq = 0  # the last record folded
        self.horizon = 0  # items with seq > horizon are all held
        self.following = False
        self.live = False  # the index reached the journal's end once
        self.restarts = 0
        self._history = phasehistory.History(items_of_decision)
        self._trimmed: set[Key] | None = set()  # None: too many to track, every object may have lost items
        self.kept_items = KEPT_ITEMS if keep else 0  # an index that keeps nothing keeps no scale set either
        self._kept_trimmed: set[Key] | None = set()  # the objects of KEPT kinds that lost items
        self._items: list[Held] = []
        self._by_object: dict[Key, list[Held]] = {}  # lists: a deque holds a block of about 600 bytes
        self._observed: dict[Key, int] = {}
        self._warnings: dict[Key, Warned] = {}
        self._folded = asyncio.Condition()

    # -- feeding ---------------------------------------------------------------------------------------------

    def feed(self, record: Record) -> None:
        """Fold one record (records come in seq order)."""
        found = self._history.feed(record)
        for item in map(Held.of, found):
            self._items.append(item)
            self._by_object.setdefault((item.kind, item.namespace, item.name), []).append(item)
        if record.type is RecordType.OBSERVED and record.kind in OBSERVED_KINDS:
            key = (record.kind, record.namespace, record.name)
            if record.body.get("event") == "DELETED":
                self._observed.pop(key, None)
                self._warnings.pop(key, None)
            else:
                self._observed[key] = record.seq or 0
        elif record.type is RecordType.EFFECT and (warned := Warned.of(record)) is not None:
            self._warnings[(warned.kind, warned.namespace, warned.name)] = warned
        self.seq = max(self.seq, record.seq or 0)
        if len(self._items) > self.keep + self.keep // 4:  # trim in batches: amortised O(1) per item
            self._drop(len(self._items) - self.keep)

    def _drop(self, count: int) -> None:
        dropped, self._items = self._items[:count], self._items[count:]
        kept: set[Key] = set()
        for item in dropped:
            key = (item.kind, item.namespace, item.name)
            if item.kind in KEPT and self.kept_items:
                kept.add(key)  # stays with its object: see below
                continue
            held = self._by_object.get(key)
            if self._trimmed is not None:
                self._trimmed.add(key)
                if len(self._trimmed) > self.keep:
                    self._trimmed = None
            if held:
                del held[0]  # an object holds a few items: cheaper than a deque's fixed block
                if not held:
                    del self._by_object[key]
        self.horizon = max(self.horizon, dropped[-1].seq)
        for key in kept:
            held = self._by_object.get(key)
            if not held:
                continue
            if held[-1].to is None and held[-1].seq <= self.horizon:  # it ended before the horizon
                del self._by_object[key]
                self._trim_kept(key)
            elif len(held) > self.kept_items:
                del held[: len(held) - self.kept_items]
                self._trim_kept(key)

    def _trim_kept(self, key: Key) -> None:
        if self._kept_trimmed is not None:
            self._kept_trimmed.add(key)
            if len(self._kept_trimmed) > self.keep:
                self._kept_trimmed = None

    def trimmed(self, key: Key) -> bool:
        """Whether the index dropped items of the object ``key``."""
        if key[0] in KEPT and self.kept_items:
            return self._kept_trimmed is None or key in self._kept_trimmed
        return self._trimmed is None or key in self._trimmed

    async def reached(self, seq: int) -> None:
        """The journal holds no record after ``seq`` the index has not folded (retention pruned them)."""
        if self.live and self.seq >= seq:
            return
        self.seq = max(self.seq, seq)
        self.live = True
        async with self._folded:
            self._folded.notify_all()

    async def follow(self, journal: Followed) -> None:
        """Fold every record of ``journal`` from its first, then each new one, until the journal closes or
        the task is cancelled; after any other error, log it and follow again from the last record folded
        (requests scan meanwhile)."""
        if self.seq == 0:
            self._history.raw_horizon = phasehistory.raw_horizon(journal)
        delay = RESTART
        while True:
            started = self.seq
            try:
                await self._follow(journal)
                return
            except asyncio.CancelledError:
                raise
            except JournalClosed:
                return  # nothing more to follow
            except Exception as exc:  # never take the API down with the index: requests scan meanwhile
                if self.seq > started:
                    delay = RESTART  # it folded records since the last failure: not failing in a row
                self.restarts += 1
                log.error(
                    "the phase history index failed after seq %d (%s); following again in %.1f s",
                    self.seq,
                    exc,
                    delay,
                )
            await asyncio.sleep(delay)
            delay = min(RESTART_MAX, delay * 2)

    async def _follow(self, journal: Followed) -> None:
        self.following = True
        try:
            if not self.live:
                await self._fill(journal)
            async for record in journal.tail(after=self.seq):
                self.feed(record)
                if not self.live and self.seq >= journal.last_seq:
                    self.live = True
                async with self._folded:
                    self._folded.notify_all()
        finally:
            self.following = False
            async with self._folded:
                self._folded.notify_all()

    async def _fill(self, journal: Followed) -> None:
        """Fold every record up to the journal's last seq now, a page at a time."""
        tip = journal.last_seq
        while self.seq < tip:
            batch = await journal.read(after=self.seq, through=tip, limit=CATCH_UP)
            for record in batch:
                self.feed(record)
            if len(batch) < CATCH_UP:
                self.seq = tip  # retention pruned the rest up to the tip
            async with self._folded:
                self._folded.notify_all()
        if self.seq >= journal.last_seq:
            self.live = True

    async def caught_up(self, seq: int) -> bool:
        """Wait until every record up to ``seq`` is folded; False when the index does not follow."""
        async with self._folded:
            await self._folded.wait_for(lambda: self.seq >= seq or not self.following)
        return self.seq >= seq

    # -- answering -------------------------------------------------------------------------------------------

    def page(
        self,
        *,
        after: int,
        limit: int,
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        reaffirmed: bool = True,
    ) -> PhasePage | None:
        """As ``phases.page`` answers, from memory; None when items after ``after`` may have been dropped."""
        whole = kind in KEPT and namespace is not None and name is not None
        if after < self.horizon and not (whole and not self.trimmed((str(kind), str(namespace), str(name)))):
            return None
        if kind is not None and namespace is not None and name is not None:
            candidates: Iterable[Held] = _after(list(self._by_object.get((kind, namespace, name), ())), after)
        else:
            candidates = _after(self._items, after)
        items: list[Held] = []
        group: list[Held] = []  # the items of one record: a page never splits them
        for item in candidates:
            if not _matches(item, kind, namespace, name) or (not reaffirmed and phasehistory.reaffirms(item)):
                continue
            if group and item.seq != group[0].seq:
                if items and len(items) + len(group) > limit:
                    return _page(items, next=items[-1].seq)
                items.extend(group)
                group = []
                if len(items) >= limit:
                    return _page(items, next=items[-1].seq)
            group.append(item)
        if group and items and len(items) + len(group) > limit:
            return _page(items, next=items[-1].seq)
        items.extend(group)
        # As the scan: a full page names a next one, which may be empty; a page short of the limit is last.
        return _page(items, next=items[-1].seq if items and len(items) >= limit else None)

    def last(
        self, *, kind: str, namespace: str, name: str, count: int, reaffirmed: bool = True
    ) -> list[PhaseItem]:
        """The newest ``count`` items of one object held, oldest first (without re-affirmations unless
        ``reaffirmed``)."""
        if count <= 0:
            return []
        newest: list[PhaseItem] = []
        for item in reversed(self._by_object.get((kind, namespace, name), ())):
            if reaffirmed or not phasehistory.reaffirms(item):
                newest.append(item.as_item())
                if len(newest) == count:
                    break
        return newest[::-1]

    def newest(
        self, *, kind: str, count: int, keep: Callable[[str, str], bool] = lambda namespace, name: True
    ) -> list[PhaseItem]:
        """The newest ``count`` phase changes (no re-affirmations, no ends) of objects of ``kind`` that
        ``keep(namespace, name)`` accepts, newest first."""
        found: list[PhaseItem] = []
        for item in reversed(self._items):
            if len(found) >= count:
                break
            if (
                item.kind == kind
                and item.to is not None
                and not phasehistory.reaffirms(item)
                and keep(item.namespace, item.name)
            ):
                found.append(item.as_item())
        return found

    def warning(self, key: Key) -> Warned | None:
        """The last Warning Event emitted about the object ``key`` while it exists, if any."""
        return self._warnings.get(key)

    def observed_seq(self, keys: Iterable[Key]) -> int:
        """The seq of the last observed record about any of ``keys`` (0 for none)."""
        return max((self._observed.get(key, 0) for key in keys), default=0)


def _page(items: list[Held], *, next: int | None) -> PhasePage:
    return PhasePage(items=[item.as_item() for item in items], next=next)


def _after(items: list[Held], after: int) -> Iterable[Held]:
    start = bisect.bisect_right(items, after, key=lambda item: item.seq)
    return (items[i] for i in range(start, len(items)))


def _matches(item: Held, kind: str | None, namespace: str | None, name: str | None) -> bool:
    return (
        (kind is None or item.kind == kind)
        and (namespace is None or item.namespace == namespace)
        and (name is None or item.name == name)
    )
