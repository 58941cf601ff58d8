"""sim.schemas (with sim.schemanodes, sim.schemachecks): pruning, defaulting and validation of custom
resources against a structural schema, with kube's field paths and messages (apiserver-semantics.md S62,
S63, S64)."""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pytest
import yaml

import deploy
from sim import errors, schemachecks, schemanodes, schemas

CRD_FILES = [path for path in deploy.crd_paths() if "kind: CustomResourceDefinition" in path.read_text()]

QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}

TEMPLATE_METADATA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": STRING_MAP,
        "annotations": STRING_MAP,
        "finalizers": {"type": "array", "items": {"type": "string"}},
    },
}

CONTAINER = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "image": {"type": "string"},
        "args": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
            "items": {
                "type": "object",
                "required": ["containerPort"],
                "properties": {
                    "containerPort": {"type": "integer", "format": "int32"},
                    "name": {"type": "string"},
                    "protocol": {"type": "string", "default": "TCP"},
                },
            },
        },
        "env": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": "string"},
                    "valueFrom": {
                        "type": "object",
                        "properties": {
                            "secretKeyRef": {
                                "type": "object",
                                "required": ["key"],
                                "properties": {
                                    "key": {"type": "string"},
                                    "name": {"type": "string", "default": ""},
                                    "optional": {"type": "boolean"},
                                },
                            }
                        },
                    },
                },
            },
        },
        "resources": {
            "type": "object",
            "properties": {
                "limits": {
                    "type": "object",
                    "additionalProperties": {
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                        "pattern": QUANTITY,
                        "x-kubernetes-int-or-string": True,
                    },
                }
            },
        },
    },
}

ARS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["githubConfigUrl"],
            "properties": {
                "githubConfigUrl": {"type": "string", "minLength": 1},
                "githubConfigSecret": {"type": "string", "maxLength": 10},
                "minRunners": {"type": "integer", "minimum": 0},
                "maxRunners": {"type": "integer", "minimum": 0, "maximum": 100},
                "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0},
                "runnerGroup": {"type": "string", "default": "default"},
                "mode": {"type": "string", "enum": ["Ephemeral", "Persistent"]},
                "paused": {"type": "boolean"},
                "hash": {"type": "string", "pattern": "^[a-f0-9]+$"},
                "token": {"type": "string", "format": "byte"},
                "maxSurge": {
                    "x-kubernetes-int-or-string": True,
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                },
                "since": {"type": "string", "format": "date-time"},
                "labels": STRING_MAP,
                "scaleSetLabels": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": 3,
                    "x-kubernetes-list-type": "set",
                },
                "note": {"type": "string", "nullable": True},
                "proxy": {
                    "type": "object",
                    "properties": {
                        "http": {
                            "type": "object",
                            "required": ["url"],
                            "properties": {
                                "url": {"type": "string"},
                                "noProxy": {"type": "array", "items": {"type": "string"}},
                                "scheme": {"type": "string", "default": "http"},
                            },
                        }
                    },
                },
                "settings": {
                    "type": "object",
                    "default": {},
                    "properties": {
                        "retries": {"type": "integer", "default": 3},
                        "backoff": {
                            "type": "object",
                            "default": {},
                            "properties": {"seconds": {"type": "integer", "default": 10}},
                        },
                    },
                },
                "extra": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {
                        "known": {"type": "object", "properties": {"a": {"type": "string"}}},
                    },
                },
                "podSelector": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"weight": {"type": "integer", "default": 1}},
                    },
                },
                "embedded": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"data": STRING_MAP},
                },
                "rawObject": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "template": {
                    "type": "object",
                    "properties": {
                        "metadata": TEMPLATE_METADATA,
                        "spec": {
                            "type": "object",
                            "required": ["containers"],
                            "properties": {
                                "containers": {"type": "array", "items": CONTAINER},
                                "restartPolicy": {"type": "string"},
                                "priority": {"type": "integer", "format": "int32"},
                            },
                        },
                    },
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "currentRunners": {"type": "integer"},
                "failures": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "format": "date-time"},
                },
            },
        },
    },
}


@pytest.fixture(scope="module")
def schema() -> schemas.StructuralSchema:
    return schemas.StructuralSchema(ARS_SCHEMA)


def ars(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "githubConfigUrl": "https://github.com/org",
        "template": {"spec": {"containers": [{"name": "runner", "image": "ghcr.io/actions/runner"}]}},
    }
    base.update(spec)
    return {
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": "set", "namespace": "arc"},
        "spec": base,
    }


