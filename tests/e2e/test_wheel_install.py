"""arcsm installed from its wheel, as a user installs it, run from a folder outside the checkout.

Inputs: the source tree (copied, so nothing built lands in the checkout), pip, a fresh virtualenv.
Outputs: ``pip wheel --no-deps .`` builds a wheel that carries everything a command reads at run time
(the Helm chart with its CRDs, schema and templates, the timeline page); installed with its
dependencies (and the ``helm`` extra) into a fresh virtualenv, ``arcsm demo --once`` plays the seed's
story to the end, ``arcsm sim`` prints its ready line and serves the CRDs, and ``arcsm manifests``
renders the chart, each with the installed package and nothing of the checkout.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"
)


def run(*args: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the wheel, the bin folder of a fresh virtualenv it is installed in)."""
    top = tmp_path_factory.mktemp("wheel")
    source = top / "source"
    shutil.copytree(ROOT, source, ignore=SKIP)
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", top / "dist", ".", cwd=source)
    assert built.returncode == 0, built.stderr
    [wheel] = (top / "dist").glob("arcsm-*.whl")
    venv = top / "venv"
    created = run(sys.executable, "-m", "venv", venv, cwd=top)
    assert created.returncode == 0, created.stderr
    pip = run(venv / "bin" / "python", "-m", "pip", "install", "-q", f"{wheel}[helm]", cwd=top)
    assert pip.returncode == 0, pip.stderr
    yield wheel, venv / "bin"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A working folder that is not the checkout."""
    assert ROOT not in tmp_path.parents
    return tmp_path


def test_the_wheel_carries_the_chart_and_the_page(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    chart = "deploy/charts/arcsm/"
    for required in ("Chart.yaml", "values.yaml", "values.schema.json", ".helmignore", "templates/_pod.tpl"):
        assert chart + required in names, f"the wheel lacks {chart}{required}"
    crds = {n for n in names if n.startswith(chart + "crds/")}
    assert len(crds) == 4
    assert "api/static/timeline.html" in names
    # The stand-in for upstream's scale-set chart, which arcsm demo --in-cluster renders.
    assert {"sim/scalesetchart/Chart.yaml", "sim/scalesetchart/templates/_names.tpl"} <= names


def test_the_installed_package_is_what_runs(installed: tuple[Path, Path], outside: Path) -> None:
    _, bin_ = installed
    where = run(
        bin_ / "python", "-c", "import deploy, sim, controller; print(deploy.chart_path())", cwd=outside
    )
    assert where.returncode == 0, where.stderr
    chart = Path(where.stdout.strip())
    assert bin_.parent in chart.parents and ROOT not in chart.parents


def test_demo_once_plays_the_story_installed(installed: tuple[Path, Path], outside: Path) -> None:
    _, bin_ = installed
    demo = run(bin_ / "arcsm", "demo", "--once", "--http", "127.0.0.1:0", cwd=outside, timeout=300)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "arcsm demo: the story is over" in demo.stdout


async def test_sim_is_ready_and_serves_the_crds_installed(
    installed: tuple[Path, Path], outside: Path
) -> None:
    _, bin_ = installed
    kubeconfig = outside / "sim.kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        str(bin_ / "arcsm"),
        "sim",
        "--kubeconfig",
        str(kubeconfig),
        cwd=outside,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        lines = [(await asyncio.wait_for(proc.stdout.readline(), 60)).decode() for _ in range(3)]
        assert lines[0].startswith("arcsm sim: kubernetes http://127.0.0.1:"), lines
        assert lines[2].strip() == f"arcsm sim: kubeconfig {kubeconfig}", lines
        from kubernetes_asyncio import client, config

        cfg = client.Configuration()
        await config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
        async with client.ApiClient(cfg) as api:
            crds = await client.ApiextensionsV1Api(api).list_custom_resource_definition()
        assert len(crds.items) == 4
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 30) == 0


def test_manifests_renders_the_chart_installed(installed: tuple[Path, Path], outside: Path) -> None:
    _, bin_ = installed
    rendered = run(bin_ / "arcsm", "manifests", "--set", "replicaCount=2", cwd=outside)
    assert rendered.returncode == 0, rendered.stderr
    kinds = [doc["kind"] for doc in yaml.safe_load_all(rendered.stdout) if doc]
    assert kinds.count("CustomResourceDefinition") == 4
    assert "StatefulSet" in kinds and "Deployment" not in kinds
