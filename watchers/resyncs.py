"""When each watch re-lists on its own: the periodic resyncs of all watches spread over the period.

Every watch re-lists once a period to catch drift. Started together and re-listing a fixed period after
their last list, all of them would list at the same moment, every period: one burst of every kind's
objects decoded at once beside the projection (the controller's memory peak in a large fleet). Instead
the period is cut into one equal slice per watch, and watch ``i`` re-lists at a point of slice ``i``:

    slots of watch i:  anchor + offset_i + k * period     offset_i = period * (i + u_i) / count

where ``anchor`` is when the watches started and ``u_i`` in [0, 1) is drawn from a ``random.Random``
seeded with the settings' ``resync_seed``, so a schedule is the same in every run (tests pin it). No
two watches share a slice, so at most two resyncs fall close together (the end of one slice and the
start of the next).

A watch re-lists at the first of its slots at least half a period after its last list: every period in
the steady state, and never within half a period of a list that a start or a 410 made off schedule.
Pure: no clock, no I/O; the watcher passes the loop's time in.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """One watch's place in the resync period: it re-lists at ``anchor + offset + k * period``."""

    period: float
    offset: float

    def __post_init__(self) -> None:
        if self.period <= 0 or not 0 <= self.offset < self.period:
            raise ValueError(f"need period > 0 and 0 <= offset < period, got {self.period}, {self.offset}")

    def next_after(self, listed: float, *, anchor: float) -> float:
        """The time of the next periodic re-list of a watch that last listed at ``listed``."""
        earliest = listed + self.period / 2
        k = math.ceil((earliest - anchor - self.offset) / self.period)
        return anchor + self.offset + k * self.period


def slots(count: int, period: float, *, seed: int) -> list[Slot]:
    """The slot of each of ``count`` watches, in order: watch ``i`` at a seeded point of slice ``i``."""
    draw = random.Random(seed)
    width = period / count if count else period
    return [Slot(period, min(width * (i + draw.random()), math.nextafter(period, 0))) for i in range(count)]
