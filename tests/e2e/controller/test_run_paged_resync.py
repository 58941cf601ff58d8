"""``arcsm run --page-size N --resync-period S`` against the emulated cluster: its lists, the periodic
re-lists and the one after a watch gap, go page by page, and what was deleted in the gap is journaled
as deleted.

The controller is the installed command in a subprocess (``Run``), with the world's kubeconfig under a
user token of its own, so its requests are told apart in the emulator's request log; its journal is
read once it has stopped. The objects are Roles, a kind it watches and leaves alone when it does not own
them. Finer points of the paged diff (append sizes, a name re-created in the gap) are in
tests/e2e/watchers/test_paged_resync.py.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import aiohttp

from sim.world import World
from store.journal import Journal
from store.records import RecordType
from tests.e2e.controller.test_controller_kubeconfig import Run
from tests.e2e.watchers.support import Direct, Writer
from tests.helpers import eventually, kubeconfig_as

USER = "paged-controller"
PAGE = 2
WAIT = 120.0  # a deadline, not a pace


def role_lists(world: World, *, since: int = 0) -> list[dict[str, list[str]]]:
    return [
        parse_qs(r.query)
        for r in world.requests[since:]
        if r.user == USER and r.verb == "list" and r.path.endswith("/namespaces/default/roles")
    ]


async def test_arcsm_run_relists_page_by_page_and_sees_what_a_watch_gap_deleted(
    world: World, tmp_path: Path
) -> None:
    async with aiohttp.ClientSession() as session:
        writer = Writer(world, session)
        for i in range(5):
            await writer.create("Role", f"role-{i}")
    kubeconfig = kubeconfig_as(world, tmp_path / "kubeconfig", USER)
    run = Run(tmp_path, {}, "--kubeconfig", str(kubeconfig), "--page-size", str(PAGE), "--resync-period", "1")
    await run.start()
    try:
        # Two lists of the five Roles (the start and a periodic resync), each of three pages.
        await eventually(
            lambda: len([q for q in role_lists(world) if "continue" in q]) >= 4,
            timeout=WAIT,
            what="a start list and a resync, paged",
        )
        # A watch gap: two Roles deleted and the history compacted, so no watch can resume past it.
        world.drop_watches()
        since = len(world.requests)
        direct = Direct(world)
        direct.delete("Role", "role-1")
        direct.delete("Role", "role-3")
        world.compact()
        # The next list of the three left: two pages.
        await eventually(
            lambda: any("continue" in q for q in role_lists(world, since=since)),
            timeout=WAIT,
            what="a paged re-list after the gap",
        )
    finally:
        code, stderr = await run.stop()
    assert code == 0, stderr[-2000:]
    assert all(q["limit"] == [str(PAGE)] for q in role_lists(world))

    journal = await Journal.open(tmp_path / "journal.db")
    try:
        records = await journal.read()
    finally:
        await journal.close()
    syncs = [
        r for r in records if r.type is RecordType.SYNC and r.kind == "Role" and r.namespace == "default"
    ]
    assert {s.body["reason"] for s in syncs} >= {"start", "resync"}
    roles = [r for r in records if r.type is RecordType.OBSERVED and r.kind == "Role"]
    last = {r.name: r for r in roles}
    assert {n for n, r in last.items() if r.body["event"] != "DELETED"} == {"role-0", "role-2", "role-4"}
    for name in ("role-1", "role-3"):
        deleted = last[name]
        assert deleted.body["event"] == "DELETED"
        # Known at the resourceVersion of the list that revealed it, whose SYNC follows it.
        assert any(
            s.resource_version == deleted.resource_version and (s.seq or 0) > (deleted.seq or 0)
            for s in syncs
        )
        assert [r.body["event"] for r in roles if r.name == name] == ["ADDED", "DELETED"]
    # A resync of unchanged Roles journals nothing: five ADDED and two DELETED, whatever the resyncs.
    assert len(roles) == 7
