"""The phase history index as the app runs it (``api.phaseindex`` through ``api.phases``): caught up when
retention pruned the records it never saw, not waited for while it first folds a large journal (503 with
Retry-After over HTTP), following again after an error, and the scale set view's last items served from
memory for the objects that lost none. The journal is an in-memory list (``ListReader``) with a tail."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from api import phaseindex, phases
from api.app import create_app
from api.phaseindex import PhaseIndex
from api.ports import ReadinessReport
from store.projection import Projection
from store.records import Record, RecordType, Seq
from tests.helpers import eventually
from tests.unit.api.listreader import ListReader

ARS = "AutoscalingRunnerSet"


def decided(seq: int, to: str, *, name: str = "arc", kind: str = ARS) -> Record:
    subject = {"kind": kind, "namespace": "default", "name": name}
    return Record(
        type=RecordType.DECISION,
        kind=kind,
        namespace="default",
        name=name,
        uid=f"u-{name}",
        body={
            "transitions": [
                {"from": None, "to": to, "trigger": "t", "reason": "r", "revisions": {}, "subject": subject}
            ]
        },
        seq=Seq(seq),
        at="2026-01-01T00:00:00Z",
    )


class ListJournal(ListReader):
    """A journal over a list: ``last_seq`` may be above its last record (the rest were pruned), and its
    tail yields the records it holds then waits; ``failures`` tails raise before yielding anything."""

    def __init__(self, records: list[Record], *, last_seq: int | None = None, failures: int = 0) -> None:
        super().__init__(records)
        self.last_seq = last_seq if last_seq is not None else max((r.seq or 0 for r in records), default=0)
        self.failures = failures
        self.tails = 0
        self.projection = Projection()

    async def tail(self, *, after: int = 0) -> AsyncIterator[Record]:
        self.tails += 1
        if self.failures:
            self.failures -= 1
            raise RuntimeError("disk I/O error")
        for record in self.records:
            if (record.seq or 0) > after:
                yield record
        await asyncio.Event().wait()


async def following(index: PhaseIndex, journal: ListJournal) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(index.follow(journal))
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_an_index_whose_tail_skipped_pruned_records_is_caught_up_at_once() -> None:
    # Retention pruned everything up to the newest record: the tail moves to the end yielding nothing.
    journal = ListJournal([], last_seq=40_000)
    index = PhaseIndex(phases.items_of)
    async for _ in following(index, journal):
        await eventually(lambda: index.following, what="the index follows")
        assert await phases.ready_index(index, journal) is index
        assert index.live and index.seq == 40_000


async def test_a_large_journal_answers_loading_until_the_index_reached_its_end() -> None:
    big = phases.SCAN_WHILE_LOADING + 1
    journal = ListJournal([decided(big, "Pending")], last_seq=big)
    index = PhaseIndex(phases.items_of)
    with pytest.raises(phases.Loading) as raised:
        await phases.ready_index(index, journal)
    assert raised.value.retry_after >= 1
    assert "retry" in str(raised.value) and "\n" not in str(raised.value)

    small = ListJournal([decided(5, "Pending")])
    assert await phases.ready_index(PhaseIndex(phases.items_of), small) is None, "a small one is scanned"

    async for _ in following(index, journal):
        await eventually(lambda: index.live, what="the index reached the journal's end")
        assert await phases.ready_index(index, journal) is index


async def test_the_history_routes_answer_503_with_retry_after_while_the_index_loads() -> None:
    big = phases.SCAN_WHILE_LOADING + 1
    app = create_app(ListJournal([decided(big, "Pending")], last_seq=big))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app)  # no lifespan: the index never starts following
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        answer = await http.get("/api/v1/phases")
    assert answer.status_code == 503
    assert int(answer.headers["Retry-After"]) >= 1
    assert answer.json()["detail"].startswith("the phase history is still being loaded")


async def test_the_index_follows_again_after_an_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(phaseindex, "RESTART", 0.01)
    journal = ListJournal([decided(1, "Pending"), decided(2, "Running")], failures=2)
    index = PhaseIndex(phases.items_of)
    with caplog.at_level(logging.ERROR, logger="arcsm.api"):
        async for _ in following(index, journal):
            await eventually(lambda: journal.tails == 3, what="the index tailing again after two failures")
    assert index.restarts == 2 and index.seq == 2
    lines = [r.getMessage() for r in caplog.records if "phase history index" in r.getMessage()]
    assert len(lines) == 2 and all("disk I/O error" in line and "\n" not in line for line in lines)
    assert [i.to for i in index.page(after=0, limit=10).items] == ["Pending", "Running"]  # type: ignore[union-attr]


async def test_an_object_that_lost_no_items_is_served_from_memory_after_a_trim() -> None:
    # Runners (a scale set keeps its items whole): "busy" decides often and loses its oldest items;
    # "calm" decided once, lately, and keeps it.
    er = "EphemeralRunner"
    records = [
        *(decided(seq, "Running", name="busy", kind=er) for seq in range(1, 11)),
        decided(11, "Pending", name="calm", kind=er),
    ]
    journal = ListJournal(records)
    index = PhaseIndex(phases.items_of, keep=4)
    for record in records:
        index.feed(record)
    await index.reached(journal.last_seq)
    assert index.horizon > 1 and index.trimmed((er, "default", "busy"))
    assert not index.trimmed((er, "default", "calm"))

    calm = await phases.served_last(index, journal, kind=er, namespace="default", name="calm", count=5)
    assert journal.reads == 0, "no scan for an object that lost nothing"
    assert calm == await phases.last(journal, kind=er, namespace="default", name="calm", count=5)

    reads = journal.reads
    busy = await phases.served_last(index, journal, kind=er, namespace="default", name="busy", count=5)
    assert journal.reads > reads, "an object that lost items is scanned"
    assert [i.seq for i in busy] == [6, 7, 8, 9, 10]


def test_past_keep_trimmed_objects_every_object_counts_as_trimmed() -> None:
    index = PhaseIndex(phases.items_of, keep=2)
    for seq in range(1, 10):
        index.feed(decided(seq, "Pending", name=f"r{seq}", kind="EphemeralRunner"))
    assert index.trimmed(("EphemeralRunner", "default", "never-seen"))
    # A scale set's items are kept whole, so one never seen has none: nothing to scan for.
    assert not index.trimmed((ARS, "default", "never-seen"))


async def test_one_objects_history_and_its_scale_set_are_read_from_its_records_while_the_index_loads() -> (
    None
):
    big = phases.SCAN_WHILE_LOADING + 1
    index = PhaseIndex(phases.items_of)
    journal = ListJournal([decided(big, "Pending")], last_seq=big)
    with pytest.raises(phases.Loading):
        await phases.ready_index(index, journal)
    assert await phases.ready_index(index, journal, scoped=True) is None, "scanned, not refused"
    app = create_app(journal, readiness=NoController())  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app)  # no lifespan: the index never starts following
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        answer = await http.get("/api/v1/namespaces/default/autoscalingrunnersets/arc/phases")
    assert answer.status_code == 200
    assert [item["to"] for item in answer.json()["items"]] == ["Pending"]


class NoController:
    def report(self) -> ReadinessReport:
        return ReadinessReport(journal_writable=True, synced=True, role="none")


def effect(seq: int, body: dict[str, object], *, type_: RecordType = RecordType.EFFECT) -> Record:
    return Record(type=type_, kind=ARS, namespace="default", name="arc", body=body, seq=Seq(seq), at="t")


def warning(seq: int, reason: str, *, event_type: str = "Warning", name: str = "arc") -> Record:
    target = {"kind": ARS, "namespace": "default", "name": name}
    body = {"type": "EmitEvent", "target": target, "event_type": event_type, "reason": reason, "message": "m"}
    return effect(seq, body)


class ReadCounting(ListJournal):
    """A ListJournal that counts the records each read returned."""

    def __init__(self, records: list[Record]) -> None:
        super().__init__(records)
        self.pages: list[int] = []

    async def read(self, **filters: object) -> list[Record]:  # type: ignore[override]
        found = await super().read(**filters)  # type: ignore[arg-type]
        self.pages.append(len(found))
        return found


async def test_the_index_fills_a_page_at_a_time_then_tails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phaseindex, "CATCH_UP", 2)
    result = effect(2, {"ok": True}, type_=RecordType.EFFECT_RESULT)
    records = [decided(1, "Pending"), result, warning(3, "Refused"), decided(4, "Running"), effect(5, {})]
    journal = ReadCounting(records)
    index = PhaseIndex(phases.items_of)
    async for _ in following(index, journal):
        await eventually(lambda: index.live, what="the index filled")
        assert index.seq == 5 and journal.pages == [2, 2, 1], "CATCH_UP (2) records a read"
        assert journal.tails == 1, "then it tails"
        assert [i.to for i in index.page(after=0, limit=10).items] == ["Pending", "Running"]  # type: ignore[union-attr]
        warned = index.warning((ARS, "default", "arc"))
        assert warned is not None and (warned.reason, warned.seq) == ("Refused", 3)


def test_the_last_warning_of_an_object_is_kept_while_it_exists() -> None:
    index = PhaseIndex(phases.items_of)
    index.feed(warning(1, "First"))
    index.feed(warning(2, "Second"))
    index.feed(warning(3, "Fine", event_type="Normal"))
    index.feed(
        effect(4, {"type": "MergePatch", "target": {"kind": ARS, "namespace": "default", "name": "arc"}})
    )
    index.feed(warning(5, "Other", name="other"))
    warned = index.warning((ARS, "default", "arc"))
    assert warned is not None and (warned.reason, warned.seq, warned.at) == ("Second", 2, "t")
    gone = Record(
        type=RecordType.OBSERVED,
        kind=ARS,
        namespace="default",
        name="arc",
        body={"event": "DELETED", "object": {"metadata": {"name": "arc", "namespace": "default"}}},
        seq=Seq(6),
        at="t",
    )
    index.feed(gone)
    assert index.warning((ARS, "default", "arc")) is None
    assert index.warning((ARS, "default", "other")) is not None
