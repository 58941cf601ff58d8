"""A machine reads only the related objects (and children) its declaration names.

Every recorded journal (``tests/journals``) is replayed with each machine's decider run on a recording
snapshot (``tests.declaredreads``): a read of a related key the kind's ``DECLARATION`` does not name, or
of the children when it names none, fails the replay, and the decisions must still come out as recorded.
The machines' unit scenarios get the same check from ``tests/unit/statemachines/conftest.py``. The last
tests show the check fails: a decide function that reads an undeclared key, and a real machine whose
declaration lost the entry it reads.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from controller.commands.replay_command import load_jsonl
from controller.loop import declared, reconciling, replaying
from statemachines import declaring, ephemeralrunnersets
from statemachines.decisions import Decision
from statemachines.effects import ObjectRef
from statemachines.kinds import ER, ERS
from statemachines.snapshots import Snapshot
from store.records import RecordType
from tests.declaredreads import UndeclaredRead, checked

JOURNALS = sorted((Path(__file__).parents[2] / "journals").glob("*.jsonl.gz"))
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_every_recorded_decision_reads_only_what_its_declaration_names(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for kind, decider in list(reconciling.DECIDERS.items()):
        monkeypatch.setitem(reconciling.DECIDERS, kind, checked(decider, declared.BY_KIND[kind]))
    records = load_jsonl(path)
    replayed = replaying.replay(records)
    assert replayed.mismatch is None, replayed.mismatch.line()
    assert replayed.decisions == sum(r.type is RecordType.DECISION for r in records) > 0


def _reads_a(key: str) -> declaring.Declaration:
    def decide(snapshot: Snapshot) -> Decision:
        snapshot.get(key)
        return Decision(snapshot.subject)

    return declaring.Declaration(
        kind=ER, decide=decide, related=(declaring.Related("pod", declaring.SameName("Pod")),)
    )


def test_a_read_of_an_undeclared_key_fails() -> None:
    snapshot = Snapshot(ObjectRef(ER, "ns", "r"), None, NOW, related={"pod": None, "node": None})
    declaration = _reads_a("pod")
    assert checked(declaration.decide, declaration)(snapshot).is_noop
    undeclared = _reads_a("node")
    with pytest.raises(UndeclaredRead, match=r"read \['node'\]"):
        checked(undeclared.decide, undeclared)(snapshot)


def test_a_read_of_children_the_declaration_does_not_name_fails() -> None:
    def decide(snapshot: Snapshot) -> Decision:
        return Decision(snapshot.subject, note=f"{len(snapshot.children)} children")

    declaration = declaring.Declaration(kind=ER, decide=decide)
    with pytest.raises(UndeclaredRead, match=r"read \['children'\]"):
        checked(decide, declaration)(Snapshot(ObjectRef(ER, "ns", "r"), None, NOW))
    with_children = dataclasses.replace(declaration, children="Pod")
    assert checked(decide, with_children)(Snapshot(ObjectRef(ER, "ns", "r"), None, NOW)).note == "0 children"


def test_a_machine_whose_declaration_lost_its_proxy_secret_fails_the_check() -> None:
    """Being deleted with no runners left, the EphemeralRunnerSet reads its proxy Secret (to delete it)."""
    runner_set = {
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": ERS,
        "metadata": {
            "name": "arc",
            "namespace": "ns",
            "uid": "ers-uid",
            "generation": 1,
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": [ephemeralrunnersets.FINALIZER],
        },
        "spec": {"replicas": 0, "ephemeralRunnerSpec": {"githubConfigUrl": "https://github.com/org"}},
    }
    snapshot = Snapshot(ObjectRef(ERS, "ns", "arc"), runner_set, NOW, related={"proxy_secret": None})
    machine = ephemeralrunnersets.DECLARATION
    checked(machine.decide, machine)(snapshot)
    kept = tuple(r for r in machine.related if r.key != ephemeralrunnersets.PROXY_SECRET)
    without = dataclasses.replace(machine, related=kept)
    with pytest.raises(UndeclaredRead, match=r"read \['proxy_secret'\]"):
        checked(machine.decide, without)(snapshot)
