"""``arcsm demo`` as a user runs it: a subprocess that plays the seed's story and leaves its journal.

``--once`` ends after the story; the phase history is then read from the journal the demo leaves (through
a read-only connection, as ``arcsm journal export`` does), not from what the demo printed. Its output is a
pipe, so it plays unpaced (``--pace`` defaults to 0 off a terminal); where the pauses fall is checked in
process, with a pace that notes what was said at each pause instead of waiting.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from controller.emulated import demo, demostory
from controller.emulated.demostory import DEMO_PAT
from store.records import RecordType
from tests.e2e.controller import harness
from tests.e2e.sim.processworld import needs_mounts
from tests.helpers import ARCSM

DEADLINE = 240.0  # the whole story; each of its steps has its own deadline inside the demo


async def arcsm_demo(*args: str) -> tuple[int, list[str], str]:
    """Run ``arcsm demo ARGS`` to its end: (exit status, stdout lines, stderr)."""
    process = await asyncio.create_subprocess_exec(
        ARCSM,
        "demo",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        async with asyncio.timeout(DEADLINE):
            out, err = await process.communicate()
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
        raise AssertionError(f"arcsm demo did not end within {DEADLINE:g} s:\n{out.decode()}") from None
    assert process.returncode is not None
    return process.returncode, out.decode().splitlines(), err.decode()


async def started(*args: str) -> asyncio.subprocess.Process:
    """``arcsm demo ARGS`` started, its stdout a pipe (its stderr dropped)."""
    return await asyncio.create_subprocess_exec(
        ARCSM,
        "demo",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


async def lines_until(process: asyncio.subprocess.Process, text: str) -> list[str]:
    """The demo's lines up to the first that holds ``text`` (the last one); fails if it ends first."""
    assert process.stdout is not None
    lines: list[str] = []
    async with asyncio.timeout(60):
        while text not in (lines[-1] if lines else ""):
            line = (await process.stdout.readline()).decode()
            assert line, f"the demo ended before saying {text!r}: {lines}"
            lines.append(line)
    return lines


async def interrupted(process: asyncio.subprocess.Process) -> str:
    """Interrupt the demo as Ctrl-C does; the rest of its output once it ended."""
    process.send_signal(signal.SIGINT)
    async with asyncio.timeout(60):
        out, _ = await process.communicate()
    return out.decode()


async def test_demo_once_plays_the_story_and_leaves_the_phase_history_in_its_journal(tmp_path: Path) -> None:
    journal = tmp_path / "demo.db"
    code, lines, err = await arcsm_demo("--once", "--journal", str(journal), "--http", "127.0.0.1:0")
    print("\n".join(lines))
    assert code == 0, "\n".join([*lines, err])
    assert all(line.startswith("arcsm demo: ") for line in lines), lines
    page = next(line for line in lines if "timeline page: " in line)
    assert page.split("timeline page: ")[1].startswith("http://127.0.0.1:")
    assert not page.endswith(":0/"), "the page's URL names the port actually bound"
    assert any("curl -s 'http://127.0.0.1:" in line and "/phases" in line for line in lines)
    for step in (
        "exited with code 7",
        "is Outdated",
        "no churn",
        "fixed the runner image",
        "recovered",
        "jobs ran",
    ):
        assert any(step in line for line in lines), (step, lines)

    decisions = await harness.journaled(journal, {RecordType.DECISION})
    transitions = [
        t
        for r in decisions
        if r.kind == "AutoscalingRunnerSet" and r.name == "arc"
        for t in r.body["transitions"]
    ]
    collapsed = [phase for phase, _ in itertools.groupby(t["to"] for t in transitions)]
    assert collapsed == ["Pending", "Running", "Outdated", "Pending", "Running"], transitions
    triggers = {(t["from"], t["to"]): t["trigger"] for t in transitions if t["from"] != t["to"]}
    assert triggers[("Running", "Outdated")] == "runners_rejected_spec"
    assert triggers[("Outdated", "Pending")] == "generation_advanced"
    everything = await harness.journaled(journal)
    assert not any(DEMO_PAT in str(r.as_json()) for r in everything), (
        "the config Secret's token was journaled"
    )


