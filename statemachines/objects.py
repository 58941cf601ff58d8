"""Typed views of the Kubernetes objects the machines read: the fields they read, by name and type.

An observed object is JSON as the API server (or a recorded journal) sent it (``jsonvalues.JsonObject``).
The views here are ``TypedDict``\\ s with ``total=False``: every field may be missing, and none is
checked or copied when an object is viewed, so viewing costs nothing and changes nothing. What they
give a reader is the field names (mypy refuses a key a view does not declare) and the types the API
server's schema promises. A field of another shape in a damaged object still reaches the reader, which
is why a reader that needs a shape keeps taking it through the coercions of ``jsonvalues``
(``as_int``, ``as_strings``, ``as_mappings``, ...): they accept anything and never raise.

An object is viewed where a machine takes it from its snapshot: ``Snapshot.meta`` is an ``ObjectMeta``,
``ars_spec(s.spec)`` an ``AutoscalingRunnerSetSpec``, ``pods.status_of(pod)`` a ``PodStatus``. The
per-kind views name the ``spec`` and ``status`` fields of the four ARC kinds (``actions.github.com``, as
the served CRDs declare them) and the Pod and Secret fields the machines read.
"""

from __future__ import annotations

from typing import TypedDict, cast

from statemachines.jsonvalues import JsonObject, section


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    generation: int
    resourceVersion: str
    creationTimestamp: str
    deletionTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    finalizers: list[str]
    ownerReferences: list[OwnerReference]


class StatusCondition(TypedDict, total=False):
    """One entry of ``status.conditions`` (``conditions`` writes and merges them)."""

    type: str
    status: str  # "True", "False" or "Unknown"
    observedGeneration: int
    lastTransitionTime: str
    reason: str
    message: str


class ObjectRefMeta(TypedDict, total=False):
    """The labels and annotations a spec asks its children to carry (``*Metadata`` fields)."""

    labels: dict[str, str]
    annotations: dict[str, str]


class SecretRef(TypedDict, total=False):
    name: str


class ProxyServer(TypedDict, total=False):
    url: str
    credentialSecretRef: str


class Proxy(TypedDict, total=False):
    http: ProxyServer
    https: ProxyServer
    noProxy: list[str]


class GitHubServerTLS(TypedDict, total=False):
    certificateFrom: JsonObject


# -- AutoscalingRunnerSet --------------------------------------------------------------------------------


class AutoscalingRunnerSetSpec(TypedDict, total=False):
    githubConfigUrl: str
    githubConfigSecret: str
    githubServerTLS: GitHubServerTLS
    proxy: Proxy
    vaultConfig: JsonObject
    runnerGroup: str
    runnerScaleSetName: str
    runnerScaleSetLabels: list[str]
    minRunners: int
    maxRunners: int
    template: JsonObject  # a PodTemplateSpec, handed on to the runners unread
    listenerTemplate: JsonObject
    listenerMetrics: JsonObject
    listenerServiceAccountMetadata: ObjectRefMeta
    listenerRoleMetadata: ObjectRefMeta
    listenerRoleBindingMetadata: ObjectRefMeta
    listenerConfigSecretMetadata: ObjectRefMeta
    ephemeralRunnerSetMetadata: ObjectRefMeta
    ephemeralRunnerMetadata: ObjectRefMeta
    ephemeralRunnerConfigSecretMetadata: ObjectRefMeta
    autoscalingListener: JsonObject


class AutoscalingRunnerSetStatus(TypedDict, total=False):
    phase: str
    observedGeneration: int
    currentRunners: int
    pendingEphemeralRunners: int
    runningEphemeralRunners: int
    failedEphemeralRunners: int
    conditions: list[StatusCondition]


# -- EphemeralRunnerSet ----------------------------------------------------------------------------------


class EphemeralRunnerSetSpec(TypedDict, total=False):
    replicas: int
    patchID: int
    actionableRevision: int  # arcsm's own: the revision new runners are built from
    ephemeralRunnerSpec: JsonObject  # the runners' spec, copied into each EphemeralRunner
    ephemeralRunnerMetadata: ObjectRefMeta


class EphemeralRunnerSetStatus(TypedDict, total=False):
    phase: str
    currentReplicas: int
    pendingEphemeralRunners: int
    runningEphemeralRunners: int
    failedEphemeralRunners: int
    appliedActionableRevision: int
    conditions: list[StatusCondition]


