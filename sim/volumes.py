"""A pod's volumes on the host, set up as the kubelet's volume manager does, for runtimes whose
containers are real processes (``runtimes.StagedRuntime.host_volumes``).

``PodVolumes.setup`` gives every volume of the pod a directory under the pod's own
(``…/pods/UID/volumes/kubernetes.io~PLUGIN/NAME``, the kubelet's layout) and returns them by name:

* ``emptyDir``: an empty directory (``medium: Memory`` too; no size limit);
* ``secret``, ``configMap``, ``downwardAPI`` and ``projected`` (sources ``serviceAccountToken``,
  ``configMap``, ``secret``, ``downwardAPI``): files from the objects' data, all keys or ``items`` with
  their ``path`` and ``mode``, else ``defaultMode``, written by the kubelet's atomic writer (the files are
  symlinks through ``..data`` to a timestamped directory that is swapped whole); these volumes are
  read-only. A missing object or key fails the setup with the kubelet's message unless ``optional``.
  A ``serviceAccountToken`` is asked of the TokenRequest subresource bound to the pod (its audience and
  ``expirationSeconds``, default 3600) and renewed by ``refresh`` once 80 % of its lifetime or 24 hours
  have passed (the kubelet's token manager);
* ``persistentVolumeClaim``: the directory ``claims(namespace, claimName)`` names (None: not bound yet, try
  again later), read-only when the volume says so; a generic ``ephemeral`` volume is its pod's claim
  ``<pod>-<volume>`` (``sim.ephemeralvolumes``), mounted the same way;
* ``hostPath``: the host path itself (``DirectoryOrCreate`` and ``FileOrCreate`` create it, the other
  types are checked).

``refresh`` rewrites what changed in the projected volumes (the kubelet resyncs them periodically);
``teardown`` removes the pod's directory (claims and host paths stay). ``VolumeError`` carries the
``FailedMount`` message (``MountVolume.SetUp failed for volume "x" : secret "y" not found``).

The claim seam: ``ClaimPath`` is ``(namespace, claim name) -> Path | None``; a world without a
provisioner uses ``fallback_claims``: a claim bound to a PersistentVolume with a ``hostPath`` or
``local`` source (a static volume, as a cluster without a provisioner has) is that path, as a kubelet
mounts it (``hostPath`` of type ``DirectoryOrCreate`` made if missing); any other existing claim is a
directory of its own under the state directory (``claims/NS/NAME``).

Known limits: other volume types (csi, nfs, image, …) fail the setup; no ``fsGroup`` or
ownership changes; ``emptyDir.sizeLimit`` is not enforced.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from sim import environment, errors
from sim.nodeapi import NodeApi, Objects
from sim.runtimes import HostVolume
from sim.store import Obj

log = logging.getLogger("arcsm.sim.kubelet")

ClaimPath = Callable[[str, str], Path | None]

PLUGINS = {
    "emptyDir": "kubernetes.io~empty-dir",
    "secret": "kubernetes.io~secret",
    "configMap": "kubernetes.io~configmap",
    "downwardAPI": "kubernetes.io~downward-api",
    "projected": "kubernetes.io~projected",
    "persistentVolumeClaim": "kubernetes.io~pvc",
    "hostPath": "kubernetes.io~host-path",
}
PROJECTED = ("secret", "configMap", "downwardAPI", "projected")
DEFAULT_MODE = 0o644
DEFAULT_TOKEN_SECONDS = 3600  # a serviceAccountToken's expirationSeconds unless it says (and the API's)
TOKEN_MAX_AGE = timedelta(hours=24)
DATA = "..data"


class _Nothing:
    def get(self, key: object) -> Obj | None:
        return None


_NOTHING = _Nothing()


class VolumeError(Exception):
    def __init__(self, volume: str, message: str) -> None:
        super().__init__(f'MountVolume.SetUp failed for volume "{volume}" : {message}')
        self.volume = volume


def volume_path(volume: Obj | None) -> Path | None:
    """The host path of a PersistentVolume's ``hostPath`` or ``local`` source (None for other sources)."""
    spec = (volume or {}).get("spec") or {}
    source = spec.get("hostPath") or spec.get("local") or {}
    if not source.get("path"):
        return None
    path = Path(str(source["path"]))
    if source.get("type") == "DirectoryOrCreate":
        path.mkdir(parents=True, exist_ok=True)
    return path


