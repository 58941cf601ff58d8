"""Benchmark: how many reconciles the update predicates save, as a ratio of predicates on to off.

The story of ``tests/e2e/controller/test_controller_predicates.py`` (a scale set with minRunners 1, or N
with ``--runners N``, reaches Running with its runners; its maxRunners is edited; it is deleted and cleaned
up) runs against the emulated world with the real controller, alternately with
``ReconcileSettings(predicates=True)`` and ``predicates=False``, in the same run. Counted per run:
reconciles (the Reconciler's own counter: every pass, whether or not it decided anything), decisions (the
journal's decision records) and wall-clock time. The test asserts both settings end the same; this
measures what the predicates save.

Run from the repository root: ``.venv/bin/python bench/reconcile_predicates.py [--repeat R] [--runners N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller import running  # noqa: E402
from controller.reconciling import Reconciler  # noqa: E402
from tests.e2e.controller import harness  # noqa: E402
from tests.e2e.controller.test_controller_predicates import story  # noqa: E402


@dataclass
class Run:
    reconciles: int
    decisions: int
    seconds: float


async def one(predicates: bool, directory: Path, runners: int) -> Run:
    """One story on a fresh world, counting the reconciles of every Reconciler the controller builds."""
    built: list[Reconciler] = []

    class Counted(Reconciler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)

    started = time.perf_counter()
    with mock.patch.object(running, "Reconciler", Counted):
        async with harness.github_world() as world:
            ended = await story(world, directory, predicates=predicates, runners=runners)
    seconds = time.perf_counter() - started
    return Run(sum(r.reconciles for r in built), ended.decisions, seconds)


async def main(repeat: int, runners: int) -> None:
    runs: dict[bool, list[Run]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            for predicates in (True, False) if i % 2 == 0 else (False, True):
                directory = Path(tmp) / f"{i}-{predicates}"
                directory.mkdir()
                runs[predicates].append(await one(predicates, directory, runners))

    def median(predicates: bool, field: str) -> float:
        return float(statistics.median(getattr(r, field) for r in runs[predicates]))

    print(f"story: create (minRunners {runners}), Running; maxRunners edit; delete. {repeat} runs each")
    print("| predicates | reconciles | decisions | seconds |")
    print("|---|---|---|---|")
    for predicates in (True, False):
        print(
            f"| {'on' if predicates else 'off'} | {median(predicates, 'reconciles'):g} "
            f"| {median(predicates, 'decisions'):g} | {median(predicates, 'seconds'):.2f} |"
        )
    print(
        f"on/off: reconciles {median(True, 'reconciles') / median(False, 'reconciles'):.2f}, "
        f"decisions {median(True, 'decisions') / median(False, 'decisions'):.2f} (medians)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="runs with each setting (default 3)")
    parser.add_argument("--runners", type=int, default=1, help="minRunners of the scale set (default 1)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    asyncio.run(main(args.repeat, args.runners))
