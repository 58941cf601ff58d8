"""The controller's journal volume fills up, and is given room again.

Real composition root (``controller.loop.running.run`` with the HTTP API), the emulated cluster with the fake
GitHub, and the journal on a real filesystem that runs out of space: a small tmpfs, filled to the last
byte by another file, so SQLite's appends fail with the genuine "database or disk is full". Mounting it
needs root (CI runs as root); elsewhere the test is skipped, and
``tests/e2e/api/test_readiness_journal_full.py`` covers the journal and ``/readyz`` with SQLite's own page
cap.

A full volume still takes a small write now and then (SQLite reuses the space a failed write had taken),
so an outage may end and start again before the volume is given room; the watchers retry after a second
here, which keeps each outage long enough to be seen. While appends fail: ``/readyz`` answers 503 with the
reason, a Warning Event ``JournalWriteFailed``
is on the controller's Pod, and the log has one error line per outage, not one per failed append. Once
the filler file is removed: ``/readyz`` answers 200, a Normal ``JournalWritable`` Event follows, and the
scale set created while nothing could be journaled is decided (the watchers listed it again): nothing
was lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from kubernetes_asyncio import client

from controller.loop import running
from controller.loop.settings import HttpSettings
from tests.e2e.controller import harness
from tests.helpers import eventually
from watchers.settings import Backoff

TIMEOUT = 60.0
POD = "arcsm-7d9f-0"
PAD = "x" * 60_000


@contextlib.contextmanager
def small_volume(path: Path, size: str = "8m") -> Iterator[Path]:
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(volume: Path) -> Path:
    """Write a file until the volume has no byte left."""
    filler = volume / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        try:
            while True:
                out.write(b"\0")
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


async def pod_events(kube: client.ApiClient) -> list[tuple[str, str, int]]:
    events = await client.CoreV1Api(kube).list_namespaced_event(harness.CONTROLLER_NS)
    return [
        (e.type, e.reason, e.count or 1)
        for e in events.items
        if e.involved_object.kind == "Pod" and e.involved_object.name == POD and e.source.component == "arcsm"
    ]


async def test_a_full_journal_volume_is_reported_and_nothing_is_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with small_volume(tmp_path / "volume") as volume:
        async with harness.github_world() as world, client.ApiClient(world.configuration()) as kube:
            await harness.create_secret(kube)
            base = harness.Controller(world, tmp_path).settings
            settings = dataclasses.replace(
                base,
                journal_path=volume / "journal.db",
                http=HttpSettings(host="127.0.0.1", port=0),
                pod_name=POD,
                watch=dataclasses.replace(base.watch, backoff=Backoff(initial=1.0, maximum=2.0)),
            )
            urls: list[str] = []
            stop = asyncio.Event()
            task = asyncio.create_task(running.run(settings, stop=stop, on_http=urls.append))
            try:
                await eventually(lambda: urls or task.done(), timeout=TIMEOUT, what="the API listening")
                assert urls, task
                async with httpx.AsyncClient(base_url=urls[0], timeout=10) as http:

                    async def readiness(status: int) -> dict[str, object] | None:
                        answer = await http.get("/readyz")
                        return answer.json() if answer.status_code == status else None

                    await eventually(lambda: readiness(200), timeout=TIMEOUT, what="/readyz 200")
                    filler = fill(volume)
                    body = harness.scale_set_body(world)
                    body["metadata"]["annotations"] = {"pad": PAD}
                    await harness.create(kube, body)
                    edits = 0

                    async def unready() -> dict[str, object] | None:
                        nonlocal edits  # each edit is a watch event the journal must write
                        edits += 1
                        patch = {"metadata": {"annotations": {"pad": f"{edits}{PAD}"}}}
                        await harness.merge_patch(kube, "AutoscalingRunnerSet", "arc", patch)
                        return await readiness(503)

                    failing = await eventually(unready, timeout=TIMEOUT, what="/readyz 503")
                    assert failing["journalWritable"] is False
                    assert "database or disk is full" in str(failing["journalError"])
                    warned = await eventually(
                        lambda: pod_events(kube), timeout=TIMEOUT, what="the Warning Event on the Pod"
                    )
                    assert warned[0][:2] == ("Warning", "JournalWriteFailed")

                    filler.unlink()
                    await eventually(lambda: readiness(200), timeout=TIMEOUT, what="/readyz 200 again")

                    async def recovered() -> set[tuple[str, str]]:
                        reasons = {(kind, reason) for kind, reason, _ in await pod_events(kube)}
                        return reasons if ("Normal", "JournalWritable") in reasons else set()

                    await eventually(recovered, timeout=TIMEOUT, what="the Normal Event on the Pod")
                    await eventually(
                        lambda: _running(kube), timeout=TIMEOUT, what="the scale set decided and Running"
                    )
                    last = await harness.required(kube, "AutoscalingRunnerSet")
                    observed = [
                        r.body["object"]
                        for r in await harness.journaled(settings.journal_path)
                        if r.kind == "AutoscalingRunnerSet" and r.type == "observed"
                    ]
                    assert any(
                        o["metadata"]["annotations"]["pad"] == last["metadata"]["annotations"]["pad"]
                        for o in observed
                    )
            finally:
                stop.set()
                async with asyncio.timeout(TIMEOUT):
                    assert await task == 0
    starts = [r for r in caplog.records if r.getMessage().startswith("journal writes fail:")]
    ends = [r for r in caplog.records if r.getMessage().startswith("journal writes succeed again:")]
    assert starts and all(r.levelno == logging.ERROR for r in starts)
    assert len(starts) == len(ends)  # one line as an outage starts, one with its count as it ends
    full = [r for r in caplog.records if r.levelno >= logging.ERROR and "disk is full" in r.getMessage()]
    assert full == starts  # no error line per failed append


async def _running(kube: client.ApiClient) -> bool:
    return await harness.phase(kube) == "Running"
