"""Unit tests of sim.pods: quantities, pod defaults and admission (S58), validation, update limits (S61)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from sim import errors, pods

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
FORBIDDEN_UPDATE = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
    "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously "
    "negative)"
)


def texts(errs: list[errors.FieldError]) -> list[str]:
    return [str(e) for e in errs]


def pod(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "runner", "image": "ghcr.io/actions/runner:2.321.0"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "r", "namespace": "ns"}, "spec": body}


def created(**spec: Any) -> dict[str, Any]:
    return pods.default_pod(pod(**spec), random.Random(3))


# -- quantities -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("0.5", "500m", id="half-cpu"),
        pytest.param("1000m", "1", id="whole-millis"),
        pytest.param("2000m", "2", id="two-cpus"),
        pytest.param("1500m", "1500m", id="millis-kept"),
        pytest.param("1", "1", id="one"),
        pytest.param("1000", "1k", id="thousand-is-1k"),
        pytest.param("1Gi", "1Gi", id="gibibyte"),
        pytest.param("1024Mi", "1Gi", id="mebibytes-folded"),
        pytest.param("1000Mi", "1000Mi", id="mebibytes-kept"),
        pytest.param("1.5Gi", "1536Mi", id="fractional-gibibytes"),
        pytest.param("0.5Ki", "512", id="binary-below-1024-is-decimal"),
        pytest.param("100M", "100M", id="megabytes"),
        pytest.param("1e3", "1e3", id="exponent"),
        pytest.param("1.5e3", "1500", id="exponent-folded"),
        pytest.param("0.1m", "100u", id="micro"),
        pytest.param("0.0000000001", "1n", id="rounded-up-to-nano"),
        pytest.param("0", "0", id="zero"),
        pytest.param(0.5, "500m", id="json-number"),
        pytest.param(2, "2", id="json-integer"),
    ],
)
def test_canonical_quantity(text: Any, canonical: str) -> None:
    assert pods.canonicalize_quantity(text) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("abc", pods.QUANTITY_FORMAT_ERROR, id="letters"),
        pytest.param("", pods.QUANTITY_FORMAT_ERROR, id="empty"),
        pytest.param("1x", pods.QUANTITY_FORMAT_ERROR, id="bad-suffix-char"),
        pytest.param("1Gii", "unable to parse quantity's suffix", id="bad-suffix"),
        pytest.param(True, pods.QUANTITY_FORMAT_ERROR, id="bool"),
    ],
)
def test_bad_quantity(text: Any, message: str) -> None:
    with pytest.raises(pods.QuantityError) as info:
        pods.parse_quantity(text)
    assert str(info.value) == message


# -- create defaults and admission (S58) ----------------------------------------------------------------


def test_default_pod_spec_and_container_defaults() -> None:
    out = created()
    spec = out["spec"]
    assert {
        k: spec[k] for k in ("restartPolicy", "terminationGracePeriodSeconds", "dnsPolicy", "schedulerName")
    } == {
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
    }
    assert spec["enableServiceLinks"] is True
    assert spec["securityContext"] == {}
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    container = spec["containers"][0]
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["terminationMessagePolicy"] == "File"
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["resources"] == {}
    assert out["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_default_tolerations() -> None:
    assert created()["spec"]["tolerations"] == [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ]


def test_existing_toleration_suppresses_default() -> None:
    own = {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 5,
    }
    keys = [t["key"] for t in created(tolerations=[own])["spec"]["tolerations"]]
    assert keys == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        pytest.param("busybox", "Always", id="no-tag"),
        pytest.param("busybox:latest", "Always", id="latest"),
        pytest.param("busybox:1.36", "IfNotPresent", id="tag"),
        pytest.param("registry:5000/busybox", "Always", id="registry-port-no-tag"),
        pytest.param("registry:5000/busybox:1", "IfNotPresent", id="registry-port-and-tag"),
        pytest.param("busybox@sha256:" + "a" * 64, "IfNotPresent", id="digest"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    out = created(containers=[{"name": "c", "image": image}])
    assert out["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_ports_default_to_tcp() -> None:
    out = created(containers=[{"name": "c", "image": "x:1", "ports": [{"containerPort": 8080}]}])
    assert out["spec"]["containers"][0]["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]


def test_token_volume_and_mounts() -> None:
    out = created(initContainers=[{"name": "init", "image": "x:1"}])
    volumes = out["spec"]["volumes"]
    assert len(volumes) == 1
    name = volumes[0]["name"]
    assert name.startswith("kube-api-access-") and len(name) == len("kube-api-access-") + 5
    assert volumes[0]["projected"]["defaultMode"] == 420
    assert volumes[0]["projected"]["sources"][0] == {
        "serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}
    }
    for key in ("initContainers", "containers"):
        assert out["spec"][key][0]["volumeMounts"] == [
            {"name": name, "readOnly": True, "mountPath": TOKEN_PATH}
        ]


@pytest.mark.parametrize(
    ("spec", "service_account"),
    [
        pytest.param({"automountServiceAccountToken": False}, None, id="pod-opts-out"),
        pytest.param({}, {"automountServiceAccountToken": False}, id="service-account-opts-out"),
    ],
)
def test_no_token_volume_when_automount_is_off(
    spec: dict[str, Any], service_account: dict[str, Any] | None
) -> None:
    out = pods.default_pod(pod(**spec), random.Random(1), service_account=service_account)
    assert "volumes" not in out["spec"]
    assert "volumeMounts" not in out["spec"]["containers"][0]


def test_pod_setting_overrides_service_account_automount() -> None:
    out = pods.default_pod(
        pod(automountServiceAccountToken=True),
        random.Random(1),
        service_account={"automountServiceAccountToken": False},
    )
    assert len(out["spec"]["volumes"]) == 1


def test_existing_mount_at_token_path_is_kept() -> None:
    mine = {"name": "mine", "mountPath": TOKEN_PATH}
    out = created(
        containers=[{"name": "c", "image": "x:1", "volumeMounts": [mine]}],
        volumes=[{"name": "mine", "emptyDir": {}}],
    )
    assert out["spec"]["containers"][0]["volumeMounts"] == [mine]
    assert [v["name"] for v in out["spec"]["volumes"]] == ["mine"]


def test_token_volume_suffix_comes_from_rand() -> None:
    first = pods.default_pod(pod(), random.Random(5))["spec"]["volumes"][0]["name"]
    again = pods.default_pod(pod(), random.Random(5))["spec"]["volumes"][0]["name"]
    assert first == again


@pytest.mark.parametrize(
    ("resources", "qos", "stored"),
    [
        pytest.param({}, "BestEffort", {}, id="best-effort"),
        pytest.param(
            {"limits": {"cpu": "0.5", "memory": "1Gi"}},
            "Guaranteed",
            {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
            id="limits-only-copied-to-requests",
        ),
        pytest.param(
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1024Mi"}},
            "Guaranteed",
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
            id="equal-after-canonicalising",
        ),
        pytest.param(
            {"requests": {"cpu": "250m"}},
            "Burstable",
            {"requests": {"cpu": "250m"}},
            id="requests-only",
        ),
        pytest.param(
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}},
            "Burstable",
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
            id="requests-below-limits",
        ),
        pytest.param(
            {"limits": {"cpu": "1"}},
            "Burstable",
            {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
            id="cpu-limit-only",
        ),
        pytest.param(
            {"requests": {"ephemeral-storage": "1Gi"}},
            "BestEffort",
            {"requests": {"ephemeral-storage": "1Gi"}},
            id="non-qos-resource-ignored",
        ),
    ],
)
def test_qos_and_canonical_resources(resources: dict[str, Any], qos: str, stored: dict[str, Any]) -> None:
    out = created(containers=[{"name": "c", "image": "x:1", "resources": resources}])
    assert out["status"]["qosClass"] == qos
    assert out["spec"]["containers"][0]["resources"] == stored


def test_guaranteed_needs_every_container() -> None:
    full = {"limits": {"cpu": "1", "memory": "1Gi"}}
    out = created(
        containers=[{"name": "a", "image": "x:1", "resources": full}, {"name": "b", "image": "x:1"}],
    )
    assert out["status"]["qosClass"] == "Burstable"


def test_bad_quantity_is_a_decode_error() -> None:
    with pytest.raises(errors.ApiError) as info:
        created(containers=[{"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "lots"}}}])
    assert info.value.code == 400
    assert info.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_status_is_reset_on_create() -> None:
    body = pod()
    body["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    assert pods.default_pod(body, random.Random(1))["status"] == {
        "phase": "Pending",
        "qosClass": "BestEffort",
    }


def test_default_pod_does_not_mutate_input() -> None:
    body = pod(containers=[{"name": "c", "image": "x", "resources": {"limits": {"cpu": "0.5"}}}])
    before = copy.deepcopy(body)
    pods.default_pod(body, random.Random(1))
    assert body == before


def test_canonicalize_pod_keeps_status_and_skips_admission() -> None:
    body = pod(containers=[{"name": "c", "image": "x:1", "resources": {"requests": {"cpu": "0.5"}}}])
    body["status"] = {"phase": "Running"}
    out = pods.canonicalize_pod(body)
    assert out["status"] == {"phase": "Running"}
    assert "tolerations" not in out["spec"] and "volumes" not in out["spec"] and "priority" not in out["spec"]
    assert out["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "500m"}}


def test_deprecated_service_account_field_is_honoured() -> None:
    out = created(serviceAccount="runner-sa")
    assert out["spec"]["serviceAccountName"] == out["spec"]["serviceAccount"] == "runner-sa"


def test_probe_and_volume_defaults() -> None:
    probe = {"httpGet": {"port": 8080}}
    out = created(
        containers=[{"name": "c", "image": "x:1", "livenessProbe": probe}],
        volumes=[{"name": "s", "secret": {"secretName": "x"}}],
    )
    assert out["spec"]["containers"][0]["livenessProbe"] == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert out["spec"]["volumes"][0] == {"name": "s", "secret": {"secretName": "x", "defaultMode": 420}}


# -- validation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, [], id="valid"),
        pytest.param({"containers": []}, ["spec.containers: Required value"], id="no-containers"),
        pytest.param(
            {"containers": [{"image": "x:1"}]},
            ["spec.containers[0].name: Required value"],
            id="container-name-required",
        ),
        pytest.param(
            {"containers": [{"name": "c"}]},
            ["spec.containers[0].image: Required value"],
            id="image-required",
        ),
        pytest.param(
            {"containers": [{"name": "Runner_1", "image": "x:1"}]},
            [
                'spec.containers[0].name: Invalid value: "Runner_1": a lowercase RFC 1123 label must '
                "consist of "
                "lower case alphanumeric characters or '-', and must start and end with an "
                "alphanumeric character "
                "(e.g. 'my-name',  or '123-abc', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ],
            id="container-name-dns-label",
        ),
        pytest.param(
            {"containers": [{"name": "c", "image": "x:1"}, {"name": "c", "image": "y:1"}]},
            ['spec.containers[1].name: Duplicate value: "c"'],
            id="duplicate-container-name",
        ),
        pytest.param(
            {"initContainers": [{"name": "runner", "image": "x:1"}]},
            ['spec.initContainers[0].name: Duplicate value: "runner"'],
            id="init-container-name-clashes",
        ),
        pytest.param(
            {"restartPolicy": "Sometimes"},
            [
                'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
                '"OnFailure", "Never"'
            ],
            id="restart-policy",
        ),
        pytest.param(
            {"containers": [{"name": "c", "image": "x:1", "imagePullPolicy": "Often"}]},
            [
                'spec.containers[0].imagePullPolicy: Unsupported value: "Often": supported values: "Always", '
                '"IfNotPresent", "Never"'
            ],
            id="pull-policy",
        ),
        pytest.param(
            {
                "containers": [
                    {"name": "c", "image": "x:1", "ports": [{"containerPort": 70000, "protocol": "ICMP"}]}
                ]
            },
            [
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 "
                "and 65535, inclusive",
                'spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: '
                '"SCTP", "TCP", "UDP"',
            ],
            id="ports",
        ),
        pytest.param(
            {
                "containers": [
                    {
                        "name": "c",
                        "image": "x:1",
                        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
                    }
                ]
            },
            [
                'spec.containers[0].resources.requests: Invalid value: "2": must be less than or '
                "equal to cpu limit of 1"
            ],
            id="requests-above-limits",
        ),
        pytest.param(
            {"activeDeadlineSeconds": 0},
            ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
            id="active-deadline",
        ),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
            [
                'spec.tolerations[0].operator: Invalid value: "v": value must be empty when '
                "`operator` is 'Exists'"
            ],
            id="toleration-exists-with-value",
        ),
        pytest.param(
            {"containers": [{"name": "c", "image": " x:1"}]},
            ['spec.containers[0].image: Invalid value: " x:1": must not have leading or trailing whitespace'],
            id="image-whitespace",
        ),
    ],
)
def test_validate_pod(spec: dict[str, Any], expected: list[str]) -> None:
    assert texts(pods.validate_pod(created(**spec))) == expected


# -- update restrictions (S61) --------------------------------------------------------------------------


def mutate(stored: dict[str, Any], change: Any) -> dict[str, Any]:
    new = copy.deepcopy(stored)
    change(new["spec"])
    return pods.canonicalize_pod(new)


def _set(key: str, value: Any) -> Any:
    return lambda spec: spec.__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(lambda s: None, [], id="unchanged"),
        pytest.param(lambda s: s["containers"][0].__setitem__("image", "x:2"), [], id="image"),
        pytest.param(_set("activeDeadlineSeconds", 100), [], id="set-deadline"),
        pytest.param(
            lambda s: s["tolerations"].append({"key": "k", "operator": "Exists", "effect": "NoSchedule"}),
            [],
            id="add-toleration",
        ),
        pytest.param(
            lambda s: s["tolerations"][0].__setitem__("tolerationSeconds", 10), [], id="toleration-seconds"
        ),
        pytest.param(_set("nodeName", "node-1"), [FORBIDDEN_UPDATE], id="node-name"),
        pytest.param(_set("restartPolicy", "Never"), [FORBIDDEN_UPDATE], id="restart-policy"),
        pytest.param(
            lambda s: s["containers"][0].__setitem__("env", [{"name": "A", "value": "1"}]),
            [FORBIDDEN_UPDATE],
            id="container-env",
        ),
        pytest.param(
            lambda s: s["containers"].append({"name": "more", "image": "x:1"}),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"],
            id="add-container",
        ),
        pytest.param(
            lambda s: s["tolerations"].pop(0),
            [
                "spec.tolerations: Forbidden: existing toleration can not be modified except its "
                "tolerationSeconds"
            ],
            id="remove-toleration",
        ),
        pytest.param(
            lambda s: s["containers"][0].__setitem__("image", ""),
            ["spec.containers[0].image: Required value", "spec.containers[0].image: Required value"],
            id="image-removed",
        ),
    ],
)
def test_validate_pod_update(change: Any, expected: list[str]) -> None:
    stored = created()
    assert texts(pods.validate_pod_update(stored, mutate(stored, change))) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(100, 50, [], id="shorten"),
        pytest.param(
            50,
            100,
            ["spec.activeDeadlineSeconds: Invalid value: 100: must be less than or equal to previous value"],
            id="extend",
        ),
        pytest.param(
            50,
            None,
            [
                "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive "
                "integer to nil value"
            ],
            id="unset",
        ),
    ],
)
def test_active_deadline_updates(old: int, new: int | None, expected: list[str]) -> None:
    stored = created(activeDeadlineSeconds=old)
    changed = mutate(
        stored,
        lambda s: s.__setitem__("activeDeadlineSeconds", new) if new else s.pop("activeDeadlineSeconds"),
    )
    assert texts(pods.validate_pod_update(stored, changed)) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(-1, 1, [], id="negative-to-one"),
        pytest.param(30, 60, [FORBIDDEN_UPDATE], id="otherwise-immutable"),
    ],
)
def test_grace_period_updates(old: int, new: int, expected: list[str]) -> None:
    stored = created(terminationGracePeriodSeconds=old)
    changed = mutate(stored, _set("terminationGracePeriodSeconds", new))
    assert texts(pods.validate_pod_update(stored, changed)) == expected
