"""sim.selectors: label and field selectors of list/watch requests and the selectable fields of the
built-in kinds, with kube-apiserver's grammar and messages (apiserver-semantics.md S15, S16)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sim import errors, selectors

NAME_REGEX = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
NAME_PART_ERROR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    f"alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    f"'{NAME_REGEX}')"
)
VALUE_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    f"for validation is '({NAME_REGEX})?')"
)
INTEGER_ERROR = "for 'Gt', 'Lt' operators, the value must be an integer"
PREFIX_ERROR = (
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def bad_request(call: Any, *args: Any) -> errors.ApiError:
    with pytest.raises(errors.ApiError) as info:
        call(*args)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    return info.value


# -- label selectors: matching -------------------------------------------------------------------------

APP_WEB = {"app": "web", "tier": "front"}

MATCH_CASES = [
    ("empty-matches-labels", "", APP_WEB, True),
    ("empty-matches-none", "", None, True),
    ("blank-matches", "  \t ", {}, True),
    ("equals", "app=web", APP_WEB, True),
    ("equals-other-value", "app=db", APP_WEB, False),
    ("equals-missing-key", "app=web", {}, False),
    ("double-equals", "app==web", APP_WEB, True),
    ("not-equals-other", "app!=db", APP_WEB, True),
    ("not-equals-same", "app!=web", APP_WEB, False),
    ("not-equals-missing-key", "app!=web", {"tier": "front"}, True),
    ("not-equals-no-labels", "app!=web", None, True),
    ("equals-empty-value", "app=", {"app": ""}, True),
    ("equals-empty-value-missing", "app=", {}, False),
    ("not-equals-empty-value", "app!=", {"app": "x"}, True),
    ("in", "app in (db,web)", APP_WEB, True),
    ("in-miss", "app in (db,cache)", APP_WEB, False),
    ("in-missing-key", "app in (web)", {}, False),
    ("in-no-space", "app in(web)", APP_WEB, True),
    ("in-empty-parens-matches-empty", "app in ()", {"app": ""}, True),
    ("in-empty-parens-not-web", "app in ()", APP_WEB, False),
    ("in-empty-member", "app in (a,,web)", APP_WEB, True),
    ("notin", "app notin (db)", APP_WEB, True),
    ("notin-hit", "app notin (db,web)", APP_WEB, False),
    ("notin-missing-key", "app notin (web)", {}, True),
    ("exists", "app", APP_WEB, True),
    ("exists-missing", "color", APP_WEB, False),
    ("does-not-exist", "!color", APP_WEB, True),
    ("does-not-exist-present", "!app", APP_WEB, False),
    ("does-not-exist-space", "! app", {}, True),
    ("and-all", "app=web,tier=front", APP_WEB, True),
    ("and-one-fails", "app=web,tier=back", APP_WEB, False),
    ("and-mixed", "app in (web),!color,tier", APP_WEB, True),
    ("whitespace", "  app = web ,  tier  !=  back  ", APP_WEB, True),
    ("tabs-newlines", "app\t=\nweb", APP_WEB, True),
    ("prefixed-key", "example.com/team=infra", {"example.com/team": "infra"}, True),
    ("keyword-key-and-values", "in in (in,notin)", {"in": "notin"}, True),
    ("value-charset", "v=a.b-c_D9", {"v": "a.b-c_D9"}, True),
    ("gt", "size>5", {"size": "6"}, True),
    ("gt-equal", "size>5", {"size": "5"}, False),
    ("gt-leading-zero", "size>5", {"size": "007"}, True),
    ("gt-negative-label", "size>5", {"size": "-7"}, False),
    ("lt", "size<5", {"size": "4"}, True),
    ("lt-negative-label", "size<5", {"size": "-7"}, True),
    ("gt-not-integer", "size>5", {"size": "big"}, False),
    ("gt-float", "size>5", {"size": "6.5"}, False),
    ("gt-missing-key", "size>5", {}, False),
    ("lt-missing-key", "size<5", {}, False),
    ("gt-int64-max", "size>9223372036854775806", {"size": "9223372036854775807"}, True),
    ("gt-beyond-int64", "size>5", {"size": "9223372036854775808"}, False),
]


@pytest.mark.parametrize(
    ("text", "labels", "expected"), [c[1:] for c in MATCH_CASES], ids=[c[0] for c in MATCH_CASES]
)
def test_label_selector_matches(text: str, labels: dict[str, str] | None, expected: bool) -> None:
    assert selectors.parse_label_selector(text).matches(labels) is expected


STRING_CASES = [
    ("sorted-by-key", "b=1,a!=2", "a!=2,b=1"),
    ("set-values-sorted-unique", "k in (z,a,z)", "k in (a,z)"),
    ("exists-and-not", "!x,y", "!x,y"),
    ("gt-lt", "a>1,b<2", "a>1,b<2"),
    ("double-equals", "a==b", "a==b"),
    ("notin-empty-member", "k notin (,a)", "k notin (,a)"),
    ("empty", "", ""),
]


@pytest.mark.parametrize(
    ("text", "canonical"), [c[1:] for c in STRING_CASES], ids=[c[0] for c in STRING_CASES]
)
def test_label_selector_string_is_canonical(text: str, canonical: str) -> None:
    selector = selectors.parse_label_selector(text)
    assert str(selector) == canonical
    assert selectors.parse_label_selector(canonical) == selector


def test_label_selector_empty_property() -> None:
    assert selectors.parse_label_selector("").empty
    assert not selectors.parse_label_selector("a").empty


def test_requirements_are_exposed() -> None:
    selector = selectors.parse_label_selector("b notin (y,x),a")
    assert selector.requirements == (
        selectors.Requirement("a", selectors.Operator.EXISTS),
        selectors.Requirement("b", selectors.Operator.NOT_IN, ("x", "y")),
    )


# -- label selectors: errors ---------------------------------------------------------------------------

PARSE_ERROR_CASES = [
    ("leading-comma", ",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("trailing-comma", "a,", "found '', expected: identifier after ','"),
    ("double-comma", "a,,b", "found ',', expected: identifier after ','"),
    ("leading-operator", "=a", "found '=', expected: !, identifier, or 'end of string'"),
    ("lone-not-equals", "!=a", "found '!=', expected: !, identifier, or 'end of string'"),
    ("lone-bang", "!", "unable to parse requirement: found '', expected: identifier"),
    ("bang-paren", "!(", "unable to parse requirement: found '(', expected: identifier"),
    ("two-words", "a b", "unable to parse requirement: found 'b', expected: '=', '!=', '==', 'in', notin'"),
    ("paren-after-equals", "a=(b)", "unable to parse requirement: found '(', expected: identifier"),
    ("triple-equals", "a===b", "unable to parse requirement: found '=', expected: identifier"),
    ("value-then-word", "a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("value-then-equals", "a=b=c", "found '=', expected: ',' or 'end of string'"),
    ("not-exists-with-value", "!a=b", "found '=', expected: ',' or 'end of string'"),
    ("in-without-parens", "a in b", "unable to parse requirement: found 'b' expected: '('"),
    ("in-at-end", "a in", "unable to parse requirement: found '' expected: '('"),
    ("in-unclosed", "a in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    (
        "in-operator-inside",
        "a in (=)",
        "unable to parse requirement: found '=', expected: ',', ')' or identifier",
    ),
    ("in-missing-comma", "a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
    (
        "in-unterminated-list",
        "a in (b,",
        "unable to parse requirement: found '', expected: ',', or identifier",
    ),
    (
        "gt-not-integer",
        "a>b",
        'unable to parse requirement: values[0]: Invalid value: "b": ' + INTEGER_ERROR,
    ),
    (
        "lt-empty",
        "a<",
        'unable to parse requirement: values[0]: Invalid value: "": ' + INTEGER_ERROR,
    ),
    (
        "bad-key-charset",
        "app:web",
        f'unable to parse requirement: <nil>: Invalid value: "app:web": {NAME_PART_ERROR}',
    ),
    (
        "bad-key-dash-start",
        "-a=b",
        f'unable to parse requirement: <nil>: Invalid value: "-a": {NAME_PART_ERROR}',
    ),
    (
        "key-two-slashes",
        "a/b/c=d",
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        f"(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{NAME_REGEX}') with an "
        "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    (
        "key-bad-prefix",
        "Example.com/a",
        f'unable to parse requirement: <nil>: Invalid value: "Example.com/a": {PREFIX_ERROR}',
    ),
    (
        "key-empty-prefix",
        "/a",
        'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty',
    ),
    (
        "key-empty-name",
        "a/",
        'unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; '
        + NAME_PART_ERROR,
    ),
    (
        "key-too-long",
        "k" * 64,
        f'unable to parse requirement: <nil>: Invalid value: "{"k" * 64}": name part must be no more than 63 '
        "characters",
    ),
    (
        "prefix-too-long",
        "a" * 254 + "/k",
        f'unable to parse requirement: <nil>: Invalid value: "{"a" * 254}/k": prefix part must be no more '
        "than 253 characters",
    ),
    ("bad-value", "a=-x", f'unable to parse requirement: values[0][a]: Invalid value: "-x": {VALUE_ERROR}'),
    (
        "value-too-long",
        "a=" + "v" * 64,
        f'unable to parse requirement: values[0][a]: Invalid value: "{"v" * 64}": must be no more than 63 '
        "characters",
    ),
    (
        "two-bad-values",
        "a in (-y,-x)",
        f'unable to parse requirement: [values[0][a]: Invalid value: "-x": {VALUE_ERROR}, '
        f'values[1][a]: Invalid value: "-y": {VALUE_ERROR}]',
    ),
    (
        "gt-negative-value",
        "a>-1",
        f'unable to parse requirement: values[0][a]: Invalid value: "-1": {VALUE_ERROR}',
    ),
]


@pytest.mark.parametrize(
    ("text", "message"), [c[1:] for c in PARSE_ERROR_CASES], ids=[c[0] for c in PARSE_ERROR_CASES]
)
def test_label_selector_parse_errors(text: str, message: str) -> None:
    assert bad_request(selectors.parse_label_selector, text).message == message


VALID_EDGE_CASES = [
    ("key-63", "k" * 63),
    ("prefix-253", "a" * 253 + "/k"),
    ("value-63", "a=" + "v" * 63),
    ("dotted-prefix", "kubernetes.io/metadata.name=default"),
    ("nul-ends-input", "a=b\x00 garbage ((("),
]


@pytest.mark.parametrize("text", [c[1] for c in VALID_EDGE_CASES], ids=[c[0] for c in VALID_EDGE_CASES])
def test_label_selector_accepts_edge_cases(text: str) -> None:
    selectors.parse_label_selector(text)


# -- field selectors -----------------------------------------------------------------------------------

POD_FIELDS = selectors.supported_fields("Pod")
POD_SET = {"metadata.name": "p1", "metadata.namespace": "ns", "spec.nodeName": "", "status.phase": "Running"}

FIELD_MATCH_CASES = [
    ("empty", "", POD_SET, True),
    ("only-commas", ",,", POD_SET, True),
    ("equals", "metadata.name=p1", POD_SET, True),
    ("equals-miss", "metadata.name=p2", POD_SET, False),
    ("double-equals", "metadata.name==p1", POD_SET, True),
    ("not-equals", "metadata.name!=p2", POD_SET, True),
    ("not-equals-miss", "metadata.name!=p1", POD_SET, False),
    ("empty-value-unscheduled", "spec.nodeName=", POD_SET, True),
    ("missing-field-is-empty", "status.podIP=", POD_SET, True),
    ("missing-field-not-equals", "status.podIP!=10.0.0.1", POD_SET, True),
    ("and", "metadata.name=p1,status.phase=Running", POD_SET, True),
    ("and-fails", "metadata.name=p1,status.phase=Pending", POD_SET, False),
    ("escaped-comma", "metadata.name=a\\,b", {"metadata.name": "a,b"}, True),
    ("escaped-equals", "metadata.name=a\\=b", {"metadata.name": "a=b"}, True),
    ("escaped-backslash", "metadata.name=a\\\\b", {"metadata.name": "a\\b"}, True),
    (
        "escaped-comma-then-term",
        "metadata.name=a\\,b,status.phase=Running",
        {**POD_SET, "metadata.name": "a,b"},
        True,
    ),
    ("value-with-bang", "metadata.name=a!b", {"metadata.name": "a!b"}, True),
]


@pytest.mark.parametrize(
    ("text", "fields", "expected"), [c[1:] for c in FIELD_MATCH_CASES], ids=[c[0] for c in FIELD_MATCH_CASES]
)
def test_field_selector_matches(text: str, fields: dict[str, str], expected: bool) -> None:
    assert selectors.parse_field_selector(text, POD_FIELDS).matches(fields) is expected


FIELD_ERROR_CASES = [
    ("unsupported", "spec.containers=x", "field label not supported: spec.containers"),
    ("unsupported-not-equals", "foo!=x", "field label not supported: foo"),
    ("no-trimming", "metadata.name = p1", "field label not supported: metadata.name "),
    ("empty-field", "=x", "field label not supported: "),
    ("first-sorted-unsupported-wins", "zzz=1,aaa=1", "field label not supported: aaa"),
    ("no-operator", "metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ("gt-is-not-an-operator", "a>1,b=2", "invalid selector: 'a>1,b=2'; can't understand 'a>1'"),
    ("parse-error-before-label", "zzz=1,aaa", "invalid selector: 'zzz=1,aaa'; can't understand 'aaa'"),
    ("bad-escape", "metadata.name=a\\b", "invalid field selector: invalid escape sequence: \\b"),
    ("trailing-backslash", "metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"),
    ("unescaped-equals", "metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
]


@pytest.mark.parametrize(
    ("text", "message"), [c[1:] for c in FIELD_ERROR_CASES], ids=[c[0] for c in FIELD_ERROR_CASES]
)
def test_field_selector_errors(text: str, message: str) -> None:
    assert bad_request(selectors.parse_field_selector, text, POD_FIELDS).message == message


def test_field_selector_requirements_string_and_exact_match() -> None:
    selector = selectors.parse_field_selector("status.phase!=Failed,metadata.name=a\\,b", POD_FIELDS)
    assert selector.requirements == (
        selectors.FieldRequirement("metadata.name", "a,b"),
        selectors.FieldRequirement("status.phase", "Failed", negated=True),
    )
    assert str(selector) == "metadata.name=a\\,b,status.phase!=Failed"
    assert selector.requires_exact_match("metadata.name") == "a,b"
    assert selector.requires_exact_match("status.phase") is None
    assert selector.requires_exact_match("spec.nodeName") is None
    assert not selector.empty
    assert selectors.parse_field_selector("", POD_FIELDS).empty


# -- selectable fields of the built-in kinds -----------------------------------------------------------

FULL_POD = {
    "metadata": {"name": "p1", "namespace": "ns1"},
    "spec": {
        "nodeName": "node-a",
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "runner",
        "hostNetwork": True,
    },
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.7",
        "podIPs": [{"ip": "10.0.0.7"}, {"ip": "fd00::7"}],
        "nominatedNodeName": "node-b",
    },
}

EVENT = {
    "metadata": {"name": "e1", "namespace": "ns1"},
    "involvedObject": {
        "kind": "Pod",
        "namespace": "ns1",
        "name": "p1",
        "uid": "u-1",
        "apiVersion": "v1",
        "resourceVersion": "42",
        "fieldPath": "spec.containers{runner}",
    },
    "reason": "Started",
    "reportingComponent": "kubelet",
    "source": {"component": "kubelet-src"},
    "type": "Normal",
}

FIELD_SET_CASES: list[tuple[str, dict[str, Any], str, dict[str, str]]] = [
    (
        "pod-full",
        FULL_POD,
        "Pod",
        {
            "metadata.name": "p1",
            "metadata.namespace": "ns1",
            "spec.nodeName": "node-a",
            "spec.restartPolicy": "Never",
            "spec.schedulerName": "default-scheduler",
            "spec.serviceAccountName": "runner",
            "spec.hostNetwork": "true",
            "status.phase": "Running",
            "status.podIP": "10.0.0.7",
            "status.podIPs": "10.0.0.7,fd00::7",
            "status.nominatedNodeName": "node-b",
        },
    ),
    (
        "pod-empty",
        {"metadata": {"name": "p2"}},
        "Pod",
        {
            "metadata.name": "p2",
            "metadata.namespace": "",
            "spec.nodeName": "",
            "spec.restartPolicy": "",
            "spec.schedulerName": "",
            "spec.serviceAccountName": "",
            "spec.hostNetwork": "false",
            "status.phase": "",
            "status.podIP": "",
            "status.podIPs": "",
            "status.nominatedNodeName": "",
        },
    ),
    (
        "pod-ip-from-pod-ips",
        {"metadata": {"name": "p"}, "status": {"podIPs": [{"ip": "10.1.1.1"}]}},
        "Pod",
        {"status.podIP": "10.1.1.1", "status.podIPs": "10.1.1.1"},
    ),
    (
        "secret",
        {"metadata": {"name": "s", "namespace": "n"}, "type": "Opaque"},
        "Secret",
        {"metadata.name": "s", "metadata.namespace": "n", "type": "Opaque"},
    ),
    ("secret-no-type", {"metadata": {"name": "s"}}, "Secret", {"type": ""}),
    (
        "event",
        EVENT,
        "Event",
        {
            "metadata.name": "e1",
            "metadata.namespace": "ns1",
            "involvedObject.kind": "Pod",
            "involvedObject.namespace": "ns1",
            "involvedObject.name": "p1",
            "involvedObject.uid": "u-1",
            "involvedObject.apiVersion": "v1",
            "involvedObject.resourceVersion": "42",
            "involvedObject.fieldPath": "spec.containers{runner}",
            "reason": "Started",
            "reportingComponent": "kubelet",
            "source": "kubelet-src",
            "type": "Normal",
        },
    ),
    (
        "event-source-falls-back-to-reporting-component",
        {"metadata": {"name": "e"}, "reportingComponent": "arcsm"},
        "Event",
        {"source": "arcsm", "reportingComponent": "arcsm", "involvedObject.uid": "", "reason": ""},
    ),
    (
        "namespace",
        {"metadata": {"name": "ns"}, "status": {"phase": "Terminating"}},
        "Namespace",
        {"metadata.name": "ns", "metadata.namespace": "", "status.phase": "Terminating"},
    ),
    (
        "other-kind-knows-name-and-namespace",
        {"metadata": {"name": "c", "namespace": "n"}, "data": {"k": "v"}, "type": "x"},
        "ConfigMap",
        {"metadata.name": "c", "metadata.namespace": "n"},
    ),
    (
        "malformed-object",
        {"metadata": "nope", "spec": ["x"]},
        "Pod",
        {"metadata.name": "", "spec.nodeName": ""},
    ),
]


@pytest.mark.parametrize(
    ("obj", "kind", "expected"), [c[1:] for c in FIELD_SET_CASES], ids=[c[0] for c in FIELD_SET_CASES]
)
def test_field_set(obj: dict[str, Any], kind: str, expected: dict[str, str]) -> None:
    before = copy.deepcopy(obj)
    fields = selectors.field_set(obj, kind)
    assert {k: fields.get(k) for k in expected} == expected
    assert obj == before
    if kind == "ConfigMap":
        assert set(fields) == {"metadata.name", "metadata.namespace"}


SUPPORTED_CASES = [
    (
        "pod",
        "Pod",
        {"spec.nodeName", "status.podIPs", "spec.hostNetwork", "metadata.namespace"},
        {"spec.host"},
    ),
    ("secret", "Secret", {"type", "metadata.name"}, {"data"}),
    ("event", "Event", {"involvedObject.uid", "source", "reportingComponent"}, {"message"}),
    ("namespace", "Namespace", {"status.phase", "metadata.name"}, {"spec.finalizers"}),
    ("default", "Lease", {"metadata.name", "metadata.namespace"}, {"spec.holderIdentity", "status.phase"}),
]


@pytest.mark.parametrize(
    ("kind", "present", "absent"), [c[1:] for c in SUPPORTED_CASES], ids=[c[0] for c in SUPPORTED_CASES]
)
def test_supported_fields(kind: str, present: set[str], absent: set[str]) -> None:
    supported = selectors.supported_fields(kind)
    assert present <= supported
    assert not absent & supported
    # Every supported field is one field_set produces for the kind.
    assert supported <= set(selectors.field_set({}, kind))


def test_field_selector_against_field_set() -> None:
    selector = selectors.parse_field_selector("spec.nodeName=node-a,status.phase!=Failed", POD_FIELDS)
    assert selector.matches(selectors.field_set(FULL_POD, "Pod"))
    assert not selector.matches(selectors.field_set({"metadata": {"name": "x"}}, "Pod"))
    unscheduled = selectors.parse_field_selector("spec.nodeName=", POD_FIELDS)
    assert unscheduled.matches(selectors.field_set({"metadata": {"name": "x"}}, "Pod"))
