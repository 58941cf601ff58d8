"""Snapshots: what one decision reads, gathered from the projection, the effect results and the clock.

``build(view, ref, settings)`` gives the ``statemachines.snapshots.Snapshot`` of one object key. It reads
nothing but its arguments, so the same journal prefix always gives the same snapshot (replay depends on
it). What each kind's snapshot holds is what its machine's module docstring asks for:

* AutoscalingRunnerSet: ``related["ers"]`` (the EphemeralRunnerSet of the same name, else the one it
  owns), ``related["listener"]`` (the AutoscalingListener whose spec names the ARS, preferring the
  computed name), and one entry per ``actions.github.com/cleanup-*`` annotation, keyed by the annotation;
* EphemeralRunnerSet: ``children`` (the EphemeralRunners it owns) and ``related["proxy_secret"]``;
* EphemeralRunner: ``related["pod"]`` and ``related["secret"]``: same namespace and name, and owned by the
  runner's uid (the projection's owner index); an object of that name another owner holds (a predecessor's
  of the same name, not yet gone) is ``related["other_pod"]`` / ``related["other_secret"]`` instead;
* AutoscalingListener: ``"ars"``, ``"service_account"``, ``"role"``, ``"role_binding"``,
  ``"config_secret"``, ``"proxy_secret"``, ``"pod"`` and ``"credentials_secret"``.

``results`` are the latest ``effect_result`` body per effect key recorded for the subject, plus the
record's ``at`` (``statemachines.outcomes``), and only those recorded for the object the subject is now
(its uid): a result of an earlier object of the same name is never read as this one's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from controller import lookups
from statemachines import autoscalinglisteners as al
from statemachines import autoscalingrunnersets as ars
from statemachines import (
    desired,
    effects,
    ephemeralrunners,
    ephemeralrunnersets,
    listenerobjects,
    naming,
    outcomes,
    runners,
)
from statemachines.effects import ObjectRef
from statemachines.jsonvalues import JsonObject, as_mapping, section
from statemachines.kinds import AL, ARS, ER, ERS
from statemachines.snapshots import Settings, Snapshot
from store.projection import Projection
from store.records import Record, RecordType

Related = dict[str, JsonObject | None]

# The kinds a machine decides about, in the order a restart enqueues them.
DECIDED: tuple[str, ...] = (ARS, ERS, ER, AL)


def meta(obj: JsonObject | None) -> JsonObject:
    return section(obj, "metadata")


def uid(obj: JsonObject | None) -> str:
    return str(meta(obj).get("uid") or "")


class Results:
    """The latest effect result per subject and effect key, folded from ``effect_result`` records.

    A result is kept under the record's kind, namespace and name (the subject of the decision whose effect
    it answers) with the record's uid (the subject's uid then). ``forget`` drops a subject's results once
    it is gone; ``forget_runner`` drops what a set holds about one of its runners once that runner is gone
    (a long-lived set would otherwise keep a result per runner it ever made); ``for_subject`` only hands
    out those of the uid asked for.
    """

    def __init__(self) -> None:
        self._by_subject: dict[ObjectRef, dict[str, tuple[str, JsonObject]]] = {}

    def apply(self, record: Record) -> None:
        if record.type is not RecordType.EFFECT_RESULT:
            return
        key = record.body.get("key")
        if not isinstance(key, str):
            return
        subject = ObjectRef(record.kind, record.namespace, record.name)
        body = {**record.body, "at": record.at}
        self._by_subject.setdefault(subject, {})[key] = (record.uid, body)

    def forget(self, subject: ObjectRef) -> None:
        self._by_subject.pop(subject, None)

    def forget_runner(self, runner: JsonObject) -> None:
        """Drop the results its EphemeralRunnerSet holds about ``runner`` (the last observed object of a
        runner now gone): its create's, unless the API server refused it, and its registration's release.

        The set's decisions read a create's result only for a refusal (``refusals``: its next runners
        may be created under the same name) and a release's only for a runner it owns now (the key names
        the registration), so no decision reads what is dropped.
        """
        runner_meta = meta(runner)
        namespace, name = str(runner_meta.get("namespace") or ""), str(runner_meta.get("name") or "")
        for owner in runner_meta.get("ownerReferences") or ():
            if not isinstance(owner, Mapping) or owner.get("kind") != ERS:
                continue
            held = self._by_subject.get(ObjectRef(ERS, namespace, str(owner.get("name") or "")))
            if not held:
                continue
            target = ObjectRef(ER, namespace, name)
            create = effects.CreateObject(target, {}).key
            created = held.get(create)
            if created is not None and created[1].get("error") != outcomes.Failure.INVALID:
                del held[create]
            held.pop(effects.release_key(target, runners.runner_id(runner)), None)

    def for_subject(self, subject: ObjectRef, subject_uid: str) -> dict[str, JsonObject]:
        found = self._by_subject.get(subject, {})
        return {
            key: body for key, (of, body) in found.items() if not (of and subject_uid) or of == subject_uid
        }

    def __len__(self) -> int:
        return sum(len(results) for results in self._by_subject.values())


@dataclass(frozen=True)
class View:
    """What a snapshot is built from: the projection, the results and the journal's clock, all as of the
    same record (``seq``)."""

    projection: Projection
    results: Results
    now: datetime
    seq: int


def build(view: View, ref: ObjectRef, settings: Settings) -> Snapshot:
    """The snapshot of ``ref`` (one of the ``DECIDED`` kinds)."""
    projection = view.projection
    obj = projection.get(ref.kind, ref.namespace, ref.name)
    related, children = BUILDERS[ref.kind](projection, ref, obj, settings)
    return Snapshot(
        subject=ref,
        obj=obj,
        now=view.now,
        settings=settings,
        related=related,
        children=children,
        results=view.results.for_subject(ref, uid(obj)) if obj is not None else {},
    )


Builder = Callable[
    [Projection, ObjectRef, JsonObject | None, Settings], tuple[Related, tuple[JsonObject, ...]]
]


def _children(projection: Projection, owner: JsonObject | None, kind: str) -> list[JsonObject]:
    owner_uid = uid(owner)
    if not owner_uid:
        return []
    found = (projection.get(*key) for key in projection.children(owner_uid) if key[0] == kind)
    return [obj for obj in found if obj is not None]


def listeners_of(projection: Projection, namespace: str, name: str) -> list[JsonObject]:
    """Every AutoscalingListener whose spec names the AutoscalingRunnerSet ``namespace/name``."""
    return projection.find(lookups.LISTENERS_BY_SCALE_SET, (namespace, name))


def _runner_set_of(projection: Projection, ref: ObjectRef, obj: JsonObject | None) -> JsonObject | None:
    same_name = projection.get(ERS, ref.namespace, ref.name)
    if same_name is not None:
        return same_name
    owned = _children(projection, obj, ERS)
    return owned[0] if owned else None


def _listener_of(
    projection: Projection, ref: ObjectRef, obj: JsonObject | None, settings: Settings
) -> JsonObject | None:
    found = listeners_of(projection, ref.namespace, ref.name)
    if not found or obj is None:
        return found[0] if found else None
    wanted = desired.listener_ref(obj, settings)
    named = [
        x for x in found if (meta(x).get("namespace"), meta(x).get("name")) == (wanted.namespace, wanted.name)
    ]
    return (named or found)[0]


def _ars(
    projection: Projection, ref: ObjectRef, obj: JsonObject | None, settings: Settings
) -> tuple[Related, tuple[JsonObject, ...]]:
    related: Related = {
        ars.ERS: _runner_set_of(projection, ref, obj),
        ars.LISTENER: _listener_of(projection, ref, obj, settings),
    }
    annotations = as_mapping(meta(obj).get("annotations"))
    for annotation, kind in ars.DEPENDENTS:
        name = annotations.get(annotation)
        if isinstance(name, str) and name:
            related[annotation] = projection.get(kind, ref.namespace, name)
    return related, ()


def _ers(
    projection: Projection, ref: ObjectRef, obj: JsonObject | None, settings: Settings
) -> tuple[Related, tuple[JsonObject, ...]]:
    secret = naming.runner_set_proxy_secret_name(ref.name, ref.namespace)
    related: Related = {ephemeralrunnersets.PROXY_SECRET: projection.get("Secret", ref.namespace, secret)}
    return related, tuple(_children(projection, obj, ER))


def _er(
    projection: Projection, ref: ObjectRef, obj: JsonObject | None, settings: Settings
) -> tuple[Related, tuple[JsonObject, ...]]:
    owned = set(projection.children(uid(obj))) if uid(obj) else set()
    related: Related = {}
    for kind, own, other in (
        ("Pod", ephemeralrunners.POD, ephemeralrunners.OTHER_POD),
        ("Secret", ephemeralrunners.SECRET, ephemeralrunners.OTHER_SECRET),
    ):
        found = projection.get(kind, ref.namespace, ref.name)
        mine = (kind, ref.namespace, ref.name) in owned
        related[own], related[other] = (found, None) if mine else (None, found)
    return related, ()


def _al(
    projection: Projection, ref: ObjectRef, obj: JsonObject | None, settings: Settings
) -> tuple[Related, tuple[JsonObject, ...]]:
    listener = obj or {}
    spec = listenerobjects.spec(listener)
    ars_ns = listenerobjects.ars_namespace(listener)
    config = listenerobjects.config_secret_ref(listener) if obj is not None else None
    proxy = listenerobjects.proxy_secret_ref(listener) if obj is not None else None
    credentials = str(spec.get("githubConfigSecret") or "")
    related: Related = {
        al.ARS: projection.get(ARS, ars_ns, str(spec.get("autoscalingRunnerSetName") or "")),
        al.SERVICE_ACCOUNT: projection.get("ServiceAccount", ref.namespace, ref.name),
        al.ROLE: projection.get("Role", ars_ns, ref.name),
        al.ROLE_BINDING: projection.get("RoleBinding", ars_ns, ref.name),
        al.CONFIG_SECRET: projection.get("Secret", config.namespace, config.name) if config else None,
        al.PROXY_SECRET: projection.get("Secret", proxy.namespace, proxy.name) if proxy else None,
        al.POD: projection.get("Pod", ref.namespace, ref.name),
        al.CREDENTIALS_SECRET: projection.get("Secret", ars_ns, credentials) if credentials else None,
    }
    return related, ()


BUILDERS: dict[str, Builder] = {ARS: _ars, ERS: _ers, ER: _er, AL: _al}
