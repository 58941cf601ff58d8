"""The desired EphemeralRunnerSet and AutoscalingListener of an ARS (spec §1.2, §1.4)."""

from __future__ import annotations

from typing import Any

import pytest

from statemachines import desired, naming
from statemachines.snapshots import Settings

SETTINGS = Settings(
    controller_namespace="arc-systems", listener_image="arcsm:1", image_pull_secrets=("regcred",)
)


def ars(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "arc",
            "namespace": "team",
            "uid": "u-1",
            "labels": {naming.LABEL_VERSION: "0.1.0", "team": "a", "internal.example.com/x": "1"},
            "annotations": {
                naming.ANNOTATION_RUNNER_SCALE_SET_ID: "42",
                naming.ANNOTATION_RUNNER_GROUP_NAME: "Default",
                naming.ANNOTATION_RUNNER_SCALE_SET_NAME: "arc",
                "actions.github.com/values-hash": "ignored",
            },
        },
        "spec": {
            "githubConfigUrl": "https://github.com/owner/repo",
            "githubConfigSecret": "creds",
            "template": {"metadata": {"labels": {"pod": "x"}}, "spec": {"containers": [{"name": "runner"}]}},
            **spec,
        },
    }


def test_runner_set_labels_annotations_and_spec() -> None:
    settings = Settings(exclude_label_prefixes=("internal.example.com/",))
    body = desired.ephemeral_runner_set(
        ars(ephemeralRunnerSetMetadata={"labels": {"tier": "a", "team": "user"}, "annotations": {"o": "1"}}),
        settings,
    )
    assert body["metadata"]["name"] == "arc" and body["metadata"]["namespace"] == "team"
    assert body["metadata"]["labels"] == {
        "tier": "a",
        "team": "a",  # the ARS label wins over the metadata base
        naming.LABEL_VERSION: "0.1.0",
        naming.LABEL_PART_OF: "gha-runner-scale-set",
        naming.LABEL_COMPONENT: "runner-set",
        naming.LABEL_SCALE_SET_NAME: "arc",
        naming.LABEL_SCALE_SET_NAMESPACE: "team",
        naming.LABEL_ORGANIZATION: "owner",
        naming.LABEL_REPOSITORY: "repo",
    }
    assert body["metadata"]["annotations"] == {
        "o": "1",
        naming.ANNOTATION_RUNNER_GROUP_NAME: "Default",
        naming.ANNOTATION_RUNNER_SCALE_SET_NAME: "arc",
    }
    spec = body["spec"]
    assert (spec["replicas"], spec["patchID"], spec["actionableRevision"]) == (0, 0, 1)
    assert spec["ephemeralRunnerSpec"] == {
        "githubConfigUrl": "https://github.com/owner/repo",
        "githubConfigSecret": "creds",
        "runnerScaleSetId": 42,
        "metadata": {"labels": {"pod": "x"}},
        "spec": {"containers": [{"name": "runner"}]},
    }
    assert "ephemeralRunnerMetadata" not in spec


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"metadata": {"annotations": {}}}, "runner-scale-set-id", id="no-id"),
        pytest.param(
            {"metadata": {"annotations": {naming.ANNOTATION_RUNNER_SCALE_SET_ID: "x"}}}, "id", id="bad-id"
        ),
        pytest.param({"spec": {"githubConfigUrl": "not a url"}}, "githubConfigUrl", id="bad-url"),
    ],
)
def test_build_errors_say_what_is_wrong(change: dict[str, Any], message: str) -> None:
    body = ars()
    for section, values in change.items():
        body[section].update(values)
    with pytest.raises(desired.BuildError, match=message):
        desired.ephemeral_runner_set(body, SETTINGS)


def test_listener_spec_defaults_and_pull_secrets() -> None:
    body = desired.autoscaling_listener(ars(), "arc", SETTINGS)
    ref = desired.listener_ref(ars(), SETTINGS)
    assert (body["metadata"]["namespace"], body["metadata"]["name"]) == ("arc-systems", ref.name)
    assert ref.name == naming.listener_name("arc", "team", "", "https://github.com/owner/repo")
    assert "ownerReferences" not in body["metadata"]
    assert body["spec"] == {
        "githubConfigUrl": "https://github.com/owner/repo",
        "githubConfigSecret": "creds",
        "runnerScaleSetId": 42,
        "autoscalingRunnerSetNamespace": "team",
        "autoscalingRunnerSetName": "arc",
        "ephemeralRunnerSetName": "arc",
        "minRunners": 0,
        "maxRunners": 2147483647,
        "image": "arcsm:1",
        "imagePullSecrets": [{"name": "regcred"}],
    }


