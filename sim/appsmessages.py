"""The protobuf messages of apps/v1 Deployments, ReplicaSets, StatefulSets and ControllerRevisions (and
the core/v1 PodTemplateSpec they hold).

Declared as data in the format of ``sim.protoschemas`` (see ``sim.podmessages`` for ``keep`` and
``inline``); field numbers and names are those of k8s.io/api v0.34's ``generated.proto`` and ``types.go``.
"""

from __future__ import annotations

from sim.protoschemas import Field
from sim.protoschemas import field as _f

MESSAGES: dict[str, dict[int, Field]] = {
    "Deployment": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "DeploymentSpec", keep=True),
        3: _f("status", "msg", "DeploymentStatus", keep=True),
    },
    "ReplicaSet": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "ReplicaSetSpec", keep=True),
        3: _f("status", "msg", "ReplicaSetStatus", keep=True),
    },
    "StatefulSet": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "StatefulSetSpec", keep=True),
        3: _f("status", "msg", "StatefulSetStatus", keep=True),
    },
    "ControllerRevision": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("data", "msg", "RawExtension", keep=True),
        3: _f("revision", "int", keep=True),
    },
    "DeploymentSpec": {
        1: _f("replicas", "int", keep=True),
        2: _f("selector", "msg", "LabelSelector", keep=True),
        3: _f("template", "msg", "PodTemplateSpec", keep=True),
        4: _f("strategy", "msg", "DeploymentStrategy", keep=True),
        5: _f("minReadySeconds", "int"),
        6: _f("revisionHistoryLimit", "int", keep=True),
        7: _f("paused", "bool"),
        9: _f("progressDeadlineSeconds", "int", keep=True),
    },
    "DeploymentStatus": {
        1: _f("observedGeneration", "int"),
        2: _f("replicas", "int"),
        3: _f("updatedReplicas", "int"),
        7: _f("readyReplicas", "int"),
        4: _f("availableReplicas", "int"),
        5: _f("unavailableReplicas", "int"),
        9: _f("terminatingReplicas", "int", keep=True),
        6: _f("conditions", "msg", "DeploymentCondition", repeated=True),
        8: _f("collisionCount", "int", keep=True),
    },
    "ReplicaSetSpec": {
        1: _f("replicas", "int", keep=True),
        4: _f("minReadySeconds", "int"),
        2: _f("selector", "msg", "LabelSelector", keep=True),
        3: _f("template", "msg", "PodTemplateSpec", keep=True),
    },
    "ReplicaSetStatus": {
        1: _f("replicas", "int", keep=True),
        2: _f("fullyLabeledReplicas", "int"),
        4: _f("readyReplicas", "int"),
        5: _f("availableReplicas", "int"),
        7: _f("terminatingReplicas", "int", keep=True),
        3: _f("observedGeneration", "int"),
        6: _f("conditions", "msg", "ReplicaSetCondition", repeated=True),
    },
    "StatefulSetSpec": {
        1: _f("replicas", "int", keep=True),
        2: _f("selector", "msg", "LabelSelector", keep=True),
        3: _f("template", "msg", "PodTemplateSpec", keep=True),
        4: _f("volumeClaimTemplates", "msg", "PersistentVolumeClaim", repeated=True),
        5: _f("serviceName", "str", keep=True),
        6: _f("podManagementPolicy", "str"),
        7: _f("updateStrategy", "msg", "StatefulSetUpdateStrategy", keep=True),
        8: _f("revisionHistoryLimit", "int", keep=True),
        9: _f("minReadySeconds", "int"),
        10: _f(
            "persistentVolumeClaimRetentionPolicy",
            "msg",
            "StatefulSetPersistentVolumeClaimRetentionPolicy",
            keep=True,
        ),
        11: _f("ordinals", "msg", "StatefulSetOrdinals", keep=True),
    },
    "StatefulSetStatus": {
        1: _f("observedGeneration", "int"),
        2: _f("replicas", "int", keep=True),
        3: _f("readyReplicas", "int"),
        4: _f("currentReplicas", "int"),
        5: _f("updatedReplicas", "int"),
        6: _f("currentRevision", "str"),
        7: _f("updateRevision", "str"),
        9: _f("collisionCount", "int", keep=True),
        10: _f("conditions", "msg", "StatefulSetCondition", repeated=True),
        11: _f("availableReplicas", "int", keep=True),
    },
    "PodTemplateSpec": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "PodSpec", keep=True),
    },
    "DeploymentStrategy": {
        1: _f("type", "str"),
        2: _f("rollingUpdate", "msg", "RollingUpdateDeployment", keep=True),
    },
    "DeploymentCondition": {
        1: _f("type", "str", keep=True),
        2: _f("status", "str", keep=True),
        6: _f("lastUpdateTime", "time", keep=True),
        7: _f("lastTransitionTime", "time", keep=True),
        4: _f("reason", "str"),
        5: _f("message", "str"),
    },
    "ReplicaSetCondition": {
        1: _f("type", "str", keep=True),
        2: _f("status", "str", keep=True),
        3: _f("lastTransitionTime", "time", keep=True),
        4: _f("reason", "str"),
        5: _f("message", "str"),
    },
    "StatefulSetUpdateStrategy": {
        1: _f("type", "str"),
        2: _f("rollingUpdate", "msg", "RollingUpdateStatefulSetStrategy", keep=True),
    },
    "StatefulSetPersistentVolumeClaimRetentionPolicy": {
        1: _f("whenDeleted", "str"),
        2: _f("whenScaled", "str"),
    },
    "StatefulSetOrdinals": {
        1: _f("start", "int", keep=True),
    },
    "StatefulSetCondition": {
        1: _f("type", "str", keep=True),
        2: _f("status", "str", keep=True),
        3: _f("lastTransitionTime", "time", keep=True),
        4: _f("reason", "str"),
        5: _f("message", "str"),
    },
    "RollingUpdateDeployment": {
        1: _f("maxUnavailable", "intorstr", keep=True),
        2: _f("maxSurge", "intorstr", keep=True),
    },
    "RollingUpdateStatefulSetStrategy": {
        1: _f("partition", "int", keep=True),
        2: _f("maxUnavailable", "intorstr", keep=True),
    },
}
