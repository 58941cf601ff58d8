"""Phase history across replicas (``api.continuity`` through ``api.phases``): decided transitions, phase
changes observed while another replica decided, no duplicate when a replica observes its own write,
paging from the middle of the journal. The reader is an in-memory list of records filtered as the
journal filters them."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from api import phases
from store.records import Record, RecordType, Seq

ARS = "AutoscalingRunnerSet"


class ListReader:
    def __init__(self, records: list[Record]) -> None:
        self.records = records

    async def read(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        types: Collection[RecordType] | None = None,
    ) -> list[Record]:
        found = [
            r
            for r in self.records
            if (r.seq or 0) > after
            and (kind is None or r.kind == kind)
            and (namespace is None or r.namespace == namespace)
            and (name is None or r.name == name)
            and (types is None or r.type in types)
        ]
        return found[:limit] if limit is not None else found


def observed(
    seq: int, phase: str | None, *, uid: str = "u1", event: str = "MODIFIED", **ready: str
) -> Record:
    status: dict[str, Any] = {"observedGeneration": 1}
    if phase is not None:
        status["phase"] = phase
    if ready:
        status["conditions"] = [{"type": "Ready", "status": "True", **ready}]
    obj = {"metadata": {"name": "arc", "namespace": "default", "uid": uid, "generation": 2}, "status": status}
    return Record(
        type=RecordType.OBSERVED,
        kind=ARS,
        namespace="default",
        name="arc",
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


def story(items: list[Any]) -> list[tuple[int, str | None, str, str]]:
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
    assert (first.trigger, first.reason) == ("GenerationAdvanced", "the spec changed")
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
    assert story(everything) == [
        (1, None, "Pending", "observed"),
        (2, "Pending", "Running", "observed"),
        (4, None, "Running", "observed"),
        (5, "Running", "Outdated", "observed"),
    ]
    first = await phases.page(reader, after=0, limit=2)
    assert story(first.items) == story(everything[:2]) and first.next == 2
    rest = await phases.page(reader, after=first.next, limit=2)
    assert story(rest.items) == story(everything[2:])
    assert [i.uid for i in rest.items] == ["u2", "u2"]
    recent = await phases.last(reader, kind=ARS, namespace="default", name="arc", count=1)
    assert story(recent) == [(5, "Running", "Outdated", "observed")]
