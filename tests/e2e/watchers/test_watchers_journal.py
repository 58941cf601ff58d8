"""Watchers against the emulated cluster: what they journal, across dropped watches, 410s and restarts.

Inputs: the ``world`` (emulated cluster over HTTP) and ``kube`` (the kubernetes_asyncio client the
watchers use) fixtures of tests/conftest.py, and a journal file under ``tmp_path``. Nothing is mocked:
the watchers list and watch over HTTP, the emulator's hooks drop watches and compact its history, and the
oracle is the emulator's own event history (see ``support``).
"""

from __future__ import annotations

import contextlib
import pathlib
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from sim.faults import Fault
from sim.world import World
from store.journal import Journal
from tests.e2e.watchers import support
from tests.e2e.watchers.support import Counting, Direct, Failing, Writer
from tests.helpers import eventually
from watchers import Backoff, WatchSettings
from watchers.kinds import NAMES
from watchers.supervising import Watchers

FAST = Backoff(initial=0.01, maximum=0.1)
NS = "default"


def settings(**changes: Any) -> WatchSettings:
    # Whole objects: the oracle is every change as the server made it. What slimming keeps and skips is
    # pinned by tests/unit/watchers/test_slimming.py and test_controller_journal_growth.py.
    return WatchSettings(**{"namespaces": (NS,), "backoff": FAST, "slim": False, **changes})


@contextlib.asynccontextmanager
async def running(
    kube: client.ApiClient, journal: Journal | Counting | Failing, config: WatchSettings
) -> AsyncIterator[Watchers]:
    known = (journal.journal if isinstance(journal, Counting | Failing) else journal).projection
    async with Watchers(api=kube, journal=journal, known=known, settings=config) as watchers:
        await eventually(watchers.synced, what="the first lists")
        yield watchers


def list_requests(world: World) -> int:
    return sum(1 for r in world.requests if r.verb == "list")


# -- every write, once, in order -----------------------------------------------------------------------------


@pytest.mark.parametrize("namespaces", [(NS,), ()], ids=["one namespace", "all namespaces"])
async def test_every_write_to_every_watched_kind_is_journaled_once_in_order(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer, namespaces: tuple[str, ...]
) -> None:
    scope = namespaces[0] if namespaces else None
    async with running(kube, journal, settings(namespaces=namespaces)):
        start = world.revision
        writes: list[tuple[str, str, int]] = []
        for kind in NAMES:
            for ns in ("default", "arc-systems"):
                created = await writer.create(kind, f"w-{kind.lower()}", ns)
                patched = await writer.label(kind, f"w-{kind.lower()}", "2", ns)
                if ns == NS or scope is None:
                    meta = created["metadata"]
                    writes += [(meta["uid"], kind, int(meta["resourceVersion"]))]
                    writes += [(meta["uid"], kind, int(patched["metadata"]["resourceVersion"]))]
                await writer.delete(kind, f"w-{kind.lower()}", ns)

        async def settled() -> bool:
            records = await support.observed(journal)
            return support.assert_exact(records, world, NAMES, scope, after=start) and all(
                world.store.get(("", "pods", ns, "w-pod")) is None for ns in ("default", "arc-systems")
            )

        await eventually(settled, what="every change journaled")

    records = await support.observed(journal)
    changes = support.journal_changes(records)
    for uid, kind, rv in writes:
        assert [e for e, r in changes[uid] if r == rv] in (["ADDED"], ["MODIFIED"]), (kind, rv)
        assert changes[uid][-1][0] == "DELETED", kind
    assert {r.kind for r in records} == set(NAMES)
    for r in records:
        assert r.body["object"]["kind"] == r.kind
    assert support.assert_consistent(records, world, NAMES, scope)


