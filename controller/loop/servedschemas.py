"""What the served CRDs keep, read once at start: the machines never write a field the API server prunes.

arcsm's CRDs give every kind ``status.conditions``; a cluster that runs upstream's CRDs with only the three
new fields added has none, and the API server drops the list from every write. ``conditions_pruned`` reads
the four CRDs (``get`` on ``customresourcedefinitions``; only a ClusterRole can grant it) and names the
kinds whose served version keeps no ``status.conditions``. The controller puts them in the machine settings,
which are journaled, so a replay decides with what the run saw; ``statemachines.servedfields`` then leaves
their conditions out of every status write, and their problems reach the user as Warning Events and error
logs only.

A CRD that cannot be read (forbidden, as with the Roles of ``watchNamespaces``, or missing) counts as
keeping conditions, with a warning saying so. A served schema without a field arcsm cannot work without
(``observedGeneration``, ``actionableRevision``, ``appliedActionableRevision``) is an error log line: apply
arcsm's CRDs. The schemas are read at start only: after changing the CRDs, restart the controller.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from controller.loop import declared
from kube import failures
from statemachines import kinds
from statemachines.kinds import ARS, ERS

log = logging.getLogger("arcsm.controller")

CONDITIONS: Final = ("status", "conditions")
# The fields of the three new ones (``controller.installation.resources``) a kind cannot work without.
REQUIRED: Final[Mapping[str, tuple[tuple[str, ...], ...]]] = {
    ARS: (("status", "observedGeneration"),),
    ERS: (("spec", "actionableRevision"), ("status", "appliedActionableRevision")),
}
DECIDED: Final = declared.DECIDED
READ_TIMEOUT: Final = 10.0  # seconds per CRD read: a start must not hang on an API server that is not there
TRANSPORT_ERRORS: Final = failures.UNANSWERED


def crd_name(kind: str) -> str:
    return f"{kinds.PLURALS[kind]}.{kinds.GROUP}"


def served_schema(crd: Mapping[str, Any], version: str = kinds.VERSION) -> Mapping[str, Any] | None:
    """The ``openAPIV3Schema`` of ``version`` in ``crd``, or None when that version is not served."""
    for entry in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(entry, Mapping) and entry.get("name") == version and entry.get("served", True):
            schema = (entry.get("schema") or {}).get("openAPIV3Schema")
            return schema if isinstance(schema, Mapping) else None
    return None


def keeps(schema: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether an object of ``schema`` keeps the field at ``path`` (structural pruning keeps declared
    properties and whatever a node marked ``x-kubernetes-preserve-unknown-fields`` holds)."""
    node: Mapping[str, Any] = schema
    for part in path:
        properties = node.get("properties")
        if isinstance(properties, Mapping) and isinstance(properties.get(part), Mapping):
            node = properties[part]
        else:
            return node.get("x-kubernetes-preserve-unknown-fields") is True
    return True


class Unreadable(Exception):
    """The API server refused the read: ``reason`` is its Status reason (by HTTP code)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def _read(api: client.ApiClient, name: str) -> Mapping[str, Any]:
    extensions = client.ApiextensionsV1Api(api)
    # Left raw (``_preload_content=False``): the answer is the HTTP response, not the typed model.
    resp: Any = await extensions.read_custom_resource_definition(
        name, _preload_content=False, _request_timeout=READ_TIMEOUT
    )
    try:
        if not 200 <= resp.status < 300:  # left raw, the answer is not raised as an ApiException
            raise Unreadable(failures.REASONS.get(resp.status, f"HTTP {resp.status}"))
        found: Mapping[str, Any] = json.loads(await resp.read())
    finally:
        resp.release()
    return found


async def conditions_pruned(api: client.ApiClient) -> tuple[str, ...]:
    """The decided kinds whose served CRD prunes ``status.conditions`` (see the module docstring)."""
    pruned: list[str] = []
    for kind in DECIDED:
        name = crd_name(kind)
        try:
            crd = await _read(api, name)
        except TRANSPORT_ERRORS as exc:
            log.warning(
                "cannot reach the API server to read CRD %s (%s): assuming the CRDs keep status.conditions",
                name,
                type(exc).__name__,
            )
            break
        except (Unreadable, ApiException, ValueError) as exc:
            reason = exc.reason if isinstance(exc, Unreadable | ApiException) else type(exc).__name__
            log.warning(
                "cannot read CRD %s (%s): assuming it keeps status.conditions; grant get on "
                "customresourcedefinitions for arcsm to check",
                name,
                reason,
            )
            continue
        schema = served_schema(crd)
        if schema is None:
            log.error("CRD %s serves no version %s: apply arcsm's CRDs", name, kinds.VERSION)
            continue
        for path in REQUIRED.get(kind, ()):
            if not keeps(schema, path):
                log.error("CRD %s prunes %s, which arcsm needs: apply arcsm's CRDs", name, ".".join(path))
        if not keeps(schema, CONDITIONS):
            log.warning(
                "CRD %s keeps no status.conditions: arcsm writes none for %s, and reports its problems "
                "as Warning Events only; apply arcsm's CRDs to get conditions",
                name,
                kind,
            )
            pruned.append(kind)
    return tuple(pruned)