def messages(errs: list[errors.FieldError]) -> list[str]:
    return [str(e) for e in errs]


# ---------------------------------------------------------------------------------------------------------
# Pruning (S62)


def test_prune_drops_unknown_fields_everywhere_and_reports_sorted_paths(
    schema: schemas.StructuralSchema,
) -> None:
    obj = ars(bogus=1, proxy={"http": {"url": "u", "colour": "red"}})
    obj["unknownTop"] = {"a": 1}
    obj["status"] = {"currentRunners": 1, "nope": True}
    obj["spec"]["template"]["spec"]["containers"][0]["bogus"] = "x"
    obj["spec"]["template"]["spec"]["containers"].append(
        {"name": "side", "ports": [{"containerPort": 1, "x": 1}]}
    )

    out, unknown = schema.prune(obj)

    assert unknown == [
        "spec.bogus",
        "spec.proxy.http.colour",
        "spec.template.spec.containers[0].bogus",
        "spec.template.spec.containers[1].ports[0].x",
        "status.nope",
        "unknownTop",
    ]
    assert "unknownTop" not in out
    assert out["spec"]["proxy"] == {"http": {"url": "u"}}
    assert out["status"] == {"currentRunners": 1}
    assert out["spec"]["template"]["spec"]["containers"][0] == {
        "name": "runner",
        "image": "ghcr.io/actions/runner",
    }
    assert out["spec"]["template"]["spec"]["containers"][1]["ports"] == [{"containerPort": 1}]


def test_prune_keeps_type_and_object_meta_at_the_root_untouched(schema: schemas.StructuralSchema) -> None:
    obj = ars()
    obj["metadata"] = {"name": "set", "labels": {"a": "b"}, "whatever": 1, "uid": "u"}
    out, unknown = schema.prune(obj)
    assert unknown == []
    assert out["metadata"] == {"name": "set", "labels": {"a": "b"}, "whatever": 1, "uid": "u"}
    assert out["apiVersion"] == "actions.github.com/v1alpha1" and out["kind"] == "AutoscalingRunnerSet"


def test_prune_template_metadata_keeps_only_what_the_generated_schema_lists(
    schema: schemas.StructuralSchema,
) -> None:
    metadata = {
        "name": "n",
        "namespace": "ns",
        "labels": {"app": "runner"},
        "annotations": {"a": "b"},
        "finalizers": ["f"],
        "generateName": "g-",
        "uid": "123",
        "ownerReferences": [],
    }
    obj = ars(template={"metadata": metadata, "spec": {"containers": [{"name": "c"}]}})
    out, unknown = schema.prune(obj)
    assert out["spec"]["template"]["metadata"] == {
        "name": "n",
        "namespace": "ns",
        "labels": {"app": "runner"},
        "annotations": {"a": "b"},
        "finalizers": ["f"],
    }
    assert unknown == [
        "spec.template.metadata.generateName",
        "spec.template.metadata.ownerReferences",
        "spec.template.metadata.uid",
    ]


def test_prune_embedded_resource_coerces_object_meta(schema: schemas.StructuralSchema) -> None:
    embedded = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm",
            "generateName": "cm-",
            "labels": {"a": "b"},
            "annotations": {},
            "ownerReferences": [{"name": "o"}],
            "finalizers": "not-a-list",
            "bogus": 1,
        },
        "data": {"k": "v"},
        "unknown": 1,
    }
    out, unknown = schema.prune(ars(embedded=embedded))
    assert out["spec"]["embedded"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm",
            "generateName": "cm-",
            "labels": {"a": "b"},
            "ownerReferences": [{"name": "o"}],
        },
        "data": {"k": "v"},
    }
    assert unknown == ["spec.embedded.metadata.bogus", "spec.embedded.unknown"]


def test_prune_preserve_unknown_fields_keeps_unknown_keys_but_prunes_known_properties(
    schema: schemas.StructuralSchema,
) -> None:
    extra = {"anything": {"deep": [1, {"x": 2}]}, "known": {"a": "s", "b": "pruned"}}
    out, unknown = schema.prune(ars(extra=extra))
    assert out["spec"]["extra"] == {"anything": {"deep": [1, {"x": 2}]}, "known": {"a": "s"}}
    assert unknown == ["spec.extra.known.b"]

    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1}, "spec": {"anything": 1}}
    out, unknown = schema.prune(ars(rawObject=raw))
    assert out["spec"]["rawObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"anything": 1},
    }
    assert unknown == ["spec.rawObject.metadata.junk"]


