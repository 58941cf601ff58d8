"""The fold: the controller's own reading of the journal, one record at a time, in seq order.

It keeps, as of the last record it applied (``seq``): the projection (latest object per key and the owner
index), the effect results (``snapshotting.Results``) and the clock (that record's ``at``). Every
snapshot is built from it, so a decision depends on a journal prefix and nothing else, and a replay that
folds the same records decides the same. ``apply`` answers which keys the record asks to decide
(``mapping``): an observed change maps to its keys, a ``timer`` record to its key; ``advance`` folds the
same way without that answer (a replay decides the keys the journal recorded).

``resume`` starts a fold where the journal is now: the projection is copied from the journal's, the
results are read back from the journal's ``effect_result`` records. Records before that point need no
mapping: a controller that starts decides every object once anyway.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Protocol

from controller.loop import mapping, snapshotting
from controller.loop.declared import DECIDED
from controller.loop.snapshotting import Results, View
from statemachines.effects import ObjectRef
from statemachines.kinds import ER
from store import clocks
from store.ports import JournalReader
from store.projection import Projection
from store.records import Record, RecordType

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PAGE = 1_000
RECENT = 10_000  # observed objects whose last seq the fold remembers (for expectations)


class Reader(JournalReader, Protocol):
    """A journal to resume from: its projection now and its records (``store.journal.Journal`` is one)."""

    projection: Projection


class FoldStopped(Exception):
    """The fold stopped (the journal closed, or tailing it failed): nothing it has not applied will be."""


class Expectation:
    """Writes a reconcile made whose watch events it waits for, so the next decision of its key reads them
    (controller-runtime's "expectations"): done once every target is observed after seq ``after``."""

    def __init__(self, pending: set[ObjectRef], after: int) -> None:
        self.pending = pending
        self.after = after
        self._done = asyncio.Event()
        if not pending:
            self._done.set()

    def drop(self, target: ObjectRef) -> None:
        """``target`` was observed, or no event is coming for it (the write failed or changed nothing)."""
        self.pending.discard(target)
        if not self.pending:
            self._done.set()

    async def wait(self, timeout: float) -> bool:
        """True once every target was observed; False when ``timeout`` seconds passed first."""
        try:
            async with asyncio.timeout(timeout):
                await self._done.wait()
        except TimeoutError:
            return False
        return True


class Fold:
    def __init__(
        self,
        projection: Projection,
        results: Results | None = None,
        *,
        at: str = "",
        use_predicates: bool = True,
    ) -> None:
        self.projection = projection
        self.results = results or Results()
        self.use_predicates = use_predicates
        self._at = at
        self._now: datetime | None = None
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._expected: dict[ObjectRef, list[Expectation]] = {}
        # The seq each recently observed object was last seen at (bounded: old entries are dropped).
        self._recent: collections.OrderedDict[ObjectRef, int] = collections.OrderedDict()
        self._stopped: BaseException | None = None

    @property
    def seq(self) -> int:
        return self.projection.seq

    @property
    def now(self) -> datetime:
        """The journal's clock: the time of the last record applied."""
        if self._now is None:
            self._now = clocks.parse_time(self._at) if self._at else EPOCH
        return self._now

    def view(self) -> View:
        return View(projection=self.projection, results=self.results, now=self.now, seq=self.seq)

    # -- applying ------------------------------------------------------------------------------------------

    def apply(self, record: Record) -> list[ObjectRef]:
        """Fold ``record`` in; return the keys it asks to decide."""
        keys: list[ObjectRef] = []
        if record.type is RecordType.OBSERVED:
            keys = self._observe(record)
        else:
            self.projection.apply(record)
            if record.type is RecordType.EFFECT_RESULT:
                self.remember(record)
            elif record.type is RecordType.TIMER:
                keys = [ObjectRef(record.kind, record.namespace, record.name)]
        if record.at:
            self._at, self._now = record.at, None
        self._wake()
        return keys

    def advance(self, record: Record) -> None:
        """Fold ``record`` in as ``apply`` does, without asking which keys it wakes nor meeting
        expectations: for a replay, which decides the keys the journal recorded and waits for nothing."""
        if record.type is RecordType.OBSERVED and record.kind in DECIDED:
            self.projection.apply(record)
            if self.projection.get(record.kind, record.namespace, record.name) is None:
                self._gone(record)
        else:
            self.projection.apply(record)
            if record.type is RecordType.EFFECT_RESULT:
                self.remember(record)
        if record.at:
            self._at, self._now = record.at, None

    def _observe(self, record: Record) -> list[ObjectRef]:
        self._seen(ObjectRef(record.kind, record.namespace, record.name), record.seq or 0)
        old = self.projection.get(record.kind, record.namespace, record.name)
        self.projection.apply(record)
        new = self.projection.get(record.kind, record.namespace, record.name)
        if new is None and record.kind in DECIDED:
            self._gone(record)
        if old is None and new is None:  # a DELETED of an object never seen: its last state is the body
            gone = record.body.get("object")
            old = gone if isinstance(gone, Mapping) else None
        change = mapping.Change(record.kind, record.namespace, record.name, old=old, new=new)
        return mapping.keys_for(change, self.projection, use_predicates=self.use_predicates)

    def _gone(self, record: Record) -> None:
        """The object of ``record`` (a decided kind) is gone: drop its results, a runner's in its set too."""
        self.results.forget(ObjectRef(record.kind, record.namespace, record.name))
        last = record.body.get("object")
        if record.kind == ER and isinstance(last, Mapping):
            self.results.forget_runner(last)

    def remember(self, record: Record) -> None:
        """Keep an effect result, if its subject is still the object it was recorded for."""
        current = self.projection.get(record.kind, record.namespace, record.name)
        if current is None:
            return
        current_uid = snapshotting.uid(current)
        if record.uid and current_uid and record.uid != current_uid:
            return
        self.results.apply(record)

    # -- waiting -------------------------------------------------------------------------------------------

    def expect(self, targets: Iterable[ObjectRef], *, after: int) -> Expectation:
        """An expectation that each of ``targets`` is observed in a record after seq ``after`` (the seq the
        decision read): register it before the writes are made, so no watch event of theirs is missed."""
        pending = {t for t in targets if self._recent.get(t, 0) <= after}
        expectation = Expectation(pending, after)
        for target in pending:
            self._expected.setdefault(target, []).append(expectation)
        return expectation

    def withdraw(self, expectation: Expectation) -> None:
        """Stop tracking ``expectation`` (met, or given up on)."""
        for target in list(expectation.pending):
            expectation.drop(target)
            self._unregister(target, expectation)

    def _seen(self, target: ObjectRef, seq: int) -> None:
        self._recent[target] = seq
        self._recent.move_to_end(target)
        if len(self._recent) > RECENT:
            self._recent.popitem(last=False)
        for expectation in list(self._expected.get(target, ())):
            if seq > expectation.after:
                expectation.drop(target)
                self._unregister(target, expectation)

    def _unregister(self, target: ObjectRef, expectation: Expectation) -> None:
        waiting = self._expected.get(target)
        if waiting is not None and expectation in waiting:
            waiting.remove(expectation)
            if not waiting:
                del self._expected[target]

    async def reached(self, seq: int) -> None:
        """Return once every record up to ``seq`` is applied; raise ``FoldStopped`` if it never will be."""
        if self.seq >= seq:
            return
        if self._stopped is not None:
            raise FoldStopped("the journal is no longer read") from self._stopped
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((seq, future))
        await future

    def stop(self, cause: BaseException | None = None) -> None:
        """No record will be applied any more: fail every wait for one."""
        self._stopped = cause or FoldStopped("the journal closed")
        waiters, self._waiters = self._waiters, []
        for _, future in waiters:
            if not future.done():
                future.set_exception(FoldStopped("the journal is no longer read"))

    def _wake(self) -> None:
        if not self._waiters:
            return
        seq, still = self.seq, []
        for waited, future in self._waiters:
            if waited <= seq:
                if not future.done():
                    future.set_result(None)
            else:
                still.append((waited, future))
        self._waiters = still


async def resume(journal: Reader, *, use_predicates: bool = True) -> Fold:
    """A fold at the journal's last record: its projection copied, its effect results read back."""
    projection = Projection.from_snapshot(journal.projection.for_snapshot())
    seq = projection.seq
    last = await journal.read(after=seq - 1, through=seq) if seq else []
    fold = Fold(projection, at=last[0].at if last else "", use_predicates=use_predicates)
    after = 0
    while True:
        page = await journal.read(
            after=after, through=seq, limit=PAGE, types=frozenset({RecordType.EFFECT_RESULT})
        )
        for record in page:
            fold.remember(record)
        if len(page) < PAGE:
            break
        assert page[-1].seq is not None
        after = page[-1].seq
    return fold
