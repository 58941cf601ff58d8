"""OpenAPI v3 schemas of the built-in kinds, derived from kubernetes_asyncio's models.

kubernetes_asyncio generates a class per API type (``V1Pod``, ``V1PodSpec``, ``CoreV1Event``, …) that
keeps the type's fields as data: ``openapi_types`` (attribute → type: ``str``, ``int``, ``bool``,
``float``, ``datetime``, ``object``, ``list[T]``, ``dict(str, T)`` or another model), ``attribute_map``
(attribute → JSON name) and, in each property's docstring, the field's description from the API's own
OpenAPI document. A required field is one whose setter refuses ``None``. This module turns that into the
schemas kube-apiserver publishes under ``components.schemas``:

    ``model_for(group, version, kind)``  the model class of a served kind (None when the client has none)
    ``schema_name(model)``              its component name (``io.k8s.api.core.v1.PodSpec``)
    ``components(group, version, kind)``  the kind's schema (with ``x-kubernetes-group-version-kind``) and
                                        every schema it references, by name

A reference is written as upstream writes it in v3 (``allOf: [{$ref}]`` beside the description); a
``datetime`` is a string of format ``date-time``. Everything is derived once per model and cached; the
results are shared, so callers must not change them.

Known limits: the client drops what its generator does not keep, so there are no kind descriptions and
no descriptions of fields that are references (but a kind's ``metadata``, whose sentence is the same for
every kind upstream), no integer formats (``int32``/``int64``), no enums or defaults, and an
int-or-string or free-form field (``object`` in the client) is a schema with no type; the patch
extensions (``x-kubernetes-patch-strategy``, ``…-merge-key``, list types) are not known to the client and
are absent; a type the client names without its package (``V1PodSpec``) is put in the package of the API
group that reaches it (meta types in apimachinery's), so a few names differ from upstream's
(``io.k8s.api.apps.v1.PodTemplateSpec``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any

Schema = dict[str, Any]

META_PACKAGE = "io.k8s.apimachinery.pkg.apis.meta"
# What every kind's ``metadata`` says upstream.
METADATA_DESCRIPTION = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_META_TYPES = frozenset(
    {
        "ObjectMeta",
        "ListMeta",
        "OwnerReference",
        "ManagedFieldsEntry",
        "LabelSelector",
        "LabelSelectorRequirement",
        "Condition",
        "Status",
        "StatusDetails",
        "StatusCause",
        "DeleteOptions",
        "Preconditions",
    }
)
_NAME = re.compile(
    r"^(?P<package>(?:[A-Z][a-z0-9]*)*?)(?P<version>V\d+(?:(?:alpha|beta)\d+)?)(?P<type>[A-Z]\w*)$"
)
_CONTAINER = re.compile(r"^(list)\[(.+)\]$|^dict\((str), (.+)\)$")
_SCALARS: Mapping[str, Schema] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number", "format": "double"},
    "bool": {"type": "boolean"},
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "object": {},
}


@functools.cache
def _models() -> ModuleType:
    """kubernetes_asyncio's models, imported on first use (they take a while; most worlds never ask)."""
    from kubernetes_asyncio.client import models

    return models


@functools.cache
def _checking() -> Any:
    """A client configuration whose setters check for ``None``."""
    from kubernetes_asyncio.client import Configuration

    config = Configuration()
    config.client_side_validation = True
    return config


def _group_package(group: str) -> str:
    """The Go package of a group's types: ``io.k8s.api.apps``, ``io.k8s.api.core`` for the core group."""
    if group == "apiextensions.k8s.io":
        return "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions"
    return "io.k8s.api." + (group.split(".")[0] if group else "core")


def model_for(group: str, version: str, kind: str) -> type | None:
    """The kubernetes_asyncio model of ``kind`` in ``group``/``version``: ``V1Pod``, or the prefixed name the
    client uses when two groups share a kind (``CoreV1Event``, ``EventsV1Event``)."""
    prefix = "Core" if not group else group.split(".")[0].capitalize()
    for name in (f"{version.capitalize()}{kind}", f"{prefix}{version.capitalize()}{kind}"):
        model = getattr(_models(), name, None)
        if isinstance(model, type) and hasattr(model, "openapi_types"):
            return model
    return None


def _parts(model: type) -> tuple[str, str, str]:
    """(package prefix as the client spells it, version, Go type name) of a model class."""
    found = _NAME.match(model.__name__)
    if found is None:
        return "", "", model.__name__
    return found["package"], found["version"].lower(), found["type"]


