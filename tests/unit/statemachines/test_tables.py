"""The table-driven machine wrapper: rows fire from their sources, guards decide, the first row wins,
and there are no back doors to a state."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from statemachines import effects, phases, tables
from statemachines.snapshots import Snapshot

REF = effects.ObjectRef("AutoscalingRunnerSet", "default", "arc")


def snapshot(**status: object) -> Snapshot:
    return Snapshot(
        subject=REF, obj={"metadata": {"name": "arc"}, "status": status}, now=datetime(2026, 1, 1, tzinfo=UTC)
    )


def flag(name: str) -> tables.Guard:
    def guard(s: Snapshot) -> bool:
        return bool(s.status.get(name))

    guard.__name__ = name
    return guard


MACHINE = tables.PhaseMachine(
    "toy",
    phases.ArsPhase,
    [
        tables.Row("settle", ("", "Pending"), "Running", "everything is in sync"),
        tables.Row("park", ("Running",), "Outdated", "runners rejected the spec", (flag("outdated"),)),
        tables.Row("park", ("Running",), "Pending", "second row, same trigger", (flag("outdated"),)),
        tables.Row("edit", ("*",), "Pending", "a new generation"),
    ],
)


@pytest.mark.parametrize(
    ("trigger", "current", "status", "expected"),
    [
        pytest.param("settle", "", {}, "Running", id="from-none"),
        pytest.param("settle", "Pending", {}, "Running", id="from-pending"),
        pytest.param("settle", "Outdated", {}, None, id="not-a-source"),
        pytest.param("park", "Running", {"outdated": True}, "Outdated", id="first-row-wins"),
        pytest.param("park", "Running", {}, None, id="guard-fails"),
        pytest.param("edit", "Outdated", {}, "Pending", id="wildcard-source"),
        pytest.param("to_Running", "Pending", {}, None, id="no-auto-transitions"),
    ],
)
def test_fire(trigger: str, current: str, status: dict[str, object], expected: str | None) -> None:
    taken = MACHINE.fire(trigger, current, snapshot(**status))
    if expected is None:
        assert taken is None
    else:
        assert taken is not None
        assert (taken.from_, taken.to, taken.trigger) == (current, expected, trigger)


def test_reason_names_the_row_that_fired() -> None:
    taken = MACHINE.fire("park", "Running", snapshot(outdated=True))
    assert taken is not None
    assert taken.reason == "runners rejected the spec"


def test_effects_round_trip_through_json() -> None:
    scope = effects.ActionsScope("https://github.com/org", "default", "creds")
    original = [
        effects.MergePatch(REF, {"status": {"phase": "Pending"}}, subresource="status"),
        effects.ActionsCall(REF, scope, effects.ActionsOp.REMOVE_RUNNER, {"runnerId": 3}),
        effects.RequeueAfter(REF, 5.0),
    ]
    assert [effects.from_json(effects.to_json(e)) for e in original] == original