def test_prune_applies_additional_properties_to_every_map_value(schema: schemas.StructuralSchema) -> None:
    out, unknown = schema.prune(ars(podSelector={"a": {"weight": 2, "x": 1}, "b": {"y": 1}}))
    assert out["spec"]["podSelector"] == {"a": {"weight": 2}, "b": {}}
    assert unknown == ["spec.podSelector.a.x", "spec.podSelector.b.y"]


def test_prune_object_without_properties_drops_every_key() -> None:
    schema = schemas.StructuralSchema({"type": "object", "properties": {"spec": {"type": "object"}}})
    out, unknown = schema.prune({"spec": {"a": 1, "b": {"c": 2}}})
    assert out == {"spec": {}}
    assert unknown == ["spec.a", "spec.b"]


def test_prune_int_or_string_values_pass_through(schema: schemas.StructuralSchema) -> None:
    for value in (1, "25%"):
        out, unknown = schema.prune(ars(maxSurge=value))
        assert out["spec"]["maxSurge"] == value
        assert unknown == []


def test_prune_does_not_modify_its_input_and_shares_untouched_subtrees(
    schema: schemas.StructuralSchema,
) -> None:
    obj = ars(bogus=1, labels={"a": "b"})
    before = copy.deepcopy(obj)
    out, _ = schema.prune(obj)
    assert obj == before
    assert out is not obj and out["spec"] is not obj["spec"]
    assert out["spec"]["labels"] is obj["spec"]["labels"]
    assert out["spec"]["template"] is obj["spec"]["template"]


# ---------------------------------------------------------------------------------------------------------
# Defaulting (S63)


def test_default_fills_absent_fields_in_list_items_and_nested_objects(
    schema: schemas.StructuralSchema,
) -> None:
    container = {
        "name": "runner",
        "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"key": "k"}}}, {"name": "B", "value": "v"}],
    }
    out = schema.default(ars(template={"spec": {"containers": [container]}}))
    got = out["spec"]["template"]["spec"]["containers"][0]
    assert got["ports"] == [
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 53, "protocol": "UDP"},
    ]
    assert got["env"][0]["valueFrom"]["secretKeyRef"] == {"key": "k", "name": ""}
    assert got["env"][1] == {"name": "B", "value": "v"}
    assert out["spec"]["runnerGroup"] == "default"


def test_default_applies_defaults_inside_defaulted_objects(schema: schemas.StructuralSchema) -> None:
    out = schema.default(ars())
    assert out["spec"]["settings"] == {"retries": 3, "backoff": {"seconds": 10}}
    out = schema.default(ars(settings={"backoff": {}}))
    assert out["spec"]["settings"] == {"retries": 3, "backoff": {"seconds": 10}}


def test_default_only_where_the_parent_exists(schema: schemas.StructuralSchema) -> None:
    out = schema.default(ars())
    assert "proxy" not in out["spec"]
    out = schema.default(ars(proxy={}))
    assert out["spec"]["proxy"] == {}
    out = schema.default(ars(proxy={"http": {"url": "u"}}))
    assert out["spec"]["proxy"] == {"http": {"url": "u", "scheme": "http"}}


def test_default_applies_to_map_values(schema: schemas.StructuralSchema) -> None:
    out = schema.default(ars(podSelector={"a": {}, "b": {"weight": 5}}))
    assert out["spec"]["podSelector"] == {"a": {"weight": 1}, "b": {"weight": 5}}


def test_default_nulls_are_pruned_or_defaulted_unless_nullable(schema: schemas.StructuralSchema) -> None:
    out = schema.default(ars(maxRunners=None, runnerGroup=None, note=None, labels={"a": None, "b": "x"}))
    spec = out["spec"]
    assert "maxRunners" not in spec
    assert spec["runnerGroup"] == "default"
    assert "note" in spec and spec["note"] is None
    assert spec["labels"] == {"b": "x"}


def test_default_null_list_items(schema: schemas.StructuralSchema) -> None:
    schema_with_item_default = schemas.StructuralSchema(
        {
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"type": "string", "default": "d"}},
                "b": {"type": "array", "items": {"type": "string"}},
            },
        }
    )
    out = schema_with_item_default.default({"a": ["x", None], "b": ["x", None]})
    assert out == {"a": ["x", "d"], "b": ["x", None]}


def test_default_null_is_no_default() -> None:
    schema = schemas.StructuralSchema(
        {"type": "object", "properties": {"a": {"type": "string", "default": None}}}
    )
    assert schema.default({}) == {}
    assert schema.default({"a": None}) == {}


