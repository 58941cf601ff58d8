"""Snapshots: everything one decision may read, gathered from the projection before the machine runs.

No reconcile reads the API. The snapshot carries the object, its neighbours and children as last
observed, the facts earlier effects returned (scale set ids, runner ids), the controller's settings and
the clock, taken from the journal so a replay sees the same time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from statemachines.effects import ObjectRef
from statemachines.jsonvalues import JsonObject
from statemachines.objects import ObjectMeta, meta_of


@dataclass(frozen=True)
class Settings:
    """The controller configuration decisions depend on (flags and environment of §2.0 and §7)."""

    controller_namespace: str = "arc-systems"
    # The image listener pods run (upstream: CONTROLLER_MANAGER_CONTAINER_IMAGE).
    listener_image: str = "arcsm:dev"
    # Compared with an AutoscalingRunnerSet's app.kubernetes.io/version label (the version gate).
    build_version: str = "dev"
    exclude_label_prefixes: tuple[str, ...] = ()
    image_pull_secrets: tuple[str, ...] = ()
    listener_log_level: str = "debug"
    listener_log_format: str = "text"
    listener_metrics_addr: str = ""
    listener_metrics_endpoint: str = ""
    # The listener container's command (upstream: LISTENER_ENTRYPOINT, default /ghalistener).
    listener_entrypoint: str = "/ghalistener"
    # The kinds whose served CRD schema prunes status.conditions (upstream's CRDs): none are written there
    # (``statemachines.servedfields``; read from the cluster at start by ``controller.loop.servedschemas``).
    conditions_pruned: tuple[str, ...] = ()


@dataclass(frozen=True)
class Snapshot:
    subject: ObjectRef
    # The object as last observed; None once it is gone.
    obj: JsonObject | None
    now: datetime
    settings: Settings = field(default_factory=Settings)
    # Named neighbours the reconcile of §2 would GET: "ers", "listener", "pod", "secret", ... (None: absent).
    related: Mapping[str, JsonObject | None] = field(default_factory=dict)
    # Owned children (an EphemeralRunnerSet's runners), as last observed.
    children: tuple[JsonObject, ...] = ()
    # Results of earlier effects, by effect key: facts from the Actions service.
    results: Mapping[str, JsonObject] = field(default_factory=dict)

    @property
    def meta(self) -> ObjectMeta:
        return meta_of(self.obj)

    @property
    def spec(self) -> JsonObject:
        return (self.obj or {}).get("spec") or {}

    @property
    def status(self) -> JsonObject:
        return (self.obj or {}).get("status") or {}

    def get(self, name: str) -> JsonObject | None:
        return self.related.get(name)
