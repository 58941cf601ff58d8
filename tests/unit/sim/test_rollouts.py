"""Unit tests of sim.rollouts: the int-or-percent rounding, fenceposts, proportions and conditions a
Deployment rollout is computed from, against the values kube-controller-manager's deployment_util.go
gives for the same inputs."""

from __future__ import annotations

from typing import Any

import pytest

from sim import rollouts


def deployment(
    replicas: int, surge: Any = "25%", unavailable: Any = "25%", kind: str = "RollingUpdate"
) -> Any:
    strategy: dict[str, Any] = {"type": kind}
    if kind == "RollingUpdate":
        strategy["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"metadata": {"name": "d", "generation": 1}, "spec": {"replicas": replicas, "strategy": strategy}}


def replica_set(replicas: int, *, max_replicas: int | None = None, available: int = 0) -> Any:
    annotations = {} if max_replicas is None else {rollouts.MAX_REPLICAS: str(max_replicas)}
    return {
        "metadata": {"name": f"rs-{replicas}", "annotations": annotations},
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": available},
    }


@pytest.mark.parametrize(
    ("value", "total", "up", "down"),
    [
        ("25%", 1, 1, 0),
        ("25%", 3, 1, 0),
        ("25%", 4, 1, 1),
        ("25%", 10, 3, 2),
        ("0%", 10, 0, 0),
        ("100%", 7, 7, 7),
        (2, 10, 2, 2),
    ],
)
def test_percentages_round_up_for_surge_and_down_for_unavailability(
    value: Any, total: int, up: int, down: int
) -> None:
    assert rollouts.scaled_value(value, total, round_up=True) == up
    assert rollouts.scaled_value(value, total, round_up=False) == down


def test_a_string_that_is_not_a_percentage_is_refused() -> None:
    with pytest.raises(ValueError, match="string is not a percentage"):
        rollouts.scaled_value("3", 10, round_up=True)


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "expected"),
    [
        (1, "25%", "25%", (1, 0)),
        (10, "25%", "25%", (3, 2)),
        (2, "0%", "1%", (0, 1)),  # both resolve to 0: one may be unavailable
        (4, 1, 0, (1, 0)),
    ],
)
def test_fenceposts(replicas: int, surge: Any, unavailable: Any, expected: tuple[int, int]) -> None:
    assert rollouts.fenceposts(deployment(replicas, surge, unavailable)) == expected


def test_recreate_has_no_surge_and_no_unavailability_budget() -> None:
    d = deployment(3, kind="Recreate")
    assert (rollouts.max_surge(d), rollouts.max_unavailable(d)) == (0, 0)
    assert rollouts.new_set_replicas(d, [replica_set(3)], replica_set(0)) == 3


def test_the_new_set_grows_within_replicas_plus_surge() -> None:
    d = deployment(4, surge=1, unavailable=0)
    assert rollouts.new_set_replicas(d, [replica_set(4), replica_set(0)], replica_set(0)) == 1
    assert rollouts.new_set_replicas(d, [replica_set(3), replica_set(1)], replica_set(1)) == 2
    assert rollouts.new_set_replicas(d, [replica_set(4), replica_set(1)], replica_set(1)) == 1


def test_proportions_of_a_scaling_event() -> None:
    # 10 -> 15 replicas while sets of 6 and 4 run, both annotated max-replicas 13 (10 + 25% surge): the
    # 9 replicas to add (15 + 4 surge - 10) are shared as round(size * 19 / 13) - size, the leftover going
    # to the largest set afterwards.
    d = deployment(15)
    first = rollouts.proportion(d, replica_set(6, max_replicas=13), 9, 0)
    second = rollouts.proportion(d, replica_set(4, max_replicas=13), 9, first)
    assert (first, second) == (3, 2)
    # Scaling down to zero takes each set's whole size, never more than what is left to remove.
    zero = deployment(0)
    assert rollouts.proportion(zero, replica_set(6, max_replicas=13), -10, 0) == -6
    assert rollouts.proportion(zero, replica_set(4, max_replicas=13), -10, -8) == -2


def test_a_condition_keeps_its_transition_time_when_only_the_reason_changes() -> None:
    status: dict[str, Any] = {}
    rollouts.set_condition(status, "Progressing", "True", rollouts.NEW_RS_CREATED, "created", "t1")
    rollouts.set_condition(status, "Available", "False", rollouts.MIN_UNAVAILABLE, "not yet", "t1")
    rollouts.set_condition(status, "Progressing", "True", rollouts.RS_UPDATED, "progressing", "t2")
    assert [c["type"] for c in status["conditions"]] == ["Available", "Progressing"]
    progressing = rollouts.condition(status, "Progressing")
    assert progressing is not None
    assert (progressing["lastTransitionTime"], progressing["lastUpdateTime"]) == ("t1", "t2")
    # The same status and reason again changes nothing, not even lastUpdateTime.
    rollouts.set_condition(status, "Progressing", "True", rollouts.RS_UPDATED, "progressing", "t3")
    assert rollouts.condition(status, "Progressing") == progressing


def test_available_needs_replicas_minus_max_unavailable() -> None:
    d = deployment(4)  # maxUnavailable 25% of 4 = 1
    status = rollouts.calculate_status(d, replica_set(4, available=3), [], "t")
    available = rollouts.condition(status, "Available")
    assert available is not None and (available["status"], available["reason"]) == (
        "True",
        rollouts.MIN_AVAILABLE,
    )
    status = rollouts.calculate_status(d, replica_set(4, available=2), [], "t")
    available = rollouts.condition(status, "Available")
    assert available is not None and available["reason"] == rollouts.MIN_UNAVAILABLE
    assert status["unavailableReplicas"] == 2