def test_default_copies_default_values_and_leaves_the_input_alone(schema: schemas.StructuralSchema) -> None:
    obj = ars()
    before = copy.deepcopy(obj)
    first = schema.default(obj)
    assert obj == before
    first["spec"]["settings"]["backoff"]["seconds"] = 99
    second = schema.default(obj)
    assert second["spec"]["settings"]["backoff"]["seconds"] == 10


def test_default_returns_untouched_subtrees_as_they_are(schema: schemas.StructuralSchema) -> None:
    obj = schema.default(ars(labels={"a": "b"}))
    again = schema.default(obj)
    assert again == obj
    assert again["spec"] is obj["spec"]


# ---------------------------------------------------------------------------------------------------------
# Validation (S64)


def test_valid_object_has_no_errors(schema: schemas.StructuralSchema) -> None:
    obj = ars(
        minRunners=0,
        maxRunners=100,
        ratio=0.5,
        mode="Ephemeral",
        hash="abc123",
        token="aGVsbG8=",
        maxSurge="25%",
        since="2025-01-01T00:00:00Z",
        labels={"a": "b"},
        scaleSetLabels=["linux", "x64"],
        note=None,
        status=None,
    )
    assert schema.validate(obj) == []


@pytest.mark.parametrize(
    ("field", "value", "expected_type", "actual"),
    [
        ("githubConfigUrl", 1, "string", "integer"),
        ("minRunners", "1", "integer", "string"),
        ("minRunners", True, "integer", "boolean"),
        ("minRunners", 1.0, "integer", "number"),
        ("minRunners", 2**63, "integer", "number"),
        ("paused", "true", "boolean", "string"),
        ("labels", ["a"], "object", "array"),
        ("scaleSetLabels", "a", "array", "string"),
        ("ratio", "0.5", "number", "string"),
        ("githubConfigSecret", None, "string", "null"),
    ],
)
def test_type_errors_read_like_kube_openapi(
    schema: schemas.StructuralSchema, field: str, value: Any, expected_type: str, actual: str
) -> None:
    errs = schema.validate(ars(**{field: value}))
    assert len(errs) == 1
    err = errs[0]
    assert err.type == "FieldValueTypeInvalid"
    assert err.field == f"spec.{field}"
    assert err.value == actual
    assert str(err) == (
        f'spec.{field}: Invalid value: "{actual}": '
        f'spec.{field} in body must be of type {expected_type}: "{actual}"'
    )


def test_number_accepts_integers(schema: schemas.StructuralSchema) -> None:
    assert schema.validate(ars(ratio=2)) == []


def test_nested_required_fields(schema: schemas.StructuralSchema) -> None:
    obj = ars(
        template={"spec": {"containers": [{"name": "a"}, {"image": "i", "ports": [{"protocol": "TCP"}]}]}}
    )
    del obj["spec"]["githubConfigUrl"]
    errs = schema.validate(obj)
    assert messages(errs) == [
        "spec.template.spec.containers[1].ports[0].containerPort: Required value",
        "spec.template.spec.containers[1].name: Required value",
        "spec.githubConfigUrl: Required value",
    ]
    assert all(e.type == "FieldValueRequired" for e in errs)


def test_required_object_missing(schema: schemas.StructuralSchema) -> None:
    assert messages(schema.validate(ars(template={"spec": {}}))) == [
        "spec.template.spec.containers: Required value"
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"minRunners": -1},
            "spec.minRunners: Invalid value: -1: "
            "spec.minRunners in body should be greater than or equal to 0",
        ),
        (
            {"maxRunners": 101},
            "spec.maxRunners: Invalid value: 101: "
            "spec.maxRunners in body should be less than or equal to 100",
        ),
        ({"ratio": 0}, "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"),
        ({"ratio": -0.5}, "spec.ratio: Invalid value: -0.5: spec.ratio in body should be greater than 0"),
        (
            {"githubConfigUrl": ""},
            'spec.githubConfigUrl: Invalid value: "": '
            "spec.githubConfigUrl in body should be at least 1 chars long",
        ),
        (
            {"githubConfigSecret": "x" * 11},
            "spec.githubConfigSecret: Too long: may not be more than 10 bytes",
        ),
        (
            {"scaleSetLabels": []},
            "spec.scaleSetLabels: Invalid value: 0: spec.scaleSetLabels in body should have at least 1 items",
        ),
        (
            {"scaleSetLabels": ["a", "b", "c", "d"]},
            "spec.scaleSetLabels: Too many: must have at most 3 items",
        ),
        ({"hash": "XYZ"}, "spec.hash: Invalid value: \"XYZ\": spec.hash in body should match '^[a-f0-9]+$'"),
    ],
)
def test_value_constraints(schema: schemas.StructuralSchema, spec: dict[str, Any], message: str) -> None:
    assert messages(schema.validate(ars(**spec))) == [message]


