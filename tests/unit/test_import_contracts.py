"""The import-linter contracts of ``pyproject.toml`` hold the rules they state: on the project's real import
graph, each one is kept, and adding one import that breaks its rule breaks it (so a contract cannot pass
because it names nothing), while an import its rule allows keeps it. The controller's layers are
exhaustive: a module of the controller in none of its subpackages breaks them too.

Inputs: the project's own packages, read by grimp as ``lint-imports`` reads them, and the contracts as
``pyproject.toml`` declares them. Nothing is mocked; the only change to the graph is the import a case
adds (or the module the exhaustiveness case adds) to a copy of it.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import configuration
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract
from importlinter.contracts.protected import ProtectedContract
from importlinter.domain.contract import Contract

configuration.configure()  # what the lint-imports command sets up before it checks (its timer)

ROOT = Path(__file__).resolve().parents[2]
CONFIG: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
TYPES: dict[str, type[Contract]] = {
    "forbidden": ForbiddenContract,
    "layers": LayersContract,
    "protected": ProtectedContract,
}

SIM_ONLY = "Only the emulator commands and the demo import the emulator"
CONTROLLER_LAYERS = (
    "The controller's subpackages are layers: emulated, commands, installation, loop, executor"
)
WATCHERS = (
    "Watchers import only store, the table of ARC kinds, the JSON helpers and the Kubernetes error model"
)
API_READS = "The HTTP API never loads the journal's writer"

# (contract, importer, imported, whether the contract still holds with that import added)
CASES = [
    (SIM_ONLY, "controller.loop.running", "sim.world", False),
    (SIM_ONLY, "controller.commands.cli", "sim.github.fake", False),
    (SIM_ONLY, "api.app", "sim.world", False),
    (SIM_ONLY, "watchers.watching", "sim.world", False),
    (SIM_ONLY, "controller.emulated.demo", "sim.scalesetchart", True),
    (SIM_ONLY, "controller.emulated.simulating", "sim.processes", True),
    (SIM_ONLY, "controller.commands.run_command", "sim.world", False),
    (SIM_ONLY, "controller.installation.manifests", "sim.scalesetchart", False),
    (CONTROLLER_LAYERS, "controller.executor.executing", "controller.loop.reconciling", False),
    (CONTROLLER_LAYERS, "controller.loop.running", "controller.commands.logformat", False),
    (CONTROLLER_LAYERS, "controller.loop.declared", "controller.installation.permissions", False),
    (CONTROLLER_LAYERS, "controller.commands.cli", "controller.emulated.demo", False),
    (CONTROLLER_LAYERS, "controller.executor.outbox", "controller.executor.results", True),
    (CONTROLLER_LAYERS, "controller.installation.permissions", "controller.loop.declared", True),
    (CONTROLLER_LAYERS, "controller.emulated.simulating", "controller.loop.running", True),
    (WATCHERS, "watchers.watching", "statemachines.effects", False),
    (WATCHERS, "watchers.listing", "statemachines", False),
    (WATCHERS, "watchers.supervising", "controller.loop.settings", False),
    (WATCHERS, "watchers.streams", "api.models", False),
    (WATCHERS, "watchers.watching", "actions.errors", False),
    (WATCHERS, "watchers.slimming", "statemachines.kinds", True),
    (WATCHERS, "watchers.watching", "store.journal", True),
    (WATCHERS, "watchers.watching", "statemachines.jsonvalues", True),
    (WATCHERS, "watchers.watching", "kube.failures", True),
    (API_READS, "api.health", "store.journal", False),
    (API_READS, "api.phases", "store.appending", False),
    (API_READS, "api.health", "store.positions", True),
]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        *CONFIG["root_packages"],
        include_external_packages=CONFIG.get("include_external_packages", False),
        cache_dir=None,
    )


def contract(name: str) -> Contract:
    [declared] = [c for c in CONFIG["contracts"] if c["name"] == name]
    # As lint-imports reads pyproject.toml: its fields parse booleans from their text.
    options = {k: str(v) if isinstance(v, bool) else v for k, v in declared.items()}
    session = {k: v for k, v in CONFIG.items() if k != "contracts"}
    return TYPES[options["type"]](name, session, options)


@pytest.mark.parametrize("name", [c["name"] for c in CONFIG["contracts"]])
def test_every_contract_is_kept_by_the_project(graph: grimp.ImportGraph, name: str) -> None:
    assert contract(name).check(copy.deepcopy(graph), verbose=False).kept


@pytest.mark.parametrize(("name", "importer", "imported", "kept"), CASES)
def test_one_import_against_the_rule_breaks_its_contract(
    graph: grimp.ImportGraph, name: str, importer: str, imported: str, kept: bool
) -> None:
    changed = copy.deepcopy(graph)
    assert importer in changed.modules and imported in changed.modules, "a case names a module that is gone"
    changed.add_import(importer=importer, imported=imported)
    assert contract(name).check(changed, verbose=False).kept is kept


def test_a_controller_module_outside_its_subpackages_breaks_the_layers(graph: grimp.ImportGraph) -> None:
    changed = copy.deepcopy(graph)
    changed.add_module("controller.unplaced")
    assert not contract(CONTROLLER_LAYERS).check(changed, verbose=False).kept
