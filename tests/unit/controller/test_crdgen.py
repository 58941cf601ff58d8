"""The CRDs of the Helm chart (deploy/charts/arcsm/crds): generated from controller.installation.resources, up
to date, structural, and carrying the fields and defaults the controller and the emulated API server rely
on."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes_asyncio.client import models as kube_models

from controller.installation import crdgen, resources
from statemachines import kinds

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
CRD_DIRECTORY = REPO_ROOT / crdgen.CRD_DIRECTORY
REGENERATE = "regenerate them with `python -m controller.installation.crdgen`"


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    """Filename → text of every file ``python -m controller.installation.crdgen`` writes."""
    return crdgen.render_files()


@pytest.fixture(scope="module")
def crds(rendered: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Kind name → the CRD as loaded from its YAML text."""
    loaded = {}
    for text in rendered.values():
        document = yaml.load(text, Loader=LOADER)
        loaded[document["spec"]["names"]["kind"]] = document
    return loaded


def schema_of(crd: dict[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return root


def at(node: dict[str, Any], path: str) -> dict[str, Any]:
    """Follow a dotted path of property names; ``[]`` steps into list items."""
    for part in path.split("."):
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


def walk(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from walk(child, f"{path}.{name}")
    if "items" in node:
        yield from walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from walk(node["additionalProperties"], f"{path}{{}}")


def structural_errors(root: dict[str, Any]) -> list[str]:
    """What makes a schema non-structural, or would make the API server reject or misread it."""
    errors = []
    for path, node in walk(root):
        where = path or "<root>"
        if node.get("x-kubernetes-int-or-string"):
            if node.get("anyOf") != [{"type": "integer"}, {"type": "string"}] or "type" in node:
                errors.append(f"{where}: int-or-string needs anyOf integer|string and no type")
        elif "type" not in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            errors.append(f"{where}: no type")
        if "$ref" in node:
            errors.append(f"{where}: $ref is not allowed")
        if "properties" in node and "additionalProperties" in node:
            errors.append(f"{where}: both properties and additionalProperties")
        if node.get("type") == "array" and "items" not in node:
            errors.append(f"{where}: array without items")
        for name in node.get("required", []):
            if name not in node.get("properties", {}):
                errors.append(f"{where}: required {name!r} is not a property")
        for key in node.get("x-kubernetes-list-map-keys", []):
            item = node["items"]
            key_schema = item["properties"].get(key, {})
            if key_schema.get("type") not in ("string", "integer"):
                errors.append(f"{where}: list-map key {key!r} is not a scalar")
            if key not in item.get("required", []) and "default" not in key_schema:
                errors.append(f"{where}: list-map key {key!r} is neither required nor defaulted")
    return errors


def test_committed_files_are_up_to_date(rendered: dict[str, str]) -> None:
    expected = rendered
    committed = {path.name: path.read_text(encoding="utf-8") for path in CRD_DIRECTORY.iterdir()}
    assert sorted(committed) == sorted(expected), (
        f"the chart's crds/ holds other files than CRDs; {REGENERATE}"
    )
    stale = [name for name, text in expected.items() if committed[name] != text]
    assert not stale, f"the chart's crds/{', '.join(stale)} out of date; {REGENERATE}"


def test_one_crd_per_kind_with_upstream_names(
    crds: dict[str, dict[str, Any]], rendered: dict[str, str]
) -> None:
    assert sorted(rendered) == [
        "actions.github.com_autoscalinglisteners.yaml",
        "actions.github.com_autoscalingrunnersets.yaml",
        "actions.github.com_ephemeralrunners.yaml",
        "actions.github.com_ephemeralrunnersets.yaml",
    ]
    ers = crds["EphemeralRunnerSet"]
    assert ers["metadata"]["name"] == "ephemeralrunnersets.actions.github.com"
    assert ers["spec"]["names"] == {
        "kind": "EphemeralRunnerSet",
        "listKind": "EphemeralRunnerSetList",
        "plural": "ephemeralrunnersets",
        "singular": "ephemeralrunnerset",
    }
    for crd in crds.values():
        assert crd["spec"]["group"] == "actions.github.com"
        assert crd["spec"]["scope"] == "Namespaced"
        (version,) = crd["spec"]["versions"]
        assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
        assert version["subresources"] == {"status": {}}


def test_the_kinds_table_names_what_the_crds_serve(crds: dict[str, dict[str, Any]]) -> None:
    """``statemachines.kinds`` is the one table of ARC names the controller, the machines and the tests use;
    the CRDs must serve exactly those."""
    assert sorted(crds) == sorted(kinds.BY_KIND)
    for arc in kinds.ALL:
        crd = crds[arc.kind]
        names = crd["spec"]["names"]
        (version,) = crd["spec"]["versions"]
        assert (names["plural"], names["singular"]) == (arc.plural, arc.singular)
        assert (crd["spec"]["group"], version["name"]) == (arc.group, arc.version)
        assert "shortNames" not in names
        assert kinds.PLURALS[arc.kind] == arc.plural


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("AutoscalingRunnerSet", "status.observedGeneration"),
        ("EphemeralRunnerSet", "spec.actionableRevision"),
        ("EphemeralRunnerSet", "status.appliedActionableRevision"),
    ],
)
def test_the_new_fields_are_int64(crds: dict[str, dict[str, Any]], kind: str, path: str) -> None:
    node = at(schema_of(crds[kind]), path)
    assert (node["type"], node["format"]) == ("integer", "int64")


@pytest.mark.parametrize("kind", [kind.kind for kind in resources.KINDS])
def test_schemas_are_structural(crds: dict[str, dict[str, Any]], kind: str) -> None:
    root = schema_of(crds[kind])
    assert structural_errors(root) == []
    assert root["properties"]["metadata"] == {"type": "object"}


def test_the_checker_finds_non_structural_nodes() -> None:
    bad = {
        "type": "object",
        "properties": {
            "untyped": {"description": "no type"},
            "list": {"type": "array"},
            "ports": {
                "type": "array",
                "items": {"type": "object", "properties": {"port": {"type": "integer"}}},
                "x-kubernetes-list-map-keys": ["port"],
                "x-kubernetes-list-type": "map",
            },
        },
        "required": ["missing"],
    }
    assert len(structural_errors(bad)) == 4


def test_spot_checks(crds: dict[str, dict[str, Any]]) -> None:
    ars, ers, er = (
        schema_of(crds[kind]) for kind in ("AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner")
    )
    assert at(ars, "spec.githubConfigUrl")["type"] == "string"
    assert at(ars, "spec.maxRunners") == {"minimum": 0, "type": "integer"}
    assert at(ers, "spec")["required"] == ["patchID"]
    assert at(ers, "status")["required"] == ["currentReplicas"]
    assert at(er, "spec")["required"] == ["githubConfigSecret", "githubConfigUrl", "runnerScaleSetId"]
    assert at(er, "status.failures")["additionalProperties"] == {"format": "date-time", "type": "string"}
    assert at(er, "spec.spec")["required"] == ["containers"]
    assert set(at(er, "spec.metadata")["properties"]) == {
        "annotations",
        "finalizers",
        "labels",
        "name",
        "namespace",
    }
    assert at(ers, "spec.ephemeralRunnerSpec.spec.containers.[]")["required"] == ["name"]


@pytest.mark.parametrize("kind", ["AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner"])
def test_every_kind_with_a_phase_shows_it_as_phase(crds: dict[str, dict[str, Any]], kind: str) -> None:
    """``kubectl get`` titles the phase column PHASE on each of arcsm's kinds that has one."""
    columns = crds[kind]["spec"]["versions"][0]["additionalPrinterColumns"]
    by_path = {column["jsonPath"]: column for column in columns}
    assert by_path[".status.phase"] == {"jsonPath": ".status.phase", "name": "Phase", "type": "string"}
    assert [c["name"] for c in columns].count("Phase") == 1
    assert "Status" not in {c["name"] for c in columns}


def test_pod_template_facts(crds: dict[str, dict[str, Any]]) -> None:
    pod = at(schema_of(crds["AutoscalingRunnerSet"]), "spec.template.spec")
    containers = pod["properties"]["containers"]
    assert containers["items"]["required"] == ["name"]
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    ports = at(containers, "[].ports")
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["x-kubernetes-list-type"] == "map"
    assert at(ports, "[].protocol") == {"default": "TCP", "type": "string"}
    assert at(ports, "[].containerPort") == {"format": "int32", "type": "integer"}
    assert at(containers, "[].env.[]")["required"] == ["name"]
    assert pod["properties"]["volumes"]["items"]["required"] == ["name"]
    assert at(pod, "terminationGracePeriodSeconds")["format"] == "int64"
    assert at(pod, "securityContext.runAsUser")["format"] == "int64"
    assert at(containers, "[].env.[].valueFrom.secretKeyRef.name") == {"default": "", "type": "string"}
    limits = at(containers, "[].resources.limits")["additionalProperties"]
    assert limits == crdgen.int_or_string(quantity=True)
    assert limits["pattern"] == crdgen.QUANTITY_PATTERN
    assert at(containers, "[].livenessProbe.httpGet.port") == crdgen.int_or_string()
    assert at(pod, "volumes.[].emptyDir.sizeLimit") == crdgen.int_or_string(quantity=True)


def test_listener_image_pull_secrets_are_local_object_references(crds: dict[str, dict[str, Any]]) -> None:
    secrets = at(schema_of(crds["AutoscalingListener"]), "spec.imagePullSecrets")
    assert secrets["items"] == {"properties": {"name": {"default": "", "type": "string"}}, "type": "object"}


def test_yaml_has_no_aliases(rendered: dict[str, str]) -> None:
    for name, text in rendered.items():
        assert "&id" not in text and "*id" not in text, name


def test_tables_name_real_model_fields() -> None:
    """A kubernetes_asyncio upgrade that renames a field must fail here, not silently drop a schema fact."""
    tables: list[tuple[str, set[str]]] = []
    for table in (crdgen.QUANTITY_FIELDS, crdgen.INT_OR_STRING_FIELDS, crdgen.DEFAULTS, crdgen.LIST_MAP_KEYS):
        tables.extend((model, set(fields)) for model, fields in table.items())
    for model, fields in tables:
        json_names = set(getattr(kube_models, model).attribute_map.values())
        assert fields <= json_names, f"{model} has no {sorted(fields - json_names)}"
    int_or_string = {
        (model, json_name)
        for model, json_names in crdgen.INT_OR_STRING_FIELDS.items()
        for json_name in json_names
    }
    for model, json_name in int_or_string:
        cls = getattr(kube_models, model)
        attr = next(attr for attr, name in cls.attribute_map.items() if name == json_name)
        assert cls.openapi_types[attr] == "object"


def test_required_fields_come_from_the_models() -> None:
    assert crdgen.required_fields("V1Container") == {"name"}
    assert crdgen.required_fields("V1ContainerPort") == {"containerPort"}
    assert crdgen.required_fields("V1PodSpec") == {"containers"}
    assert crdgen.required_fields("V1ObjectFieldSelector") == {"fieldPath"}


def test_write_crds(tmp_path: pathlib.Path, rendered: dict[str, str]) -> None:
    written = crdgen.write_crds(tmp_path / "crds")
    assert {path.name: path.read_text(encoding="utf-8") for path in written} == rendered
    # Helm installs every file of a chart's crds/ as a CRD: nothing else may be there.
    assert all(name.endswith(".yaml") and name.startswith(resources.GROUP) for name in rendered)