def schema_name(model: type, group: str = "") -> str:
    """The component name of ``model``; ``group`` places a type the client names without its package."""
    prefix, version, type_name = _parts(model)
    if prefix.startswith("IoK8sApimachinery") or (not prefix and type_name in _META_TYPES):
        package = META_PACKAGE
    elif prefix:
        package = _group_package("" if prefix == "Core" else prefix.lower())
    else:
        package = _group_package(group)
    return f"{package}.{version}.{type_name}" if version else f"{package}.{type_name}"


def _description(prop: Any) -> str:
    """The field's description: the docstring's second paragraph, without the generator's noqa marks."""
    doc = getattr(getattr(prop, "fget", None), "__doc__", None) or ""
    paragraphs = [p.strip() for p in doc.split("\n\n")]
    if len(paragraphs) < 3 or paragraphs[1].startswith(":return:"):
        return ""
    return paragraphs[1].replace("# noqa: E501", "").strip()


def _required(model: type, attribute: str) -> bool:
    """Whether the model's setter refuses ``None`` for ``attribute`` (the generator's ``required``)."""
    prop = getattr(model, attribute, None)
    setter = getattr(prop, "fset", None)
    if setter is None:
        return False
    probe: Any = object.__new__(model)
    probe.local_vars_configuration = _checking()
    try:
        setter(probe, None)
    except ValueError:
        return True
    return False


class _Builder:
    """Walks a root model and the models it references, writing each one's schema once."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.schemas: dict[str, Schema] = {}

    def field(self, type_text: str) -> Schema:
        if type_text in _SCALARS:
            return dict(_SCALARS[type_text])
        container = _CONTAINER.match(type_text)
        if container is not None:
            if container[1]:
                return {"type": "array", "items": self.field(container[2])}
            return {"type": "object", "additionalProperties": self.field(container[4])}
        model = getattr(_models(), type_text, None)
        if not isinstance(model, type):
            return {}
        return {"$ref": "#/components/schemas/" + self.model(model)}

    def model(self, model: type) -> str:
        name = schema_name(model, self.group)
        if name in self.schemas:
            return name
        schema: Schema = {"type": "object"}
        self.schemas[name] = schema  # before the fields: a type may reference itself (JSONSchemaProps)
        properties: dict[str, Schema] = {}
        required: list[str] = []
        types: Mapping[str, str] = model.openapi_types  # type: ignore[attr-defined]
        names: Mapping[str, str] = model.attribute_map  # type: ignore[attr-defined]
        for attribute, type_text in types.items():
            json_name = names[attribute]
            prop = self.field(type_text)
            description = _description(getattr(model, attribute, None))
            if "$ref" in prop:
                prop = {"allOf": [prop], "default": {}}
            if description:
                prop["description"] = description
            properties[json_name] = prop
            if _required(model, attribute):
                required.append(json_name)
        schema["properties"] = dict(sorted(properties.items()))
        if required:
            schema["required"] = sorted(required)
        return name


@functools.cache
def _components(group: str, version: str, kind: str) -> tuple[str, dict[str, Schema]]:
    model = model_for(group, version, kind)
    if model is None:
        return "", {}
    builder = _Builder(group)
    root = builder.model(model)
    metadata = builder.schemas[root]["properties"].get("metadata")
    if metadata is not None and "description" not in metadata:
        metadata["description"] = METADATA_DESCRIPTION  # the client drops the descriptions of references
    builder.schemas[root]["x-kubernetes-group-version-kind"] = [
        {"group": group, "kind": kind, "version": version}
    ]
    return root, builder.schemas


def components(group: str, version: str, kind: str) -> dict[str, Schema]:
    """The schema of ``kind`` and of every type it references, by component name; empty when the client
    has no model of it. Shared and cached: read, never change."""
    return _components(group, version, kind)[1]


def root_name(group: str, version: str, kind: str) -> str:
    """The component name of ``kind``'s own schema ("" when the client has no model of it)."""
    return _components(group, version, kind)[0]


@functools.cache
def object_meta() -> tuple[str, dict[str, Schema]]:
    """The name of ``ObjectMeta``'s schema and the schemas it needs (for custom resources' documents)."""
    builder = _Builder("")
    return builder.model(_models().V1ObjectMeta), builder.schemas
