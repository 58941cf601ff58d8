"""Label and field selectors of list and watch requests (apiserver-semantics.md S15, S16).

What is here:

* ``parse_label_selector`` / ``LabelSelector``: the grammar of ``k8s.io/apimachinery/pkg/labels``
  (``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``, ``k>n``, ``k<n``; a comma
  is AND). The lexer and the recursive-descent parser follow upstream token by token, so what upstream
  rejects is rejected here with the same message, e.g. ``unable to parse requirement: <nil>: Invalid value:
  "a b": name part must consist of ...`` or ``found '(', expected: identifier``. ``!=`` and ``notin`` match
  objects without the key; ``>``/``<`` compare 64-bit integers and never match a non-integer label value.
* ``parse_field_selector`` / ``FieldSelector``: ``k8s.io/apimachinery/pkg/fields`` (``=``, ``==``, ``!=``, a
  comma is AND, values escaped with ``\\,`` ``\\=`` ``\\\\``); a field the kind does not support answers
  ``field label not supported: <field>``. Like upstream, nothing is trimmed: ``a = b`` asks for the field
  ``"a "``.
* ``from_label_selector``: the ``LabelSelector`` of a workload's ``spec.selector`` object (``matchLabels``,
  ``matchExpressions``), for the simulated controllers.
* ``field_set`` and ``SUPPORTED_FIELDS``: the selectable fields of the built-in kinds; a missing value
  reads as ``""`` (so ``spec.nodeName=`` selects unscheduled pods, as upstream).

Every parse error is a 400 BadRequest ``ApiError`` carrying upstream's message.

Known limits: messages quote values the way ``errors.go_repr`` does (JSON escaping), which differs from
Go's ``%q`` only for unusual characters; field selectors take no kind-specific aliases (upstream maps the
legacy Pod field ``spec.host`` to ``spec.nodeName``); ``status.podIPs`` reads as the comma-joined pod IPs
(upstream accepts the label but the value it compares against is not verified).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from sim import errors

# -- validation of label keys and values (k8s.io/apimachinery/pkg/util/validation) -------------------

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character"
)
_LABEL_VALUE_FMT = f"({_QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character"
)
_NAME_MAX = 63
_SUBDOMAIN_MAX = 253


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: the message, examples and the regex, spaced exactly like upstream."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _blen(text: str) -> int:
    """Go measures strings in bytes."""
    return len(text.encode())


def qualified_name_errors(value: str) -> list[str]:
    """``validation.IsQualifiedName``: a label key or annotation key, ``[prefix/]name``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if _blen(prefix) > _SUBDOMAIN_MAX:
                errs.append("prefix part " + _max_len_error(_SUBDOMAIN_MAX))
            if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
                errs.append(
                    "prefix part "
                    + _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
                )
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > _NAME_MAX:
        errs.append("name part " + _max_len_error(_NAME_MAX))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part "
            + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value_errors(value: str) -> list[str]:
    """``validation.IsValidLabelValue``: at most 63 characters, alphanumeric at both ends, may be empty."""
    errs: list[str] = []
    if _blen(value) > _NAME_MAX:
        errs.append(_max_len_error(_NAME_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; None where Go reports an error."""
    if not _INT_RE.fullmatch(text):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


# -- label selectors ---------------------------------------------------------------------------------


class Operator(StrEnum):
    """``selection.Operator``; the value is the operator's upstream spelling."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


@dataclass(frozen=True)
class Requirement:
    """One term of a label selector: a key, an operator and (sorted, unique) values."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        has = self.key in labels
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return has and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return not has or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return has
        if op is Operator.DOES_NOT_EXIST:
            return not has
        # GREATER_THAN / LESS_THAN: both sides must be 64-bit integers.
        if not has or len(self.values) != 1:
            return False
        left = _parse_int64(labels[self.key])
        right = _parse_int64(self.values[0])
        if left is None or right is None:
            return False
        return left > right if op is Operator.GREATER_THAN else left < right

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        joined = ",".join(self.values)
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({joined})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{joined}"


@dataclass(frozen=True)
class LabelSelector:
    """An AND of requirements, sorted by key like upstream's ``internalSelector``."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True for a selector that selects everything."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        present: Mapping[str, str] = labels or {}
        return all(r.matches(present) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


class _Tok(Enum):
    EOS = "end of string"
    CLOSE = ")"
    COMMA = ","
    NOT = "!"
    DOUBLE_EQUALS = "=="
    EQUALS = "="
    GREATER = ">"
    IDENT = "identifier"
    IN = "in"
    LESS = "<"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    OPEN = "("


_STRING_TO_TOKEN = {
    ")": _Tok.CLOSE,
    ",": _Tok.COMMA,
    "!": _Tok.NOT,
    "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS,
    ">": _Tok.GREATER,
    "in": _Tok.IN,
    "<": _Tok.LESS,
    "!=": _Tok.NOT_EQUALS,
    "notin": _Tok.NOT_IN,
    "(": _Tok.OPEN,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[_Tok, str]]:
    """Upstream's ``Lexer``: longest special-symbol match, whitespace separates, a NUL ends the input."""
    items: list[tuple[_Tok, str]] = []
    pos, end = 0, len(text)
    nul = text.find("\x00")
    if nul >= 0:
        end = nul
    while True:
        while pos < end and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= end:
            items.append((_Tok.EOS, ""))
            return items
        if text[pos] in _SPECIAL:
            buffer = ""
            last: tuple[_Tok, str] | None = None
            while pos < end and text[pos] in _SPECIAL:
                candidate = buffer + text[pos]
                token = _STRING_TO_TOKEN.get(candidate)
                if token is None and last is not None:
                    break
                buffer = candidate
                pos += 1
                if token is not None:
                    last = (token, candidate)
            # Every single special character is a token, so ``last`` is always set here.
            assert last is not None
            items.append(last)
            continue
        start = pos
        while pos < end and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        word = text[start:pos]
        items.append((_STRING_TO_TOKEN.get(word, _Tok.IDENT), word))


class _ParseError(Exception):
    pass


class _LabelParser:
    """Upstream's recursive-descent ``Parser`` (``labels/selector.go``)."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def _token(self, index: int, values: bool) -> tuple[_Tok, str]:
        tok, lit = self.items[index]
        if values and tok in (_Tok.IN, _Tok.NOT_IN):
            tok = _Tok.IDENT  # "in" and "notin" are plain words where a key or value is expected
        return tok, lit

    def lookahead(self, values: bool = True) -> tuple[_Tok, str]:
        return self._token(self.position, values)

    def consume(self, values: bool = True) -> tuple[_Tok, str]:
        self.position += 1
        return self._token(self.position - 1, values)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (_Tok.IDENT, _Tok.NOT):
                try:
                    requirements.append(self.parse_requirement())
                except _ParseError as exc:
                    raise _ParseError(f"unable to parse requirement: {exc}") from None
                tok, lit = self.consume()
                if tok is _Tok.EOS:
                    return requirements
                if tok is _Tok.COMMA:
                    tok2, lit2 = self.lookahead()
                    if tok2 not in (_Tok.IDENT, _Tok.NOT):
                        raise _ParseError(f"found '{lit2}', expected: identifier after ','")
                else:
                    raise _ParseError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok is _Tok.EOS:
                return requirements
            else:
                raise _ParseError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> Requirement:
        key, inferred = self.parse_key_and_infer_operator()
        if inferred is not None:
            return _new_requirement(key, inferred, [])
        operator = self.parse_operator()
        if operator in (Operator.IN, Operator.NOT_IN):
            values = self.parse_values()
        else:
            values = self.parse_exact_value()
        return _new_requirement(key, operator, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, Operator | None]:
        """The key, and ``exists``/``does not exist`` when no binary operator follows (None otherwise)."""
        operator: Operator | None = None
        tok, literal = self.consume()
        if tok is _Tok.NOT:
            operator = Operator.DOES_NOT_EXIST
            tok, literal = self.consume()
        if tok is not _Tok.IDENT:
            raise _ParseError(f"found '{literal}', expected: identifier")
        key_errors = qualified_name_errors(literal)
        if key_errors:
            # The parser validates with a nil field path, which Go prints as "<nil>".
            raise _ParseError(str(errors.invalid_value("<nil>", literal, "; ".join(key_errors))))
        if self.lookahead()[0] in (_Tok.EOS, _Tok.COMMA):
            return literal, operator or Operator.EXISTS
        return literal, operator

    def parse_operator(self) -> Operator:
        tok, lit = self.consume(values=False)
        operators = {
            _Tok.IN: Operator.IN,
            _Tok.EQUALS: Operator.EQUALS,
            _Tok.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
            _Tok.GREATER: Operator.GREATER_THAN,
            _Tok.LESS: Operator.LESS_THAN,
            _Tok.NOT_IN: Operator.NOT_IN,
            _Tok.NOT_EQUALS: Operator.NOT_EQUALS,
        }
        if tok not in operators:
            raise _ParseError(f"found '{lit}', expected: '=', '!=', '==', 'in', notin'")
        return operators[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume()
        if tok is not _Tok.OPEN:
            raise _ParseError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_Tok.IDENT, _Tok.COMMA):
            values = self.parse_identifiers_list()
            if self.consume()[0] is not _Tok.CLOSE:
                raise _ParseError(f"found '{lit}', expected: ')'")
            return values
        if tok is _Tok.CLOSE:
            self.consume()
            return {""}
        raise _ParseError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok is _Tok.IDENT:
                values.add(lit)
                tok2, lit2 = self.lookahead()
                if tok2 is _Tok.COMMA:
                    continue
                if tok2 is _Tok.CLOSE:
                    return values
                raise _ParseError(f"found '{lit2}', expected: ',' or ')'")
            if tok is _Tok.COMMA:
                if not values:
                    values.add("")  # "(,"
                tok2, _ = self.lookahead()
                if tok2 is _Tok.CLOSE:
                    values.add("")  # ",)"
                    return values
                if tok2 is _Tok.COMMA:
                    self.consume()
                    values.add("")  # ",,"
            else:
                raise _ParseError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        if self.lookahead()[0] in (_Tok.EOS, _Tok.COMMA):
            return {""}
        tok, lit = self.consume()
        if tok is _Tok.IDENT:
            return {lit}
        raise _ParseError(f"found '{lit}', expected: identifier")


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _new_requirement(key: str, operator: Operator, values: list[str]) -> Requirement:
    """``labels.NewRequirement`` for what the parser can produce: checks the values."""
    problems: list[str] = []
    if operator in (Operator.GREATER_THAN, Operator.LESS_THAN):
        for i, value in enumerate(values):
            if _parse_int64(value) is None:
                problems.append(
                    str(
                        errors.invalid_value(
                            f"values[{i}]", value, "for 'Gt', 'Lt' operators, the value must be an integer"
                        )
                    )
                )
    for i, value in enumerate(values):
        value_errors = label_value_errors(value)
        if value_errors:
            problems.append(str(errors.invalid_value(f"values[{i}][{key}]", value, "; ".join(value_errors))))
    if problems:
        raise _ParseError(_aggregate(problems))
    return Requirement(key, operator, tuple(values))


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a ``labelSelector`` query parameter; 400 BadRequest with upstream's message when invalid."""
    try:
        requirements = _LabelParser(text).parse()
    except _ParseError as exc:
        raise errors.bad_request(str(exc)) from None
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


_EXPRESSION_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def from_label_selector(selector: Mapping[str, Any] | None) -> LabelSelector | None:
    """``metav1.LabelSelectorAsSelector`` of a ``{matchLabels, matchExpressions}`` object, for the simulated
    controllers; ``None`` for a missing selector (which selects nothing) or an operator it does not know.

    An empty object selects everything. The object is assumed valid (the API server checked it).
    """
    if selector is None:
        return None
    requirements: list[Requirement] = []
    for key, value in sorted((selector.get("matchLabels") or {}).items()):
        requirements.append(Requirement(str(key), Operator.EQUALS, (str(value),)))
    for expression in selector.get("matchExpressions") or []:
        if not isinstance(expression, Mapping):
            return None
        operator = _EXPRESSION_OPERATORS.get(str(expression.get("operator") or ""))
        if operator is None:
            return None
        values = tuple(sorted({str(v) for v in expression.get("values") or []}))
        requirements.append(Requirement(str(expression.get("key") or ""), operator, values))
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


# -- field selectors ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRequirement:
    """``field=value`` (``==`` is the same) or ``field!=value``; the value is unescaped."""

    field: str
    value: str
    negated: bool = False

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.field, "") == self.value) != self.negated

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return f"{self.field}{'!=' if self.negated else '='}{escaped}"


@dataclass(frozen=True)
class FieldSelector:
    """An AND of field requirements, in the sorted order upstream parses them."""

    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all(r.matches(fields) for r in self.requirements)

    def requires_exact_match(self, field: str) -> str | None:
        """The value the selector pins ``field`` to with ``=``, if it does (e.g. ``metadata.name``)."""
        for r in self.requirements:
            if r.field == field:
                return None if r.negated else r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _split_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash; the backslashes stay for ``_unescape``."""
    if not text:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """The first operator splits the term: no escaping on the left-hand side."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape(value: str) -> str:
    """``fields.UnescapeValue``: the escapes are ``\\\\``, ``\\,`` and ``\\=``; bare ``,``/``=`` fail."""
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise errors.bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go prints the rune with %v, i.e. as its code point.
            raise errors.bad_request(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise errors.bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str, supported: Collection[str]) -> FieldSelector:
    """Parse a ``fieldSelector`` query parameter against the fields the kind supports (400 otherwise)."""
    requirements: list[FieldRequirement] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise errors.bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        requirements.append(FieldRequirement(lhs, _unescape(rhs), negated=op == "!="))
    for requirement in requirements:
        if requirement.field not in supported:
            raise errors.bad_request(f"field label not supported: {requirement.field}")
    return FieldSelector(tuple(requirements))


# -- selectable fields of the built-in kinds ---------------------------------------------------------

_META_FIELDS = frozenset({"metadata.name", "metadata.namespace"})

SUPPORTED_FIELDS: dict[str, frozenset[str]] = {
    "Pod": _META_FIELDS
    | {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    },
    "Secret": _META_FIELDS | {"type"},
    "Event": _META_FIELDS
    | {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    },
    "Namespace": _META_FIELDS | {"status.phase"},
    "Node": _META_FIELDS | {"spec.unschedulable"},
}
DEFAULT_SUPPORTED_FIELDS = _META_FIELDS


def supported_fields(kind: str) -> frozenset[str]:
    """The field-selector labels of a kind; every other kind knows only name and namespace."""
    return SUPPORTED_FIELDS.get(kind, DEFAULT_SUPPORTED_FIELDS)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _get(obj: Mapping[str, Any], *path: str) -> Any:
    current: Any = obj
    for part in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def field_set(obj: Mapping[str, Any], kind: str) -> dict[str, str]:
    """The selectable fields of a stored object of ``kind``; absent values are ``""``."""
    fields = {
        "metadata.name": _text(_get(obj, "metadata", "name")),
        "metadata.namespace": _text(_get(obj, "metadata", "namespace")),
    }
    if kind == "Pod":
        pod_ips = _get(obj, "status", "podIPs")
        ips = (
            [_text(_get(ip, "ip")) for ip in pod_ips if isinstance(ip, Mapping)]
            if isinstance(pod_ips, list)
            else []
        )
        pod_ip = _text(_get(obj, "status", "podIP")) or (ips[0] if ips else "")
        fields.update(
            {
                "spec.nodeName": _text(_get(obj, "spec", "nodeName")),
                "spec.restartPolicy": _text(_get(obj, "spec", "restartPolicy")),
                "spec.schedulerName": _text(_get(obj, "spec", "schedulerName")),
                "spec.serviceAccountName": _text(_get(obj, "spec", "serviceAccountName")),
                "spec.hostNetwork": "true" if _get(obj, "spec", "hostNetwork") is True else "false",
                "status.phase": _text(_get(obj, "status", "phase")),
                "status.podIP": pod_ip,
                "status.podIPs": ",".join(ips),
                "status.nominatedNodeName": _text(_get(obj, "status", "nominatedNodeName")),
            }
        )
    elif kind == "Secret":
        fields["type"] = _text(_get(obj, "type"))
    elif kind == "Event":
        for name in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
            fields[f"involvedObject.{name}"] = _text(_get(obj, "involvedObject", name))
        reporting = _text(_get(obj, "reportingComponent"))
        fields["reason"] = _text(_get(obj, "reason"))
        fields["reportingComponent"] = reporting
        # Upstream: source.component, or the reporting controller when the source is empty.
        fields["source"] = _text(_get(obj, "source", "component")) or reporting
        fields["type"] = _text(_get(obj, "type"))
    elif kind == "Namespace":
        fields["status.phase"] = _text(_get(obj, "status", "phase"))
    elif kind == "Node":
        fields["spec.unschedulable"] = "true" if _get(obj, "spec", "unschedulable") is True else "false"
    return fields
