"""An EphemeralRunnerSet's runners: how it classifies them and how it builds a new one (§1.3, §2.2, §4.4).

``classify`` is upstream's ``newEphemeralRunnersByStates`` against the applied revision (seed C4): a
deleting runner is only ``deleting``; an Outdated runner built before the applied revision is
``stale_outdated`` (deleted and replaced), one built at or after it is ``outdated`` (holds the set
Outdated). Every group is oldest first (creationTimestamp, then name), whatever order the projection
listed the children in, so the decisions built from it replay exactly.

``new_runner`` builds the body of a runner from its set. Its name is deterministic (no ``generateName``):
``<set name>-runner-<5 characters>``, the suffix an FNV-1a hash of ``<set uid>/<set generation>/<n>`` in
upstream's vowel-free alphabet, with ``n`` counting up from 0 past every name already taken (existing
children, deleting ones included, and names picked earlier in the same decision). The generation moves
with every spec write (each new listener target or patch id), so one scaling intent always yields the
same names: a decision taken again before its creations are observed asks for the same runners, and
AlreadyExists stops them being created twice. The price: within one generation, the name of a runner
that is completely gone can be handed out again (the EphemeralRunner machine copes with a leftover
registration of that name: RunnerExists → GetRunnerByName → RemoveRunner → retry).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from statemachines import kinds, naming, pods
from statemachines.jsonvalues import JsonObject, as_int, as_strings, section
from statemachines.objects import OwnerReference, meta_of
from statemachines.phases import ErPhase

RUNNER_KIND = "EphemeralRunner"
SET_KIND = "EphemeralRunnerSet"
COMPONENT_RUNNER = "runner"

_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_INT64 = 2**63
_EPOCH = datetime.min.replace(tzinfo=UTC)
_SUFFIX_LENGTH = 5
_MAX_GENERATED_PREFIX = 58  # the API server's cut for generateName prefixes, kept for the same lengths


def _parse_int(value: object) -> int | None:
    """Go's strconv parse of a decimal annotation: an optional sign and digits, within int64."""
    if not isinstance(value, str) or not _INTEGER.match(value):
        return None
    number = int(value)
    return number if -_INT64 <= number < _INT64 else None


def name_of(runner: JsonObject) -> str:
    return str(section(runner, "metadata").get("name") or "")


def uid_of(runner: JsonObject) -> str:
    return str(section(runner, "metadata").get("uid") or "")


def annotation(runner: JsonObject, key: str) -> object:
    annotations = section(runner, "metadata").get("annotations")
    return annotations.get(key) if isinstance(annotations, Mapping) else None


def revision(runner: JsonObject) -> int:
    """The runner-spec revision a runner was built from; 0 when the annotation is missing or invalid."""
    return _parse_int(annotation(runner, naming.ANNOTATION_ACTIONABLE_REVISION)) or 0


def patch_id(runner: JsonObject) -> int | None:
    """The listener patch a runner was created for; None when the annotation is missing or invalid."""
    return _parse_int(annotation(runner, naming.ANNOTATION_PATCH_ID))


def runner_id(runner: JsonObject) -> int:
    """The Actions service's id for the runner; 0 until it registered."""
    value = section(runner, "status").get("runnerId")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def job_id(runner: JsonObject) -> str:
    """The job the listener recorded on the runner, "" for none.

    A job recorded for another runner id (``status.jobRunnerId`` set and not ``status.runnerId``) is not
    this runner's: a runner name is reused once its runner is gone, and a job read late by a listener
    must not mark the new runner busy for good. A job without ``jobRunnerId`` (written by upstream's
    listener, or where the schema prunes the field) is taken as upstream takes it.
    """
    status = section(runner, "status")
    job = status.get("jobId")
    if not job or has_foreign_job(runner):
        return ""
    return str(job)


def has_foreign_job(runner: JsonObject) -> bool:
    """The status holds a job recorded for a runner id other than the runner's own."""
    ran_on = section(runner, "status").get("jobRunnerId")
    if not isinstance(ran_on, int) or isinstance(ran_on, bool):
        return False
    return bool(section(runner, "status").get("jobId")) and ran_on != runner_id(runner)


def has_job(runner: JsonObject) -> bool:
    """Upstream's ``HasJob``: the listener recorded a job id on the runner (one of its own, ``job_id``)."""
    return bool(job_id(runner))


def is_deleting(runner: JsonObject) -> bool:
    return pods.is_terminating(runner)


def phase(runner: JsonObject) -> ErPhase:
    return ErPhase.of(section(runner, "status").get("phase"))


def created_at(runner: JsonObject) -> datetime:
    return pods.parse_time(section(runner, "metadata").get("creationTimestamp")) or _EPOCH


def oldest_first(runners: Iterable[JsonObject]) -> tuple[JsonObject, ...]:
    return tuple(sorted(runners, key=lambda r: (created_at(r), name_of(r))))


@dataclass(frozen=True)
class RunnersByState:
    """The children of one set, grouped. Groups are tuples: nothing can append into one of them."""

    pending: tuple[JsonObject, ...] = ()
    running: tuple[JsonObject, ...] = ()
    finished: tuple[JsonObject, ...] = ()
    failed: tuple[JsonObject, ...] = ()
    outdated: tuple[JsonObject, ...] = ()
    stale_outdated: tuple[JsonObject, ...] = ()
    deleting: tuple[JsonObject, ...] = ()
    latest_patch_id: int = 0

    @property
    def scale_total(self) -> int:
        """The runners that count against ``replicas``: pending, running and failed."""
        return len(self.pending) + len(self.running) + len(self.failed)

    def terminated(self) -> list[JsonObject]:
        """A new list of finished ++ failed ++ outdated ++ stale outdated runners (seed C4)."""
        return [*self.finished, *self.failed, *self.outdated, *self.stale_outdated]


