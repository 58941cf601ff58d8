"""A long chaos run outside pytest: random API and Actions faults, watch drops, 410 relists, outages of 10
to 30 s, spec edits, queued jobs and SIGKILL restarts of the real ``arcsm run``, for ``--minutes`` (and on
until ``--kills`` restarts), then the
oracle of ``tests/e2e/controller/chaos.py`` (every scale set at rest as a fault-free run leaves it, no
journal record lost, no busy runner removed, no registration orphaned).

Not a speed figure: it prints the seed first, a line of what the run did, and exits 0, or 1 with the
failure, the seed to replay it, the steps played and where the controller's journal is kept.

Run from the repository root: ``.venv/bin/python bench/chaos.py [--seed S] [--minutes M] [--kills K]
[--scale-sets N] [--world emulated|real]`` (``real``: the control plane ``python -m sim.controlplane.build``
built, its API faults kube-apiserver's restarts).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.controller import chaos, harness  # noqa: E402


async def main(seed: int, minutes: float, scale_sets: int, kills: int, world_kind: str) -> int:
    print(
        f"chaos seed {seed}, {minutes:g} minutes, at least {kills} kills, {scale_sets} scale sets", flush=True
    )
    directory = Path(tempfile.mkdtemp(prefix="arcsm-chaos-"))
    async with harness.github_world(world_kind) as world:
        try:
            ran = await chaos.run(world, directory, seed, minutes=minutes, scale_sets=scale_sets, kills=kills)
        except Exception:
            traceback.print_exc()
            print(f"the controller's journal is kept in {directory}", file=sys.stderr)
            return 1
    shutil.rmtree(directory, ignore_errors=True)
    print(ran.summary())
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--seed", type=int, default=None, help=f"default: ${chaos.SEED_VARIABLE}, else random"
    )
    parser.add_argument("--minutes", type=float, default=5.0, help="how long faults are drawn (default 5)")
    parser.add_argument(
        "--kills",
        type=int,
        default=0,
        help="go on past --minutes until this many kill -9 restarts (default 0)",
    )
    parser.add_argument("--scale-sets", type=int, default=3, help="scale sets in the run (default 3)")
    parser.add_argument("--world", choices=("emulated", "real"), default="emulated", help="default: emulated")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    seed = args.seed if args.seed is not None else chaos.seed_from_environment()
    sys.exit(asyncio.run(main(seed, args.minutes, args.scale_sets, args.kills, args.world)))
