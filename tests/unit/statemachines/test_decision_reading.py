"""Reading the transitions of a journaled decision body back (``decisions.transitions_from_json``)."""

from __future__ import annotations

import json
from typing import Any

from statemachines.decisions import Decision, Transition, transitions_from_json
from statemachines.effects import ObjectRef, RequeueAfter
from statemachines.kinds import ARS, ERS

ARC = ObjectRef(ARS, "default", "arc")
RUNNER_SET = ObjectRef(ERS, "default", "arc-abcde")


def journaled(decision: Decision) -> dict[str, Any]:
    """The body as the runtime journals it: ``as_json`` plus each transition's subject, through JSON."""
    body = decision.as_json()
    body["transitions"] = [
        {
            **entry,
            "subject": {"kind": t.subject.kind, "namespace": t.subject.namespace, "name": t.subject.name},
        }
        for entry, t in zip(body["transitions"], decision.transitions, strict=True)
    ]
    loaded: dict[str, Any] = json.loads(json.dumps(body))
    return loaded


def test_a_journaled_decision_reads_back_to_its_transitions() -> None:
    decision = Decision(
        subject=ARC,
        transitions=(
            Transition(
                ARC, "", "Pending", "created", "new scale set", {"generation": 1, "observedGeneration": 0}
            ),
            Transition(
                ARC,
                "Pending",
                "Running",
                "in_sync",
                "listener up",
                {"generation": 1, "observedGeneration": 1},
            ),
        ),
        effects=(RequeueAfter(ARC, 5.0),),
        note="in sync",
    )
    assert transitions_from_json(journaled(decision), ARC) == decision.transitions


def test_a_transition_of_another_subject_keeps_it() -> None:
    decision = Decision(
        subject=ARC, transitions=(Transition(RUNNER_SET, "Running", "Outdated", "rejected", "exit 7"),)
    )
    (read,) = transitions_from_json(journaled(decision), ARC)
    assert read.subject == RUNNER_SET and (read.from_, read.to) == ("Running", "Outdated")


def test_the_record_fills_what_a_transition_does_not_name() -> None:
    body = {"transitions": [{"to": "Running", "subject": {"name": "other"}}]}
    (read,) = transitions_from_json(body, ARC)
    assert read.subject == ObjectRef(ARS, "default", "other")
    assert (read.from_, read.trigger, read.reason, dict(read.revisions)) == ("", "", "", {})


def test_a_malformed_body_is_read_leniently() -> None:
    assert transitions_from_json({}, ARC) == ()
    assert transitions_from_json({"transitions": "junk"}, ARC) == ()
    body = {"transitions": ["junk", 3, {"to": "Failed", "revisions": {"ok": True, "n": 3, "s": "x"}}]}
    (read,) = transitions_from_json(body, ARC)
    assert read.to == "Failed" and dict(read.revisions) == {"n": 3}
