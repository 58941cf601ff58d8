"""The lifecycle diagrams (``statemachines.diagrams``) come from the transition tables: every row and
source phase is an edge with its trigger and guards' names, deletion is a final state ``(deleted)`` as in
``arcsm history`` (which prints it so: ``tests/e2e/api/test_history_command.py``), the docs page is what
the tables render now, and ``arcsm graph`` prints them, with one-line errors for a bad kind or format."""

from __future__ import annotations

import re
from pathlib import Path

import pydot
import pytest
from typer.testing import CliRunner

from controller.commands.cli import app
from statemachines import autoscalingrunnersets, diagrams

PAGE = Path(__file__).resolve().parents[3] / "docs" / "lifecycles.md"
EDGE = re.compile(r"^    (\S+) --> (\S+) : (.+)$")


def test_the_docs_page_is_what_the_tables_render() -> None:
    assert PAGE.read_text() == diagrams.markdown(), (
        "docs/lifecycles.md differs from the tables: run `arcsm graph --format markdown > docs/lifecycles.md`"
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot's parser on a newer pyparsing
@pytest.mark.parametrize("kind", list(diagrams.LIFECYCLES))
def test_every_row_and_source_is_an_edge_with_its_trigger_and_guards(kind: str) -> None:
    lifecycle = diagrams.LIFECYCLES[kind]
    drawn = [m.groups() for line in diagrams.mermaid(kind).splitlines() if (m := EDGE.match(line))]
    expected = []
    for row in lifecycle.machine.rows:
        sources = lifecycle.states if row.source == ("*",) else row.source
        guards = [g.__name__ for g in row.guards]
        dest = "deleted" if row.trigger == "deleted" else str(row.dest) or "none"
        for source in sources:
            text = str(row.trigger) + (f" [{', '.join(guards)}]" if guards else "")
            expected.append((str(source) or "none", dest, text))
    if not any(row.trigger == "deleted" for row in lifecycle.machine.rows):
        expected += [(state or "none", "deleted", "deleted") for state in lifecycle.states]
    assert [(s, d, re.sub(r"^A\d+ ", "", t)) for s, d, t in drawn] == expected
    (graph,) = pydot.graph_from_dot_data(diagrams.dot(kind)) or [None]
    assert graph is not None, "the dot text parses"
    edges = [(e.get_source(), e.get_destination(), e.get("label")) for e in graph.get_edges()]
    # pydot lists edges grouped by their ends: compare them as a multiset.
    assert sorted((src, dst, str(label).strip('"')) for src, dst, label in edges) == sorted(
        [("start", "none", "None"), *drawn]
    ), "the dot edges are the Mermaid ones, and the start"
    labels = {
        n.get_name(): n.get("label") for n in graph.get_nodes() if n.get_name() not in ("node", "start")
    }
    assert labels == {
        **{(p or "none"): f'"{p or diagrams.NONE}"' for p in lifecycle.states},
        "deleted": '"(deleted)"',
    }
    (end,) = graph.get_node("deleted")
    assert end.get("peripheries") == "2", "the end is drawn as a final state"


def test_the_scale_set_rows_carry_their_ids() -> None:
    text = diagrams.mermaid("AutoscalingRunnerSet")
    ids = {row_id for row_id, _ in autoscalingrunnersets.TABLE}
    assert ids == {f"A{i}" for i in range(1, 9)}
    for row_id in ids:
        assert f": {row_id} " in text
    assert "Outdated --> Outdated : A7 parked [generation_applied]" in text
    assert "none --> Pending : A1 generation_advanced [generation_ahead]" in text
    assert "Running --> deleted : A8 deleted [deletion_requested]" in text
    assert "Running --> Running : A8" not in text, "A8 keeps the phase in the machine, not in the drawing"


@pytest.mark.parametrize("kind", list(diagrams.LIFECYCLES))
def test_every_phase_can_end_in_deleted_and_nothing_leaves_it(kind: str) -> None:
    lifecycle = diagrams.LIFECYCLES[kind]
    assert "deleted" not in lifecycle.states, "the end's node is no phase's"
    text = diagrams.mermaid(kind)
    assert '    state "(deleted)" as deleted' in text.splitlines()
    drawn = [m.groups() for line in text.splitlines() if (m := EDGE.match(line))]
    assert {source for source, dest, _ in drawn if dest == "deleted"} == {
        p or "none" for p in lifecycle.states
    }
    assert all(
        label.split(" [")[0].split(" ")[-1] == "deleted" for _, dest, label in drawn if dest == "deleted"
    )
    assert not [edge for edge in drawn if edge[0] == "deleted"]
    assert text.splitlines()[-1] == "    deleted --> [*]", "a final state"


def graph(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["graph", *args])
    return result.exit_code, result.stdout, result.stderr


def test_graph_prints_one_kind_or_all_in_mermaid_or_dot() -> None:
    code, out, _ = graph("ars")
    assert code == 0 and out == diagrams.mermaid("AutoscalingRunnerSet")
    code, out, _ = graph("ephemeralrunners", "--format", "dot")
    assert code == 0 and out == diagrams.dot("EphemeralRunner")
    code, out, _ = graph()
    assert code == 0 and out.count("stateDiagram-v2") == 4
    assert all(f"%% {kind}" in out for kind in diagrams.LIFECYCLES)
    code, out, _ = graph("--format", "markdown")
    assert code == 0 and out == diagrams.markdown()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("runners",), "arcsm graph: 'runners' is not one of AutoscalingRunnerSet"),
        (("ars", "--format", "svg"), "arcsm graph: --format 'svg' is not one of mermaid, dot, markdown"),
        (("ars", "--format", "markdown"), "arcsm graph: --format markdown prints the page of all kinds"),
    ],
)
def test_a_bad_kind_or_format_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = graph(*args)
    assert code == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1
