"""Lists read page by page, at start, on a periodic resync and after a 410, against the emulated cluster.

Inputs: the ``world`` and ``kube`` fixtures of tests/conftest.py and a journal file under ``tmp_path``.
Nothing is mocked: the watchers list (``limit``/``continue``) and watch over HTTP with kubernetes_asyncio,
and what they asked is read from the emulator's request log. The schedule the periodic resyncs keep is
pinned in tests/unit/watchers/test_resync_schedule.py.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from kubernetes_asyncio import client

from sim.world import World
from store.journal import Journal
from tests.e2e.watchers import support
from tests.e2e.watchers.support import Counting, Direct, Writer
from tests.e2e.watchers.test_watchers_journal import NS, running, settings
from tests.helpers import eventually

PAGE = 2
WAIT = 60.0  # a deadline, not a pace: the machine may be busy


def lists_of(world: World, plural: str, *, since: int = 0) -> list[dict[str, list[str]]]:
    """The query of every list request for ``plural`` from the ``since``-th logged request on."""
    return [
        parse_qs(r.query)
        for r in world.requests[since:]
        if r.verb == "list" and r.path.endswith(f"/{plural}") and r.status == 200
    ]


async def syncs_of(journal: Journal, kind: str, reason: str) -> list[Any]:
    return [s for s in await support.syncs(journal) if s.kind == kind and s.body["reason"] == reason]


async def test_a_list_is_asked_for_and_journaled_a_page_at_a_time(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    for i in range(5):
        await writer.create("EphemeralRunner", f"er-{i}")
    counting = Counting(journal)
    async with running(kube, counting, settings(kinds=("EphemeralRunner",), page_size=PAGE)):
        pass
    lists = lists_of(world, "ephemeralrunners")
    assert [q["limit"] for q in lists] == [[str(PAGE)]] * 3
    assert ["continue" in q for q in lists] == [False, True, True]
    # Each page's objects were journaled before the next page was asked for; the SYNC closes the list.
    assert counting.sizes == [2, 2, 1, 1]
    records = await support.observed(journal)
    assert [r.name for r in records] == [f"er-{i}" for i in range(5)]
    assert support.assert_consistent(records, world, ["EphemeralRunner"], NS)


async def test_a_periodic_resync_relists_page_by_page_and_journals_nothing_unchanged(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    for i in range(5):
        await writer.create("EphemeralRunner", f"er-{i}")
        await writer.create("Role", f"s-{i}")
    config = settings(kinds=("EphemeralRunner", "Role"), page_size=PAGE, resync=0.5)
    async with running(kube, journal, config):
        since = len(world.requests)

        async def resynced() -> bool:
            return all(
                [len(await syncs_of(journal, kind, "resync")) >= 2 for kind in ("EphemeralRunner", "Role")]
            )

        await eventually(resynced, timeout=WAIT, what="two periodic re-lists of each kind")
    for kind, plural in (("EphemeralRunner", "ephemeralrunners"), ("Role", "roles")):
        resyncs = await syncs_of(journal, kind, "resync")
        assert all(s.body["objects"] == 5 and s.body["changes"] == 0 for s in resyncs)
        lists = lists_of(world, plural, since=since)
        assert all(q["limit"] == [str(PAGE)] for q in lists)
        # Every completed re-list took three pages: the first, and two more by their continue tokens.
        assert len([q for q in lists if "continue" in q]) >= 2 * len(resyncs)
    records = await support.observed(journal)
    assert len(records) == 10
    assert support.assert_consistent(records, world, ["EphemeralRunner", "Role"], NS)


async def test_what_was_deleted_during_a_watch_gap_is_deleted_after_a_paged_relist(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    direct = Direct(world)
    for i in range(7):
        await writer.create("EphemeralRunner", f"er-{i}")
    async with running(kube, journal, settings(kinds=("EphemeralRunner",), page_size=PAGE)):
        old_3 = journal.projection.get("EphemeralRunner", NS, "er-3")
        assert old_3 is not None
        # While the watch is down: deletions on the first and the last page, an object deleted and
        # re-created under its name (a new uid, on a middle page), a change; then the history is
        # compacted, so the watch cannot resume and answers 410.
        world.drop_watches()
        direct.delete("EphemeralRunner", "er-1")
        direct.delete("EphemeralRunner", "er-5")
        direct.delete("EphemeralRunner", "er-3")
        new_3 = direct.create("EphemeralRunner", "er-3")
        changed_4 = direct.label("EphemeralRunner", "er-4", "gap")
        since = len(world.requests)
        world.compact()

        async def relisted() -> list[Any]:
            return await syncs_of(journal, "EphemeralRunner", "expired")

        (expired,) = await eventually(relisted, timeout=WAIT, what="the re-list after the 410")
        records = await support.observed(journal)
        assert support.assert_consistent(records, world, ["EphemeralRunner"], NS)
        current_3 = journal.projection.get("EphemeralRunner", NS, "er-3")
        assert current_3 is not None and current_3["metadata"]["uid"] == new_3["metadata"]["uid"]

    lists = lists_of(world, "ephemeralrunners", since=since)
    assert [q["limit"] for q in lists] == [[str(PAGE)]] * 3  # 5 objects left: three pages
    assert expired.body["objects"] == 5
    first, gap = records[:7], [(r.name, r.body["event"], r.uid, r.resource_version) for r in records[7:]]
    assert [r.name for r in first] == [f"er-{i}" for i in range(7)]
    listed_at = expired.resource_version
    assert gap == [
        ("er-3", "DELETED", old_3["metadata"]["uid"], listed_at),
        ("er-3", "ADDED", new_3["metadata"]["uid"], new_3["metadata"]["resourceVersion"]),
        ("er-4", "MODIFIED", changed_4["metadata"]["uid"], changed_4["metadata"]["resourceVersion"]),
        ("er-1", "DELETED", first[1].uid, listed_at),
        ("er-5", "DELETED", first[5].uid, listed_at),
    ]
