"""Fixtures of the machines' unit tests.

Inputs: the snapshots each test builds. Autouse ``reads_are_declared``: every machine's ``decide`` (called
through its module, as the tests and their worlds call it) runs on a recording copy of the snapshot and
fails the test when it reads a related key, or the children, its ``DECLARATION`` does not name
(``tests.declaredreads``). Nothing is mocked: the decision is the machine's own.
"""

from __future__ import annotations

import pytest

from statemachines import autoscalinglisteners, autoscalingrunnersets, ephemeralrunners, ephemeralrunnersets
from tests.declaredreads import checked

MACHINES = (autoscalingrunnersets, ephemeralrunnersets, ephemeralrunners, autoscalinglisteners)


@pytest.fixture(autouse=True)
def reads_are_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    for machine in MACHINES:
        monkeypatch.setattr(machine, "decide", checked(machine.decide, machine.DECLARATION))
