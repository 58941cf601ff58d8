"""A benchmark's server in a subprocess of its own, so the client's work does not share its event loop.

``serving(script, journal)`` starts ``python SCRIPT --serve JOURNAL`` and waits for the line
``ready {json}`` the script prints once it listens; it yields the process and that JSON, and on exit
closes the process's stdin (the script's signal to stop) and waits for it.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def serving(script: str, journal: Path) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    server = subprocess.Popen(
        [sys.executable, script, "--serve", str(journal)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        ready = next((line for line in server.stdout if line.startswith("ready ")), None)
        if ready is None:
            raise SystemExit("the API server did not start; its error is above")
        yield server, json.loads(ready.split(" ", 1)[1])
    finally:
        server.stdin.close()
        server.wait(timeout=30)