def test_integer_data_is_compared_with_truncated_bounds() -> None:
    schema = schemas.StructuralSchema(
        {
            "type": "object",
            "properties": {
                "i": {"type": "integer", "minimum": 0.5, "maximum": 10.5},
                "n": {"type": "number", "minimum": 0.5, "maximum": 1e6},
            },
        }
    )
    assert schema.validate({"i": 0}) == []  # kube-openapi compares 0 with int64(0.5) == 0
    assert messages(schema.validate({"i": 11})) == [
        "i: Invalid value: 11: i in body should be less than or equal to 10"
    ]
    assert messages(schema.validate({"n": 0.25, "i": 5})) == [
        "n: Invalid value: 0.25: n in body should be greater than or equal to 0.5"
    ]
    assert schema.validate({"n": 2e6})[0].detail == "n in body should be less than or equal to 1e+06"


def test_multiple_of() -> None:
    schema = schemas.StructuralSchema(
        {
            "type": "object",
            "properties": {
                "i": {"type": "integer", "multipleOf": 5},
                "n": {"type": "number", "multipleOf": 0.1},
            },
        }
    )
    assert schema.validate({"i": 15, "n": 0.3}) == []
    assert messages(schema.validate({"i": 7})) == ["i: Invalid value: 7: i in body should be a multiple of 5"]
    assert messages(schema.validate({"n": 0.35})) == [
        "n: Invalid value: 0.35: n in body should be a multiple of 0.1"
    ]


def test_too_many_items_keeps_the_count_as_value(schema: schemas.StructuralSchema) -> None:
    (err,) = schema.validate(ars(scaleSetLabels=["a", "b", "c", "d"]))
    assert (err.type, err.value, err.detail) == ("FieldValueTooMany", 4, "must have at most 3 items")


def test_enum_is_not_supported_with_the_supported_values(schema: schemas.StructuralSchema) -> None:
    (err,) = schema.validate(ars(mode="Sometimes"))
    assert err.type == "FieldValueNotSupported"
    assert err.supported == ("Ephemeral", "Persistent")
    assert (
        str(err) == 'spec.mode: Unsupported value: "Sometimes": supported values: "Ephemeral", "Persistent"'
    )


def test_pattern_uses_go_end_of_text_semantics(schema: schemas.StructuralSchema) -> None:
    assert schema.validate(ars(hash="abc")) == []
    (err,) = schema.validate(ars(hash="abc\n"))
    assert err.detail == "spec.hash in body should match '^[a-f0-9]+$'"


