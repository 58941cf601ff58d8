"""``lazyhttpx.install`` in fresh interpreters (this one has httpx loaded): httpx imports without its
command-line client's libraries, its client works, and ``httpx.main`` still reaches the real command."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from controller.commands import lazyhttpx

PROBE = """
import json, sys
from controller.commands import lazyhttpx

installed = lazyhttpx.install()
import httpx

response = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"ok": 1}))).get(
    "http://example.invalid/"
)
loaded = sorted(m for m in ("rich", "pygments", "httpx._main") if m in sys.modules)
print(json.dumps({"installed": installed, "answer": response.json(), "loaded": loaded,
                  "main": httpx.main is lazyhttpx.main}))
"""


def probe(script: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_httpx_loads_without_its_command_line_libraries() -> None:
    found = probe(PROBE)
    assert found["installed"] is True
    assert found["answer"] == {"ok": 1}
    # Only the stand-in is loaded: not rich nor pygments, which the real httpx._main imports.
    assert found["loaded"] == ["httpx._main"]
    assert found["main"] is True


def test_the_command_still_runs_the_real_one() -> None:
    script = (
        "from controller.commands import lazyhttpx\nlazyhttpx.install()\nimport sys, httpx\n"
        "sys.argv = ['httpx', '--help']\n"
        "try:\n    httpx.main()\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "exit 0" in done.stdout
    assert "Usage: httpx" in done.stdout  # the real command's help, which its click definition prints


def test_install_does_nothing_once_httpx_is_loaded() -> None:
    assert httpx.__name__ in sys.modules
    assert lazyhttpx.install() is False
