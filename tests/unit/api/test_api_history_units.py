"""Unit tests of the API's pure parts: phase items from decision records, paging, kinds, ETag matching,
addresses, Actions endpoints from effect keys. The reader is an in-memory list of records filtered as
the journal filters them."""

from __future__ import annotations

import pytest

from api import etags, metrics, phases
from api.addresses import parse_address
from store.records import Record, RecordType, Seq
from tests.unit.api.listreader import ListReader


def decision(seq: int, *tos: str, name: str = "arc", kind: str = "AutoscalingRunnerSet") -> Record:
    transitions = []
    before = ""
    for to in tos:
        transitions.append(
            {"from": before, "to": to, "trigger": "t", "reason": "r", "revisions": {"generation": seq}}
        )
        before = to
    return Record(
        type=RecordType.DECISION,
        kind=kind,
        namespace="default",
        name=name,
        uid="u",
        body={"transitions": transitions},
        seq=Seq(seq),
        at="2026-01-01T00:00:00Z",
    )


def test_items_of_a_decision_record() -> None:
    record = decision(5, "Pending", "Running")
    items = phases.items_of(record)
    assert [(i.from_, i.to, i.seq) for i in items] == [(None, "Pending", 5), ("Pending", "Running", 5)]
    assert items[0].revisions == {"generation": 5}
    assert items[0].model_dump(by_alias=True)["from"] is None


def test_items_of_skips_what_is_not_a_transition() -> None:
    assert phases.items_of(Record(type=RecordType.EFFECT, seq=Seq(1), body={"transitions": [{}]})) == []
    odd = Record(
        type=RecordType.DECISION,
        kind="EphemeralRunner",
        seq=Seq(2),
        body={"transitions": ["junk", {"to": "Failed", "revisions": {"ok": True, "n": 3, "s": "x"}}]},
    )
    (item,) = phases.items_of(odd)
    assert (item.kind, item.from_, item.to, item.revisions) == ("EphemeralRunner", None, "Failed", {"n": 3})


async def test_a_page_ends_at_a_record_boundary_and_next_resumes_after_it() -> None:
    reader = ListReader(
        [decision(1, "Pending"), decision(2), decision(3, "Pending", "Running"), decision(4, "Outdated")]
    )
    first = await phases.page(reader, after=0, limit=2)
    # seq 3 holds two: it goes whole next time; next is the last item's seq, as the index pages
    assert [i.seq for i in first.items] == [1] and first.next == 1
    second = await phases.page(reader, after=first.next or 0, limit=2)
    assert [i.seq for i in second.items] == [3, 3] and second.next == 3
    third = await phases.page(reader, after=second.next or 0, limit=2)
    assert [i.seq for i in third.items] == [4] and third.next is None
    alone = await phases.page(reader, after=2, limit=1)  # one record with more than the limit: whole
    assert [i.seq for i in alone.items] == [3, 3] and alone.next == 3


async def test_a_page_reads_past_decisions_without_transitions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phases, "SCAN", 3)
    reader = ListReader([decision(seq) for seq in range(1, 11)] + [decision(11, "Running", name="other")])
    found = await phases.page(reader, after=0, limit=5)
    assert [(i.seq, i.name) for i in found.items] == [(11, "other")] and found.next is None
    assert reader.reads == 4
    mine = await phases.page(reader, after=0, limit=5, name="arc")
    assert mine.items == [] and mine.next is None


async def test_last_keeps_the_newest_transitions_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phases, "SCAN", 2)
    reader = ListReader([decision(seq, "Running") for seq in range(1, 8)])
    recent = await phases.last(reader, kind="AutoscalingRunnerSet", namespace="default", name="arc", count=3)
    assert [i.seq for i in recent] == [5, 6, 7]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("AutoscalingRunnerSet", "AutoscalingRunnerSet"),
        ("autoscalingrunnersets", "AutoscalingRunnerSet"),
        ("ers", "EphemeralRunnerSet"),
        ("EphemeralRunner", "EphemeralRunner"),
        ("autoscalinglistener", "AutoscalingListener"),
        ("Pod", None),
    ],
)
def test_kinds_are_named_by_kind_plural_singular_or_short_name(text: str, kind: str | None) -> None:
    assert phases.kind_named(text) == kind


def test_plurals_map_to_their_kinds() -> None:
    assert {p.value: p.kind.value for p in phases.Plural} == {
        "autoscalingrunnersets": "AutoscalingRunnerSet",
        "ephemeralrunnersets": "EphemeralRunnerSet",
        "ephemeralrunners": "EphemeralRunner",
        "autoscalinglisteners": "AutoscalingListener",
    }


@pytest.mark.parametrize(
    ("header", "matched"),
    [(None, False), ('"abc"', True), ('W/"abc"', True), ('"x", "abc"', True), ("*", True), ('"abcd"', False)],
)
def test_if_none_match(header: str | None, matched: bool) -> None:
    assert etags.matches(header, '"abc"') is matched


@pytest.mark.parametrize(
    ("key", "endpoint"),
    [
        (
            "actions:AutoscalingRunnerSet/default/arc@u/1:GetRunnerScaleSet(name=arc,runnerGroupId=1)",
            "GetRunnerScaleSet",
        ),
        ("actions:AutoscalingRunnerSet/default/arc:DeleteRunnerScaleSet()", "DeleteRunnerScaleSet"),
        ("jit:Secret/default/arc-runner-x", "GenerateJitRunnerConfig"),
        ("release:EphemeralRunner/default/r#7", "RemoveRunner"),
        ("patch:AutoscalingRunnerSet/default/arc", None),
        ("", None),
    ],
)
def test_actions_endpoints_from_effect_keys(key: str, endpoint: str | None) -> None:
    assert metrics.actions_endpoint(key) == endpoint


def test_outcomes() -> None:
    assert metrics.outcome({"ok": True}) == "ok"
    assert metrics.outcome({"ok": False, "error": "JobStillRunning"}) == "JobStillRunning"
    assert metrics.outcome({"ok": False}) == "Failed", "a failure without a class, as the machines read it"


@pytest.mark.parametrize(
    ("text", "address"),
    [("127.0.0.1:8080", ("127.0.0.1", 8080)), ("[::1]:0", ("::1", 0)), (":9090", ("0.0.0.0", 9090))],
)
def test_addresses(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["localhost", "host:http", "host:70000", ""])
def test_bad_addresses_say_what_is_expected(text: str) -> None:
    with pytest.raises(ValueError, match="is not HOST:PORT"):
        parse_address(text)
