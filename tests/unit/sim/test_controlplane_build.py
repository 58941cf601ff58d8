"""What ``python -m sim.controlplane.build`` says when it cannot build, and what it pins.

Inputs: the wrapper modules in the repository, and ``go``'s own words for the failures seen from the
module proxy. Outputs: the one line a user reads. The build itself is exercised for real in
``tests/e2e/controlplane``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.controlplane import build


def test_the_wrappers_pin_one_kubernetes_release_and_its_staging_modules_at_the_same_patch() -> None:
    pins = build.pins()
    assert pins.kubernetes.startswith("v1.34.")
    go_mod = (build.KUBERNETES_MODULE / "go.mod").read_text()
    staging = [line.split() for line in go_mod.splitlines() if "=> k8s.io/" in line]
    assert len(staging) == 31
    assert {fields[-1] for fields in staging} == {"v0." + pins.kubernetes.removeprefix("v1.")}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "go: k8s.io/api@v0.34.99: reading https://proxy/k8s.io/api/@v/v0.34.99.info: 404 Not Found\n",
            "the Go module proxy did not serve k8s.io/api@v0.34.99",
        ),
        (
            "go: k8s.io/cri-streaming@v0.0.0: unknown revision v0.0.0\n",
            "the Go module proxy did not serve k8s.io/cri-streaming@v0.0.0",
        ),
        ("# some/package\nlink: out of memory\n", "link: out of memory"),
        ("", "go exited with an error and said nothing"),
    ],
)
def test_a_failed_build_is_one_line_naming_what_failed(output: str, expected: str) -> None:
    message = build._failure(output)
    assert "\n" not in message
    assert message.startswith(expected)


def test_without_go_the_build_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(build.BuildError, match=r"^no go command on PATH"):
        build.build(tmp_path / "cache", log=False)


def test_the_cache_is_outside_the_checkout_and_keyed_by_the_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCSM_CONTROLPLANE_CACHE", "/var/cache/cp")
    pins = build.pins()
    assert (
        build.binaries() == Path("/var/cache/cp") / f"kubernetes-{pins.kubernetes}_etcd-{pins.etcd}" / "bin"
    )
