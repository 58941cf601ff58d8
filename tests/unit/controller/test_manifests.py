"""The installation manifests, their committed rendering, and the container image definition.

Inputs: ``controller.manifests``, the files under ``deploy/``, ``arcsm run``'s options, pyproject.toml.
Outputs: the committed ``deploy/arcsm.yaml`` and ``deploy/kustomization.yaml`` are what the renderer
writes today; ``arcsm manifests`` prints the rendering and refuses bad input in one line; every flag the
StatefulSet passes exists on ``arcsm run``; the StatefulSet keeps one ReadWriteOnce journal volume per
replica, probes ``/healthz`` and ``/readyz`` on the HTTP port and runs locked down; kubectl's client-side
apply of each CRD stays under the API server's 256 KiB annotation limit; the Dockerfile is multi-stage,
runs as the same non-root user as the pod, keeps the journal where the volume is mounted, and its
entrypoint is the installed ``arcsm`` command.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.main import get_command
from typer.testing import CliRunner

from controller import cli, crdgen, manifests

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
ANNOTATION_LIMIT = 262144
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def test_the_committed_rendering_is_current() -> None:
    for filename, text in manifests.render_files().items():
        committed = (DEPLOY / filename).read_text(encoding="utf-8")
        assert committed == text, f"deploy/{filename} is stale: run `python -m controller.manifests`"


def test_the_kustomization_covers_the_crds_and_the_installation() -> None:
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    crd_files = sorted(
        path.name for path in (DEPLOY / "crds").glob("*.yaml") if path.name != "kustomization.yaml"
    )
    assert len(crd_files) == len(crdgen.resources.KINDS)
    assert kustomization["resources"] == [f"crds/{name}" for name in crd_files] + ["arcsm.yaml"]


def load_all(text: str) -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(text, Loader=loader) if d is not None]


def by_kind(documents: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for doc in documents:
        out.setdefault(doc["kind"], []).append(doc)
    return out


def test_the_command_prints_the_whole_installation() -> None:
    result = CliRunner().invoke(
        cli.app, ["manifests", "--namespace", "ci", "--image", "r.example/arcsm:1", "--replicas", "3"]
    )
    assert result.exit_code == 0, result.output
    documents = load_all(result.stdout)
    settings = manifests.ManifestSettings(namespace="ci", image="r.example/arcsm:1", replicas=3)
    assert documents == manifests.render(settings)
    kinds = by_kind(documents)
    assert len(kinds["CustomResourceDefinition"]) == len(crdgen.resources.KINDS)
    assert [d["metadata"]["name"] for d in kinds["Namespace"]] == ["ci"]
    assert kinds["StatefulSet"][0]["spec"]["replicas"] == 3
    # CRDs and the Namespace come first: `kubectl apply -f` creates in the order it reads.
    assert [d["kind"] for d in documents[:5]] == ["CustomResourceDefinition"] * 4 + ["Namespace"]


def test_watch_namespaces_become_run_flags_and_roles() -> None:
    result = CliRunner().invoke(
        cli.app, ["manifests", "--watch-namespace", "team-b", "--watch-namespace", "team-a"]
    )
    assert result.exit_code == 0, result.output
    kinds = by_kind(load_all(result.stdout))
    assert "ClusterRole" not in kinds and "ClusterRoleBinding" not in kinds
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]) for r in kinds["Role"]}
    assert roles == {
        ("arc-systems", "arcsm"),
        ("team-a", "arcsm"),
        ("team-b", "arcsm"),
        ("arc-systems", "arcsm-leader-election"),
    }
    args = kinds["StatefulSet"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert " ".join(args).endswith("--namespace team-b --namespace team-a")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--replicas", "0"], "replicas must be at least 1"),
        (["--namespace", "Arc_Systems"], "'Arc_Systems' is not a namespace name"),
        (["--watch-namespace", "-x"], "'-x' is not a namespace name"),
        (["--image", "a b"], "'a b' is not an image reference"),
    ],
)
def test_bad_input_is_one_line(argv: list[str], message: str) -> None:
    result = CliRunner().invoke(cli.app, ["manifests", *argv])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"arcsm manifests: {message}")


def run_options() -> set[str]:
    run = get_command(cli.app).commands["run"]  # type: ignore[attr-defined]
    return {opt for param in run.params for opt in param.opts}


def test_every_flag_the_stateful_set_passes_exists_on_arcsm_run() -> None:
    args = manifests.run_args(manifests.ManifestSettings(watch_namespaces=("team-a",)))
    assert args[0] == "run"
    flags = {a for a in args if a.startswith("--")}
    assert flags == {"--journal", "--controller-namespace", "--listener-image", "--http", "--namespace"}
    assert flags <= run_options(), f"arcsm run has no {sorted(flags - run_options())}"


def container(settings: manifests.ManifestSettings) -> dict[str, Any]:
    sts = manifests.stateful_set(settings)
    [only] = sts["spec"]["template"]["spec"]["containers"]
    return only


def test_the_stateful_set_keeps_a_local_journal_per_replica_and_runs_locked_down() -> None:
    settings = manifests.ManifestSettings()
    sts = manifests.stateful_set(settings)
    [claim] = sts["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    c = container(settings)
    assert {"name": claim["metadata"]["name"], "mountPath": manifests.JOURNAL_DIR} in c["volumeMounts"]
    assert c["args"][c["args"].index("--journal") + 1].startswith(manifests.JOURNAL_DIR + "/")
    assert c["args"][c["args"].index("--http") + 1] == "0.0.0.0:8080"
    assert c["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert c["resources"]["requests"] and c["resources"]["limits"]
    security = c["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    pod = sts["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == manifests.NAME
    assert pod["securityContext"]["runAsUser"] != 0
    # The listener pods run the controller's image (it holds /ghalistener).
    assert c["args"][c["args"].index("--listener-image") + 1] == c["image"] == settings.image
    selector = sts["spec"]["selector"]["matchLabels"]
    assert selector.items() <= sts["spec"]["template"]["metadata"]["labels"].items()
    assert manifests.service(settings)["spec"]["selector"] == selector
    assert manifests.pod_disruption_budget(settings)["spec"]["selector"]["matchLabels"] == selector
    assert manifests.service(settings)["spec"]["ports"][0]["port"] == 8080


@pytest.mark.parametrize("kind", crdgen.resources.KINDS, ids=lambda k: k.kind)
def test_client_side_apply_of_each_crd_fits_the_annotation_limit(kind: crdgen.resources.Kind) -> None:
    crd = crdgen.crd(kind)
    # What `kubectl apply` stores: the object, with the annotation map it adds, as compact JSON.
    applied = {**crd, "metadata": {**crd["metadata"], "annotations": {}}}
    value = json.dumps(applied, separators=(",", ":"), sort_keys=True) + "\n"
    assert len(LAST_APPLIED) + len(value.encode()) < ANNOTATION_LIMIT


# -- the image ---------------------------------------------------------------------------------------------


def dockerfile_stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's stages, each a list of (INSTRUCTION, arguments) with continuations joined."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    stages: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        if instruction.upper() == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((instruction.upper(), rest.strip()))
    return stages


def instruction(stage: list[tuple[str, str]], name: str) -> str:
    found = [args for instr, args in stage if instr == name]
    assert found, f"the final stage has no {name}"
    return found[-1]


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list), "use the exec (JSON) form"
    return [str(v) for v in value]


def test_the_image_entrypoint_is_the_installed_arcsm_command() -> None:
    stages = dockerfile_stages()
    assert len(stages) >= 2, "build and runtime stages"
    final = stages[-1]
    assert exec_form(instruction(final, "ENTRYPOINT")) == ["arcsm"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["arcsm"] == "controller.cli:main"
    # The build stage installs the package, which puts `arcsm` on the PATH the final stage sets.
    build = " ".join(args for _, args in stages[0])
    assert "pip install ." in build
    assert "/opt/arcsm/bin" in instruction(final, "ENV")
    assert any(i == "COPY" and a.startswith("--from=build /opt/arcsm") for i, a in final)


def test_the_image_runs_as_the_pods_non_root_user_with_the_journal_on_the_volume() -> None:
    final = dockerfile_stages()[-1]
    user, _, group = instruction(final, "USER").partition(":")
    assert int(user) == manifests.RUN_AS != 0
    assert int(group) == manifests.RUN_AS
    assert manifests.JOURNAL_DIR in exec_form(instruction(final, "VOLUME"))
    cmd = exec_form(instruction(final, "CMD"))
    assert cmd[cmd.index("--journal") + 1] == manifests.JOURNAL_PATH
    # The listener entrypoint the AutoscalingListener pods run.
    assert "exec arcsm listener" in instruction(final, "RUN") and "/ghalistener" in instruction(final, "RUN")


def test_the_build_context_holds_every_package() -> None:
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    included = [p.rstrip("*") for p in packages["find"]["include"]]
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    copied = [shlex.split(a)[0] for i, a in dockerfile_stages()[0] if i == "COPY"]
    for package in included:
        assert f"!{package}" in ignore
        assert package in copied
