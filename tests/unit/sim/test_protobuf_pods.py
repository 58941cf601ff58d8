"""The protobuf codec on Pods, core Events and Leases (sim.podmessages): realistic objects, in the JSON
form a server writes them, encode and decode back equal. No server."""

from __future__ import annotations

from typing import Any

import pytest

from sim import protobuf

META: dict[str, Any] = {
    "name": "runner-abc12",
    "namespace": "arc-runners",
    "uid": "0b5f0c2e-0000-4000-8000-000000000001",
    "resourceVersion": "812",
    "creationTimestamp": "2026-01-02T03:04:05Z",
    "labels": {"app.kubernetes.io/component": "runner", "actions-ephemeral-runner": "True"},
    "annotations": {"actions.github.com/runner-spec-hash": "5d8f"},
    "ownerReferences": [
        {
            "apiVersion": "actions.github.com/v1alpha1",
            "kind": "EphemeralRunner",
            "name": "runner-abc12",
            "uid": "0b5f0c2e-0000-4000-8000-000000000002",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ],
    "finalizers": ["actions.github.com/ephemeralrunner-finalizer"],
}

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": META,
    "spec": {
        "volumes": [
            {"name": "work", "emptyDir": {"sizeLimit": "1Gi"}},
            {
                "name": "kube-api-access-x1",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "name": "kube-root-ca.crt",
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            }
                        },
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "path": "namespace",
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                    }
                                ]
                            }
                        },
                    ],
                    "defaultMode": 420,
                },
            },
        ],
        "containers": [
            {
                "name": "runner",
                "image": "ghcr.io/actions/actions-runner:2.330.0",
                "command": ["/home/runner/run.sh"],
                "args": ["--once"],
                "ports": [{"name": "metrics", "containerPort": 8080, "protocol": "TCP"}],
                "env": [
                    {
                        "name": "ACTIONS_RUNNER_INPUT_JITCONFIG",
                        "valueFrom": {"secretKeyRef": {"name": "r", "key": "jit"}},
                    },
                    {"name": "RUNNER_WAIT_FOR_DOCKER_IN_SECONDS", "value": "120"},
                ],
                "resources": {"limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": "500m"}},
                "volumeMounts": [{"name": "work", "mountPath": "/home/runner/_work"}],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": "metrics", "scheme": "HTTP"},
                    "initialDelaySeconds": 5,
                    "timeoutSeconds": 1,
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "readinessProbe": {
                    "tcpSocket": {"port": 8080},
                    "timeoutSeconds": 1,
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
                "securityContext": {"privileged": False, "runAsNonRoot": True, "runAsUser": 1001},
            }
        ],
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "dnsPolicy": "ClusterFirst",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "automountServiceAccountToken": False,
        "nodeName": "sim-node-1",
        "securityContext": {"fsGroup": 123, "supplementalGroups": [1, 2]},
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {
                                "matchLabels": {"app": "runner"},
                                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
                            },
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            }
        },
        "schedulerName": "default-scheduler",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "overhead": {"cpu": "250m"},
    },
    "status": {
        "phase": "Running",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": "2026-01-02T03:04:07Z",
            },
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": "2026-01-02T03:04:05Z",
            },
        ],
        "hostIP": "127.0.0.1",
        "hostIPs": [{"ip": "127.0.0.1"}],
        "podIP": "127.244.0.7",
        "podIPs": [{"ip": "127.244.0.7"}],
        "startTime": "2026-01-02T03:04:05Z",
        "containerStatuses": [
            {
                "name": "runner",
                "state": {"running": {"startedAt": "2026-01-02T03:04:06Z"}},
                "lastState": {
                    "terminated": {
                        "exitCode": 7,
                        "reason": "Error",
                        "startedAt": "2026-01-02T03:04:05Z",
                        "finishedAt": "2026-01-02T03:04:06Z",
                        "containerID": "sim://1",
                    }
                },
                "ready": True,
                "restartCount": 1,
                "image": "ghcr.io/actions/actions-runner:2.330.0",
                "imageID": "ghcr.io/actions/actions-runner@sha256:00",
                "containerID": "sim://2",
                "started": True,
            }
        ],
        "qosClass": "Burstable",
    },
}

EVENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {
        "name": "runner-abc12.1838",
        "namespace": "arc-runners",
        "uid": "e-1",
        "resourceVersion": "9",
    },
    "involvedObject": {"kind": "Pod", "namespace": "arc-runners", "name": "runner-abc12", "uid": "p-1"},
    "reason": "Started",
    "message": "Started container runner",
    "source": {"component": "kubelet", "host": "sim-node-1"},
    "firstTimestamp": "2026-01-02T03:04:06Z",
    "lastTimestamp": "2026-01-02T03:04:06Z",
    "count": 1,
    "type": "Normal",
    "eventTime": "2026-01-02T03:04:06.123456Z",
    "series": {"count": 2, "lastObservedTime": "2026-01-02T03:05:06.000001Z"},
    "action": "Start",
    "reportingComponent": "kubelet",
    "reportingInstance": "sim-node-1",
}

LEASE: dict[str, Any] = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "arcsm-leader", "namespace": "arcsm", "uid": "l-1", "resourceVersion": "3"},
    "spec": {
        "holderIdentity": "arcsm-0",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-01-02T03:04:05.000000Z",
        "renewTime": "2026-01-02T03:04:20.654321Z",
        "leaseTransitions": 0,
    },
}


@pytest.mark.parametrize("obj", [POD, EVENT, LEASE], ids=["pod", "event", "lease"])
def test_an_encoded_object_decodes_back_equal(obj: dict[str, Any]) -> None:
    body = protobuf.encode(obj)
    assert protobuf.encodable(obj)
    assert protobuf.decode(body) == obj


def test_int_or_string_and_quantities_keep_their_json_types() -> None:
    decoded = protobuf.decode(protobuf.encode(POD))
    container = decoded["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["port"] == "metrics"
    assert container["readinessProbe"]["tcpSocket"]["port"] == 8080
    assert container["resources"]["limits"] == {"cpu": "2", "memory": "4Gi"}


def test_packed_repeated_integers_are_read() -> None:
    # supplementalGroups (PodSecurityContext field 4) sent packed: one run of varints 1, 300.
    raw = bytes([0x22, 3, 1, 0xAC, 0x02])
    assert protobuf.decode_message("PodSecurityContext", raw) == {"supplementalGroups": [1, 300]}