def fallback_claims(store: Objects, root: Callable[[], Path]) -> ClaimPath:
    """The path of the host volume a claim is bound to, else a directory per claim under
    ``root()/claims``, once its PersistentVolumeClaim exists."""

    def claim_path(namespace: str, name: str) -> Path | None:
        claim = store.get(("", "persistentvolumeclaims", namespace, name))
        if claim is None:
            return None
        bound = str((claim.get("spec") or {}).get("volumeName") or "")
        found = volume_path(store.get(("", "persistentvolumes", "", bound))) if bound else None
        if found is not None:
            return found
        path = root() / "claims" / namespace / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    return claim_path


# -- the atomic writer -----------------------------------------------------------------------------------

Files = dict[str, tuple[bytes, int]]  # relative path → (content, mode)


def _current(directory: Path) -> Files | None:
    data = directory / DATA
    if not data.is_symlink():
        return None
    target = directory / os.readlink(data)
    found: Files = {}
    for path in target.rglob("*"):
        if path.is_file():
            found[str(path.relative_to(target))] = (path.read_bytes(), path.stat().st_mode & 0o7777)
    return found


def write_atomically(directory: Path, files: Files) -> bool:
    """Make ``directory`` hold ``files`` the way the kubelet's AtomicWriter does; False if it did."""
    if _current(directory) == files:
        return False
    directory.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("..%Y_%m_%d_%H_%M_%S.")
    fresh = Path(tempfile.mkdtemp(prefix=stamp, dir=directory))
    fresh.chmod(0o755)
    for relative, (content, mode) in files.items():
        path = fresh / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        path.chmod(mode)
    old = directory / DATA
    previous = os.readlink(old) if old.is_symlink() else None
    staging = directory / "..data_tmp"
    with contextlib.suppress(FileNotFoundError):
        staging.unlink()
    staging.symlink_to(fresh.name)
    staging.replace(old)
    tops = {PurePosixPath(r).parts[0] for r in files}
    for top in tops:
        link = directory / top
        if not link.is_symlink():
            link.symlink_to(f"{DATA}/{top}")
    for entry in directory.iterdir():
        if entry.is_symlink() and not entry.name.startswith("..") and entry.name not in tops:
            entry.unlink()
    if previous is not None and previous != fresh.name:
        shutil.rmtree(directory / previous, ignore_errors=True)
    return True


# -- projections -----------------------------------------------------------------------------------------


@dataclass
class _Token:
    token: str
    expires: datetime
    seconds: int


def _mode(item: Mapping[str, Any], default: int) -> int:
    mode = item.get("mode")
    return int(mode) if isinstance(mode, int) else default


def _items(
    volume: str, data: Mapping[str, bytes], source: Mapping[str, Any], default: int, what: str
) -> Files:
    items = source.get("items")
    if not items:
        return {key: (value, default) for key, value in data.items()}
    out: Files = {}
    for item in items:
        key = str(item.get("key") or "")
        if key not in data:
            if source.get("optional"):
                continue
            raise VolumeError(
                volume,
                f"{what} references non-existent {'config' if what == 'configmap' else 'secret'} key: {key}",
            )
        out[str(item.get("path") or key)] = (data[key], _mode(item, default))
    return out


