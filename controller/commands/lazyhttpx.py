"""httpx without its command-line client loaded: ``install()`` before the first ``import httpx``.

``httpx/__init__.py`` imports ``httpx._main`` (the ``httpx`` command) whenever that module's
dependencies are installed, and in arcsm's environment they are (typer brings rich, uvicorn brings
click): rich's console and pygments' lexer index, about 3.4 MB of a process that never runs the
command. ``install()`` puts a stand-in for ``httpx._main`` in ``sys.modules`` whose ``main`` loads the
real module from its file on first call and runs it, so ``httpx.main`` still works; nothing of httpx's
client code is replaced.

Rules: a process that wants it calls ``install()`` before anything imports httpx (``arcsm run`` and
``arcsm listener`` do, with ``lazykube.install()``); once httpx is loaded it does nothing.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

PACKAGE = "httpx"
COMMAND = f"{PACKAGE}._main"


def _real() -> types.ModuleType:
    """The real ``httpx._main``, loaded from its file (the stand-in stays in ``sys.modules``)."""
    package = sys.modules[PACKAGE]
    spec = importlib.machinery.PathFinder.find_spec(COMMAND, list(package.__path__))
    if spec is None or spec.loader is None:
        raise ImportError(f"{COMMAND} is not installed", name=COMMAND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(*args: Any, **kwargs: Any) -> Any:
    """The ``httpx`` command, loaded now."""
    return _real().main(*args, **kwargs)


def install() -> bool:
    """Put the stand-in in ``sys.modules``; False (and nothing done) when httpx is already imported or
    not installed."""
    if PACKAGE in sys.modules or COMMAND in sys.modules or importlib.util.find_spec(PACKAGE) is None:
        return False
    stand_in = types.ModuleType(COMMAND, "httpx's command line, loaded when first run")
    stand_in.main = main  # type: ignore[attr-defined]
    sys.modules[COMMAND] = stand_in
    return True
