"""``arcsm manifests``, the committed rendering of the chart, and the container image definition.

Inputs: ``controller.installation.manifests`` (the Helm chart rendered by Helm's SDK), the files under
``deploy/``, ``arcsm run``'s options, pyproject.toml. Outputs: the committed ``deploy/arcsm.yaml``,
``deploy/kustomization.yaml`` and the chart's generated ``templates/_rules.tpl`` are what the generator writes
today; ``arcsm manifests`` prints the CRDs, the namespace and the rendered chart in Helm's install order,
takes values files, ``--set`` and shorthand options, and refuses bad input in one line; every flag
the controller's container passes exists on ``arcsm run``; kubectl's client-side apply of each CRD stays
under the API server's 256 KiB annotation limit; the Dockerfile is multi-stage, runs as the pod's non-root
user, keeps the journal where the volume is mounted, and its entrypoint is the installed ``arcsm``.
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

import deploy
from controller.commands import cli
from controller.emulated import simimage
from controller.installation import crdgen, manifests

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
ANNOTATION_LIMIT = 262144
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def test_the_committed_rendering_is_current() -> None:
    for filename, text in manifests.render_files().items():
        committed = (DEPLOY / filename).read_text(encoding="utf-8")
        regenerate = "python -m controller.installation.manifests"
        assert committed == text, f"deploy/{filename} is stale: run `{regenerate}`"


def test_the_kustomization_covers_the_crds_and_the_installation() -> None:
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    crd_files = [str(path.relative_to(DEPLOY)) for path in deploy.crd_paths()]
    assert len(crd_files) == len(crdgen.resources.KINDS)
    assert kustomization["resources"] == [*crd_files, "arcsm.yaml"]


def load_all(text: str) -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(text, Loader=loader) if d is not None]


def by_kind(documents: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for doc in documents:
        out.setdefault(doc["kind"], []).append(doc)
    return out


def manifests_of(*argv: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli.app, ["manifests", *argv])
    assert result.exit_code == 0, result.output
    return load_all(result.stdout)


def test_the_command_prints_the_whole_installation_in_install_order() -> None:
    documents = manifests_of("--namespace", "ci", "--image", "r.example/arcsm:1", "--replicas", "3")
    assert documents == manifests.render(
        manifests.Release(
            namespace="ci", values={"image": {"repository": "r.example/arcsm", "tag": "1"}, "replicaCount": 3}
        )
    )
    kinds = by_kind(documents)
    assert len(kinds["CustomResourceDefinition"]) == len(crdgen.resources.KINDS)
    assert [d["metadata"]["name"] for d in kinds["Namespace"]] == ["ci"]
    [sts] = kinds["StatefulSet"]
    assert sts["spec"]["replicas"] == 3 and "Deployment" not in kinds
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "r.example/arcsm:1"
    # CRDs and the Namespace come first: `kubectl apply -f` creates in the order it reads; then Helm's.
    order = [d["kind"] for d in documents]
    assert order[:5] == ["CustomResourceDefinition"] * 4 + ["Namespace"]
    ranks = [manifests.INSTALL_ORDER.index(kind) for kind in order[5:]]
    assert ranks == sorted(ranks)


def test_values_files_then_shorthand_then_set(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("flags: {logLevel: debug, logFormat: text}\nimage: {tag: from-file}\n")
    second.write_text("flags: {logLevel: error}\n")
    documents = manifests_of(
        "-f", str(first), "--values", str(second), "--image", "x/arcsm:2", "--set", "image.tag=3"
    )
    [deployment] = by_kind(documents)["Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert "--log-level=error" in container["args"] and "--log-format=text" in container["args"]
    assert container["image"] == "x/arcsm:3"


def test_image_and_replicas_shorthands_reach_the_experimental_layouts_keys(tmp_path: Path) -> None:
    # A values file of upstream's experimental controller chart names upstream's image under `controller`,
    # which the chart reads first: --image must still win.
    values = tmp_path / "experimental.yaml"
    values.write_text(
        "controller:\n  replicaCount: 1\n"
        "  manager: {container: {image: ghcr.io/actions/gha-runner-scale-set-controller:0.14.2}}\n"
    )
    documents = manifests_of("-f", str(values), "--image", "x/arcsm:2", "--replicas", "2")
    [sts] = by_kind(documents)["StatefulSet"]
    assert sts["spec"]["replicas"] == 2
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "x/arcsm:2"


def test_skip_crds_leaves_them_out() -> None:
    kinds = by_kind(manifests_of("--skip-crds"))
    assert "CustomResourceDefinition" not in kinds and "Deployment" in kinds


def test_watch_namespaces_become_run_flags_and_roles() -> None:
    kinds = by_kind(manifests_of("--watch-namespace", "team-b", "--watch-namespace", "team-a"))
    assert "ClusterRole" not in kinds and "ClusterRoleBinding" not in kinds
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]) for r in kinds["Role"]}
    assert roles == {
        ("arc-systems", "arcsm"),
        ("team-a", "arcsm"),
        ("team-b", "arcsm"),
        ("arc-systems", "arcsm-listener"),
        ("arc-systems", "arcsm-leader-election"),
    }
    args = kinds["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--namespace")] == ["--namespace=team-b", "--namespace=team-a"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--replicas", "0"], "--replicas must be at least 1"),
        (["--namespace", "Arc_Systems"], "'Arc_Systems' is not a namespace name"),
        (["--image", "a b"], "'a b' is not an image reference"),
        (["--release-name", "Bad_Name"], "invalid release name"),
        (["--set", "serviceAccount.name=default"], 'serviceAccount.name cannot be "default"'),
        (
            ["--set", "metrics.controllerManagerAddr=nowhere"],
            'metrics.controllerManagerAddr "nowhere" must be',
        ),
        (["--set", "replicaCount=2", "--set", "leaderElection.enabled=false"], "replicaCount > 1 needs"),
        (["--set", "flags.logLevel=loud"], "values don't meet the specifications"),
        (["-f", "no-such-values.yaml"], "cannot read the values file no-such-values.yaml"),
    ],
)
def test_bad_input_is_one_line(argv: list[str], message: str) -> None:
    result = CliRunner().invoke(cli.app, ["manifests", *argv])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"arcsm manifests: {message}"), line


def run_options() -> set[str]:
    run = get_command(cli.app).commands["run"]  # type: ignore[attr-defined]
    return {opt for param in run.params for opt in (*param.opts, *param.secondary_opts)}


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"replicaCount": 3, "flags": {"watchSingleNamespace": "team-a", "runnerMaxConcurrentReconciles": 4}},
        {
            "flags": {"excludeLabelPropagationPrefixes": ["argocd.argoproj.io/"]},
            "imagePullSecrets": [{"name": "r"}],
        },
        {
            "leaderElection": {"enabled": False},
            "listener": {"entrypoint": "/l", "logLevel": "debug", "logFormat": "text"},
            "pprof": {"addr": ":6060"},
        },
        # The layout of upstream's experimental controller chart, with its defaults.
        {
            "controller": {
                "replicaCount": 1,
                "manager": {
                    "config": {
                        "logLevel": "debug",
                        "logFormat": "text",
                        "watchSingleNamespace": "",
                        "runnerMaxConcurrentReconciles": 2,
                        "excludeLabelPropagationPrefixes": [],
                        "k8sClientRateLimiterQPS": None,
                        "k8sClientRateLimiterBurst": None,
                    },
                    "container": {"extraArgs": ["--auto-scaling-runner-set-only"]},
                },
                "metrics": {
                    "controllerManagerAddr": ":8080",
                    "listenerAddr": ":8080",
                    "listenerEndpoint": "/m",
                },
            }
        },
    ],
)
def test_every_flag_the_controller_container_passes_exists_on_arcsm_run(values: dict[str, Any]) -> None:
    documents = manifests.render_templates(manifests.Release(values=values))
    [workload] = [d for d in documents if d["kind"] in ("Deployment", "StatefulSet")]
    [container] = workload["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == "run"
    flags = {a.partition("=")[0] for a in container["args"][1:]}
    assert all(flag.startswith("--") for flag in flags)
    assert flags <= run_options(), f"arcsm run has no {sorted(flags - run_options())}"
    variables = {e["name"] for e in container["env"]}
    assert {"CONTROLLER_MANAGER_CONTAINER_IMAGE", "CONTROLLER_MANAGER_POD_NAMESPACE"} <= variables


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


def pod_spec() -> dict[str, Any]:
    """The controller's pod as the chart renders it by default."""
    [deployment] = [d for d in manifests.render_templates(manifests.Release()) if d["kind"] == "Deployment"]
    spec: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return spec


