"""The protobuf messages of core/v1 Services and Endpoints and discovery.k8s.io/v1 EndpointSlices (whose
messages named like core/v1's are prefixed ``Discovery``).

Declared as data in the format of ``sim.protoschemas`` (see ``sim.podmessages`` for ``keep`` and
``inline``); field numbers and names are those of k8s.io/api v0.34's ``generated.proto`` and ``types.go``.
"""

from __future__ import annotations

from sim.protoschemas import Field
from sim.protoschemas import field as _f

MESSAGES: dict[str, dict[int, Field]] = {
    "Service": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "ServiceSpec", keep=True),
        3: _f("status", "msg", "ServiceStatus", keep=True),
    },
    "Endpoints": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("subsets", "msg", "EndpointSubset", repeated=True),
    },
    "EndpointSlice": {
        1: _f("metadata", "msg", "ObjectMeta"),
        4: _f("addressType", "str", keep=True),
        2: _f("endpoints", "msg", "Endpoint", repeated=True),
        3: _f("ports", "msg", "DiscoveryEndpointPort", repeated=True),
    },
    "ServiceSpec": {
        1: _f("ports", "msg", "ServicePort", repeated=True),
        2: _f("selector", "map", "str"),
        3: _f("clusterIP", "str"),
        18: _f("clusterIPs", "str", repeated=True),
        4: _f("type", "str"),
        5: _f("externalIPs", "str", repeated=True),
        7: _f("sessionAffinity", "str"),
        8: _f("loadBalancerIP", "str"),
        9: _f("loadBalancerSourceRanges", "str", repeated=True),
        10: _f("externalName", "str"),
        11: _f("externalTrafficPolicy", "str"),
        12: _f("healthCheckNodePort", "int"),
        13: _f("publishNotReadyAddresses", "bool"),
        14: _f("sessionAffinityConfig", "msg", "SessionAffinityConfig", keep=True),
        19: _f("ipFamilies", "str", repeated=True),
        17: _f("ipFamilyPolicy", "str", keep=True),
        20: _f("allocateLoadBalancerNodePorts", "bool", keep=True),
        21: _f("loadBalancerClass", "str", keep=True),
        22: _f("internalTrafficPolicy", "str", keep=True),
        23: _f("trafficDistribution", "str", keep=True),
    },
    "ServiceStatus": {
        1: _f("loadBalancer", "msg", "LoadBalancerStatus", keep=True),
        2: _f("conditions", "msg", "Condition", repeated=True),
    },
    "EndpointSubset": {
        1: _f("addresses", "msg", "EndpointAddress", repeated=True),
        2: _f("notReadyAddresses", "msg", "EndpointAddress", repeated=True),
        3: _f("ports", "msg", "EndpointPort", repeated=True),
    },
    "Endpoint": {
        1: _f("addresses", "str", repeated=True),
        2: _f("conditions", "msg", "EndpointConditions", keep=True),
        3: _f("hostname", "str", keep=True),
        4: _f("targetRef", "msg", "ObjectReference", keep=True),
        5: _f("deprecatedTopology", "map", "str"),
        6: _f("nodeName", "str", keep=True),
        7: _f("zone", "str", keep=True),
        8: _f("hints", "msg", "EndpointHints", keep=True),
    },
    "DiscoveryEndpointPort": {
        1: _f("name", "str", keep=True),
        2: _f("protocol", "str", keep=True),
        3: _f("port", "int", keep=True),
        4: _f("appProtocol", "str", keep=True),
    },
    "ServicePort": {
        1: _f("name", "str"),
        2: _f("protocol", "str"),
        6: _f("appProtocol", "str", keep=True),
        3: _f("port", "int", keep=True),
        4: _f("targetPort", "intorstr"),
        5: _f("nodePort", "int"),
    },
    "SessionAffinityConfig": {
        1: _f("clientIP", "msg", "ClientIPConfig", keep=True),
    },
    "LoadBalancerStatus": {
        1: _f("ingress", "msg", "LoadBalancerIngress", repeated=True),
    },
    "EndpointAddress": {
        1: _f("ip", "str", keep=True),
        3: _f("hostname", "str"),
        4: _f("nodeName", "str", keep=True),
        2: _f("targetRef", "msg", "ObjectReference", keep=True),
    },
    "EndpointPort": {
        1: _f("name", "str"),
        2: _f("port", "int", keep=True),
        3: _f("protocol", "str"),
        4: _f("appProtocol", "str", keep=True),
    },
    "EndpointConditions": {
        1: _f("ready", "bool", keep=True),
        2: _f("serving", "bool", keep=True),
        3: _f("terminating", "bool", keep=True),
    },
    "EndpointHints": {
        1: _f("forZones", "msg", "ForZone", repeated=True),
        2: _f("forNodes", "msg", "ForNode", repeated=True),
    },
    "ClientIPConfig": {
        1: _f("timeoutSeconds", "int", keep=True),
    },
    "LoadBalancerIngress": {
        1: _f("ip", "str"),
        2: _f("hostname", "str"),
        3: _f("ipMode", "str", keep=True),
        4: _f("ports", "msg", "PortStatus", repeated=True),
    },
    "ForZone": {
        1: _f("name", "str", keep=True),
    },
    "ForNode": {
        1: _f("name", "str", keep=True),
    },
    "PortStatus": {
        1: _f("port", "int", keep=True),
        2: _f("protocol", "str", keep=True),
        3: _f("error", "str", keep=True),
    },
}
