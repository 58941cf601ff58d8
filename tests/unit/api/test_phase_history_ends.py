"""An object's history ends with its deletion, and re-affirmations are left out unless asked for
(``api.phasehistory``, through ``api.phases`` and the app's ``api.phaseindex``).

Synthetic records pin each rule (a decided end by the table's ``deleted`` row, by a finalizer release on a
terminating object, an observed end, nothing after an end); every recorded journal under
``tests/journals`` is then folded to check the rules hold on real runs: each object observed DELETED has
exactly one end, at or before its DELETED, nothing of it follows, and the index answers as the scan does
with and without re-affirmations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from api import phasehistory, phases
from api.models import PhaseItem
from api.phaseindex import PhaseIndex
from controller.commands.replay_command import load_jsonl
from store.records import Record, RecordType, Seq
from tests.unit.api.listreader import ListReader

ARS = "AutoscalingRunnerSet"
ER = "EphemeralRunner"
JOURNALS = sorted((Path(__file__).parents[2] / "journals").glob("*.jsonl.gz"))


def observed(
    seq: int, phase: str | None, *, kind: str = ARS, uid: str = "u1", event: str = "MODIFIED", **meta: Any
) -> Record:
    status = {"phase": phase} if phase is not None else {}
    obj = {"metadata": {"name": "arc", "namespace": "default", "uid": uid, **meta}, "status": status}
    return Record(
        type=RecordType.OBSERVED,
        kind=kind,
        namespace="default",
        name="arc",
        uid=uid,
        body={"event": event, "object": obj},
        seq=Seq(seq),
        at="2026-01-01T00:00:00Z",
    )


def decided(
    seq: int,
    *steps: tuple[str, str, str],
    kind: str = ARS,
    effects: tuple[str, ...] = (),
    note: str = "",
    uid: str = "u1",
) -> Record:
    subject = {"kind": kind, "namespace": "default", "name": "arc"}
    transitions = [
        {"from": f, "to": t, "trigger": trigger, "reason": f"{trigger}!", "revisions": {}, "subject": subject}
        for f, t, trigger in steps
    ]
    return Record(
        type=RecordType.DECISION,
        kind=kind,
        namespace="default",
        name="arc",
        uid=uid,
        body={"subject": subject, "transitions": transitions, "effects": list(effects), "note": note},
        seq=Seq(seq),
        at="2026-01-01T00:00:00Z",
    )


def story(items: list[PhaseItem]) -> list[tuple[int, str | None, str | None, str, str]]:
    return [(i.seq, i.from_, i.to, i.trigger, i.source) for i in items]


async def everything(records: list[Record], **options: Any) -> list[PhaseItem]:
    return (await phases.page(ListReader(records), after=0, limit=10_000, **options)).items


async def test_the_tables_deleted_row_is_the_end_and_the_deleted_that_follows_adds_nothing() -> None:
    records = [
        decided(1, ("", "Pending", "generation_advanced")),
        observed(2, "Pending"),
        decided(3, ("Pending", "Running", "settled")),
        observed(4, "Running", deletionTimestamp="2026-01-01T00:00:01Z"),
        decided(
            5,
            ("Running", "Running", "deleted"),
            effects=("MergePatch:patch:AutoscalingRunnerSet/default/arc",),
        ),
        observed(6, "Running", deletionTimestamp="2026-01-01T00:00:01Z"),  # a late version: nothing
        observed(7, "Running", event="DELETED"),
    ]
    items = await everything(records)
    assert story(items) == [
        (1, None, "Pending", "generation_advanced", "decided"),
        (3, "Pending", "Running", "settled", "decided"),
        (5, "Running", None, "deleted", "decided"),
    ]
    assert items[-1].reason == "deleted!" and items[-1].uid == "u1"


async def test_a_finalizer_released_on_a_terminating_runner_ends_it_with_the_decisions_note() -> None:
    release = ("MergePatch:patch:EphemeralRunner/default/arc",)
    records = [
        decided(1, ("", "Pending", "pod_phase"), kind=ER),
        decided(2, ("Pending", "Running", "pod_phase"), kind=ER),
        decided(3, kind=ER, effects=release, note="finalizer added"),  # not terminating: not an end
        observed(4, "Running", kind=ER, deletionTimestamp="2026-01-01T00:00:01Z"),
        decided(5, kind=ER, effects=("DeleteObject:delete:Pod/default/arc",), note="deleting the pod"),
        decided(6, kind=ER, effects=release, note="deleting: finalizers removed"),
        observed(7, "Running", kind=ER, event="DELETED"),
    ]
    items = await everything(records)
    assert story(items) == [
        (1, None, "Pending", "pod_phase", "decided"),
        (2, "Pending", "Running", "pod_phase", "decided"),
        (6, "Running", None, "deleted", "decided"),
    ]
    assert items[-1].reason == "deleting: finalizers removed"


async def test_a_deletion_only_observed_ends_the_history_and_a_new_uid_starts_over() -> None:
    records = [
        observed(1, "Pending"),
        observed(2, "Running"),
        observed(3, "Running", event="DELETED"),
        observed(4, "Pending", uid="u2"),
    ]
    items = await everything(records)
    assert story(items) == [
        (1, None, "Pending", "", "observed"),
        (2, "Pending", "Running", "", "observed"),
        (3, "Running", None, "deleted", "observed"),
        (4, None, "Pending", "", "observed"),
    ]
    assert items[2].reason == phasehistory.GONE
    assert [i.uid for i in items] == ["u1", "u1", "u1", "u2"]


async def test_after_pruning_a_deleted_object_still_ends_and_one_never_seen_does_not() -> None:
    gone = [observed(9, "Running", event="DELETED")]
    assert story(await everything(gone, raw_horizon=8)) == [(9, None, None, "deleted", "observed")]
    assert await everything(gone) == [], "no record before it and nothing pruned: nothing to end"


async def test_reaffirmations_are_left_out_only_when_asked() -> None:
    records = [
        decided(1, ("", "Pending", "generation_advanced"), ("Pending", "Pending", "recovery_republished")),
        decided(2, ("Pending", "Running", "settled")),
        decided(3, ("Running", "Running", "settled")),
        decided(4, ("Running", "Running", "deleted")),
    ]
    every = await everything(records)
    assert [i.seq for i in every] == [1, 1, 2, 3, 4]
    changes = await everything(records, reaffirmed=False)
    assert story(changes) == [
        (1, None, "Pending", "generation_advanced", "decided"),
        (2, "Pending", "Running", "settled", "decided"),
        (4, "Running", None, "deleted", "decided"),
    ], "the end is not a re-affirmation, though the row keeps the phase"
    index = PhaseIndex(phases.items_of)
    for record in records:
        index.feed(record)
    held = index.page(after=0, limit=2, reaffirmed=False)
    assert held is not None and story(held.items) == story(changes[:2]) and held.next == 2
    last = index.last(kind=ARS, namespace="default", name="arc", count=2, reaffirmed=False)
    assert story(last) == story(changes[1:])
    scanned = await phases.last(
        ListReader(records), kind=ARS, namespace="default", name="arc", count=2, reaffirmed=False
    )
    assert scanned == last


def test_there_are_recorded_deletions() -> None:
    deleted = [
        path
        for path in JOURNALS
        if any(r.body.get("event") == "DELETED" and r.kind in phasehistory.KINDS for r in load_jsonl(path))
    ]
    assert len(deleted) >= 3


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
async def test_a_recorded_journal_ends_each_deleted_object_once_and_nothing_follows(path: Path) -> None:
    records = load_jsonl(path)
    items = await everything(records)
    deleted = {
        (r.kind, r.namespace, r.name, r.uid): r.seq
        for r in records
        if r.type is RecordType.OBSERVED and r.body.get("event") == "DELETED" and r.kind in phasehistory.KINDS
    }
    ends: dict[tuple[str, str, str, str], int] = {}
    for item in items:
        key = (item.kind, item.namespace, item.name, item.uid)
        assert key not in ends, f"seq {item.seq}: an item of {key} after its end at seq {ends.get(key)}"
        if item.to is None:
            assert item.trigger == "deleted" and item.reason
            ends[key] = item.seq
    assert set(ends) == set(deleted), "an end for each object observed DELETED, and only for those"
    assert all(ends[key] <= deleted[key] for key in ends)

    index = PhaseIndex(phases.items_of)
    for record in records:
        index.feed(record)
    for reaffirmed in (True, False):
        held = index.page(after=0, limit=10_000, reaffirmed=reaffirmed)
        scanned = await phases.page(ListReader(records), after=0, limit=10_000, reaffirmed=reaffirmed)
        assert held == scanned
