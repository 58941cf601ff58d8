"""The AutoscalingListener's ``Ready`` condition: building, running, the restart backoff (with the next
attempt in its message), a pod or config Secret that cannot be made (one Warning Event each), and no
write from a settled listener or from a pass that only waits."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from statemachines import autoscalinglisteners as AL
from statemachines import effects, pods
from statemachines.decisions import Decision
from statemachines.phases import ListenerState
from tests.unit.statemachines.listenerworld import AL_NAME, AL_NS, REF, ListenerWorld, make_listener

POD_CREATE = f"create:Pod/{AL_NS}/{AL_NAME}"
CONFIG = f"listener-config:Secret/{AL_NS}/{AL_NAME}-config"


def ready_written(decision: Decision) -> dict[str, Any] | None:
    for effect in decision.effects:
        if isinstance(effect, effects.MergePatch) and effect.target == REF and effect.subresource == "status":
            (condition,) = effect.patch["status"]["conditions"]
            assert condition["type"] == "Ready"
            return dict(condition)
    return None


def warnings(decision: Decision) -> list[str]:
    return [e.reason for e in decision.effects if isinstance(e, effects.EmitEvent) and e.type == "Warning"]


def running_world() -> ListenerWorld:
    world = ListenerWorld.with_listener(make_listener())
    world.settle()
    world.run()
    world.settle()
    return world


def test_building_then_running_then_settled() -> None:
    world = ListenerWorld.with_listener(make_listener())
    passes = world.settle()
    written = [c for c in map(ready_written, passes) if c is not None]
    assert written == [
        {
            "type": "Ready",
            "status": "False",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-01-01T12:00:00Z",
            "reason": "Building",
            "message": AL.READY_MESSAGES[ListenerState.PENDING],
        }
    ]
    world.advance(10)
    world.run()
    running = world.step()
    ready = ready_written(running)
    assert ready is not None
    assert (ready["status"], ready["reason"], ready["lastTransitionTime"]) == (
        "True",
        "PodRunning",
        "2026-01-01T12:00:10Z",
    )
    world.advance(60)
    assert world.step().is_noop
    assert world.listener is not None and world.listener["status"]["conditions"][0]["reason"] == "PodRunning"


def test_observed_generation_is_the_generation_read() -> None:
    world = running_world()
    assert world.listener is not None
    world.listener["metadata"]["generation"] = 5
    ready = ready_written(world.step())
    assert ready is not None and ready["observedGeneration"] == 5 and ready["status"] == "True"


def _fail(world: ListenerWorld, ran: float = 3) -> Decision:
    world.advance(ran)
    world.end()
    return world.step()


def test_the_backoff_is_not_ready_with_the_next_attempt_in_the_message() -> None:
    world = running_world()
    first = _fail(world)
    assert warnings(first) == ["ListenerPodFailed"]  # the phase Event (Pending) is Normal
    ready = ready_written(first)
    assert ready is not None and (ready["status"], ready["reason"]) == ("False", "PodFailed")
    world.step()  # made again at once
    world.run()
    world.step()
    second = _fail(world)
    ready = ready_written(second)
    assert ready is not None
    at = pods.format_time(world.now + timedelta(seconds=5))
    assert (ready["status"], ready["reason"]) == ("False", "ListenerBackOff")
    assert ready["message"] == (
        f"The listener pod failed 2 times in a row; the next attempt is 5s after the last, at {at}"
    )
    assert "ListenerBackOff" in warnings(second)
    # Waiting out the backoff: nothing to write, no second Event.
    world.advance(2)
    waiting = world.step()
    assert ready_written(waiting) is None and warnings(waiting) == []
    world.advance(3)
    recreated = world.step()
    ready = ready_written(recreated)
    assert ready is not None and (ready["status"], ready["reason"]) == ("False", "BackoffElapsed")
    world.run()
    back = ready_written(world.step())
    assert back is not None and (back["status"], back["reason"]) == ("True", "PodRunning")


def _pod_create_failed(error: str, message: str) -> ListenerWorld:
    world = running_world()
    pod = world.get(AL.POD)
    assert pod is not None
    del world.objects[("Pod", AL_NS, AL_NAME)]
    world.results[POD_CREATE] = {
        "ok": False,
        "error": error,
        "message": message,
        "at": pods.format_time(world.now),
    }
    return world


def test_a_rejected_listener_pod_is_not_ready_with_one_warning() -> None:
    world = _pod_create_failed("Invalid", 'Pod "x" is invalid: spec.containers[0].image: Required value')
    world.advance(1)
    rejected = world.step()
    ready = ready_written(rejected)
    assert ready is not None
    assert (ready["status"], ready["reason"]) == ("False", "ListenerPodRejected")
    assert ready["message"] == (
        "Creating the listener pod failed (Invalid): "
        'Pod "x" is invalid: spec.containers[0].image: Required value'
    )
    assert warnings(rejected) == ["ListenerPodRejected"]
    world.advance(1)
    again = world.step()
    assert ready_written(again) is None and warnings(again) == []


def test_another_pod_create_failure_is_its_own_reason() -> None:
    world = _pod_create_failed("InternalError", "etcd is unavailable")
    world.advance(1)
    decision = world.step()
    ready = ready_written(decision)
    assert ready is not None and ready["reason"] == "ListenerPodCreateFailed"
    assert warnings(decision) == ["ListenerPodCreateFailed"]


def test_a_config_secret_that_cannot_be_built_is_not_ready_with_one_warning() -> None:
    world = running_world()
    del world.objects[("Secret", AL_NS, f"{AL_NAME}-config")]
    world.results[CONFIG] = {
        "ok": False,
        "error": "ConfigSecretMissing",
        "message": "cannot read githubConfigSecret team/creds (NotFound)",
        "at": pods.format_time(world.now),
    }
    decision = world.step()
    ready = ready_written(decision)
    assert ready is not None
    assert (ready["status"], ready["reason"]) == ("False", "ListenerConfigFailed")
    assert ready["message"] == (
        "Building the listener's config Secret failed (ConfigSecretMissing): "
        "cannot read githubConfigSecret team/creds (NotFound)"
    )
    assert warnings(decision) == ["ListenerConfigFailed"]
    # Built the next time: the listener is Ready again (no transition: the reason is the state's name).
    back = ready_written(world.step())
    assert back is not None and (back["status"], back["reason"]) == ("True", "Running")


def test_deletion_and_the_finalizer_state_nothing() -> None:
    world = ListenerWorld.with_listener(make_listener(finalizers=[]))
    assert ready_written(world.step()) is None  # the finalizer
    world = running_world()
    assert world.listener is not None
    world.listener["metadata"]["deletionTimestamp"] = "2026-01-01T12:00:00Z"
    for _ in range(3):
        assert ready_written(world.step()) is None
