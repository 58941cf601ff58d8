"""Secret material never reaches the journal file, whatever the caller forgot to strip."""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import redacting
from store.journal import Journal
from store.records import Record, RecordType
from store.redacting import is_credential
from tests.unit.store.factories import OpenJournal

TOKEN = "ghs_thisIsAVeryPrivateToken0123456789"
JIT = "eyJhIjoiYmFzZTY0LWVuY29kZWQgSklUIGNvbmZpZyJ9"
KEY = "-----BEGIN RSA PRIVATE KEY-----MIIEow"


def secret_object() -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "github-app",
            "namespace": "arc-systems",
            "uid": "s-1",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": f'{{"data":"{TOKEN}"}}'},
        },
        "data": {"github_token": TOKEN},
        "stringData": {"github_app_private_key": KEY},
        "type": "Opaque",
    }


async def test_an_observed_secret_is_kept_without_its_data(journal: Journal) -> None:
    # Built by hand, not with records.observed (which redacts): the journal must redact on its own.
    raw = Record(
        type=RecordType.OBSERVED,
        kind="Secret",
        namespace="arc-systems",
        name="github-app",
        body={"event": "ADDED", "object": secret_object()},
    )
    [kept] = await journal.append([raw])
    obj = kept.body["object"]
    assert "data" not in obj and "stringData" not in obj
    assert obj["metadata"]["name"] == "github-app"
    assert "annotations" not in obj["metadata"] or not obj["metadata"]["annotations"]
    assert journal.projection.get("Secret", "arc-systems", "github-app") == obj
    [read] = await journal.read()
    assert read.body == kept.body


async def test_tokens_and_jit_configs_are_scrubbed_from_decisions_and_effects(journal: Journal) -> None:
    effect = Record(
        type=RecordType.EFFECT,
        kind="EphemeralRunner",
        name="runner-1",
        body={"create": {**secret_object(), "data": {"jitToken": JIT}}, "why": "runner needs its JIT config"},
    )
    result = Record(
        type=RecordType.EFFECT_RESULT,
        kind="EphemeralRunner",
        name="runner-1",
        body={"runner": {"id": 7, "name": "runner-1", "encodedJITConfig": JIT}, "accessToken": TOKEN},
    )
    decision = Record(
        type=RecordType.DECISION, body={"steps": [{"token": TOKEN, "kept": 1}], "password": "x"}
    )
    kept = await journal.append([effect, result, decision])
    assert kept[0].body == {
        "create": {k: v for k, v in secret_object().items() if k not in ("data", "stringData")},
        "why": "runner needs its JIT config",
    }
    assert kept[1].body == {"runner": {"id": 7, "name": "runner-1"}}
    assert kept[2].body == {"steps": [{"kept": 1}]}


async def test_no_secret_reaches_the_file(open_journal: OpenJournal, path: pathlib.Path) -> None:
    journal = await open_journal()
    await journal.append(
        [
            Record(
                type=RecordType.OBSERVED,
                kind="Secret",
                name="s",
                body={"event": "ADDED", "object": secret_object()},
            ),
            Record(
                type=RecordType.EFFECT_RESULT, body={"encoded_jit_config": JIT, "registration_token": TOKEN}
            ),
        ]
    )
    await journal.snapshot()
    await journal.close()
    stored = b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name))
    for secret in (TOKEN, JIT, KEY):
        assert secret.encode() not in stored


def test_credential_keys() -> None:
    for key in ("token", "accessToken", "registration_token", "encodedJITConfig", "jit_config", "privateKey"):
        assert is_credential(key), key
    for key in ("name", "githubConfigSecret", "tokenCount", "runnerScaleSetId", "data"):
        assert not is_credential(key), key


# Credential keys whose letters stand apart in the text, or whose case folds from beyond ASCII: a search
# of the text for the names alone misses them.
HIDDEN_KEYS = (
    "pass_word",
    "to-ken",
    "Client.Secret",
    "jit config",
    "private__key",
    "ACCESS_TOKEN",
    "to\u212aen",
)


async def test_credential_keys_are_scrubbed_however_they_are_spelt(
    open_journal: OpenJournal, path: pathlib.Path
) -> None:
    journal = await open_journal()
    bodies = [{"steps": [{key: f"hunter2-{i}"}], "kept": 1} for i, key in enumerate(HIDDEN_KEYS)]
    kept = await journal.append([Record(type=RecordType.DECISION, name="ars", body=b) for b in bodies])
    assert [record.body for record in kept] == [{"steps": [{}], "kept": 1}] * len(HIDDEN_KEYS)
    await journal.close()
    stored = b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name))
    assert b"hunter2" not in stored


