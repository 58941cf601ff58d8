"""Results kept per object identity (``statemachines.memos``): given back only for the very objects they
were computed from, computed again for a newer object, and bounded."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from statemachines import desired, listenerobjects, memos
from tests.unit.statemachines import listenerworld
from tests.unit.statemachines.test_desired import SETTINGS, ars


class Counted:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, obj: dict[str, Any], extra: object = None) -> list[Any]:
        self.calls += 1
        if obj.get("bad"):
            raise ValueError("bad object")
        return [obj.get("value"), extra]


def test_a_result_is_given_back_for_the_same_objects_only() -> None:
    counted = Counted()
    remembered = memos.ByIdentity(counted, size=8)
    obj = {"value": 1}
    first = remembered(obj)
    assert remembered(obj) is first
    assert counted.calls == 1
    equal_but_other = {"value": 1}  # a newer observation of an unchanged object: computed again
    assert remembered(equal_but_other) == first
    assert counted.calls == 2
    changed = {"value": 2}  # a newer observation with a change: its own result
    assert remembered(changed) == [2, None]
    extra = ("x",)
    assert remembered(obj, extra) == [1, ("x",)]  # another second argument is another key
    assert remembered(obj, extra) == [1, ("x",)]
    assert counted.calls == 4
    assert remembered(obj) is first


def test_a_string_argument_is_looked_up_by_its_text() -> None:
    counted = Counted()
    remembered = memos.ByIdentity(counted, size=8)
    obj = {"value": 1}
    name = "".join(["ar", "c"])  # built at run time: not the interned literal
    first = remembered(obj, name)
    assert remembered(obj, "arc") is first
    assert remembered(obj, "arc-2") == [1, "arc-2"]
    assert counted.calls == 2


def test_the_oldest_result_goes_beyond_the_size_and_is_computed_again() -> None:
    counted = Counted()
    remembered = memos.ByIdentity(counted, size=2)
    a, b, c = {"value": "a"}, {"value": "b"}, {"value": "c"}
    remembered(a)
    remembered(b)
    remembered(a)  # a is now the newest
    remembered(c)  # b goes
    assert len(remembered) == 2
    calls = counted.calls
    remembered(a)
    remembered(c)
    assert counted.calls == calls
    remembered(b)
    assert counted.calls == calls + 1


def test_an_identity_reused_by_a_new_object_is_never_mistaken_for_the_old_one() -> None:
    """The arguments are kept with their result, so while an entry lives no other object can take the id;
    and a lookup checks the objects themselves, not only their ids."""
    counted = Counted()
    remembered = memos.ByIdentity(counted, size=4)
    results = [remembered({"value": i}) for i in range(50)]  # each dict dropped by the caller at once
    assert results == [[i, None] for i in range(50)]
    assert counted.calls == 50


def test_a_call_that_raises_keeps_nothing_and_keywords_are_not_remembered() -> None:
    counted = Counted()
    remembered = memos.ByIdentity(counted, size=4)
    bad = {"bad": True}
    for _ in range(2):
        with pytest.raises(ValueError, match="bad object"):
            remembered(bad)
    assert counted.calls == 2 and len(remembered) == 0
    obj = {"value": 3}
    remembered(obj, extra=1)
    remembered(obj, extra=1)
    assert counted.calls == 4 and len(remembered) == 0


def test_the_desired_bodies_follow_a_changed_autoscaling_runner_set() -> None:
    observed = ars()
    first = desired.ephemeral_runner_set(observed, SETTINGS)
    assert desired.ephemeral_runner_set(observed, SETTINGS) is first
    newer = copy.deepcopy(observed)
    newer["spec"]["template"]["spec"]["containers"][0]["image"] = "runner:2"
    changed = desired.ephemeral_runner_set(newer, SETTINGS)
    assert changed["spec"]["ephemeralRunnerSpec"]["spec"]["containers"][0]["image"] == "runner:2"
    assert desired.runner_spec_drifted({"spec": first["spec"]}, changed)
    assert not desired.runner_spec_drifted({"spec": first["spec"]}, first)
    listener = desired.autoscaling_listener(observed, "arc", SETTINGS)
    assert desired.autoscaling_listener(observed, "".join(["ar", "c"]), SETTINGS) is listener
    assert (
        desired.autoscaling_listener(observed, "arc-2", SETTINGS)["spec"]["ephemeralRunnerSetName"] == "arc-2"
    )
    other_settings = desired.autoscaling_listener(observed, "arc", SETTINGS.__class__(listener_image="l:2"))
    assert other_settings["spec"]["image"] == "l:2" != listener["spec"]["image"]
    assert not desired.listener_drifted(listener, listener)
    assert desired.listener_drifted(listener, other_settings)


def test_the_listener_objects_follow_a_changed_listener() -> None:
    al = listenerworld.make_listener()
    role, binding = listenerobjects.role(al), listenerobjects.role_binding(al)
    account = listenerobjects.service_account(al)
    assert listenerobjects.role(al) is role and listenerobjects.role_binding(al) is binding
    newer = copy.deepcopy(al)
    newer["spec"]["serviceAccountMetadata"] = {"annotations": {"iam": "role-2"}}
    newer["spec"]["autoscalingRunnerSetNamespace"] = "team-2"
    assert listenerobjects.service_account(newer)["metadata"]["annotations"]["iam"] == "role-2"
    assert account["metadata"]["annotations"]["iam"] == "role-1"
    assert listenerobjects.role(newer)["metadata"]["namespace"] == "team-2"
    assert listenerobjects.role_binding(newer)["metadata"]["namespace"] == "team-2"
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == listenerworld.ARS_NS
