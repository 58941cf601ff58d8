"""The controller's settings: one root, validated when built; the version gate never deletes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from controller.loop.settings import ControllerSettings, QueueSettings, ReconcileSettings
from statemachines import autoscalingrunnersets, effects
from statemachines.effects import ObjectRef
from statemachines.snapshots import Snapshot
from watchers.settings import WatchSettings

ARS = ObjectRef("AutoscalingRunnerSet", "runners", "arc")


def test_a_limited_watch_always_covers_the_controller_namespace() -> None:
    settings = ControllerSettings(journal_path=Path("j.db"), watch=WatchSettings(namespaces=("runners",)))
    assert settings.watch.namespaces == ("runners", "arc-systems")
    assert ControllerSettings(journal_path=Path("j.db")).watch.namespaces == ()  # all namespaces


@pytest.mark.parametrize("label", ["0.13.0", "0.9.3", "not-a-version", ""])
def test_a_scale_set_labelled_for_any_version_is_not_deleted(label: str) -> None:
    machines = ControllerSettings(journal_path=Path("j.db")).machines
    ars = {
        "kind": "AutoscalingRunnerSet",
        "metadata": {
            "name": "arc",
            "namespace": "runners",
            "uid": "u",
            "generation": 1,
            "labels": {"app.kubernetes.io/version": label},
        },
        "spec": {"githubConfigUrl": "https://github.com/org", "githubConfigSecret": "creds"},
    }
    decision = autoscalingrunnersets.decide(
        Snapshot(subject=ARS, obj=ars, now=datetime(2026, 1, 1, tzinfo=UTC), settings=machines)
    )
    assert not any(isinstance(e, effects.DeleteObject) and e.target == ARS for e in decision.effects)
    assert decision.note == "finalizer added"


@pytest.mark.parametrize(
    "build",
    [
        lambda: QueueSettings(workers=0),
        lambda: QueueSettings(backoff_initial=2, backoff_max=1),
        lambda: QueueSettings(rate=0),
        lambda: ReconcileSettings(effect_timeout=0),
    ],
)
def test_settings_out_of_range_are_refused(build: object) -> None:
    with pytest.raises(ValueError):
        build()  # type: ignore[operator]
