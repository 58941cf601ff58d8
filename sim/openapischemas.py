"""``components.schemas`` of an OpenAPI v3 group-version document, what ``kubectl explain`` reads.

``schemas(kinds)`` gives, for the kinds of one group-version, the schema of each kind by its component
name with ``x-kubernetes-group-version-kind``, plus every schema those reference:

- a built-in kind: its schema derived from kubernetes_asyncio's models (``sim.builtinschemas``);
- a custom resource: its CRD's structural schema as kube-apiserver publishes it, named
  ``<reversed group>.<version>.<Kind>`` (``com.github.actions.v1alpha1.AutoscalingRunnerSet``), with
  ``metadata`` a reference to ``ObjectMeta``.

Pure functions over ``Kind`` rows; the built-in derivation imports the client's models the first time,
so a server calls this off its event loop.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from sim import builtinschemas
from sim.kinds import Kind

Schema = dict[str, Any]

METADATA_DESCRIPTION = builtinschemas.METADATA_DESCRIPTION


def custom_name(kind: Kind) -> str:
    """kube-apiserver's component name of a custom resource's schema."""
    reversed_group = ".".join(reversed(kind.group.split(".")))
    return f"{reversed_group}.{kind.version}.{kind.kind}"


def _gvk(kind: Kind) -> list[dict[str, str]]:
    return [{"group": kind.group, "kind": kind.kind, "version": kind.version}]


def _custom(kind: Kind, meta_name: str) -> Schema:
    schema: Schema = copy.deepcopy(dict(kind.schema or {}))
    schema.setdefault("type", "object")
    properties = schema.setdefault("properties", {})
    metadata = {"allOf": [{"$ref": "#/components/schemas/" + meta_name}], "description": METADATA_DESCRIPTION}
    properties["metadata"] = metadata
    schema["x-kubernetes-group-version-kind"] = _gvk(kind)
    return schema


def schemas(kinds: Iterable[Kind]) -> dict[str, Schema]:
    """Component name → schema for ``kinds`` and what they reference (built-ins' are shared: read only)."""
    out: dict[str, Schema] = {}
    for kind in kinds:
        if kind.is_custom:
            meta_name, meta = builtinschemas.object_meta()
            out.update(meta)
            out[custom_name(kind)] = _custom(kind, meta_name)
        else:
            out.update(builtinschemas.components(kind.group, kind.version, kind.kind))
    return dict(sorted(out.items()))
