"""Benchmark: how long the ``arcsm`` command takes to show its help, as a ratio to ``import typer``.

Each command is started as a new process, as a user or a pod starts it: the installed console script
beside this interpreter, its output thrown away. The baseline is the least a typer command line costs,
``python -c "import typer"`` with the same interpreter, measured in the same run. The commands are
interleaved, each run R times after one unmeasured run (which leaves the bytecode cache warm); the
figures are medians, with each command's peak RSS (``wait4``) and, from one more run, how many modules
it imported and how many of them were the emulator's (``sim``), read from ``sys.modules`` at its exit.

Run: ``.venv/bin/python bench/cli_startup.py [--repeat R] [--command NAME]...``. It exits 1 when a
help takes more than ``TARGET`` times the baseline. (To measure another checkout of arcsm with the same
interpreter, put it first on ``PYTHONPATH``.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 3.0
ARCSM = shutil.which("arcsm", path=str(Path(sys.executable).parent)) or "arcsm"
BASELINE = "python -c 'import typer'"
COMMANDS: dict[str, list[str]] = {
    BASELINE: [sys.executable, "-c", "import typer"],
    "arcsm --help": [ARCSM, "--help"],
    "arcsm run --help": [ARCSM, "run", "--help"],
    "arcsm listener --help": [ARCSM, "listener", "--help"],
    "arcsm --version": [ARCSM, "--version"],
}
# A fixed width and no colour, so every run writes the same help.
ENV = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
# Imported at start from PYTHONPATH by ``site``: writes the names in ``sys.modules`` at exit.
HOOK = """\
import atexit, os, sys
atexit.register(lambda path=os.environ["MODULES_REPORT"]: open(path, "w").write("\\n".join(sys.modules)))
"""


def run_once(argv: list[str], env: dict[str, str] = ENV) -> tuple[float, int]:
    """Wall-clock seconds from start to exit, and the peak RSS in KiB; stops on a non-zero exit."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}")
    return elapsed, usage.ru_maxrss


def imported(argv: list[str]) -> tuple[int, int]:
    """How many modules ``argv`` has imported when it exits, and how many of them are ``sim``'s."""
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "sitecustomize.py").write_text(HOOK)
        report = Path(directory) / "modules.txt"
        paths = os.pathsep.join(filter(None, [directory, ENV.get("PYTHONPATH")]))
        env = {**ENV, "PYTHONPATH": paths, "MODULES_REPORT": str(report)}
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
        modules = report.read_text().splitlines()
    hook = {"sitecustomize"}
    return len(set(modules) - hook), sum(1 for name in modules if name == "sim" or name.startswith("sim."))


def main(repeat: int, names: list[str]) -> int:
    commands = {name: COMMANDS[name] for name in [BASELINE, *names] if name in COMMANDS}
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    rss: dict[str, list[int]] = {name: [] for name in commands}
    for argv in commands.values():
        run_once(argv)
    for _ in range(repeat):
        for name, argv in commands.items():
            took, peak = run_once(argv)
            seconds[name].append(took)
            rss[name].append(peak)
    baseline = statistics.median(seconds[BASELINE])
    print(f"{repeat} runs each, medians\n")
    print("| command | median s | × baseline | peak RSS MiB | modules | of them `sim` |")
    print("|---|---|---|---|---|---|")
    over = []
    for name, argv in commands.items():
        median = statistics.median(seconds[name])
        ratio = median / baseline
        modules, sim = imported(argv)
        mib = statistics.median(rss[name]) / 1024
        print(f"| `{name}` | {median:.3f} | {ratio:.2f} | {mib:.0f} | {modules} | {sim} |")
        if name.endswith("--help") and ratio > TARGET:
            over.append(f"{name}: {ratio:.2f}× the baseline, above the target of {TARGET}×")
    sys.stdout.flush()
    for line in over:
        print(line, file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15, help="measured runs of each command")
    parser.add_argument(
        "--command",
        action="append",
        choices=[name for name in COMMANDS if name != BASELINE],
        help="measure only this command (repeatable; default: all)",
    )
    arguments = parser.parse_args()
    sys.exit(main(arguments.repeat, arguments.command or [n for n in COMMANDS if n != BASELINE]))
