"""What the watcher e2e tests share: a journal on disk, writes to every watched kind, and the oracle.

The journal is the real one (``store.journal.Journal``) in a file under the test's ``tmp_path``.

The oracle is the emulator's own event history (``world.store.events_after``): every write to a watched
kind is an event there, with its resourceVersion and type, so "every write appears in the journal once,
in resourceVersion order" can be checked against it without the test listing its writes by hand.
"""

from __future__ import annotations

import collections
import json
import pathlib
from collections.abc import Iterable, Sequence
from typing import Any

import aiohttp

from sim.apiserver import MERGE
from sim.world import World
from store.journal import Journal
from store.records import Record, RecordType
from watchers.kinds import KINDS, WatchedKind

# -- the journal -----------------------------------------------------------------------------------------


async def open_journal(path: pathlib.Path) -> Journal:
    return await Journal.open(path)


class Counting:
    """An appender that remembers the size of every append (to see events batched)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.sizes: list[int] = []

    async def append(self, records: Sequence[Record]) -> Sequence[Record]:
        self.sizes.append(len(records))
        out: Sequence[Record] = await self.journal.append(records)
        return out


class Failing:
    """An appender whose next ``failures`` appends fail without writing, as a full disk would."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.failures = 0

    async def append(self, records: Sequence[Record]) -> Sequence[Record]:
        if self.failures:
            self.failures -= 1
            raise OSError("disk full")
        out: Sequence[Record] = await self.journal.append(records)
        return out


async def observed(journal: Journal) -> list[Record]:
    return [r for r in await journal.read() if r.type is RecordType.OBSERVED]


async def syncs(journal: Journal) -> list[Record]:
    return [r for r in await journal.read() if r.type is RecordType.SYNC]


# -- writes ----------------------------------------------------------------------------------------------

BY_NAME = {k.kind: k for k in KINDS}


