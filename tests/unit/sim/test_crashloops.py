"""Unit tests of sim.crashloops: the kubelet's restart back-off curve, its reset and its wording."""

from __future__ import annotations

import pytest

from sim import crashloops
from sim.crashloops import Backoff, Entry
from sim.kubelet import KubeletTiming

KUBELET = Backoff()


def crash_loop(exits: list[float], policy: Backoff = KUBELET) -> list[tuple[float, float]]:
    """For each exit time, (when the restart is made, the wait it took); a container that crashes at once."""
    entry: Entry | None = None
    out = []
    for finished in exits:
        waited = crashloops.wait(entry, finished=finished, now=finished, policy=policy)
        entry = crashloops.restarted(entry, finished + waited, policy)
        out.append((finished + waited, waited))
    return out


def test_first_exit_restarts_at_once_then_10s_doubling_to_5_minutes() -> None:
    entry: Entry | None = None
    waits = []
    now = 0.0
    for _ in range(9):
        waited = crashloops.wait(entry, finished=now, now=now, policy=KUBELET)
        waits.append(waited)
        now += waited
        entry = crashloops.restarted(entry, now, KUBELET)
        now += 1.0  # runs one second, exits
    assert waits == [0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0, 300.0]


def test_the_wait_counts_from_the_exit_not_from_when_it_is_asked() -> None:
    entry = Entry(delay=20.0, updated=100.0)
    assert crashloops.wait(entry, finished=130.0, now=135.0, policy=KUBELET) == 15.0
    assert crashloops.wait(entry, finished=130.0, now=151.0, policy=KUBELET) == 0.0


def test_a_container_that_ran_ten_minutes_starts_the_curve_over() -> None:
    entry = Entry(delay=300.0, updated=1_000.0)
    assert crashloops.wait(entry, finished=1_599.0, now=1_599.0, policy=KUBELET) == 300.0
    assert crashloops.wait(entry, finished=1_601.0, now=1_601.0, policy=KUBELET) == 0.0
    assert crashloops.restarted(entry, 1_601.0, KUBELET) == Entry(delay=10.0, updated=1_601.0)
    assert crashloops.restarted(entry, 1_599.0, KUBELET) == Entry(delay=300.0, updated=1_599.0)


def test_a_shrunk_policy_keeps_the_shape() -> None:
    small = Backoff(initial=0.05, cap=0.2, reset=0.4)
    waits = [w for _, w in crash_loop([0.0, 0.01, 0.07, 0.18, 0.39], small)]
    assert waits == pytest.approx([0.0, 0.05, 0.1, 0.2, 0.2])


def test_message_is_worded_as_the_kubelet_words_it() -> None:
    names = {"container": "runner", "pod": "r-1", "namespace": "arc-runners", "uid": "u-1"}
    assert crashloops.message(40.0, **names) == (
        "back-off 40s restarting failed container=runner pod=r-1_arc-runners(u-1)"
    )
    assert (
        crashloops.event_message(**names)
        == "Back-off restarting failed container runner in pod r-1_arc-runners(u-1)"
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0s"),
        (0.05, "50ms"),
        (0.0015, "1.5ms"),
        (0.000002, "2µs"),
        (1.2, "1.2s"),
        (10.0, "10s"),
        (80.0, "1m20s"),
        (160.0, "2m40s"),
        (300.0, "5m0s"),
        (3600.0, "1h0m0s"),
        (3723.5, "1h2m3.5s"),
    ],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert crashloops.go_duration(seconds) == text


def test_restart_backoff_is_a_kubelets_unless_shrunk() -> None:
    timing = KubeletTiming()
    assert (timing.restart, timing.restart_max, timing.restart_reset) == (10.0, 300.0, 600.0)
