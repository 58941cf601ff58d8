"""Every phase change a machine records carries a Kubernetes Event on the object."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from statemachines import effects
from statemachines.decisions import Decision, Transition
from statemachines.effects import ObjectRef
from statemachines.phaseevents import camel_case, event_message, transition_event
from tests.unit.statemachines.arsworld import World as ArsWorld
from tests.unit.statemachines.arsworld import new_ars
from tests.unit.statemachines.listenerworld import ListenerWorld, make_listener
from tests.unit.statemachines.runnerworld import RunnerWorld, make_runner
from tests.unit.statemachines.test_ephemeralrunnersets import idle, world

REF = ObjectRef("AutoscalingRunnerSet", "default", "arc")


@pytest.mark.parametrize(
    ("trigger", "reason"),
    [
        ("runners_rejected_spec", "RunnersRejectedSpec"),
        ("generation_advanced", "GenerationAdvanced"),
        ("pod_phase", "PodPhase"),
        ("update_status", "UpdateStatus"),
        ("apply_revision", "ApplyRevision"),
        ("building", "Building"),
        ("pod-failed", "PodFailed"),
        ("", ""),
    ],
)
def test_camel_case(trigger: str, reason: str) -> None:
    assert camel_case(trigger) == reason


def test_the_event_of_a_transition() -> None:
    taken = Transition(
        REF,
        "Running",
        "Outdated",
        "runners_rejected_spec",
        "runners rejected the runner spec",
        {"generation": 2, "observedGeneration": 2},
    )
    event = transition_event(taken, "uid-1")
    assert event == effects.EmitEvent(
        REF,
        "uid-1",
        "Warning",
        "RunnersRejectedSpec",
        "Outdated: runners rejected the runner spec (generation 2, observedGeneration 2)",
        trigger="runners_rejected_spec",
    )
    assert event_message(Transition(REF, "", "Pending", "x", "created")) == "Pending: created"


@pytest.mark.parametrize(
    ("to", "kind"), [("Running", "Normal"), ("Failed", "Warning"), ("BackOff", "Warning")]
)
def test_the_event_type(to: str, kind: str) -> None:
    event = transition_event(Transition(REF, "Pending", to, "t", "why"), "u")
    assert event is not None and event.type == kind


def test_no_event_when_the_phase_stays() -> None:
    assert transition_event(Transition(REF, "Pending", "Pending", "t", "why"), "u") is None


def test_the_key_names_the_trigger() -> None:
    first = transition_event(Transition(REF, "Running", "Pending", "a", "why"), "u")
    second = transition_event(Transition(REF, "Pending", "Running", "b", "why"), "u")
    assert first is not None and second is not None and first.key != second.key
    plain = effects.EmitEvent(REF, "u", "Warning", "ListenerBackOff", "m")
    assert plain.key == f"event:{REF}:ListenerBackOff"  # events without a trigger keep their key


def test_an_event_survives_the_journal_form() -> None:
    event = transition_event(Transition(REF, "", "Pending", "t", "why"), "u")
    assert event is not None
    assert effects.from_json(effects.to_json(event)) == event


def phase_events(decisions: Iterable[Decision]) -> list[tuple[str, str, str]]:
    """Every decision's phase-change Events match its transitions; (from, to, reason) of each."""
    seen = []
    for decision in decisions:
        changes = [t for t in decision.transitions if t.from_ != t.to]
        events = [e for e in decision.effects if isinstance(e, effects.EmitEvent) and e.trigger]
        assert [(e.reason, e.target) for e in events] == [
            (camel_case(str(t.trigger)), decision.subject) for t in changes
        ]
        assert all(e.uid for e in events)
        seen += [(t.from_, t.to, e.reason) for t, e in zip(changes, events, strict=True)]
    return seen


def test_an_autoscaling_runner_set_phase_change_carries_its_event() -> None:
    ars = ArsWorld()
    ars.add(new_ars())
    seen = phase_events(ars.settle())
    assert [(f, t) for f, t, _ in seen] == [("", "Pending"), ("Pending", "Running")]


def test_an_ephemeral_runner_set_phase_change_carries_its_event() -> None:
    ers = world((idle("a", 1, patch_id=2),), rev=0, phase=None, patch_id=2)
    seen = phase_events([ers.step()])
    assert seen == [("", "Running", "UpdateStatus")]
    assert [e.reason for e in ers.events] == ["UpdateStatus"]


def test_an_ephemeral_runner_phase_change_carries_its_event() -> None:
    runner = RunnerWorld.with_runner(make_runner(finalizers=[]))
    decisions = [runner.step(), runner.step()]
    runner.run_pod("Pending", running=False)
    decisions.append(runner.step())
    runner.run_pod("Running", ready=True)
    decisions.append(runner.step())
    assert phase_events(decisions) == [("", "Pending", "PodPhase"), ("Pending", "Running", "PodPhase")]


def test_a_listener_phase_change_carries_its_event() -> None:
    listener = ListenerWorld.with_listener(make_listener())
    decisions = listener.settle()
    listener.run()
    decisions += listener.settle()
    seen = phase_events(decisions)
    assert [t for _, t, _ in seen][-1] == "Running" and seen[0][0] == ""
