"""A container's environment and command line as the kubelet makes them (sim.environment,
sim.processes.command_line), over a plain store."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from sim import environment, processes, runtimes
from sim.store import Store

POD: dict[str, Any] = {
    "metadata": {
        "name": "p",
        "namespace": "team",
        "uid": "u-1",
        "labels": {"app": "web", "tier": "front"},
        "annotations": {"note": 'say "hi"'},
    },
    "spec": {"nodeName": "n1", "serviceAccountName": "robot"},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$(A)", "a"),
        ("x$(A)y$(B)z", "xaybz"),
        ("$(MISSING)", "$(MISSING)"),
        ("$$(A)", "$(A)"),
        ("$$", "$"),
        ("$(A", "$(A"),
        ("$A", "$A"),
        ("cost: 5$", "cost: 5$"),
        ("$()", "$()"),
    ],
)
def test_expansion_follows_kubernetes(text: str, expected: str) -> None:
    assert environment.expand(text, {"A": "a", "B": "b"}.get) == expected


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("metadata.name", "p"),
        ("metadata.namespace", "team"),
        ("metadata.uid", "u-1"),
        ("metadata.labels['app']", "web"),
        ("metadata.labels['nope']", ""),
        ("metadata.annotations['note']", 'say "hi"'),
        ("spec.nodeName", "n1"),
        ("spec.serviceAccountName", "robot"),
        ("status.podIP", "127.244.0.2"),
        ("status.hostIP", "192.168.49.2"),
    ],
)
def test_field_values(path: str, value: str) -> None:
    assert environment.field_value(POD, path, pod_ip="127.244.0.2", host_ip="192.168.49.2") == value


def test_whole_label_maps_are_formatted_for_volumes_only() -> None:
    text = environment.field_value(POD, "metadata.labels", pod_ip="", host_ip="", whole_maps=True)
    assert text == 'app="web"\ntier="front"'
    with pytest.raises(ValueError, match="unsupported fieldPath"):
        environment.field_value(POD, "metadata.labels", pod_ip="", host_ip="")


@pytest.mark.parametrize(
    ("resources", "resource", "divisor", "value"),
    [
        ({"limits": {"cpu": "500m"}}, "limits.cpu", None, "1"),
        ({"limits": {"cpu": "500m"}}, "limits.cpu", "1m", "500"),
        ({"requests": {"memory": "64Mi"}}, "requests.memory", "1Mi", "64"),
        ({}, "limits.memory", "1Gi", "16"),  # no limit: the node's allocatable
    ],
)
def test_resource_values(resources: dict[str, Any], resource: str, divisor: str | None, value: str) -> None:
    assert environment.resource_value({"resources": resources}, resource, divisor) == value


def store_with_objects() -> Store:
    store = Store()
    store.put(
        ("", "configmaps", "team", "cm"),
        {"metadata": {"name": "cm"}, "data": {"level": "debug", "1bad": "x"}},
    )
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in {"user": "u", "pass": "p"}.items()}
    store.put(("", "secrets", "team", "s"), {"metadata": {"name": "s"}, "data": encoded})
    store.put(
        ("", "endpoints", "default", "kubernetes"),
        {
            "metadata": {"name": "kubernetes"},
            "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": 6443}]}],
        },
    )
    return store


def test_env_from_env_and_the_service_variables_in_kubelet_order() -> None:
    container = {
        "envFrom": [{"configMapRef": {"name": "cm"}}, {"secretRef": {"name": "s"}, "prefix": "S_"}],
        "env": [
            {"name": "level", "value": "overridden $(S_user)"},
            {"name": "URL", "value": "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
            {"name": "KUBERNETES_SERVICE_PORT", "value": "mine"},
            {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "s", "key": "pass"}}},
        ],
    }
    env = environment.container_env(store_with_objects(), POD, container, pod_ip="", host_ip="")
    assert env["level"] == "overridden u"
    assert "1bad" not in env  # not a variable name
    assert (env["S_user"], env["S_pass"], env["PASS"]) == ("u", "p", "p")
    assert env["URL"] == "https://127.0.0.1:6443"
    assert env["KUBERNETES_SERVICE_PORT"] == "mine"  # a container's own variable wins
    assert env["KUBERNETES_SERVICE_PORT_HTTPS"] == "6443"
    assert env["KUBERNETES_PORT_6443_TCP_ADDR"] == "127.0.0.1"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"secretKeyRef": {"name": "nope", "key": "k"}}, 'secret "nope" not found'),
        ({"secretKeyRef": {"name": "s", "key": "k"}}, "couldn't find key k in Secret team/s"),
        ({"configMapKeyRef": {"name": "nope", "key": "k"}}, 'configmap "nope" not found'),
        ({"configMapKeyRef": {"name": "cm", "key": "k"}}, "couldn't find key k in ConfigMap team/cm"),
    ],
)
def test_missing_references_are_config_errors_unless_optional(source: dict[str, Any], message: str) -> None:
    store = store_with_objects()
    container = {"env": [{"name": "X", "valueFrom": source}]}
    with pytest.raises(runtimes.ContainerConfigError) as caught:
        environment.container_env(store, POD, container, pod_ip="", host_ip="")
    assert str(caught.value) == message
    kind = next(iter(source))
    optional = {"env": [{"name": "X", "valueFrom": {kind: {**source[kind], "optional": True}}}]}
    assert "X" not in environment.container_env(store, POD, optional, pod_ip="", host_ip="")


IMAGE = processes.Image(
    entrypoint=("/entry",), cmd=("--default",), executables={"/tool": ("/usr/bin/real", "sub")}
)


@pytest.mark.parametrize(
    ("container", "argv"),
    [
        ({}, ["/entry", "--default"]),
        ({"args": ["--mine", "$(X)"]}, ["/entry", "--mine", "x"]),
        ({"command": ["/bin/sh"]}, ["/bin/sh"]),
        ({"command": ["/bin/sh"], "args": ["-c", "echo $(X) $$(X)"]}, ["/bin/sh", "-c", "echo x $(X)"]),
        ({"command": ["/tool", "--flag"]}, ["/usr/bin/real", "sub", "--flag"]),
    ],
)
def test_command_lines_follow_command_and_args_over_the_image(
    container: dict[str, Any], argv: list[str]
) -> None:
    assert processes.command_line(IMAGE, container, {"X": "x"}) == argv
