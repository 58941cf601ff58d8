"""``tests/spec_coverage.md`` cannot go stale: every id of spec §4 is listed, every test it names exists,
and each id is covered in the form the spec asks for.

The listing is parsed as text; the tests it names are found by reading their files with ``ast`` (a
module-level function, or a method of a module-level class), so nothing is imported or collected.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LISTING = ROOT / "tests" / "spec_coverage.md"

INVARIANTS = (
    [f"I1.{m}" for m in range(1, 7)]
    + [f"I2.{m}" for m in range(1, 4)]
    + [f"I3.{m}" for m in range(1, 7)]
    + [f"I4.{m}" for m in range(1, 6)]
    + [f"I5.{m}" for m in range(1, 7)]
    + [f"I6.{m}" for m in range(1, 5)]
    + [f"I8.{m}" for m in range(1, 4)]
    + ["I9.1", "I11.1", "I12.1", "I12.2"]
)
SCENARIOS = (
    ["4.1-A", "4.1-B", "4.1-C", "4.2-A", "4.2-B", "4.3-A", "4.3-B", "4.3-C"]
    + [f"4.4-{x}" for x in "ABCDE"]
    + [f"4.5-{x}" for x in "ABC"]
    + [f"4.6-{x}" for x in "ABCDE"]
    + ["4.8", "4.9", "4.10", "4.11", "4.12"]
)

LINE = re.compile(r"^- (?P<id>I\d+\.\d+|4\.\d+(?:-[A-E])?): (?P<rest>.+)$")
NODE = re.compile(r"(?P<path>tests/[\w/]+\.py)::(?P<name>[\w:]+)")
NO_E2E = re.compile(r"^\[no end-to-end form: [^]]+\]")


@cache
def listing() -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Each listed id → (the rest of its line, its node ids as (path, name))."""
    found: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for line in LISTING.read_text(encoding="utf-8").splitlines():
        match = LINE.match(line)
        if match is None:
            assert not line.startswith("- "), f"not an entry: {line!r}"
            continue
        key, rest = match["id"], match["rest"]
        assert key not in found, f"{key} is listed twice"
        found[key] = (rest, [(m["path"], m["name"]) for m in NODE.finditer(rest)])
    return found


@cache
def defined_tests(path: str) -> frozenset[str]:
    """The names ``name`` or ``Class::name`` of the test functions defined in ``path``."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)
    names: set[str] = set()
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, functions):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(f"{node.name}::{item.name}" for item in node.body if isinstance(item, functions))
    return frozenset(name for name in names if name.split("::")[-1].startswith("test_"))


def named_after(name: str, key: str) -> bool:
    """Whether the test function ``name`` carries ``key`` (I3.4 → ``i3_4``, 4.1-A → ``test_4_1_a_``)."""
    function = name.split("::")[-1]
    if key.startswith("I"):
        return re.search(rf"(^test_|_)i{key[1:].replace('.', '_')}_", function) is not None
    return function.startswith("test_" + key.lower().replace(".", "_").replace("-", "_") + "_")


def test_every_id_of_section_4_is_listed_once_and_nothing_else() -> None:
    listed = set(listing())
    assert set(INVARIANTS) <= listed, sorted(set(INVARIANTS) - listed)
    assert set(SCENARIOS) <= listed, sorted(set(SCENARIOS) - listed)
    assert all(listing()[key][1] for key in listed), "an entry names no test"


@pytest.mark.parametrize("key", sorted(listing()))
def test_every_listed_test_exists(key: str) -> None:
    for path, name in listing()[key][1]:
        assert (ROOT / path).is_file(), f"{key}: {path} does not exist"
        assert name in defined_tests(path), f"{key}: {path} has no test {name}"


@pytest.mark.parametrize("key", INVARIANTS)
def test_every_invariant_has_a_unit_test_named_after_it(key: str) -> None:
    _, nodes = listing()[key]
    assert any(path.startswith("tests/unit/") and named_after(name, key) for path, name in nodes), key


@pytest.mark.parametrize("key", SCENARIOS)
def test_every_scenario_has_an_end_to_end_test_named_after_it_or_says_why_not(key: str) -> None:
    rest, nodes = listing()[key]
    if NO_E2E.match(rest):
        assert nodes, f"{key}: a scenario without an end-to-end form still names the tests that pin it"
        return
    e2e = [(path, name) for path, name in nodes if path.startswith("tests/e2e/")]
    assert any(named_after(name, key) for _, name in e2e), f"{key}: no end-to-end test named after it"


@pytest.mark.parametrize(
    ("name", "key", "named"),
    [
        ("test_i3_4_a_failed_removal", "I3.4", True),
        ("test_i3_1_and_i3_2_revisions", "I3.2", True),
        ("test_i3_41_other", "I3.4", False),
        ("test_i1_1_x", "I11.1", False),
        ("test_4_1_a_creation", "4.1-A", True),
        ("test_4_10_predicates", "4.1-A", False),
        ("test_4_10_predicates", "4.10", True),
        ("Class::test_4_9_a_finalizers", "4.9", True),
    ],
)
def test_names_are_matched_by_their_exact_id(name: str, key: str, named: bool) -> None:
    assert named_after(name, key) is named
