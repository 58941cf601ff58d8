"""The protobuf messages of core/v1 Nodes.

Declared as data in the format of ``sim.protoschemas`` (see ``sim.podmessages`` for ``keep`` and
``inline``); field numbers and names are those of k8s.io/api v0.34's ``generated.proto`` and ``types.go``.
"""

from __future__ import annotations

from sim.protoschemas import Field
from sim.protoschemas import field as _f

MESSAGES: dict[str, dict[int, Field]] = {
    "Node": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "NodeSpec", keep=True),
        3: _f("status", "msg", "NodeStatus", keep=True),
    },
    "NodeSpec": {
        1: _f("podCIDR", "str"),
        7: _f("podCIDRs", "str", repeated=True),
        3: _f("providerID", "str"),
        4: _f("unschedulable", "bool"),
        5: _f("taints", "msg", "Taint", repeated=True),
        6: _f("configSource", "msg", "NodeConfigSource", keep=True),
        2: _f("externalID", "str"),
    },
    "NodeStatus": {
        1: _f("capacity", "map", "quantity"),
        2: _f("allocatable", "map", "quantity"),
        3: _f("phase", "str"),
        4: _f("conditions", "msg", "NodeCondition", repeated=True),
        5: _f("addresses", "msg", "NodeAddress", repeated=True),
        6: _f("daemonEndpoints", "msg", "NodeDaemonEndpoints", keep=True),
        7: _f("nodeInfo", "msg", "NodeSystemInfo", keep=True),
        8: _f("images", "msg", "ContainerImage", repeated=True),
        9: _f("volumesInUse", "str", repeated=True),
        10: _f("volumesAttached", "msg", "AttachedVolume", repeated=True),
        11: _f("config", "msg", "NodeConfigStatus", keep=True),
        12: _f("runtimeHandlers", "msg", "NodeRuntimeHandler", repeated=True),
        13: _f("features", "msg", "NodeFeatures", keep=True),
    },
    "Taint": {
        1: _f("key", "str", keep=True),
        2: _f("value", "str"),
        3: _f("effect", "str", keep=True),
        4: _f("timeAdded", "time", keep=True),
    },
    "NodeConfigSource": {
        2: _f("configMap", "msg", "ConfigMapNodeConfigSource", keep=True),
    },
    "NodeCondition": {
        1: _f("type", "str", keep=True),
        2: _f("status", "str", keep=True),
        3: _f("lastHeartbeatTime", "time", keep=True),
        4: _f("lastTransitionTime", "time", keep=True),
        5: _f("reason", "str"),
        6: _f("message", "str"),
    },
    "NodeAddress": {
        1: _f("type", "str", keep=True),
        2: _f("address", "str", keep=True),
    },
    "NodeDaemonEndpoints": {
        1: _f("kubeletEndpoint", "msg", "DaemonEndpoint", keep=True),
    },
    "NodeSystemInfo": {
        1: _f("machineID", "str", keep=True),
        2: _f("systemUUID", "str", keep=True),
        3: _f("bootID", "str", keep=True),
        4: _f("kernelVersion", "str", keep=True),
        5: _f("osImage", "str", keep=True),
        6: _f("containerRuntimeVersion", "str", keep=True),
        7: _f("kubeletVersion", "str", keep=True),
        8: _f("kubeProxyVersion", "str", keep=True),
        9: _f("operatingSystem", "str", keep=True),
        10: _f("architecture", "str", keep=True),
        11: _f("swap", "msg", "NodeSwapStatus", keep=True),
    },
    "ContainerImage": {
        1: _f("names", "str", repeated=True),
        2: _f("sizeBytes", "int"),
    },
    "AttachedVolume": {
        1: _f("name", "str", keep=True),
        2: _f("devicePath", "str", keep=True),
    },
    "NodeConfigStatus": {
        1: _f("assigned", "msg", "NodeConfigSource", keep=True),
        2: _f("active", "msg", "NodeConfigSource", keep=True),
        3: _f("lastKnownGood", "msg", "NodeConfigSource", keep=True),
        4: _f("error", "str"),
    },
    "NodeRuntimeHandler": {
        1: _f("name", "str", keep=True),
        2: _f("features", "msg", "NodeRuntimeHandlerFeatures", keep=True),
    },
    "NodeFeatures": {
        1: _f("supplementalGroupsPolicy", "bool", keep=True),
    },
    "ConfigMapNodeConfigSource": {
        1: _f("namespace", "str", keep=True),
        2: _f("name", "str", keep=True),
        3: _f("uid", "str"),
        4: _f("resourceVersion", "str"),
        5: _f("kubeletConfigKey", "str", keep=True),
    },
    "DaemonEndpoint": {
        1: _f("Port", "int", keep=True),
    },
    "NodeSwapStatus": {
        1: _f("capacity", "int", keep=True),
    },
    "NodeRuntimeHandlerFeatures": {
        1: _f("recursiveReadOnlyMounts", "bool", keep=True),
        2: _f("userNamespaces", "bool", keep=True),
    },
}