# -- EphemeralRunner -------------------------------------------------------------------------------------


class EphemeralRunnerSpec(TypedDict, total=False):
    githubConfigUrl: str
    githubConfigSecret: str
    githubServerTLS: GitHubServerTLS
    proxy: Proxy
    proxySecretRef: str
    vaultConfig: JsonObject
    runnerScaleSetId: int
    ephemeralRunnerConfigSecretMetadata: ObjectRefMeta
    metadata: ObjectRefMeta
    spec: JsonObject  # the runner pod's PodSpec


class EphemeralRunnerStatus(TypedDict, total=False):
    phase: str
    reason: str
    message: str
    ready: bool
    runnerId: int
    runnerName: str
    jobId: str
    jobRequestId: int
    jobRepositoryName: str
    jobWorkflowRef: str
    jobDisplayName: str
    workflowRunId: int
    jobRunnerId: int  # arcsm's: the runner id the job ran on, written with the job by the listener
    failures: dict[str, str]  # pod uid -> when it failed
    conditions: list[StatusCondition]


# -- AutoscalingListener ---------------------------------------------------------------------------------


class AutoscalingListenerSpec(TypedDict, total=False):
    githubConfigUrl: str
    githubConfigSecret: str
    githubServerTLS: GitHubServerTLS
    proxy: Proxy
    vaultConfig: JsonObject
    runnerScaleSetId: int
    autoscalingRunnerSetNamespace: str
    autoscalingRunnerSetName: str
    ephemeralRunnerSetName: str
    minRunners: int
    maxRunners: int
    image: str
    imagePullSecrets: list[SecretRef]
    template: JsonObject
    metrics: JsonObject
    serviceAccountMetadata: ObjectRefMeta
    roleMetadata: ObjectRefMeta
    roleBindingMetadata: ObjectRefMeta
    configSecretMetadata: ObjectRefMeta


class AutoscalingListenerStatus(TypedDict, total=False):
    conditions: list[StatusCondition]


# -- Pod and Secret --------------------------------------------------------------------------------------


class ContainerStatus(TypedDict, total=False):
    name: str
    ready: bool
    restartCount: int
    state: JsonObject
    lastState: JsonObject


class PodStatus(TypedDict, total=False):
    phase: str
    reason: str
    message: str
    startTime: str
    conditions: list[StatusCondition]
    containerStatuses: list[ContainerStatus]
    initContainerStatuses: list[ContainerStatus]


class Pod(TypedDict, total=False):
    metadata: ObjectMeta
    spec: JsonObject
    status: PodStatus


class Secret(TypedDict, total=False):
    """A Secret as journaled: without ``data`` and ``stringData`` (DESIGN.md "Observe")."""

    metadata: ObjectMeta
    type: str


# -- viewing ---------------------------------------------------------------------------------------------


def meta_of(obj: JsonObject | None) -> ObjectMeta:
    """``obj.metadata`` viewed as ``ObjectMeta`` (``{}`` when there is no object, or no metadata object)."""
    return cast(ObjectMeta, section(obj, "metadata"))


# The spec and status of each kind, viewed (a snapshot's ``spec`` and ``status``, or a related object's).


def ars_spec(spec: JsonObject) -> AutoscalingRunnerSetSpec:
    return cast(AutoscalingRunnerSetSpec, spec)


def ars_status(status: JsonObject) -> AutoscalingRunnerSetStatus:
    return cast(AutoscalingRunnerSetStatus, status)


def ers_spec(spec: JsonObject) -> EphemeralRunnerSetSpec:
    return cast(EphemeralRunnerSetSpec, spec)


def ers_status(status: JsonObject) -> EphemeralRunnerSetStatus:
    return cast(EphemeralRunnerSetStatus, status)


def er_spec(spec: JsonObject) -> EphemeralRunnerSpec:
    return cast(EphemeralRunnerSpec, spec)


def er_status(status: JsonObject) -> EphemeralRunnerStatus:
    return cast(EphemeralRunnerStatus, status)


def al_spec(spec: JsonObject) -> AutoscalingListenerSpec:
    return cast(AutoscalingListenerSpec, spec)
