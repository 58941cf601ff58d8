"""The projection indexes the controller's per-event lookups read, so none of them scans a whole kind.

Each is a ``store.projection.Index``: a kind and the values an object of it is found under, read from the
object alone (and its key), so the index is the same however the projection was reached (a live fold, a
replay, a snapshot read back). ``Projection.find`` answers in the order a sorted scan of the kind did.

* ``LISTENERS_BY_SCALE_SET``: an AutoscalingListener under the scale set its spec names,
  ``(autoscalingRunnerSetNamespace, autoscalingRunnerSetName)``;
* ``LISTENERS_BY_CREDENTIALS``: an AutoscalingListener under ``(autoscalingRunnerSetNamespace,
  githubConfigSecret)``, the Secret it reads its credentials from;
* ``SCALE_SETS_BY_CREDENTIALS``: an AutoscalingRunnerSet under ``(its namespace, githubConfigSecret)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from statemachines import listenerobjects
from statemachines.jsonvalues import JsonObject
from statemachines.kinds import AL, ARS
from store.projection import Index, ObjectKey


def _scale_set_named(key: ObjectKey, listener: JsonObject) -> Iterable[tuple[str, str]]:
    name = str(listenerobjects.spec(listener).get("autoscalingRunnerSetName") or "")
    yield listenerobjects.ars_namespace(listener), name


def _listener_credentials(key: ObjectKey, listener: JsonObject) -> Iterable[tuple[str, str]]:
    secret = listenerobjects.spec(listener).get("githubConfigSecret")
    if isinstance(secret, str):
        yield listenerobjects.ars_namespace(listener), secret


def _scale_set_credentials(key: ObjectKey, scale_set: JsonObject) -> Iterable[tuple[str, str]]:
    spec = scale_set.get("spec")
    secret = spec.get("githubConfigSecret") if isinstance(spec, Mapping) else None
    if isinstance(secret, str):
        yield key[1], secret


LISTENERS_BY_SCALE_SET = Index("listeners by the scale set they name", AL, _scale_set_named)
LISTENERS_BY_CREDENTIALS = Index("listeners by their githubConfigSecret", AL, _listener_credentials)
SCALE_SETS_BY_CREDENTIALS = Index("scale sets by their githubConfigSecret", ARS, _scale_set_credentials)