@dataclass(frozen=True)
class Noting(demostory.Pace):
    """A pace that, at each pause, notes the lines the demo said since the pause before, and does not wait."""

    capture: pytest.CaptureFixture[str] | None = None
    said: list[list[str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        assert self.capture is not None
        return [line.removeprefix("arcsm demo: ") for line in self.capture.readouterr().out.splitlines()]

    async def pause(self) -> None:
        self.said.append(self.lines())


async def test_the_story_pauses_before_each_thing_it_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pace = Noting(capture=capsys)
    code = await demo.play(
        journal=tmp_path / "demo.db", host="127.0.0.1", port=0, once=True, step_timeout=60, pace=pace
    )
    said = [*pace.said, pace.lines()]
    assert code == 0, said
    before, *steps = said
    assert before[-1].startswith("journal stream: curl"), "the first pause comes once the page is served"
    assert [lines[0].split(":")[0].split(" ")[:2] for lines in steps] == [
        ["created", "Secret"],
        ["a", "late"],
        ["fixed", "the"],
        ["queued", "3"],
    ], said
    assert any(line.startswith("parked: ") for line in steps[0]), "the controller's reactions are not held"


def test_the_pace_is_a_few_seconds_at_a_terminal_and_none_elsewhere_unless_given() -> None:
    assert demo.pace_for(None, terminal=True) == demo.PACE > 0
    assert demo.pace_for(None, terminal=False) == 0
    assert demo.pace_for(0, terminal=True) == 0
    assert demo.pace_for(0.5, terminal=False) == 0.5


async def test_a_paced_demo_waits_before_its_first_step_until_interrupted(tmp_path: Path) -> None:
    journal = tmp_path / "demo.db"
    process = await started("--pace", "3600", "--journal", str(journal), "--http", "127.0.0.1:0")
    try:
        before = await lines_until(process, "the story waits 3600 s before each step")
    finally:
        out = await interrupted(process)
    assert process.returncode == 130, out
    assert "arcsm demo: interrupted before the story ended" in out
    assert "created Secret" not in "".join(before) + out, "the pause comes before the first step"
    observed = await harness.journaled(journal, {RecordType.OBSERVED})
    assert not [r for r in observed if r.kind == "AutoscalingRunnerSet"], "no scale set was created"


async def test_demo_keeps_its_http_api_to_the_bounds_it_is_given() -> None:
    process = await started("--http", "127.0.0.1:0", "--http-max-streams", "1")
    try:
        line = (await lines_until(process, "journal stream: curl -sN '"))[-1]
        url = line.split("'")[1].split("/api/")[0]
        async with (
            httpx.AsyncClient(base_url=url, timeout=10) as http,
            http.stream("GET", "/api/v1/journal/stream") as first,
        ):
            assert first.status_code == 200
            second = await http.get("/api/v1/journal/stream")
            assert second.status_code == 503
            assert "1 journal streams open" in second.json()["detail"]
    finally:
        await interrupted(process)


async def test_demo_refuses_an_address_that_is_not_host_and_port(tmp_path: Path) -> None:
    code, _, err = await arcsm_demo("--once", "--http", "localhost")
    assert code == 2
    assert "--http" in err and "HOST:PORT" in err, err


async def test_demo_refuses_to_reuse_a_journal(tmp_path: Path) -> None:
    journal = tmp_path / "old.db"
    journal.write_bytes(b"")
    code, lines, err = await arcsm_demo("--once", "--journal", str(journal), "--http", "127.0.0.1:0")
    assert code == 2
    assert err.strip().splitlines() == [
        f"arcsm demo: {journal} already exists; name a new journal file or remove it"
    ]
    assert not lines


@needs_mounts
async def test_demo_in_cluster_installs_the_chart_runs_arcsm_in_its_pod_and_a_job() -> None:
    code, lines, err = await arcsm_demo("--in-cluster", "--once", "--http", "127.0.0.1:0")
    print("\n".join(lines))
    assert code == 0, "\n".join([*lines, err])
    text = "\n".join(lines)
    for step in (
        "installing arcsm's Helm chart (release arcsm in arc-systems)",
        "is Ready through /readyz",
        "found arcsm by its labels: its manager Role is bound to arc-systems/arcsm",
        "installed as that chart makes it",
        "the scale set is Running",
        "the job ran on runner",
        "from the pod's HTTP API: Pending → Running",
        "the story is over",
    ):
        assert step in text, f"no line says {step!r}"
    page = next(line for line in lines if "its timeline page: " in line)
    assert page.split("its timeline page: ")[1].startswith("http://127.244."), (
        "the page is on the pod's address"
    )
    assert DEMO_PAT not in text + err


async def test_demo_in_cluster_keeps_no_journal_of_its_own() -> None:
    code, _, err = await arcsm_demo("--in-cluster", "--journal", "x.db")
    assert code == 2 and "journal on its pod's volume" in err


async def test_demo_refuses_a_port_already_taken_on_stderr() -> None:
    """The refusal goes where refusals go; the story's own lines stay on stdout."""
    taken = await asyncio.start_server(lambda _r, _w: None, "127.0.0.1", 0)
    port = taken.sockets[0].getsockname()[1]
    try:
        code, lines, err = await arcsm_demo("--once", "--http", f"127.0.0.1:{port}")
    finally:
        taken.close()
        await taken.wait_closed()
    assert code == 1
    (refusal,) = [line for line in err.splitlines() if line.startswith("arcsm demo: ")]
    assert (
        refusal.startswith("arcsm demo: the controller stopped before serving HTTP: ")
        and str(port) in refusal
    )
    assert not [line for line in lines if "before serving HTTP" in line], lines
