"""The Grafana dashboard (``deploy/charts/arcsm/dashboards/arcsm.json``) reads only metrics that arcsm
serves: every metric name in every panel's PromQL and every variable's query is one that a controller's
``/metrics`` or a listener's serves, so a rename breaks this test rather than a user's panel.

Inputs: the dashboard file; a real run (``scraping.serving``: the composition root with its HTTP API,
leader election on a Lease, and the listeners' metrics on) against the emulated world, scraped over
HTTP at the controller's address and at the listener pod's. Queries are parsed with a PromQL parser
(``promql_parser``), after Grafana's range variables are given a value; a histogram's ``_bucket``,
``_sum`` and ``_count`` series belong to its family, a counter's ``_total`` series to its.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest
from kubernetes_asyncio import client
from prometheus_client.parser import text_string_to_metric_families

from controller.loop.settings import LeaderElectionSettings
from tests.e2e.controller import harness, scraping
from tests.e2e.controller.scraping import labelled, samples, value
from tests.helpers import eventually

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "deploy" / "charts" / "arcsm" / "dashboards" / "arcsm.json"
GRAFANA_RANGES = re.compile(
    r"\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}"
)
LABEL_VALUES = re.compile(r"^\s*label_values\((?P<selector>.+),\s*\w+\s*\)\s*$")


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels(container: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in container.get("panels", []):
        yield panel
        yield from panels(panel)  # a collapsed row holds its panels


def queries(board: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every panel target and every query variable."""
    for panel in panels(board):
        for target in panel.get("targets", []):
            yield f"panel {panel['title']!r} {target['refId']}", target["expr"]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            found = LABEL_VALUES.match(variable["query"]["query"])
            assert found is not None, f"variable {variable['name']}: not label_values(metric, label)"
            yield f"variable {variable['name']!r}", found["selector"]


def metric_names(expr: str) -> set[str]:
    """The metric names the PromQL ``expr`` selects (Grafana's range variables filled in)."""
    tree = promql_parser.parse(GRAFANA_RANGES.sub("5m", expr))
    names: set[str] = set()
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, promql_parser.VectorSelector):
            assert node.name, f"a selector without a metric name in {expr!r}"
            names.add(node.name)
        elif isinstance(node, promql_parser.MatrixSelector):
            stack.append(node.vector_selector)
        elif isinstance(node, promql_parser.Call):
            stack.extend(node.args)
        elif isinstance(node, promql_parser.BinaryExpr):
            stack.extend((node.lhs, node.rhs))
        elif isinstance(node, promql_parser.AggregateExpr):
            stack.extend(n for n in (node.expr, node.param) if n is not None)
        elif isinstance(node, promql_parser.ParenExpr | promql_parser.UnaryExpr | promql_parser.SubqueryExpr):
            stack.append(node.expr)
    return names


SERIES_OF_TYPE = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("_sum", "_count", ""),
}


def series_names(text: str) -> set[str]:
    """The series names an answer of ``/metrics`` declares, whether or not they hold samples yet."""
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in SERIES_OF_TYPE.get(family.type, ("",)))
    return names


def test_the_dashboard_queries_parse_and_use_its_datasource_and_variables() -> None:
    board = dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert (
        variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    )
    assert {"namespace", "name"} <= set(variables)
    found = list(queries(board))
    assert len(found) > 30
    for where, expr in found:
        assert metric_names(expr), f"{where}: selects no metric: {expr}"
    for panel in panels(board):
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel.get("targets"), f"panel {panel['title']!r} has no query"
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"]), panel["title"]
    ids = [panel["id"] for panel in panels(board)]
    assert len(ids) == len(set(ids)), "panel ids repeat"


def test_metric_names_are_found_wherever_a_query_puts_them() -> None:
    expr = (
        'histogram_quantile(0.9, sum by (le) (rate(a_bucket{x=~"$name"}[$__rate_interval]) '
        '* on (instance) group_left () group by (instance) (b{y="1"}))) / -(c offset 5m) or vector(0)'
    )
    assert metric_names(expr) == {"a_bucket", "b", "c"}
    with pytest.raises(ValueError):
        metric_names("sum(rate(x[5m])")


@pytest.mark.both_worlds
async def test_every_metric_the_dashboard_reads_is_served_by_the_controller_or_a_listener(
    tmp_path: Path, world_kind: str
) -> None:
    election = LeaderElectionSettings(identity="solo", namespace=harness.CONTROLLER_NS, retry_period=0.5)
    async with harness.github_world(world_kind) as world, client.ApiClient(world.configuration()) as kube:
        await harness.create_secret(kube)
        settings = dataclasses.replace(scraping.settings_for(world, tmp_path), leader_election=election)
        async with scraping.serving(world, kube, tmp_path, settings) as served:
            await harness.create(kube, harness.scale_set_body(world))

            async def leading_with_a_listener() -> str | None:
                text = await served.controller()
                found = samples(text)
                leading = value(found, "leader_election_master_status") == 1
                return text if leading and labelled(found, "gha_controller_running_listeners") else None

            controller_text = await eventually(
                leading_with_a_listener, timeout=scraping.TIMEOUT, what="leading, with the listener running"
            )
            listener_text = await served.listener()
    served_names = series_names(controller_text) | series_names(listener_text)
    missing = [
        f"{where}: {name}"
        for where, expr in queries(dashboard())
        for name in sorted(metric_names(expr))
        if name not in served_names
    ]
    assert not missing, "the dashboard reads metrics nothing serves:\n" + "\n".join(missing)
