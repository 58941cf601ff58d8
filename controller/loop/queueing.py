"""The work queue: which object keys wait to be decided, and when each may be.

Semantics (those of controller-runtime's rate-limited work queue, on asyncio):

* a key is queued at most once: adding a queued key does nothing (de-duplication);
* a key is handed out to one worker at a time: a key added while it is being reconciled is marked dirty
  and handed out again once ``done`` is called for it, so the reconcile that follows reads the newer state;
* ``add`` (a watch event, a timer that fired, a fact recorded) queues a key at once and ``add_after``
  once a delay has passed (the earliest of several delays wins): neither waits on any rate limit, so how
  fast event-driven work starts is bounded by the workers alone;
* ``add_rate_limited`` (a reconcile that failed) holds a key back by the longer of two delays, as
  controller-runtime's default controller rate limiter does: the key's own exponential backoff
  (``initial * 2**failures``, capped; ``forget`` resets it after a reconcile that went well) and its
  group's token bucket (``rate`` per second, bursts of ``burst``), which spaces out the retries of a
  group when many of its keys fail at once (an outage). Each group has its own bucket, as each controller
  has its own there;
* ``shut_down`` stops handing out keys: ``get`` answers None, and workers finish what they hold.

How many keys are reconciled at once is the number of workers calling ``get`` (``QueueSettings.workers``).
With a ``group`` function (the controller's: a key's kind), each group has its own FIFO of ready keys and
``get`` takes from the groups in turn (round robin), so a burst of one kind (a thousand runners after a
job wave) does not stand in front of a key of another kind: the other kind's key waits for at most one
key of each other group. ``QueueSettings.per_kind`` also bounds the keys of one group handed out and not
yet ``done``: ``get`` skips a group at its bound, so a saturated kind holds no worker and the others keep
going.

An ``Observer`` hears what happens to each key, as client-go's queue metrics do: ``added`` when a key
becomes queued (or, being reconciled, is marked dirty; adding a key already queued or dirty is no add),
``taken`` when a worker gets it, ``done``, and ``delayed`` for every add with a positive delay
(``controller.loop.runtimemetrics`` turns these into the ``workqueue_*`` families).

The bucket is written here rather than taken from ``aiolimiter`` (the clients' request limiter): a
requeue needs to know its delay when it is asked for (golang.org/x/time/rate's ``Reserve().Delay()``,
which controller-runtime's bucket uses), where ``aiolimiter`` only makes a caller wait for a token.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

from controller.loop import wakeups
from controller.loop.settings import QueueSettings

K = TypeVar("K", bound=Hashable)


class Backoff(Generic[K]):
    """Per-key exponential backoff: each failure doubles the delay, up to ``maximum``."""

    def __init__(self, *, initial: float, maximum: float) -> None:
        self.initial = initial
        self.maximum = maximum
        self._failures: dict[K, int] = {}

    def next(self, key: K) -> float:
        """The delay before ``key`` is retried after one more failure."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        # Capping the exponent keeps 2**n finite for a key that fails for weeks.
        return min(self.initial * float(2 ** min(failures, 64)), self.maximum)

    def failures(self, key: K) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)


