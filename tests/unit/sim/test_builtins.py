"""Unit tests of sim.builtins (and sim.events through it): Secrets (S65), Leases (S55), Events (S57),
RBAC (S66) and Namespaces. Expected messages are kube-apiserver's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sim import builtins, errors

IMMUTABLE_WHEN_SET = "Forbidden: field is immutable when `immutable` is set"


def texts(errs: list[errors.FieldError]) -> list[str]:
    return [str(e) for e in errs]


def secret(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}, **fields}


# -- Secrets --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "data", "secret_type"),
    [
        pytest.param({}, None, "Opaque", id="empty"),
        pytest.param({"data": {"a": "YWRtaW4="}}, {"a": "YWRtaW4="}, "Opaque", id="data-kept"),
        pytest.param({"data": {"a": "YWRt\naW4="}}, {"a": "YWRtaW4="}, "Opaque", id="newlines-normalised"),
        pytest.param({"stringData": {"b": "admin"}}, {"b": "YWRtaW4="}, "Opaque", id="string-data-encoded"),
        pytest.param(
            {"data": {"a": "eA==", "b": "eA=="}, "stringData": {"b": "y"}},
            {"a": "eA==", "b": "eQ=="},
            "Opaque",
            id="string-data-wins",
        ),
        pytest.param({"data": {"a": ""}}, {"a": ""}, "Opaque", id="empty-value"),
        pytest.param({"type": "kubernetes.io/tls", "data": {}}, None, "kubernetes.io/tls", id="type-kept"),
    ],
)
def test_prepare_secret(fields: dict[str, Any], data: dict[str, str] | None, secret_type: str) -> None:
    body = secret(**fields)
    before = copy.deepcopy(body)
    out = builtins.prepare_secret(body)
    assert out.get("data") == data
    assert "stringData" not in out
    assert out["type"] == secret_type
    assert body == before


@pytest.mark.parametrize(
    ("value", "offset"),
    [
        pytest.param("admin", 4, id="short-plain-word"),
        pytest.param("My-pass-123", 2, id="illegal-character"),
        pytest.param("YWRtaW4", 4, id="missing-padding"),
        pytest.param("YQ=", 3, id="half-padding"),
        pytest.param("Y===", 1, id="too-much-padding"),
        pytest.param("YQ==YQ==", 4, id="data-after-padding"),
        pytest.param("s3cr3t-not-for-production", 6, id="looks-like-base64-until-dash"),
    ],
)
def test_secret_data_must_be_base64(value: str, offset: int) -> None:
    with pytest.raises(errors.ApiError) as info:
        builtins.prepare_secret(secret(data={"k": value}))
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    assert info.value.message == (
        f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte {offset}'
    )


def test_secret_data_of_wrong_json_type() -> None:
    with pytest.raises(errors.ApiError) as info:
        builtins.prepare_secret(secret(data={"k": 5}))
    assert info.value.message == (
        'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct '
        "field Secret.data of type []uint8"
    )


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({"data": {"ok.key_1-x": ""}}, [], id="valid-key"),
        pytest.param(
            {"data": {"bad/key": ""}},
            [
                'data[bad/key]: Invalid value: "bad/key": a valid config key must consist of '
                "alphanumeric characters, "
                "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
                "validation is "
                "'[-._a-zA-Z0-9]+')"
            ],
            id="bad-key",
        ),
        pytest.param(
            {"type": "kubernetes.io/tls", "data": {"tls.crt": ""}},
            ["data[tls.key]: Required value"],
            id="tls-needs-key",
        ),
        pytest.param(
            {"type": "kubernetes.io/dockerconfigjson"},
            ["data[.dockerconfigjson]: Required value"],
            id="dockerconfigjson-needs-data",
        ),
    ],
)
def test_validate_secret(fields: dict[str, Any], expected: list[str]) -> None:
    assert texts(builtins.validate_secret(builtins.prepare_secret(secret(**fields)))) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param({"data": {"a": "eA=="}}, {"data": {"a": "eQ=="}}, [], id="mutable-data-changes"),
        pytest.param(
            {"immutable": True, "data": {"a": "eA=="}},
            {"immutable": True, "data": {"a": "eQ=="}},
            [f"data: {IMMUTABLE_WHEN_SET}"],
            id="immutable-data",
        ),
        pytest.param(
            {"immutable": True, "data": {"a": "eA=="}},
            {"immutable": True, "stringData": {"a": "y"}},
            [f"data: {IMMUTABLE_WHEN_SET}"],
            id="immutable-string-data",
        ),
        pytest.param(
            {"immutable": True, "data": {"a": "eA=="}},
            {"immutable": True, "data": {"a": "eA=="}, "metadata": {"name": "s", "labels": {"x": "y"}}},
            [],
            id="immutable-metadata-may-change",
        ),
        pytest.param(
            {"immutable": True},
            {"immutable": False},
            [f"immutable: {IMMUTABLE_WHEN_SET}"],
            id="unset-immutable",
        ),
        pytest.param({"immutable": True}, {}, [f"immutable: {IMMUTABLE_WHEN_SET}"], id="drop-immutable"),
        pytest.param({}, {"immutable": True}, [], id="set-immutable"),
        pytest.param(
            {"type": "Opaque"},
            {"type": "x"},
            ['type: Invalid value: "x": field is immutable'],
            id="type-immutable",
        ),
    ],
)
def test_validate_secret_update(old: dict[str, Any], new: dict[str, Any], expected: list[str]) -> None:
    stored = builtins.prepare_secret(secret(**old))
    updated = builtins.prepare_secret(secret(**new))
    assert texts(builtins.validate_secret_update(stored, updated)) == expected


# -- Leases (S55) ---------------------------------------------------------------------------------------


def lease(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": spec}


def test_prepare_lease_normalises_times_and_drops_gated_fields() -> None:
    body = lease(
        holderIdentity="me",
        acquireTime="2025-01-01T01:00:00.123456+01:00",
        renewTime="2025-01-01T00:00:01.000000Z",
        strategy="OldestEmulationVersion",
        preferredHolder="other",
    )
    before = copy.deepcopy(body)
    assert builtins.prepare_lease(body)["spec"] == {
        "holderIdentity": "me",
        "acquireTime": "2025-01-01T00:00:00.123456Z",
        "renewTime": "2025-01-01T00:00:01.000000Z",
    }
    assert body == before


def test_prepare_lease_drops_null_times() -> None:
    assert builtins.prepare_lease(lease(renewTime=None))["spec"] == {}


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        pytest.param(
            "2025-01-01T00:00:00Z",
            'parsing time "2025-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse '
            '"Z" as ".000000"',
            id="no-microseconds",
        ),
        pytest.param(
            "2025-01-01T00:00:00.123456",
            'parsing time "2025-01-01T00:00:00.123456" as "2006-01-02T15:04:05.000000Z07:00": cannot '
            'parse "" as "Z07:00"',
            id="naive-datetime",
        ),
    ],
)
def test_prepare_lease_refuses_bad_micro_time(text: str, detail: str) -> None:
    with pytest.raises(errors.ApiError) as info:
        builtins.prepare_lease(lease(renewTime=text))
    assert info.value.code == 400
    assert info.value.message == f'Lease in version "v1" cannot be handled as a Lease: {detail}'


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"leaseDurationSeconds": 15, "leaseTransitions": 0}, [], id="valid"),
        pytest.param({}, [], id="empty-spec"),
        pytest.param(
            {"leaseDurationSeconds": 0},
            ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"],
            id="zero-duration",
        ),
        pytest.param(
            {"leaseTransitions": -1},
            ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"],
            id="negative-transitions",
        ),
    ],
)
def test_validate_lease(spec: dict[str, Any], expected: list[str]) -> None:
    assert texts(builtins.validate_lease(lease(**spec))) == expected


# -- Events (S57) ---------------------------------------------------------------------------------------

EVENT_TIME = "2025-01-01T00:00:00.000000Z"


def core_event(namespace: str = "ns", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": namespace}, **fields}


def v1_event(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "eventTime": EVENT_TIME,
        "reportingController": "arcsm.example.com/controller",
        "reportingInstance": "arcsm-0",
        "action": "Scale",
        "reason": "Scaled",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"},
    }
    body.update(fields)
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        **body,
    }


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        pytest.param(core_event(involvedObject={"namespace": "ns"}), [], id="same-namespace"),
        pytest.param(
            core_event(involvedObject={"namespace": "other"}),
            ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
            id="other-namespace",
        ),
        pytest.param(core_event("default", involvedObject={}), [], id="cluster-object-in-default"),
        pytest.param(
            core_event("ns", involvedObject={}),
            ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
            id="cluster-object-elsewhere",
        ),
        pytest.param(
            core_event(involvedObject={"namespace": "ns"}, eventTime=EVENT_TIME),
            [
                "reportingController: Required value",
                'reportingController: Invalid value: "": name part must be non-empty',
                'reportingController: Invalid value: "": name part must consist of alphanumeric characters, '
                "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                "'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "reportingInstance: Required value",
                "action: Required value",
                "reason: Required value",
            ],
            id="event-time-needs-reporting-fields",
        ),
        pytest.param(
            core_event(
                involvedObject={"namespace": "ns"},
                eventTime=EVENT_TIME,
                reportingComponent="c",
                reportingInstance="i",
                action="a" * 129,
                reason="r",
            ),
            ['action: Invalid value: "": can have at most 128 characters'],
            id="action-too-long",
        ),
    ],
)
def test_validate_core_event(event: dict[str, Any], expected: list[str]) -> None:
    assert texts(builtins.validate_core_event(event)) == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({}, [], id="valid"),
        pytest.param(
            {"eventTime": None},
            ["eventTime: Required value"],
            id="event-time-required",
        ),
        pytest.param(
            {"type": "Info"},
            ['type: Invalid value: "": has invalid value: Info'],
            id="bad-type",
        ),
        pytest.param(
            {
                "deprecatedCount": 3,
                "deprecatedFirstTimestamp": "2025-01-01T00:00:00Z",
                "deprecatedSource": {"component": "x"},
            },
            [
                'firstTimestamp: Invalid value: "": needs to be unset',
                'count: Invalid value: "": needs to be unset',
                'source: Invalid value: "": needs to be unset',
            ],
            id="deprecated-fields-must-be-unset",
        ),
        pytest.param(
            {"series": {"count": 1}},
            [
                'series.count: Invalid value: "": should be at least 2',
                "series.lastObservedTime: Required value",
            ],
            id="series",
        ),
        pytest.param(
            {"regarding": {"kind": "Pod", "name": "p", "namespace": "other"}},
            [],
            id="regarding-in-other-namespace-allowed-with-event-time",
        ),
        pytest.param(
            {"regarding": {"kind": "Node", "name": "n"}},
            ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
            id="cluster-scoped-regarding-outside-default",
        ),
        pytest.param(
            {"reportingController": "not a qualified name"},
            [
                'reportingController: Invalid value: "not a qualified name": name part must consist '
                "of alphanumeric "
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'MyName',  "
                "or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
            id="reporting-controller-qualified-name",
        ),
    ],
)
def test_validate_events_v1(fields: dict[str, Any], expected: list[str]) -> None:
    assert texts(builtins.validate_events_v1(v1_event(**fields))) == expected


def test_validate_events_v1_update() -> None:
    old = v1_event()
    series = {"count": 2, "lastObservedTime": EVENT_TIME}
    assert builtins.validate_events_v1_update(old, v1_event(series=series)) == []
    assert texts(builtins.validate_events_v1_update(old, v1_event(note="changed"))) == [
        'message: Invalid value: "changed": field is immutable'
    ]


def test_events_v1_to_core() -> None:
    v1 = v1_event(note="scaled to 3", related={"kind": "Pod", "name": "q"}, deprecatedCount=0)
    assert builtins.events_v1_to_core(v1) == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
        "reason": "Scaled",
        "message": "scaled to 3",
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "type": "Normal",
        "eventTime": EVENT_TIME,
        "action": "Scale",
        "related": {"kind": "Pod", "name": "q"},
        "reportingComponent": "arcsm.example.com/controller",
        "reportingInstance": "arcsm-0",
    }


def test_core_to_events_v1() -> None:
    core = core_event(
        involvedObject={"kind": "Pod", "name": "p", "namespace": "ns"},
        reason="Started",
        message="started",
        source={"component": "kubelet", "host": "node-1"},
        firstTimestamp="2025-01-01T00:00:00Z",
        lastTimestamp="2025-01-01T00:00:05Z",
        count=2,
        type="Normal",
        eventTime=None,
        reportingComponent="",
        reportingInstance="",
    )
    assert builtins.core_to_events_v1(core) == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        "eventTime": None,
        "reason": "Started",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"},
        "note": "started",
        "type": "Normal",
        "deprecatedSource": {"component": "kubelet", "host": "node-1"},
        "deprecatedFirstTimestamp": "2025-01-01T00:00:00Z",
        "deprecatedLastTimestamp": "2025-01-01T00:00:05Z",
        "deprecatedCount": 2,
    }


def test_event_views_round_trip() -> None:
    v1 = v1_event(note="n", series={"count": 2, "lastObservedTime": EVENT_TIME})
    back = builtins.core_to_events_v1(builtins.events_v1_to_core(v1))
    assert {k: v for k, v in back.items() if v not in (None, {})} == v1


# -- RBAC (S66) -----------------------------------------------------------------------------------------


def binding(
    role_ref: dict[str, Any] | None = None, subjects: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "b"},
    }
    if role_ref is not None:
        body["roleRef"] = role_ref
    if subjects is not None:
        body["subjects"] = subjects
    return body


ROLE_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "runner"}


@pytest.mark.parametrize(
    ("rb", "expected"),
    [
        pytest.param(
            binding(ROLE_REF, [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]), [], id="valid"
        ),
        pytest.param(binding({"kind": "ClusterRole", "name": "view"}), [], id="api-group-defaulted"),
        pytest.param(
            binding(),
            [
                'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
                "roleRef.name: Required value",
            ],
            id="role-ref-missing",
        ),
        pytest.param(
            binding({"apiGroup": "example.com", "kind": "Deployment", "name": "a/b"}),
            [
                'roleRef.apiGroup: Unsupported value: "example.com": supported values: '
                '"rbac.authorization.k8s.io"',
                'roleRef.kind: Unsupported value: "Deployment": supported values: "Role", "ClusterRole"',
                "roleRef.name: Invalid value: \"a/b\": may not contain '/'",
            ],
            id="role-ref-wrong",
        ),
        pytest.param(
            binding(ROLE_REF, [{"kind": "Robot", "name": "r"}, {"kind": "User"}]),
            [
                'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
                '"User", "Group"',
                "subjects[1].name: Required value",
                'subjects[1].name: Invalid value: "": user name cannot be empty',
            ],
            id="subjects",
        ),
    ],
)
def test_validate_rolebinding(rb: dict[str, Any], expected: list[str]) -> None:
    assert texts(builtins.validate_rolebinding(rb)) == expected


def test_default_rolebinding() -> None:
    rb = binding(
        {"kind": "Role", "name": "r"},
        [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "s"}],
    )
    out = builtins.default_rolebinding(rb)
    assert out["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}
    assert out["subjects"] == [
        {"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"},
        {"kind": "ServiceAccount", "name": "s"},
    ]
    assert "apiGroup" not in rb["roleRef"]


@pytest.mark.parametrize(
    ("new_ref", "changed"),
    [
        pytest.param(dict(ROLE_REF), False, id="same"),
        pytest.param({"kind": "Role", "name": "runner"}, False, id="same-after-defaulting"),
        pytest.param({**ROLE_REF, "name": "other"}, True, id="other-role"),
        pytest.param({**ROLE_REF, "kind": "ClusterRole"}, True, id="other-kind"),
    ],
)
def test_validate_rolebinding_update(new_ref: dict[str, Any], changed: bool) -> None:
    errs = builtins.validate_rolebinding_update(binding(ROLE_REF), binding(new_ref))
    if not changed:
        assert errs == []
        return
    assert [(e.type, e.field, e.detail) for e in errs] == [
        ("FieldValueInvalid", "roleRef", "cannot change roleRef")
    ]
    assert str(errs[0]).startswith("roleRef: Invalid value: ") and str(errs[0]).endswith(
        ": cannot change roleRef"
    )


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        pytest.param([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], [], id="valid"),
        pytest.param(
            [{"apiGroups": [""], "resources": ["pods"]}],
            ["rules[0].verbs: Required value: verbs must contain at least one value"],
            id="verbs-required",
        ),
        pytest.param(
            [{"verbs": ["get"]}],
            [
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[0].resources: Required value: resource rules must supply at least one resource",
            ],
            id="resources-required",
        ),
        pytest.param(
            [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
            [
                'rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot '
                "apply to non-resource URLs"
            ],
            id="non-resource-urls",
        ),
    ],
)
def test_validate_role(rules: list[dict[str, Any]], expected: list[str]) -> None:
    assert texts(builtins.validate_role({"metadata": {"name": "r"}, "rules": rules})) == expected


# -- Namespaces -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ns", "finalizers", "labels"),
    [
        pytest.param(
            {"metadata": {"name": "arc"}}, ["kubernetes"], {"kubernetes.io/metadata.name": "arc"}, id="plain"
        ),
        pytest.param(
            {"metadata": {"name": "arc", "labels": {"team": "ci", "kubernetes.io/metadata.name": "x"}}},
            ["kubernetes"],
            {"team": "ci", "kubernetes.io/metadata.name": "arc"},
            id="label-overwritten",
        ),
        pytest.param(
            {"metadata": {"name": "arc"}, "spec": {"finalizers": ["example.com/x"]}},
            ["example.com/x", "kubernetes"],
            {"kubernetes.io/metadata.name": "arc"},
            id="kubernetes-finalizer-appended",
        ),
    ],
)
def test_default_namespace(ns: dict[str, Any], finalizers: list[str], labels: dict[str, str]) -> None:
    before = copy.deepcopy(ns)
    out = builtins.default_namespace(ns)
    assert out["spec"]["finalizers"] == finalizers
    assert out["metadata"]["labels"] == labels
    assert out["status"] == {"phase": "Active"}
    assert ns == before
