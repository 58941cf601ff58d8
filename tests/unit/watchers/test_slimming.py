"""What the watchers journal of an observed object (``watchers.slimming``) is all the controller reads of it.

Pinned two ways over every recorded journal (``tests/journals``, whole objects as the server sent them):

* replaying it with every observed object slimmed decides exactly the recorded decisions;
* replaying it with every observed Pod traced (each read of a field recorded, through the mapping, the
  update predicates, the snapshots and the machines) reads no field ``slim`` drops: a machine that starts
  reading a Pod field the journal does not keep fails here, naming the field. (The other kinds lose only
  ``managedFields``, which nothing reads.)
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.commands.replay_command import load_jsonl
from controller.loop import replaying
from store.records import Record, RecordType
from watchers import kinds, listing, objects, slimming, streams

JOURNALS = sorted((Path(__file__).parents[2] / "journals").glob("*.jsonl.gz"))
POD = kinds.BY_NAME["Pod"]

Path_ = tuple[str, ...]
KEYS = "*"  # the mapping's keys were read (iterated, counted, compared whole)
EMPTY = "?"  # whether the mapping is empty was read (``obj or {}``)
# The one list slim filters: a Pod's conditions, by type. Reading a dropped condition's type is how a
# reader finds it is not one it wants.
CONDITIONS = ("status", "conditions")


class Traced(Mapping[str, Any]):
    """A read-only JSON object that records the path of every field read from it into ``reads``."""

    def __init__(self, data: Mapping[str, Any], path: Path_, reads: set[Path_]) -> None:
        self._data = {k: _traced(v, (*path, k), reads) for k, v in data.items()}
        self._plain = data
        self._path = path
        self._reads = reads

    def __getitem__(self, key: str) -> Any:
        self._reads.add((*self._path, key))
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        self._reads.add((*self._path, str(key)))
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        self._reads.add((*self._path, KEYS))
        return iter(self._data)

    def __len__(self) -> int:
        self._reads.add((*self._path, KEYS))
        return len(self._data)

    def __bool__(self) -> bool:
        self._reads.add((*self._path, EMPTY))
        return bool(self._data)

    def __repr__(self) -> str:  # what ``json.dumps(..., default=str)`` sees: all of it
        self._reads.add((*self._path, KEYS))
        return repr(self._plain)


class TracedList(list[Any]):
    """A JSON list whose elements are traced (``isinstance(x, list)`` holds, as readers check)."""


def _traced(value: Any, path: Path_, reads: set[Path_]) -> Any:
    if isinstance(value, Mapping):
        return Traced(value, path, reads)
    if isinstance(value, list):
        return TracedList(_traced(v, (*path, f"[{i}]"), reads) for i, v in enumerate(value))
    return value


def _with_objects(records: list[Record], change: Any) -> list[Record]:
    out = []
    for record in records:
        obj = record.body.get("object") if record.type is RecordType.OBSERVED else None
        if isinstance(obj, Mapping):
            record = dataclasses.replace(record, body={**record.body, "object": change(record, obj)})
        out.append(record)
    return out


_ABSENT = object()


def _index(step: str) -> int | None:
    return int(step[1:-1]) if step.startswith("[") and step.endswith("]") else None


def _step(value: Any, step: str) -> Any:
    i = _index(step)
    if i is not None:
        return value[i] if isinstance(value, list) and i < len(value) else _ABSENT
    return value[step] if isinstance(value, Mapping) and step in value else _ABSENT


def _walk(full: Any, slim: Any, path: Path_) -> tuple[Any, Any, Path_ | None]:
    """The values at ``path`` in ``full`` and, following the same elements, in ``slim``; and the path of
    the first list element ``slim`` dropped on the way (None if none was)."""
    for n, step in enumerate(path):
        full = _step(full, step)
        if _index(step) is not None and full is not _ABSENT:
            # Slim keeps an element whole or not at all (a list left empty is left out).
            same = [item for item in slim if item == full] if isinstance(slim, list) else []
            if not same:
                return full, _ABSENT, path[: n + 1]
            slim = same[0]
        else:
            slim = _step(slim, step)
    return full, slim, None


def _set(obj: Any, path: Path_, value: Any) -> bool:
    """Put ``value`` at ``path`` in ``obj``, making mappings on the way; False where that cannot be."""
    for step in path[:-1]:
        i = _index(step)
        if i is not None:
            if not (isinstance(obj, list) and i < len(obj)):
                return False
            obj = obj[i]
        elif isinstance(obj, dict):
            obj = obj.setdefault(step, {})
        else:
            return False
    if not isinstance(obj, dict) or _index(path[-1]) is not None:
        return False
    obj[path[-1]] = value
    return True


def _dropped(kind: str, full: Mapping[str, Any], path: Path_) -> str | None:
    """Why ``slim`` loses what a reader read at ``path`` of ``full``; None when it keeps it."""
    marker = path[-1] if path[-1] in (KEYS, EMPTY) else None
    where = path[:-1] if marker else path
    before, after, dropped = _walk(full, slimming.slim(kind, full), where)
    if dropped is not None:
        if dropped[:-1] == CONDITIONS and where == (*dropped, "type"):
            return None
        return f"read in {'.'.join(dropped)}, an element slim drops"
    if marker == EMPTY:
        return None if before is _ABSENT or bool(before) == bool(after) else "emptied once slimmed"
    if marker == KEYS:  # the keys were read: slim must keep them all, and any other that may appear
        if isinstance(before, Mapping) and (
            not isinstance(after, Mapping) or sorted(before) != sorted(after)
        ):
            return "its keys differ once slimmed"
        where = (*where, "an-added-key")
        before, after = _ABSENT, _ABSENT
    if isinstance(before, Mapping | list):  # a step on the way: what is read in it is checked on its own
        if after is _ABSENT and where == CONDITIONS and slimming.kept_conditions(before) is None:
            return None  # only conditions slim drops: left out, read as none at all
        return None if after is not _ABSENT else "absent once slimmed"
    if before is not _ABSENT:
        return None if after == before else "changed once slimmed"
    probe = copy.deepcopy(dict(full))  # absent here: a value that may appear must survive slimming
    if not _set(probe, where, "probe"):
        return None
    _, kept, _ = _walk(probe, slimming.slim(kind, probe), where)
    return None if kept == "probe" else "slim drops it"


@functools.cache
def _recorded(path: Path) -> list[Record]:
    return load_jsonl(path)


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_a_recorded_journal_slimmed_replays_to_the_same_decisions(path: Path) -> None:
    records = _with_objects(_recorded(path), lambda r, o: slimming.slim(r.kind, o))
    replayed = replaying.replay(records)
    assert replayed.mismatch is None, replayed.mismatch.line()
    assert replayed.decisions > 0


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_no_decision_reads_a_field_the_journal_does_not_keep(path: Path) -> None:
    traced: list[tuple[Record, Mapping[str, Any], set[Path_]]] = []

    def trace(record: Record, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        if record.kind != "Pod":  # the other kinds lose only managedFields, which nothing reads
            return obj
        reads: set[Path_] = set()
        traced.append((record, obj, reads))
        return Traced(obj, (), reads)

    replayed = replaying.replay(_with_objects(_recorded(path), trace))
    assert replayed.mismatch is None, replayed.mismatch.line()
    lost = sorted(
        {
            f"Pod {'.'.join(read)}: {why}"
            for record, obj, reads in traced
            for read in reads
            if (why := _dropped(record.kind, obj, read)) is not None
        }
    )
    assert not lost, "read but not journaled:\n" + "\n".join(lost)
    assert not traced or any(reads for _, _, reads in traced), "Pods observed but none read: nothing pinned"


# -- the slim form ---------------------------------------------------------------------------------------


def pod(rv: str = "5", **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "r",
            "namespace": "ns",
            "uid": "u",
            "resourceVersion": rv,
            "labels": {"a": "b"},
            "ownerReferences": [{"kind": "EphemeralRunner", "name": "r", "uid": "o"}],
            "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}],
        },
        "spec": {"containers": [{"name": "runner", "image": "i"}], "nodeName": "n"},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.1",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            ],
            "containerStatuses": [{"name": "runner", "state": {"running": {}}}],
            **status,
        },
    }


def test_a_pod_keeps_its_metadata_and_the_status_fields_read() -> None:
    slim = slimming.slim("Pod", pod())
    assert "spec" not in slim and "managedFields" not in slim["metadata"]
    assert slim["metadata"]["ownerReferences"] == pod()["metadata"]["ownerReferences"]
    assert slim["status"] == {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "containerStatuses": [{"name": "runner", "state": {"running": {}}}],
    }


def test_other_kinds_lose_only_managed_fields() -> None:
    runner = {**pod(), "kind": "EphemeralRunner"}
    slim = slimming.slim("EphemeralRunner", runner)
    assert slim["spec"] == runner["spec"] and slim["status"] == runner["status"]
    assert "managedFields" not in slim["metadata"]


def _event(etype: str, obj: dict[str, Any]) -> bytes:
    import json

    return json.dumps({"type": etype, "object": obj}).encode()


def test_a_pod_update_that_moves_only_what_is_not_kept_is_not_journaled() -> None:
    known = objects.seed([slimming.slim("Pod", pod("5"))])
    moved = pod("6", podIP="10.0.0.2")  # the IP and the version moved, nothing kept
    ready = pod("7", phase="Succeeded")
    batch = streams.translate(POD, known, [_event("MODIFIED", moved), _event("MODIFIED", ready)])
    assert [(r.resource_version, r.body["object"]["status"]["phase"]) for r in batch.records] == [
        ("7", "Succeeded")
    ]
    assert batch.resource_version == "7"
    assert streams.translate(POD, known, [_event("MODIFIED", moved)], slim=False).records


def test_scheduling_a_pod_is_not_journaled() -> None:
    created = pod("5", conditions=[])
    del created["status"]["conditions"]
    scheduled = pod("6", conditions=[{"type": "PodScheduled", "status": "True"}])
    known = objects.seed([objects.normalize(POD, created)])
    assert streams.translate(POD, known, [_event("MODIFIED", scheduled)]).records == []


def test_a_relist_skips_a_pod_whose_kept_fields_did_not_move() -> None:
    known = objects.seed([slimming.slim("Pod", pod("5"))])
    listed = [objects.normalize(POD, pod("9", podIP="10.0.0.3"))]
    assert listing.diff(POD, known, listed, "9") == []
    (record,) = listing.diff(POD, known, [objects.normalize(POD, pod("9", phase="Failed"))], "9")
    assert record.body["event"] == "MODIFIED" and record.resource_version == "9"


def test_other_kinds_journal_every_resource_version() -> None:
    runner = {**pod("5"), "kind": "EphemeralRunner"}
    er = kinds.BY_NAME["EphemeralRunner"]
    known = objects.seed([objects.normalize(er, runner)])
    same = {**runner, "metadata": {**runner["metadata"], "resourceVersion": "6"}}
    (record,) = streams.translate(er, known, [_event("MODIFIED", same)]).records
    assert record.resource_version == "6"
