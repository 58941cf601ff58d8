"""The User-Agent: §6.2 step 4's JSON, identifying arcsm, on every request."""

from __future__ import annotations

import json

from actions.useragent import SystemInfo, arcsm_version, user_agent
from tests.unit.actions.servicestub import MakeClient, ServiceStub, reply

KEYS = [
    "system",
    "version",
    "commit_sha",
    "scale_set_id",
    "subsystem",
    "build_version",
    "build_commit_sha",
    "kind",
]


def test_shape_and_key_order() -> None:
    text = user_agent(SystemInfo(subsystem="listener", scale_set_id=7, commit_sha="abc123"))
    assert " " not in text  # compact, as Go's encoder writes it
    data = json.loads(text)
    assert list(data) == KEYS
    assert data == {
        "system": "arcsm",
        "version": arcsm_version(),
        "commit_sha": "abc123",
        "scale_set_id": 7,
        "subsystem": "listener",
        "build_version": arcsm_version(),
        "build_commit_sha": "abc123",
        "kind": "scaleset",
    }


async def test_every_request_carries_it_and_the_scale_set_id_follows(
    stub: ServiceStub, make_client: MakeClient
) -> None:
    stub.route("DELETE", r"/runnerscalesets/\d+$", reply(204))
    client = make_client(system_info=SystemInfo(subsystem="controller"))
    await client.delete_runner_scale_set(3)
    client.set_scale_set_id(3)
    await client.delete_runner_scale_set(3)
    agents = [json.loads(r.headers["User-Agent"]) for r in stub.requests]
    assert all(a["system"] == "arcsm" and a["subsystem"] == "controller" for a in agents)
    assert [a["scale_set_id"] for a in agents] == [0, 0, 0, 3]  # registration token, admin, 2 deletes
