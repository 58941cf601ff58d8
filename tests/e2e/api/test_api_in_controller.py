"""``arcsm run --http``: the API served inside the real controller while it runs a scale set.

Real composition root (``controller.loop.running.run`` with ``settings.http``), real journal on disk, the
emulated cluster with the fake GitHub (``tests/e2e/controller/harness.py``). The API is read over HTTP
while the controller writes the journal; ``arcsm history`` reads the same journal from another process
while the controller holds it; and the API stops with the controller.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes_asyncio import client

from tests.e2e.controller import harness
from tests.helpers import eventually

TIMEOUT = 60.0
ROOT = Path(__file__).resolve().parents[3]
ARS = "/api/v1/namespaces/default/autoscalingrunnersets/arc"
PENDING_TO_RUNNING = '{from="Pending",kind="AutoscalingRunnerSet",to="Running"}'


async def arcsm(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "controller.commands.cli", *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    return process.returncode or 0, out.decode(), err.decode()


@pytest.mark.both_worlds
async def test_the_controller_serves_its_history_health_and_metrics_while_it_runs(
    tmp_path: Path, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        async with harness.serving(world, tmp_path, TIMEOUT) as (settings, url):
            async with httpx.AsyncClient(base_url=url, timeout=60) as http:

                async def ready() -> dict[str, object] | None:
                    answer = await http.get("/readyz")
                    return answer.json() if answer.status_code == 200 else None

                readiness = await eventually(ready, timeout=TIMEOUT, what="/readyz 200")
                assert readiness["role"] == "leader" and readiness["synced"] and readiness["journalWritable"]
                for path in ("/debug/stacks", "/debug/profile"):  # only with --debug-endpoints
                    assert (await http.get(path)).status_code == 404

                await harness.create(kube, harness.scale_set_body(world))

                async def running_history() -> list[dict[str, object]]:
                    answer = await http.get(f"{ARS}/phases")
                    if answer.status_code != 200:
                        return []
                    items: list[dict[str, object]] = answer.json()["items"]
                    return items if items and items[-1]["to"] == "Running" else []

                items = await eventually(
                    running_history, timeout=TIMEOUT, what="the history reaching Running"
                )
                assert [(item["from"], item["to"]) for item in items[:2]] == [
                    (None, "Pending"),
                    ("Pending", "Running"),
                ]
                offline = await journaled_history(settings.journal_path)
                assert offline[: len(items)] == items  # the controller may have recorded more since

                async def running_view() -> dict[str, Any]:  # the status write's watch event comes later
                    found: dict[str, Any] = (await http.get(ARS)).json()
                    return found if found.get("phase") == "Running" and found.get("runnerSet") else {}

                view = await eventually(running_view, timeout=TIMEOUT, what="the view at Running")
                assert view["runnerSet"]["name"]
                assert view["listener"]["namespace"] == harness.CONTROLLER_NS

                async def counted() -> str:
                    text = (await http.get("/metrics")).text
                    wanted = "arcsm_phase_transitions_total" + PENDING_TO_RUNNING
                    return text if wanted in text else ""

                text = await eventually(counted, timeout=TIMEOUT, what="the transition counted")
                assert 'arcsm_actions_calls_total{endpoint="CreateRunnerScaleSet",outcome="ok"} 1.0' in text
                assert "arcsm_work_queue_depth" in text and "arcsm_journal_lag_records" in text
                reconciles = next(
                    line for line in text.splitlines() if line.startswith("arcsm_reconciles_total")
                )
                assert float(reconciles.split()[-1]) > 0

                async with http.stream(
                    "GET",
                    "/api/v1/journal/stream",
                    params={"type": "decision", "name": "arc", "kind": "AutoscalingRunnerSet"},
                ) as stream:
                    first = await anext(
                        line async for line in stream.aiter_lines() if line.startswith("data: ")
                    )
                assert json.loads(first[6:])["body"]["subject"]["name"] == "arc"

            # The journal is held by the running controller; the history command reads beside it.
            code, out, err = await arcsm("history", "default/arc", "--journal", str(settings.journal_path))
            assert code == 0, err
            assert "(none) → Pending" in out and "Pending → Running" in out
        async with httpx.AsyncClient(base_url=url) as http:
            try:
                await http.get("/healthz")
                raise AssertionError("the API still answers after the controller stopped")
            except httpx.ConnectError:
                pass


async def journaled_history(path: Path) -> list[dict[str, object]]:
    code, out, err = await arcsm("history", "default/arc", "--journal", str(path), "--json")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]
