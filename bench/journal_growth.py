"""Benchmark: journal records and bytes per job, whole objects against slim ones, at two fleet sizes.

``tests/e2e/controller/jobflow.py`` runs: N scale sets (default 10 and 50) on a fresh emulated world
with the fake GitHub and the real controller in-process, each set Running, then K jobs per set (default
1) queued and run to the end (runner templates with ``restartPolicy: Never``). Counted from the journal
between the jobs being queued and every runner being gone: records and body bytes, per job, in total and
for observed Pods. Each N runs with ``WatchSettings(slim=False)`` (whole objects, as the server sent them)
and with the default ``slim=True`` in the same run; the table gives slim as a ratio of whole, and each
figure at the largest N as a ratio of the smallest (1.00: flat in N).

Run from the repository root: ``.venv/bin/python bench/journal_growth.py [--sets 10 50] [--jobs K]``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.controller import harness, jobflow  # noqa: E402

POD = ("observed", "Pod")


async def one(scale_sets: int, jobs: int, slim: bool) -> tuple[jobflow.JobRun, float]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        async with harness.github_world() as world:
            run = await jobflow.run(
                world, Path(directory), scale_sets=scale_sets, jobs_per_set=jobs, slim=slim, timeout=900
            )
    return run, time.perf_counter() - started


def _figures(run: jobflow.JobRun) -> dict[str, float]:
    pods, pod_bytes = run.by_kind.get(POD, (0, 0))
    return {
        "records/job": run.records_per_job,
        "KB/job": run.bytes_per_job / 1024,
        "Pod records/job": pods / run.jobs,
        "Pod KB/job": pod_bytes / 1024 / run.jobs,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, nargs="+", default=[10, 50], help="scale set counts")
    parser.add_argument("--jobs", type=int, default=1, help="jobs per scale set")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    results: dict[tuple[int, bool], dict[str, float]] = {}
    for sets in args.sets:
        for slim in (False, True):
            run, seconds = await one(sets, args.jobs, slim)
            results[(sets, slim)] = _figures(run)
            shown = ", ".join(f"{k} {v:.1f}" for k, v in results[(sets, slim)].items())
            print(f"N={sets} {'slim ' if slim else 'whole'}: {run.jobs} jobs in {seconds:.0f} s: {shown}")
    names = list(results[(args.sets[0], False)])
    print()
    print("| N | " + " | ".join(f"{n} whole | slim | ratio" for n in names) + " |")
    print("|---" * (1 + 3 * len(names)) + "|")
    for sets in args.sets:
        whole, slim = results[(sets, False)], results[(sets, True)]
        cells = [f"{whole[n]:.1f} | {slim[n]:.1f} | {slim[n] / whole[n]:.2f}" for n in names]
        print(f"| {sets} | " + " | ".join(cells) + " |")
    low, high = args.sets[0], args.sets[-1]
    if low != high:
        for slim in (False, True):
            flat = ", ".join(f"{n} {results[(high, slim)][n] / results[(low, slim)][n]:.2f}" for n in names)
            print(f"{'slim' if slim else 'whole'}, N={high} / N={low}: {flat}")


if __name__ == "__main__":
    asyncio.run(main())
