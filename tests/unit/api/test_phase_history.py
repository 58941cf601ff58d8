"""Phase history across replicas (``api.phasehistory`` through ``api.phases``): decided transitions, phase
changes observed while another replica decided (of the four ARC kinds only, their triggers in snake_case),
no duplicate when a replica observes its own write, paging from the middle of the journal; and the app's
in-memory index (``api.phaseindex``), which answers as the scan does and hands back to it past its
horizon. The reader is an in-memory list of records filtered as the journal filters them."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from api import phasehistory, phaseindex, phases
from api.phaseindex import PhaseIndex
from store.records import Record, RecordType, Seq
from tests.unit.api.listreader import ListReader

ARS = "AutoscalingRunnerSet"


def observed(
    seq: int,
    phase: str | None,
    *,
    uid: str = "u1",
    event: str = "MODIFIED",
    kind: str = ARS,
    name: str = "arc",
    **ready: str,
) -> Record:
    status: dict[str, Any] = {"observedGeneration": 1}
    if phase is not None:
        status["phase"] = phase
    if ready:
        status["conditions"] = [{"type": "Ready", "status": "True", **ready}]
    obj = {"metadata": {"name": name, "namespace": "default", "uid": uid, "generation": 2}, "status": status}
    return Record(
        type=RecordType.OBSERVED,
        kind=kind,
        namespace="default",
        name=name,
        uid=uid,
        body={"event": event, "object": obj},
        seq=Seq(seq),
        at="2026-01-01T00:00:00Z",
    )


def decided(seq: int, *steps: tuple[str | None, str], uid: str = "u1") -> Record:
    subject = {"kind": ARS, "namespace": "default", "name": "arc"}
    transitions = [
        {"from": f, "to": t, "trigger": "t", "reason": "r", "revisions": {}, "subject": subject}
        for f, t in steps
    ]
    return Record(
        type=RecordType.DECISION,
        kind=ARS,
        namespace="default",
        name="arc",
        uid=uid,
        body={"transitions": transitions},
        seq=Seq(seq),
        at="2026-01-01T00:00:00Z",
    )


def story(items: list[Any]) -> list[tuple[int, str | None, str | None, str]]:
    return [(i.seq, i.from_, i.to, i.source) for i in items]


async def test_phase_changes_observed_while_another_replica_decided_are_served_as_observed() -> None:
    reader = ListReader(
        [
            observed(1, None),
            observed(2, "Pending", reason="GenerationAdvanced", message="the spec changed"),
            observed(3, "Pending"),  # no phase change: nothing
            observed(4, "Running", reason="Settled", message="the runner set runs"),
            decided(5, ("Running", "Outdated")),
            observed(6, "Outdated", reason="RunnersRejectedSpec", message="rejected"),  # its own write
        ]
    )
    page = await phases.page(reader, after=0, limit=100, kind=ARS, namespace="default", name="arc")
    assert story(page.items) == [
        (2, None, "Pending", "observed"),
        (4, "Pending", "Running", "observed"),
        (5, "Running", "Outdated", "decided"),
    ]
    first = page.items[0]
    # The Ready reason is the trigger in CamelCase: served in the tables' snake_case, as decided ones are.
    assert (first.trigger, first.reason) == ("generation_advanced", "the spec changed")
    assert page.items[2].trigger == "t"
    assert first.revisions == {"generation": 2, "observedGeneration": 1}
    assert first.model_dump(by_alias=True)["source"] == "observed"


async def test_a_decision_that_went_on_is_matched_by_the_phase_it_wrote() -> None:
    reader = ListReader(
        [
            observed(1, None),
            decided(2, (None, "Pending"), ("Pending", "Running"), ("Running", "Running")),
            observed(3, "Running"),  # one write of the pass's last phase
            observed(4, "Outdated"),  # another replica's write
        ]
    )
    items = (await phases.page(reader, after=0, limit=100)).items
    assert story(items) == [
        (2, None, "Pending", "decided"),
        (2, "Pending", "Running", "decided"),
        (2, "Running", "Running", "decided"),
        (4, "Running", "Outdated", "observed"),
    ]


async def test_a_decision_whose_write_never_came_does_not_hide_a_later_change() -> None:
    reader = ListReader(
        [
            observed(1, "Running"),
            decided(2, ("Running", "Outdated")),  # its write was refused (this replica lost the lease)
            observed(3, "Pending"),  # the new leader's writes
            observed(4, "Outdated"),
        ]
    )
    items = (await phases.page(reader, after=0, limit=100)).items
    assert story(items) == [
        (1, None, "Running", "observed"),
        (2, "Running", "Outdated", "decided"),
        (3, "Running", "Pending", "observed"),
        (4, "Pending", "Outdated", "observed"),
    ]


async def test_after_pruning_an_objects_first_observation_is_its_starting_point() -> None:
    # Retention pruned the records up to seq 10: "arc" was observed before, its first surviving version
    # is no change from no phase. Its next one is.
    reader = ListReader([observed(11, "Running"), observed(12, "Outdated")])
    page = await phases.page(reader, after=0, limit=100, raw_horizon=10)
    assert story(page.items) == [(12, "Running", "Outdated", "observed")]
    unpruned = await phases.page(reader, after=0, limit=100)
    assert story(unpruned.items) == [
        (11, None, "Running", "observed"),
        (12, "Running", "Outdated", "observed"),
    ]


async def test_a_stale_pending_target_does_not_hide_an_observed_change() -> None:
    # This replica decided Pending before the object's first observation (its write was refused); the
    # object shows Running first, then Pending for real: that change is history.
    reader = ListReader([decided(1, (None, "Pending")), observed(2, "Running"), observed(3, "Pending")])
    items = (await phases.page(reader, after=0, limit=100)).items
    assert story(items) == [(1, None, "Pending", "decided"), (3, "Running", "Pending", "observed")]


async def test_pending_targets_are_capped_and_not_held_for_listeners() -> None:
    first = decided(2, ("Running", "Outdated"))  # never written
    later = [decided(seq, ("Outdated", f"P{seq}")) for seq in range(3, 3 + phasehistory.PENDING)]
    reader = ListReader([observed(1, "Running"), first, *later, observed(50, "Outdated")])
    items = (await phases.page(reader, after=0, limit=100)).items
    assert story(items)[-1] == (50, "Running", "Outdated", "observed"), "the oldest pending target went"

    history = phasehistory.History(phases.items_of)
    listener = decided(1, (None, "Running"))
    subject = {"kind": "AutoscalingListener", "namespace": "default", "name": "arc-listener"}
    listener.body["transitions"][0]["subject"] = subject
    assert [i.kind for i in history.feed(listener)] == ["AutoscalingListener"]
    assert history.pending_targets(("AutoscalingListener", "default", "arc-listener")) == []


async def test_a_recreated_object_starts_over_and_a_page_from_the_middle_knows_the_phase_before() -> None:
    reader = ListReader(
        [
            observed(1, "Pending"),
            observed(2, "Running"),
            observed(3, "Running", event="DELETED"),
            observed(4, "Running", uid="u2"),
            observed(5, "Outdated", uid="u2"),
        ]
    )
    everything = (await phases.page(reader, after=0, limit=100)).items
    # The first object's history ends with its deletion; the second starts from no phase.
    assert story(everything) == [
        (1, None, "Pending", "observed"),
        (2, "Pending", "Running", "observed"),
        (3, "Running", None, "observed"),
        (4, None, "Running", "observed"),
        (5, "Running", "Outdated", "observed"),
    ]
    assert everything[2].trigger == "deleted" and everything[2].uid == "u1"
    first = await phases.page(reader, after=0, limit=3)
    assert story(first.items) == story(everything[:3]) and first.next == 3
    rest = await phases.page(reader, after=first.next, limit=2)
    assert story(rest.items) == story(everything[3:])
    assert [i.uid for i in rest.items] == ["u2", "u2"]
    recent = await phases.last(reader, kind=ARS, namespace="default", name="arc", count=1)
    assert story(recent) == [(5, "Running", "Outdated", "observed")]


async def test_only_the_four_arc_kinds_have_observed_phase_changes() -> None:
    reader = ListReader(
        [
            observed(1, "Pending", kind="Pod", name="arc-runner"),
            observed(2, "Running", kind="Pod", name="arc-runner"),
            observed(3, "Succeeded", kind="Pod", name="arc-runner"),
            observed(4, "Pending", kind="EphemeralRunner", name="arc-runner", reason="RunnerCreated"),
            observed(5, "Running", kind="EphemeralRunner", name="arc-runner"),
        ]
    )
    items = (await phases.page(reader, after=0, limit=100)).items  # no kind filter: the timeline's default
    assert [(i.seq, i.kind, i.to, i.trigger) for i in items] == [
        (4, "EphemeralRunner", "Pending", "runner_created"),
        (5, "EphemeralRunner", "Running", ""),
    ]
    index = indexed(reader.records)
    assert index.page(after=0, limit=100) == await phases.page(reader, after=0, limit=100)


@pytest.mark.parametrize(
    ("reason", "trigger"),
    [
        ("RunnersRejectedSpec", "runners_rejected_spec"),
        ("runners_rejected_spec", "runners_rejected_spec"),
        ("JitConfigFailed", "jit_config_failed"),
        ("Running", "running"),
    ],
)
def test_an_observed_reason_is_served_as_the_trigger_it_came_from(reason: str, trigger: str) -> None:
    item = indexed([observed(1, "Running", reason=reason)]).last(
        kind=ARS, namespace="default", name="arc", count=1
    )
    assert [i.trigger for i in item] == [trigger]


def indexed(records: list[Record], *, keep: int = 1_000) -> PhaseIndex:
    index = PhaseIndex(phases.items_of, keep=keep)
    for record in records:
        index.feed(record)
    return index


def mixed_story() -> list[Record]:
    return [
        observed(1, "Pending"),
        decided(2, ("Pending", "Running"), ("Running", "Running")),
        observed(3, "Running"),
        observed(4, "Pending", kind="EphemeralRunnerSet", name="arc-set"),
        observed(5, "Outdated"),
        decided(6, ("Outdated", "Pending"), ("Pending", "Pending"), ("Pending", "Running")),
        observed(7, "Running", kind="EphemeralRunnerSet", name="arc-set"),
        observed(8, "Running", kind="Pod", name="arc-set"),
    ]


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 100])
@pytest.mark.parametrize("kind", [None, ARS, "EphemeralRunnerSet"])
async def test_the_index_pages_as_the_scan_does(limit: int, kind: str | None) -> None:
    reader, index = ListReader(mixed_story()), indexed(mixed_story())

    async def every(page: object) -> list[Any]:
        pages: list[Any] = []
        after: int | None = 0
        while after is not None:
            got = await page(after) if callable(page) else None  # type: ignore[misc]
            assert len(got.items) <= limit or len({i.seq for i in got.items}) == 1, (
                "a page may exceed only by one record"
            )
            pages.append(got)
            after = got.next
        return pages

    async def scanned(after: int) -> Any:
        return await phases.page(reader, after=after, limit=limit, kind=kind)

    async def held(after: int) -> Any:
        return index.page(after=after, limit=limit, kind=kind)

    # Whole pages, ``next`` included: the body and its ETag do not depend on which path answered.
    assert await every(held) == await every(scanned)
    assert [i for p in await every(held) for i in p.items], "the story has transitions of the kind"


async def test_next_is_the_last_items_seq_when_the_next_record_would_overflow_the_page() -> None:
    records = [
        decided(1, ("Pending", "Running")),
        decided(2, ("Running", "Outdated")),
        observed(3, "Outdated"),  # its own write: a record with no item
        decided(4, ("Outdated", "Pending"), ("Pending", "Running")),
    ]
    scanned = await phases.page(ListReader(records), after=0, limit=3)
    held = indexed(records).page(after=0, limit=3)
    assert [i.seq for i in scanned.items] == [1, 2] and scanned.next == 2
    assert held == scanned


async def test_the_index_holds_the_newest_items_and_hands_older_pages_to_the_scan() -> None:
    # 9 items; once past 5 (after the decision at seq 6), all but the newest 4 are dropped in one batch.
    index = indexed(mixed_story(), keep=4)
    assert index.horizon == 4
    assert index.page(after=0, limit=100) is None, "items after seq 0 were dropped: the caller scans"
    newest = index.page(after=index.horizon, limit=100)
    assert newest is not None and newest.items and all(i.seq > index.horizon for i in newest.items)
    # A scale set's own history is kept whole, as the scan reads it.
    reader = ListReader(mixed_story())
    whole = index.page(after=0, limit=100, kind=ARS, namespace="default", name="arc")
    assert whole == await phases.page(reader, after=0, limit=100, kind=ARS, namespace="default", name="arc")
    assert [i.seq for i in index.last(kind=ARS, namespace="default", name="arc", count=10)] == [
        1,
        2,
        2,
        5,
        6,
        6,
        6,
    ]
    assert not index.trimmed((ARS, "default", "arc"))
    nothing = indexed(mixed_story(), keep=0)
    assert nothing.page(after=0, limit=100, kind=ARS, namespace="default", name="arc") is None, (
        "an index that keeps no item keeps no scale set either"
    )


def runners(first: int, count: int) -> list[Record]:
    """``count`` runners seen once each (an observed item each), from seq ``first``."""
    return [
        observed(seq, "Pending", kind="EphemeralRunner", name=f"r{seq}", uid=f"r{seq}")
        for seq in range(first, first + count)
    ]


def test_a_scale_sets_history_outlives_the_runners_until_it_ended_before_the_horizon() -> None:
    index = indexed(
        [decided(1, (None, "Pending")), decided(2, ("Pending", "Running")), *runners(3, 20)], keep=4
    )
    assert index.horizon >= 10, "the runners pushed the scale set's items out of the newest"
    assert [i.to for i in index.last(kind=ARS, namespace="default", name="arc", count=5)] == [
        "Pending",
        "Running",
    ]
    assert index.trimmed(("EphemeralRunner", "default", "r3")), "a runner's items go with the horizon"

    # Deleted: its history ends, and once the end is behind the horizon the scale set goes like the rest.
    index.feed(observed(23, "Running", event="DELETED"))
    assert [i.to for i in index.last(kind=ARS, namespace="default", name="arc", count=5)][-1] is None
    assert not index.trimmed((ARS, "default", "arc")), "its end is still among the newest items"
    for record in runners(24, 20):
        index.feed(record)
    assert index.trimmed((ARS, "default", "arc"))
    assert index.last(kind=ARS, namespace="default", name="arc", count=5) == []


def test_a_scale_set_keeps_at_most_kept_items(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phaseindex, "KEPT_ITEMS", 3)
    flapping = [
        decided(seq, ("Running", "Pending") if seq % 2 else ("Pending", "Running")) for seq in range(1, 30)
    ]
    index = indexed(flapping, keep=4)
    held = index.last(kind=ARS, namespace="default", name="arc", count=100)
    assert len(held) <= 3 + 5 and index.trimmed((ARS, "default", "arc")), "past KEPT_ITEMS its oldest go"


def test_the_index_knows_the_last_observed_record_of_each_object_while_it_exists() -> None:
    records = [
        *mixed_story(),
        observed(9, "Running", kind="EphemeralRunnerSet", name="arc-set", event="DELETED"),
    ]
    index = indexed(records)
    assert index.observed_seq([(ARS, "default", "arc")]) == 5
    assert index.observed_seq([("Pod", "default", "arc-set"), (ARS, "default", "arc")]) == 8
    assert index.observed_seq([("EphemeralRunnerSet", "default", "arc-set")]) == 0
    assert index.observed_seq([]) == 0


def test_the_index_holds_its_items_in_a_fraction_of_their_models_memory() -> None:
    """The index is bounded by a count of items (50,000 by default), so what it takes is what one item
    costs there: a lean tuple, with the response models built only for the items a request returns."""
    count = 4_000
    records = [decided(seq, ("Pending", "Running")) for seq in range(1, count + 1)]
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        index = indexed(records, keep=2 * count)
        held = tracemalloc.get_traced_memory()[0] - start
        start = tracemalloc.get_traced_memory()[0]
        models = [item for record in records for item in phases.items_of(record)]
        as_models = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    page = index.page(after=0, limit=2 * count)
    assert page is not None and page.items == models
    assert held < as_models / 2, (held / count, as_models / count)
