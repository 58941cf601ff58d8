"""sim.patches and sim.strategic: JSON merge patch, JSON patch and strategic merge patch as kube-apiserver
applies them (apiserver-semantics.md S22, S23, S24)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sim import errors, patches, strategic

# -- RFC 7386 merge patch ------------------------------------------------------------------------------

MERGE_CASES: list[tuple[str, Any, Any, Any]] = [
    ("replace-scalar", {"a": "b"}, {"a": "c"}, {"a": "c"}),
    ("add-member", {"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ("null-deletes", {"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ("null-of-missing-is-noop", {"a": 1}, {"z": None}, {"a": 1}),
    ("list-replaced-whole", {"a": [1, 2, 3]}, {"a": [4]}, {"a": [4]}),
    ("list-by-object", {"a": [1]}, {"a": {"b": 1}}, {"a": {"b": 1}}),
    ("object-by-scalar", {"a": {"b": 1}}, {"a": 2}, {"a": 2}),
    ("nested-merge", {"a": {"b": 1, "c": 2}}, {"a": {"c": 3, "d": 4}}, {"a": {"b": 1, "c": 3, "d": 4}}),
    ("nested-null-deletes", {"a": {"b": 1, "c": 2}}, {"a": {"b": None}}, {"a": {"c": 2}}),
    ("new-object-drops-nulls", {}, {"a": {"b": None, "c": {"d": None, "e": 1}}}, {"a": {"c": {"e": 1}}}),
    ("nulls-inside-lists-kept", {}, {"a": [{"b": None}, None]}, {"a": [{"b": None}, None]}),
    ("empty-patch", {"a": 1}, {}, {"a": 1}),
    ("empty-object-value-merges", {"a": {"b": 1}}, {"a": {}}, {"a": {"b": 1}}),
    ("non-object-patch-replaces", {"a": 1}, ["x"], ["x"]),
    ("scalar-patch-replaces", {"a": 1}, "text", "text"),
    ("null-patch-replaces", {"a": 1}, None, None),
    ("non-object-target", ["x"], {"a": 1}, {"a": 1}),
    ("scalar-target", "x", {"a": None, "b": 2}, {"b": 2}),
    (
        "metadata-labels",
        {"metadata": {"name": "x", "labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 1}},
        {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"replicas": 2}},
        {"metadata": {"name": "x", "labels": {"b": "2", "c": "3"}}, "spec": {"replicas": 2}},
    ),
]


@pytest.mark.parametrize(
    ("target", "patch", "expected"), [c[1:] for c in MERGE_CASES], ids=[c[0] for c in MERGE_CASES]
)
def test_merge_patch(target: Any, patch: Any, expected: Any) -> None:
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    assert patches.merge_patch(target, patch) == expected
    assert target == target_before
    assert patch == patch_before


def test_merge_patch_copies_only_what_changes() -> None:
    target: dict[str, Any] = {
        "metadata": {"name": "x", "labels": {"a": "1"}},
        "spec": {"template": {"big": [1]}},
    }
    patch: dict[str, Any] = {"metadata": {"labels": {"b": "2"}}, "status": {"list": [{"x": 1}]}}
    result = patches.merge_patch(target, patch)
    assert result is not target
    assert result["metadata"] is not target["metadata"]
    assert result["metadata"]["labels"] is not target["metadata"]["labels"]
    assert result["spec"] is target["spec"]  # untouched subtree is shared
    assert result["status"]["list"] == patch["status"]["list"]
    assert result["status"]["list"] is not patch["status"]["list"]  # values from the patch are copies
    result["status"]["list"][0]["x"] = 2
    assert patch["status"]["list"][0]["x"] == 1


# -- RFC 6902 JSON patch -------------------------------------------------------------------------------

BAD_INDEX = "Unable to access invalid index: {}: invalid index referenced"

DOC: dict[str, Any] = {
    "metadata": {"name": "x", "labels": {"a": "1"}, "annotations": {"a/b": "slash", "t~x": "tilde"}},
    "spec": {
        "n": 1,
        "f": 1.5,
        "flag": True,
        "items": ["a", "b", "c"],
        "nested": {"k": None},
        "objs": [{"id": 1}],
    },
}


def with_changes(**changes: Any) -> dict[str, Any]:
    """DOC with top-level sections replaced: ``with_changes(spec=lambda s: ...)``."""
    doc = copy.deepcopy(DOC)
    for section, change in changes.items():
        change(doc[section])
    return doc


JSON_PATCH_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("no-ops", [], DOC),
    ("null-body-is-no-ops", None, DOC),
    (
        "add-member",
        [{"op": "add", "path": "/spec/new", "value": 2}],
        with_changes(spec=lambda s: s.update(new=2)),
    ),
    (
        "add-replaces-member",
        [{"op": "add", "path": "/spec/n", "value": 5}],
        with_changes(spec=lambda s: s.update(n=5)),
    ),
    (
        "add-array-index",
        [{"op": "add", "path": "/spec/items/1", "value": "z"}],
        with_changes(spec=lambda s: s.update(items=["a", "z", "b", "c"])),
    ),
    (
        "add-array-end-dash",
        [{"op": "add", "path": "/spec/items/-", "value": "z"}],
        with_changes(spec=lambda s: s.update(items=["a", "b", "c", "z"])),
    ),
    (
        "add-array-at-length",
        [{"op": "add", "path": "/spec/items/3", "value": "z"}],
        with_changes(spec=lambda s: s.update(items=["a", "b", "c", "z"])),
    ),
    (
        "add-array-negative-index",
        [{"op": "add", "path": "/spec/items/-1", "value": "z"}],
        with_changes(spec=lambda s: s.update(items=["a", "b", "c", "z"])),
    ),
    (
        "add-array-negative-first",
        [{"op": "add", "path": "/spec/items/-4", "value": "z"}],
        with_changes(spec=lambda s: s.update(items=["z", "a", "b", "c"])),
    ),
    (
        "add-without-value-is-null",
        [{"op": "add", "path": "/metadata/labels/b"}],
        with_changes(metadata=lambda m: m["labels"].update(b=None)),
    ),
    (
        "add-escaped-slash",
        [{"op": "add", "path": "/metadata/annotations/c~1d", "value": "v"}],
        with_changes(metadata=lambda m: m["annotations"].update({"c/d": "v"})),
    ),
    (
        "add-escaped-tilde",
        [{"op": "add", "path": "/metadata/annotations/e~0f", "value": "v"}],
        with_changes(metadata=lambda m: m["annotations"].update({"e~f": "v"})),
    ),
    (
        "add-empty-key",
        [{"op": "add", "path": "/", "value": 1}],
        {**copy.deepcopy(DOC), "": 1},
    ),
    ("remove-member", [{"op": "remove", "path": "/spec/n"}], with_changes(spec=lambda s: s.pop("n"))),
    (
        "remove-null-member",
        [{"op": "remove", "path": "/spec/nested/k"}],
        with_changes(spec=lambda s: s.update(nested={})),
    ),
    (
        "remove-escaped",
        [{"op": "remove", "path": "/metadata/annotations/a~1b"}],
        with_changes(metadata=lambda m: m["annotations"].pop("a/b")),
    ),
    (
        "remove-array-element",
        [{"op": "remove", "path": "/spec/items/0"}],
        with_changes(spec=lambda s: s.update(items=["b", "c"])),
    ),
    (
        "remove-array-negative",
        [{"op": "remove", "path": "/spec/items/-1"}],
        with_changes(spec=lambda s: s.update(items=["a", "b"])),
    ),
    (
        "replace-member",
        [{"op": "replace", "path": "/spec/n", "value": {"x": 1}}],
        with_changes(spec=lambda s: s.update(n={"x": 1})),
    ),
    (
        "replace-creates-missing-member",
        [{"op": "replace", "path": "/spec/missing", "value": 1}],
        with_changes(spec=lambda s: s.update(missing=1)),
    ),
    (
        "replace-array-element",
        [{"op": "replace", "path": "/spec/items/2", "value": "z"}],
        with_changes(spec=lambda s: s.update(items=["a", "b", "z"])),
    ),
    (
        "replace-array-negative",
        [{"op": "replace", "path": "/spec/items/-3", "value": "z"}],
        with_changes(spec=lambda s: s.update(items=["z", "b", "c"])),
    ),
    ("replace-root", [{"op": "replace", "path": "", "value": {"kind": "Other"}}], {"kind": "Other"}),
    ("replace-root-scalar-ignored", [{"op": "replace", "path": "", "value": 3}], DOC),
    (
        "move-member",
        [{"op": "move", "from": "/spec/n", "path": "/metadata/n"}],
        with_changes(spec=lambda s: s.pop("n"), metadata=lambda m: m.update(n=1)),
    ),
    (
        "move-array-element",
        [{"op": "move", "from": "/spec/items/0", "path": "/spec/items/-"}],
        with_changes(spec=lambda s: s.update(items=["b", "c", "a"])),
    ),
    (
        "copy-member",
        [{"op": "copy", "from": "/spec/items", "path": "/status"}],
        {**copy.deepcopy(DOC), "status": ["a", "b", "c"]},
    ),
    (
        "copy-missing-member-is-null",
        [{"op": "copy", "from": "/spec/missing", "path": "/spec/copied"}],
        with_changes(spec=lambda s: s.update(copied=None)),
    ),
    ("test-passes", [{"op": "test", "path": "/spec/items", "value": ["a", "b", "c"]}], DOC),
    ("test-object-passes", [{"op": "test", "path": "/spec/objs/0", "value": {"id": 1}}], DOC),
    ("test-float-passes", [{"op": "test", "path": "/spec/f", "value": 1.5}], DOC),
    ("test-missing-against-null", [{"op": "test", "path": "/spec/missing", "value": None}], DOC),
    ("test-null-against-null", [{"op": "test", "path": "/spec/nested/k", "value": None}], DOC),
    ("test-root", [{"op": "test", "path": "", "value": copy.deepcopy(DOC)}], DOC),
    ("extra-fields-ignored", [{"op": "test", "path": "/spec/n", "value": 1, "comment": "x"}], DOC),
    (
        "ops-apply-in-order",
        [
            {"op": "test", "path": "/spec/n", "value": 1},
            {"op": "replace", "path": "/spec/n", "value": 2},
            {"op": "test", "path": "/spec/n", "value": 2},
            {"op": "add", "path": "/spec/m", "value": 3},
        ],
        with_changes(spec=lambda s: s.update(n=2, m=3)),
    ),
]


@pytest.mark.parametrize(
    ("ops", "expected"), [c[1:] for c in JSON_PATCH_CASES], ids=[c[0] for c in JSON_PATCH_CASES]
)
def test_json_patch(ops: Any, expected: dict[str, Any]) -> None:
    target = copy.deepcopy(DOC)
    ops_before = copy.deepcopy(ops)
    assert patches.json_patch(target, ops) == expected
    assert target == DOC
    assert ops == ops_before


JSON_PATCH_FAILURES: list[tuple[str, list[Any], str]] = [
    (
        "test-differs",
        [{"op": "test", "path": "/spec/n", "value": 2}],
        "testing value /spec/n failed: test failed",
    ),
    (
        "test-int-is-not-float",
        [{"op": "test", "path": "/spec/n", "value": 1.0}],
        "testing value /spec/n failed: test failed",
    ),
    (
        "test-bool-is-not-int",
        [{"op": "test", "path": "/spec/flag", "value": 1}],
        "testing value /spec/flag failed: test failed",
    ),
    (
        "test-object-extra-key",
        [{"op": "test", "path": "/spec/objs/0", "value": {"id": 1, "x": 2}}],
        "testing value /spec/objs/0 failed: test failed",
    ),
    (
        "test-missing-against-value",
        [{"op": "test", "path": "/spec/missing", "value": 1}],
        "testing value /spec/missing failed: test failed",
    ),
    ("test-without-value", [{"op": "test", "path": "/spec/n"}], "testing value /spec/n failed: test failed"),
    ("test-root-differs", [{"op": "test", "path": "", "value": {}}], "testing value  failed: test failed"),
    (
        "test-missing-parent",
        [{"op": "test", "path": "/nope/x", "value": 1}],
        "test operation does not apply: is missing path: /nope/x: missing value",
    ),
    (
        "test-bad-index",
        [{"op": "test", "path": "/spec/items/7", "value": 1}],
        "error in test for path: '/spec/items/7': " + BAD_INDEX.format(7),
    ),
    (
        "add-missing-parent",
        [{"op": "add", "path": "/spec/x/y", "value": 1}],
        'add operation does not apply: doc is missing path: "/spec/x/y": missing value',
    ),
    (
        "add-through-scalar",
        [{"op": "add", "path": "/spec/n/y", "value": 1}],
        'add operation does not apply: doc is missing path: "/spec/n/y": missing value',
    ),
    (
        "add-root",
        [{"op": "add", "path": "", "value": {}}],
        'add operation does not apply: doc is missing path: "": missing value',
    ),
    ("add-no-path", [{"op": "add", "value": 1}], "add operation failed to decode path: missing value"),
    (
        "add-index-too-big",
        [{"op": "add", "path": "/spec/items/5", "value": 1}],
        "error in add for path: '/spec/items/5': " + BAD_INDEX.format(5),
    ),
    (
        "add-index-too-negative",
        [{"op": "add", "path": "/spec/items/-5", "value": 1}],
        "error in add for path: '/spec/items/-5': " + BAD_INDEX.format(-5),
    ),
    (
        "add-index-not-a-number",
        [{"op": "add", "path": "/spec/items/x", "value": 1}],
        "error in add for path: '/spec/items/x': value was not a proper array index: 'x': "
        'strconv.Atoi: parsing "x": invalid syntax',
    ),
    (
        "remove-missing-member",
        [{"op": "remove", "path": "/spec/missing"}],
        "error in remove for path: '/spec/missing': Unable to remove nonexistent key: missing: missing value",
    ),
    (
        "remove-missing-parent",
        [{"op": "remove", "path": "/a/b"}],
        'remove operation does not apply: doc is missing path: "/a/b": missing value',
    ),
    ("remove-no-path", [{"op": "remove"}], "remove operation failed to decode path: missing value"),
    (
        "remove-bad-index",
        [{"op": "remove", "path": "/spec/items/3"}],
        "error in remove for path: '/spec/items/3': " + BAD_INDEX.format(3),
    ),
    (
        "remove-dash",
        [{"op": "remove", "path": "/spec/items/-"}],
        "error in remove for path: '/spec/items/-': strconv.Atoi: parsing \"-\": invalid syntax",
    ),
    (
        "replace-missing-parent",
        [{"op": "replace", "path": "/spec/x/y", "value": 1}],
        "replace operation does not apply: doc is missing path: /spec/x/y: missing value",
    ),
    (
        "replace-bad-index",
        [{"op": "replace", "path": "/spec/items/3", "value": 1}],
        "replace operation does not apply: doc is missing key: /spec/items/3: missing value",
    ),
    (
        "replace-no-path",
        [{"op": "replace", "value": 1}],
        "replace operation failed to decode path: operation missing path field: missing value",
    ),
    (
        "replace-root-with-array",
        [{"op": "replace", "path": "", "value": []}],
        "json: cannot unmarshal array into Go value of type map[string]interface {}",
    ),
    (
        "move-missing-from",
        [{"op": "move", "from": "/spec/missing", "path": "/spec/x"}],
        "error in move for path: 'missing': Unable to remove nonexistent key: missing: missing value",
    ),
    (
        "move-missing-from-parent",
        [{"op": "move", "from": "/a/b", "path": "/spec/x"}],
        "move operation does not apply: doc is missing from path: /a/b: missing value",
    ),
    (
        "move-into-own-child",
        [{"op": "move", "from": "/spec", "path": "/spec/inner"}],
        "move operation does not apply: doc is missing destination path: /spec/inner: missing value",
    ),
    (
        "move-no-from",
        [{"op": "move", "path": "/spec/x"}],
        "move operation failed to decode from: operation, missing from field: missing value",
    ),
    (
        "copy-missing-destination-parent",
        [{"op": "copy", "from": "/spec/n", "path": "/a/b"}],
        "copy operation does not apply: doc is missing destination path: /a/b: missing value",
    ),
    (
        "copy-bad-from-index",
        [{"op": "copy", "from": "/spec/items/9", "path": "/spec/x"}],
        "error in copy for from: '/spec/items/9': " + BAD_INDEX.format(9),
    ),
    ("unknown-op", [{"op": "frobnicate", "path": "/x"}], "Unexpected kind: frobnicate"),
    ("op-is-case-sensitive", [{"op": "Add", "path": "/x", "value": 1}], "Unexpected kind: Add"),
    ("missing-op", [{"path": "/x"}], "Unexpected kind: unknown"),
    ("null-op-element", [None], "Unexpected kind: unknown"),
    (
        "fails-after-earlier-ops",
        [{"op": "add", "path": "/spec/n", "value": 9}, {"op": "test", "path": "/spec/n", "value": 1}],
        "testing value /spec/n failed: test failed",
    ),
]


@pytest.mark.parametrize(
    ("ops", "message"), [c[1:] for c in JSON_PATCH_FAILURES], ids=[c[0] for c in JSON_PATCH_FAILURES]
)
def test_json_patch_failures(ops: list[Any], message: str) -> None:
    target = copy.deepcopy(DOC)
    with pytest.raises(patches.PatchFailed) as info:
        patches.json_patch(target, ops)
    assert str(info.value) == message
    assert info.value.message == message
    assert target == DOC  # a failing patch changes nothing


JSON_PATCH_BAD_BODIES: list[tuple[str, Any, str]] = [
    ("object", {"spec": {"n": 2}}, "cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
    ("string", "add", "cannot unmarshal string into Go value of type []handlers.jsonPatchOp"),
    ("number", 3, "cannot unmarshal number into Go value of type []handlers.jsonPatchOp"),
    ("float", 3.5, "cannot unmarshal number into Go value of type []handlers.jsonPatchOp"),
    ("bool", True, "cannot unmarshal bool into Go value of type []handlers.jsonPatchOp"),
    ("element-number", [1], "cannot unmarshal number into Go value of type handlers.jsonPatchOp"),
    ("element-list", [[]], "cannot unmarshal array into Go value of type handlers.jsonPatchOp"),
    ("element-string", ["x"], "cannot unmarshal string into Go value of type handlers.jsonPatchOp"),
    (
        "op-number",
        [{"op": 1, "path": "/x"}],
        "cannot unmarshal number into Go struct field jsonPatchOp.op of type string",
    ),
    (
        "path-object",
        [{"op": "add", "path": {}}],
        "cannot unmarshal object into Go struct field jsonPatchOp.path of type string",
    ),
    (
        "from-bool",
        [{"op": "move", "from": False}],
        "cannot unmarshal bool into Go struct field jsonPatchOp.from of type string",
    ),
    (
        "decoded-before-applied",
        [{"op": "test", "path": "/spec/n", "value": 2}, {"op": "add", "path": 5}],
        "cannot unmarshal number into Go struct field jsonPatchOp.path of type string",
    ),
]


@pytest.mark.parametrize(
    ("ops", "message"), [c[1:] for c in JSON_PATCH_BAD_BODIES], ids=[c[0] for c in JSON_PATCH_BAD_BODIES]
)
def test_json_patch_bad_body(ops: Any, message: str) -> None:
    with pytest.raises(errors.ApiError) as info:
        patches.json_patch(copy.deepcopy(DOC), ops)
    assert (info.value.code, info.value.reason) == (400, "BadRequest")
    assert info.value.message == "error decoding patch: json: " + message


def test_json_patch_operation_limit() -> None:
    op = {"op": "test", "path": "/spec/n", "value": 1}
    assert patches.json_patch(copy.deepcopy(DOC), [op] * patches.MAX_JSON_PATCH_OPERATIONS) == DOC
    with pytest.raises(errors.ApiError) as info:
        patches.json_patch(copy.deepcopy(DOC), [op] * (patches.MAX_JSON_PATCH_OPERATIONS + 1))
    assert (info.value.code, info.value.reason) == (413, "RequestEntityTooLarge")
    assert info.value.message == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


def test_json_patch_values_are_copies() -> None:
    value = {"deep": [1]}
    ops = [
        {"op": "add", "path": "/spec/v", "value": value},
        {"op": "copy", "from": "/spec/v", "path": "/spec/w"},
    ]
    result = patches.json_patch(copy.deepcopy(DOC), ops)
    result["spec"]["v"]["deep"].append(2)
    assert value == {"deep": [1]}
    assert result["spec"]["w"] == {"deep": [1]}


# -- strategic merge patch -----------------------------------------------------------------------------


def pod(**sections: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    obj.update(sections)
    return obj


def container(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": f"{name}:1", **fields}


BASE_POD = pod(
    metadata={
        "name": "p",
        "namespace": "ns",
        "labels": {"app": "web", "tier": "front"},
        "finalizers": ["a.io/one", "a.io/two"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o1", "uid": "u1"}],
    },
    spec={
        "containers": [
            container(
                "main",
                env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                volumeMounts=[{"name": "v", "mountPath": "/data"}],
                ports=[{"containerPort": 80, "protocol": "TCP"}],
                volumeDevices=[{"name": "d", "devicePath": "/dev/x"}],
            ),
            container("side"),
        ],
        "initContainers": [container("init")],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "imagePullSecrets": [{"name": "reg"}],
        "tolerations": [{"key": "k1", "operator": "Exists"}],
        "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}],
        "nodeSelector": {"zone": "a"},
    },
    status={
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [{"name": "main", "ready": False}, {"name": "side", "ready": False}],
    },
)


def at(obj: dict[str, Any], path: str) -> Any:
    """``at(obj, "spec.containers.0.env")``: the value at a dotted path (list indices allowed)."""
    value: Any = obj
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value.get(part)
    return value


SMP_POD_CASES: list[tuple[str, dict[str, Any], str, Any]] = [
    # metadata maps
    (
        "label-added",
        {"metadata": {"labels": {"x": "1"}}},
        "metadata.labels",
        {"app": "web", "tier": "front", "x": "1"},
    ),
    ("label-null-deletes", {"metadata": {"labels": {"tier": None}}}, "metadata.labels", {"app": "web"}),
    (
        "label-changed",
        {"metadata": {"labels": {"app": "db"}}},
        "metadata.labels",
        {"app": "db", "tier": "front"},
    ),
    ("annotations-created", {"metadata": {"annotations": {"k": "v"}}}, "metadata.annotations", {"k": "v"}),
    ("map-null-deletes-map", {"metadata": {"labels": None}}, "metadata.labels", None),
    # metadata.finalizers: a merged list of scalars
    (
        "finalizer-added-goes-first",
        {"metadata": {"finalizers": ["a.io/three"]}},
        "metadata.finalizers",
        ["a.io/three", "a.io/one", "a.io/two"],
    ),
    (
        "finalizer-union-keeps-patch-order",
        {"metadata": {"finalizers": ["a.io/two", "a.io/three"]}},
        "metadata.finalizers",
        ["a.io/one", "a.io/two", "a.io/three"],
    ),
    (
        "finalizer-already-present",
        {"metadata": {"finalizers": ["a.io/one"]}},
        "metadata.finalizers",
        ["a.io/one", "a.io/two"],
    ),
    (
        "finalizer-appended-with-set-element-order",
        {
            "metadata": {
                "finalizers": ["a.io/three"],
                "$setElementOrder/finalizers": ["a.io/one", "a.io/two", "a.io/three"],
            }
        },
        "metadata.finalizers",
        ["a.io/one", "a.io/two", "a.io/three"],
    ),
    (
        "finalizer-deleted-from-primitive-list",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.io/one", "a.io/missing"]}},
        "metadata.finalizers",
        ["a.io/two"],
    ),
    (
        "finalizer-add-and-delete",
        {"metadata": {"finalizers": ["a.io/three"], "$deleteFromPrimitiveList/finalizers": ["a.io/two"]}},
        "metadata.finalizers",
        ["a.io/three", "a.io/one"],
    ),
    ("finalizers-null-deletes", {"metadata": {"finalizers": None}}, "metadata.finalizers", None),
    (
        "finalizers-replace-by-set-element-order-and-delete",
        {
            "metadata": {
                "$setElementOrder/finalizers": ["a.io/two"],
                "$deleteFromPrimitiveList/finalizers": ["a.io/one"],
            }
        },
        "metadata.finalizers",
        ["a.io/two"],
    ),
    # metadata.ownerReferences by uid
    (
        "owner-reference-merged-by-uid",
        {"metadata": {"ownerReferences": [{"uid": "u1", "controller": True}]}},
        "metadata.ownerReferences",
        [{"apiVersion": "v1", "kind": "X", "name": "o1", "uid": "u1", "controller": True}],
    ),
    (
        "owner-reference-added",
        {"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Y", "name": "o2", "uid": "u2"}]}},
        "metadata.ownerReferences",
        [
            {"apiVersion": "v1", "kind": "Y", "name": "o2", "uid": "u2"},
            {"apiVersion": "v1", "kind": "X", "name": "o1", "uid": "u1"},
        ],
    ),
    (
        "owner-reference-deleted",
        {"metadata": {"ownerReferences": [{"uid": "u1", "$patch": "delete"}]}},
        "metadata.ownerReferences",
        [],
    ),
    # containers by name, and the lists inside a container
    (
        "container-merged-by-name",
        {"spec": {"containers": [{"name": "side", "image": "side:2"}]}},
        "spec.containers.1",
        {"name": "side", "image": "side:2"},
    ),
    (
        "container-added",
        {"spec": {"containers": [{"name": "new", "image": "new:1"}]}},
        "spec.containers",
        [
            {"name": "new", "image": "new:1"},
            at(BASE_POD, "spec.containers.0"),
            at(BASE_POD, "spec.containers.1"),
        ],
    ),
    (
        "container-deleted",
        {"spec": {"containers": [{"name": "main", "$patch": "delete"}]}},
        "spec.containers",
        [container("side")],
    ),
    (
        "containers-replaced-with-directive",
        {"spec": {"containers": [{"name": "only", "image": "o:1"}, {"$patch": "replace"}]}},
        "spec.containers",
        [{"name": "only", "image": "o:1"}],
    ),
    (
        "containers-reordered",
        {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "main"}]}},
        "spec.containers.0.name",
        "side",
    ),
    (
        "env-merged-by-name",
        {
            "spec": {
                "containers": [
                    {"name": "main", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}
                ]
            }
        },
        "spec.containers.0.env",
        [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
    ),
    (
        "env-value-null-deletes-field",
        {"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": None}]}]}},
        "spec.containers.0.env.0",
        {"name": "A"},
    ),
    (
        "volume-mounts-by-mount-path",
        {
            "spec": {
                "containers": [{"name": "main", "volumeMounts": [{"mountPath": "/data", "readOnly": True}]}]
            }
        },
        "spec.containers.0.volumeMounts",
        [{"name": "v", "mountPath": "/data", "readOnly": True}],
    ),
    (
        "ports-by-container-port",
        {"spec": {"containers": [{"name": "main", "ports": [{"containerPort": 80, "name": "http"}]}]}},
        "spec.containers.0.ports",
        [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
    ),
    (
        "volume-devices-by-device-path",
        {
            "spec": {
                "containers": [{"name": "main", "volumeDevices": [{"devicePath": "/dev/x", "name": "d2"}]}]
            }
        },
        "spec.containers.0.volumeDevices",
        [{"name": "d2", "devicePath": "/dev/x"}],
    ),
    (
        "init-containers-by-name",
        {"spec": {"initContainers": [{"name": "init", "image": "init:2"}]}},
        "spec.initContainers",
        [{"name": "init", "image": "init:2"}],
    ),
    (
        "ephemeral-containers-created-then-merged-by-name",
        {
            "spec": {
                "ephemeralContainers": [
                    {"name": "dbg", "image": "busybox", "env": [{"name": "X", "value": None}]}
                ]
            }
        },
        "spec.ephemeralContainers",
        [{"name": "dbg", "image": "busybox", "env": [{"name": "X"}]}],
    ),
    (
        "volumes-by-name",
        {"spec": {"volumes": [{"name": "w", "emptyDir": {}}]}},
        "spec.volumes",
        [{"name": "w", "emptyDir": {}}, {"name": "v", "emptyDir": {}}],
    ),
    (
        "image-pull-secrets-by-name",
        {"spec": {"imagePullSecrets": [{"name": "reg"}, {"name": "reg2"}]}},
        "spec.imagePullSecrets",
        [{"name": "reg"}, {"name": "reg2"}],
    ),
    (
        "host-aliases-by-ip",
        {"spec": {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["b"]}]}},
        "spec.hostAliases",
        [{"ip": "10.0.0.1", "hostnames": ["b"]}],
    ),
    (
        "tolerations-replaced",
        {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}},
        "spec.tolerations",
        [{"key": "k2", "operator": "Exists"}],
    ),
    (
        "node-selector-map-merged",
        {"spec": {"nodeSelector": {"disk": "ssd"}}},
        "spec.nodeSelector",
        {"zone": "a", "disk": "ssd"},
    ),
    (
        "conditions-by-type",
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        "status.conditions",
        [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
    ),
    (
        "container-statuses-replaced-whole",
        {"status": {"containerStatuses": [{"name": "main", "ready": True}]}},
        "status.containerStatuses",
        [{"name": "main", "ready": True}],
    ),
    ("scalar-replaced", {"status": {"phase": "Succeeded"}}, "status.phase", "Succeeded"),
    ("type-change-takes-patch", {"spec": {"nodeSelector": ["x"]}}, "spec.nodeSelector", ["x"]),
    # map directives
    (
        "map-replace-directive",
        {"metadata": {"labels": {"$patch": "replace", "only": "this"}}},
        "metadata.labels",
        {"only": "this"},
    ),
    (
        "map-replace-directive-drops-nulls",
        {"spec": {"nodeSelector": {"$patch": "replace", "a": "b", "c": None}}},
        "spec.nodeSelector",
        {"a": "b"},
    ),
    ("map-delete-directive", {"metadata": {"labels": {"$patch": "delete"}}}, "metadata.labels", None),
    (
        "replace-directive-on-absent-map-drops-it",
        {"metadata": {"annotations": {"$patch": "replace", "a": "b"}}},
        "metadata.annotations",
        None,
    ),
    (
        "retain-keys",
        {"spec": {"$retainKeys": ["containers", "nodeSelector"], "nodeSelector": {"zone": "b"}}},
        "spec",
        {"containers": BASE_POD["spec"]["containers"], "nodeSelector": {"zone": "b"}},
    ),
    (
        "retain-keys-allows-nulls-outside-list",
        {"status": {"$retainKeys": ["phase"], "conditions": None}},
        "status",
        {"phase": "Running"},
    ),
    # values taken from the patch
    (
        "new-subtree-drops-nulls-and-directives",
        {
            "spec": {
                "affinity": {
                    "a": None,
                    "b": {"c": 1, "d": None},
                    "gone": {"$patch": "delete"},
                    "l": [{"$patch": "x"}, 1],
                }
            }
        },
        "spec.affinity",
        {"b": {"c": 1}, "l": [1]},
    ),
    (
        "delete-from-primitive-list-of-absent-list",
        {"spec": {"$deleteFromPrimitiveList/args": ["x"]}},
        "spec.args",
        None,
    ),
    (
        "delete-from-primitive-list-of-unmerged-list",
        {"spec": {"containers": [{"name": "main", "$deleteFromPrimitiveList/args": ["-v"]}]}},
        "spec.containers.0",
        at(BASE_POD, "spec.containers.0"),
    ),
]


@pytest.mark.parametrize(
    ("patch", "path", "expected"), [c[1:] for c in SMP_POD_CASES], ids=[c[0] for c in SMP_POD_CASES]
)
def test_strategic_merge_patch_pod(patch: dict[str, Any], path: str, expected: Any) -> None:
    target = copy.deepcopy(BASE_POD)
    patch_before = copy.deepcopy(patch)
    result = strategic.strategic_merge_patch(target, patch, "Pod")
    assert at(result, path) == expected
    assert target == BASE_POD
    assert patch == patch_before
    assert_no_directives(result)


def assert_no_directives(value: Any) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert not key.startswith("$"), key
            assert_no_directives(item)
    elif isinstance(value, list):
        for item in value:
            assert_no_directives(item)


SMP_KIND_CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "service-account-secrets-by-name",
        "ServiceAccount",
        {"metadata": {"name": "sa"}, "secrets": [{"name": "s1"}], "imagePullSecrets": [{"name": "r1"}]},
        {"secrets": [{"name": "s2"}], "imagePullSecrets": [{"name": "r2"}]},
        {
            "metadata": {"name": "sa"},
            "secrets": [{"name": "s2"}, {"name": "s1"}],
            "imagePullSecrets": [{"name": "r2"}],
        },
    ),
    (
        "role-rules-replaced",
        "Role",
        {"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
        {"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]},
        {
            "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}],
        },
    ),
    (
        "role-binding-subjects-replaced",
        "RoleBinding",
        {
            "metadata": {"name": "rb"},
            "subjects": [{"kind": "ServiceAccount", "name": "a"}],
            "roleRef": {"name": "r"},
        },
        {"subjects": [{"kind": "ServiceAccount", "name": "b"}]},
        {
            "metadata": {"name": "rb"},
            "subjects": [{"kind": "ServiceAccount", "name": "b"}],
            "roleRef": {"name": "r"},
        },
    ),
    (
        "secret-data-merged",
        "Secret",
        {"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "MQ==", "b": "Mg=="}},
        {"data": {"a": None, "c": "Mw=="}},
        {"metadata": {"name": "s"}, "type": "Opaque", "data": {"b": "Mg==", "c": "Mw=="}},
    ),
    (
        "config-map-data-replaced-by-directive",
        "ConfigMap",
        {"metadata": {"name": "c"}, "data": {"a": "1"}},
        {"data": {"$patch": "replace", "b": "2"}},
        {"metadata": {"name": "c"}, "data": {"b": "2"}},
    ),
    (
        "lease-spec-merged",
        "Lease",
        {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}},
        {"spec": {"holderIdentity": "b", "renewTime": "2025-01-01T00:00:00.000000Z"}},
        {
            "metadata": {"name": "l"},
            "spec": {
                "holderIdentity": "b",
                "leaseDurationSeconds": 15,
                "renewTime": "2025-01-01T00:00:00.000000Z",
            },
        },
    ),
    (
        "event-count-bumped",
        "Event",
        {"metadata": {"name": "e"}, "count": 1, "involvedObject": {"kind": "Pod", "name": "p"}},
        {"count": 2, "lastTimestamp": "2025-01-01T00:00:01Z"},
        {
            "metadata": {"name": "e"},
            "count": 2,
            "involvedObject": {"kind": "Pod", "name": "p"},
            "lastTimestamp": "2025-01-01T00:00:01Z",
        },
    ),
    (
        "namespace-conditions-by-type",
        "Namespace",
        {
            "metadata": {"name": "n"},
            "status": {"conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "True"}]},
        },
        {"status": {"conditions": [{"type": "B", "status": "False"}]}},
        {
            "metadata": {"name": "n"},
            "status": {"conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]},
        },
    ),
    (
        "other-kind-merges-metadata-only",
        "AutoscalingRunnerSet",
        {
            "metadata": {"name": "a", "finalizers": ["x"]},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        {"metadata": {"finalizers": ["y"]}, "spec": {"containers": [{"name": "d"}]}},
        {"metadata": {"name": "a", "finalizers": ["y", "x"]}, "spec": {"containers": [{"name": "d"}]}},
    ),
    (
        "pod-lists-are-not-merged-for-other-kinds",
        "ServiceAccount",
        {"metadata": {"name": "sa"}, "spec": {"containers": [{"name": "c"}]}},
        {"spec": {"containers": [{"name": "d"}]}},
        {"metadata": {"name": "sa"}, "spec": {"containers": [{"name": "d"}]}},
    ),
    (
        "top-level-replace",
        "Secret",
        {"metadata": {"name": "s"}, "data": {"a": "1"}},
        {"$patch": "replace", "kind": "Secret"},
        {"kind": "Secret"},
    ),
    ("top-level-delete", "Secret", {"metadata": {"name": "s"}}, {"$patch": "delete"}, {}),
    (
        "empty-patch",
        "Secret",
        {"metadata": {"name": "s"}, "data": {"a": "1"}},
        {},
        {"metadata": {"name": "s"}, "data": {"a": "1"}},
    ),
    (
        "unknown-dollar-keys-dropped",
        "ConfigMap",
        {"metadata": {"name": "c"}},
        {"$foo": 1, "data": {"$bar": "x", "k": "v"}},
        {"metadata": {"name": "c"}, "data": {"k": "v"}},
    ),
]


@pytest.mark.parametrize(
    ("kind", "target", "patch", "expected"),
    [c[1:] for c in SMP_KIND_CASES],
    ids=[c[0] for c in SMP_KIND_CASES],
)
def test_strategic_merge_patch_kinds(
    kind: str, target: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    assert strategic.strategic_merge_patch(target, patch, kind) == expected
    assert target == target_before
    assert patch == patch_before


def named(*names: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"name": n, **extra.get(n, {})} for n in names]


# Ordering of merged lists, checked against upstream's own fixtures for the same situations.
SMP_ORDER_CASES: list[tuple[str, list[Any], dict[str, Any], list[Any]]] = [
    (
        "patch-order-wins-for-patched-elements",
        named("1", "2", "3"),
        {"containers": named("3", "1")},
        named("2", "3", "1"),
    ),
    (
        "new-element-before-unrelated-live-one",
        named("1", "2"),
        {"containers": named("3", "2")},
        named("3", "1", "2"),
    ),
    (
        "server-only-placed-by-live-order",
        named("B", "C", "A"),
        {"containers": named("A", "B", "D")},
        named("C", "A", "B", "D"),
    ),
    (
        "set-element-order-with-new-element",
        named("1", "2"),
        {"$setElementOrder/containers": named("1", "3", "2"), "containers": named("3")},
        named("1", "3", "2"),
    ),
    (
        "set-element-order-server-only-kept-in-place",
        named("1", "2", "9", "3", "4"),
        {"$setElementOrder/containers": named("2", "1", "4", "3")},
        named("2", "1", "9", "4", "3"),
    ),
    (
        "set-element-order-server-only-run",
        named("1", "2", "7", "9", "8", "3", "4"),
        {"$setElementOrder/containers": named("2", "1", "4", "3")},
        named("2", "1", "7", "9", "8", "4", "3"),
    ),
    (
        "set-element-order-names-missing-element",
        named("1", "3"),
        {"$setElementOrder/containers": named("3", "2", "1")},
        named("3", "1"),
    ),
    (
        "set-element-order-with-delete",
        named("1", "2", "4"),
        {
            "$setElementOrder/containers": named("2", "3"),
            "containers": [*named("3"), {"name": "1", "$patch": "delete"}],
        },
        named("2", "4", "3"),
    ),
    (
        "set-element-order-new-list",
        [],
        {
            "$setElementOrder/containers": named("b", "a"),
            "containers": [{"name": "b", "x": None}, {"name": "a"}],
        },
        named("b", "a"),
    ),
]


@pytest.mark.parametrize(
    ("live", "spec_patch", "expected"), [c[1:] for c in SMP_ORDER_CASES], ids=[c[0] for c in SMP_ORDER_CASES]
)
def test_strategic_merge_patch_list_order(
    live: list[Any], spec_patch: dict[str, Any], expected: list[Any]
) -> None:
    target = pod(spec={"containers": live} if live else {})
    result = strategic.strategic_merge_patch(target, {"spec": spec_patch}, "Pod")
    assert result["spec"]["containers"] == expected


PRIMITIVE_ORDER_CASES: list[tuple[str, list[str], dict[str, Any], list[str]]] = [
    ("union-dedupes", ["a", "b"], {"finalizers": ["b", "c", "c"]}, ["a", "b", "c"]),
    ("patch-order", ["a", "b", "c"], {"finalizers": ["c", "a"]}, ["b", "c", "a"]),
    (
        "set-order-with-new",
        ["a", "d", "b"],
        {"$setElementOrder/finalizers": ["c", "a", "b"], "finalizers": ["c"]},
        ["c", "a", "d", "b"],
    ),
    ("set-order-only", ["a", "b", "c"], {"$setElementOrder/finalizers": ["c", "b", "a"]}, ["c", "b", "a"]),
    ("live-duplicates-removed", ["a", "a", "b"], {"finalizers": ["b"]}, ["a", "b"]),
]


@pytest.mark.parametrize(
    ("live", "meta_patch", "expected"),
    [c[1:] for c in PRIMITIVE_ORDER_CASES],
    ids=[c[0] for c in PRIMITIVE_ORDER_CASES],
)
def test_strategic_merge_patch_primitive_order(
    live: list[str], meta_patch: dict[str, Any], expected: list[str]
) -> None:
    result = strategic.strategic_merge_patch(
        pod(metadata={"name": "p", "finalizers": live}), {"metadata": meta_patch}, "Pod"
    )
    assert result["metadata"]["finalizers"] == expected


SMP_ERROR_CASES: list[tuple[str, dict[str, Any], int, str]] = [
    (
        "element-without-merge-key",
        {"spec": {"containers": [{"image": "x"}]}},
        500,
        "Internal error occurred: map: map[image:x] does not contain declared merge key: name",
    ),
    (
        "delete-without-merge-key",
        {"spec": {"containers": [{"$patch": "delete"}]}},
        500,
        "Internal error occurred: map: map[$patch:delete] does not contain declared merge key: name",
    ),
    (
        "unknown-map-directive",
        {"metadata": {"labels": {"$patch": "frob"}}},
        500,
        "Internal error occurred: unknown patch type: frob in map: map[$patch:frob]",
    ),
    (
        "unknown-list-directive",
        {"spec": {"containers": [{"name": "main", "$patch": "frob"}]}},
        500,
        "Internal error occurred: unknown patch type: frob in map: map[$patch:frob name:main]",
    ),
    (
        "merge-directive-in-list",
        {"spec": {"containers": [{"$patch": "merge"}]}},
        500,
        "Internal error occurred: merging lists cannot yet be specified in the patch",
    ),
    (
        "mixed-element-types",
        {"metadata": {"finalizers": [1]}},
        500,
        "Internal error occurred: list element types are not identical: [[a.io/one a.io/two] [1]]",
    ),
    (
        "retain-keys-not-a-list",
        {"spec": {"$retainKeys": "containers"}},
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "retain-keys-misses-patched-key",
        {"spec": {"$retainKeys": ["containers"], "nodeSelector": {"a": "b"}}},
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "delete-list-without-field",
        {"metadata": {"$deleteFromPrimitiveList": ["x"]}},
        400,
        "invalid patch format of primitive list",
    ),
    (
        "set-order-without-field",
        {"metadata": {"$setElementOrder": ["x"]}},
        400,
        "invalid patch format of setElementOrder list",
    ),
    (
        "set-order-not-a-list",
        {"metadata": {"$setElementOrder/finalizers": "x"}},
        500,
        "Internal error occurred: expected a []interface {}, but received a string",
    ),
    (
        "set-order-contradicts-patch",
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "main"}, {"name": "side"}],
                "containers": [{"name": "side"}, {"name": "main"}],
            }
        },
        500,
        "Internal error occurred: the order in patch list:\n[map[name:side] map[name:main]]\n doesn't match "
        "$setElementOrder list:\n[map[name:main] map[name:side]]",
    ),
]


@pytest.mark.parametrize(
    ("patch", "code", "message"), [c[1:] for c in SMP_ERROR_CASES], ids=[c[0] for c in SMP_ERROR_CASES]
)
def test_strategic_merge_patch_errors(patch: dict[str, Any], code: int, message: str) -> None:
    target = copy.deepcopy(BASE_POD)
    with pytest.raises(errors.ApiError) as info:
        strategic.strategic_merge_patch(target, patch, "Pod")
    assert (info.value.code, info.value.message) == (code, message)
    assert target == BASE_POD


def test_strategic_merge_patch_list_of_lists_is_invalid() -> None:
    with pytest.raises(patches.PatchFailed) as info:
        strategic.strategic_merge_patch(
            pod(metadata={"name": "p", "finalizers": []}), {"metadata": {"finalizers": [["a"]]}}, "Pod"
        )
    assert str(info.value) == "lists of lists are not supported"


def test_strategic_merge_patch_result_shares_nothing() -> None:
    target = copy.deepcopy(BASE_POD)
    patch: dict[str, Any] = {
        "spec": {"containers": [{"name": "new", "env": [{"name": "X", "value": "1"}]}], "extra": {"a": [1]}}
    }
    result = strategic.strategic_merge_patch(target, patch, "Pod")
    result["spec"]["containers"][0]["env"][0]["value"] = "changed"
    result["spec"]["extra"]["a"].append(2)
    result["metadata"]["labels"]["app"] = "changed"
    assert patch["spec"]["containers"][0]["env"][0]["value"] == "1"
    assert patch["spec"]["extra"]["a"] == [1]
    assert target == BASE_POD


LIST_MERGE_KEY_CASES = [
    ("common-owner-references", "Lease", "metadata.ownerReferences", "uid"),
    ("common-finalizers", "Secret", "metadata.finalizers", ""),
    ("pod-containers", "Pod", "spec.containers", "name"),
    ("pod-container-env", "Pod", "spec.initContainers[].env", "name"),
    ("pod-ephemeral-ports", "Pod", "spec.ephemeralContainers[].ports", "containerPort"),
    ("pod-conditions", "Pod", "status.conditions", "type"),
    ("pod-tolerations-unmerged", "Pod", "spec.tolerations", None),
    ("pod-container-statuses-unmerged", "Pod", "status.containerStatuses", None),
    ("sa-secrets", "ServiceAccount", "secrets", "name"),
    ("sa-image-pull-secrets-unmerged", "ServiceAccount", "imagePullSecrets", None),
    ("role-rules-unmerged", "Role", "rules", None),
]


@pytest.mark.parametrize(
    ("kind", "path", "merge_key"),
    [c[1:] for c in LIST_MERGE_KEY_CASES],
    ids=[c[0] for c in LIST_MERGE_KEY_CASES],
)
def test_merge_keys_for(kind: str, path: str, merge_key: str | None) -> None:
    assert strategic.merge_keys_for(kind).get(path) == merge_key
