"""The four machines' lifecycles drawn from their transition tables, never by hand.

``mermaid(kind)`` and ``dot(kind)`` render one machine's table (``tables.PhaseMachine``): its states (the
phase strings; ``(none)`` for the empty phase, the initial state), and one edge per row and source phase,
labelled with the row's id where its table names one (the AutoscalingRunnerSet's A1–A8), its trigger and
its guards' names in brackets, in table order (where rows share a trigger and a source, the first whose
guards pass wins). A row from any phase (``*``) has an edge from each. ``markdown()`` is the lifecycle
page, every machine's Mermaid diagram under its kind; the docs carry it (``docs/lifecycles.md``) and a
test fails when the page differs from what the tables render now. ``arcsm graph`` prints them.

Deletion is drawn as the phase history tells it (``arcsm history``: ``Running → (deleted)``): a final state
``(deleted)`` of its own. A row whose trigger is ``deleted`` (the AutoscalingRunnerSet's A8, which keeps
the phase in the machine while its finalizer goes) is an edge to it rather than a loop on its phase; a
machine whose table has no such row (its object's end is the finalizer released by a pass while it is
terminating, or the watch reporting it gone, from whatever phase it is in) gets an edge ``deleted`` to it
from every phase, after its rows.

Pure text from data: nothing here reads a clock or a file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from statemachines import (
    autoscalinglisteners,
    autoscalingrunnersets,
    ephemeralrunners,
    ephemeralrunnersets,
    kinds,
    tables,
)

NONE = "(none)"
# The end of an object's history: its trigger, the node it goes to and that node's label (as `arcsm
# history` prints the end: "Running → (deleted)").
DELETED = "deleted"
END = "deleted"
ENDED = "(deleted)"
INTRO = """Each machine's transition table as a state diagram: one edge per row and source phase, labelled
with the row's trigger (and its id, where the table names one) and its guards' names in brackets. Where
rows share a trigger and a source, the first whose guards pass wins, in the order listed here. Every
object ends in `(deleted)`, as `arcsm history` ends its history: the AutoscalingRunnerSet by its row A8
(in the machine the phase stays as it was while the finalizer goes), the other kinds, whose tables have no
such row, from any phase, when arcsm releases their finalizer or the watch reports them gone. Generated
from the tables by `arcsm graph --format markdown`; a test fails when this page differs from them.
"""
FORMATS = ("mermaid", "dot")


@dataclass(frozen=True)
class Edge:
    source: str
    dest: str
    label: str  # the row's id (if any) and trigger
    guards: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.label + (f" [{', '.join(self.guards)}]" if self.guards else "")


@dataclass(frozen=True)
class Lifecycle:
    kind: str
    machine: tables.PhaseMachine
    ids: tuple[str, ...] = ()  # the rows' ids, in table order, where the table names them

    @property
    def states(self) -> tuple[str, ...]:
        return tuple(str(phase) for phase in self.machine.phases)

    def edges(self) -> Iterator[Edge]:
        """One edge per row and source phase (a ``deleted`` row's to ``END``), then, for a table without
        such a row, one ``deleted`` edge from every phase to ``END``."""
        for i, row in enumerate(self.machine.rows):
            label = f"{self.ids[i]} {row.trigger}" if self.ids else str(row.trigger)
            guards = tuple(getattr(g, "__name__", "guard") for g in row.guards)
            sources = self.states if row.source == ("*",) else tuple(str(s) for s in row.source)
            dest = END if row.trigger == DELETED else str(row.dest)
            for source in sources:
                yield Edge(source, dest, label, guards)
        if not any(row.trigger == DELETED for row in self.machine.rows):
            for state in self.states:
                yield Edge(state, END, DELETED, ())


LIFECYCLES = {
    lifecycle.kind: lifecycle
    for lifecycle in (
        Lifecycle(
            kinds.AUTOSCALING_RUNNER_SET.kind,
            autoscalingrunnersets.MACHINE,
            tuple(row_id for row_id, _ in autoscalingrunnersets.TABLE),
        ),
        Lifecycle(kinds.EPHEMERAL_RUNNER_SET.kind, ephemeralrunnersets.MACHINE),
        Lifecycle(kinds.EPHEMERAL_RUNNER.kind, ephemeralrunners.MACHINE),
        Lifecycle(kinds.AUTOSCALING_LISTENER.kind, autoscalinglisteners.MACHINE),
    )
}


def _node(state: str) -> str:
    return state or "none"


def mermaid(kind: str) -> str:
    """The machine of ``kind`` as a Mermaid state diagram, ending in ``(deleted)``."""
    lifecycle = LIFECYCLES[kind]
    lines = ["stateDiagram-v2"]
    lines += [f'    state "{state or NONE}" as {_node(state)}' for state in lifecycle.states]
    lines.append(f'    state "{ENDED}" as {END}')
    lines.append(f"    [*] --> {_node(lifecycle.states[0])}")
    lines += [f"    {_node(e.source)} --> {_node(e.dest)} : {e.text}" for e in lifecycle.edges()]
    lines.append(f"    {END} --> [*]")
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot(kind: str) -> str:
    """The machine of ``kind`` as a Graphviz digraph, ending in ``(deleted)`` (a final state: drawn
    doubled)."""
    lifecycle = LIFECYCLES[kind]
    lines = [f"digraph {_quoted(kind)} {{", "    rankdir=LR;", "    node [shape=box, style=rounded];"]
    lines.append('    start [shape=point, label=""];')
    lines += [f"    {_node(state)} [label={_quoted(state or NONE)}];" for state in lifecycle.states]
    lines.append(f"    {END} [label={_quoted(ENDED)}, peripheries=2];")
    lines.append(f"    start -> {_node(lifecycle.states[0])};")
    lines += [
        f"    {_node(e.source)} -> {_node(e.dest)} [label={_quoted(e.text)}];" for e in lifecycle.edges()
    ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(kind: str, fmt: str) -> str:
    """``mermaid(kind)`` or ``dot(kind)`` as ``fmt`` names it (one of ``FORMATS``)."""
    return mermaid(kind) if fmt == "mermaid" else dot(kind)


def markdown() -> str:
    """The lifecycle page: every machine's Mermaid diagram, under its kind, in the kinds' order."""
    parts = ["# Lifecycles\n", INTRO]
    for kind in LIFECYCLES:
        parts.append(f"## {kind}\n\n```mermaid\n{mermaid(kind)}```\n")
    return "\n".join(parts)