class Bucket:
    """A token bucket of ``burst`` tokens refilled at ``rate`` per second, from which each ``reserve``
    takes one, owing it if the bucket is empty, and answers how long until that token is there."""

    def __init__(self, *, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._last = now

    def reserve(self, now: float) -> float:
        """Take a token at ``now``; the seconds until it is there (0 when the bucket had one)."""
        self._tokens = min(self.burst, self._tokens + max(now - self._last, 0.0) * self.rate)
        self._last = max(now, self._last)
        self._tokens -= 1
        return max(-self._tokens / self.rate, 0.0)


class Observer(Protocol):
    """What a work queue tells about its keys, each with the key's group."""

    def added(self, group: str, key: Hashable) -> None: ...

    def taken(self, group: str, key: Hashable) -> None: ...

    def done(self, group: str, key: Hashable) -> None: ...

    def delayed(self, group: str) -> None: ...


class _Unobserved:
    def added(self, group: str, key: Hashable) -> None:
        pass

    def taken(self, group: str, key: Hashable) -> None:
        pass

    def done(self, group: str, key: Hashable) -> None:
        pass

    def delayed(self, group: str) -> None:
        pass


def _one_group(key: object) -> str:
    return ""


class WorkQueue(Generic[K]):
    def __init__(
        self,
        settings: QueueSettings,
        *,
        group: Callable[[K], str] = _one_group,
        observer: Observer | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """``clock`` answers monotonic seconds (the running loop's time unless given)."""
        # Ready keys per group, FIFO within a group; ``get`` takes from the groups in turn.
        self._ready: dict[str, collections.deque[K]] = {}
        self._groups: list[str] = []  # the groups in the order they first had a key: the turns
        self._turn = 0  # the place in ``_groups`` where the next search for a key starts
        self._group = group
        self._bounds = dict(settings.per_kind)
        self._busy: collections.Counter[str] = collections.Counter()
        self._queued: set[K] = set()
        self._processing: set[K] = set()
        self._dirty: set[K] = set()
        self._waiting: dict[K, float] = {}
        self._timers: list[tuple[float, int, K]] = []
        self._order = itertools.count()
        self._backoff: Backoff[K] = Backoff(initial=settings.backoff_initial, maximum=settings.backoff_max)
        self._rate, self._burst = settings.rate, settings.burst
        self._buckets: dict[str, Bucket] = {}
        self._clock = clock
        self._wakeup = wakeups.Wakeup()
        self._observer: Observer = observer or _Unobserved()
        self._closed = False

    # -- adding --------------------------------------------------------------------------------------------

    def add(self, key: K) -> None:
        """Queue ``key`` now (a no-op if it is queued; marked dirty if it is being reconciled)."""
        if self._closed:
            return
        if key in self._processing:
            if key not in self._dirty:
                self._dirty.add(key)
                self._observer.added(self._group(key), key)
        elif key not in self._queued:
            self._observer.added(self._group(key), key)
            self._enqueue(key)

    def _enqueue(self, key: K) -> None:
        self._queued.add(key)
        group = self._group(key)
        if group not in self._ready:
            self._ready[group] = collections.deque()
            self._groups.append(group)
        self._ready[group].append(key)
        self._wakeup.notify()

    def add_after(self, key: K, delay: float) -> None:
        """Queue ``key`` once ``delay`` seconds have passed (an earlier pending delay for it wins)."""
        if delay <= 0:
            self.add(key)
            return
        if self._closed:
            return
        self._observer.delayed(self._group(key))
        due = self._now() + delay
        if self._waiting.get(key, due + 1) <= due:
            return
        self._waiting[key] = due
        heapq.heappush(self._timers, (due, next(self._order), key))
        self._wakeup.notify()

    def add_rate_limited(self, key: K) -> float:
        """Queue ``key`` after the longer of its next backoff delay and its group's bucket; returns the
        delay."""
        group = self._group(key)
        now = self._now()
        bucket = self._buckets.get(group)
        if bucket is None:
            bucket = self._buckets[group] = Bucket(rate=self._rate, burst=self._burst, now=now)
        delay = max(self._backoff.next(key), bucket.reserve(now))
        self.add_after(key, delay)
        return delay

    def forget(self, key: K) -> None:
        """``key`` reconciled well: its next failure starts the backoff from the beginning."""
        self._backoff.forget(key)

    def failures(self, key: K) -> int:
        return self._backoff.failures(key)

    # -- taking --------------------------------------------------------------------------------------------

    async def get(self) -> K | None:
        """The next key to reconcile, once one is ready; None after shut_down.

        The caller owns the key until it calls ``done``. ``get`` lets the loop run once before it hands out
        a key, so a worker whose reconciles decide nothing (and so never wait) does not hold the loop for
        as long as keys are ready.
        """
        await asyncio.sleep(0)
        while not self._closed:
            self._promote()
            turn = self._next_turn()
            if turn is not None:
                group = self._groups[turn]
                self._turn = turn + 1
                key = self._ready[group].popleft()
                self._queued.discard(key)
                self._processing.add(key)
                self._busy[group] += 1
                self._observer.taken(group, key)
                return key
            await self._wakeup.wait(self._next_due())
        return None

    def done(self, key: K) -> None:
        """The reconcile of ``key`` ended; hand it out again if it was added meanwhile."""
        if key in self._processing:
            self._processing.discard(key)
            self._busy[self._group(key)] -= 1
            self._observer.done(self._group(key), key)
            self._wakeup.notify()  # a worker may take a key of this group again
        if key in self._dirty:
            self._dirty.discard(key)
            if not self._closed:
                self._enqueue(key)  # counted as added when it was marked dirty

    def shut_down(self) -> None:
        """Stop handing out keys; workers in a reconcile finish it."""
        self._closed = True
        self._wakeup.notify()

    # -- reading -------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_flight(self) -> frozenset[K]:
        """The keys being reconciled now."""
        return frozenset(self._processing)

    def can_hand_out(self) -> bool:
        """Whether a key is ready that its group's bound lets ``get`` hand out now."""
        self._promote()
        return self._next_turn() is not None

    def in_flight_of(self, group: str) -> int:
        """How many keys of ``group`` are handed out and not yet done."""
        return self._busy[group]

    def __len__(self) -> int:
        """Keys ready to be handed out, those waiting for their group's bound included (delayed keys not
        counted)."""
        return sum(len(keys) for keys in self._ready.values())

    def waiting(self) -> dict[K, float]:
        """Delayed keys and the seconds left until each is queued."""
        now = self._now()
        return {key: max(due - now, 0.0) for key, due in self._waiting.items()}

    # -- internals -----------------------------------------------------------------------------------------

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def _promote(self) -> None:
        """Queue the delayed keys whose time has come."""
        now = self._now()
        while self._timers and self._timers[0][0] <= now:
            due, _, key = heapq.heappop(self._timers)
            if self._waiting.get(key) == due:  # otherwise an earlier delay replaced this one
                del self._waiting[key]
                self.add(key)

    def _next_turn(self) -> int | None:
        """The place in ``_groups`` of the next group, from ``_turn`` on and round, with a ready key and
        below its bound (None: nothing to hand out)."""
        count = len(self._groups)
        for step in range(count):
            turn = (self._turn + step) % count
            group = self._groups[turn]
            bound = self._bounds.get(group)
            if self._ready[group] and (bound is None or self._busy[group] < bound):
                return turn
        return None

    def _next_due(self) -> float | None:
        while self._timers and self._waiting.get(self._timers[0][2]) != self._timers[0][0]:
            heapq.heappop(self._timers)  # stale: an earlier delay for the key already fired
        return max(self._timers[0][0] - self._now(), 0.0) if self._timers else None
