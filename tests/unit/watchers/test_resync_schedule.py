"""The resync schedule (``watchers.resyncs``): where each watch's periodic re-list falls in the period,
and when the next one is due after a list. Pure functions of numbers; the e2e tests
(tests/e2e/watchers/test_paged_resync.py) show the watchers keeping to it."""

from __future__ import annotations

import itertools

import pytest

from watchers import WatchSettings, resyncs
from watchers.resyncs import Slot


def test_each_watch_gets_a_point_of_its_own_slice_of_the_period() -> None:
    slots = resyncs.slots(18, 900.0, seed=0)
    assert len(slots) == 18
    for i, slot in enumerate(slots):
        assert slot.period == 900.0
        assert 50.0 * i <= slot.offset < 50.0 * (i + 1)


def test_the_jitter_is_seeded_the_same_in_every_run_and_differs_between_seeds() -> None:
    assert resyncs.slots(18, 900.0, seed=7) == resyncs.slots(18, 900.0, seed=7)
    assert resyncs.slots(18, 900.0, seed=7) != resyncs.slots(18, 900.0, seed=8)
    # Jittered, not evenly spaced: the gaps between neighbours are not all one slice.
    offsets = [s.offset for s in resyncs.slots(18, 900.0, seed=7)]
    gaps = {round(b - a, 6) for a, b in itertools.pairwise(offsets)}
    assert len(gaps) > 1


def test_no_two_watches_resync_together_over_many_periods() -> None:
    slots = resyncs.slots(18, 900.0, seed=3)
    times = sorted(s.offset + k * 900.0 for s in slots for k in range(10))
    assert len(times) == len(set(times)) == 180
    # Every period holds exactly one re-list of each watch: no burst of several periods' worth.
    for k in range(10):
        assert len([t for t in times if 900.0 * k <= t < 900.0 * (k + 1)]) == 18


@pytest.mark.parametrize(
    ("offset", "listed", "due"),
    [
        # The first list at the anchor: the first slot at least half a period later.
        (100.0, 0.0, 1000.0),  # 100 is too soon after the start; the next period's slot
        (600.0, 0.0, 600.0),
        (450.0, 0.0, 450.0),  # exactly half a period: due
        # Steady state: a re-list that ends a little after its slot is next due a period later.
        (600.0, 603.5, 1500.0),
        (100.0, 1000.2, 1900.0),
        # A 410 re-list off schedule, a little before the slot: the slot is skipped, not run twice.
        (600.0, 1400.0, 2400.0),
        # ...and well before it: the slot is kept.
        (600.0, 1000.0, 1500.0),
    ],
)
def test_the_next_resync_is_the_first_slot_half_a_period_after_the_last_list(
    offset: float, listed: float, due: float
) -> None:
    assert Slot(900.0, offset).next_after(listed, anchor=0.0) == pytest.approx(due)


def test_the_slots_count_from_the_anchor() -> None:
    slot = Slot(60.0, 10.0)
    assert slot.next_after(1000.0, anchor=1000.0) == pytest.approx(1070.0)
    assert slot.next_after(1070.4, anchor=1000.0) == pytest.approx(1130.0)


def test_the_interval_between_resyncs_stays_the_period() -> None:
    slot, at = Slot(30.0, 7.5), 0.0
    due = []
    for _ in range(20):
        at = slot.next_after(at + 0.8, anchor=0.0)  # each list takes 0.8 s
        due.append(at)
    assert [round(b - a, 9) for a, b in itertools.pairwise(due)] == [30.0] * 19


@pytest.mark.parametrize(("period", "offset"), [(0.0, 0.0), (-1.0, 0.0), (10.0, 10.0), (10.0, -0.1)])
def test_a_slot_outside_its_period_is_refused(period: float, offset: float) -> None:
    with pytest.raises(ValueError, match="offset"):
        Slot(period, offset)


async def test_the_supervisor_gives_each_watcher_the_slot_of_its_place() -> None:
    from kubernetes_asyncio import client

    from watchers.supervising import Watchers

    class Nothing:
        async def append(self, records: object) -> object:
            raise AssertionError("never started")

        def items(self, kind: str, namespace: str | None = None) -> list[object]:
            return []

    settings = WatchSettings(namespaces=("a", "b"), resync=120.0, resync_seed=5)
    async with client.ApiClient() as api:
        scheduled = Watchers(api=api, journal=Nothing(), known=Nothing(), settings=settings)
        unscheduled = Watchers(
            api=api, journal=Nothing(), known=Nothing(), settings=WatchSettings(resync=None)
        )
    assert [w.slot for w in scheduled.watchers] == resyncs.slots(len(settings.watched()), 120.0, seed=5)
    assert all(w.slot is None for w in unscheduled.watchers)
