"""Unit tests of sim.validation: names, metadata, finalizers, ownerReferences, generateName, times.

Expected messages are kube-apiserver's (apiserver-semantics.md S09, S11, S41, S44, §3), copied from
upstream source where the spec quotes none.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

from sim import validation

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def texts(errs: list[validation.FieldError]) -> list[str]:
    return [str(e) for e in errs]


# -- names ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule", "expected"),
    [
        pytest.param("runner-abc.example", "dns-subdomain", [], id="subdomain-ok"),
        pytest.param(
            "Runner",
            "dns-subdomain",
            [f'metadata.name: Invalid value: "Runner": {SUBDOMAIN_MSG}'],
            id="subdomain-upper",
        ),
        pytest.param(
            "a-",
            "dns-subdomain",
            [f'metadata.name: Invalid value: "a-": {SUBDOMAIN_MSG}'],
            id="subdomain-trailing-dash",
        ),
        pytest.param(
            "a" * 254,
            "dns-subdomain",
            [f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters'],
            id="subdomain-too-long",
        ),
        pytest.param("a" * 253, "dns-subdomain", [], id="subdomain-max-length"),
        pytest.param("arc-runners", "dns-label", [], id="label-ok"),
        pytest.param(
            "a.b",
            "dns-label",
            ['metadata.name: Invalid value: "a.b": must not contain dots'],
            id="label-dots",
        ),
        pytest.param(
            "A_b", "dns-label", [f'metadata.name: Invalid value: "A_b": {LABEL_MSG}'], id="label-bad-chars"
        ),
        pytest.param(
            "a" * 64,
            "dns-label",
            [f'metadata.name: Invalid value: "{"a" * 64}": must be no more than 63 characters'],
            id="label-too-long",
        ),
        pytest.param("system:controller:Foo", "path-segment", [], id="path-segment-ok-colons-and-upper"),
        pytest.param(
            ".",
            "path-segment",
            ["metadata.name: Invalid value: \".\": may not be '.'"],
            id="path-segment-dot",
        ),
        pytest.param(
            "..",
            "path-segment",
            ["metadata.name: Invalid value: \"..\": may not be '..'"],
            id="path-segment-dotdot",
        ),
        pytest.param(
            "a/b%c",
            "path-segment",
            [
                "metadata.name: Invalid value: \"a/b%c\": may not contain '/'",
                "metadata.name: Invalid value: \"a/b%c\": may not contain '%'",
            ],
            id="path-segment-slash-percent",
        ),
    ],
)
def test_validate_name(name: str, rule: str, expected: list[str]) -> None:
    assert texts(validation.validate_name(name, rule)) == expected


def test_validate_name_rejects_unknown_rule() -> None:
    with pytest.raises(ValueError, match="unknown name rule"):
        validation.validate_name("x", "dns-1035")


# -- metadata -------------------------------------------------------------------------------------------


def owner(
    uid: str = "u1", *, name: str = "o", kind: str = "EphemeralRunnerSet", **extra: Any
) -> dict[str, Any]:
    return {"apiVersion": "actions.github.com/v1alpha1", "kind": kind, "name": name, "uid": uid, **extra}


@pytest.mark.parametrize(
    ("meta", "kwargs", "expected"),
    [
        pytest.param({"name": "r", "namespace": "ns"}, {}, [], id="minimal-ok"),
        pytest.param(
            {"namespace": "ns"},
            {},
            ["metadata.name: Required value: name or generateName is required"],
            id="name-required",
        ),
        pytest.param({"generateName": "runner-", "namespace": "ns"}, {}, [], id="generate-name-only-ok"),
        pytest.param(
            {"generateName": "Runner-", "name": "Runner-abcde", "namespace": "ns"},
            {},
            [
                f'metadata.generateName: Invalid value: "Runner-": {SUBDOMAIN_MSG}',
                f'metadata.name: Invalid value: "Runner-abcde": {SUBDOMAIN_MSG}',
            ],
            id="bad-generate-name-and-name",
        ),
        pytest.param({"name": "r"}, {}, ["metadata.namespace: Required value"], id="namespace-required"),
        pytest.param(
            {"name": "n", "namespace": "x"},
            {"namespaced": False},
            ["metadata.namespace: Forbidden: not allowed on this type"],
            id="cluster-scoped-with-namespace",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "generation": -1},
            {},
            ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
            id="negative-generation",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "labels": {"app.kubernetes.io/name": "arc", "-bad": "ok"}},
            {},
            [f'metadata.labels: Invalid value: "-bad": {NAME_PART_MSG}'],
            id="label-key-bad-name-part",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "labels": {"Bad_Prefix/x": "v"}},
            {},
            [f'metadata.labels: Invalid value: "Bad_Prefix/x": prefix part {SUBDOMAIN_MSG}'],
            id="label-key-bad-prefix",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "labels": {"/x": "v"}},
            {},
            ['metadata.labels: Invalid value: "/x": prefix part must be non-empty'],
            id="label-key-empty-prefix",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "labels": {"k": "v" * 64}},
            {},
            [f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters'],
            id="label-value-too-long",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "labels": {"k": "has space"}},
            {},
            [f'metadata.labels: Invalid value: "has space": {LABEL_VALUE_MSG}'],
            id="label-value-bad-chars",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "labels": {"k": ""}}, {}, [], id="label-value-empty-ok"
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "annotations": {"UPPER.example.com/Key": "x"}},
            {},
            [],
            id="annotation-key-case-insensitive",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "annotations": {"a": "x" * 262144}},
            {},
            ["metadata.annotations: Too long: must have at most 262144 bytes"],
            id="annotations-too-long",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "annotations": {"a": "x" * 262143}},
            {},
            [],
            id="annotations-at-limit",
        ),
        pytest.param(
            {"name": "r", "namespace": "ns", "ownerReferences": [{"controller": True}]},
            {},
            [
                'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
                'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
                'metadata.ownerReferences.name: Invalid value: "": must not be empty',
                'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
            ],
            id="owner-reference-missing-fields",
        ),
        pytest.param(
            {
                "name": "r",
                "namespace": "ns",
                "ownerReferences": [owner("u1", name="a", controller=True), owner("u2")],
            },
            {},
            [],
            id="one-controller-ok",
        ),
    ],
)
def test_validate_metadata(meta: dict[str, Any], kwargs: dict[str, Any], expected: list[str]) -> None:
    options: dict[str, Any] = {"name_rule": "dns-subdomain", "namespaced": True, **kwargs}
    assert texts(validation.validate_metadata(meta, **options)) == expected


def test_two_controllers_names_both_references() -> None:
    refs = [owner("u1", name="a", controller=True), owner("u2", name="b", kind="Pod", controller=True)]
    errs = validation.validate_metadata(
        {"name": "r", "namespace": "ns", "ownerReferences": refs}, name_rule="dns-subdomain", namespaced=True
    )
    assert [(e.type, e.field) for e in errs] == [("FieldValueInvalid", "metadata.ownerReferences")]
    assert errs[0].detail == (
        'Only one reference can have Controller set to true. Found "true" in references for '
        "EphemeralRunnerSet/a and Pod/b"
    )


def test_event_cannot_be_an_owner() -> None:
    ref = {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}
    errs = validation.validate_metadata(
        {"name": "r", "namespace": "ns", "ownerReferences": [ref]}, name_rule="dns-subdomain", namespaced=True
    )
    assert [(e.field, e.detail) for e in errs] == [
        ("metadata.ownerReferences", "/v1, Kind=Event is disallowed from being an owner")
    ]


@pytest.mark.parametrize(
    ("finalizers", "strict", "expected"),
    [
        pytest.param(["actions.github.com/cleanup"], False, [], id="qualified-ok"),
        pytest.param(["plain"], False, [], id="plain-ok-on-custom-resources"),
        pytest.param(
            ["plain"],
            True,
            [
                'metadata.finalizers[0]: Invalid value: "plain": name is neither a standard '
                "finalizer name nor is it fully qualified"
            ],
            id="plain-refused-on-builtins",
        ),
        pytest.param(["kubernetes", "orphan"], True, [], id="standard-names-ok-on-builtins"),
        pytest.param(
            ["bad name"],
            False,
            [f'metadata.finalizers: Invalid value: "bad name": {NAME_PART_MSG}'],
            id="not-a-qualified-name",
        ),
        pytest.param(
            ["orphan", "foregroundDeletion"],
            False,
            [
                'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: '
                "finalizer orphan and foregroundDeletion cannot be both set"
            ],
            id="orphan-and-foreground",
        ),
    ],
)
def test_finalizer_validation(finalizers: list[str], strict: bool, expected: list[str]) -> None:
    meta = {"name": "r", "namespace": "ns", "finalizers": finalizers}
    errs = validation.validate_metadata(
        meta, name_rule="dns-subdomain", namespaced=True, strict_finalizers=strict
    )
    assert texts(errs) == expected


def test_validate_metadata_does_not_mutate() -> None:
    meta = {"generateName": "x-", "namespace": "ns", "labels": {"a": "b"}}
    before = repr(meta)
    validation.validate_metadata(meta, name_rule="dns-subdomain", namespaced=True)
    assert repr(meta) == before


# -- finalizer warnings (custom resources) --------------------------------------------------------------

PATH_WORDING = (
    "prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other "
    "finalizer writers"
)
PLAIN_WORDING = (
    "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
)


@pytest.mark.parametrize(
    ("finalizers", "old", "expected"),
    [
        pytest.param(["actions.github.com/cleanup-protection"], None, [], id="qualified-no-warning"),
        pytest.param(["kubernetes", "orphan", "foregroundDeletion"], None, [], id="standard-no-warning"),
        pytest.param(["x"], None, [f'metadata.finalizers: "x": {PLAIN_WORDING}'], id="plain-name"),
        pytest.param(
            ["finalizers.example.com"],
            None,
            [f'metadata.finalizers: "finalizers.example.com": {PATH_WORDING}'],
            id="dotted-name-asks-for-a-path",
        ),
        pytest.param(
            ["z", "a", "a"],
            None,
            [f'metadata.finalizers: "a": {PLAIN_WORDING}', f'metadata.finalizers: "z": {PLAIN_WORDING}'],
            id="sorted-and-deduplicated",
        ),
        pytest.param(["x", "y"], ["x"], [f'metadata.finalizers: "y": {PLAIN_WORDING}'], id="only-added-ones"),
        pytest.param(
            ["bad name"],
            None,
            [
                f'metadata.finalizers: "bad name": {NAME_PART_MSG}',
                f'metadata.finalizers: "bad name": {PLAIN_WORDING}',
            ],
            id="invalid-name-warns-twice",
        ),
    ],
)
def test_finalizer_warnings(finalizers: list[str], old: list[str] | None, expected: list[str]) -> None:
    old_meta = None if old is None else {"finalizers": old}
    assert validation.finalizer_warnings({"finalizers": finalizers}, old_meta) == expected


# -- S41: no new finalizers while deleting --------------------------------------------------------------

DELETING = "2025-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            {"deletionTimestamp": DELETING, "finalizers": ["a/b"]},
            {"finalizers": ["a/b", "x"]},
            [
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object is "
                "being deleted, "
                'found new finalizers []string{"x"}'
            ],
            id="one-added",
        ),
        pytest.param(
            {"deletionTimestamp": DELETING},
            {"finalizers": ["b", "a"]},
            [
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object is "
                "being deleted, "
                'found new finalizers []string{"a", "b"}'
            ],
            id="two-added-sorted",
        ),
        pytest.param(
            {"deletionTimestamp": DELETING, "finalizers": ["a", "b"]},
            {"finalizers": ["b"]},
            [],
            id="removal-ok",
        ),
        pytest.param(
            {"deletionTimestamp": DELETING, "finalizers": ["a", "b"]},
            {"finalizers": ["b", "a"]},
            [],
            id="reorder-ok",
        ),
        pytest.param({"finalizers": []}, {"finalizers": ["x"]}, [], id="not-deleting"),
    ],
)
def test_check_finalizers_while_deleting(
    old: dict[str, Any], new: dict[str, Any], expected: list[str]
) -> None:
    assert texts(validation.check_finalizers_while_deleting(old, new)) == expected


# -- S44: duplicate ownerReferences ---------------------------------------------------------------------

DEDUP_WARNING = (
    ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in "
    "1.20+, and may "
    "reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}"
)


@pytest.mark.parametrize(
    ("refs", "kept", "warnings"),
    [
        pytest.param([owner("u1"), owner("u2")], [owner("u1"), owner("u2")], [], id="no-duplicates"),
        pytest.param(
            [owner("u1"), owner("u1")], [owner("u1")], [DEDUP_WARNING.format("u1")], id="exact-duplicate"
        ),
        pytest.param(
            [owner("u1"), owner("u2"), owner("u1"), owner("u2"), owner("u1")],
            [owner("u1"), owner("u2")],
            [DEDUP_WARNING.format("u1, u2, u1")],
            id="each-repeat-listed",
        ),
        pytest.param(
            [owner("u1"), owner("u1", controller=True)],
            [owner("u1"), owner("u1", controller=True)],
            [],
            id="same-uid-different-fields-kept",
        ),
    ],
)
def test_dedupe_owner_references(
    refs: list[dict[str, Any]], kept: list[dict[str, Any]], warnings: list[str]
) -> None:
    meta = {"name": "r", "ownerReferences": refs}
    before = repr(meta)
    out, got = validation.dedupe_owner_references(meta)
    assert out["ownerReferences"] == kept
    assert got == warnings
    assert repr(meta) == before


def test_dedupe_after_mutating_admission_wording() -> None:
    _, warnings = validation.dedupe_owner_references(
        {"ownerReferences": [owner("u1"), owner("u1")]}, after_mutating_admission=True
    )
    assert warnings == [
        ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server "
        "dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your "
        "requests; duplicate UID(s) observed: u1"
    ]


def test_dedupe_without_owner_references() -> None:
    assert validation.dedupe_owner_references({"name": "r"}) == ({"name": "r"}, [])


# -- S09: generateName ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "kept"),
    [
        pytest.param("runner-", "runner-", id="short-prefix"),
        pytest.param("p" * 70, "p" * 58, id="prefix-cut-to-58"),
        pytest.param("", "", id="empty-prefix"),
    ],
)
def test_generate_name(prefix: str, kept: str) -> None:
    name = validation.generate_name(prefix, random.Random(7))
    assert name.startswith(kept)
    assert len(name) == len(kept) + 5
    assert set(name[len(kept) :]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert name == validation.generate_name(prefix, random.Random(7))


# -- §3: metav1.Time and metav1.MicroTime ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2025-01-01T00:00:00Z", datetime(2025, 1, 1, tzinfo=UTC), id="utc"),
        pytest.param("2025-01-01T02:00:00+02:00", datetime(2025, 1, 1, tzinfo=UTC), id="offset"),
        pytest.param(
            "2025-01-01T00:00:00.5Z", datetime(2025, 1, 1, 0, 0, 0, 500000, tzinfo=UTC), id="fraction"
        ),
        pytest.param(
            "2025-01-01T00:00:00.123456789-00:30",
            datetime(2025, 1, 1, 0, 30, 0, 123456, tzinfo=UTC),
            id="nanos-truncated-negative-offset",
        ),
        pytest.param("2024-02-29T23:59:59Z", datetime(2024, 2, 29, 23, 59, 59, tzinfo=UTC), id="leap-day"),
    ],
)
def test_parse_time(text: str, expected: datetime) -> None:
    assert validation.parse_time(text) == expected


TIME_LAYOUT = '"2006-01-02T15:04:05Z07:00"'
MICRO_LAYOUT = '"2006-01-02T15:04:05.000000Z07:00"'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "2025-01-01T00:00:00",
            f'parsing time "2025-01-01T00:00:00" as {TIME_LAYOUT}: cannot parse "" as "Z07:00"',
            id="missing-offset",
        ),
        pytest.param(
            "2025-01-01 00:00:00Z",
            f'parsing time "2025-01-01 00:00:00Z" as {TIME_LAYOUT}: cannot parse " 00:00:00Z" as "T"',
            id="space-separator",
        ),
        pytest.param(
            "2025-13-01T00:00:00Z", 'parsing time "2025-13-01T00:00:00Z": month out of range', id="month"
        ),
        pytest.param(
            "2025-02-29T00:00:00Z", 'parsing time "2025-02-29T00:00:00Z": day out of range', id="day"
        ),
        pytest.param(
            "2025-01-01T24:00:00Z", 'parsing time "2025-01-01T24:00:00Z": hour out of range', id="hour"
        ),
        pytest.param(
            "2025-01-01T00:00:00Z junk",
            'parsing time "2025-01-01T00:00:00Z junk": extra text: " junk"',
            id="extra-text",
        ),
        pytest.param("", f'parsing time "" as {TIME_LAYOUT}: cannot parse "" as "2006"', id="empty"),
    ],
)
def test_parse_time_errors(text: str, message: str) -> None:
    with pytest.raises(validation.TimeParseError) as info:
        validation.parse_time(text)
    assert str(info.value) == message


def test_parse_time_needs_a_string() -> None:
    with pytest.raises(
        validation.TimeParseError, match=r"^json: cannot unmarshal number into Go value of type string$"
    ):
        validation.parse_time(1735689600)


@pytest.mark.parametrize(
    ("dt", "text"),
    [
        pytest.param(
            datetime(2025, 1, 1, 0, 0, 0, 999999, tzinfo=UTC), "2025-01-01T00:00:00Z", id="truncates"
        ),
        pytest.param(
            datetime.fromisoformat("2025-01-01T01:00:00+01:00"), "2025-01-01T00:00:00Z", id="to-utc"
        ),
        pytest.param(datetime(2025, 1, 1, 12), "2025-01-01T12:00:00Z", id="naive-is-utc"),
    ],
)
def test_format_time(dt: datetime, text: str) -> None:
    assert validation.format_time(dt) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2025-01-01T00:00:00.123456Z", "2025-01-01T00:00:00.123456Z", id="z"),
        pytest.param(
            "2025-01-01T00:00:00.123456+00:00", "2025-01-01T00:00:00.123456Z", id="isoformat-offset"
        ),
        pytest.param(
            "2025-01-01T01:00:00.000001+01:00", "2025-01-01T00:00:00.000001Z", id="offset-normalised"
        ),
    ],
)
def test_micro_time_round_trip(text: str, expected: str) -> None:
    assert validation.format_micro_time(validation.parse_micro_time(text)) == expected


@pytest.mark.parametrize(
    ("text", "rest", "element"),
    [
        pytest.param("2025-01-01T00:00:00Z", "Z", ".000000", id="no-fraction"),
        pytest.param("2025-01-01T00:00:00+00:00", "+00:00", ".000000", id="isoformat-at-zero-microseconds"),
        pytest.param("2025-01-01T00:00:00.123Z", ".123Z", ".000000", id="three-digits"),
        pytest.param("2025-01-01T00:00:00.123456789Z", "789Z", "Z07:00", id="nine-digits"),
        pytest.param("2025-01-01T00:00:00.123456", "", "Z07:00", id="missing-offset"),
    ],
)
def test_micro_time_is_strict(text: str, rest: str, element: str) -> None:
    with pytest.raises(validation.TimeParseError) as info:
        validation.parse_micro_time(text)
    assert str(info.value) == f'parsing time "{text}" as {MICRO_LAYOUT}: cannot parse "{rest}" as "{element}"'


def test_format_micro_time() -> None:
    assert validation.format_micro_time(datetime(2025, 1, 1, tzinfo=UTC)) == "2025-01-01T00:00:00.000000Z"
