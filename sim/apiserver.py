"""The verbs of the emulated API server: create, get, update, patch, delete, bind.

Generic over the kinds of ``sim.kinds``: each verb applies the rules of apiserver-semantics.md §1
(server-owned fields, optimistic concurrency, status subresource isolation, generation, no-op writes,
finalizers and deletionTimestamp, graceful pod deletion, delete propagation and preconditions) and
writes through ``sim.store``. A built-in kind's body (or the object a patch produced) is first decoded as
kube-apiserver decodes it into its Go struct (``sim.decoding``: unknown fields, wrong types, times).
The HTTP layer and the simulated controllers both call these verbs, so a controller's write follows
exactly the rules a client's does.

A patch of type ``application/apply-patch+yaml`` is server-side apply (``sim.applying``); every write
records its manager's ``managedFields`` entry (``sim.managedfields``), named by the ``manager`` argument
(the HTTP layer passes ``fieldManager`` or the user agent's product; in-process writers default to
``kube-controller-manager``).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sim import (
    admission,
    applying,
    builtins,
    crdterminating,
    decoding,
    deleteoptions,
    errors,
    managedfields,
    patches,
    persistentvolumes,
    services,
    strategic,
    validation,
)
from sim.kinds import Kind, Registry
from sim.store import Obj, ObjectKey, Store
from sim.timestamps import format_time as format_time  # what the emulator's controllers import from here

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"

# The field manager of writes made in process (the simulated controllers), kube-controller-manager's own.
DEFAULT_MANAGER = "kube-controller-manager"

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"


@dataclass
class Result:
    code: int
    body: Obj
    warnings: list[str] = field(default_factory=list)


def _parse_time(text: str) -> datetime:
    """A timestamp the server wrote (``format_time``)."""
    return datetime.fromisoformat(text).astimezone(UTC)


def _go_bad_value(value: Any) -> Any:
    """A metav1.Time bad value as Go prints it (``Time.String()``, server in UTC); others unchanged."""
    if not isinstance(value, str):
        return value
    try:
        t = validation.parse_time(value).astimezone(UTC)
    except ValueError:
        return value
    fraction = f".{t.microsecond:06d}".rstrip("0") if t.microsecond else ""
    return errors.GoLiteral(t.strftime("%Y-%m-%d %H:%M:%S") + fraction + " +0000 UTC")


def _content(obj: Obj) -> Obj:
    """What generation tracks: everything but metadata and status (and the type fields)."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _sans_rv(obj: Obj) -> Obj:
    meta = dict(obj.get("metadata") or {})
    meta.pop("resourceVersion", None)
    return {**obj, "metadata": meta}


