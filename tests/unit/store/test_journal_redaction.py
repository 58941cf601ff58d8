"""Secret material never reaches the journal file, whatever the caller forgot to strip."""

from __future__ import annotations

import pathlib

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
