"""The shapes of the built-in kinds, derived once from kubernetes_asyncio's generated models.

kube-apiserver decodes a built-in object into its Go struct, so the struct is the object's schema: a field
it does not declare is unknown, a value of the wrong JSON type does not decode. kubernetes_asyncio's models
carry the same structure (``openapi_types`` gives each attribute's type, ``attribute_map`` its JSON name),
so the schema of every built-in kind is read from them rather than written per kind.

The models flatten a few Go types the decoder treats specially; those are recovered by the JSON field name
(facts of k8s.io/api, not of any one kind):

- ``int`` is ``int32`` unless the field is one of the API's ``int64`` fields (``_INT64``);
- ``datetime`` is ``metav1.Time`` (RFC 3339) except the ``metav1.MicroTime`` fields (``_MICRO_TIME``:
  exactly six fractional digits);
- ``str`` (or a map of ``str``) is a ``resource.Quantity`` (or a ``ResourceList``) for ``_QUANTITY``;
- ``object`` is an ``intstr.IntOrString`` for ``_INT_OR_STRING``, otherwise any JSON
  (``RawExtension``, ``FieldsV1``, the JSON-schema unions of CRDs);
- the ``[]byte`` maps of Secrets and ConfigMaps (``_BYTES``).

``schema(api_version, kind)`` answers the root ``Struct`` of a kind (``None`` when kubernetes_asyncio has
no model for it); ``Struct.fields`` maps JSON names to ``Node`` s. Recursive models (``JSONSchemaProps``)
give a cyclic graph: walk it lazily, as the decoder does. The Go type names (``v1.PodSpec``,
``[]v1.ContainerPort``, ``map[string]string``) are those the decoder's errors print; named string types
(``v1.Protocol``) print as ``string`` here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from kubernetes_asyncio.client import models

# The JSON names of the API's int64 fields (every other integer is an int32).
_INT64 = frozenset(
    {
        "activeDeadlineSeconds",
        "deletionGracePeriodSeconds",
        "expirationSeconds",
        "fsGroup",
        "generation",
        "gid",
        "maxItems",
        "maxLength",
        "maxProperties",
        "minItems",
        "minLength",
        "minProperties",
        "observedGeneration",
        "revision",
        "runAsGroup",
        "runAsUser",
        "seconds",
        "supplementalGroups",
        "terminationGracePeriodSeconds",
        "uid",
    }
)
_MICRO_TIME = frozenset({"eventTime", "lastObservedTime", "acquireTime", "renewTime"})
_QUANTITY = frozenset(
    {"limits", "requests", "overhead", "capacity", "allocatable", "allocatedResources", "sizeLimit", "hard"}
)
_INT_OR_STRING = frozenset({"port", "targetPort", "maxSurge", "maxUnavailable", "minAvailable"})
# (model, attribute) of the map[string][]byte fields.
_BYTES = frozenset({("V1Secret", "data"), ("V1ConfigMap", "binary_data")})

# "V1Pod", "CoreV1Event", "EventsV1EventSeries", "V1beta1X": the API-version prefix of a model's name.
_PREFIX = re.compile(r"^[A-Za-z]*?V\d+(?:alpha\d+|beta\d+)?(?=[A-Z])")
# The group prefix kubernetes_asyncio puts on models whose name exists in several groups.
_GROUP_PREFIX = {"": "Core", "events.k8s.io": "Events", "discovery.k8s.io": "Discovery"}


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar: ``json`` is ``string``, ``integer``, ``number`` or ``boolean``."""

    json: str
    go_type: str
    bits: int = 0  # integers: 32 or 64


@dataclass(frozen=True)
class Time:
    micro: bool

    @property
    def go_type(self) -> str:
        return "v1.MicroTime" if self.micro else "v1.Time"


@dataclass(frozen=True)
class Quantity:
    go_type: str = "resource.Quantity"


