"""``status.conditions`` in the generated CRDs: the metav1.Condition list-map on every kind, rendered from
``controller.installation.resources``, and a ``Ready`` printer column reading it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from controller.installation import crdgen, resources

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KINDS = [kind.kind for kind in resources.KINDS]


def crd_of(kind_name: str) -> dict[str, Any]:
    kind = next(k for k in resources.KINDS if k.kind == kind_name)
    loaded: dict[str, Any] = yaml.load(crdgen.render_crds()[crdgen.crd_filename(kind)], Loader=LOADER)
    return loaded


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_the_condition_list_map(kind: str) -> None:
    version = crd_of(kind)["spec"]["versions"][0]
    conditions = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["conditions"]
    assert conditions["type"] == "array"
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    item = conditions["items"]
    assert item["required"] == ["lastTransitionTime", "message", "reason", "status", "type"]
    fields = item["properties"]
    assert fields["status"] == {"enum": ["True", "False", "Unknown"], "type": "string"}
    assert (fields["observedGeneration"]["format"], fields["observedGeneration"]["minimum"]) == ("int64", 0)
    assert fields["lastTransitionTime"]["format"] == "date-time"
    assert (fields["reason"]["minLength"], fields["reason"]["maxLength"]) == (1, 1024)
    assert fields["reason"]["pattern"] == "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
    assert fields["message"]["maxLength"] == 32768
    assert fields["type"]["maxLength"] == 316
    ready = [c for c in version["additionalPrinterColumns"] if c["name"] == "Ready"]
    assert ready == [
        {"jsonPath": '.status.conditions[?(@.type=="Ready")].status', "name": "Ready", "type": "string"}
    ]


def test_list_map_keys_and_validation_facts_render_only_when_declared() -> None:
    plain = crdgen.field_type_schema(resources.ListOf(resources.STRING))
    assert plain == {"items": {"type": "string"}, "type": "array"}
    field = resources.Field("x", resources.STRING, enum=("a",), pattern="^a$", min_length=1, max_length=2)
    assert crdgen.field_schema(field) == {
        "enum": ["a"],
        "maxLength": 2,
        "minLength": 1,
        "pattern": "^a$",
        "type": "string",
    }
