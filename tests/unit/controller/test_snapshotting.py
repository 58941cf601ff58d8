"""Snapshots built from a hand-made journal prefix: what each machine's snapshot holds, the results it
reads (latest per key, of the object it is now) and the clock (the time of the last record)."""

from __future__ import annotations

from controller.loop import snapshotting
from statemachines import autoscalinglisteners as al
from statemachines import autoscalingrunnersets as ars
from statemachines import desired, ephemeralrunners, ephemeralrunnersets, naming
from statemachines.snapshots import Settings
from store import clocks
from tests.unit.controller.objects import CONTROLLER_NS, NS, Prefix, obj, ref

SETTINGS = Settings(controller_namespace=CONTROLLER_NS)
CLEANUP_ROLE = "actions.github.com/cleanup-manager-role-name"


def scale_set(**annotations: str) -> dict:
    spec = {"githubConfigUrl": "https://x/org", "githubConfigSecret": "creds"}
    return obj("AutoscalingRunnerSet", "arc", uid="ars-uid", spec=spec, annotations=annotations)


def listener_for(name: str) -> dict:
    spec = {
        "autoscalingRunnerSetNamespace": NS,
        "autoscalingRunnerSetName": "arc",
        "githubConfigSecret": "creds",
        "proxy": {"http": {"url": "http://proxy"}},
    }
    return obj("AutoscalingListener", name, CONTROLLER_NS, uid=f"{name}-uid", spec=spec)


def test_the_scale_set_snapshot_holds_its_runner_set_listener_and_cleanup_dependents() -> None:
    prefix = Prefix()
    ars_obj = scale_set(**{CLEANUP_ROLE: "arc-manager"})
    prefix.put(ars_obj)
    prefix.put(obj("EphemeralRunnerSet", "arc", owner=("AutoscalingRunnerSet", "arc", "ars-uid")))
    wanted = desired.listener_ref(ars_obj, SETTINGS).name
    prefix.put(listener_for("arc-old-listener"))
    prefix.put(listener_for(wanted))
    prefix.put(obj("Role", "arc-manager"))

    snapshot = snapshotting.build(prefix.fold.view(), ref("AutoscalingRunnerSet", "arc"), SETTINGS)

    assert snapshot.obj == ars_obj
    assert snapshot.get(ars.ERS)["metadata"]["name"] == "arc"
    assert snapshot.get(ars.LISTENER)["metadata"]["name"] == wanted  # the computed name wins
    assert snapshot.get(CLEANUP_ROLE)["metadata"]["name"] == "arc-manager"
    assert snapshot.now == clocks.parse_time(prefix.at(prefix.seq))


def test_a_scale_set_finds_a_runner_set_of_another_name_by_ownership() -> None:
    prefix = Prefix()
    prefix.put(scale_set())
    prefix.put(obj("EphemeralRunnerSet", "arc-x7k2p", owner=("AutoscalingRunnerSet", "arc", "ars-uid")))
    snapshot = snapshotting.build(prefix.fold.view(), ref("AutoscalingRunnerSet", "arc"), SETTINGS)
    assert snapshot.get(ars.ERS)["metadata"]["name"] == "arc-x7k2p"
    assert snapshot.get(ars.LISTENER) is None


def test_the_runner_set_snapshot_holds_its_runners_and_proxy_secret() -> None:
    prefix = Prefix()
    prefix.put(obj("EphemeralRunnerSet", "arc", uid="ers-uid"))
    for name in ("arc-b", "arc-a"):
        prefix.put(obj("EphemeralRunner", name, owner=("EphemeralRunnerSet", "arc", "ers-uid")))
    prefix.put(obj("EphemeralRunner", "stray", owner=("EphemeralRunnerSet", "other", "other-uid")))
    prefix.put(obj("Secret", "arc-x", owner=("EphemeralRunnerSet", "arc", "ers-uid")))  # not a runner
    proxy = naming.runner_set_proxy_secret_name("arc", NS)
    prefix.put(obj("Secret", proxy))

    snapshot = snapshotting.build(prefix.fold.view(), ref("EphemeralRunnerSet", "arc"), SETTINGS)

    assert [r["metadata"]["name"] for r in snapshot.children] == ["arc-a", "arc-b"]
    assert snapshot.get(ephemeralrunnersets.PROXY_SECRET)["metadata"]["name"] == proxy


def test_the_runner_snapshot_holds_the_pod_and_secret_it_owns() -> None:
    prefix = Prefix()
    prefix.put(obj("EphemeralRunner", "arc-a", uid="er-uid"))
    prefix.put(obj("Pod", "arc-a", owner=("EphemeralRunner", "arc-a", "er-uid")))
    snapshot = snapshotting.build(prefix.fold.view(), ref("EphemeralRunner", "arc-a"), SETTINGS)
    assert snapshot.get(ephemeralrunners.POD)["kind"] == "Pod"
    assert snapshot.get(ephemeralrunners.SECRET) is None
    assert snapshot.get(ephemeralrunners.OTHER_POD) is None


