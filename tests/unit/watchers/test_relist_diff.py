"""The diff a (re-)list reveals, as a pure function: known objects (the watcher's cache, seeded from the
journal) against a complete list, whole or fed a page at a time. Table-driven; each row names the
situation it stands for."""

from __future__ import annotations

from typing import Any

import pytest

from store.records import RecordType
from watchers import kinds, listing, objects

ARS = kinds.BY_NAME["AutoscalingRunnerSet"]
# Not watched by the controller any more, but a watcher of any kind still never keeps Secret data.
SECRET = kinds.WatchedKind("Secret", "", "v1", "secrets", snake="secret")


def obj(name: str, uid: str, rv: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": ARS.api_version,
        "kind": ARS.kind,
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv},
        **extra,
    }


A1, A2 = obj("a", "uid-a", "10"), obj("a", "uid-a", "12")
B1 = obj("b", "uid-b", "11")
A_NEW = obj("a", "uid-a2", "13")  # "a" deleted and re-created: a new uid

CASES = [
    # (id, known, listed, expected (event, name, uid, resourceVersion) in order)
    ("empty", [], [], []),
    (
        "first list adds everything",
        [],
        [A1, B1],
        [("ADDED", "a", "uid-a", "10"), ("ADDED", "b", "uid-b", "11")],
    ),
    ("unchanged objects write nothing", [A1, B1], [A1, B1], []),
    ("a changed resourceVersion is MODIFIED", [A1, B1], [A2, B1], [("MODIFIED", "a", "uid-a", "12")]),
    (
        "missing from the list is DELETED at the list's version",
        [A1, B1],
        [A1],
        [("DELETED", "b", "uid-b", "20")],
    ),
    ("everything deleted", [A1, B1], [], [("DELETED", "a", "uid-a", "20"), ("DELETED", "b", "uid-b", "20")]),
    (
        "re-created under the same name: old deleted first, then the new one added",
        [A1],
        [A_NEW],
        [("DELETED", "a", "uid-a", "20"), ("ADDED", "a", "uid-a2", "13")],
    ),
    (
        "mixed: what the list lacks is known, and deleted, after its last page",
        [A1, B1],
        [A2, obj("c", "uid-c", "14")],
        [("MODIFIED", "a", "uid-a", "12"), ("ADDED", "c", "uid-c", "14"), ("DELETED", "b", "uid-b", "20")],
    ),
    (
        "re-created under the same name among others: the old one deleted just before the new one",
        [B1, A1, obj("z", "uid-z", "9")],
        [A_NEW, B1],
        [("DELETED", "a", "uid-a", "20"), ("ADDED", "a", "uid-a2", "13"), ("DELETED", "z", "uid-z", "20")],
    ),
]


@pytest.mark.parametrize(("known", "listed", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_diff(
    known: list[dict[str, Any]], listed: list[dict[str, Any]], expected: list[tuple[str, ...]]
) -> None:
    records = listing.diff(ARS, objects.seed(known), listed, "20")
    got = [(r.body["event"], r.name, r.uid, r.resource_version) for r in records]
    assert got == expected
    for record in records:
        assert record.type is RecordType.OBSERVED
        assert record.kind == "AutoscalingRunnerSet"
        assert record.namespace == "ns"
        assert record.body["object"]["metadata"]["resourceVersion"] == record.resource_version


def test_deleted_record_carries_the_last_known_state() -> None:
    known = obj("a", "uid-a", "10", spec={"minRunners": 2})
    (record,) = listing.diff(ARS, objects.seed([known]), [], "20")
    assert record.body["object"]["spec"] == {"minRunners": 2}
    assert known["metadata"]["resourceVersion"] == "10"  # the cached object is not changed


def test_folding_the_diff_makes_the_cache_equal_the_list() -> None:
    cache = objects.seed([A1, B1])
    listed = [A2, obj("c", "uid-c", "14")]
    objects.fold(cache, listing.diff(ARS, cache, listed, "20"))
    assert cache == objects.seed(listed)
    assert listing.diff(ARS, cache, listed, "21") == []


def test_normalize_completes_list_items_and_strips_secret_material() -> None:
    item = {
        "metadata": {
            "name": "s",
            "uid": "u",
            "resourceVersion": "3",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "keep": "1"},
        },
        "type": "Opaque",
        "data": {"token": "c2VjcmV0"},
        "stringData": {"token": "secret"},
    }
    out = objects.normalize(SECRET, item)
    assert out["apiVersion"] == "v1"
    assert out["kind"] == "Secret"
    assert out["type"] == "Opaque"
    assert "data" not in out
    assert "stringData" not in out
    assert out["metadata"]["annotations"] == {"keep": "1"}


def test_normalize_keeps_what_the_server_sent() -> None:
    sent = obj("a", "uid-a", "10", spec={"x": 1})
    assert objects.normalize(ARS, sent) == sent


# -- page by page ------------------------------------------------------------------------------------------

MANY_KNOWN = [obj(f"o{i:02}", f"uid-{i}", str(10 + i)) for i in range(12)]
MANY_LISTED = [
    *(obj(f"o{i:02}", f"uid-{i}", str(10 + i)) for i in (0, 1, 2)),  # unchanged
    obj("o03", "uid-3", "40"),  # changed
    obj("o04", "uid-4b", "41"),  # re-created under the same name
    *(obj(f"o{i:02}", f"uid-{i}", str(10 + i)) for i in (6, 7)),  # o05 gone
    obj("o08", "uid-8", "42"),  # changed; o09, o10 and o11 gone
    obj("p00", "uid-p", "43"),  # new
]


@pytest.mark.parametrize("page_size", [1, 2, 3, 5, len(MANY_LISTED)])
@pytest.mark.parametrize("fold", [False, True], ids=["cache untouched", "cache folded per page"])
def test_paged_diff_is_the_whole_diff(page_size: int, fold: bool) -> None:
    whole = listing.diff(ARS, objects.seed(MANY_KNOWN), MANY_LISTED, "50")
    cache = objects.seed(MANY_KNOWN)
    paged = listing.Diff(ARS, cache, "50")
    records = []
    for start in range(0, len(MANY_LISTED), page_size):
        page = paged.page(MANY_LISTED[start : start + page_size])
        if fold:
            objects.fold(cache, page)
        records += page
    records += paged.rest()
    assert records == whole
    assert [(r.body["event"], r.name, r.uid) for r in records] == [
        ("MODIFIED", "o03", "uid-3"),
        ("DELETED", "o04", "uid-4"),
        ("ADDED", "o04", "uid-4b"),
        ("MODIFIED", "o08", "uid-8"),
        ("ADDED", "p00", "uid-p"),
        ("DELETED", "o05", "uid-5"),
        ("DELETED", "o09", "uid-9"),
        ("DELETED", "o10", "uid-10"),
        ("DELETED", "o11", "uid-11"),
    ]
    assert all(r.resource_version == "50" for r in records if r.body["event"] == "DELETED")
