"""The watched kinds: the four ARC custom resources and the built-in kinds the controller reads.

The ARC rows come from the project's table of those kinds (``statemachines.kinds``). Each row names the
kind as the API spells it (the journal's ``kind``), where it is served, and which kubernetes_asyncio call
lists (and, with ``watch=True``, watches) it in a namespace or across all of them.

Which of them the controller watches is derived from its controller declarations (every kind one names;
``controller.loop.declared.WATCHED``) and passed in ``WatchSettings.kinds``; a test pins that the two are the
same set, so a declaration naming a kind this table lacks fails at import, naming the kind.

Secrets are not here: the controller may not list or watch them (it asks for no more than upstream ARC's
charts grant), so what it knows of a Secret is what the API server answered its executor
(``controller.executor.observing``), journaled as observed records all the same.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statemachines import kinds as arc

if TYPE_CHECKING:
    from kubernetes_asyncio import client

# A kubernetes_asyncio list function with its positional arguments bound; takes the query as keywords.
ListCall = Callable[..., Awaitable[Any]]

RBAC_GROUP = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class WatchedKind:
    kind: str
    group: str
    version: str
    plural: str
    # The snake-case name in the generated client (``list_namespaced_<snake>``); "" for custom resources.
    snake: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def list_call(self, api: client.ApiClient, namespace: str | None) -> ListCall:
        """The call that lists this kind in ``namespace`` (None: every namespace)."""
        # Imported here, not with the table: the settings read the table, and whoever only reads the
        # settings (``arcsm run --help``) does without kubernetes_asyncio's client.
        from kubernetes_asyncio import client

        if not self.snake:
            custom = client.CustomObjectsApi(api)
            if namespace is None:
                return functools.partial(
                    custom.list_cluster_custom_object, self.group, self.version, self.plural
                )
            return functools.partial(
                custom.list_namespaced_custom_object, self.group, self.version, namespace, self.plural
            )
        typed = client.RbacAuthorizationV1Api(api) if self.group == RBAC_GROUP else client.CoreV1Api(api)
        if namespace is None:
            return getattr(typed, f"list_{self.snake}_for_all_namespaces")  # type: ignore[no-any-return]
        return functools.partial(getattr(typed, f"list_namespaced_{self.snake}"), namespace)


KINDS: tuple[WatchedKind, ...] = (
    *(WatchedKind(k.kind, k.group, k.version, k.plural) for k in arc.ALL),
    WatchedKind("Pod", "", "v1", "pods", snake="pod"),
    WatchedKind("ServiceAccount", "", "v1", "serviceaccounts", snake="service_account"),
    WatchedKind("Role", RBAC_GROUP, "v1", "roles", snake="role"),
    WatchedKind("RoleBinding", RBAC_GROUP, "v1", "rolebindings", snake="role_binding"),
)
BY_NAME: dict[str, WatchedKind] = {k.kind: k for k in KINDS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
