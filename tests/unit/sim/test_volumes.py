"""Pod volumes on the host (sim.volumes) against an in-process API server with a clock the test moves
(through the kubelet's node API, sim.inprocessapi): the atomic writer, projected content, the kubelet's
messages, token renewal, the claim fallback."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sim import kinds, tokens, volumes
from sim.apiserver import ApiServer
from sim.inprocessapi import InProcessNodeApi
from sim.store import Store


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def api(clock: Clock) -> ApiServer:
    api = ApiServer(registry=kinds.Registry(), store=Store(), clock=clock)
    api.create(api.registry.get("", "v1", "namespaces"), "", {"metadata": {"name": "team"}})  # type: ignore[arg-type]
    for plural, body in (
        ("serviceaccounts", {"metadata": {"name": "default"}}),
        ("configmaps", {"metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}}),
        ("secrets", {"metadata": {"name": "s"}, "stringData": {"token": "t"}}),
    ):
        kind = api.registry.get("", "v1", plural)
        assert kind is not None
        api.create(kind, "team", body)
    return api


def pod(api: ApiServer, volume_list: list[dict[str, Any]]) -> dict[str, Any]:
    kind = api.registry.get("", "v1", "pods")
    assert kind is not None
    body = {
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "volumes": volume_list,
            "automountServiceAccountToken": False,
        },
    }
    return api.create(kind, "team", body).body


def pod_volumes(api: ApiServer, tmp_path: Path, volume_list: list[dict[str, Any]]) -> volumes.PodVolumes:
    return volumes.PodVolumes(
        InProcessNodeApi(api),
        pod(api, volume_list),
        directory=tmp_path / "pod",
        claims=None,
        claims_root=lambda: tmp_path / "state",
        pod_ip="127.244.0.2",
        host_ip="192.168.49.2",
    )


def test_the_atomic_writer_swaps_the_data_directory_whole(tmp_path: Path) -> None:
    target = tmp_path / "vol"
    assert volumes.write_atomically(target, {"a": (b"1", 0o644), "dir/b": (b"2", 0o600)})
    assert os.readlink(target / "a") == "..data/a" and (target / "a").read_text() == "1"
    assert (target / "dir" / "b").read_text() == "2" and ((target / "dir/b").stat().st_mode & 0o777) == 0o600
    first = os.readlink(target / "..data")
    assert not volumes.write_atomically(target, {"a": (b"1", 0o644), "dir/b": (b"2", 0o600)})  # unchanged
    assert volumes.write_atomically(target, {"a": (b"changed", 0o644)})
    assert (target / "a").read_text() == "changed"
    assert not (target / "dir").exists() and not (target / first).exists()  # gone with the old version


async def test_secret_config_map_and_downward_api_volumes(api: ApiServer, tmp_path: Path) -> None:
    pv = pod_volumes(
        api,
        tmp_path,
        [
            {
                "name": "cm",
                "configMap": {"name": "cm", "items": [{"key": "b", "path": "sub/b.txt", "mode": 0o400}]},
            },
            {"name": "s", "secret": {"secretName": "s", "defaultMode": 0o440}},
            {
                "name": "info",
                "downwardAPI": {
                    "items": [
                        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                        {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                    ]
                },
            },
            {"name": "scratch", "emptyDir": {}},
        ],
    )
    mounted = await pv.setup()
    assert (mounted["cm"].path / "sub/b.txt").read_text() == "2" and not (mounted["cm"].path / "a").exists()
    assert ((mounted["cm"].path / "sub/b.txt").stat().st_mode & 0o777) == 0o400
    assert (mounted["s"].path / "token").read_text() == "t"
    assert ((mounted["s"].path / "token").stat().st_mode & 0o777) == 0o440
    assert (mounted["info"].path / "labels").read_text() == 'app="x"'
    assert (mounted["info"].path / "name").read_text() == "p"
    assert all(mounted[n].read_only for n in ("cm", "s", "info")) and not mounted["scratch"].read_only
    assert mounted["scratch"].path.is_dir() and not any(mounted["scratch"].path.iterdir())


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        ({"secret": {"secretName": "nope"}}, 'secret "nope" not found'),
        ({"configMap": {"name": "nope"}}, 'configmap "nope" not found'),
        (
            {"configMap": {"name": "cm", "items": [{"key": "z", "path": "z"}]}},
            "configmap references non-existent config key: z",
        ),
        ({"persistentVolumeClaim": {"claimName": "nope"}}, 'persistentvolumeclaim "nope" is not bound'),
        ({"nfs": {"server": "x", "path": "/"}}, "the emulator cannot mount nfs volumes"),
    ],
)
async def test_volumes_that_cannot_be_set_up_say_why(
    api: ApiServer, tmp_path: Path, volume: dict[str, Any], message: str
) -> None:
    pv = pod_volumes(api, tmp_path, [{"name": "v", **volume}])
    with pytest.raises(volumes.VolumeError) as caught:
        await pv.setup()
    assert str(caught.value) == f'MountVolume.SetUp failed for volume "v" : {message}'


async def test_optional_sources_may_be_missing(api: ApiServer, tmp_path: Path) -> None:
    pv = pod_volumes(api, tmp_path, [{"name": "v", "secret": {"secretName": "nope", "optional": True}}])
    assert (await pv.setup())["v"].path.is_dir()


async def test_a_claim_is_a_directory_of_the_state_once_the_claim_exists(
    api: ApiServer, tmp_path: Path
) -> None:
    kind = api.registry.get("", "v1", "persistentvolumeclaims")
    assert kind is not None
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    api.create(kind, "team", {"metadata": {"name": "data"}, "spec": spec})
    pv = pod_volumes(
        api, tmp_path, [{"name": "d", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}}]
    )
    mounted = (await pv.setup())["d"]
    assert mounted.path == tmp_path / "state" / "claims" / "team" / "data" and mounted.path.is_dir()
    assert mounted.read_only


async def test_a_claim_bound_to_a_host_volume_is_that_volumes_path(api: ApiServer, tmp_path: Path) -> None:
    """A cluster without a provisioner binds claims to volumes made beforehand: the kubelet mounts the
    volume's ``hostPath`` (made when its type says DirectoryOrCreate), not a directory of its own."""
    host = tmp_path / "static" / "journal"
    volume = {
        "metadata": {"name": "static"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": str(host), "type": "DirectoryOrCreate"},
        },
    }
    claim = {
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": "static",
        },
    }
    for plural, namespace, body in (
        ("persistentvolumes", "", volume),
        ("persistentvolumeclaims", "team", claim),
    ):
        kind = api.registry.get("", "v1", plural)
        assert kind is not None
        api.create(kind, namespace, body)
    pv = pod_volumes(api, tmp_path, [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    mounted = (await pv.setup())["d"]
    assert mounted.path == host and host.is_dir()
    assert not (tmp_path / "state" / "claims").exists()


async def test_the_projected_token_is_renewed_at_80_percent_of_its_life(
    api: ApiServer, clock: Clock, tmp_path: Path
) -> None:
    projected = {
        "name": "kube-api-access-x",
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "cm", "items": [{"key": "a", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]
                    }
                },
            ]
        },
    }
    pv = pod_volumes(api, tmp_path, [projected])
    path = (await pv.setup())["kube-api-access-x"].path
    first = (path / "token").read_text()
    assert (path / "ca.crt").read_text() == "1" and (path / "namespace").read_text() == "team"
    assert tokens.verify(first, now=clock.now).pod is not None
    assert pv.next_token_refresh() == pytest.approx(3607 * 0.8, abs=1)

    clock.now += timedelta(seconds=3607 * 0.7)
    await pv.refresh()
    assert (path / "token").read_text() == first
    clock.now += timedelta(seconds=3607 * 0.15)
    await pv.refresh()
    renewed = (path / "token").read_text()
    assert renewed != first
    assert tokens.verify(renewed, now=clock.now).issued == int(clock.now.timestamp())


async def test_refresh_follows_the_objects(api: ApiServer, tmp_path: Path) -> None:
    pv = pod_volumes(api, tmp_path, [{"name": "cm", "configMap": {"name": "cm"}}])
    path = (await pv.setup())["cm"].path
    kind = api.registry.get("", "v1", "configmaps")
    assert kind is not None
    api.patch(kind, "team", "cm", {"data": {"a": "10", "b": None, "c": "3"}}, "application/merge-patch+json")
    await pv.refresh()
    assert sorted(p.name for p in path.iterdir() if not p.name.startswith("..")) == ["a", "c"]
    assert (path / "a").read_text() == "10"