def body(kind: str, name: str, namespace: str = "default") -> dict[str, Any]:
    """A valid object of ``kind``."""
    meta: dict[str, Any] = {"name": name, "labels": {"test": "watchers"}}
    spec: dict[str, Any]
    if kind == "AutoscalingRunnerSet":
        spec = {"spec": {"githubConfigUrl": "https://github.com/example", "githubConfigSecret": "s"}}
    elif kind == "EphemeralRunnerSet":
        spec = {"spec": {"replicas": 0, "patchID": 0}}
    elif kind == "EphemeralRunner":
        pod = {"containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:latest"}]}
        spec = {
            "spec": {
                "githubConfigUrl": "https://github.com/example",
                "githubConfigSecret": "s",
                "runnerScaleSetId": 1,
                "spec": pod,
            }
        }
    elif kind == "AutoscalingListener":
        spec = {"spec": {"autoscalingRunnerSetName": "ars", "minRunners": 0}}
    elif kind == "Pod":
        spec = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    elif kind == "ServiceAccount":
        spec = {}
    elif kind == "Role":
        spec = {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    elif kind == "RoleBinding":
        spec = {
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": namespace}],
        }
    else:
        raise ValueError(kind)
    k = BY_NAME[kind]
    return {"apiVersion": k.api_version, "kind": kind, "metadata": meta, **spec}


def collection(kind: WatchedKind, namespace: str) -> str:
    base = f"/apis/{kind.group}/{kind.version}" if kind.group else "/api/v1"
    return f"{base}/namespaces/{namespace}/{kind.plural}"


class Writer:
    """Writes over HTTP, as any other client of the cluster would."""

    def __init__(self, world: World, session: aiohttp.ClientSession) -> None:
        self.world = world
        self.session = session

    async def _send(self, method: str, path: str, data: Any = None, ctype: str = "application/json") -> Any:
        headers = {"Content-Type": ctype}
        payload = None if data is None else json.dumps(data)
        async with self.session.request(method, self.world.url + path, data=payload, headers=headers) as resp:
            answer = await resp.json()
            assert resp.status < 300, answer
            return answer

    async def create(self, kind: str, name: str, namespace: str = "default") -> dict[str, Any]:
        k = BY_NAME[kind]
        created: dict[str, Any] = await self._send(
            "POST", collection(k, namespace), body(kind, name, namespace)
        )
        return created

    async def label(self, kind: str, name: str, value: str, namespace: str = "default") -> dict[str, Any]:
        k = BY_NAME[kind]
        patch = {"metadata": {"labels": {"step": value}}}
        patched: dict[str, Any] = await self._send(
            "PATCH", f"{collection(k, namespace)}/{name}", patch, MERGE
        )
        return patched

    async def delete(self, kind: str, name: str, namespace: str = "default") -> None:
        await self._send("DELETE", f"{collection(BY_NAME[kind], namespace)}/{name}")


class Direct:
    """Writes straight into the emulated API server, synchronously: a test can make several with no
    chance for a watcher to run in between (say, while its watch is down and before a compaction)."""

    def __init__(self, world: World) -> None:
        self.world = world

    def _kind(self, kind: str) -> Any:
        k = BY_NAME[kind]
        found = self.world.registry.get(k.group, k.version, k.plural)
        assert found is not None
        return found

    def create(self, kind: str, name: str, namespace: str = "default") -> dict[str, Any]:
        created: dict[str, Any] = self.world.api.create(
            self._kind(kind), namespace, body(kind, name, namespace)
        ).body
        return created

    def label(self, kind: str, name: str, value: str, namespace: str = "default") -> dict[str, Any]:
        patch = {"metadata": {"labels": {"step": value}}}
        patched: dict[str, Any] = self.world.api.patch(self._kind(kind), namespace, name, patch, MERGE).body
        return patched

    def delete(
        self, kind: str, name: str, namespace: str = "default", *, grace_period: int | None = None
    ) -> None:
        options = {} if grace_period is None else {"gracePeriodSeconds": grace_period}
        self.world.api.delete(self._kind(kind), namespace, name, options)


# -- the oracle ------------------------------------------------------------------------------------------

Changes = dict[str, list[tuple[str, int]]]  # uid → [(event, resourceVersion)] in journal/history order


def in_scope(kinds: Iterable[str], namespace: str | None) -> Any:
    keys = {(BY_NAME[k].group, BY_NAME[k].plural): k for k in kinds}
    return keys, (lambda ns: namespace is None or ns == namespace)


def world_changes(world: World, kinds: Iterable[str], namespace: str | None, *, after: int) -> Changes:
    """Every event of the watched kinds in scope after revision ``after``, per object."""
    keys, ns_ok = in_scope(kinds, namespace)
    out: Changes = collections.defaultdict(list)
    for event in world.store.events_after(after):
        if event.key[:2] in keys and ns_ok(event.key[2]):
            out[event.obj["metadata"]["uid"]].append((event.type, event.rv))
    return dict(out)


def journal_changes(records: Iterable[Record], *, after: int = 0) -> Changes:
    out: Changes = collections.defaultdict(list)
    for r in records:
        if r.type is RecordType.OBSERVED and int(r.resource_version) > after:
            out[r.uid].append((r.body["event"], int(r.resource_version)))
    return dict(out)


def assert_exact(
    records: Sequence[Record], world: World, kinds: Iterable[str], namespace: str | None, *, after: int
) -> bool:
    """Every change after ``after`` is journaled exactly as the server made it: once, in order."""
    expected = world_changes(world, kinds, namespace, after=after)
    got = journal_changes(records, after=after)
    assert got == expected
    return True


def assert_consistent(
    records: Sequence[Record], world: World, kinds: Iterable[str], namespace: str | None
) -> bool:
    """Nothing journaled twice, every object's records in resourceVersion order, DELETED only last, and
    the journal's last word on every object is the server's current state."""
    kinds = list(kinds)
    seen: set[tuple[str, str]] = set()
    per_uid: dict[str, list[Record]] = collections.defaultdict(list)
    for r in records:
        if r.type is not RecordType.OBSERVED or r.kind not in kinds:
            continue
        assert (r.uid, r.resource_version) not in seen, (
            f"journaled twice: {r.kind} {r.name} {r.resource_version}"
        )
        seen.add((r.uid, r.resource_version))
        per_uid[r.uid].append(r)
    for uid, rs in per_uid.items():
        rvs = [int(r.resource_version) for r in rs]
        assert rvs == sorted(rvs), f"out of order: {rs[0].kind} {rs[0].name} {rvs}"
        assert all(r.body["event"] != "DELETED" for r in rs[:-1]), f"records after DELETED for {uid}"
    keys, ns_ok = in_scope(kinds, namespace)
    live = {}
    for key in keys:
        for obj in world.store.items(key):
            if ns_ok(obj["metadata"].get("namespace", "")):
                live[obj["metadata"]["uid"]] = obj["metadata"]["resourceVersion"]
    journal_live = {
        uid: rs[-1].resource_version for uid, rs in per_uid.items() if rs[-1].body["event"] != "DELETED"
    }
    assert journal_live == live
    return True