def test_the_image_entrypoint_is_the_installed_arcsm_command() -> None:
    stages = dockerfile_stages()
    assert len(stages) >= 2, "build and runtime stages"
    final = stages[-1]
    assert exec_form(instruction(final, "ENTRYPOINT")) == ["arcsm"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["arcsm"] == "controller.commands.cli:main"
    # The build stage installs the package, which puts `arcsm` on the PATH the final stage sets.
    build = " ".join(args for _, args in stages[0])
    assert "pip install ." in build
    assert "/opt/arcsm/bin" in instruction(final, "ENV")
    assert any(i == "COPY" and a.startswith("--from=build /opt/arcsm") for i, a in final)


def test_the_image_runs_as_the_pods_non_root_user_with_the_journal_on_the_volume() -> None:
    final = dockerfile_stages()[-1]
    pod = pod_spec()
    [container] = pod["containers"]
    user, _, group = instruction(final, "USER").partition(":")
    assert int(user) == pod["securityContext"]["runAsUser"] != 0
    assert int(group) == pod["securityContext"]["runAsGroup"]
    [journal] = [m["mountPath"] for m in container["volumeMounts"] if m["name"] == "journal"]
    assert journal in exec_form(instruction(final, "VOLUME"))
    cmd = exec_form(instruction(final, "CMD"))
    assert f"--journal={cmd[cmd.index('--journal') + 1]}" in container["args"]
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


def test_the_namespace_printed_is_the_one_the_chart_installs_into() -> None:
    documents = manifests.render(
        manifests.Release(namespace="ignored", values={"namespaceOverride": "ci-arc"})
    )
    [created] = [d for d in documents if d["kind"] == "Namespace"]
    assert created["metadata"]["name"] == "ci-arc"
    assert {d["metadata"]["namespace"] for d in documents if "namespace" in d["metadata"]} == {"ci-arc"}


def test_the_emulators_arcsm_image_is_the_one_the_dockerfile_builds() -> None:
    final = dockerfile_stages()[-1]
    assert tuple(exec_form(instruction(final, "CMD"))) == simimage.CMD
    assert instruction(final, "WORKDIR") == simimage.WORKDIR
    env = dict(pair.split("=", 1) for pair in instruction(final, "ENV").split())
    assert simimage.ENV.items() <= env.items()
    assert exec_form(instruction(final, "ENTRYPOINT")) == ["arcsm"]
    assert f"> {simimage.LISTENER_ENTRYPOINT}" in instruction(final, "RUN")
    assert simimage.image().executables[simimage.LISTENER_ENTRYPOINT][-1] == "listener"