async def test_the_first_list_journals_what_exists_and_a_sync_per_kind(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    before = {kind: await writer.create(kind, "early") for kind in NAMES}
    async with running(kube, journal, settings()):

        async def consistent() -> bool:
            return support.assert_consistent(await support.observed(journal), world, NAMES, NS)

        await eventually(consistent, what="the journal level with the cluster")
    records = await support.observed(journal)
    history = support.world_changes(world, NAMES, NS, after=0)
    for obj in before.values():
        record = next(r for r in records if r.uid == obj["metadata"]["uid"])
        assert record.body["event"] == "ADDED"
        # As listed: the creation, or for a Pod perhaps a later status the kubelet wrote.
        assert (history[record.uid][0][0], history[record.uid][0][1]) == (
            "ADDED",
            int(obj["metadata"]["resourceVersion"]),
        )
        assert int(record.resource_version) in [rv for _, rv in history[record.uid]]
        assert record.body["object"]["apiVersion"] == obj["apiVersion"]
    syncs = await support.syncs(journal)
    assert sorted(r.kind for r in syncs) == sorted(NAMES)
    assert {(r.namespace, r.body["reason"]) for r in syncs} == {(NS, "start")}


async def test_the_objects_kept_share_their_keys_and_short_values(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    # One Pod reaches the journal by the first list, the other by the watch: each decoded on its own.
    await writer.create("Pod", "listed")
    async with running(kube, journal, settings()):
        await writer.create("Pod", "watched")
        await eventually(
            lambda: journal.projection.get("Pod", NS, "watched") is not None, what="the watched Pod"
        )
        listed, watched = (journal.projection.get("Pod", NS, name) for name in ("listed", "watched"))
    assert listed is not None and watched is not None

    def key(obj: Any, name: str) -> str:
        return next(k for k in obj if k == name)

    # A thousand Pods hold one copy of each key and of each short value, not a thousand.
    assert key(listed["metadata"], "creationTimestamp") is key(watched["metadata"], "creationTimestamp")
    assert key(listed["spec"], "containers") is key(watched["spec"], "containers")
    assert listed["metadata"]["namespace"] is watched["metadata"]["namespace"]


# -- resume, relist ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("abrupt", [False, True], ids=["clean drop", "abrupt drop"])
async def test_dropped_watches_resume_from_the_last_resource_version(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer, abrupt: bool
) -> None:
    async with running(kube, journal, settings()):
        start = world.revision
        lists = list_requests(world)
        for round_ in range(4):
            await writer.create("EphemeralRunner", f"er-{round_}")
            await eventually(lambda: world.store.watch_count == len(NAMES), what="every watch open")
            world.drop_watches(abrupt=abrupt)
            await writer.create("Pod", f"pod-{round_}")
            await writer.label("EphemeralRunner", f"er-{round_}", "x")
            if round_ % 2:
                await writer.delete("EphemeralRunner", f"er-{round_}")

        async def settled() -> bool:
            return support.assert_exact(await support.observed(journal), world, NAMES, NS, after=start)

        await eventually(settled, what="every change journaled")
        assert list_requests(world) == lists  # resumed every time, never re-listed
    watches = [r.query for r in world.requests if r.verb == "watch"]
    assert len(watches) >= len(NAMES) * 4
    assert all(re.search(r"resourceVersion=\d+", q) for q in watches)


@pytest.mark.parametrize("abrupt", [False, True], ids=["clean drop", "abrupt drop"])
async def test_a_410_after_compaction_relists_and_journals_the_differences(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer, abrupt: bool
) -> None:
    direct = Direct(world)
    async with running(kube, journal, settings()):
        for name in ("a", "b", "c"):
            await writer.create("EphemeralRunner", name)
        await writer.create("ServiceAccount", "s")

        async def journaled(n: int) -> bool:
            return len(await support.observed(journal)) >= n

        await eventually(lambda: journaled(4), what="the first objects")
        # While the watches are down: changes, a deletion and a creation; then the history is compacted,
        # so no watch can resume from where it was.
        world.drop_watches(abrupt=abrupt)
        direct.label("EphemeralRunner", "a", "1")
        last_a = direct.label("EphemeralRunner", "a", "2")
        direct.delete("EphemeralRunner", "b")
        d = direct.create("EphemeralRunner", "d")
        direct.delete("ServiceAccount", "s")
        world.compact()

        async def relisted() -> bool:
            syncs = await support.syncs(journal)
            return len([s for s in syncs if s.body["reason"] == "expired"]) == len(NAMES)

        await eventually(relisted, what="a re-list of every kind")
        records = await support.observed(journal)
        assert support.assert_consistent(records, world, NAMES, NS)

    by_name: dict[tuple[str, str], list[tuple[str, str]]] = {(r.kind, r.name): [] for r in records}
    for r in records:
        by_name[(r.kind, r.name)].append((r.body["event"], r.resource_version))
    assert by_name[("EphemeralRunner", "a")][1:] == [("MODIFIED", last_a["metadata"]["resourceVersion"])]
    assert [e for e, _ in by_name[("EphemeralRunner", "b")]] == ["ADDED", "DELETED"]
    assert [e for e, _ in by_name[("ServiceAccount", "s")]] == ["ADDED", "DELETED"]
    assert (
        by_name[("EphemeralRunner", "c")] == by_name[("EphemeralRunner", "c")][:1]
    )  # unchanged: nothing new
    assert by_name[("EphemeralRunner", "d")] == [("ADDED", d["metadata"]["resourceVersion"])]
    # The deletions are known at the re-list's resourceVersion, after everything else the object went through.
    expired = {
        s.kind: s.resource_version for s in await support.syncs(journal) if s.body["reason"] == "expired"
    }
    assert by_name[("EphemeralRunner", "b")][-1][1] == expired["EphemeralRunner"]


async def test_a_410_answer_to_the_watch_request_relists(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    async with running(kube, journal, settings()):
        start = world.revision
        world.inject(Fault(verb="watch", path="/roles$", code=410, times=1))
        world.drop_watches()
        await writer.create("Role", "after-410")

        async def settled() -> bool:
            syncs = await support.syncs(journal)
            relisted = [s.kind for s in syncs if s.body["reason"] == "expired"]
            return relisted == ["Role"] and support.assert_exact(
                await support.observed(journal), world, NAMES, NS, after=start
            )

        await eventually(settled, what="the Role watcher re-listed")


# -- restart -------------------------------------------------------------------------------------------------


async def test_a_restart_with_the_same_journal_journals_only_what_changed_while_down(
    world: World, kube: client.ApiClient, tmp_path: pathlib.Path, writer: Writer
) -> None:
    path = tmp_path / "restart.db"
    journal = await support.open_journal(path)
    async with running(kube, journal, settings()):
        for name in ("a", "b", "c"):
            await writer.create("AutoscalingRunnerSet", name)
            await writer.create("Pod", name)

        async def settled() -> bool:
            pods = [world.store.get(("", "pods", NS, name)) for name in ("a", "b", "c")]
            return all(p and p.get("status", {}).get("phase") == "Running" for p in pods) and (
                support.assert_consistent(await support.observed(journal), world, NAMES, NS)
            )

        await eventually(settled, what="running pods, all journaled")
    before = await support.observed(journal)
    await journal.close()

    # While no watcher runs: a change, deletions, a creation; the history is compacted as well.
    a = await writer.label("AutoscalingRunnerSet", "a", "down")
    await writer.delete("AutoscalingRunnerSet", "b")
    Direct(world).delete("Pod", "b", grace_period=0)
    d = await writer.create("AutoscalingRunnerSet", "d")
    world.compact()

    journal = await support.open_journal(path)
    try:
        async with running(kube, journal, settings()):
            after = await support.observed(journal)
            assert support.assert_consistent(after, world, NAMES, NS)
        starts = [s for s in await support.syncs(journal) if s.body["reason"] == "start"]
    finally:
        await journal.close()

    new = [(r.kind, r.name, r.body["event"], r.resource_version) for r in after[len(before) :]]
    assert len(starts) == 2 * len(NAMES)
    listed_at = {s.kind: s.resource_version for s in starts[len(NAMES) :]}  # the second run's lists
    assert sorted(new) == sorted(
        [
            ("AutoscalingRunnerSet", "a", "MODIFIED", a["metadata"]["resourceVersion"]),
            ("AutoscalingRunnerSet", "b", "DELETED", listed_at["AutoscalingRunnerSet"]),
            ("Pod", "b", "DELETED", listed_at["Pod"]),
            ("AutoscalingRunnerSet", "d", "ADDED", d["metadata"]["resourceVersion"]),
        ]
    )


# -- faults, resync, bookmarks, batching -------------------------------------------------------------------


async def test_failed_requests_are_retried_with_backoff(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    world.inject(Fault(verb="list", path="/pods$", code=500, times=2))
    world.inject(Fault(verb="list", path="/serviceaccounts$", code=429, retry_after=0, times=1))
    world.inject(Fault(verb="watch", path="/ephemeralrunners$", code=503, times=3))
    async with running(kube, journal, settings()):
        start = world.revision
        await writer.create("EphemeralRunner", "x")
        await writer.create("Pod", "x")

        async def settled() -> bool:
            return support.assert_exact(await support.observed(journal), world, NAMES, NS, after=start)

        await eventually(settled, what="every change journaled")
    failed = [(r.verb, r.status) for r in world.requests if r.status >= 400]
    assert sorted(failed) == sorted([("list", 500)] * 2 + [("list", 429)] + [("watch", 503)] * 3)


async def test_periodic_resync_relists_and_journals_nothing_unchanged(
    world: World, kube: client.ApiClient, journal: Journal, writer: Writer
) -> None:
    async with running(kube, journal, settings(kinds=("EphemeralRunner", "Role"), resync=0.1)):
        for i in range(5):
            await writer.create("EphemeralRunner", f"er-{i}")
            await writer.create("Role", f"s-{i}")

        async def journaled() -> list[Any]:
            records = await support.observed(journal)
            return records if len(records) == 10 else []

        records = await eventually(journaled, what="the objects")
        seen = max(r.seq or 0 for r in await journal.read())

        async def resynced() -> list[Any]:
            syncs = [s for s in await support.syncs(journal) if (s.seq or 0) > seen]
            return syncs if len([s for s in syncs if s.body["reason"] == "resync"]) >= 6 else []

        later = await eventually(resynced, what="periodic re-lists")
    assert all(s.body["changes"] == 0 for s in later)  # an unchanged object is not journaled again
    records = await support.observed(journal)
    assert len(records) == 10
    assert support.assert_consistent(records, world, ("EphemeralRunner", "Role"), NS)


async def test_watches_end_on_their_timeout_and_resume_from_bookmarks(tmp_path: pathlib.Path) -> None:
    async with World(seed=2, bookmark_interval=0.2) as world, client.ApiClient(world.configuration()) as kube:
        journal = await support.open_journal(tmp_path / "bookmarks.db")
        direct = Direct(world)
        try:
            async with running(kube, journal, settings(kinds=("Role",), timeout_seconds=1)) as watchers:
                (watcher,) = watchers.watchers
                start = world.revision
                direct.create("Role", "r")
                # Writes of a kind nobody watches move the revision; only a bookmark can tell the watcher.
                core = client.CoreV1Api(kube)
                for i in range(3):
                    await core.create_namespaced_config_map(NS, {"metadata": {"name": f"cm-{i}"}})
                moved_to = str(world.revision)
                await eventually(lambda: watcher.resource_version == moved_to, what="a bookmark")
                world.drop_watches()  # the next watch starts at the bookmark, and ends on its timeout

                def resumed_from_the_bookmark() -> bool:
                    # A watch is logged when it ends: this one started at the bookmark and timed out.
                    assert list_requests(world) == 1
                    queries = [r.query for r in world.requests if r.verb == "watch"]
                    return any(f"resourceVersion={moved_to}&" in q for q in queries)

                await eventually(resumed_from_the_bookmark, what="a watch resumed from the bookmark")
                direct.label("Role", "r", "1")

                async def settled() -> bool:
                    return support.assert_exact(
                        await support.observed(journal), world, ["Role"], NS, after=start
                    )

                await eventually(settled, what="the Role's changes")
        finally:
            await journal.close()
        assert list_requests(world) == 1


async def test_events_that_arrive_together_are_appended_together(
    world: World, kube: client.ApiClient, journal: Journal
) -> None:
    counting = Counting(journal)
    direct = Direct(world)
    async with running(kube, counting, settings(kinds=("ServiceAccount",))):
        counting.sizes.clear()
        start = world.revision
        for i in range(100):
            direct.create("ServiceAccount", f"sa-{i}")

        async def settled() -> bool:
            return support.assert_exact(
                await support.observed(journal), world, ["ServiceAccount"], NS, after=start
            )

        await eventually(settled, what="every ServiceAccount journaled")
    assert sum(counting.sizes) == 100
    assert len(counting.sizes) < 100
    assert max(counting.sizes) > 1


async def test_a_failed_append_loses_nothing_and_duplicates_nothing(
    world: World, kube: client.ApiClient, journal: Journal
) -> None:
    failing = Failing(journal)
    direct = Direct(world)
    async with running(kube, failing, settings(kinds=("EphemeralRunner",))):
        direct.create("EphemeralRunner", "a")
        await eventually(lambda: journal.projection.get("EphemeralRunner", NS, "a"), what="a journaled")
        failing.failures = 2  # the next watch batch, and the list after it, are refused
        direct.create("EphemeralRunner", "b")
        direct.label("EphemeralRunner", "a", "1")
        direct.delete("EphemeralRunner", "a")

        async def recovered() -> bool:
            syncs = await support.syncs(journal)
            records = await support.observed(journal)
            return any(s.body["reason"] == "recovery" for s in syncs) and support.assert_consistent(
                records, world, ["EphemeralRunner"], NS
            )

        await eventually(recovered, what="the watcher recovered")
    records = await support.observed(journal)
    # The recovery list journals its page (b) first; what it lacked (a) is known, and deleted, after it.
    assert [(r.name, r.body["event"]) for r in records] == [("a", "ADDED"), ("b", "ADDED"), ("a", "DELETED")]
