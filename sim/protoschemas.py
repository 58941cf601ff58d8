"""The protobuf messages the emulator reads and writes, declared as data: for each message, its fields by
number with their JSON name and shape.

Field numbers are those of k8s.io/api's ``generated.proto`` (core/v1, rbac/v1, authentication/v1,
authorization/v1) and apimachinery's ``pkg/apis/meta/v1/generated.proto``. A shape is one of

    ``str``, ``bytes`` (base64 in JSON), ``int``, ``bool``, ``time`` (a ``meta.v1.Time``: RFC 3339 in JSON),
    ``raw`` (bytes holding JSON, as ``FieldsV1``), ``msg`` (a nested message, named), ``map`` (string keys;
    values ``str``, ``bytes``, ``quantity`` or ``strs``: an ``ExtraValue`` message, a list of strings in
    JSON), and for the messages of ``sim.podmessages`` (Pod, Event, Lease) ``microtime``, ``quantity`` and
    ``intorstr``.

``repeated`` fields are JSON lists. ``keep`` marks Go pointer fields: present on the wire only when set, so
their zero value (``false``, ``0``) is kept in JSON; every other empty value is omitted, as Go's
``omitempty`` does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    shape: str
    message: str = ""  # the nested message (shape "msg") or the map's value shape (shape "map")
    repeated: bool = False
    keep: bool = False
    inline: bool = False  # an embedded Go struct: its fields are the parent's in JSON


def field(
    name: str,
    shape: str,
    message: str = "",
    *,
    repeated: bool = False,
    keep: bool = False,
    inline: bool = False,
) -> Field:
    """A field of a message table (the tables' shorthand, imported as ``_f`` by the message modules)."""
    return Field(name, shape, message, repeated, keep, inline)


_f = field


MESSAGES: dict[str, dict[int, Field]] = {
    # k8s.io/apimachinery/pkg/runtime
    "TypeMeta": {1: _f("apiVersion", "str"), 2: _f("kind", "str")},
    "Unknown": {
        1: _f("typeMeta", "msg", "TypeMeta"),
        2: _f("raw", "bytes"),
        3: _f("contentEncoding", "str"),
        4: _f("contentType", "str"),
    },
    # meta/v1
    "ObjectMeta": {
        1: _f("name", "str"),
        2: _f("generateName", "str"),
        3: _f("namespace", "str"),
        4: _f("selfLink", "str"),
        5: _f("uid", "str"),
        6: _f("resourceVersion", "str"),
        7: _f("generation", "int"),
        8: _f("creationTimestamp", "time"),
        9: _f("deletionTimestamp", "time"),
        10: _f("deletionGracePeriodSeconds", "int", keep=True),
        11: _f("labels", "map", "str"),
        12: _f("annotations", "map", "str"),
        13: _f("ownerReferences", "msg", "OwnerReference", repeated=True),
        14: _f("finalizers", "str", repeated=True),
        17: _f("managedFields", "msg", "ManagedFieldsEntry", repeated=True),
    },
    "DeleteOptions": {
        1: _f("gracePeriodSeconds", "int", keep=True),
        2: _f("preconditions", "msg", "Preconditions"),
        3: _f("orphanDependents", "bool", keep=True),
        4: _f("propagationPolicy", "str"),
        5: _f("dryRun", "str", repeated=True),
    },
    "Preconditions": {1: _f("uid", "str"), 2: _f("resourceVersion", "str")},
    "OwnerReference": {
        1: _f("kind", "str"),
        3: _f("name", "str"),
        4: _f("uid", "str"),
        5: _f("apiVersion", "str"),
        6: _f("controller", "bool", keep=True),
        7: _f("blockOwnerDeletion", "bool", keep=True),
    },
    "ManagedFieldsEntry": {
        1: _f("manager", "str"),
        2: _f("operation", "str"),
        3: _f("apiVersion", "str"),
        4: _f("time", "time"),
        6: _f("fieldsType", "str"),
        7: _f("fieldsV1", "msg", "FieldsV1"),
        8: _f("subresource", "str"),
    },
    "FieldsV1": {1: _f("Raw", "raw")},
    # k8s.io/apimachinery/pkg/runtime: an embedded object (a ControllerRevision's data), JSON on the wire.
    "RawExtension": {1: _f("raw", "raw")},
    "ListMeta": {
        1: _f("selfLink", "str"),
        2: _f("resourceVersion", "str"),
        3: _f("continue", "str"),
        4: _f("remainingItemCount", "int", keep=True),
    },
    "Status": {
        1: _f("metadata", "msg", "ListMeta"),
        2: _f("status", "str"),
        3: _f("message", "str"),
        4: _f("reason", "str"),
        5: _f("details", "msg", "StatusDetails"),
        6: _f("code", "int"),
    },
    "StatusDetails": {
        1: _f("name", "str"),
        2: _f("group", "str"),
        3: _f("kind", "str"),
        4: _f("causes", "msg", "StatusCause", repeated=True),
        5: _f("retryAfterSeconds", "int"),
        6: _f("uid", "str"),
    },
    "StatusCause": {1: _f("reason", "str"), 2: _f("message", "str"), 3: _f("field", "str")},
    "Condition": {
        1: _f("type", "str", keep=True),
        2: _f("status", "str", keep=True),
        3: _f("observedGeneration", "int"),
        4: _f("lastTransitionTime", "time", keep=True),
        5: _f("reason", "str", keep=True),
        6: _f("message", "str", keep=True),
    },
    "LabelSelector": {
        1: _f("matchLabels", "map", "str"),
        2: _f("matchExpressions", "msg", "LabelSelectorRequirement", repeated=True),
    },
    "LabelSelectorRequirement": {
        1: _f("key", "str"),
        2: _f("operator", "str"),
        3: _f("values", "str", repeated=True),
    },
    # core/v1
    "Namespace": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "NamespaceSpec"),
        3: _f("status", "msg", "NamespaceStatus"),
    },
    "NamespaceSpec": {1: _f("finalizers", "str", repeated=True)},
    "NamespaceStatus": {
        1: _f("phase", "str"),
        2: _f("conditions", "msg", "NamespaceCondition", repeated=True),
    },
    "NamespaceCondition": {
        1: _f("type", "str"),
        2: _f("status", "str"),
        4: _f("lastTransitionTime", "time"),
        5: _f("reason", "str"),
        6: _f("message", "str"),
    },
    "Secret": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("data", "map", "bytes"),
        3: _f("type", "str"),
        4: _f("stringData", "map", "str"),
        5: _f("immutable", "bool", keep=True),
    },
    "ConfigMap": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("data", "map", "str"),
        3: _f("binaryData", "map", "bytes"),
        4: _f("immutable", "bool", keep=True),
    },
    "ServiceAccount": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("secrets", "msg", "ObjectReference", repeated=True),
        3: _f("imagePullSecrets", "msg", "LocalObjectReference", repeated=True),
        4: _f("automountServiceAccountToken", "bool", keep=True),
    },
    "ObjectReference": {
        1: _f("kind", "str"),
        2: _f("namespace", "str"),
        3: _f("name", "str"),
        4: _f("uid", "str"),
        5: _f("apiVersion", "str"),
        6: _f("resourceVersion", "str"),
        7: _f("fieldPath", "str"),
    },
    "LocalObjectReference": {1: _f("name", "str")},
    # authentication/v1
    "TokenRequest": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "TokenRequestSpec"),
        3: _f("status", "msg", "TokenRequestStatus"),
    },
    "TokenRequestSpec": {
        1: _f("audiences", "str", repeated=True),
        3: _f("boundObjectRef", "msg", "BoundObjectReference"),
        4: _f("expirationSeconds", "int", keep=True),
    },
    "BoundObjectReference": {
        1: _f("kind", "str"),
        2: _f("apiVersion", "str"),
        3: _f("name", "str"),
        4: _f("uid", "str"),
    },
    "TokenRequestStatus": {1: _f("token", "str"), 2: _f("expirationTimestamp", "time")},
    "SelfSubjectReview": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("status", "msg", "SelfSubjectReviewStatus"),
    },
    "SelfSubjectReviewStatus": {1: _f("userInfo", "msg", "UserInfo")},
    "UserInfo": {
        1: _f("username", "str"),
        2: _f("uid", "str"),
        3: _f("groups", "str", repeated=True),
        4: _f("extra", "map", "strs"),
    },
    # rbac/v1
    "Role": {1: _f("metadata", "msg", "ObjectMeta"), 2: _f("rules", "msg", "PolicyRule", repeated=True)},
    "ClusterRole": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("rules", "msg", "PolicyRule", repeated=True),
        3: _f("aggregationRule", "msg", "AggregationRule"),
    },
    "AggregationRule": {1: _f("clusterRoleSelectors", "msg", "LabelSelector", repeated=True)},
    "PolicyRule": {
        1: _f("verbs", "str", repeated=True),
        2: _f("apiGroups", "str", repeated=True),
        3: _f("resources", "str", repeated=True),
        4: _f("resourceNames", "str", repeated=True),
        5: _f("nonResourceURLs", "str", repeated=True),
    },
    "RoleBinding": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("subjects", "msg", "Subject", repeated=True),
        3: _f("roleRef", "msg", "RoleRef"),
    },
    "Subject": {
        1: _f("kind", "str"),
        2: _f("apiGroup", "str"),
        3: _f("name", "str"),
        4: _f("namespace", "str"),
    },
    "RoleRef": {1: _f("apiGroup", "str"), 2: _f("kind", "str"), 3: _f("name", "str")},
    # authorization/v1
    "SelfSubjectAccessReview": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "SelfSubjectAccessReviewSpec"),
        3: _f("status", "msg", "SubjectAccessReviewStatus"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: _f("resourceAttributes", "msg", "ResourceAttributes"),
        2: _f("nonResourceAttributes", "msg", "NonResourceAttributes"),
    },
    "ResourceAttributes": {
        1: _f("namespace", "str"),
        2: _f("verb", "str"),
        3: _f("group", "str"),
        4: _f("version", "str"),
        5: _f("resource", "str"),
        6: _f("subresource", "str"),
        7: _f("name", "str"),
    },
    "NonResourceAttributes": {1: _f("path", "str"), 2: _f("verb", "str")},
    "SelfSubjectRulesReview": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "SelfSubjectRulesReviewSpec"),
        3: _f("status", "msg", "SubjectRulesReviewStatus"),
    },
    "SelfSubjectRulesReviewSpec": {1: _f("namespace", "str")},
    "SubjectRulesReviewStatus": {
        1: _f("resourceRules", "msg", "ResourceRule", repeated=True),
        2: _f("nonResourceRules", "msg", "NonResourceRule", repeated=True),
        3: _f("incomplete", "bool", keep=True),
        4: _f("evaluationError", "str"),
    },
    "ResourceRule": {
        1: _f("verbs", "str", repeated=True),
        2: _f("apiGroups", "str", repeated=True),
        3: _f("resources", "str", repeated=True),
        4: _f("resourceNames", "str", repeated=True),
    },
    "NonResourceRule": {1: _f("verbs", "str", repeated=True), 2: _f("nonResourceURLs", "str", repeated=True)},
    # ``allowed`` has no omitempty: false is written in JSON too.
    "SubjectAccessReviewStatus": {
        1: _f("allowed", "bool", keep=True),
        2: _f("reason", "str"),
        3: _f("evaluationError", "str"),
        4: _f("denied", "bool"),
    },
}