_GROUP_OF_PHASE = {
    ErPhase.RUNNING: "running",
    ErPhase.SUCCEEDED: "finished",
    ErPhase.FAILED: "failed",
}


def classify(
    children: Iterable[JsonObject], applied_revision: int, *, released: Collection[str] = ()
) -> RunnersByState:
    """``newEphemeralRunnersByStates``: group ``children`` against ``applied_revision``.

    ``released`` names runners a ``ReleaseRunner`` result says were deleted although the deletion has not
    been observed yet; they count as deleting.
    """
    groups: dict[str, list[JsonObject]] = {
        "pending": [],
        "running": [],
        "finished": [],
        "failed": [],
        "outdated": [],
        "stale_outdated": [],
        "deleting": [],
    }
    latest = 0
    for runner in oldest_first(children):
        latest = max(latest, patch_id(runner) or 0)
        if is_deleting(runner) or name_of(runner) in released:
            groups["deleting"].append(runner)
        elif phase(runner) is ErPhase.OUTDATED:
            stale = revision(runner) < applied_revision
            groups["stale_outdated" if stale else "outdated"].append(runner)
        else:
            groups[_GROUP_OF_PHASE.get(phase(runner), "pending")].append(runner)
    return RunnersByState(
        pending=tuple(groups["pending"]),
        running=tuple(groups["running"]),
        finished=tuple(groups["finished"]),
        failed=tuple(groups["failed"]),
        outdated=tuple(groups["outdated"]),
        stale_outdated=tuple(groups["stale_outdated"]),
        deleting=tuple(groups["deleting"]),
        latest_patch_id=latest,
    )


# -- new runners -----------------------------------------------------------------------------------------


def _suffix(seed: str) -> str:
    value = naming.fnv32a(seed)
    out = []
    for _ in range(_SUFFIX_LENGTH):
        value, digit = divmod(value, len(naming.SAFE_ALPHABET))
        out.append(naming.SAFE_ALPHABET[digit])
    return "".join(out)


def runner_names(runner_set: JsonObject, count: int, taken: Collection[str]) -> list[str]:
    """``count`` new runner names for ``runner_set``, none of them in ``taken`` (see the module doc)."""
    meta = section(runner_set, "metadata")
    prefix = f"{meta.get('name', '')}-runner-"[:_MAX_GENERATED_PREFIX]
    seed = f"{meta.get('uid', '')}/{meta.get('generation', 0)}"
    names: list[str] = []
    ordinal = 0
    while len(names) < count:
        name = prefix + _suffix(f"{seed}/{ordinal}")
        ordinal += 1
        if name not in taken and name not in names:
            names.append(name)
    return names


def owner_reference(obj: JsonObject, kind: str) -> OwnerReference:
    """The controller ownerReference ``SetControllerReference`` writes for ``obj``."""
    meta = meta_of(obj)
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": kind,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def built_revision(runner_set: JsonObject) -> int:
    """The runner-spec revision a new runner of ``runner_set`` is built at: ``spec.actionableRevision``,
    but never below ``status.appliedActionableRevision``.

    A set scales only once its spec revision is applied, so the two are equal there, unless a write from
    outside lowered the spec's. A lower one names nothing newer: the runner spec is the applied one. A
    runner stamped below the applied revision would be stale as soon as it was made, and a stale
    Outdated runner is deleted and replaced where a current one parks the set: runners that reject the
    spec would be made again and again (the churn C7 removed).
    """
    spec_revision = as_int(section(runner_set, "spec").get("actionableRevision"))
    return max(spec_revision, as_int(section(runner_set, "status").get("appliedActionableRevision")))


def new_runner(
    runner_set: JsonObject,
    name: str,
    *,
    proxy_secret_name: str = "",
    exclude_label_prefixes: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Upstream's ``newEphemeralRunner`` with a given name: labels, annotations (§1.3), owner, finalizers.

    The labels drop every key that starts with one of ``exclude_label_prefixes``
    (``--exclude-label-propagation-prefix``), ``ephemeralRunnerMetadata`` labels included; annotations are
    not filtered, as upstream filters none. The revision annotation is ``built_revision``. The spec is the
    set's ``ephemeralRunnerSpec`` (shared, never mutated), plus ``proxySecretRef`` when the set has a proxy.
    """
    meta = section(runner_set, "metadata")
    spec = runner_set.get("spec") or {}
    template_meta = spec.get("ephemeralRunnerMetadata") or {}
    own = {**as_strings(meta.get("labels")), naming.LABEL_COMPONENT: COMPONENT_RUNNER}
    labels = (
        naming.filter_and_merge_labels(as_strings(template_meta.get("labels")), own, exclude_label_prefixes)
        or {}
    )
    annotations = {
        **as_strings(template_meta.get("annotations")),
        **as_strings(meta.get("annotations")),
        naming.ANNOTATION_PATCH_ID: str(spec.get("patchID") or 0),
        naming.ANNOTATION_ACTIONABLE_REVISION: str(built_revision(runner_set)),
    }
    runner_spec = dict(spec.get("ephemeralRunnerSpec") or {})
    if proxy_secret_name:
        runner_spec["proxySecretRef"] = proxy_secret_name
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": RUNNER_KIND,
        "metadata": {
            "name": name,
            "namespace": meta.get("namespace", ""),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(runner_set, SET_KIND)],
            "finalizers": [naming.FINALIZER_EPHEMERAL_RUNNER, naming.FINALIZER_RUNNER_REGISTRATION],
        },
        "spec": runner_spec,
    }
