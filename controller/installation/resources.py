"""The four custom resources of ``actions.github.com/v1alpha1``, declared as data.

AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner and AutoscalingListener carry the same spec and
status fields, with the same JSON names and types, as upstream actions-runner-controller's
gha-runner-scale-set mode, plus three int64 fields this project needs (``arc-controller-spec.md`` §1.0):
``AutoscalingRunnerSet.status.observedGeneration``, ``EphemeralRunnerSet.spec.actionableRevision`` and
``EphemeralRunnerSet.status.appliedActionableRevision``, and on every kind ``status.conditions`` (the
metav1.Condition list-map keyed by ``type``) with a ``Ready`` printer column reading it. One more is
arcsm's own: ``EphemeralRunner.status.jobRunnerId``, the runner id a recorded job ran on, which the
listener writes beside the job; where the schema prunes it (upstream's), a job is read as upstream reads
it.

A field's type is one of a few small frozen dataclasses: a scalar, a nested struct, a list, a string-keyed
map, or a Kubernetes core type named by its kubernetes_asyncio model class (the pod templates).
``controller.installation.crdgen`` renders these declarations to the CRD files of the Helm chart
(``deploy/charts/arcsm/crds/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from statemachines import kinds

GROUP = kinds.GROUP
VERSION = kinds.VERSION


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar: OpenAPI ``type`` and optional ``format``."""

    type: Literal["string", "integer", "number", "boolean"]
    format: str | None = None


@dataclass(frozen=True)
class Struct:
    """A nested object with declared fields."""

    fields: tuple[Field, ...]


@dataclass(frozen=True)
class ListOf:
    """A JSON array of one item type; ``map_keys`` makes it a list-map (``x-kubernetes-list-type: map``)
    whose items are unique by those fields."""

    item: FieldType
    map_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class MapOf:
    """A JSON object with arbitrary string keys and values of one type."""

    value: FieldType


@dataclass(frozen=True)
class KubeModel:
    """A Kubernetes core type, named by its kubernetes_asyncio model class (e.g. ``V1PodTemplateSpec``)."""

    model: str


FieldType: TypeAlias = Scalar | Struct | ListOf | MapOf | KubeModel


@dataclass(frozen=True)
class Field:
    """One field: JSON name, type, and the validation facts the CRD schema carries."""

    name: str
    type: FieldType
    required: bool = False
    description: str | None = None
    minimum: int | None = None
    enum: tuple[str, ...] | None = None
    pattern: str | None = None
    min_length: int | None = None
    max_length: int | None = None


