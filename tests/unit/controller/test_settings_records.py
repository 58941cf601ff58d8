"""The machine settings journaled as ``settings`` records: their JSON, appended only when they change, and
replay deciding with the newest one before each decision."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from controller.loop import replaying, settingsrecords
from statemachines.snapshots import Settings as MachineSettings
from store.journal import Journal
from store.records import Record, RecordType, Seq

CUSTOM = MachineSettings(
    controller_namespace="arc-ops",
    listener_image="registry.example/arcsm:1.2",
    exclude_label_prefixes=("internal.example/",),
    image_pull_secrets=("pull-a", "pull-b"),
)


def test_every_field_goes_into_the_body_and_comes_back() -> None:
    body = settingsrecords.to_json(CUSTOM)
    assert set(body) == {f.name for f in dataclasses.fields(MachineSettings)}
    assert body["image_pull_secrets"] == ["pull-a", "pull-b"]
    assert body["listener_image"] == "registry.example/arcsm:1.2"
    assert settingsrecords.from_json(body) == CUSTOM


def test_a_field_missing_takes_the_default_and_an_unknown_one_is_ignored() -> None:
    body = {"listener_image": "arcsm:e2e", "a_field_since_removed": 3}
    assert settingsrecords.from_json(body) == MachineSettings(listener_image="arcsm:e2e")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"listener_image": 7}, "listener_image must be a str, not 7"),
        ({"image_pull_secrets": "pull-a"}, "image_pull_secrets must be a list, not 'pull-a'"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused(body: dict[str, object], message: str) -> None:
    with pytest.raises(settingsrecords.BadSettingsRecord, match=message):
        settingsrecords.from_json(body)


async def test_settings_are_appended_only_when_they_differ_from_the_newest(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    async with await Journal.open(path) as journal:
        first = await settingsrecords.journal_if_changed(journal, journal, CUSTOM)
        assert first is not None and first.type is RecordType.SETTINGS
        assert await settingsrecords.journal_if_changed(journal, journal, CUSTOM) is None
    async with await Journal.open(path) as journal:  # a restart with the same settings adds nothing
        assert await settingsrecords.journal_if_changed(journal, journal, CUSTOM) is None
        changed = dataclasses.replace(CUSTOM, listener_image="registry.example/arcsm:1.3")
        second = await settingsrecords.journal_if_changed(journal, journal, changed)
        assert second is not None
        assert await settingsrecords.journal_if_changed(journal, journal, changed) is None
        back = await settingsrecords.journal_if_changed(journal, journal, CUSTOM)
        assert back is not None
        found = await journal.read(types={RecordType.SETTINGS})
    assert [r.seq for r in found] == [first.seq, second.seq, back.seq]
    assert [settingsrecords.from_json(r.body) for r in found] == [CUSTOM, changed, CUSTOM]


def test_an_unreadable_settings_record_stops_the_replay_with_its_seq() -> None:
    records = [Record(type=RecordType.SETTINGS, body={"listener_image": 7}, seq=Seq(1), at="")]
    with pytest.raises(replaying.ReplayError, match="settings record at seq 1 cannot be read"):
        replaying.replay(records)
