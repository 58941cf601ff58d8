"""``arcsm run`` configured by environment variables alone, logging JSON lines: every line on stderr is one
JSON object stamped in RFC 3339 (UTC, milliseconds), and a transition's line carries the keys of DESIGN.md
(kind, namespace, name, seq, from_phase, to_phase, trigger) matching the decision journaled at that seq.
No secret reaches a line."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.world import World
from store.journal import Journal
from store.records import RecordType
from tests.e2e.controller import harness
from tests.helpers import ARCSM, collect, eventually

KEYS = ("kind", "namespace", "name", "seq", "from_phase", "to_phase", "trigger")
# RFC 3339 in UTC with milliseconds, e.g. 2026-12-01T23:25:38.123Z.
RFC3339_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


def parsed(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]


def running_line(lines: list[str]) -> dict[str, Any] | None:
    for entry in parsed(lines):
        if entry.get("kind") == "AutoscalingRunnerSet" and entry.get("to_phase") == "Running":
            return entry
    return None


async def test_json_logs_carry_the_object_keys_of_a_transition(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.db"
    env = {
        **os.environ,
        "ARCSM_JOURNAL": str(journal),
        "ARCSM_KUBECONFIG": str(world.write_kubeconfig(tmp_path / "kubeconfig")),
        "ARCSM_NAMESPACE": harness.NS,
        "ARCSM_CONTROLLER_NAMESPACE": harness.CONTROLLER_NS,
        "ARCSM_LOG_FORMAT": "json",
        "ARCSM_LOG_LEVEL": "info",
        "ARCSM_RUNNER_CONCURRENCY": "1",
    }
    proc = await asyncio.create_subprocess_exec(
        ARCSM, "run", env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    assert proc.stderr is not None
    lines: list[str] = []
    reader = asyncio.create_task(collect(proc.stderr, lines))
    try:
        await harness.create(kube, harness.scale_set_body(world))
        await eventually(lambda: running_line(lines), timeout=30, what="a log line of the scale set Running")
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), timeout=30)
        await asyncio.wait_for(reader, timeout=10)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        reader.cancel()
    assert proc.returncode == 0, "".join(lines)[-2000:]

    entries = parsed(lines)  # every line is one JSON object
    assert all({"time", "level", "logger", "msg"} <= set(entry) for entry in entries)
    assert all(RFC3339_MS.fullmatch(entry["time"]) for entry in entries), entries[0]["time"]
    line = running_line(lines)
    assert line is not None and set(KEYS) <= set(line), line
    assert (line["namespace"], line["name"]) == (harness.NS, "arc")
    assert harness.PAT not in "".join(lines)

    async with await Journal.open(journal) as opened:
        (decision,) = await opened.read(after=line["seq"] - 1, through=line["seq"])
    assert decision.type is RecordType.DECISION
    assert (decision.kind, decision.namespace, decision.name) == ("AutoscalingRunnerSet", harness.NS, "arc")
    transitions = [(t["from"], t["to"], t["trigger"]) for t in decision.body["transitions"]]
    assert (line["from_phase"], line["to_phase"], line["trigger"]) in transitions
