"""Recorded journals from the controller e2e tests: each test's journal name, and a real run recorded by
``harness.Controller`` with the e2e machine settings (listener image ``arcsm:e2e``) that replays with no
mismatch because its settings are journaled."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client
from typer.testing import CliRunner

from controller.commands.cli import app
from controller.commands.replay_command import load_jsonl
from controller.loop import replaying, settingsrecords
from sim.world import World
from statemachines.snapshots import Settings as MachineSettings
from store import exporting
from store.journal import Journal
from store.records import Record, RecordType
from tests.e2e.controller import harness, recording
from tests.e2e.controller.harness import CONTROLLER_NS, Controller
from tests.helpers import eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0


@pytest.fixture
async def world(world_kind: str) -> AsyncIterator[World]:
    async with harness.github_world(world_kind) as w:
        yield w


@pytest.mark.parametrize(
    ("node_name", "name"),
    [
        ("test_4_2_a_label_edit_restarts_the_listener", "4-2-a-label-edit-restarts-the-listener"),
        ("test_run_stops_on_a_signal[Signals.SIGTERM]", "run-stops-on-a-signal-signals-sigterm"),
        ("test_scale[1-0.5]", "scale-1-0-5"),
        ("a_name_without_the_prefix", "a-name-without-the-prefix"),
    ],
)
def test_a_recorded_journal_is_named_after_its_test(node_name: str, name: str) -> None:
    assert recording.journal_name(node_name) == name


def test_a_name_two_tests_share_gets_the_module_of_the_second(recorded_journal_name: str) -> None:
    assert recorded_journal_name == "a-name-two-tests-share-gets-the-module-of-the-second"
    shared = "test_a_name_two_tests_share_gets_the_module_of_the_second"
    assert recording.claim(shared, "elsewhere.py::" + shared, "test_controller_other") == (
        "other-a-name-two-tests-share-gets-the-module-of-the-second"
    )
    wanted = recording.JOURNALS / f"{recorded_journal_name}.jsonl.gz" if recording.enabled() else None
    assert recording.target() == wanted


async def start_running(world: World, kube: client.ApiClient, controller: Controller) -> None:
    controller.start()
    await harness.create(kube, harness.scale_set_body(world))

    async def running() -> bool:
        listeners = await harness.items(kube, "AutoscalingListener", CONTROLLER_NS)
        return await harness.phase(kube) == "Running" and bool(listeners)

    await eventually(running, timeout=TIMEOUT, what="the scale set Running with its listener")


def with_settings(records: list[Record], settings: MachineSettings) -> list[Record]:
    """``records`` with every settings record saying ``settings`` instead."""
    body = settingsrecords.to_json(settings)
    return [dataclasses.replace(r, body=body) if r.type is RecordType.SETTINGS else r for r in records]


async def test_a_recorded_run_with_the_e2e_settings_replays_with_no_mismatch(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    recorded = tmp_path / "recorded" / "run.jsonl"
    controller = Controller(world, tmp_path, record_to=recorded)
    assert controller.settings.machines.listener_image == "arcsm:e2e"
    await start_running(world, kube, controller)
    assert await controller.stop() == 0

    records = load_jsonl(recorded)
    (settings,) = [r for r in records if r.type is RecordType.SETTINGS]
    assert settingsrecords.from_json(settings.body) == controller.settings.machines
    assert settings.seq == 1  # journaled before anything was observed or decided
    replayed = replaying.replay(records)
    assert replayed.mismatch is None, replayed.mismatch.line()
    assert replayed.decisions == sum(r.type is RecordType.DECISION for r in records) > 0
    # The settings matter: with the defaults in their place the listener comes out differently.
    mismatch = replaying.replay(with_settings(records, MachineSettings())).mismatch
    assert mismatch is not None and mismatch.seq > 1, "replay ignored the journaled settings"

    result = CliRunner().invoke(app, ["replay", "--check", str(recorded)])
    assert result.exit_code == 0, result.output
    assert result.output.endswith("decisions replayed, all equal\n")

    # A restart with the same settings journals none; one with other settings journals them, and the
    # export of the last run holds the whole journal.
    controller.start()
    assert await controller.stop() == 0
    controller.settings = dataclasses.replace(
        controller.settings,
        machines=dataclasses.replace(controller.settings.machines, image_pull_secrets=("pull",)),
    )
    controller.start()
    assert await controller.stop() == 0
    again = load_jsonl(recorded)
    assert again[: len(records)] == records and len(again) > len(records)
    found = [settingsrecords.from_json(r.body) for r in again if r.type is RecordType.SETTINGS]
    assert [s.image_pull_secrets for s in found] == [(), ("pull",)]
    replayed = replaying.replay(again)
    assert replayed.mismatch is None, replayed.mismatch.line()


async def test_a_journal_written_to_between_runs_is_not_recorded(
    world: World, kube: client.ApiClient, tmp_path: Path
) -> None:
    recorded = tmp_path / "recorded" / "run.jsonl"
    controller = Controller(world, tmp_path, record_to=recorded)
    await start_running(world, kube, controller)
    assert await controller.stop() == 0
    first = load_jsonl(recorded)
    assert first

    async with await Journal.open(controller.journal) as journal:
        await journal.append([Record(type=RecordType.TIMER, kind="AutoscalingRunnerSet", name="elsewhere")])
    controller.start()
    assert await controller.stop() == 0
    assert not recorded.exists(), "a journal something else wrote to was recorded"
    assert await exporting.export(controller.journal, io.StringIO()) > len(first)


async def test_a_run_that_decides_nothing_leaves_no_journal(world: World, tmp_path: Path) -> None:
    recorded = tmp_path / "recorded" / "run.jsonl"
    controller = Controller(world, tmp_path, record_to=recorded)
    await (await Journal.open(controller.journal)).close()  # an empty journal, read while the run goes
    controller.start()

    async def listed() -> bool:
        return bool(await harness.journaled(controller.journal, {RecordType.SYNC}))

    await eventually(listed, timeout=TIMEOUT, what="the watchers listed the cluster")
    assert await controller.stop() == 0
    assert await harness.journaled(controller.journal, {RecordType.SETTINGS})
    assert not await harness.journaled(controller.journal, {RecordType.DECISION})
    assert not recorded.exists()
