"""The built-in kinds' OpenAPI schemas derived from kubernetes_asyncio's models (sim.builtinschemas) and
the unknown fields found with them (sim.unknownfields): no server."""

from __future__ import annotations

from kubernetes_asyncio.client import models

from sim import builtinschemas, kinds, unknownfields


def test_every_built_in_kind_has_a_model_and_a_schema_that_names_it() -> None:
    for kind in kinds.BUILTIN:
        name = builtinschemas.root_name(kind.group, kind.version, kind.kind)
        schema = builtinschemas.components(kind.group, kind.version, kind.kind)[name]
        assert schema["x-kubernetes-group-version-kind"] == [
            {"group": kind.group, "kind": kind.kind, "version": kind.version}
        ], kind


def test_models_and_names_follow_the_clients_prefixes() -> None:
    assert builtinschemas.model_for("", "v1", "Event") is models.CoreV1Event
    assert builtinschemas.model_for("events.k8s.io", "v1", "Event") is models.EventsV1Event
    assert builtinschemas.model_for("apps", "v1", "Nothing") is None
    assert builtinschemas.schema_name(models.EventsV1Event) == "io.k8s.api.events.v1.Event"
    assert (
        builtinschemas.schema_name(models.V1ObjectMeta, "apps")
        == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    assert builtinschemas.schema_name(models.V1DeploymentSpec, "apps") == "io.k8s.api.apps.v1.DeploymentSpec"


def test_fields_types_descriptions_and_required() -> None:
    schemas = builtinschemas.components("", "v1", "Pod")
    container = schemas["io.k8s.api.core.v1.Container"]
    assert container["required"] == ["name"]
    assert container["properties"]["args"]["type"] == "array"
    assert container["properties"]["args"]["items"] == {"type": "string"}
    assert container["properties"]["args"]["description"].startswith("Arguments to the entrypoint.")
    assert "noqa" not in container["properties"]["args"]["description"]
    assert container["properties"]["securityContext"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.api.core.v1.SecurityContext"}
    ]
    spec = schemas["io.k8s.api.core.v1.PodSpec"]
    assert spec["properties"]["nodeSelector"]["additionalProperties"] == {"type": "string"}
    probe = schemas["io.k8s.api.core.v1.HTTPGetAction"]
    assert probe["required"] == ["port"] and "type" not in probe["properties"]["port"]  # int or string


def test_a_type_that_references_itself_is_one_schema() -> None:
    schemas = builtinschemas.components("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    name = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    props = schemas[name]
    assert props["properties"]["properties"]["additionalProperties"] == {
        "$ref": "#/components/schemas/" + name
    }


def test_unknown_fields_are_dropped_with_their_paths_and_patch_directives_kept() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"any": "thing"}},
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "x": 1}], "y": 2}], "z": 3},
    }
    pruned, found = unknownfields.unknown("", "v1", "Pod", pod)
    assert found == ["spec.containers[0].ports[0].x", "spec.containers[0].y", "spec.z"]
    assert pruned["spec"] == {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}
    assert pod["spec"]["z"] == 3  # the input is not changed
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "c"}],
            "containers": [{"name": "c", "$patch": "delete"}],
        }
    }
    assert unknownfields.unknown("", "v1", "Pod", patch, patch=True) == (patch, [])
    assert unknownfields.unknown("", "v1", "Pod", patch)[1] == [
        "spec.$setElementOrder/containers",
        "spec.containers[0].$patch",
    ]