@dataclass(frozen=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry."""

    name: str
    type: Literal["string", "integer", "number", "boolean", "date"]
    json_path: str


@dataclass(frozen=True)
class Kind:
    """One custom resource kind: names (from ``statemachines.kinds``), spec and status fields, and
    ``kubectl get`` columns."""

    names: kinds.ArcKind
    description: str
    spec: tuple[Field, ...]
    status: tuple[Field, ...]
    printer_columns: tuple[PrinterColumn, ...] = ()

    @property
    def kind(self) -> str:
        return self.names.kind

    @property
    def plural(self) -> str:
        return self.names.plural

    @property
    def singular(self) -> str:
        return self.names.singular

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{GROUP}"


STRING = Scalar("string")
BOOL = Scalar("boolean")
INT = Scalar("integer")  # a Go ``int``: upstream's schema gives no format
INT64 = Scalar("integer", "int64")
FLOAT64 = Scalar("number")
DATE_TIME = Scalar("string", "date-time")

POD_TEMPLATE = KubeModel("V1PodTemplateSpec")

# metav1.Condition, with the validation its generated CRD schemas carry.
CONDITION = Struct(
    (
        Field(
            "lastTransitionTime",
            DATE_TIME,
            required=True,
            description="When the condition last changed from one status to another.",
        ),
        Field("message", STRING, required=True, max_length=32768, description="Details, for a human."),
        Field(
            "observedGeneration",
            INT64,
            minimum=0,
            description="The metadata.generation the condition was set from.",
        ),
        Field(
            "reason",
            STRING,
            required=True,
            pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
            min_length=1,
            max_length=1024,
            description="Why the condition is in this status, as one CamelCase word.",
        ),
        Field("status", STRING, required=True, enum=("True", "False", "Unknown")),
        Field(
            "type",
            STRING,
            required=True,
            pattern=(
                r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
            ),
            max_length=316,
            description="The condition's type, e.g. Ready.",
        ),
    )
)

CONDITIONS = Field(
    "conditions",
    ListOf(CONDITION, map_keys=("type",)),
    description="The latest observations of the object's state, one per type.",
)

READY_COLUMN = PrinterColumn("Ready", "string", '.status.conditions[?(@.type=="Ready")].status')
# Every kind with a phase shows it under the same title.
PHASE_COLUMN = PrinterColumn("Phase", "string", ".status.phase")

RESOURCE_META = Struct(
    (
        Field("annotations", MapOf(STRING)),
        Field("labels", MapOf(STRING)),
    )
)

_PROXY_SERVER = Struct(
    (
        Field("credentialSecretRef", STRING),
        Field("url", STRING),
    )
)

PROXY = Struct(
    (
        Field("http", _PROXY_SERVER),
        Field("https", _PROXY_SERVER),
        Field("noProxy", ListOf(STRING)),
    )
)

TLS = Struct(
    (
        Field(
            "certificateFrom",
            Struct((Field("configMapKeyRef", KubeModel("V1ConfigMapKeySelector")),)),
        ),
    )
)

_AZURE_KEY_VAULT = Struct(
    tuple(Field(name, STRING, required=True) for name in ("certificatePath", "clientId", "tenantId", "url"))
)

VAULT = Struct(
    (
        Field("azureKeyVault", _AZURE_KEY_VAULT),
        Field("proxy", PROXY),
        Field("type", STRING, description="The vault integration, e.g. azure_key_vault."),
    )
)

_LABELS = Field("labels", ListOf(STRING), required=True)

METRICS = Struct(
    (
        Field("counters", MapOf(Struct((_LABELS,)))),
        Field("gauges", MapOf(Struct((_LABELS,)))),
        Field("histograms", MapOf(Struct((Field("buckets", ListOf(FLOAT64)), _LABELS)))),
    )
)

# The spec of an EphemeralRunner, also embedded as EphemeralRunnerSet.spec.ephemeralRunnerSpec. The pod
# template is inline: its ``metadata`` and ``spec`` sit beside the runner's own fields.
EPHEMERAL_RUNNER_SPEC: tuple[Field, ...] = (
    Field("githubConfigUrl", STRING, required=True),
    Field("githubConfigSecret", STRING, required=True),
    Field("githubServerTLS", TLS),
    Field("runnerScaleSetId", INT, required=True),
    Field("proxy", PROXY),
    Field("proxySecretRef", STRING, description="Name of the EphemeralRunnerSet's proxy Secret."),
    Field("vaultConfig", VAULT),
    Field("ephemeralRunnerConfigSecretMetadata", RESOURCE_META),
    Field("metadata", KubeModel("V1ObjectMeta"), description="Metadata of the runner pod."),
    Field("spec", KubeModel("V1PodSpec"), description="Spec of the runner pod."),
)

AUTOSCALING_RUNNER_SET = Kind(
    names=kinds.AUTOSCALING_RUNNER_SET,
    description="AutoscalingRunnerSet is a runner scale set: the user-facing object.",
    spec=(
        Field("githubConfigUrl", STRING, description="Enterprise, organization or repository URL."),
        Field("githubConfigSecret", STRING, description="Name of the Secret with the GitHub credentials."),
        Field("runnerGroup", STRING),
        Field("runnerScaleSetName", STRING),
        Field("runnerScaleSetLabels", ListOf(STRING)),
        Field("proxy", PROXY),
        Field("githubServerTLS", TLS),
        Field("vaultConfig", VAULT),
        Field("template", POD_TEMPLATE, description="The runner pod template."),
        Field("autoscalingListener", RESOURCE_META),
        Field("listenerMetrics", METRICS),
        Field("listenerTemplate", POD_TEMPLATE, description="Merged into the listener pod."),
        Field("listenerServiceAccountMetadata", RESOURCE_META),
        Field("listenerRoleMetadata", RESOURCE_META),
        Field("listenerRoleBindingMetadata", RESOURCE_META),
        Field("listenerConfigSecretMetadata", RESOURCE_META),
        Field("ephemeralRunnerSetMetadata", RESOURCE_META),
        Field("ephemeralRunnerMetadata", RESOURCE_META),
        Field("ephemeralRunnerConfigSecretMetadata", RESOURCE_META),
        Field("maxRunners", INT, minimum=0),
        Field("minRunners", INT, minimum=0),
    ),
    status=(
        Field("currentRunners", INT),
        Field("phase", STRING, description="Pending, Running or Outdated."),
        Field("pendingEphemeralRunners", INT),
        Field("runningEphemeralRunners", INT),
        Field("failedEphemeralRunners", INT),
        Field(
            "observedGeneration",
            INT64,
            description="The last metadata.generation whose change has been fully applied.",
        ),
        CONDITIONS,
    ),
    printer_columns=(
        PrinterColumn("Minimum Runners", "integer", ".spec.minRunners"),
        PrinterColumn("Maximum Runners", "integer", ".spec.maxRunners"),
        PrinterColumn("Current Runners", "integer", ".status.currentRunners"),
        PHASE_COLUMN,
        READY_COLUMN,
        PrinterColumn("Pending Runners", "integer", ".status.pendingEphemeralRunners"),
        PrinterColumn("Running Runners", "integer", ".status.runningEphemeralRunners"),
    ),
)

EPHEMERAL_RUNNER_SET = Kind(
    names=kinds.EPHEMERAL_RUNNER_SET,
    description="EphemeralRunnerSet keeps the desired number of EphemeralRunners of one scale set.",
    spec=(
        Field("replicas", INT, description="The desired number of runners."),
        Field("patchID", INT, required=True, description="Sequence id of the listener's last patch."),
        Field("ephemeralRunnerSpec", Struct(EPHEMERAL_RUNNER_SPEC)),
        Field("ephemeralRunnerMetadata", RESOURCE_META),
        Field(
            "actionableRevision",
            INT64,
            description="Monotonic counter of the runner spec the AutoscalingRunnerSet has published.",
        ),
    ),
    status=(
        Field("currentReplicas", INT, required=True),
        Field("pendingEphemeralRunners", INT),
        Field("runningEphemeralRunners", INT),
        Field("failedEphemeralRunners", INT),
        Field("phase", STRING, description="Running or Outdated."),
        Field(
            "appliedActionableRevision",
            INT64,
            description="The last spec.actionableRevision whose cleanup succeeded.",
        ),
        CONDITIONS,
    ),
    printer_columns=(
        PrinterColumn("DesiredReplicas", "integer", ".spec.replicas"),
        PrinterColumn("CurrentReplicas", "integer", ".status.currentReplicas"),
        PrinterColumn("Pending Runners", "integer", ".status.pendingEphemeralRunners"),
        PrinterColumn("Running Runners", "integer", ".status.runningEphemeralRunners"),
        PHASE_COLUMN,
        READY_COLUMN,
    ),
)

EPHEMERAL_RUNNER = Kind(
    names=kinds.EPHEMERAL_RUNNER,
    description="EphemeralRunner is one just-in-time runner and its pod.",
    spec=EPHEMERAL_RUNNER_SPEC,
    status=(
        Field("ready", BOOL),
        Field("phase", STRING, description="Pending, Running, Succeeded, Failed or Outdated."),
        Field("reason", STRING),
        Field("message", STRING),
        Field("runnerId", INT),
        Field("runnerName", STRING),
        Field("failures", MapOf(DATE_TIME), description="Pod UID to the time that pod failed."),
        Field("jobRequestId", INT64),
        Field("jobId", STRING),
        Field("jobRepositoryName", STRING),
        Field("jobWorkflowRef", STRING),
        Field("workflowRunId", INT64),
        Field("jobDisplayName", STRING),
        Field(
            "jobRunnerId",
            INT,
            description="The runner id the job ran on; a job recorded for another runner id is ignored.",
        ),
        CONDITIONS,
    ),
    printer_columns=(
        PrinterColumn("GitHub Config URL", "string", ".spec.githubConfigUrl"),
        PrinterColumn("RunnerId", "number", ".status.runnerId"),
        PHASE_COLUMN,
        READY_COLUMN,
        PrinterColumn("JobRepository", "string", ".status.jobRepositoryName"),
        PrinterColumn("JobWorkflowRef", "string", ".status.jobWorkflowRef"),
        PrinterColumn("WorkflowRunId", "number", ".status.workflowRunId"),
        PrinterColumn("JobDisplayName", "string", ".status.jobDisplayName"),
        PrinterColumn("JobId", "string", ".status.jobId"),
        PrinterColumn("Message", "string", ".status.message"),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
)

AUTOSCALING_LISTENER = Kind(
    names=kinds.AUTOSCALING_LISTENER,
    description="AutoscalingListener runs the listener pod of one scale set.",
    spec=(
        Field("githubConfigUrl", STRING),
        Field("githubConfigSecret", STRING),
        Field("runnerScaleSetId", INT),
        Field("autoscalingRunnerSetNamespace", STRING),
        Field("autoscalingRunnerSetName", STRING),
        Field("ephemeralRunnerSetName", STRING),
        Field("maxRunners", INT, minimum=0),
        Field("minRunners", INT, minimum=0),
        Field("image", STRING),
        Field("imagePullSecrets", ListOf(KubeModel("V1LocalObjectReference"))),
        Field("proxy", PROXY),
        Field("githubServerTLS", TLS),
        Field("vaultConfig", VAULT),
        Field("metrics", METRICS),
        Field("template", POD_TEMPLATE, description="Merged into the listener pod."),
        Field("configSecretMetadata", RESOURCE_META),
        Field("serviceAccountMetadata", RESOURCE_META),
        Field("roleMetadata", RESOURCE_META),
        Field("roleBindingMetadata", RESOURCE_META),
    ),
    status=(CONDITIONS,),
    printer_columns=(
        PrinterColumn("GitHub Configure URL", "string", ".spec.githubConfigUrl"),
        PrinterColumn("AutoscalingRunnerSet Namespace", "string", ".spec.autoscalingRunnerSetNamespace"),
        PrinterColumn("AutoscalingRunnerSet Name", "string", ".spec.autoscalingRunnerSetName"),
        READY_COLUMN,
    ),
)

KINDS: tuple[Kind, ...] = (
    AUTOSCALING_RUNNER_SET,
    EPHEMERAL_RUNNER_SET,
    EPHEMERAL_RUNNER,
    AUTOSCALING_LISTENER,
)