def test_quantity_pattern_on_int_or_string_map_values(schema: schemas.StructuralSchema) -> None:
    def with_limits(limits: dict[str, Any]) -> dict[str, Any]:
        return ars(template={"spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}})

    assert schema.validate(with_limits({"cpu": "500m", "memory": "1Gi", "gpu": 1})) == []
    (err,) = schema.validate(with_limits({"cpu": "lots"}))
    assert err.field == "spec.template.spec.containers[0].resources.limits.cpu"
    assert err.detail.startswith(
        "spec.template.spec.containers[0].resources.limits.cpu in body should match '^("
    )


@pytest.mark.parametrize(
    "value",
    [
        "2025-01-01T00:00:00Z",
        "2025-01-01T00:00:00.123456Z",
        "2025-01-01T10:00:00+02:00",
        "2024-02-29t23:59:59z",
    ],
)
def test_date_time_accepts_rfc3339_with_offset(schema: schemas.StructuralSchema, value: str) -> None:
    assert schema.validate(ars(since=value)) == []


@pytest.mark.parametrize(
    "value",
    [
        "2025-01-01T00:00:00",
        "2025-01-01",
        "2025-13-01T00:00:00Z",
        "2025-02-30T00:00:00Z",
        "2025-01-01T24:00:00Z",
        "now",
    ],
)
def test_date_time_rejects_missing_offsets_and_impossible_dates(
    schema: schemas.StructuralSchema, value: str
) -> None:
    (err,) = schema.validate(ars(since=value))
    assert err.type == "FieldValueTypeInvalid"
    assert err.value == value
    assert err.detail == f'spec.since in body must be of type date-time: "{value}"'


def test_date_time_in_map_values_names_the_key_with_a_dot(schema: schemas.StructuralSchema) -> None:
    obj = ars()
    obj["status"] = {"failures": {"pod-uid": "yesterday"}}
    (err,) = schema.validate(obj)
    assert err.field == "status.failures.pod-uid"


def test_formatted_string_fields_accept_arrays_like_kube(schema: schemas.StructuralSchema) -> None:
    assert schema.validate(ars(since=["not", "checked"])) == []


def test_byte_format(schema: schemas.StructuralSchema) -> None:
    assert schema.validate(ars(token="")) == []
    (err,) = schema.validate(ars(token="not base64!"))
    assert err.detail == 'spec.token in body must be of type byte: "not base64!"'


def test_int32_format_is_not_range_checked(schema: schemas.StructuralSchema) -> None:
    obj = ars()
    obj["spec"]["template"]["spec"]["priority"] = 2**40
    assert schema.validate(obj) == []


def test_int_or_string(schema: schemas.StructuralSchema) -> None:
    assert schema.validate(ars(maxSurge=3)) == []
    assert schema.validate(ars(maxSurge="25%")) == []
    assert messages(schema.validate(ars(maxSurge=True))) == [
        'spec.maxSurge: Invalid value: "boolean": '
        'spec.maxSurge in body must be of type integer,string: "boolean"',
        '<nil>: Invalid value: "": "spec.maxSurge" must validate at least one schema (anyOf)',
        'spec.maxSurge: Invalid value: "boolean": spec.maxSurge in body must be of type integer: "boolean"',
    ]


def test_nullable(schema: schemas.StructuralSchema) -> None:
    assert schema.validate(ars(note=None)) == []
    (err,) = schema.validate(ars(paused=None))
    assert err.detail == 'spec.paused in body must be of type boolean: "null"'


def test_map_values_are_validated_with_dotted_paths(schema: schemas.StructuralSchema) -> None:
    (err,) = schema.validate(ars(labels={"app": 1}))
    assert err.field == "spec.labels.app"
    assert err.detail == 'spec.labels.app in body must be of type string: "integer"'


def test_list_map_duplicate_keys(schema: schemas.StructuralSchema) -> None:
    ports = [
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 80, "protocol": "UDP"},
        {"containerPort": 80, "protocol": "TCP", "name": "again"},
    ]
    env = [{"name": "A"}, {"name": "B"}, {"name": "A", "value": "x"}, {"name": "A"}]
    obj = ars(template={"spec": {"containers": [{"name": "c", "ports": ports, "env": env}]}})
    errs = schema.validate(obj)
    assert [(e.type, e.field, e.value) for e in errs] == [
        (
            "FieldValueDuplicate",
            "spec.template.spec.containers[0].ports[2]",
            {"containerPort": 80, "protocol": "TCP"},
        ),
        ("FieldValueDuplicate", "spec.template.spec.containers[0].env[2]", {"name": "A"}),
    ]
    assert str(errs[0]).startswith("spec.template.spec.containers[0].ports[2]: Duplicate value: ")


def test_list_map_missing_keys_and_non_objects() -> None:
    schema = schemas.StructuralSchema(
        {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                }
            },
        }
    )
    errs = schema.validate({"items": [{}, {"name": "a"}, {}]})
    assert [(e.field, e.value) for e in errs] == [("items[2]", {})]
    errs = schema.validate({"items": [{"name": "a"}, "b"]})
    assert (
        messages(errs)[-1] == 'items[1]: Invalid value: "b": must be an object for an array of list-type map'
    )


def test_list_map_item_must_be_an_object_even_alone(schema: schemas.StructuralSchema) -> None:
    obj = ars(template={"spec": {"containers": [{"name": "c", "env": ["A=1"]}]}})
    assert messages(schema.validate(obj))[-1] == (
        'spec.template.spec.containers[0].env[0]: Invalid value: "A=1": '
        "must be an object for an array of list-type map"
    )


def test_list_set_reports_each_repeated_value_once(schema: schemas.StructuralSchema) -> None:
    errs = schema.validate(ars(scaleSetLabels=["a", "a", "a"]))
    assert messages(errs) == ['spec.scaleSetLabels[1]: Duplicate value: "a"']


def test_list_set_distinguishes_json_types() -> None:
    schema = schemas.StructuralSchema(
        {
            "type": "object",
            "properties": {"s": {"type": "array", "x-kubernetes-list-type": "set", "items": {}}},
        }
    )
    assert schema.validate({"s": [1, 1.5, True, "1", None, {"a": 1}, [1]]}) == []
    errs = schema.validate({"s": [{"a": 1, "b": 2}, {"b": 2, "a": 1}, [1], [1]]})
    assert [e.field for e in errs] == ["s[1]", "s[3]"]


