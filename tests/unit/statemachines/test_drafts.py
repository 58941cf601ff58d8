"""Building a decision: one effect per key, patches of the same object folded into one (§4.8 I8.2), the
patch effect sent as a JSON merge patch (I8.3), and a created object awaited while its watch event is late
(``outcomes.unobserved_for``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from kubernetes_asyncio import client

from controller.executor.kubewriting import Kube
from statemachines import effects, outcomes, pods
from statemachines.drafts import Draft, deep_merge
from statemachines.snapshots import Snapshot

REF = effects.ObjectRef("EphemeralRunner", "default", "r")
POD = effects.ObjectRef("Pod", "default", "r")
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_i8_2_patches_of_one_target_fold_into_one() -> None:
    draft = Draft(REF)
    draft.add(effects.MergePatch(REF, {"metadata": {"finalizers": ["a"]}}, resource_version="7"))
    draft.add(effects.MergePatch(REF, {"status": {"runnerId": 1}}, subresource="status"))
    draft.add(effects.MergePatch(REF, {"metadata": {"labels": {"x": "1"}}}))
    draft.add(effects.MergePatch(REF, {"status": {"ready": False, "reason": None}}, subresource="status"))
    assert draft.effects == (
        effects.MergePatch(
            REF, {"metadata": {"finalizers": ["a"], "labels": {"x": "1"}}}, resource_version="7"
        ),
        effects.MergePatch(
            REF, {"status": {"runnerId": 1, "ready": False, "reason": None}}, subresource="status"
        ),
    )


class RecordingApi:
    """Stands in for ``kubernetes_asyncio.client.ApiClient``: records each request, answers ``{}``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []

    async def call_api(self, path: str, method: str, **kwargs: Any) -> dict[str, Any]:
        self.requests.append((method, path, dict(kwargs["header_params"]), kwargs["body"]))
        return {}


@pytest.mark.parametrize(
    ("target", "subresource", "path"),
    [
        pytest.param(
            REF,
            "status",
            "/apis/actions.github.com/v1alpha1/namespaces/default/ephemeralrunners/r/status",
            id="custom-status",
        ),
        pytest.param(POD, "", "/api/v1/namespaces/default/pods/r", id="core-kind"),
    ],
)
async def test_i8_3_patches_are_merge_patches_sent_as_merge_patch_json(
    target: effects.ObjectRef, subresource: str, path: str
) -> None:
    """The machines have one patch effect, ``MergePatch``; the executor's writer sends it as
    ``application/merge-patch+json`` whatever the kind (a dict body on a core kind would otherwise go
    out as a strategic merge patch)."""
    patch_effects = [
        cls for cls in vars(effects).values() if isinstance(cls, type) and "patch" in cls.__name__.lower()
    ]
    assert patch_effects == [effects.MergePatch]
    api = RecordingApi()
    kube = Kube(cast(client.ApiClient, api), qps=100, burst=10, timeout=5)
    effect = effects.MergePatch(target, {"metadata": {"labels": {"x": None}}}, subresource=subresource)
    await kube.merge_patch(effect.target, effect.patch, subresource=effect.subresource)
    [(method, sent_to, headers, body)] = api.requests
    assert (method, sent_to, body) == ("PATCH", path, {"metadata": {"labels": {"x": None}}})
    assert headers["Content-Type"] == "application/merge-patch+json"


def test_the_earliest_requeue_wins_and_duplicates_are_dropped() -> None:
    draft = Draft(REF)
    draft.add(effects.RequeueAfter(REF, 30), effects.DeleteObject(POD), effects.RequeueAfter(REF, 5))
    draft.add(effects.DeleteObject(POD, uid="other"))
    assert draft.effects == (effects.RequeueAfter(REF, 5), effects.DeleteObject(POD))


def test_deep_merge_keeps_nulls() -> None:
    assert deep_merge({"a": {"b": 1, "c": 2}}, {"a": {"c": None}, "d": [1]}) == {
        "a": {"b": 1, "c": None},
        "d": [1],
    }


def _snapshot(**results: dict[str, object]) -> Snapshot:
    return Snapshot(subject=REF, obj={}, now=NOW, results=results)


def _at(seconds_ago: float) -> str:
    return pods.format_time(NOW - timedelta(seconds=seconds_ago))


@pytest.mark.parametrize(
    ("created", "deleted", "left"),
    [
        pytest.param(None, None, 0.0, id="never-created"),
        pytest.param({"ok": True, "at": _at(2)}, None, 3.0, id="created-not-yet-seen"),
        pytest.param({"ok": True, "at": _at(9)}, None, 0.0, id="too-long-ago"),
        pytest.param({"ok": True, "at": _at(2)}, {"ok": True, "at": _at(1)}, 0.0, id="deleted-since"),
        pytest.param({"ok": True, "at": _at(2)}, {"ok": True, "at": _at(2)}, 0.0, id="deleted-same-time"),
        pytest.param({"ok": True, "at": _at(2)}, {"ok": True, "at": _at(30)}, 3.0, id="deleted-before"),
        pytest.param({"ok": False, "error": "Invalid", "at": _at(2)}, None, 0.0, id="failed"),
    ],
)
def test_unobserved_for(
    created: dict[str, object] | None, deleted: dict[str, object] | None, left: float
) -> None:
    create = effects.CreateObject(POD, {})
    results = {}
    if created is not None:
        results[create.key] = created
    if deleted is not None:
        results[effects.DeleteObject(POD).key] = deleted
    assert outcomes.unobserved_for(_snapshot(**results), create, POD, 5.0) == left
