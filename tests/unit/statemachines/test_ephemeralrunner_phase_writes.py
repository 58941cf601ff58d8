"""Every ``status.phase`` the EphemeralRunner machine writes is the destination of a table row that fired.

The table is data, so the check is generic: over every combination of observed runner phase, pod phase,
runner exit code and pod readiness (and the pod-create rejections), a decision writes a phase exactly when
it journals a transition, the phase it writes is the last transition's destination, and every transition
is a row of ``ROWS``. A table without a row for a verdict writes no phase for it.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from statemachines import effects, ephemeralrunners, tables
from statemachines.decisions import Decision
from statemachines.phases import ErPhase
from tests.unit.statemachines.runnerworld import NAME, REF, RunnerWorld, make_runner

ER = ephemeralrunners

OBSERVED_PHASES = ("", "Pending", "Running", "Unknown", "NotAPhase")
POD_PHASES = ("", "Pending", "Running", "Unknown", "Failed", "Succeeded", "NotAPhase")
EXIT_CODES = (None, 0, 1, 7)


def written_phase(decision: Decision) -> str | None:
    found = [
        e
        for e in decision.effects
        if isinstance(e, effects.MergePatch) and e.subresource == "status" and e.target == REF
    ]
    assert len(found) <= 1, "one status patch per decision"
    status = found[0].patch.get("status", {}) if found else {}
    return status.get("phase")


def assert_phase_follows_a_row(decision: Decision) -> None:
    phase = written_phase(decision)
    if phase is None:
        assert not decision.transitions, decision
    else:
        assert decision.transitions, f"phase {phase!r} written without a transition: {decision}"
        assert decision.transitions[-1].to == phase
    for taken in decision.transitions:
        rows = [
            row
            for row in ER.ROWS
            if row.trigger == taken.trigger and taken.from_ in row.source and row.dest == taken.to
        ]
        assert rows, f"no row {taken.trigger}: {taken.from_!r} → {taken.to!r}"


def world_with_pod(observed: str, pod_phase: str, exit_code: int | None, ready: bool) -> RunnerWorld:
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME}))
    world.step()  # the JIT secret
    world.step()  # the pod
    world.runner["status"]["phase"] = observed
    world.run_pod(pod_phase, exit_code=exit_code, ready=ready)
    return world


@pytest.mark.parametrize(
    ("observed", "pod_phase", "exit_code", "ready"),
    list(itertools.product(OBSERVED_PHASES, POD_PHASES, EXIT_CODES, (False, True))),
)
def test_a_pod_seen_in_any_state_writes_only_a_phase_a_row_leads_to(
    observed: str, pod_phase: str, exit_code: int | None, ready: bool
) -> None:
    world = world_with_pod(observed, pod_phase, exit_code, ready)
    assert_phase_follows_a_row(world.step())


@pytest.mark.parametrize("observed", OBSERVED_PHASES)
@pytest.mark.parametrize(
    "error",
    [
        {"error": "Invalid", "message": "spec.containers: Required value"},
        {"error": "Forbidden", "message": "pods are forbidden by policy"},
        {"error": "Forbidden", "message": "exceeded quota: pods"},
    ],
)
def test_a_pod_create_rejection_writes_only_a_phase_a_row_leads_to(
    observed: str, error: dict[str, Any]
) -> None:
    world = RunnerWorld.with_runner(
        make_runner(status={"runnerId": 100, "runnerName": NAME, "phase": observed})
    )
    world.create_errors["Pod"] = [error]
    world.step()  # the JIT secret
    world.step()  # the refused create
    assert_phase_follows_a_row(world.step())


def test_a_pod_whose_node_stopped_reporting_makes_the_runner_unknown_not_pending() -> None:
    world = world_with_pod("Running", "Unknown", None, False)
    decision = world.step()
    assert [(t.from_, t.to) for t in decision.transitions] == [("Running", "Unknown")]
    assert written_phase(decision) == "Unknown"
    world.run_pod("Running", ready=True)
    decision = world.step()
    assert [(t.from_, t.to) for t in decision.transitions] == [("Unknown", "Running")]
    assert written_phase(decision) == "Running"


def _without(trigger: str) -> tables.PhaseMachine:
    return tables.PhaseMachine(ER.KIND, ErPhase, [row for row in ER.ROWS if row.trigger != trigger])


def test_without_the_outdated_row_exit_7_writes_no_phase_and_removes_no_runner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = world_with_pod("Running", "Failed", 7, False)
    monkeypatch.setattr(ER, "MACHINE", _without(ER.Trigger.RUNNER_OUTDATED))
    decision = world.step()
    assert written_phase(decision) is None and not decision.transitions
    assert not [e for e in decision.effects if isinstance(e, effects.ActionsCall)]


def test_without_the_rejection_row_a_refused_pod_writes_no_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME}))
    world.create_errors["Pod"] = [{"error": "Invalid", "message": "spec.containers: Required value"}]
    world.step()
    world.step()
    monkeypatch.setattr(ER, "MACHINE", _without(ER.Trigger.POD_REJECTED))
    decision = world.step()
    assert written_phase(decision) is None and not decision.transitions
    assert not [e for e in decision.effects if isinstance(e, effects.ActionsCall)]