class ApiServer:
    def __init__(
        self,
        *,
        registry: Registry,
        store: Store,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        rand: random.Random | None = None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.clock = clock
        self.random = rand or random.Random()

    # -- helpers -------------------------------------------------------------------------------------

    def key(self, kind: Kind, namespace: str, name: str) -> ObjectKey:
        return (*kind.key, namespace if kind.namespaced else "", name)

    def _existing(self, kind: Kind, namespace: str, name: str) -> Obj:
        obj = self.store.get(self.key(kind, namespace, name))
        if obj is None:
            raise errors.not_found(kind.plural, kind.group, name)
        return obj

    def _service_account(self, namespace: str, name: str) -> Obj | None:
        return self.store.get(("", "serviceaccounts", namespace, name))

    def _default_storage_class(self) -> str | None:
        return persistentvolumes.default_class_name(self.store.items(("storage.k8s.io", "storageclasses")))

    def _check_namespace(self, kind: Kind, namespace: str, name: str) -> None:
        if not kind.namespaced:
            return
        ns = self.store.get(("", "namespaces", "", namespace))
        if ns is None:
            raise errors.not_found("namespaces", "", namespace)
        if (ns.get("metadata") or {}).get("deletionTimestamp"):
            err = errors.forbidden_error(
                kind.plural,
                kind.group,
                name,
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )
            # NamespaceLifecycle appends this cause to the Forbidden error (S12).
            (err.details or {})["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise err

    @staticmethod
    def _type_fields(api_version: str, kind_name: str, obj: Obj) -> Obj:
        return {
            "apiVersion": api_version,
            "kind": kind_name,
            **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")},
        }

    # -- create --------------------------------------------------------------------------------------

    def now_text(self) -> str:
        return format_time(self.clock())

    def create(
        self,
        kind: Kind,
        namespace: str,
        body: Any,
        *,
        field_validation: str = "Warn",
        dry_run: bool = False,
        manager: str = DEFAULT_MANAGER,
        managed: list[Obj] | None = None,
    ) -> Result:
        """Create; ``managed`` is the ``managedFields`` of an apply, else the write is an ``Update``."""
        if kind.is_custom:
            # The custom resource handler refuses before it reads the body.
            crdterminating.check_create(self.store, kind)
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        body, decode_warnings = decoding.decode_body(kind, body, field_validation=field_validation)
        meta = dict(body.get("metadata") or {})
        if kind.namespaced:
            body_ns = meta.get("namespace") or ""
            if body_ns and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        # Refused by the storage layer, i.e. after admission and validation (S10).
        rv_on_create = bool(meta.get("resourceVersion"))
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._generate_name(kind, namespace, meta["generateName"])
        for server_owned in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
        ):
            meta.pop(server_owned, None)
        meta["uid"] = str(uuid.UUID(int=self.random.getrandbits(128), version=4))
        meta["creationTimestamp"] = format_time(self.clock())
        if kind.generation:
            meta["generation"] = 1
        obj = self._type_fields(kind.api_version, kind.kind, {**body, "metadata": meta})
        if kind.status_subresource and kind.is_custom:
            obj.pop("status", None)
        # NamespaceLifecycle is the first admission plugin: it runs before defaulting and validation.
        self._check_namespace(kind, namespace, meta.get("name", ""))
        obj, warnings = admission.prepare_create(
            kind,
            obj,
            field_validation=field_validation,
            service_account=self._service_account,
            rand=self.random,
            default_class=self._default_storage_class,
        )
        warnings = decode_warnings + warnings
        obj = self.from_view(kind, obj)
        if kind.key == ("", "services"):
            # The Service REST storage allocates cluster IPs and node ports.
            obj = services.allocate(obj, *services.allocated(self.store.items(("", "services"))))
        name = obj["metadata"].get("name")
        if not isinstance(name, str) or not name:
            # Kinds that skip ObjectMeta validation (core Events) reach the storage key function nameless.
            raise errors.bad_request("Name parameter required.")
        key = self.key(kind, namespace, name)
        if rv_on_create and not dry_run:
            # storage.ErrResourceVersionSetOnCreate is a plain error: 500, reason Unknown (empty).
            raise errors.ApiError(500, "", "resourceVersion should not be set on objects to be created")
        existing = self.store.get(key)
        if existing is not None:
            terminating = bool((existing.get("metadata") or {}).get("deletionTimestamp"))
            raise errors.already_exists(kind.plural, kind.group, name, terminating=terminating)
        obj = self._track(kind, {}, obj, manager=manager, subresource=None, managed=managed)
        if dry_run:
            return Result(201, self.to_view(kind, obj), warnings)
        stored = self.store.put(key, obj)
        return Result(201, self.to_view(kind, stored), warnings)

    def _generate_name(self, kind: Kind, namespace: str, prefix: str) -> str:
        for _ in range(8):
            name = validation.generate_name(prefix, self.random)
            if self.store.get(self.key(kind, namespace, name)) is None:
                return name
        return name

    # -- get -----------------------------------------------------------------------------------------

    def get(self, kind: Kind, namespace: str, name: str) -> Obj:
        return self.to_view(kind, admission.read_defaults(kind, self._existing(kind, namespace, name)))

    # -- update --------------------------------------------------------------------------------------

    def update(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        body: Any,
        *,
        subresource: str | None = None,
        field_validation: str = "Warn",
        dry_run: bool = False,
        manager: str = DEFAULT_MANAGER,
    ) -> Result:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        body, decode_warnings = decoding.decode_body(kind, body, field_validation=field_validation)
        meta = body.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
            )
        if kind.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        existing = self.store.get(self.key(kind, namespace, name))
        if existing is None:
            if kind.create_on_update and subresource is None:
                created = self.create(
                    kind,
                    namespace,
                    # The storage layer clears a body resourceVersion when PUT creates.
                    {**body, "metadata": {**_sans_rv(body)["metadata"], "name": name}},
                    field_validation=field_validation,
                    dry_run=dry_run,
                    manager=manager,
                )
                created.warnings[:0] = decode_warnings
                return created
            raise errors.not_found(kind.plural, kind.group, name)
        rv = meta.get("resourceVersion") or ""
        if not rv and not kind.unconditional_update:
            # The generic store's error: qualified by the resource (not the Kind), the uint64 RV as 0.
            raise errors.invalid(
                kind.plural,
                kind.group,
                name,
                [
                    errors.invalid_value(
                        "metadata.resourceVersion", errors.GoLiteral("0"), "must be specified for an update"
                    )
                ],
            )
        self._preconditions(kind, existing, rv=rv, uid=meta.get("uid") or "")
        written = self._write(
            kind,
            existing,
            self.from_view(kind, body),
            subresource=subresource,
            field_validation=field_validation,
            dry_run=dry_run,
            manager=manager,
        )
        written.warnings[:0] = decode_warnings
        return written

    def check_preconditions(self, kind: Kind, existing: Obj, *, rv: str, uid: str) -> None:
        self._preconditions(kind, existing, rv=rv, uid=uid)

    def _preconditions(self, kind: Kind, existing: Obj, *, rv: str, uid: str) -> None:
        emeta = existing["metadata"]
        if uid and uid != emeta["uid"]:
            raise errors.conflict(
                kind.plural,
                kind.group,
                emeta["name"],
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {emeta['uid']}",
            )
        if rv and rv != emeta["resourceVersion"]:
            raise errors.conflict(kind.plural, kind.group, emeta["name"], errors.STALE)

    def _merge_for_write(self, kind: Kind, existing: Obj, body: Obj, subresource: str | None) -> Obj:
        """The object a write would store: the body, with server-owned and isolated parts kept."""
        emeta = existing["metadata"]
        bmeta = dict(body.get("metadata") or {})
        if subresource == "status":
            new: Obj = {k: v for k, v in existing.items() if k != "status"}
            if "status" in body:
                new["status"] = body["status"]
            meta = dict(emeta)
            if not kind.is_custom:
                # Legacy quirk of built-in status writes: labels and annotations do apply (S29);
                # the pod status strategy resets only spec, ownerReferences and deletionTimestamp.
                applied: tuple[str, ...] = ("labels", "annotations")
                if kind.group == "" and kind.plural == "pods":
                    applied += ("finalizers",)
                elif crdterminating.is_crd(kind):
                    # The CRD status strategy resets no metadata (ResetObjectMetaForStatus is given the
                    # new object twice): the CRD finalizer removes its finalizer through the status.
                    applied += ("finalizers", "ownerReferences")
                for field_name in applied:
                    if field_name in bmeta:
                        meta[field_name] = bmeta[field_name]
                    else:
                        meta.pop(field_name, None)
            new["metadata"] = meta
            return new
        new = {k: v for k, v in body.items() if k != "status"}
        if kind.status_subresource:
            if "status" in existing:
                new["status"] = existing["status"]
        elif "status" in body:
            new["status"] = body["status"]
        # rest.BeforeUpdate restores a stored deletionTimestamp and a removed deletionGracePeriodSeconds;
        # setting either on a live object, or changing the grace period, fails ValidateImmutableField (S43).
        immutable = [
            errors.invalid_value(f"metadata.{owned}", _go_bad_value(bmeta[owned]), "field is immutable")
            for owned in ("deletionTimestamp", "deletionGracePeriodSeconds")
            if (bmeta.get(owned) is not None and owned not in emeta)
            or (owned == "deletionGracePeriodSeconds" and bmeta.get(owned) not in (None, emeta.get(owned)))
        ]
        if immutable:
            raise errors.invalid(kind.kind, kind.group, emeta["name"], immutable)
        for owned in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "namespace",
            "name",
        ):
            if owned in emeta:
                bmeta[owned] = emeta[owned]
            else:
                bmeta.pop(owned, None)
        if "managedFields" not in bmeta and "managedFields" in emeta:
            bmeta["managedFields"] = emeta["managedFields"]
        bmeta.pop("selfLink", None)
        new["metadata"] = bmeta
        # spec.nodeName is set only through the binding subresource: a pod write that drops or changes
        # it is refused by the pod update validation (S59), not silently repaired.
        return self._type_fields(existing["apiVersion"], existing["kind"], new)

    def _write(
        self,
        kind: Kind,
        existing: Obj,
        body: Obj,
        *,
        subresource: str | None,
        field_validation: str,
        dry_run: bool = False,
        manager: str = DEFAULT_MANAGER,
        managed: list[Obj] | None = None,
    ) -> Result:
        new = self._merge_for_write(kind, existing, body, subresource)
        new, warnings = admission.prepare_update(kind, existing, new, field_validation=field_validation)
        new = self._track(kind, existing, new, manager=manager, subresource=subresource, managed=managed)
        emeta = existing["metadata"]
        meta = new["metadata"]
        if kind.generation and _content(new) != _content(existing):
            meta["generation"] = int(emeta.get("generation") or 0) + 1
        meta["resourceVersion"] = emeta["resourceVersion"]
        key = self.key(kind, emeta.get("namespace", ""), emeta["name"])
        if (
            emeta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and not emeta.get("deletionGracePeriodSeconds")
        ):
            # The last finalizer is gone: the write deletes the object instead of storing it (S42).
            if not dry_run:
                self.store.remove(key)
            return Result(200, self.to_view(kind, new), warnings)
        if new == existing or dry_run:
            return Result(200, self.to_view(kind, new if dry_run else existing), warnings)
        return Result(200, self.to_view(kind, self.store.put(key, new)), warnings)

    def write_applied(
        self,
        kind: Kind,
        existing: Obj,
        merged: Obj,
        managed: list[Obj],
        *,
        subresource: str | None,
        field_validation: str,
        dry_run: bool,
    ) -> Result:
        """Store the result of a server-side apply (``sim.applying``) with its ``managedFields``."""
        return self._write(
            kind,
            existing,
            self.from_view(kind, merged),
            subresource=subresource,
            field_validation=field_validation,
            dry_run=dry_run,
            managed=managed,
        )

    def _track(
        self,
        kind: Kind,
        old: Obj,
        new: Obj,
        *,
        manager: str,
        subresource: str | None,
        managed: list[Obj] | None,
    ) -> Obj:
        """``new`` with the ``managedFields`` this write leaves (``sim.managedfields``)."""
        if managed is None:
            try:
                managed = managedfields.after_update(
                    kind, old, new, manager=manager, subresource=subresource or "", now=self.now_text()
                )
            except errors.ApiError:
                # UpdateNoErrors: an object the field types cannot describe (a list item without its
                # key) is stored with its managedFields cleared, never refused for it.
                managed = []
        meta = {k: v for k, v in new["metadata"].items() if k != "managedFields"}
        if managed:
            meta["managedFields"] = managed
        return {**new, "metadata": meta}

    # -- patch ---------------------------------------------------------------------------------------

    def patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Any,
        content_type: str,
        *,
        subresource: str | None = None,
        field_validation: str = "Warn",
        dry_run: bool = False,
        manager: str = DEFAULT_MANAGER,
        force: bool = False,
    ) -> Result:
        # Upstream's order: built-ins list strategic merge before apply, CRs have no strategic merge.
        accepted = [JSON_PATCH, MERGE] + ([STRATEGIC] if kind.strategic_merge else []) + [APPLY]
        if content_type not in accepted:
            raise errors.unsupported_media_type(content_type, accepted)
        if content_type == APPLY:
            return applying.apply(
                self,
                kind,
                namespace,
                name,
                patch,
                manager=manager,
                force=force,
                subresource=subresource,
                field_validation=field_validation,
                dry_run=dry_run,
            )
        applying.check_patch_options(apply=False, manager=manager, force=force)
        existing = self._existing(kind, namespace, name)
        current = self.to_view(kind, admission.read_defaults(kind, existing))
        try:
            if content_type == MERGE:
                if not isinstance(patch, dict):
                    raise errors.bad_request("error decoding patch: the patch is not a JSON object")
                result = patches.merge_patch(current, patch)
            elif content_type == JSON_PATCH:
                result = patches.json_patch(current, patch)
            else:
                if not isinstance(patch, dict):
                    raise errors.bad_request("error decoding patch: the patch is not a JSON object")
                result = strategic.strategic_merge_patch(current, patch, kind.kind)
        except patches.PatchFailed as exc:
            raise errors.patch_rejected(str(exc)) from exc
        if not isinstance(result, dict):
            raise errors.bad_request("the patch did not produce a JSON object")
        # The patched object is decoded as a body would be (unknown fields, types), with the patch
        # handler's errors.
        result, decode_warnings = decoding.decode_patched(
            kind,
            result,
            field_validation=field_validation,
            strategic_patch=patch if content_type == STRATEGIC else None,
        )
        rmeta = result.get("metadata") or {}
        rv = rmeta.get("resourceVersion") or ""
        self._preconditions(kind, existing, rv=rv, uid=rmeta.get("uid") or "")
        # PATCH dedups ownerReferences only after mutating admission, with that warning's wording.
        deduped, dedup_warnings = validation.dedupe_owner_references(rmeta, after_mutating_admission=True)
        if dedup_warnings:
            result = {**result, "metadata": deduped}
        written = self._write(
            kind,
            existing,
            self.from_view(kind, result),
            subresource=subresource,
            field_validation=field_validation,
            dry_run=dry_run,
            manager=manager,
        )
        written.warnings[:0] = decode_warnings + dedup_warnings
        return written

    # -- delete --------------------------------------------------------------------------------------

    def delete(self, kind: Kind, namespace: str, name: str, options: Obj | None = None) -> Result:
        """DELETE with ``DeleteOptions``; under ``dryRun: [All]`` everything is checked and answered as
        it would be, and nothing is stored."""
        options = options or {}
        dry_run = deleteoptions.dry_run(options)
        existing = self._existing(kind, namespace, name)
        emeta = existing["metadata"]
        if crdterminating.is_crd(kind):
            crdterminating.check_preconditions(existing, options)
            if not emeta.get("deletionTimestamp"):
                # The first DELETE of a CRD marks it Terminating for the finalizer controller.
                new = crdterminating.marked(existing, self.now_text())
                stored = new if dry_run else self.store.put(self.key(kind, "", name), new)
                code = 202 if options.get("orphanDependents") is False else 200
                return Result(code, self.to_view(kind, stored))
        pre = options.get("preconditions") or {}
        # rest.BeforeDelete checks preconditions first and names the resource by its Kind, not its plural.
        if pre.get("uid") and pre["uid"] != emeta["uid"]:
            raise errors.conflict(
                kind.kind,
                kind.group,
                name,
                f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
                f"({emeta['uid']}). The object might have been deleted and then recreated",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != emeta["resourceVersion"]:
            raise errors.conflict(
                kind.kind,
                kind.group,
                name,
                f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not match the "
                f"ResourceVersion in record ({emeta['resourceVersion']}). "
                "The object might have been modified",
            )
        if kind.group == "" and kind.plural == "namespaces":
            return self._delete_namespace(kind, existing, dry_run=dry_run)
        key = self.key(kind, namespace, name)
        # 202 when orphanDependents=false and the object is not removed at once (the DELETE handler).
        code = 202 if options.get("orphanDependents") is False else 200
        graceful, pending, meta = self._before_delete(kind, existing, options)
        if pending:
            # Graceful deletion already under way and not shortened: nothing changes, not even finalizers.
            return Result(code, self.to_view(kind, existing))
        finalizers = self._gc_finalizers(list(emeta.get("finalizers") or []), options)
        if finalizers:
            meta["finalizers"] = finalizers
        else:
            meta.pop("finalizers", None)
        if not graceful:
            if not finalizers:
                return self._remove(kind, key, existing, dry_run=dry_run)
            # markAsDeleting: deletionTimestamp now (kept when already earlier), grace period 0.
            now = self.clock()
            if not emeta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = format_time(now)
                if emeta.get("generation"):
                    meta["generation"] = int(emeta["generation"]) + 1
            elif _parse_time(emeta["deletionTimestamp"]) > now:
                meta["deletionTimestamp"] = format_time(now)
            meta["deletionGracePeriodSeconds"] = 0
        new = {**existing, "metadata": meta}
        # A dry run answers the object it would store, at the stored version.
        stored = new if dry_run or new == existing else self.store.put(key, new)
        if graceful and not finalizers and not meta.get("deletionGracePeriodSeconds"):
            # A graceful kind deleted with grace 0 is first updated (deletionTimestamp, generation: a
            # MODIFIED event), then removed; the answer is that last state.
            return self._remove(kind, key, stored, dry_run=dry_run)
        return Result(code, self.to_view(kind, stored))

    def _before_delete(self, kind: Kind, existing: Obj, options: Obj) -> tuple[bool, bool, Obj]:
        """``rest.BeforeDelete``: (graceful, graceful deletion pending, the metadata to store)."""
        emeta = existing["metadata"]
        meta = dict(emeta)
        if not kind.graceful:
            return False, False, meta
        requested = options.get("gracePeriodSeconds")
        if requested is not None and int(requested) < 0:
            requested = 1  # negative values are treated as 1s on the delete path
        if emeta.get("deletionTimestamp"):
            current = int(emeta.get("deletionGracePeriodSeconds") or 0)
            if current == 0:
                return False, False, meta
            if requested is None or int(requested) >= current:
                return False, True, meta  # a later DELETE may only shorten the grace period (S39)
            start = _parse_time(emeta["deletionTimestamp"]) - timedelta(seconds=current)
            meta["deletionTimestamp"] = format_time(start + timedelta(seconds=int(requested)))
            meta["deletionGracePeriodSeconds"] = int(requested)
            return True, False, meta
        grace = self._grace(kind, existing, {**options, "gracePeriodSeconds": requested})
        meta["deletionTimestamp"] = format_time(self.clock() + timedelta(seconds=grace))
        meta["deletionGracePeriodSeconds"] = grace
        if emeta.get("generation"):
            meta["generation"] = int(emeta["generation"]) + 1
        return True, False, meta

    @staticmethod
    def _gc_finalizers(finalizers: list[str], options: Obj) -> list[str]:
        """``deletionFinalizersForGarbageCollection``: the finalizers after applying the delete's policy."""
        orphan_dependents = options.get("orphanDependents")
        policy = options.get("propagationPolicy")
        if orphan_dependents is not None:
            orphan, foreground = bool(orphan_dependents), False
        elif policy in ("Orphan", "Background", "Foreground"):
            orphan, foreground = policy == "Orphan", policy == "Foreground"
        else:
            orphan, foreground = ORPHAN in finalizers, FOREGROUND in finalizers
        new = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
        new += [ORPHAN] if orphan else []
        new += [FOREGROUND] if foreground else []
        return finalizers if set(new) == set(finalizers) else new

    def _remove(self, kind: Kind, key: ObjectKey, existing: Obj, *, dry_run: bool = False) -> Result:
        if not dry_run:
            self.store.remove(key)
        if kind.delete_returns_object:
            return Result(200, self.to_view(kind, existing))
        emeta = existing["metadata"]
        details: Obj = {"name": emeta["name"]}
        if kind.group:
            details["group"] = kind.group
        details["kind"] = kind.plural
        details["uid"] = emeta["uid"]
        return Result(
            200,
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details},
        )

    def _grace(self, kind: Kind, existing: Obj, options: Obj) -> int:
        if not kind.graceful:
            return 0
        spec = existing.get("spec") or {}
        status = existing.get("status") or {}
        requested = options.get("gracePeriodSeconds")
        grace = (
            int(requested) if requested is not None else int(spec.get("terminationGracePeriodSeconds", 30))
        )
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        if grace < 0:
            return 1
        return grace

    def _delete_namespace(self, kind: Kind, existing: Obj, *, dry_run: bool) -> Result:
        emeta = existing["metadata"]
        if emeta.get("deletionTimestamp"):
            return Result(200, self.to_view(kind, existing))
        meta = {**emeta, "deletionTimestamp": format_time(self.clock()), "deletionGracePeriodSeconds": 0}
        status = {**(existing.get("status") or {}), "phase": "Terminating"}
        new = {**existing, "metadata": meta, "status": status}
        stored = new if dry_run else self.store.put(self.key(kind, "", emeta["name"]), new)
        return Result(200, self.to_view(kind, stored))

    def finalize_namespace(self, name: str) -> None:
        """The namespace controller's last step: the emptied, terminating namespace goes away."""
        key: ObjectKey = ("", "namespaces", "", name)
        if self.store.get(key) is not None:
            self.store.remove(key)

    # -- pods/binding --------------------------------------------------------------------------------

    def bind(self, namespace: str, name: str, body: Any) -> Result:
        kind = self.registry.get("", "v1", "pods")
        assert kind is not None
        existing = self._existing(kind, namespace, name)
        target = ((body or {}).get("target") or {}).get("name") if isinstance(body, dict) else None
        if not target:
            raise errors.invalid("Binding", "", name, [errors.required("target.name")])
        spec = existing.get("spec") or {}
        # Upstream checks deletion first (setPodNodeAndMetadata).
        if (existing.get("metadata") or {}).get("deletionTimestamp"):
            raise errors.conflict(
                "pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned to a host"
            )
        if spec.get("nodeName"):
            raise errors.conflict(
                "pods/binding", "", name, f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            )
        status = dict(existing.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": format_time(self.clock()),
            }
        )
        status["conditions"] = conditions
        new = {**existing, "spec": {**spec, "nodeName": target}, "status": status}
        self.store.put(self.key(kind, namespace, name), new)
        return Result(
            201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        )

    # -- views ---------------------------------------------------------------------------------------

    def to_view(self, kind: Kind, obj: Obj) -> Obj:
        """The object as this kind's API version presents it (events.k8s.io is a view of core Events)."""
        if kind.storage and kind.group == "events.k8s.io":
            return builtins.core_to_events_v1(obj)
        return obj

    def from_view(self, kind: Kind, obj: Obj) -> Obj:
        if kind.storage and kind.group == "events.k8s.io":
            return builtins.events_v1_to_core(obj)
        return obj
