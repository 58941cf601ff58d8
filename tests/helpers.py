"""Shared test helpers: waiting on conditions with a deadline (never on sleeps), where the ``arcsm``
command the tests run is, which modules a process imported, and kubeconfigs of the emulated cluster
that tell apart which one a process used."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from controller.emulated import waiting

if TYPE_CHECKING:
    from sim.world import World


def arcsm_command() -> str:
    """The ``arcsm`` of the interpreter under test: the script installed beside it, never another
    ``arcsm`` that happens to come first on PATH (which would silently be the one tested); PATH's only
    when this interpreter has none beside it."""
    beside = Path(sys.executable).parent / "arcsm"
    if beside.is_file():
        return str(beside)
    found = shutil.which("arcsm")
    if found is None:
        raise RuntimeError(f"no arcsm command beside {sys.executable} nor on PATH: pip install the package")
    return found


ARCSM = arcsm_command()

# Run by a Python process at start (``site`` imports it from PYTHONPATH): at exit, it writes the names
# of every module the process imported, one a line, to the file named by MODULES_REPORT.
SITECUSTOMIZE = """\
import atexit, os, sys

def _report(path=os.environ["MODULES_REPORT"]):
    with open(path, "w") as out:
        out.write("\\n".join(sorted(sys.modules)))

atexit.register(_report)
"""


def reporting_modules(directory: Path) -> tuple[dict[str, str], Path]:
    """Environment variables that make a Python subprocess (the ``arcsm`` script too) write the modules
    it imported to a file when it exits, and that file (read it with ``modules_in``)."""
    hook = directory / "modules-hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    report = directory / "modules.txt"
    paths = [str(hook), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {"PYTHONPATH": os.pathsep.join(paths), "MODULES_REPORT": str(report)}, report


def modules_in(report: Path) -> set[str]:
    assert report.is_file(), f"the process wrote no list of its modules to {report}"
    return set(report.read_text().splitlines())


def of_packages(modules: set[str], *packages: str) -> set[str]:
    """Those of ``modules`` that are ``packages`` or inside them."""
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


async def eventually(
    predicate: Callable[[], Any],
    *,
    timeout: float = 30.0,
    interval: float = 0.01,
    what: str = "condition",
) -> Any:
    """Poll ``predicate`` (plain or async) until it returns something truthy; fail with ``what`` after
    ``timeout`` seconds (a deadline for a busy machine: a condition that holds returns at once).

    An ``AssertionError`` raised by the predicate counts as "not yet" until the deadline, then is re-raised.
    """
    try:
        return await waiting.until(
            predicate, what=what, timeout=timeout, interval=interval, retry_on=(AssertionError,)
        )
    except waiting.TimedOut:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None


# The variables that point a process at a cluster; a test that chooses the cluster removes them.
CLUSTER_VARIABLES = ("KUBECONFIG", "ARCSM_KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")


def kubeconfig_as(world: World, path: Path, user: str, **changes: Any) -> Path:
    """The world's kubeconfig at ``path`` with the token ``user`` (the name the emulator logs), and any
    top-level ``changes`` (a key set to None is removed)."""
    world.write_kubeconfig(path)
    document = yaml.safe_load(path.read_text())
    document["users"][0]["user"]["token"] = user
    for key, value in changes.items():
        if value is None:
            document.pop(key.replace("_", "-"), None)
        else:
            document[key.replace("_", "-")] = value
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def free_port() -> int:
    """A TCP port nothing listens on now, for a server a test starts in another process."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def terminate(proc: asyncio.subprocess.Process, grace: float = 30.0) -> int | None:
    """SIGTERM, as Kubernetes stops a pod, then SIGKILL once ``grace`` seconds have passed; the exit
    status."""
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), timeout=grace)
        except TimeoutError:
            proc.kill()
    return await proc.wait()


async def collect(stream: asyncio.StreamReader, lines: list[str]) -> None:
    """Append each line of ``stream`` (a subprocess's output) to ``lines`` as it comes, until it ends."""
    while line := await stream.readline():
        lines.append(line.decode())