def test_listener_labels_and_user_metadata() -> None:
    body = desired.autoscaling_listener(
        ars(autoscalingListener={"labels": {"extra": "1"}, "annotations": {"note": "n"}}, maxRunners=3),
        "arc",
        SETTINGS,
    )
    labels = body["metadata"]["labels"]
    assert labels["extra"] == "1" and labels["team"] == "a"
    assert labels[naming.LABEL_COMPONENT] == "runner-scale-set-listener"
    assert body["metadata"]["annotations"]["note"] == "n"
    assert body["metadata"]["annotations"][naming.ANNOTATION_INTEGRITY_HASH] == desired.spec_hash(
        body["spec"]
    )
    assert body["spec"]["maxRunners"] == 3


def test_spec_hash_ignores_spelling_but_not_content() -> None:
    a = {
        "template": {
            "spec": {"containers": [{"name": "l", "env": [], "resources": {"limits": {"cpu": "1"}}}]}
        }
    }
    b = {"template": {"spec": {"containers": [{"name": "l", "resources": {"limits": {"cpu": "1000m"}}}]}}}
    assert desired.spec_hash(a) == desired.spec_hash(b)
    assert desired.spec_hash(a) != desired.spec_hash({"template": {}})


def ers_meta(labels: dict[str, str], annotations: dict[str, str], erm: Any = None) -> dict[str, Any]:
    spec = {} if erm is None else {"ephemeralRunnerMetadata": erm}
    return {"metadata": {"labels": labels, "annotations": annotations}, "spec": spec}


@pytest.mark.parametrize(
    ("have", "want", "patch"),
    [
        pytest.param(
            ers_meta({"a": "1", "extra": "x"}, {"k": "v", "user": "u"}),
            ers_meta({"a": "1"}, {"k": "v"}),
            {},
            id="extra-keys-are-not-drift",
        ),
        pytest.param(
            ers_meta({"a": "1"}, {}),
            ers_meta({"a": "2", "b": "3"}, {}),
            {"labels": {"a": "2", "b": "3"}},
            id="changed-and-added",
        ),
        pytest.param(
            ers_meta({}, {naming.ANNOTATION_INTEGRITY_HASH: "old", "k": "v"}),
            ers_meta({}, {"k": "v"}),
            {"annotations": {naming.ANNOTATION_INTEGRITY_HASH: None}},
            id="legacy-hash-dropped",
        ),
        pytest.param(
            ers_meta({"internal.example.com/x": "1"}, {}),
            ers_meta({}, {}),
            {"labels": {"internal.example.com/x": None}},
            id="excluded-prefix-dropped",
        ),
    ],
)
def test_metadata_patch_merges_and_never_loops(
    have: dict[str, Any], want: dict[str, Any], patch: Any
) -> None:
    assert desired.metadata_patch(have, want, ("internal.example.com/",)) == patch


@pytest.mark.parametrize(
    ("have", "want", "patch"),
    [
        pytest.param(None, None, {}, id="absent"),
        pytest.param({"labels": {}}, None, {}, id="empty-is-absent"),
        pytest.param(
            None, {"labels": {"a": "1"}}, {"ephemeralRunnerMetadata": {"labels": {"a": "1"}}}, id="added"
        ),
        pytest.param({"labels": {"a": "1"}}, None, {"ephemeralRunnerMetadata": None}, id="removed"),
        pytest.param(
            {"labels": {"a": "1"}},
            {"labels": {"a": "2"}},
            {"ephemeralRunnerMetadata": {"labels": {"a": "2"}}},
            id="diff",
        ),
    ],
)
def test_runner_metadata_patch(have: Any, want: Any, patch: dict[str, Any]) -> None:
    assert desired.runner_metadata_patch(ers_meta({}, {}, have), ers_meta({}, {}, want)) == patch


def test_listener_drift() -> None:
    want = desired.autoscaling_listener(ars(), "arc", SETTINGS)
    same = {**want, "metadata": {**want["metadata"], "uid": "u", "resourceVersion": "9"}}
    assert not desired.listener_drifted(same, want)
    renamed = {**same, "metadata": {**same["metadata"], "name": "arc-old-listener"}}
    relabelled = {**same, "metadata": {**same["metadata"], "labels": {}}}
    respecced = {**same, "spec": {**same["spec"], "minRunners": 1}}
    rehashed = {
        **same,
        "metadata": {**same["metadata"], "annotations": {naming.ANNOTATION_INTEGRITY_HASH: "x"}},
    }
    for drifted in (renamed, relabelled, respecced, rehashed):
        assert desired.listener_drifted(drifted, want)


def test_keys_someone_else_added_to_the_listener_are_no_drift() -> None:
    want = desired.autoscaling_listener(ars(), "arc", SETTINGS)
    meta = want["metadata"]
    annotated = {
        **want,
        "metadata": {
            **meta,
            "labels": {**meta["labels"], "policy.example.com/scanned": "true"},
            "annotations": {**meta["annotations"], "kubectl.kubernetes.io/last-applied-configuration": "{}"},
        },
    }
    assert not desired.listener_drifted(annotated, want)
