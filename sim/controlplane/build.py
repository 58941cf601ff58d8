"""Build the pinned control plane from the Go module proxy: ``python -m sim.controlplane.build``.

    python -m sim.controlplane.build [--cache DIR] [--quiet]

builds ``etcd``, ``kube-apiserver``, ``kube-controller-manager``, ``kube-scheduler`` and ``kubectl`` with
the ordinary ``go`` command from the two wrapper modules beside this file (``gomod/kubernetes``: the
release of ``k8s.io/kubernetes`` with every staging module replaced by its published version;
``gomod/etcd``: ``go.etcd.io/etcd/server/v3``), statically (``CGO_ENABLED=0``), with the version stamped
so ``--version`` and ``/version`` say the release. The binaries go to ``DIR/<version>/bin``
(``binaries()``: ``$ARCSM_CONTROLPLANE_CACHE``, else ``$XDG_CACHE_HOME/arcsm/controlplane``, else
``~/.cache/arcsm/controlplane``), never into the checkout. A build whose wrapper modules and Go version
match the stamp it left is not run again, so a second run takes well under a second. It prints the
``bin`` directory on stdout; a failure is one line on stderr naming what failed (a module the proxy did
not serve, a missing ``go``), exit status 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
KUBERNETES_MODULE = HERE / "gomod" / "kubernetes"
ETCD_MODULE = HERE / "gomod" / "etcd"

KUBERNETES_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
BINARIES = ("etcd", *KUBERNETES_COMMANDS)
# The packages whose version variables a release stamps (hack/lib/version.sh upstream).
VERSION_PACKAGES = ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
STAMP = "build.json"


class BuildError(Exception):
    """The control plane could not be built; the message is one line saying what failed."""


@dataclass(frozen=True)
class Pins:
    """The versions the wrapper modules pin."""

    kubernetes: str  # v1.34.4
    etcd: str  # v3.6.16

    @property
    def key(self) -> str:
        return f"kubernetes-{self.kubernetes}_etcd-{self.etcd}"


def _required(go_mod: Path, module: str) -> str:
    match = re.search(rf"^\s*{re.escape(module)}\s+(v\S+)", go_mod.read_text(), re.MULTILINE)
    if match is None:
        raise BuildError(f"{go_mod} does not require {module}")
    return match.group(1)


def pins() -> Pins:
    return Pins(
        kubernetes=_required(KUBERNETES_MODULE / "go.mod", "k8s.io/kubernetes"),
        etcd=_required(ETCD_MODULE / "go.mod", "go.etcd.io/etcd/server/v3"),
    )


def cache_root() -> Path:
    explicit = os.environ.get("ARCSM_CONTROLPLANE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "arcsm" / "controlplane"


def binaries(cache: Path | None = None) -> Path:
    """The ``bin`` directory the pinned build goes to (whether or not it was built yet)."""
    return (cache if cache is not None else cache_root()) / pins().key / "bin"


def _fingerprint(go: str) -> str:
    digest = hashlib.sha256()
    for module in (KUBERNETES_MODULE, ETCD_MODULE):
        for name in ("go.mod", "go.sum"):
            digest.update((module / name).read_bytes())
    digest.update(_run([go, "version"], cwd=HERE).encode())
    return digest.hexdigest()


def built(bin_dir: Path, fingerprint: str) -> bool:
    stamp = bin_dir / STAMP
    if not stamp.is_file():
        return False
    try:
        recorded = json.loads(stamp.read_text()).get("fingerprint")
    except ValueError:
        return False
    return recorded == fingerprint and all((bin_dir / name).is_file() for name in BINARIES)


def _release_time(module: str, version: str, go: str) -> str:
    """When the release was published, as the proxy says (``buildDate`` of the stamp)."""
    info = json.loads(_run([go, "mod", "download", "-json", f"{module}@{version}"], cwd=KUBERNETES_MODULE))
    return str(info.get("Time") or "1970-01-01T00:00:00Z")


def _ldflags(version: str, date: str) -> str:
    major, minor = version.lstrip("v").split(".")[:2]
    flags = ["-s", "-w"]
    for package in VERSION_PACKAGES:
        flags += [
            f"-X {package}.gitVersion={version}",
            f"-X {package}.gitMajor={major}",
            f"-X {package}.gitMinor={minor}",
            f"-X {package}.gitTreeState=clean",
            f"-X {package}.buildDate={date}",
        ]
    return " ".join(flags)


def _failure(output: str) -> str:
    """The one line that says why ``go`` failed: the module it could not get, else its last error line."""
    for pattern in (
        r"(\S+@\S+): (?:reading|verifying|unknown revision|invalid version)[^\n]*",
        r"module (\S+): [^\n]*(?:not found|404|410)[^\n]*",
    ):
        match = re.search(pattern, output)
        if match is not None:
            return f"the Go module proxy did not serve {match.group(1)}: {match.group(0).strip()}"
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "go exited with an error and said nothing"


def _run(command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(_failure(result.stderr + result.stdout))
    return result.stdout


def build(cache: Path | None = None, *, log: bool = True) -> Path:
    """Build the pinned control plane into the cache (or find it there); return its ``bin`` directory."""
    go = shutil.which("go")
    if go is None:
        raise BuildError("no go command on PATH: install Go 1.26 or newer to build the control plane")
    pinned = pins()
    bin_dir = binaries(cache)
    fingerprint = _fingerprint(go)
    if built(bin_dir, fingerprint):
        return bin_dir
    bin_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly -buildvcs=false"}
    started = time.monotonic()
    date = _release_time("k8s.io/kubernetes", pinned.kubernetes, go)
    # etcd's main package is its module's root, whose last element (v3) go build would name the binary.
    steps = (
        (ETCD_MODULE, ["go.etcd.io/etcd/server/v3"], "-s -w", bin_dir / "etcd"),
        (
            KUBERNETES_MODULE,
            [f"k8s.io/kubernetes/cmd/{name}" for name in KUBERNETES_COMMANDS],
            _ldflags(pinned.kubernetes, date),
            bin_dir,
        ),
    )
    for module, packages, ldflags, output in steps:
        if log:
            names = ", ".join(p.rsplit("/", 1)[-1] for p in packages)
            print(f"building {module.name} ({names}) into {bin_dir}", file=sys.stderr, flush=True)
        target = f"{output}/" if output == bin_dir else str(output)
        _run([go, "build", "-trimpath", "-ldflags", ldflags, "-o", target, *packages], cwd=module, env=env)
    (bin_dir / STAMP).write_text(
        json.dumps(
            {
                "fingerprint": fingerprint,
                "kubernetes": pinned.kubernetes,
                "etcd": pinned.etcd,
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )
    return bin_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sim.controlplane.build",
        description="Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl at the "
        "pinned release into the cache, or find them there; print the bin directory.",
    )
    parser.add_argument("--cache", type=Path, default=None, help="cache directory (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="say nothing but the bin directory")
    args = parser.parse_args(argv)
    try:
        bin_dir = build(args.cache, log=not args.quiet)
    except BuildError as exc:
        print(f"python -m sim.controlplane.build: {exc}", file=sys.stderr)
        return 1
    print(bin_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
