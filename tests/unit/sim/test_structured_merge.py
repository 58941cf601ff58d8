"""The pure parts of server-side apply: field paths and their FieldsV1 encoding, field sets, the merge
of a configuration into a live object, the comparison of two objects and field removal.

Inputs: JSON values and the field types of real kinds (a Deployment's built-in tables, the
AutoscalingRunnerSet CRD's schema). Outputs: sets, tries and merged values as structured-merge-diff
computes them.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import deploy
from sim import errors, fieldpaths, fieldtypes, kinds, structured

DEPLOYMENT = fieldtypes.for_kind(kinds.Registry().by_kind("apps/v1", "Deployment"))  # type: ignore[arg-type]


def containers(*items: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": list(items)}}}}


def names(obj: dict[str, Any]) -> list[str]:
    return [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]]


def test_fields_v1_round_trip_marks_members_that_have_children() -> None:
    paths = {
        ("f:data", "f:a"),
        ("f:spec", 'k:{"name":"x"}'),
        ("f:spec", 'k:{"name":"x"}', "f:image"),
        ("f:metadata", "f:finalizers", 'v:"a"'),
    }
    trie = fieldpaths.to_fields_v1(paths)
    assert trie == {
        "f:data": {"f:a": {}},
        "f:metadata": {"f:finalizers": {'v:"a"': {}}},
        "f:spec": {'k:{"name":"x"}': {".": {}, "f:image": {}}},
    }
    assert fieldpaths.from_fields_v1(trie) == paths


@pytest.mark.parametrize("bad", [{"x:y": {}}, {"f:a": []}, {"k:[1]": {}}, {"i:-1": {}}, []])
def test_fields_v1_that_does_not_decode(bad: Any) -> None:
    with pytest.raises(ValueError):
        fieldpaths.from_fields_v1(bad)


def test_paths_render_as_conflict_messages_show_them() -> None:
    path = ("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:name")
    assert fieldpaths.render(path) == '.spec.ports[port=80,protocol="TCP"].name'
    assert fieldpaths.render(("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'


def test_field_set_names_list_items_by_their_keys_with_defaults() -> None:
    obj = containers({"name": "web", "image": "x", "ports": [{"containerPort": 80}]})
    got = structured.field_set(obj, DEPLOYMENT)
    item = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"web"}')
    port = (*item, "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')
    assert got == {item, (*item, "f:name"), (*item, "f:image"), port, (*port, "f:containerPort")}


def test_an_item_without_its_key_is_refused() -> None:
    with pytest.raises(errors.ApiError) as refused:
        structured.field_set(containers({"image": "x"}), DEPLOYMENT)
    assert refused.value.code == 400
    assert 'omits key field "name"' in refused.value.message


def test_merge_places_new_items_where_the_configuration_puts_them() -> None:
    live = containers({"name": "a"}, {"name": "b", "image": "old"}, {"name": "c"})
    config = containers({"name": "d"}, {"name": "b", "image": "new"})
    merged = structured.merge(live, config, DEPLOYMENT)
    assert names(merged) == ["a", "d", "b", "c"]
    assert merged["spec"]["template"]["spec"]["containers"][2] == {"name": "b", "image": "new"}


def test_atomic_lists_and_structs_are_replaced_whole() -> None:
    live = {"spec": {"selector": {"matchLabels": {"a": "1"}}, "x": {"args": ["1", "2"]}}}
    config = {"spec": {"selector": {"matchLabels": {"b": "2"}}, "x": {"args": ["3"]}}}
    assert structured.merge(live, config, DEPLOYMENT) == config


def test_a_null_applied_clears_the_field() -> None:
    merged = structured.merge({"data": {"a": "1", "b": "1"}}, {"data": {"a": None}}, DEPLOYMENT)
    assert merged == {"data": {"b": "1"}}


def test_compare_reports_added_modified_and_removed_fields() -> None:
    old = {"data": {"a": "1", "b": "1"}}
    new = {"data": {"a": "2", "c": "1"}, "spec": {"x": 1}}
    diff = structured.compare(old, new, DEPLOYMENT)
    assert diff.modified == {("f:data", "f:a")}
    assert diff.added == {("f:data", "f:c"), ("f:spec",), ("f:spec", "f:x")}
    assert diff.removed == {("f:data", "f:b")}


def test_removal_keeps_the_key_fields_of_an_item_that_stays() -> None:
    obj = containers({"name": "a", "image": "x"}, {"name": "b"})
    item = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"a"}')
    out = structured.remove(obj, frozenset({(*item, "f:name"), (*item, "f:image")}), DEPLOYMENT)
    assert out == containers({"name": "a"}, {"name": "b"})
    assert structured.remove(obj, frozenset({item}), DEPLOYMENT) == containers({"name": "b"})


def test_a_crd_schema_gives_its_list_types() -> None:
    path = next(p for p in deploy.crd_paths() if "autoscalingrunnersets" in p.name)
    crd = yaml.safe_load(path.read_text(encoding="utf-8"))
    [kind] = kinds.from_crd(crd)
    shape = fieldtypes.for_kind(kind)
    pod_spec = shape.fields["spec"].fields["template"].fields["spec"]
    ports = pod_spec.fields["containers"].item().fields["ports"]
    assert (ports.list_type, ports.keys, ports.key_defaults) == (
        "map",
        ("containerPort", "protocol"),
        {"protocol": "TCP"},
    )
    assert pod_spec.fields["containers"].keys == ("name",)
    assert pod_spec.fields["tolerations"].list_type == "atomic"
