"""The e2e tests run the ``arcsm`` of the interpreter under test, whatever else PATH holds.

Inputs: a directory put first on PATH holding another executable ``arcsm``. Outputs: ``arcsm_command``
still names the script installed beside ``sys.executable``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import arcsm_command


def test_an_arcsm_earlier_on_path_is_not_the_one_tested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "arcsm"
    other.write_text("#!/bin/sh\necho another arcsm\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{Path(sys.executable).parent}")
    assert arcsm_command() == str(Path(sys.executable).parent / "arcsm")