class PodVolumes:
    def __init__(
        self,
        api: NodeApi,
        pod: Obj,
        *,
        directory: Path,
        claims: ClaimPath | None,
        claims_root: Callable[[], Path],
        pod_ip: str,
        host_ip: str,
    ) -> None:
        self.api = api
        self.pod = pod
        self.directory = directory
        self.claims = claims
        self.claims_root = claims_root
        self.objects: Objects = _NOTHING  # what the pod refers to, read by setup and refresh
        self.pod_ip = pod_ip
        self.host_ip = host_ip
        meta = pod.get("metadata") or {}
        self.namespace = str(meta.get("namespace", ""))
        self._tokens: dict[tuple[str, str], _Token] = {}
        self.mounted: dict[str, HostVolume] = {}

    @property
    def volumes(self) -> list[Mapping[str, Any]]:
        return [v for v in (self.pod.get("spec") or {}).get("volumes") or [] if isinstance(v, Mapping)]

    def _dir(self, plugin: str, name: str) -> Path:
        return self.directory / "volumes" / PLUGINS[plugin] / name

    async def setup(self) -> dict[str, HostVolume]:
        """Every volume on the host; raises ``VolumeError`` for the first one that cannot be."""
        self.objects = await self.api.objects(self.pod)
        for volume in self.volumes:
            name = str(volume.get("name") or "")
            if name not in self.mounted:
                self.mounted[name] = await self._setup(name, volume)
        return dict(self.mounted)

    def _claim_path(self, name: str) -> Path | None:
        """The directory of claim ``name``: ``claims``' answer, else one per claim under ``claims_root``
        once the claim exists."""
        if self.claims is not None:
            return self.claims(self.namespace, name)
        return fallback_claims(self.objects, self.claims_root)(self.namespace, name)

    async def _setup(self, name: str, volume: Mapping[str, Any]) -> HostVolume:
        if isinstance(volume.get("emptyDir"), Mapping):
            path = self._dir("emptyDir", name)
            path.mkdir(parents=True, exist_ok=True)
            path.chmod(0o777)
            return HostVolume(path)
        for plugin in PROJECTED:
            if isinstance(volume.get(plugin), Mapping):
                path = self._dir(plugin, name)
                write_atomically(path, await self._project(name, plugin, volume[plugin]))
                return HostVolume(path, read_only=True)
        claim = volume.get("persistentVolumeClaim")
        if isinstance(volume.get("ephemeral"), Mapping):
            # A generic ephemeral volume is its pod's claim, made by sim.ephemeralvolumes.
            claim = {"claimName": f"{self.pod['metadata']['name']}-{name}"}  # sim.ephemeralvolumes
        if isinstance(claim, Mapping):
            claim_name = str(claim.get("claimName") or "")
            found = self._claim_path(claim_name)
            if found is None:
                raise VolumeError(name, f'persistentvolumeclaim "{claim_name}" is not bound')
            return HostVolume(found, read_only=bool(claim.get("readOnly")))
        host = volume.get("hostPath")
        if isinstance(host, Mapping):
            return HostVolume(self._host_path(name, host))
        kinds = [k for k in volume if k != "name"]
        raise VolumeError(name, f"the emulator cannot mount {', '.join(kinds) or 'this'} volumes")

    def _host_path(self, name: str, source: Mapping[str, Any]) -> Path:
        path = Path(str(source.get("path") or "/"))
        kind = str(source.get("type") or "")
        if kind == "DirectoryOrCreate":
            path.mkdir(parents=True, exist_ok=True)
        elif kind == "FileOrCreate":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(exist_ok=True)
        elif kind == "Directory" and not path.is_dir():
            raise VolumeError(name, f"hostPath type check failed: {path} is not a directory")
        elif kind == "File" and not path.is_file():
            raise VolumeError(name, f"hostPath type check failed: {path} is not a file")
        return path

    # -- projected content -------------------------------------------------------------------------------

    async def _project(self, volume: str, plugin: str, source: Mapping[str, Any]) -> Files:
        mode = source.get("defaultMode")
        default = mode if isinstance(mode, int) else DEFAULT_MODE
        if plugin == "projected":
            files: Files = {}
            for projection in source.get("sources") or []:
                for kind in ("secret", "configMap", "downwardAPI", "serviceAccountToken"):
                    if isinstance(projection.get(kind), Mapping):
                        files.update(await self._source(volume, kind, projection[kind], default))
            return files
        return await self._source(volume, plugin, source, default)

    async def _source(self, volume: str, kind: str, source: Mapping[str, Any], default: int) -> Files:
        store = self.objects
        if kind == "secret":
            name = str(source.get("secretName") or source.get("name") or "")
            data = environment.secret_data(store, self.namespace, name)
            if data is None:
                if source.get("optional"):
                    return {}
                raise VolumeError(volume, f'secret "{name}" not found')
            return _items(volume, data, source, default, "secret")
        if kind == "configMap":
            name = str(source.get("name") or "")
            cm = store.get(("", "configmaps", self.namespace, name))
            if cm is None:
                if source.get("optional"):
                    return {}
                raise VolumeError(volume, f'configmap "{name}" not found')
            return _items(volume, environment.configmap_data(cm), source, default, "configmap")
        if kind == "downwardAPI":
            return self._downward(volume, source, default)
        return await self._token(volume, source, default)

    def _downward(self, volume: str, source: Mapping[str, Any], default: int) -> Files:
        pod = self.api.pod(self.namespace, str((self.pod.get("metadata") or {}).get("name", "")))
        pod = pod or self.pod
        files: Files = {}
        for item in source.get("items") or []:
            path = str(item.get("path") or "")
            try:
                if isinstance(item.get("fieldRef"), Mapping):
                    value = environment.field_value(
                        pod,
                        str(item["fieldRef"].get("fieldPath", "")),
                        pod_ip=self.pod_ip,
                        host_ip=self.host_ip,
                        whole_maps=True,
                    )
                elif isinstance(item.get("resourceFieldRef"), Mapping):
                    ref = item["resourceFieldRef"]
                    containers = (pod.get("spec") or {}).get("containers") or []
                    container: Mapping[str, Any] = next(
                        (c for c in containers if c.get("name") == ref.get("containerName")), {}
                    )
                    value = environment.resource_value(
                        container, str(ref.get("resource") or ""), ref.get("divisor")
                    )
                else:
                    continue
            except ValueError as exc:
                raise VolumeError(volume, str(exc)) from None
            files[path] = (value.encode(), _mode(item, default))
        return files

    async def _token(self, volume: str, source: Mapping[str, Any], default: int) -> Files:
        path = str(source.get("path") or "token")
        seconds = int(source.get("expirationSeconds") or DEFAULT_TOKEN_SECONDS)
        held = self._tokens.get((volume, path))
        if held is None or self._due(held):
            held = await self._request_token(volume, source, seconds)
            self._tokens[(volume, path)] = held
        return {path: (held.token.encode(), default)}

    def _due(self, held: _Token) -> bool:
        now = self.api.clock()
        issued = held.expires - timedelta(seconds=held.seconds)
        return now > issued + TOKEN_MAX_AGE or now > held.expires - timedelta(seconds=held.seconds * 0.2)

    async def _request_token(self, volume: str, source: Mapping[str, Any], seconds: int) -> _Token:
        meta = self.pod.get("metadata") or {}
        account = str((self.pod.get("spec") or {}).get("serviceAccountName") or "default")
        body = {
            "spec": {
                "audiences": [source["audience"]] if source.get("audience") else [],
                "expirationSeconds": seconds,
                "boundObjectRef": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta.get("name"),
                    "uid": meta.get("uid"),
                },
            }
        }
        try:
            answer = await self.api.request_token(self.namespace, account, body)
        except errors.ApiError as err:
            raise VolumeError(volume, f"failed to fetch token: {err.message}") from None
        status = answer["status"]
        expires = datetime.fromisoformat(status["expirationTimestamp"])
        return _Token(status["token"], expires, seconds)

    # -- upkeep ------------------------------------------------------------------------------------------

    async def refresh(self) -> None:
        """Rewrite projected volumes whose content changed (renewing tokens that are due)."""
        try:
            self.objects = await self.api.objects(self.pod)
        except (errors.ApiError, OSError) as exc:
            log.info("kubelet: keeping the volumes of %s as they were: %s", self.namespace, exc)
            return
        for volume in self.volumes:
            name = str(volume.get("name") or "")
            if name not in self.mounted:
                continue
            for plugin in PROJECTED:
                if isinstance(volume.get(plugin), Mapping):
                    try:
                        files = await self._project(name, plugin, volume[plugin])
                        write_atomically(self._dir(plugin, name), files)
                    except (VolumeError, OSError) as exc:
                        log.info("kubelet: keeping volume %s of %s as it was: %s", name, self.namespace, exc)

    def next_token_refresh(self) -> float | None:
        """Seconds until a held token is due (None without tokens)."""
        if not self._tokens:
            return None
        now = self.api.clock()
        due = [
            min(
                t.expires - timedelta(seconds=t.seconds * 0.2),
                t.expires - timedelta(seconds=t.seconds) + TOKEN_MAX_AGE,
            )
            for t in self._tokens.values()
        ]
        return max(0.0, (min(due) - now).total_seconds())

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
