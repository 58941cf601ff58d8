"""Service-account token signing and verification (sim.tokens) and the protobuf TokenRequest reader
(sim.protobuf), on their own: no server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from sim import protobuf, tokens

NOW = datetime(2026, 1, 1, tzinfo=UTC)
ACCOUNT = {"metadata": {"name": "robot", "namespace": "team", "uid": "sa-uid"}}
POD = {"metadata": {"name": "p", "namespace": "team", "uid": "pod-uid"}}


def issue(**kw: object) -> str:
    args: dict[str, object] = {
        "service_account": ACCOUNT,
        "audiences": list(tokens.API_AUDIENCES),
        "expiration_seconds": 3600,
        "now": NOW,
    }
    args.update(kw)
    return tokens.issue(**args)  # type: ignore[arg-type]


def test_a_verified_token_says_who_and_what_it_is_bound_to() -> None:
    claims = tokens.verify(issue(pod=POD, node_name="n1"), now=NOW)
    assert claims.username == "system:serviceaccount:team:robot"
    assert claims.service_account == tokens.Ref("robot", "sa-uid")
    assert claims.pod == tokens.Ref("p", "pod-uid")
    assert claims.node == tokens.Ref("n1")
    assert claims.secret is None
    assert claims.expires - claims.issued == 3600


def test_tokens_are_valid_within_the_leeway_and_not_after() -> None:
    token = issue()
    tokens.verify(token, now=NOW + timedelta(seconds=3600 + 59))
    with pytest.raises(tokens.InvalidToken, match="expired"):
        tokens.verify(token, now=NOW + timedelta(seconds=3600 + 61))
    with pytest.raises(tokens.InvalidToken, match="not valid yet"):
        tokens.verify(token, now=NOW - timedelta(seconds=61))


def test_another_key_or_audience_or_a_mangled_token_does_not_verify() -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(tokens.InvalidToken, match="signature"):
        tokens.verify(issue(key=other), now=NOW)
    with pytest.raises(tokens.InvalidToken, match="audiences"):
        tokens.verify(issue(audiences=["vault"]), now=NOW)
    header, payload, signature = issue().split(".")
    with pytest.raises(tokens.InvalidToken):
        tokens.verify(f"{header}.{payload}x.{signature}", now=NOW)


def test_only_jwts_naming_the_emulator_count_as_issued_here() -> None:
    assert tokens.issued_here(issue())
    assert not tokens.issued_here("system:serviceaccount:arc-systems:arcsm")
    assert not tokens.issued_here("arcsm-sim")
    assert not tokens.issued_here("a.b.c")


def varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def field(number: int, value: bytes | int) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def test_a_protobuf_token_request_reads_as_its_json_shape() -> None:
    ref = field(1, b"Pod") + field(2, b"v1") + field(3, b"p") + field(4, b"pod-uid")
    spec = field(1, b"a") + field(1, b"b") + field(3, ref) + field(4, 7200)
    raw = field(1, field(1, b"robot")) + field(2, spec) + field(3, b"")
    type_meta = field(1, b"authentication.k8s.io/v1") + field(2, b"TokenRequest")
    body = protobuf.MAGIC + field(1, type_meta) + field(2, raw) + field(3, b"") + field(4, b"")
    assert protobuf.decode(body) == {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": {"name": "robot"},
        "spec": {
            "audiences": ["a", "b"],
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "pod-uid"},
            "expirationSeconds": 7200,
        },
    }


def test_protobuf_bodies_of_other_kinds_are_refused() -> None:
    type_meta = field(1, b"actions.github.com/v1alpha1") + field(2, b"AutoscalingRunnerSet")
    with pytest.raises(ValueError, match="AutoscalingRunnerSet"):
        protobuf.decode(protobuf.MAGIC + field(1, type_meta) + field(2, b""))
    with pytest.raises(ValueError):
        protobuf.decode(b'{"kind": "TokenRequest"}')