def test_a_body_that_only_names_secrets_is_kept_as_it_is() -> None:
    # An effect that writes a JIT config Secret's metadata and names the Secret a runner reads its token
    # from: credential words in values, no payload, no credential key. The scrub is skipped (the body is
    # kept as given, not rebuilt).
    body = {
        "type": "CreateJitConfigSecret",
        "target": {"kind": "Secret", "namespace": "arc", "name": "runner-1"},
        "metadata": {"annotations": {"githubConfigSecret": "creds"}, "kind": "Secret"},
        "env": [{"name": "ACTIONS_RUNNER_JITCONFIG", "valueFrom": {"secretKeyRef": {"key": "jitToken"}}}],
        "note": "password: not a key",
    }
    record = Record(type=RecordType.EFFECT, body=body)
    kept, text = redacting.for_journal(record)
    assert kept is body and text == redacting.encode(body)


def test_a_body_with_a_secret_payload_is_scrubbed() -> None:
    for body in (
        {"create": {"kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "eA=="}}},
        {"create": {"kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "x"}}},
        {"call": {"encodedJitConfig": JIT}},
        {"call": {"note": "caf\u00e9", "token": TOKEN}},
    ):
        kept, text = redacting.for_journal(Record(type=RecordType.EFFECT, body=body))
        assert kept == redacting.scrub(body) and kept != body and text == redacting.encode(kept)
        assert not redacting.may_hold_secret(text) or "\\" in text


def test_every_credential_key_ends_as_a_credential_does() -> None:
    # may_hold_secret looks for the endings only: every whole key named must end with one.
    assert all(key.endswith(redacting._CREDENTIAL_SUFFIXES) for key in redacting._CREDENTIAL_KEYS)


KEYS = st.sampled_from(
    ["name", "kind", "data", "stringData", "token", "to-ken", "accessToken", "jit_config", "Password", "note"]
)
VALUES = st.recursive(
    st.none() | st.integers() | st.sampled_from(["Secret", "jitToken", "x", "tok", "en", "é"]) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(KEYS | st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)


@settings(deadline=None, derandomize=True)  # the same examples every run, however busy the machine
@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_a_body_whose_text_shows_no_secret_has_nothing_to_scrub(body: dict[str, object]) -> None:
    text = redacting.encode(body)
    if not redacting.may_hold_secret(text):
        assert redacting.scrub(body) == body


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://user:pa55@github.com/org", "https://***@github.com/org"),
        ("https://ghp_token0123@github.com/org/repo", "https://***@github.com/org/repo"),
        ("http://a@b:p@ss@ghes.example:8443/enterprises/e", "http://***@ghes.example:8443/enterprises/e"),
        ("user:pa55@github.com/org", "***@github.com/org"),
        ("https://github.com/org", "https://github.com/org"),
        ("https://github.com/org?x=a@b", "https://github.com/org?x=a@b"),
        ("", ""),
    ],
)
def test_a_config_url_keeps_its_user_info_masked(url: str, kept: str) -> None:
    assert redacting.without_user_info(url) == kept


async def test_a_password_in_a_config_url_never_reaches_the_journal(journal: Journal) -> None:
    url = "https://someone:Pa55w0rd@github.com/org"
    spec = {
        "githubConfigUrl": url,
        "template": {"spec": {"containers": [{"env": [{"value": "http://u:p@proxy"}]}]}},
    }
    applied = json.dumps({"kind": "AutoscalingRunnerSet", "spec": {"githubConfigUrl": url}}) + "\n"
    ars = {
        "kind": "AutoscalingRunnerSet",
        "metadata": {"name": "arc", "annotations": {redacting.LAST_APPLIED: applied}},
        "spec": spec,
    }
    observed = Record(
        type=RecordType.OBSERVED,
        kind="AutoscalingRunnerSet",
        name="arc",
        body={"event": "ADDED", "object": ars},
    )
    effect = Record(type=RecordType.EFFECT, kind="AutoscalingRunnerSet", name="arc", body={"config_url": url})
    kept_observed, kept_effect = await journal.append([observed, effect])
    text = json.dumps([kept_observed.body, kept_effect.body])
    assert "Pa55w0rd" not in text and "someone" not in text
    kept = kept_observed.body["object"]
    assert kept["spec"]["githubConfigUrl"] == "https://***@github.com/org"  # type: ignore[index]
    annotation = kept["metadata"]["annotations"][redacting.LAST_APPLIED]  # type: ignore[index]
    assert json.loads(annotation)["spec"]["githubConfigUrl"] == "https://***@github.com/org"
    assert annotation.endswith("\n")
    # A URL the controller passes on as written (a runner's environment) is the user's: left alone.
    assert kept["spec"]["template"] == spec["template"]  # type: ignore[index]
    assert kept_effect.body == {"config_url": "https://***@github.com/org"}
