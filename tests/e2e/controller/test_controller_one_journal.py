"""One writer per journal file, whatever name it is opened by, and a writer that cannot recover is not alive.

* Two ``arcsm run`` on one journal file, the second through a symbolic or a hard link: the second says in
  one line that the journal is open in another process and exits 1; the first goes on writing it.
* A journal written behind the controller's back (another writer's record at the seq it was to write
  next, as a second controller on the same file left it): the controller's writer stops for good, and
  ``/healthz`` answers 503 saying why, so the kubelet's liveness probe restarts the process (which
  reopens the journal where it now ends); ``/readyz`` says it too.

Real ``arcsm run`` subprocesses against the emulated cluster (or the real control plane); every wait is
on a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests import helpers
from tests.e2e.controller import harness
from tests.e2e.controller.replicas import SERVING
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


class Running:
    """One ``arcsm run --http`` subprocess, its stderr lines and the URL of its HTTP API."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        assert proc.stderr is not None
        self.reading = asyncio.create_task(helpers.collect(proc.stderr, self.lines))

    @property
    def url(self) -> str:
        found = [m.group(1) for line in self.lines if (m := SERVING.search(line)) is not None]
        return found[0].rstrip('",') if found else ""

    @classmethod
    async def start(cls, journal: Path, kubeconfig: Path) -> Running:
        proc = await asyncio.create_subprocess_exec(
            *harness.run_command(journal, kubeconfig, "--http", "127.0.0.1:0", "--log-format", "text"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        return cls(proc)

    async def stop(self) -> None:
        await helpers.terminate(self.proc)
        await asyncio.wait_for(self.reading, timeout=10)


async def answer(url: str, path: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        return await http.get(path)


async def ready(first: Running) -> bool:
    return bool(first.url) and (await answer(first.url, "/readyz")).status_code == 200


def symlink(journal: Path, other: Path) -> None:
    other.symlink_to(journal)


def hard_link(journal: Path, other: Path) -> None:
    os.link(journal, other)


@pytest.mark.parametrize("link", [symlink, hard_link], ids=["symlink", "hard-link"])
async def test_a_second_controller_on_a_link_to_the_journal_is_refused_in_one_line(
    world: World, tmp_path: Path, link: Callable[[Path, Path], None]
) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    journal, other = tmp_path / "journal.db", tmp_path / "elsewhere.db"
    first = await Running.start(journal, kubeconfig)
    try:
        await eventually(lambda: ready(first), timeout=TIMEOUT, what="the first controller ready")
        link(journal, other)
        code, lines = await harness.run_to_exit(*harness.run_command(other, kubeconfig), timeout=TIMEOUT)
        assert code == 1, lines
        assert len(lines) == 1 and "is open in another process" in lines[0], lines
        # The first one still writes its journal: a scale set it is given is journaled and decided.
        async with client.ApiClient(world.configuration()) as kube:
            await harness.create_secret(kube)
            await harness.create(kube, harness.scale_set_body(world))

            async def running() -> bool:
                return await harness.phase(kube) == "Running"

            await eventually(running, timeout=TIMEOUT, what="the scale set Running")
        assert (await answer(first.url, "/readyz")).json()["journalWritable"] is True
        assert not [line for line in first.lines if "Traceback" in line], first.lines[-20:]
    finally:
        await first.stop()
    assert first.proc.returncode == 0, first.lines[-20:]


def write_behind_its_back(journal: Path) -> int:
    """Append one record to the journal as another writer would (SQLite's own locking keeps the file
    whole): at the seq the controller's writer is to use next. The seq written."""
    with sqlite3.connect(journal, timeout=30, isolation_level=None) as db:
        db.execute("BEGIN IMMEDIATE")
        (last,) = db.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()
        db.execute(
            "INSERT INTO records (seq, at, type, kind, namespace, name, uid, resource_version, body, "
            "checksum) VALUES (?, '2026-01-01T00:00:00.000000Z', 'timer', 'Pod', 'default', 'x', '', '', "
            "'{}', 0)",
            (last + 1,),
        )
        db.execute("COMMIT")
    return int(last) + 1


async def test_a_writer_that_cannot_recover_fails_liveness(world: World, tmp_path: Path) -> None:
    kubeconfig = world.write_kubeconfig(tmp_path / "kubeconfig")
    journal = tmp_path / "journal.db"
    first = await Running.start(journal, kubeconfig)
    try:
        await eventually(lambda: ready(first), timeout=TIMEOUT, what="the controller ready")
        assert (await answer(first.url, "/healthz")).status_code == 200
        write_behind_its_back(journal)
        async with client.ApiClient(world.configuration()) as kube:
            # Observed (arcsm watches ServiceAccounts): the writer's next append meets that seq.
            await client.CoreV1Api(kube).create_namespaced_service_account(
                harness.NS, {"metadata": {"name": "observed"}}
            )

            async def not_alive() -> httpx.Response | None:
                found = await answer(first.url, "/healthz")
                return found if found.status_code == 503 else None

            dead = await eventually(not_alive, timeout=TIMEOUT, what="/healthz answering 503")
        assert "reopen" in dead.json()["journalError"], dead.json()
        readiness = (await answer(first.url, "/readyz")).json()
        assert readiness["ready"] is False and readiness["journalWritable"] is False, readiness
    finally:
        await first.stop()
