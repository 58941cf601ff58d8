"""The AutoscalingListener machine: its table over ListenerState, the steps of §2.4 in order, deletion, drift,
the objects it builds (§1.5, §1.7, §5.2) and the listener pod's restart backoff, run as sequences of pure
decisions over the dict world of ``listenerworld``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from statemachines import autoscalinglisteners, effects, listenerbackoff, listenerobjects, naming, pods
from statemachines.decisions import Decision
from statemachines.phases import ListenerState
from statemachines.snapshots import Settings
from tests.unit.statemachines.listenerworld import (
    AL_NAME,
    AL_NS,
    ARS_NS,
    NOW,
    REF,
    SETTINGS,
    ListenerWorld,
    make_listener,
)

AL = autoscalinglisteners
S = ListenerState


def kinds(decision: Decision) -> list[str]:
    return [f"{type(e).__name__}:{getattr(e, 'target', None) and e.target.kind}" for e in decision.effects]  # type: ignore[attr-defined]


def of_type(decision: Decision, kind: type[effects.Effect]) -> list[Any]:
    return [e for e in decision.effects if isinstance(e, kind)]


def requeue(decision: Decision) -> float | None:
    found = of_type(decision, effects.RequeueAfter)
    return found[0].seconds if found else None


def running_world(**listener: Any) -> ListenerWorld:
    world = ListenerWorld.with_listener(make_listener(**listener))
    world.settle()
    world.run()
    world.settle()
    assert AL.current_state(world.snapshot()) is S.RUNNING
    return world


# -- the table (STYLE §6 item 7) ------------------------------------------------------------------------


def test_every_state_is_reached_or_initial() -> None:
    assert {row.dest for row in AL.ROWS} | {S.NONE} == set(S)


def test_every_row_source_is_a_declared_state() -> None:
    declared = {s.value for s in S}
    for row in AL.ROWS:
        assert set(row.source) <= declared and row.dest in declared


def test_rows_sharing_a_trigger_and_source_keep_their_order() -> None:
    pairs: dict[tuple[str, str], list[str]] = {}
    for row in AL.ROWS:
        for source in row.source:
            pairs.setdefault((row.trigger, source), []).append(row.dest)
    shared = {k: v for k, v in pairs.items() if len(v) > 1}
    # A failure backs off when the guard says so, and otherwise recreates at once: the guarded row first.
    assert shared == {(AL.Trigger.POD_FAILED, s): ["BackOff", "Pending"] for s in ("", "Pending", "Running")}


# -- the steps of §2.4, in order --------------------------------------------------------------------------


def test_steps_in_order_from_a_new_listener_to_running() -> None:
    world = ListenerWorld.with_listener(make_listener(finalizers=[], proxy=True))
    passes = world.settle()
    assert [d.note for d in passes] == [
        "finalizer added",
        "service account created",
        "Role created",
        "RoleBinding created",
        "proxy secret written",
        "config secret created",
        "listener pod created",
        "waiting for the listener container to report",
    ]
    # The ServiceAccount is waited for through its own event; every other dependent requeues (Requeue: true).
    assert [requeue(d) for d in passes[1:6]] == [None, 1.0, 1.0, 1.0, 1.0]
    assert [(t.from_, t.to, t.trigger) for d in passes for t in d.transitions] == [
        ("", "Pending", "building")
    ]
    world.run()
    running = world.step()
    assert [(t.from_, t.to, t.trigger) for t in running.transitions] == [
        ("Pending", "Running", "pod_running")
    ]
    assert world.step().is_noop


def test_without_a_proxy_there_is_no_proxy_secret() -> None:
    world = ListenerWorld.with_listener()
    notes = [d.note for d in world.settle()]
    assert "proxy secret written" not in notes
    assert world.get(AL.PROXY_SECRET) is None


def test_a_settled_listener_writes_nothing() -> None:
    world = running_world(proxy=True)
    assert AL.decide(world.snapshot()).effects == ()


def test_the_runner_set_gone_deletes_the_listener() -> None:
    world = running_world()
    del world.objects[("AutoscalingRunnerSet", ARS_NS, "arc")]
    decision = world.step()
    assert [(type(e).__name__, e.target) for e in decision.effects] == [("DeleteObject", REF)]  # type: ignore[attr-defined]


def test_deletion_removes_each_object_in_order_then_the_finalizer() -> None:
    world = running_world(proxy=True)
    world.listener["metadata"]["deletionTimestamp"] = pods.format_time(NOW)  # type: ignore[index]
    deleted = []
    for _ in range(10):
        decision = world.step()
        deleted += [
            d.target.kind + ("-" + d.target.name.rsplit("-", 1)[-1])
            for d in of_type(decision, effects.DeleteObject)
        ]
        if world.listener is None:
            break
        assert requeue(decision) == AL.CLEANUP_SECONDS
    assert deleted == [
        "Pod-listener",
        "Secret-config",
        "Secret-proxy",
        "RoleBinding-listener",
        "Role-listener",
        "ServiceAccount-listener",
    ]
    assert world.listener is None


def test_deletion_waits_for_a_terminating_object() -> None:
    world = running_world()
    world.listener["metadata"]["deletionTimestamp"] = pods.format_time(NOW)  # type: ignore[index]
    world.get(AL.POD)["metadata"]["deletionTimestamp"] = pods.format_time(NOW)  # type: ignore[index]
    decision = AL.decide(world.snapshot())
    assert of_type(decision, effects.DeleteObject) == [] and requeue(decision) == AL.CLEANUP_SECONDS


# -- drift ------------------------------------------------------------------------------------------------


def test_service_account_metadata_drift_is_merged_back() -> None:
    world = running_world()
    sa = world.get(AL.SERVICE_ACCOUNT)
    assert sa is not None
    sa["metadata"]["annotations"]["iam"] = "edited"
    sa["metadata"]["labels"]["extra"] = "kept"
    decision = world.step()
    patch = of_type(decision, effects.MergePatch)[0]
    assert patch.patch == {"metadata": {"annotations": {"iam": "role-1"}}}
    assert requeue(decision) == AL.REQUEUE_SOON
    assert world.step().is_noop


def test_role_rules_drift_is_patched() -> None:
    world = running_world()
    role = world.get(AL.ROLE)
    assert role is not None
    role["rules"] = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    decision = world.step()
    assert of_type(decision, effects.MergePatch)[0].patch == {
        "rules": listenerobjects.role_rules(make_listener())
    }
    assert world.step().is_noop


def test_a_credentials_change_remakes_the_config_secret_and_the_pod() -> None:
    world = running_world()
    old_pod = world.get(AL.POD)["metadata"]["uid"]  # type: ignore[index]
    world.put(world.get(AL.CREDENTIALS_SECRET))  # type: ignore[arg-type]  # a new resourceVersion
    remake = world.step()
    assert [d.target.name for d in of_type(remake, effects.DeleteObject)] == [f"{AL_NAME}-config"]
    assert world.step().note == "config secret created"
    replaced = world.step()
    assert [(t.from_, t.to, t.trigger) for t in replaced.transitions] == [
        ("Running", "Pending", "pod_replaced")
    ]
    assert [d.target.kind for d in of_type(replaced, effects.DeleteObject)] == ["Pod"]
    world.step()
    assert world.get(AL.POD)["metadata"]["uid"] != old_pod  # type: ignore[index]
    world.run()
    assert [t.to for t in world.step().transitions] == ["Running"]


def test_pod_metadata_drift_is_patched_without_a_restart() -> None:
    world = running_world()
    world.get(AL.POD)["metadata"]["labels"].pop(naming.LABEL_SCALE_SET_NAME)  # type: ignore[index]
    decision = world.step()
    assert kinds(decision) == ["MergePatch:Pod"]
    assert world.step().is_noop


# -- the listener pod's restart backoff -------------------------------------------------------------------


def _fail_quickly(world: ListenerWorld, ran: float = 3) -> Decision:
    world.advance(ran)
    world.end()
    return world.step()


def test_backoff_grows_to_the_cap() -> None:
    world = running_world()
    delays = []
    for _ in range(10):
        failed = _fail_quickly(world)
        assert [d.target.kind for d in of_type(failed, effects.DeleteObject)] == ["Pod"]
        delay = requeue(failed) or 0.0
        delays.append(delay)
        if delay:
            assert [t.to for t in failed.transitions] == ["BackOff"]
            waiting = world.step()
            assert requeue(waiting) == delay and not of_type(waiting, effects.CreateObject)
            world.advance(delay - 1)
            assert requeue(world.step()) == 1.0
            world.advance(1)
        recreated = world.step()
        assert of_type(recreated, effects.CreateObject)
        world.run()
        world.step()
    assert delays == [0, 5, 10, 20, 40, 80, 160, 300, 300, 300]
    assert [e.reason for e in world.events if not e.trigger] == ["ListenerPodFailed"] + [
        "ListenerBackOff"
    ] * 9
    assert (
        world.get(AL.SERVICE_ACCOUNT)["metadata"]["annotations"][listenerbackoff.ANNOTATION_FAILURES] == "10"
    )  # type: ignore[index]


def test_backoff_resets_after_a_stable_run() -> None:
    world = running_world()
    for _ in range(3):
        _fail_quickly(world)
        world.advance(60)
        world.step()
        world.run()
        world.step()
    stable = _fail_quickly(world, ran=listenerbackoff.STABLE_SECONDS)
    assert requeue(stable) is None and [t.to for t in stable.transitions] == ["Pending"]
    assert of_type(world.step(), effects.CreateObject)
    world.run()
    world.step()
    assert requeue(_fail_quickly(world)) == 5.0


def test_backoff_is_skipped_when_the_configuration_changed() -> None:
    world = running_world()
    _fail_quickly(world)
    world.advance(60)
    world.step()
    world.run()
    world.step()
    assert requeue(_fail_quickly(world)) == 5.0
    world.put(world.get(AL.CREDENTIALS_SECRET))  # type: ignore[arg-type]  # the credentials rotate
    world.step()  # the config secret goes
    world.step()  # and comes back
    created = world.step()
    assert of_type(created, effects.CreateObject) and [t.trigger for t in created.transitions] == [
        "backoff_elapsed"
    ]


def test_an_evicted_pod_counts_as_a_failure() -> None:
    world = running_world()
    world.advance(1)
    world.evict()
    decision = world.step()
    assert [d.target.kind for d in of_type(decision, effects.DeleteObject)] == ["Pod"]
    assert [(t.from_, t.to, t.trigger) for t in decision.transitions] == [
        ("Running", "Pending", "pod_failed")
    ]


def test_a_pod_being_deleted_is_not_a_failure() -> None:
    world = running_world()
    world.end()
    world.get(AL.POD)["metadata"]["deletionTimestamp"] = pods.format_time(NOW)  # type: ignore[index]
    decision = AL.decide(world.snapshot())
    assert decision.effects == () and decision.note == "waiting for the listener pod to go"


@pytest.mark.parametrize(
    ("count", "delay"), [(0, 0), (1, 0), (2, 5), (3, 10), (4, 20), (7, 160), (8, 300), (50, 300)]
)
def test_backoff_delay(count: int, delay: float) -> None:
    assert listenerbackoff.delay(count) == delay


# -- the objects (§1.5, §1.7, §5.2) ----------------------------------------------------------------------


def test_service_account_role_and_binding() -> None:
    listener = make_listener()
    sa = listenerobjects.service_account(listener)
    assert (sa["metadata"]["namespace"], sa["metadata"]["name"]) == (AL_NS, AL_NAME)
    assert sa["metadata"]["ownerReferences"][0]["kind"] == "AutoscalingListener"
    assert sa["metadata"]["labels"][naming.LABEL_SCALE_SET_NAMESPACE] == ARS_NS
    assert sa["metadata"]["annotations"]["iam"] == "role-1"
    role = listenerobjects.role(listener)
    assert role["metadata"]["namespace"] == ARS_NS and "ownerReferences" not in role["metadata"]
    assert role["metadata"]["labels"]["auto-scaling-listener-name"] == AL_NAME
    assert role["metadata"]["labels"]["auto-scaling-listener-namespace"] == AL_NS
    group = ["actions.github.com"]
    assert role["rules"] == [
        {
            "apiGroups": group,
            "resources": ["ephemeralrunnersets"],
            "resourceNames": ["arc"],
            "verbs": ["patch"],
        },
        {
            "apiGroups": group,
            "resources": ["ephemeralrunners", "ephemeralrunners/status"],
            "verbs": ["patch"],
        },
    ]
    binding = listenerobjects.role_binding(listener)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": AL_NAME}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": AL_NAME, "namespace": AL_NS}]
    for obj in (sa, role, binding):
        assert obj["metadata"]["annotations"][naming.ANNOTATION_INTEGRITY_HASH]


def test_config_settings_hold_every_key_but_the_credentials() -> None:
    settings = listenerobjects.config_settings(make_listener(), SETTINGS)
    assert settings == {
        "configure_url": "https://github.com/org",
        "vault_type": "",
        "ephemeral_runner_set_namespace": ARS_NS,
        "ephemeral_runner_set_name": "arc",
        "max_runners": 10,
        "min_runners": 1,
        "runner_scale_set_id": 7,
        "runner_scale_set_name": "arc",
        "server_root_ca": "",
        "log_level": "debug",
        "log_format": "text",
        "metrics_addr": ":8080",
        "metrics_endpoint": "/metrics",
        "metrics": {"counters": {"gha_started_jobs_total": {"labels": ["repository"]}}},
    }
    effect = listenerobjects.config_secret(make_listener(), SETTINGS, None)
    assert (effect.target.name, effect.scope.namespace, effect.scope.secret_name) == (
        f"{AL_NAME}-config",
        ARS_NS,
        "creds",
    )


def test_config_settings_with_a_vault_and_without_metrics() -> None:
    listener = make_listener()
    vault = {"url": "https://v", "tenantId": "t", "clientId": "c", "certificatePath": "/p"}
    listener["spec"]["vaultConfig"] = {"type": "azure_key_vault", "azureKeyVault": vault}
    settings = listenerobjects.config_settings(listener, Settings(listener_metrics_addr="0"))
    assert settings["vault_type"] == "azure_key_vault" and settings["vault_lookup_key"] == "creds"
    assert settings["azure_key_vault"] == {
        "tenant_id": "t",
        "client_id": "c",
        "url": "https://v",
        "certificate_path": "/p",
    }
    assert (settings["metrics_addr"], settings["metrics_endpoint"]) == ("", "")


def test_listener_pod() -> None:
    pod = listenerobjects.listener_pod(make_listener(proxy=True), SETTINGS, {"config": "h"})
    spec = pod["spec"]
    assert (pod["metadata"]["name"], pod["metadata"]["namespace"]) == (AL_NAME, AL_NS)
    assert pod["metadata"]["labels"] == make_listener()["metadata"]["labels"]
    assert set(pod["metadata"]["annotations"]) == {naming.ANNOTATION_INTEGRITY_HASH}
    assert spec["serviceAccountName"] == AL_NAME and spec["restartPolicy"] == "Never"
    assert (
        spec["nodeSelector"] == {"kubernetes.io/os": "linux"} and spec["terminationGracePeriodSeconds"] == 60
    )
    assert spec["imagePullSecrets"] == [{"name": "pull"}]
    assert spec["volumes"] == [{"name": "listener-config", "secret": {"secretName": f"{AL_NAME}-config"}}]
    [container] = spec["containers"]
    assert container == {
        "name": "listener",
        "image": "arcsm:1.0",
        "command": ["/ghalistener"],
        "env": [
            {"name": "LISTENER_CONFIG_PATH", "value": "/etc/gha-listener/config.json"},
            {
                "name": "https_proxy",
                "valueFrom": {"secretKeyRef": {"name": f"{AL_NAME}-proxy", "key": "https_proxy"}},
            },
        ],
        "volumeMounts": [{"name": "listener-config", "mountPath": "/etc/gha-listener", "readOnly": True}],
        "ports": [{"name": "metrics", "containerPort": 8080, "protocol": "TCP"}],
    }


def test_listener_pod_template_merge() -> None:
    merged = {"name": "listener", "image": "custom:2", "env": [{"name": "E", "value": "1"}]}
    template = {
        "metadata": {
            "labels": {"extra": "x", naming.LABEL_SCALE_SET_NAME: "ignored"},
            "annotations": {"a": "b"},
        },
        "spec": {
            "containers": [
                {**merged, "resources": {"limits": {"cpu": "1"}}},
                {"name": "sidecar", "image": "side"},
            ],
            "volumes": [{"name": "extra", "emptyDir": {}}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
    }  # fmt: skip
    listener = make_listener(template=template)
    before = copy.deepcopy(listener)
    pod = listenerobjects.listener_pod(listener, Settings(), {})
    assert listener == before, "nothing observed is mutated"
    labels, annotations = pod["metadata"]["labels"], pod["metadata"]["annotations"]
    assert labels["extra"] == "x" and labels[naming.LABEL_SCALE_SET_NAME] == "arc"
    assert annotations["a"] == "b" and naming.ANNOTATION_INTEGRITY_HASH in annotations
    listener_container, sidecar = pod["spec"]["containers"]
    assert listener_container["image"] == "custom:2" and listener_container["command"] == ["/ghalistener"]
    assert [e["name"] for e in listener_container["env"]] == ["LISTENER_CONFIG_PATH", "E"]
    assert listener_container["resources"] == {"limits": {"cpu": "1"}} and "ports" not in listener_container
    assert sidecar == {"name": "sidecar", "image": "side"}
    assert [v["name"] for v in pod["spec"]["volumes"]] == ["listener-config", "extra"]
    assert pod["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]
    # Upstream takes these pod fields from the template even when it leaves them empty.
    assert "nodeSelector" not in pod["spec"] and "imagePullSecrets" not in pod["spec"]
    assert pod["spec"]["serviceAccountName"] == AL_NAME and pod["spec"]["restartPolicy"] == "Never"


def test_the_pod_hash_follows_its_inputs() -> None:
    listener = make_listener()
    base = listenerobjects.listener_pod(listener, SETTINGS, {"config": "a"})

    def digest(pod: dict[str, Any]) -> str:
        return str(pod["metadata"]["annotations"][naming.ANNOTATION_INTEGRITY_HASH])

    assert digest(base) == digest(listenerobjects.listener_pod(listener, SETTINGS, {"config": "a"}))
    assert digest(base) != digest(listenerobjects.listener_pod(listener, SETTINGS, {"config": "b"}))
    assert digest(base) != digest(
        listenerobjects.listener_pod(listener, Settings(listener_entrypoint="/x"), {"config": "a"})
    )


def test_decide_does_not_mutate_the_snapshot_and_replays_the_same() -> None:
    world = running_world(proxy=True)
    world.advance(2)
    world.end()
    snapshot = world.snapshot()
    before = copy.deepcopy((snapshot.obj, snapshot.related, snapshot.results))
    assert AL.decide(snapshot) == AL.decide(snapshot)
    assert (snapshot.obj, snapshot.related, snapshot.results) == before
