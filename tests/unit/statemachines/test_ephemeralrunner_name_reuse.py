"""A runner whose name a predecessor's pod or Secret still holds: it takes neither for its own.

The snapshot carries objects of the runner's name that another owner holds as ``other_pod`` /
``other_secret`` (``controller.loop.snapshotting``); the machine makes no JIT config and no pod while one is
there, waits for it to go (asking again after a while whether a Secret went, since no watch shows Secrets),
and says why in ``Registered`` / ``Ready`` with a Warning Event. A Secret of another owner the executor
meets before the controller knew of it (an ``AlreadyExists`` result) is handled the same.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from statemachines import conditions, effects, ephemeralrunners, pods
from statemachines.decisions import Decision
from tests.unit.statemachines.runnerworld import NAME, NOW, REF, RunnerWorld, make_runner

ER = ephemeralrunners


def predecessors(kind: str, *, phase: str = "Running") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {
            "name": NAME,
            "namespace": REF.namespace,
            "uid": f"old-{kind.lower()}-uid",
            "deletionTimestamp": pods.format_time(NOW),
            "finalizers": ["example.com/hold"],
            "ownerReferences": [{"kind": "EphemeralRunner", "name": NAME, "uid": "old-er-uid"}],
            "annotations": {"actions.github.com/runner-id": "41", "actions.github.com/runner-name": NAME},
        },
        "status": {"phase": phase},
    }


def condition(decision: Decision, type_: str) -> dict[str, Any]:
    (patch,) = [e for e in decision.effects if isinstance(e, effects.MergePatch) and e.subresource]
    return next(c for c in patch.patch["status"]["conditions"] if c["type"] == type_)


def warnings(decision: Decision) -> list[str]:
    return [e.reason for e in decision.effects if isinstance(e, effects.EmitEvent) and e.type == "Warning"]


def test_a_predecessors_secret_is_not_taken_and_no_jit_config_is_made() -> None:
    world = RunnerWorld.with_runner()
    world.objects[("Secret", NAME)] = predecessors("Secret")

    def seen() -> Decision:  # the predecessor's Secret as the controller knows it: another owner's
        decision = ER.decide(
            dataclasses.replace(
                world.snapshot(secret=True), related={ER.OTHER_SECRET: predecessors("Secret")}
            )
        )
        world.apply(decision)
        return decision

    # No watch shows Secrets, so whether it went is asked; the executor reads it before generating anything.
    first = seen()
    (jit,) = [e for e in first.effects if isinstance(e, effects.CreateJitConfigSecret)]
    assert world.results[jit.key]["error"] == "AlreadyExists" and not world.registered
    registered = condition(first, ER.REGISTERED)
    assert (registered["status"], registered["reason"]) == ("False", "SecretNameTaken")
    assert "old-er-uid" in registered["message"] and "being deleted" in registered["message"]
    assert "SecretNameTaken" in warnings(first)
    (patch,) = [e for e in first.effects if isinstance(e, effects.MergePatch) and e.subresource]
    assert "runnerId" not in patch.patch["status"]  # the predecessor's runner id is not read

    waiting = seen()  # asked only once a while has passed
    assert not [e for e in waiting.effects if isinstance(e, effects.CreateJitConfigSecret)]
    assert [e.seconds for e in waiting.effects if isinstance(e, effects.RequeueAfter)] == [
        ER.ALREADY_EXISTS_SECONDS
    ]
    world.advance(ER.ALREADY_EXISTS_SECONDS)
    assert [e for e in seen().effects if isinstance(e, effects.CreateJitConfigSecret)] == [jit]
    assert not world.registered and "runnerId" not in world.runner.get("status", {})


def test_a_predecessors_pod_is_not_mirrored_and_no_pod_is_made_while_it_lingers() -> None:
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME}))
    world.step()  # its own JIT secret
    related = {ER.SECRET: world.get("Secret"), ER.OTHER_POD: predecessors("Pod", phase="Running")}
    decision = ER.decide(dataclasses.replace(world.snapshot(), related=related))
    assert not decision.transitions
    assert not [e for e in decision.effects if isinstance(e, effects.CreateObject)]
    ready = condition(decision, conditions.READY)
    assert (ready["status"], ready["reason"]) == ("False", "PodNameTaken")
    assert "PodNameTaken" in warnings(decision)


def test_once_the_predecessors_pod_is_gone_the_runner_makes_its_own() -> None:
    world = RunnerWorld.with_runner(make_runner(status={"runnerId": 100, "runnerName": NAME}))
    world.step()
    related = {ER.SECRET: world.get("Secret"), ER.OTHER_POD: None}
    decision = ER.decide(dataclasses.replace(world.snapshot(), related=related))
    (create,) = [e for e in decision.effects if isinstance(e, effects.CreateObject)]
    assert create.target == effects.ObjectRef("Pod", REF.namespace, NAME)


def test_a_predecessors_secret_the_executor_meets_first_is_not_taken_and_waited_for() -> None:
    world = RunnerWorld.with_runner()
    world.objects[("Secret", NAME)] = predecessors("Secret")  # the watch has not shown it yet
    first = world.step(secret=True)
    (jit,) = [e for e in first.effects if isinstance(e, effects.CreateJitConfigSecret)]
    assert world.results[jit.key]["error"] == "AlreadyExists"

    waiting = world.step(secret=True)
    assert not [e for e in waiting.effects if isinstance(e, effects.CreateJitConfigSecret)]
    assert [e.seconds for e in waiting.effects if isinstance(e, effects.RequeueAfter)] == [
        ER.ALREADY_EXISTS_SECONDS
    ]
    registered = condition(waiting, ER.REGISTERED)
    assert (registered["status"], registered["reason"]) == ("False", "SecretNameTaken")
    assert "old-er-uid" in registered["message"] and "\n" not in registered["message"]
    assert "SecretNameTaken" in warnings(waiting)
    assert "runnerId" not in world.runner["status"]  # the predecessor's runner id is not read

    world.advance(ER.ALREADY_EXISTS_SECONDS)
    again = world.step(secret=True)
    assert [e for e in again.effects if isinstance(e, effects.CreateJitConfigSecret)] == [jit]

    del world.objects[("Secret", NAME)]  # the predecessor's Secret goes
    world.advance(ER.ALREADY_EXISTS_SECONDS)
    world.step()
    secret = world.get("Secret")
    assert secret is not None and secret["metadata"]["ownerReferences"][0]["uid"] == "er-uid"
    world.step()
    assert world.runner["status"]["runnerId"] == world.next_runner_id - 1
