"""Reading what a served CRD schema keeps: arcsm's CRDs keep every field arcsm writes, upstream's (with the
three new fields) keep all but ``status.conditions``."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kubernetes_asyncio import client

from controller.loop import servedschemas
from sim.world import load_crds
from tests.upstreamcrds import without_conditions


def crds() -> dict[str, dict[str, Any]]:
    return {crd["spec"]["names"]["kind"]: crd for crd in load_crds()}


@pytest.mark.parametrize("kind", servedschemas.DECIDED)
def test_arcsms_crds_keep_conditions_and_every_required_field(kind: str) -> None:
    schema = servedschemas.served_schema(crds()[kind])
    assert schema is not None
    assert servedschemas.keeps(schema, servedschemas.CONDITIONS)
    for path in servedschemas.REQUIRED.get(kind, ()):
        assert servedschemas.keeps(schema, path), path


@pytest.mark.parametrize("kind", servedschemas.DECIDED)
def test_upstreams_crds_prune_conditions_and_keep_the_three_new_fields(kind: str) -> None:
    schema = servedschemas.served_schema(without_conditions(crds()[kind]))
    assert schema is not None
    assert not servedschemas.keeps(schema, servedschemas.CONDITIONS)
    for path in servedschemas.REQUIRED.get(kind, ()):
        assert servedschemas.keeps(schema, path), path


def test_a_node_that_preserves_unknown_fields_keeps_what_it_does_not_declare() -> None:
    schema = {
        "type": "object",
        "properties": {"status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    assert servedschemas.keeps(schema, servedschemas.CONDITIONS)
    assert not servedschemas.keeps({"type": "object", "properties": {}}, servedschemas.CONDITIONS)


def test_a_version_not_served_has_no_schema() -> None:
    crd = crds()["EphemeralRunner"]
    assert servedschemas.served_schema(crd, "v1beta9") is None
    unserved = {"spec": {"versions": [{**crd["spec"]["versions"][0], "served": False}]}}
    assert servedschemas.served_schema(unserved) is None


async def test_an_api_server_that_is_not_there_is_said_once_and_changes_nothing(
    caplog: pytest.LogCaptureFixture, unused_tcp_port: int
) -> None:
    caplog.set_level(logging.WARNING, "arcsm.controller")
    configuration = client.Configuration(host=f"http://127.0.0.1:{unused_tcp_port}")
    async with client.ApiClient(configuration) as api:
        assert await servedschemas.conditions_pruned(api) == ()
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith("cannot reach the API server"), said
