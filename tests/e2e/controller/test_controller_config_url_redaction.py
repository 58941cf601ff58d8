"""A password in ``githubConfigUrl`` never reaches the journal, its HTTP API, or a replay.

A scale set whose config URL carries user info (``https://user:password@host/org``), applied as kubectl
applies it (so the last-applied annotation carries the URL too), is refused (``ConfigurationValid``
False), as the Actions client refuses a URL with credentials. Shown: the journal on disk (its database
and write-ahead log) and ``/api/v1/journal`` hold neither the password nor the user name, as Secret data
is kept out; the observed spec keeps a URL with its user info masked, so the refusal is decided from the
journal alone; and ``arcsm replay --check`` of the journal's export decides every decision alike.

The real composition root with its HTTP API, the real journal on disk, the emulated cluster (or the real
control plane) and the fake GitHub; every wait is on a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from kubernetes_asyncio import client

from statemachines.kinds import ARS
from store.records import RecordType
from tests.e2e.controller import harness
from tests.helpers import ARCSM, eventually

pytestmark = pytest.mark.both_worlds

TIMEOUT = 60.0
USER = "someone-in-the-url"
PASSWORD = "Pa55w0rd-in-the-url"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


async def journal_pages(http: httpx.AsyncClient) -> list[str]:
    texts, after = [], 0
    while after is not None:
        answer = await http.get("/api/v1/journal", params={"after": after, "limit": 1000})
        answer.raise_for_status()
        texts.append(answer.text)
        after = answer.json()["next"]
    return texts


async def arcsm(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        ARCSM, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_a_password_in_the_config_url_is_kept_out_of_the_journal(
    tmp_path: Path, world_kind: str
) -> None:
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        scheme, rest = world.github_url.split("://", 1)
        body = harness.scale_set_body(world, githubConfigUrl=f"{scheme}://{USER}:{PASSWORD}@{rest}/org")
        body["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(body)}
        async with harness.serving(world, tmp_path, TIMEOUT) as (settings, url):
            await harness.create(kube, body)

            async def refused() -> dict[str, object] | None:
                found = await harness.get(kube, ARS, "arc")
                conditions = ((found or {}).get("status") or {}).get("conditions") or []
                return next(
                    (c for c in conditions if c["type"] == "ConfigurationValid" and c["status"] == "False"),
                    None,
                )

            condition = await eventually(refused, timeout=TIMEOUT, what="the scale set refused")
            assert PASSWORD not in json.dumps(condition), condition
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                served = "".join(await journal_pages(http))
            assert USER in json.dumps(body) and PASSWORD in json.dumps(body)  # what was applied
            assert PASSWORD not in served and USER not in served
            observed = [
                r
                for r in await harness.journaled(settings.journal_path, {RecordType.OBSERVED})
                if r.kind == ARS and r.name == "arc"
            ]
            assert observed
            spec_url = observed[-1].body["object"]["spec"]["githubConfigUrl"]  # type: ignore[index]
            assert spec_url == f"{scheme}://***@{rest}/org", spec_url
            annotation = observed[-1].body["object"]["metadata"]["annotations"][LAST_APPLIED]  # type: ignore[index]
            assert json.loads(annotation)["spec"]["githubConfigUrl"] == spec_url
        for file in (settings.journal_path, *settings.journal_path.parent.glob("journal.db-*")):
            assert PASSWORD.encode() not in file.read_bytes(), file
        export = tmp_path / "export.jsonl"
        code, out, err = await arcsm("journal", "export", "--journal", str(settings.journal_path))
        assert code == 0, err
        export.write_text(out)
        assert PASSWORD not in out
        code, out, err = await arcsm("replay", str(export), "--check")
        assert code == 0, out + err