# (apiVersion, kind) of the top-level objects → their message.
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "Secret"): "Secret",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("v1", "Status"): "Status",
    # client-go sends DeleteOptions with the resource's group version, or meta.k8s.io's.
    ("v1", "DeleteOptions"): "DeleteOptions",
    ("meta.k8s.io/v1", "DeleteOptions"): "DeleteOptions",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
    ("rbac.authorization.k8s.io/v1", "Role"): "Role",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "ClusterRole",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "RoleBinding",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
    # Their messages are in sim.podmessages.
    ("v1", "Pod"): "Pod",
    ("v1", "Event"): "Event",
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    # sim.appsmessages
    ("apps/v1", "Deployment"): "Deployment",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
    ("apps/v1", "ControllerRevision"): "ControllerRevision",
    # sim.servicemessages
    ("v1", "Service"): "Service",
    ("v1", "Endpoints"): "Endpoints",
    ("discovery.k8s.io/v1", "EndpointSlice"): "EndpointSlice",
    # sim.storagemessages
    ("v1", "PersistentVolumeClaim"): "PersistentVolumeClaim",
    ("v1", "PersistentVolume"): "PersistentVolume",
    ("storage.k8s.io/v1", "StorageClass"): "StorageClass",
    # sim.policymessages
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    # sim.nodemessages
    ("v1", "Node"): "Node",
}
