"""``conditions.merged``: set, keep the transition time while the status holds, keep foreign types,
and say "nothing to write" when nothing changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from statemachines.conditions import Condition, find, merged, status_patch

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)


def test_a_new_condition_is_appended_with_the_generation_and_the_decision_clock() -> None:
    got = merged({}, [Condition("Ready", False, "Pending", "waiting")], generation=3, now=T0)
    assert got == [
        {
            "type": "Ready",
            "status": "False",
            "observedGeneration": 3,
            "lastTransitionTime": "2026-11-30T12:00:00Z",
            "reason": "Pending",
            "message": "waiting",
        }
    ]


def test_the_transition_time_moves_only_when_the_status_changes() -> None:
    first = merged({}, [Condition("Ready", False, "Pending")], generation=1, now=T0)
    same_status = merged({"conditions": first}, [Condition("Ready", False, "Draining")], generation=2, now=T1)
    assert same_status is not None
    assert same_status[0]["lastTransitionTime"] == "2026-11-30T12:00:00Z"
    assert (same_status[0]["reason"], same_status[0]["observedGeneration"]) == ("Draining", 2)
    flipped = merged({"conditions": same_status}, [Condition("Ready", True, "Running")], generation=2, now=T1)
    assert flipped is not None
    assert (flipped[0]["status"], flipped[0]["lastTransitionTime"]) == ("True", "2026-11-30T12:05:00Z")


def test_nothing_to_write_when_the_wanted_conditions_are_already_there() -> None:
    conditions = merged({}, [Condition("Ready", True, "Running", "ok")], generation=1, now=T0)
    assert (
        merged({"conditions": conditions}, [Condition("Ready", True, "Running", "ok")], generation=1, now=T1)
        is None
    )
    assert (
        status_patch(
            {"conditions": conditions}, [Condition("Ready", True, "Running", "ok")], generation=1, now=T1
        )
        == {}
    )


def test_conditions_of_other_writers_are_kept_in_place() -> None:
    foreign = {"type": "Audited", "status": "True", "reason": "Ok", "message": "", "lastTransitionTime": "x"}
    got = merged(
        {"conditions": [foreign, "junk"]}, [Condition("Ready", None, "Unknown")], generation=1, now=T0
    )
    assert got is not None
    assert got[0] == foreign
    assert got[1]["status"] == "Unknown"
    assert find({"conditions": got}, "Audited") == foreign
    assert find({"conditions": got}, "Missing") is None