def test_a_pod_and_secret_of_the_runners_name_it_does_not_own_are_anothers() -> None:
    """A predecessor of the same name (another uid) left its pod and Secret, and a pod nobody owns."""
    prefix = Prefix()
    prefix.put(obj("EphemeralRunner", "arc-a", uid="new-uid"))
    prefix.put(obj("Pod", "arc-a", owner=("EphemeralRunner", "arc-a", "old-uid")))
    prefix.put(obj("Secret", "arc-a", owner=("EphemeralRunner", "arc-a", "old-uid")))
    prefix.put(obj("EphemeralRunner", "arc-b", uid="b-uid"))
    prefix.put(obj("Pod", "arc-b"))
    view = prefix.fold.view()
    snapshot = snapshotting.build(view, ref("EphemeralRunner", "arc-a"), SETTINGS)
    assert snapshot.get(ephemeralrunners.POD) is None and snapshot.get(ephemeralrunners.SECRET) is None
    assert snapshot.get(ephemeralrunners.OTHER_POD)["metadata"]["ownerReferences"][0]["uid"] == "old-uid"
    assert snapshot.get(ephemeralrunners.OTHER_SECRET)["kind"] == "Secret"
    unowned = snapshotting.build(view, ref("EphemeralRunner", "arc-b"), SETTINGS)
    assert unowned.get(ephemeralrunners.POD) is None
    assert unowned.get(ephemeralrunners.OTHER_POD)["kind"] == "Pod"


def test_the_listener_snapshot_holds_everything_its_machine_reads() -> None:
    prefix = Prefix()
    name = "arc-abc-listener"
    prefix.put(listener_for(name))
    prefix.put(scale_set())
    prefix.put(obj("ServiceAccount", name, CONTROLLER_NS))
    prefix.put(obj("Role", name))
    prefix.put(obj("RoleBinding", name))
    prefix.put(obj("Secret", naming.listener_config_secret_name(name), CONTROLLER_NS))
    prefix.put(obj("Secret", naming.listener_proxy_secret_name(name), CONTROLLER_NS))
    prefix.put(obj("Pod", name, CONTROLLER_NS))
    prefix.put(obj("Secret", "creds"))

    snapshot = snapshotting.build(
        prefix.fold.view(), ref("AutoscalingListener", name, CONTROLLER_NS), SETTINGS
    )

    keys = (al.ARS, al.SERVICE_ACCOUNT, al.ROLE, al.ROLE_BINDING, al.CONFIG_SECRET, al.PROXY_SECRET, al.POD)
    assert all(snapshot.get(key) is not None for key in (*keys, al.CREDENTIALS_SECRET)), snapshot.related
    assert snapshot.get(al.ROLE)["metadata"]["namespace"] == NS  # RBAC lives beside the scale set


def test_results_are_the_latest_per_key_with_their_time() -> None:
    prefix = Prefix()
    subject = ref("EphemeralRunner", "arc-a")
    prefix.put(obj("EphemeralRunner", "arc-a", uid="u1"))
    prefix.result(subject, "u1", "create:Pod/runners/arc-a", ok=False, error="Forbidden", message="quota")
    prefix.result(subject, "u1", "create:Pod/runners/arc-a", ok=True)
    prefix.result(subject, "u1", "jit:Secret/runners/arc-a", ok=True, runnerId=7)

    snapshot = snapshotting.build(prefix.fold.view(), subject, SETTINGS)

    assert snapshot.results["create:Pod/runners/arc-a"]["ok"] is True
    assert snapshot.results["create:Pod/runners/arc-a"]["at"] == prefix.at(3)
    assert snapshot.results["jit:Secret/runners/arc-a"]["runnerId"] == 7


def test_results_of_an_earlier_object_of_the_same_name_are_not_read() -> None:
    prefix = Prefix()
    subject = ref("EphemeralRunner", "arc-a")
    first = obj("EphemeralRunner", "arc-a", uid="u1")
    prefix.put(first)
    prefix.result(subject, "u1", "jit:Secret/runners/arc-a", ok=True, runnerId=7)
    prefix.delete(first)
    prefix.result(subject, "u1", "create:Pod/runners/arc-a", ok=True)  # late, for the gone runner
    prefix.put(obj("EphemeralRunner", "arc-a", uid="u2"))

    snapshot = snapshotting.build(prefix.fold.view(), subject, SETTINGS)

    assert snapshot.results == {}
    assert len(prefix.fold.results) == 0


def test_a_result_recorded_for_another_uid_is_not_handed_to_the_current_object() -> None:
    prefix = Prefix()
    subject = ref("AutoscalingRunnerSet", "arc")
    prefix.put(scale_set())
    prefix.result(subject, "someone-else", "actions:x", ok=True)
    prefix.result(subject, "ars-uid", "actions:y", ok=True)
    snapshot = snapshotting.build(prefix.fold.view(), subject, SETTINGS)
    assert set(snapshot.results) == {"actions:y"}


def test_a_gone_object_has_no_related_results() -> None:
    prefix = Prefix()
    snapshot = snapshotting.build(prefix.fold.view(), ref("AutoscalingRunnerSet", "arc"), SETTINGS)
    assert snapshot.obj is None and snapshot.results == {}
