"""Decoding built-in objects against the shapes read from kubernetes_asyncio's models (sim.decoding,
sim.builtinschemas): Go's paths, type names and error texts, table-driven. No server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sim import builtinschemas, decoding, quantities
from sim.builtinschemas import ListOf, MapOf, Quantity, Scalar, Struct, Time

POD = builtinschemas.schema("v1", "Pod")


def test_every_served_built_in_kind_has_a_schema() -> None:
    from sim.kinds import BUILTIN

    missing = [k.kind for k in BUILTIN if builtinschemas.schema(k.api_version, k.kind) is None]
    assert missing == []


def test_the_schema_carries_go_type_names_and_the_special_leaves() -> None:
    assert POD is not None and POD.go_type == "v1.Pod"
    spec = POD.fields["spec"]
    assert isinstance(spec, Struct)
    containers = spec.fields["containers"]
    assert isinstance(containers, ListOf) and containers.go_type == "[]v1.Container"
    assert spec.fields["terminationGracePeriodSeconds"] == Scalar("integer", "int64", 64)
    assert spec.fields["overhead"] == MapOf(Quantity(), "v1.ResourceList")
    lease = builtinschemas.schema("coordination.k8s.io/v1", "Lease")
    assert lease is not None
    lease_spec = lease.fields["spec"]
    assert isinstance(lease_spec, Struct) and lease_spec.fields["renewTime"] == Time(micro=True)
    events_v1 = builtinschemas.schema("events.k8s.io/v1", "Event")
    assert events_v1 is not None and "note" in events_v1.fields  # EventsV1Event, not CoreV1Event


def test_recursive_models_are_one_cyclic_node() -> None:
    crd = builtinschemas.schema("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd is not None
    props = crd.fields["spec"].fields["versions"].item.fields["schema"].fields["openAPIV3Schema"]  # type: ignore[union-attr]
    assert props.fields["properties"].value is props


@pytest.mark.parametrize(
    ("container", "value", "where", "go_type"),
    [
        ({"ports": "80"}, "string", "Container.spec.containers.ports", "[]v1.ContainerPort"),
        (
            {"ports": [{"containerPort": -2147483649}]},
            "number -2147483649",
            "ContainerPort.spec.containers.ports.containerPort",
            "int32",
        ),
        ({"stdin": 1}, "number", "Container.spec.containers.stdin", "bool"),
        ({"command": [1]}, "number", "Container.spec.containers.command", "string"),
        (
            {"securityContext": {"runAsUser": "root"}},
            "string",
            "SecurityContext.spec.containers.securityContext.runAsUser",
            "int64",
        ),
        ({"resources": []}, "array", "Container.spec.containers.resources", "v1.ResourceRequirements"),
    ],
)
def test_type_errors(container: dict[str, Any], value: str, where: str, go_type: str) -> None:
    assert POD is not None
    pod = {"spec": {"containers": [{"name": "c", **container}]}}
    with pytest.raises(decoding.DecodeError) as caught:
        decoding.decode(POD, pod)
    assert (
        str(caught.value) == f"json: cannot unmarshal {value} into Go struct field {where} of type {go_type}"
    )


def test_the_first_type_error_wins_and_unknown_fields_are_in_document_order() -> None:
    assert POD is not None
    pod = {"spec": {"hostNetwork": "no", "containers": "x"}}
    with pytest.raises(decoding.DecodeError, match=r"PodSpec\.spec\.hostNetwork of type bool"):
        decoding.decode(POD, pod)
    out, unknown = decoding.decode(
        POD,
        {
            "b": 1,
            "metadata": {"labels": {"k": "v"}, "z": 1},
            "spec": {"volumes": [{"name": "v", "bogus": {}}]},
        },
    )
    assert unknown == [
        'unknown field "b"',
        'unknown field "metadata.z"',
        'unknown field "spec.volumes[0].bogus"',
    ]
    assert out == {"metadata": {"labels": {"k": "v"}}, "spec": {"volumes": [{"name": "v"}]}}


def test_an_unchanged_object_is_returned_as_is() -> None:
    assert POD is not None
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    out, unknown = decoding.decode(POD, pod)
    assert out is pod and unknown == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1", None),
        ("500m", None),
        ("1.5Gi", None),
        ("1e3", None),
        ("+2", None),
        ("two", "quantities must match"),
        ("1KiB", "quantities must match"),
        ("1.2.3", "quantities must match"),
        ("", "quantities must match"),
        ("1mi", "unable to parse quantity's suffix"),
        ("1e", "unable to parse quantity's suffix"),
    ],
)
def test_quantities(text: str, error: str | None) -> None:
    assert POD is not None
    pod = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": text}}}]}}
    if error is None:
        decoding.decode(POD, pod)
    else:
        with pytest.raises(decoding.DecodeError, match=error):
            decoding.decode(POD, pod)


def test_go_print_matches_fmt_plus_v() -> None:
    value = {"b": [1, 2.5, "x"], "a": {"z": None, "y": True}, "c": 1e21}
    assert decoding.go_print(value) == "map[a:map[y:true z:<nil>] b:[1 2.5 x] c:1e+21]"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1500", "1500"),
        ("2000", "2k"),
        ("2048Mi", "2Gi"),
        ("1536Mi", "1536Mi"),
        ("512", "512"),
        ("0.5Gi", "512Mi"),
        ("1.5Ki", "1536"),
        ("100M", "100M"),
        ("1e3", "1e3"),
        ("0", "0"),
        ("-1.5", "-1500m"),
        ("0.1n", "1n"),
    ],
)
def test_quantities_are_stored_canonical(text: str, canonical: str) -> None:
    assert quantities.parse(text) == canonical


def test_at_most_a_hundred_unknown_fields_are_reported() -> None:
    assert POD is not None
    out, unknown = decoding.decode(POD, {f"x{i}": i for i in range(150)})
    assert out == {} and unknown == [f'unknown field "x{i}"' for i in range(100)]


def test_keys_named_twice_are_duplicate_fields() -> None:
    assert POD is not None
    text = '{"metadata": {"name": "a", "name": "b", "labels": {"k": "1", "k": "2"}}, "spec": {}}'
    obj = json.loads(text, object_pairs_hook=decoding.object_pairs)
    out, strict = decoding.decode(POD, obj)
    assert strict == ['duplicate field "metadata.name"', 'duplicate field "metadata.labels.k"']
    assert out == {"metadata": {"name": "b", "labels": {"k": "2"}}, "spec": {}}
    assert type(out["metadata"]) is dict and type(out["metadata"]["labels"]) is dict
