"""The projection's indexes answer exactly what a scan of every object would, in the scan's order.

A fixed-seed random run of creates, replacements (new owners, new labels), deletes, snapshot round
trips and lookups at arbitrary points (so an index or a sorted listing is built part-way and kept in
step after), checked after every step against a brute-force scan of the objects the run holds.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from store.projection import Index, ObjectKey, Projection
from store.records import Record, RecordType, observed

KINDS = ("Pod", "Secret", "AutoscalingListener")
NAMESPACES = ("a", "b", "c")
NAMES = tuple(f"n{i}" for i in range(12))
UIDS = tuple(f"uid-{i}" for i in range(5))
APPS = ("x", "y", "z")


def _apps(key: ObjectKey, obj: Mapping[str, Any]) -> Iterable[Hashable]:
    app = obj["metadata"].get("labels", {}).get("app")
    if app is not None:
        yield (key[1], app)


def _tiers(key: ObjectKey, obj: Mapping[str, Any]) -> Iterable[Hashable]:
    yield from obj.get("spec", {}).get("tiers", ())  # several values per object, repeats allowed


BY_APP = Index("pods by namespace and app label", "Pod", _apps)
BY_TIER = Index("listeners by tier", "AutoscalingListener", _tiers)
INDEXES = (BY_APP, BY_TIER)


def body(rng: random.Random, kind: str, namespace: str, name: str, version: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"{namespace}/{name}"}
    owners = rng.choices(UIDS, k=rng.randrange(3))  # zero to two, the same uid twice at times
    if owners:
        meta["ownerReferences"] = [{"kind": "X", "name": uid, "uid": uid} for uid in owners]
    if rng.random() < 0.8:
        meta["labels"] = {"app": rng.choice(APPS)}
    return {
        "kind": kind,
        "metadata": meta,
        "spec": {"version": version, "tiers": rng.choices(APPS, k=rng.randrange(3))},
    }


def scan_items(held: dict[ObjectKey, Mapping[str, Any]], kind: str, namespace: str | None) -> list[Any]:
    return [held[key] for key in sorted(held) if key[0] == kind and namespace in (None, key[1])]


def scan_children(held: dict[ObjectKey, Mapping[str, Any]], uid: str) -> list[ObjectKey]:
    return sorted(
        key
        for key, obj in held.items()
        if any(ref["uid"] == uid for ref in obj["metadata"].get("ownerReferences", ()))
    )


def scan_find(held: dict[ObjectKey, Mapping[str, Any]], index: Index, value: Hashable) -> list[Any]:
    return [
        held[key] for key in sorted(held) if key[0] == index.kind and value in index.values(key, held[key])
    ]


def check(projection: Projection, held: dict[ObjectKey, Mapping[str, Any]]) -> None:
    for kind in KINDS:
        assert projection.items(kind) == scan_items(held, kind, None)
        for namespace in (*NAMESPACES, "elsewhere"):
            assert projection.items(kind, namespace) == scan_items(held, kind, namespace)
    for uid in UIDS:
        assert projection.children(uid) == scan_children(held, uid)
    for namespace in NAMESPACES:
        for app in APPS:
            assert projection.find(BY_APP, (namespace, app)) == scan_find(held, BY_APP, (namespace, app))
    for tier in APPS:
        assert projection.find(BY_TIER, tier) == scan_find(held, BY_TIER, tier)
    assert len(projection) == len(held)


def test_indexes_answer_what_a_full_scan_does_through_random_changes() -> None:
    rng = random.Random(20261202)
    projection = Projection()
    held: dict[ObjectKey, Mapping[str, Any]] = {}
    for step in range(3_000):
        roll = rng.random()
        key = (rng.choice(KINDS), rng.choice(NAMESPACES), rng.choice(NAMES))
        if roll < 0.6:
            obj = body(rng, *key, version=step)
            projection.apply(observed("MODIFIED" if key in held else "ADDED", key[0], obj))
            held[key] = obj
        elif roll < 0.85:
            gone = held.pop(key, None) or {"metadata": {"name": key[2], "namespace": key[1]}}
            projection.apply(observed("DELETED", key[0], gone))
        elif roll < 0.9:
            projection = Projection.from_snapshot(projection.for_snapshot())  # indexes rebuilt on use
        else:
            # a lookup part-way: the first one builds that listing or index, later changes keep it
            index = rng.choice(INDEXES)
            projection.find(index, rng.choice(APPS))
            projection.items(rng.choice(KINDS), rng.choice(NAMESPACES))
        if step % 10 == 0 or step > 2_900:
            check(projection, held)
    assert held  # the run ends with objects to look up
    check(projection, held)


def test_an_object_moves_between_index_values_when_it_is_relabelled() -> None:
    projection = Projection()

    def pod(app: str | None, *owners: str) -> Record:
        meta: dict[str, Any] = {"name": "p", "namespace": "a", "uid": "p-uid"}
        if app:
            meta["labels"] = {"app": app}
        meta["ownerReferences"] = [{"uid": uid} for uid in owners]
        return observed("MODIFIED", "Pod", {"metadata": meta})

    projection.apply(pod("x", "o1"))
    assert [o["metadata"]["labels"] for o in projection.find(BY_APP, ("a", "x"))] == [{"app": "x"}]
    projection.apply(pod("y", "o2"))
    assert projection.find(BY_APP, ("a", "x")) == []
    assert len(projection.find(BY_APP, ("a", "y"))) == 1
    assert projection.children("o1") == [] and projection.children("o2") == [("Pod", "a", "p")]
    projection.apply(pod(None))
    assert projection.find(BY_APP, ("a", "y")) == [] and projection.children("o2") == []
    projection.apply(
        Record(type=RecordType.OBSERVED, kind="Pod", namespace="a", name="p", body={"event": "DELETED"})
    )
    assert projection.items("Pod") == [] and len(projection) == 0


def test_a_snapshot_round_trip_keeps_the_snapshot_format_and_the_answers() -> None:
    rng = random.Random(7)
    projection = Projection()
    for i in range(200):
        projection.apply(observed("ADDED", "Pod", body(rng, "Pod", rng.choice(NAMESPACES), f"p{i}", i)))
    projection.find(BY_APP, ("a", "x"))
    projection.items("Pod")
    data = projection.for_snapshot()
    assert set(data) == {"seq", "objects", "synced"}  # indexes are derived: never written
    copy = Projection.from_snapshot(data)
    assert copy == projection
    for namespace in NAMESPACES:
        for app in APPS:
            assert copy.find(BY_APP, (namespace, app)) == projection.find(BY_APP, (namespace, app))
        assert copy.items("Pod", namespace) == projection.items("Pod", namespace)
    for uid in UIDS:
        assert copy.children(uid) == projection.children(uid)