def test_list_type_paths_name_map_keys_in_brackets() -> None:
    schema = schemas.StructuralSchema(
        {
            "type": "object",
            "properties": {
                "groups": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "string"},
                    },
                }
            },
        }
    )
    assert messages(schema.validate({"groups": {"dev": ["a", "a"]}})) == [
        'groups[dev][1]: Duplicate value: "a"'
    ]


def test_list_type_errors_come_after_schema_errors(schema: schemas.StructuralSchema) -> None:
    errs = schema.validate(ars(scaleSetLabels=["a", "a"], minRunners=-1))
    assert [e.type for e in errs] == ["FieldValueInvalid", "FieldValueDuplicate"]


def test_embedded_resource_needs_api_version_and_kind(schema: schemas.StructuralSchema) -> None:
    assert schema.validate(ars(embedded={"apiVersion": "v1", "kind": "ConfigMap"})) == []
    assert messages(schema.validate(ars(embedded={"data": {}}))) == [
        "spec.embedded.apiVersion: Required value: must not be empty",
        "spec.embedded.kind: Required value: must not be empty",
    ]
    assert messages(schema.validate(ars(embedded={"apiVersion": "a/b/c", "kind": ""}))) == [
        'spec.embedded.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        'spec.embedded.kind: Invalid value: "": must not be empty',
    ]


def test_root_path_prefixes_every_field(schema: schemas.StructuralSchema) -> None:
    errs = schema.validate(ars(minRunners="x", maxSurge=False), root_path="object")
    assert [e.field for e in errs] == [
        "object.spec.minRunners",
        "object.spec.maxSurge",
        "object",
        "object.spec.maxSurge",
    ]
    assert errs[0].detail == 'spec.minRunners in body must be of type integer: "string"'


def test_type_mismatch_skips_the_validators_of_other_types(schema: schemas.StructuralSchema) -> None:
    assert len(schema.validate(ars(template="pod"))) == 1
    assert len(schema.validate(ars(scaleSetLabels={"a": "a"}))) == 1


def test_errors_feed_a_kube_invalid_status(schema: schemas.StructuralSchema) -> None:
    errs = schema.validate(ars(minRunners=-1))
    status = errors.invalid("AutoscalingRunnerSet", "actions.github.com", "set", errs).status()
    assert status["message"] == (
        'AutoscalingRunnerSet.actions.github.com "set" is invalid: spec.minRunners: Invalid value: -1: '
        "spec.minRunners in body should be greater than or equal to 0"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: -1: spec.minRunners in body should be greater than or equal to 0",
            "field": "spec.minRunners",
        }
    ]


def test_combinators() -> None:
    schema = schemas.StructuralSchema(
        {
            "type": "object",
            "properties": {
                "all": {"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 3}]},
                "one": {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]},
                "never": {"type": "string", "not": {"enum": ["x"]}},
            },
        }
    )
    assert schema.validate({"all": "ab", "one": -5, "never": "y"}) == []
    errs = schema.validate({"all": "a"})
    assert messages(errs)[0] == '<nil>: Invalid value: "": "all" must validate all the schemas (allOf)'
    errs = schema.validate({"one": 5})
    assert "Found 2 valid alternatives" in errs[0].detail
    errs = schema.validate({"never": "x"})
    assert messages(errs) == ['<nil>: Invalid value: "": "never" must not validate the schema (not)']


# ---------------------------------------------------------------------------------------------------------
# process: prune, default, validate


def test_process_runs_the_api_server_pipeline(schema: schemas.StructuralSchema) -> None:
    container = {
        "name": "runner",
        "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}],
        "junk": 1,
    }
    obj = ars(bogus=True, maxRunners=None, template={"spec": {"containers": [container]}})
    out, unknown, errs = schema.process(obj)
    assert unknown == ["spec.bogus", "spec.template.spec.containers[0].junk"]
    assert "maxRunners" not in out["spec"]
    assert out["spec"]["runnerGroup"] == "default"
    # the default protocol makes the two ports collide
    assert messages(errs) == [
        'spec.template.spec.containers[0].ports[1]: Duplicate value: {"containerPort":80,"protocol":"TCP"}'
    ]


