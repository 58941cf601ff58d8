"""The objects an AutoscalingRunnerSet wants to exist: its EphemeralRunnerSet and its AutoscalingListener.

Pure builders from the observed ARS (and the controller settings) to plain JSON bodies, following
upstream's ``newEphemeralRunnerSet`` and ``newAutoscalingListener`` (spec §1.2, §1.4). The ARS machine
creates these bodies when the objects are missing; the functions at the end of this module say how far
an observed object is from its desired body (drift checks and the merge patches that close the gap),
always semantically (§4.12, hazards 3 and 4 of §8), never by deep-copying and diffing the object.

Two departures from upstream, both [R] in the spec: the EphemeralRunnerSet carries no
``integrity-hash`` annotation (C3), and the listener is always built with the configured image pull
secrets, so the created listener and the one compared against it agree (§8 item 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statemachines import kinds, memos, naming, patches, runners, semantics
from statemachines.effects import ObjectRef
from statemachines.jsonvalues import JsonObject, as_mapping, as_strings, section
from statemachines.objects import OwnerReference
from statemachines.snapshots import Settings

KIND_ARS = kinds.ARS
KIND_ERS = kinds.ERS
KIND_LISTENER = kinds.AL

PART_OF = "gha-runner-scale-set"
COMPONENT_RUNNER_SET = "runner-set"
COMPONENT_LISTENER = "runner-scale-set-listener"
MAX_RUNNERS_UNBOUNDED = 2147483647
# spec.actionableRevision of a new EphemeralRunnerSet (§4.13 item 8: [R] 1).
INITIAL_ACTIONABLE_REVISION = 1


# Desired bodies and drift checks kept per observed object (``memos``): the callers only read them.
REMEMBERED = 1024


class BuildError(ValueError):
    """The ARS cannot be turned into its children: no usable scale set id, or an unusable config URL."""


def _str_map(value: object) -> dict[str, str] | None:
    """A labels/annotations map as strings; None when absent (Go's nil map)."""
    if not isinstance(value, Mapping):
        return None
    return {str(k): str(v) for k, v in value.items()}


def _compact(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that are set (Go's ``omitempty`` on pointers)."""
    return {k: v for k, v in fields.items() if v is not None}


def scale_set_id(ars: JsonObject) -> int | None:
    """The ``runner-scale-set-id`` annotation as a number; None when it is missing or unparsable."""
    annotations = as_mapping(as_mapping(ars.get("metadata")).get("annotations"))
    try:
        return int(str(annotations.get(naming.ANNOTATION_RUNNER_SCALE_SET_ID, "")).strip())
    except ValueError:
        return None


def _url_labels(ars: JsonObject) -> dict[str, str]:
    url = str(as_mapping(ars.get("spec")).get("githubConfigUrl") or "")
    try:
        return naming.url_labels(url)
    except naming.InvalidConfigUrl as exc:
        raise BuildError(f"spec.githubConfigUrl: {exc}") from exc


def _labels(ars: JsonObject, overlay: dict[str, str], settings: Settings) -> dict[str, str]:
    """The ARS labels (minus excluded prefixes) with ``overlay`` on top, then the URL labels."""
    labels = naming.filter_and_merge_labels(
        _str_map(as_mapping(ars.get("metadata")).get("labels")), overlay, settings.exclude_label_prefixes
    )
    return {**(labels or {}), **_url_labels(ars)}


def _overlay(ars: JsonObject, component: str) -> dict[str, str]:
    meta = as_mapping(ars.get("metadata"))
    return {
        naming.LABEL_PART_OF: PART_OF,
        naming.LABEL_COMPONENT: component,
        naming.LABEL_VERSION: str(as_mapping(meta.get("labels")).get(naming.LABEL_VERSION, "")),
        naming.LABEL_SCALE_SET_NAME: naming.name_label(str(meta.get("name", ""))),
        naming.LABEL_SCALE_SET_NAMESPACE: str(meta.get("namespace", "")),
    }


def _with_user_metadata(
    user: object, labels: dict[str, str], annotations: dict[str, str], settings: Settings
) -> tuple[dict[str, str], dict[str, str]]:
    """User-supplied ResourceMeta as the base; the computed keys win (§1.2 item 4, §1.4 item 4)."""
    if not isinstance(user, Mapping):
        return labels, annotations
    merged_labels = naming.filter_and_merge_labels(
        _str_map(user.get("labels")), labels, settings.exclude_label_prefixes
    )
    merged_annotations = naming.merge_annotations(_str_map(user.get("annotations")), annotations)
    return merged_labels or {}, merged_annotations or {}


def owner_reference(ars: JsonObject) -> OwnerReference:
    return runners.owner_reference(ars, KIND_ARS)


def runner_spec(ars: JsonObject, scale_set: int) -> dict[str, Any]:
    """The EphemeralRunnerSpec every runner of the set is built from (the pod template is inline)."""
    spec = as_mapping(ars.get("spec"))
    template = as_mapping(spec.get("template"))
    return _compact(
        {
            "githubConfigUrl": spec.get("githubConfigUrl", ""),
            "githubConfigSecret": spec.get("githubConfigSecret", ""),
            "runnerScaleSetId": scale_set,
            "proxy": spec.get("proxy"),
            "githubServerTLS": spec.get("githubServerTLS"),
            "vaultConfig": spec.get("vaultConfig"),
            "ephemeralRunnerConfigSecretMetadata": spec.get("ephemeralRunnerConfigSecretMetadata"),
            "metadata": template.get("metadata"),
            "spec": template.get("spec"),
        }
    )


@memos.by_identity(REMEMBERED)
def ephemeral_runner_set(ars: JsonObject, settings: Settings) -> dict[str, Any]:
    """``newEphemeralRunnerSet``: same name and namespace as the ARS, owned by it, replicas 0, patchID 0.

    ``spec.actionableRevision`` is set to the initial revision; a caller comparing with an existing set
    ignores it. Raises ``BuildError`` when the ARS has no scale set id or its config URL is unusable.
    """
    scale_set = scale_set_id(ars)
    if scale_set is None:
        raise BuildError(f"annotation {naming.ANNOTATION_RUNNER_SCALE_SET_ID} is missing or not a number")
    meta = as_mapping(ars.get("metadata"))
    spec = as_mapping(ars.get("spec"))
    ars_annotations = as_mapping(meta.get("annotations"))
    labels = _labels(ars, _overlay(ars, COMPONENT_RUNNER_SET), settings)
    annotations = {
        key: str(ars_annotations.get(key, ""))
        for key in (naming.ANNOTATION_RUNNER_GROUP_NAME, naming.ANNOTATION_RUNNER_SCALE_SET_NAME)
    }
    labels, annotations = _with_user_metadata(
        spec.get("ephemeralRunnerSetMetadata"), labels, annotations, settings
    )
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": KIND_ERS,
        "metadata": {
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(ars)],
        },
        "spec": _compact(
            {
                "replicas": 0,
                "patchID": 0,
                "ephemeralRunnerSpec": runner_spec(ars, scale_set),
                "ephemeralRunnerMetadata": spec.get("ephemeralRunnerMetadata"),
                "actionableRevision": INITIAL_ACTIONABLE_REVISION,
            }
        ),
    }


def listener_ref(ars: JsonObject, settings: Settings) -> ObjectRef:
    """Where the listener of ``ars`` lives: the controller namespace, under a name hashing group and URL."""
    meta = as_mapping(ars.get("metadata"))
    spec = as_mapping(ars.get("spec"))
    name = naming.listener_name(
        str(meta.get("name", "")),
        str(meta.get("namespace", "")),
        str(spec.get("runnerGroup") or ""),
        str(spec.get("githubConfigUrl") or ""),
    )
    return ObjectRef(KIND_LISTENER, settings.controller_namespace, name)


def listener_spec(ars: JsonObject, ers_name: str, settings: Settings) -> dict[str, Any]:
    scale_set = scale_set_id(ars)
    if scale_set is None:
        raise BuildError(f"annotation {naming.ANNOTATION_RUNNER_SCALE_SET_ID} is missing or not a number")
    meta = as_mapping(ars.get("metadata"))
    spec = as_mapping(ars.get("spec"))
    max_runners, min_runners = spec.get("maxRunners"), spec.get("minRunners")
    return _compact(
        {
            "githubConfigUrl": spec.get("githubConfigUrl", ""),
            "githubConfigSecret": spec.get("githubConfigSecret", ""),
            "vaultConfig": spec.get("vaultConfig"),
            "runnerScaleSetId": scale_set,
            "autoscalingRunnerSetNamespace": meta.get("namespace", ""),
            "autoscalingRunnerSetName": meta.get("name", ""),
            "ephemeralRunnerSetName": ers_name,
            "minRunners": 0 if min_runners is None else min_runners,
            "maxRunners": MAX_RUNNERS_UNBOUNDED if max_runners is None else max_runners,
            "image": settings.listener_image,
            "imagePullSecrets": [{"name": name} for name in settings.image_pull_secrets] or None,
            "proxy": spec.get("proxy"),
            "githubServerTLS": spec.get("githubServerTLS"),
            "metrics": spec.get("listenerMetrics"),
            "template": spec.get("listenerTemplate"),
            "serviceAccountMetadata": spec.get("listenerServiceAccountMetadata"),
            "roleMetadata": spec.get("listenerRoleMetadata"),
            "roleBindingMetadata": spec.get("listenerRoleBindingMetadata"),
            "configSecretMetadata": spec.get("listenerConfigSecretMetadata"),
        }
    )


def spec_hash(spec: JsonObject) -> str:
    """A stable hash of a spec, insensitive to how it was spelled (§1.8 lets a port choose the hash)."""
    return naming.fnv_hash_string(semantics.canonical(spec))


@memos.by_identity(REMEMBERED)
def autoscaling_listener(ars: JsonObject, ers_name: str, settings: Settings) -> dict[str, Any]:
    """``newAutoscalingListener``: in the controller namespace, no owner (it lives in another namespace)."""
    spec = listener_spec(ars, ers_name, settings)
    ref = listener_ref(ars, settings)
    labels = _labels(ars, _overlay(ars, COMPONENT_LISTENER), settings)
    annotations = {naming.ANNOTATION_INTEGRITY_HASH: spec_hash(spec)}
    user = as_mapping(ars.get("spec")).get("autoscalingListener")
    labels, annotations = _with_user_metadata(user, labels, annotations, settings)
    return {
        "apiVersion": kinds.API_VERSION,
        "kind": KIND_LISTENER,
        "metadata": {
            "name": ref.name,
            "namespace": ref.namespace,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }


# -- how far observed objects are from the desired ones -------------------------------------------------


@memos.by_identity(REMEMBERED)
def runner_spec_drifted(ers: JsonObject, want: JsonObject) -> bool:
    """C3's drift check: only the runner spec counts, compared semantically (§4.12)."""
    have, wanted = section(ers, "spec"), section(want, "spec")
    return not semantics.semantic_equal(have.get("ephemeralRunnerSpec"), wanted.get("ephemeralRunnerSpec"))


def runner_spec_patch(ers: JsonObject, want: JsonObject) -> dict[str, Any]:
    """The ``spec`` merge patch that publishes the desired runner spec (empty when it is the same text)."""
    have, wanted = section(ers, "spec"), section(want, "spec")
    changed = patches.diff(
        as_mapping(have.get("ephemeralRunnerSpec")), as_mapping(wanted.get("ephemeralRunnerSpec"))
    )
    return {"ephemeralRunnerSpec": changed} if changed else {}


def runner_metadata_patch(ers: JsonObject, want: JsonObject) -> dict[str, Any]:
    """The ``spec`` merge patch for ``ephemeralRunnerMetadata``; empty when it is semantically equal."""
    before = section(ers, "spec").get("ephemeralRunnerMetadata")
    after = section(want, "spec").get("ephemeralRunnerMetadata")
    if semantics.semantic_equal(before, after):
        return {}
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        return {"ephemeralRunnerMetadata": patches.diff(before, after)}
    return {"ephemeralRunnerMetadata": after}


def metadata_patch(ers: JsonObject, want: JsonObject, excluded: tuple[str, ...]) -> dict[str, Any]:
    """The ``metadata`` merge patch that merging ``want``'s labels and annotations into ``ers`` makes.

    [R] §8 item 3: the merged result is compared with what is there, so a key only the observed object
    has never counts as drift; the legacy ``integrity-hash`` annotation is dropped on the way.
    """
    have_meta, want_meta = section(ers, "metadata"), section(want, "metadata")
    have_labels, have_annotations = (
        as_strings(have_meta.get("labels")),
        as_strings(have_meta.get("annotations")),
    )
    labels = naming.filter_and_merge_labels(have_labels, as_strings(want_meta.get("labels")), excluded) or {}
    annotations = naming.merge_annotations(have_annotations, as_strings(want_meta.get("annotations"))) or {}
    annotations.pop(naming.ANNOTATION_INTEGRITY_HASH, None)
    out: dict[str, Any] = {}
    if label_patch := patches.diff(have_labels, labels):
        out["labels"] = label_patch
    if annotation_patch := patches.diff(have_annotations, annotations):
        out["annotations"] = annotation_patch
    return out


@memos.by_identity(REMEMBERED)
def listener_drifted(listener: JsonObject, want: JsonObject) -> bool:
    """Whether the observed listener must be rebuilt: another name, another spec, or a label or annotation
    of ``want`` it lacks or holds otherwise.

    Compared as the runner set is (``metadata_patch``): ``want``'s labels and annotations merged into the
    observed ones must change nothing, so a key someone else added to the listener never restarts it.
    """
    have_meta, want_meta = section(listener, "metadata"), section(want, "metadata")
    have_labels, have_annotations = (
        as_strings(have_meta.get("labels")),
        as_strings(have_meta.get("annotations")),
    )
    return (
        (have_meta.get("namespace"), have_meta.get("name"))
        != (want_meta.get("namespace"), want_meta.get("name"))
        or not semantics.semantic_equal(section(listener, "spec"), section(want, "spec"))
        or {**have_labels, **as_strings(want_meta.get("labels"))} != have_labels
        or {**have_annotations, **as_strings(want_meta.get("annotations"))} != have_annotations
    )