@dataclass(frozen=True)
class IntOrString:
    go_type: str = "intstr.IntOrString"


@dataclass(frozen=True)
class AnyJSON:
    go_type: str = "interface {}"


@dataclass(frozen=True)
class ListOf:
    item: Node

    @property
    def go_type(self) -> str:
        return "[]" + self.item.go_type


@dataclass(frozen=True)
class MapOf:
    value: Node
    named: str = ""  # a named map type (v1.ResourceList)

    @property
    def go_type(self) -> str:
        return self.named or "map[string]" + self.value.go_type


@dataclass(eq=False)
class Struct:
    """A Go struct: ``name`` is the Go type name (``PodSpec``), ``fields`` JSON name → node."""

    name: str
    fields: dict[str, Node] = field(default_factory=dict)

    @property
    def go_type(self) -> str:
        return "v1." + self.name


Node = Scalar | Time | Quantity | IntOrString | AnyJSON | ListOf | MapOf | Struct

_STRING = Scalar("string", "string")
_BOOL = Scalar("boolean", "bool")
_FLOAT = Scalar("number", "float64")
_INT32 = Scalar("integer", "int32", 32)
_INT64_NODE = Scalar("integer", "int64", 64)
_BYTE_STRING = Scalar("string", "[]uint8")


def go_name(model: str) -> str:
    """The Go struct name of a kubernetes_asyncio model: ``CoreV1Event`` → ``Event``."""
    return _PREFIX.sub("", model)


def _leaf(type_name: str, json_name: str) -> Node:
    if type_name == "str":
        return Quantity() if json_name in _QUANTITY else _STRING
    if type_name == "int":
        return _INT64_NODE if json_name in _INT64 else _INT32
    if type_name == "bool":
        return _BOOL
    if type_name == "float":
        return _FLOAT
    if type_name == "datetime":
        return Time(json_name in _MICRO_TIME)
    if type_name == "object":
        return IntOrString() if json_name in _INT_OR_STRING else AnyJSON()
    return _struct(type_name)


def _node(type_name: str, json_name: str, model: str, attribute: str) -> Node:
    if type_name.startswith("list[") and type_name.endswith("]"):
        return ListOf(_node(type_name[5:-1], json_name, model, attribute))
    if type_name.startswith("dict(str, ") and type_name.endswith(")"):
        if (model, attribute) in _BYTES:
            return MapOf(_BYTE_STRING)
        value = _node(type_name[10:-1], json_name, model, attribute)
        return MapOf(value, "v1.ResourceList" if isinstance(value, Quantity) else "")
    return _leaf(type_name, json_name)


_STRUCTS: dict[str, Struct] = {}


def _struct(model: str) -> Struct:
    if model in _STRUCTS:
        return _STRUCTS[model]
    cls = getattr(models, model)
    struct = _STRUCTS[model] = Struct(go_name(model))
    # Registered before its fields are filled, so a model that refers to itself finds this node.
    for attribute, type_name in cls.openapi_types.items():
        json_name = cls.attribute_map[attribute]
        struct.fields[json_name] = _node(type_name, json_name, model, attribute)
    return struct


def _model_name(group: str, version: str, kind: str) -> str | None:
    v = version[:1].upper() + version[1:]
    for candidate in (_GROUP_PREFIX.get(group, "") + v + kind, v + kind):
        if hasattr(models, candidate):
            return candidate
    return None


@functools.cache
def schema(api_version: str, kind: str) -> Struct | None:
    """The root struct of a built-in kind (``"v1", "Pod"``; ``"apps/v1", "Deployment"``), built once."""
    group, _, version = api_version.rpartition("/")
    model = _model_name(group, version, kind)
    return None if model is None else _struct(model)


__all__ = [
    "AnyJSON",
    "IntOrString",
    "ListOf",
    "MapOf",
    "Node",
    "Quantity",
    "Scalar",
    "Struct",
    "Time",
    "go_name",
    "schema",
]