def test_process_clean_object(schema: schemas.StructuralSchema) -> None:
    out, unknown, errs = schema.process(ars())
    assert (unknown, errs) == ([], [])
    assert out["spec"]["settings"] == {"retries": 3, "backoff": {"seconds": 10}}


def test_from_crd_compiles_each_version() -> None:
    crd = {
        "spec": {
            "versions": [
                {"name": "v1", "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v2", "schema": {"openAPIV3Schema": ARS_SCHEMA}},
                {"name": "v3"},
            ]
        }
    }
    compiled = schemas.from_crd(crd)
    assert sorted(compiled) == ["v1", "v2"]


# ---------------------------------------------------------------------------------------------------------
# Helpers


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5, "0.5"),
        (1.0, "1"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (1.5e-5, "1.5e-05"),
        (-2.25, "-2.25"),
        (0.0001, "0.0001"),
    ],
)
def test_go_float(value: float, text: str) -> None:
    assert schemachecks._go_float(value) == text


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^a$", "a\n", False),
        ("^a\\z", "a", True),
        ("[$]", "$", True),
        ("[]a]", "]", True),
        ("(?m)^a$", "a\nb", True),
        ("^\\d+$", "١٢", False),
    ],
)
def test_go_patterns(pattern: str, text: str, matches: bool) -> None:
    compiled = schemanodes._compile_pattern(pattern)
    assert compiled is not None
    assert (compiled.search(text) is not None) is matches


# ---------------------------------------------------------------------------------------------------------
# The CRDs of the Helm chart


RUNNER_POD = {
    "metadata": {"labels": {"app": "runner"}},
    "spec": {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "runner",
                "image": "ghcr.io/actions/actions-runner:latest",
                "command": ["/home/runner/run.sh"],
                "env": [{"name": "ACTIONS_RUNNER_CONTAINER_HOOKS", "value": "/home/runner/k8s/index.js"}],
                "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": 1}},
                "ports": [{"containerPort": 8080}],
            }
        ],
    },
}

SAMPLES: dict[str, dict[str, Any]] = {
    "AutoscalingRunnerSet": {
        "spec": {
            "githubConfigUrl": "https://github.com/org/repo",
            "githubConfigSecret": "github-secret",
            "minRunners": 0,
            "maxRunners": 5,
            "runnerScaleSetName": "arc-runners",
            "template": RUNNER_POD,
        }
    },
    "EphemeralRunnerSet": {
        "spec": {
            "replicas": 2,
            "patchID": 0,
            "ephemeralRunnerSpec": {
                "githubConfigUrl": "https://github.com/org/repo",
                "githubConfigSecret": "github-secret",
                "runnerScaleSetId": 1,
                **RUNNER_POD,
            },
        }
    },
    "EphemeralRunner": {
        "spec": {
            "githubConfigUrl": "https://github.com/org/repo",
            "githubConfigSecret": "github-secret",
            "runnerScaleSetId": 1,
            **RUNNER_POD,
        },
        "status": {
            "phase": "Running",
            "ready": True,
            "runnerId": 7,
            "failures": {"uid-1": "2025-01-01T00:00:00Z"},
        },
    },
    "AutoscalingListener": {
        "spec": {
            "githubConfigUrl": "https://github.com/org/repo",
            "githubConfigSecret": "github-secret",
            "runnerScaleSetId": 1,
            "autoscalingRunnerSetName": "arc-runners",
            "autoscalingRunnerSetNamespace": "arc-runners",
            "ephemeralRunnerSetName": "arc-runners-abcde",
            "maxRunners": 5,
            "minRunners": 0,
            "image": "ghcr.io/actions/gha-runner-scale-set-controller:0.12.0",
        }
    },
}


@pytest.mark.skipif(not CRD_FILES, reason="the chart's CRD files are not present")
@pytest.mark.parametrize("path", CRD_FILES, ids=lambda p: p.name)
def test_deploy_crds_accept_a_realistic_object(path: pathlib.Path) -> None:
    crd = yaml.safe_load(path.read_text())
    kind = crd["spec"]["names"]["kind"]
    if kind not in SAMPLES:
        pytest.skip(f"no sample object for {kind}")
    for version, schema in schemas.from_crd(crd).items():
        obj = {
            "apiVersion": f"{crd['spec']['group']}/{version}",
            "kind": kind,
            "metadata": {"name": "sample", "namespace": "arc-runners"},
            **copy.deepcopy(SAMPLES[kind]),
        }
        out, unknown, errs = schema.process(obj)
        assert unknown == []
        assert messages(errs) == []
        assert out["metadata"] == obj["metadata"]
