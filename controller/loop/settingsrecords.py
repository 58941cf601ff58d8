"""The machine settings in the journal: ``settings`` records, written at start and read by replay.

Decisions depend on the machine settings (``statemachines.snapshots.Settings``: the controller namespace,
the listener image, ...) as much as on the records, so the controller journals them: at start, right
after the journal opens and before anything is decided, it appends a ``settings`` record whose body is
every field of the settings as JSON, unless the newest settings record already says the same (a restart
with the same flags adds nothing). Replay decides each recorded decision with the newest settings record
before it.

The body is the settings' fields by name; tuples are JSON lists. Reading one back takes the fields the
settings still have (a field recorded by an older arcsm that is gone is ignored, a field added since
keeps the default it had when the recording ran without it: the class default).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from statemachines.snapshots import Settings as MachineSettings
from store import redacting
from store.ports import JournalReader, JournalWriter
from store.records import Record, RecordType


class BadSettingsRecord(ValueError):
    """A settings record whose body is not machine settings."""


def to_json(settings: MachineSettings) -> dict[str, Any]:
    """Every field of ``settings`` as JSON (tuples as lists)."""
    return {
        f.name: list(value) if isinstance(value := getattr(settings, f.name), tuple) else value
        for f in dataclasses.fields(settings)
    }


def record(settings: MachineSettings) -> Record:
    return Record(type=RecordType.SETTINGS, body=to_json(settings))


def from_json(body: Mapping[str, Any]) -> MachineSettings:
    """The settings a settings record's body holds; ``BadSettingsRecord`` if a field has the wrong type."""
    defaults = MachineSettings()
    values: dict[str, Any] = {}
    for f in dataclasses.fields(MachineSettings):
        if f.name not in body:
            continue
        value, default = body[f.name], getattr(defaults, f.name)
        if isinstance(default, tuple):
            if not isinstance(value, list):
                raise BadSettingsRecord(f"settings field {f.name} must be a list, not {value!r}")
            value = tuple(value)
        elif default is not None and value is not None and not _same_type(value, default):
            raise BadSettingsRecord(
                f"settings field {f.name} must be a {type(default).__name__}, not {value!r}"
            )
        values[f.name] = value
    try:
        return MachineSettings(**values)
    except (TypeError, ValueError) as exc:
        raise BadSettingsRecord(f"not machine settings: {exc}") from exc


def _same_type(value: Any, default: Any) -> bool:
    if isinstance(default, float) and not isinstance(default, bool):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return type(value) is type(default)


def _as_journaled(settings: MachineSettings) -> Any:
    """The body the journal would keep for ``settings`` (after redaction), for comparison."""
    _, text = redacting.for_journal(record(settings))
    return json.loads(text)


async def journal_if_changed(
    journal: JournalWriter, reader: JournalReader, settings: MachineSettings
) -> Record | None:
    """Append a settings record for ``settings`` unless the newest one says the same; the record
    appended, or None."""
    found = await reader.read(types={RecordType.SETTINGS})
    if found and dict(found[-1].body) == _as_journaled(settings):
        return None
    appended = await journal.append([record(settings)])
    return appended[0]
