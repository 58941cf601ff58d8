"""Benchmark: how long one key of another kind waits behind a burst of one kind in the work queue, as a
ratio of the same key's wait in an empty queue.

The real ``WorkQueue`` with the controller's grouping (a key's kind) and its default settings is worked by
8 workers whose reconcile is a fixed await (``--cost``, 2 ms), a stand-in for a reconcile that waits on the
journal and the API server. A burst of ``--burst`` EphemeralRunner keys (a job wave) is added, then one
EphemeralRunnerSet key (the decision that scales up another set). Measured for that key: the time from its
add until a worker takes it and until its reconcile is done, and how many keys were handed out before it;
the baseline is the same key added to an empty queue, in the same run. The time until the whole burst is
reconciled is shown against its floor, the burst's reconciles spread over the workers with no wait.
``--against REV`` also measures the queue (and its settings' defaults) as they were at a git revision, for
a before/after in one run.

Run from the repository root: ``.venv/bin/python bench/queue_fairness.py [--burst N] [--repeat R]
[--against REV]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.loop import queueing, settings  # noqa: E402
from statemachines.effects import ObjectRef  # noqa: E402

WORKERS = 8
OTHER = ObjectRef("EphemeralRunnerSet", "runners", "scale-up")


@dataclass
class Wait:
    taken: float  # seconds from the add until a worker took the key
    done: float  # seconds from the add until its reconcile was done
    ahead: int  # keys handed out before it
    drained: float  # seconds from the first add until every key's reconcile was done


async def one(make_queue: Callable[[], Any], burst: int, cost: float) -> Wait:
    """One run: ``burst`` runner keys then the runner set key, worked by ``WORKERS`` workers."""
    queue = make_queue()
    added = taken = finished = drained = 0.0
    ahead = left = 0
    over = asyncio.Event()

    async def worker() -> None:
        nonlocal taken, finished, ahead, left, drained
        while (key := await queue.get()) is not None:
            if key == OTHER:
                taken = time.perf_counter()
            elif not taken:
                ahead += 1
            await asyncio.sleep(cost)
            queue.done(key)
            if key == OTHER:
                finished = time.perf_counter()
            left -= 1
            if not left:
                drained = time.perf_counter() - first
                over.set()

    workers = [asyncio.create_task(worker()) for _ in range(WORKERS)]
    await asyncio.sleep(0)  # the workers wait in ``get``
    left, first = burst + 1, time.perf_counter()
    for i in range(burst):
        queue.add(ObjectRef("EphemeralRunner", "runners", f"r-{i}"))
    added = time.perf_counter()
    queue.add(OTHER)
    await over.wait()
    queue.shut_down()
    await asyncio.gather(*workers)
    return Wait(taken - added, finished - added, ahead, drained)


def at_revision(rev: str, path: str, name: str) -> ModuleType:
    """The module ``path`` as it was at git revision ``rev``, imported under ``name``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def maker(queues: ModuleType, settings_module: ModuleType) -> Callable[[], Any]:
    def make() -> Any:
        return queues.WorkQueue(settings_module.QueueSettings(workers=WORKERS), group=lambda key: key.kind)

    return make


async def main(burst: int, repeat: int, cost: float, against: str | None) -> None:
    versions = {"this tree": maker(queueing, settings)}
    if against is not None:
        old_settings = at_revision(against, "controller/loop/settings.py", "bench_settings_before")
        old_queueing = at_revision(against, "controller/loop/queueing.py", "bench_queueing_before")
        versions = {f"at {against}": maker(old_queueing, old_settings), **versions}
    print(f"one EphemeralRunnerSet key behind {burst} EphemeralRunner keys; {WORKERS} workers,")
    print(f"reconciles of {cost * 1000:g} ms; median of {repeat} runs (empty queue: the same key alone)")
    print()
    floor = -(-(burst + 1) // WORKERS) * cost
    print(
        "| queue | taken after (ms) | empty (ms) | × empty | done after (ms) | empty (ms) | × empty | ahead "
        "| burst done (s) | × floor |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, make in versions.items():
        behind = [await one(make, burst, cost) for _ in range(repeat)]
        empty = [await one(make, 0, cost) for _ in range(repeat)]

        def median(waits: list[Wait], field: str) -> float:
            return float(statistics.median(getattr(w, field) for w in waits))

        taken, taken0 = median(behind, "taken"), median(empty, "taken")
        done, done0 = median(behind, "done"), median(empty, "done")
        print(
            f"| {label} | {taken * 1000:.3f} | {taken0 * 1000:.3f} | {taken / taken0:,.1f} "
            f"| {done * 1000:.1f} | {done0 * 1000:.1f} | {done / done0:,.2f} | {median(behind, 'ahead'):g} "
            f"| {median(behind, 'drained'):.2f} | {median(behind, 'drained') / floor:.2f} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=1000, help="runner keys queued first (1000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case; the median is shown (3)")
    parser.add_argument("--cost", type=float, default=0.002, help="seconds one reconcile awaits (0.002)")
    parser.add_argument("--against", metavar="REV", help="also measure the queue at this git revision")
    args = parser.parse_args()
    asyncio.run(main(args.burst, args.repeat, args.cost, args.against))
