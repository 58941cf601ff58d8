"""The protobuf codec (sim.protobuf over sim.protoschemas) against the JSON shapes: no server."""

from __future__ import annotations

from typing import Any

import pytest

from sim import protobuf

SECRET: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {
        "name": "creds",
        "namespace": "team-a",
        "uid": "u-1",
        "resourceVersion": "42",
        "creationTimestamp": "2026-01-02T03:04:05Z",
        "labels": {"a": "1", "b": "2"},
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p-1", "controller": False}
        ],
        "finalizers": ["x/y"],
        "managedFields": [
            {
                "manager": "kubectl-create",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-01-02T03:04:05Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:token": {}}},
            }
        ],
    },
    "data": {"token": "AAEC/w=="},
    "type": "Opaque",
    "immutable": False,
}


@pytest.mark.parametrize(
    "obj",
    [
        SECRET,
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "n"},
            "spec": {"finalizers": ["kubernetes"]},
        },
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "s"},
            "automountServiceAccountToken": False,
            "imagePullSecrets": [{"name": "reg"}],
        },
        {
            "apiVersion": "v1",
            "kind": "Status",
            "metadata": {},
            "status": "Failure",
            "message": "m",
            "reason": "Invalid",
            "details": {
                "name": "x",
                "kind": "pods",
                "causes": [{"reason": "R", "message": "M", "field": "f"}],
            },
            "code": 422,
        },
    ],
)
def test_an_encoded_object_decodes_back_equal(obj: dict[str, Any]) -> None:
    body = protobuf.encode(obj)
    assert body.startswith(protobuf.MAGIC)
    expected = {k: v for k, v in obj.items() if v != {}}
    assert protobuf.decode(body) == expected


def test_unknown_field_numbers_are_skipped() -> None:
    raw = protobuf.encode_message("ConfigMap", {"metadata": {"name": "c"}})
    raw += b"\x98\x06\x05"  # field 99 (key varint 0x98 0x06), the varint 5: ConfigMap declares no 99
    type_meta = {"apiVersion": "v1", "kind": "ConfigMap"}
    body = protobuf.MAGIC + protobuf.encode_message("Unknown", {"typeMeta": type_meta})
    body += bytes([0x12, len(raw)]) + raw  # raw = 2
    assert protobuf.decode(body) == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def test_a_truncated_body_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        protobuf.decode(protobuf.encode(SECRET)[:-7])


def test_user_info_extra_is_a_map_of_string_lists() -> None:
    review = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
        "status": {
            "userInfo": {
                "username": "system:serviceaccount:ns:robot",
                "groups": ["system:serviceaccounts", "system:authenticated"],
                "extra": {"authentication.kubernetes.io/pod-name": ["p"], "two": ["a", "b"]},
            }
        },
    }
    assert protobuf.decode(protobuf.encode(review)) == review


def test_an_access_review_keeps_allowed_false_and_a_role_binding_its_subjects() -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"namespace": "ns", "verb": "get", "resource": "pods"}},
        "status": {"allowed": False},
    }
    assert protobuf.decode(protobuf.encode(review)) == review
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "b", "namespace": "ns"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "ns"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
    }
    assert protobuf.decode(protobuf.encode(binding)) == binding


def test_a_pdb_status_keeps_its_disrupted_pods_times_and_conditions() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "p", "namespace": "ns", "generation": 1},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "x"}}},
        "status": {
            "observedGeneration": 1,
            "disruptedPods": {"x-1": "2026-01-02T03:04:05Z"},
            "disruptionsAllowed": 0,
            "currentHealthy": 1,
            "desiredHealthy": 1,
            "expectedPods": 2,
            "conditions": [
                {
                    "type": "DisruptionAllowed",
                    "status": "False",
                    "observedGeneration": 1,
                    "lastTransitionTime": "2026-01-02T03:04:05Z",
                    "reason": "InsufficientPods",
                    "message": "",
                }
            ],
        },
    }
    assert protobuf.decode(protobuf.encode(pdb)) == pdb


def test_a_controller_revision_keeps_its_data_as_json() -> None:
    revision = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "r-1"},
        "data": {"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}},
        "revision": 3,
    }
    assert protobuf.decode(protobuf.encode(revision)) == revision
