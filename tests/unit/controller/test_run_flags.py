"""``arcsm run``'s options: each has an ``ARCSM_`` environment variable that ``--help`` names, a flag wins
over its variable, repeatable variables split on spaces and commas, the values land in the settings the
controller runs with, and a bad value is one line naming the flag (exit status 2).

The command runs through the real command line (``typer.testing.CliRunner`` on
``controller.commands.cli.app``); only the controller itself is replaced by one that keeps the settings it was
given.
"""

from __future__ import annotations

import io
import json
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from controller.commands import cli, logformat, run_command
from controller.loop import kubeconfigs, logkeys, running
from controller.loop.kubeconfigs import Origin, Source
from controller.loop.settings import ControllerSettings, QueueSettings, ReconcileSettings
from statemachines.effects import ObjectRef
from statemachines.snapshots import Settings as MachineSettings
from store.settings import JournalSettings

UPSTREAM_VARIABLES = (
    "CONTROLLER_MANAGER_POD_NAMESPACE",
    "CONTROLLER_MANAGER_CONTAINER_IMAGE",
    "LISTENER_ENTRYPOINT",
)


class Started:
    """Stands in for the controller: keeps the settings and the log configuration ``arcsm run`` chose."""

    def __init__(self) -> None:
        self.settings: ControllerSettings | None = None
        self.logging: tuple[str, str] | None = None

    async def run(self, settings: ControllerSettings) -> int:
        self.settings = settings
        return 0

    def configure_logging(self, level: str, fmt: str = "auto") -> None:
        self.logging = (level, fmt)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Started:
    fake = Started()
    monkeypatch.setattr(running, "run", fake.run)
    monkeypatch.setattr(run_command, "configure_logging", fake.configure_logging)
    for name in UPSTREAM_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return fake


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\n")
    return path


def arcsm_run(*argv: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli.app, ["run", *argv], env=env)


def settings_of(started: Started, result: Any) -> ControllerSettings:
    assert result.exit_code == 0, result.output
    assert started.settings is not None
    return started.settings


def run_options() -> list[typer.core.TyperOption]:
    command = typer.main.get_command(cli.app).commands["run"]  # type: ignore[attr-defined]
    return [p for p in command.params if isinstance(p, typer.core.TyperOption) and p.name != "help"]


def test_every_option_has_an_arcsm_variable_named_after_it_and_help_shows_it() -> None:
    result = CliRunner().invoke(cli.app, ["run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    options = run_options()
    assert len(options) >= 25
    for option in options:
        long_name = next(o for o in option.opts if o.startswith("--"))
        expected = "ARCSM_" + long_name.removeprefix("--").replace("-", "_").upper()
        envvars = [option.envvar] if isinstance(option.envvar, str) else list(option.envvar or [])
        assert envvars and envvars[0] == expected, (long_name, option.envvar)
        assert expected in result.output, expected


def test_without_options_the_settings_are_the_defaults(started: Started, kubeconfig: Path) -> None:
    settings = settings_of(started, arcsm_run("--journal", "j.db", "--kubeconfig", str(kubeconfig)))
    assert settings.journal == JournalSettings()
    assert settings.queue == QueueSettings()
    assert settings.reconcile == ReconcileSettings() and settings.reconcile.predicates
    assert settings.machines == MachineSettings()
    assert settings.watch.namespaces == () and settings.watch.resync == 900.0
    assert settings.watch.page_size == 100
    assert settings.http is None
    assert started.logging == ("info", "auto")


def test_flags_land_in_the_settings(started: Started, kubeconfig: Path) -> None:
    result = arcsm_run(
        "--journal", "j.db", "--kubeconfig", str(kubeconfig),
        "--namespace", "team-a", "--namespace", "team-b,team-c",
        "--controller-namespace", "arc-ctl",
        "--qps", "5", "--burst", "7", "--resync-period", "0", "--page-size", "50",
        "--workers", "6", "--runner-concurrency", "2", "--ars-concurrency", "1",
        "--ers-concurrency", "3", "--listener-concurrency", "4",
        "--reconcile-rate", "2.5", "--reconcile-burst", "20",
        "--exclude-label-propagation-prefix", "argocd.argoproj.io/",
        "--exclude-label-propagation-prefix", "kustomize.toolkit.fluxcd.io/,example.com/",
        "--journal-retain-days", "2.5", "--journal-retain-records", "1000", "--journal-retain-bytes", "512Mi",
        "--history-retain-days", "30", "--history-retain-records", "500", "--journal-tail-buffer", "2Mi",
        "--listener-image", "registry.example/arcsm:1", "--listener-entrypoint", "/listen",
        "--listener-image-pull-secret", "pull-a,pull-b",
        "--listener-log-level", "info", "--listener-log-format", "json",
        "--listener-metrics-addr", ":8081", "--listener-metrics-endpoint", "/metrics",
        "--http", "127.0.0.1:0", "--log-level", "debug", "--log-format", "json",
        "--no-leader-elect", "--no-predicates",
    )  # fmt: skip
    settings = settings_of(started, result)
    assert settings.reconcile == ReconcileSettings(predicates=False)
    assert settings.watch.namespaces == ("team-a", "team-b", "team-c", "arc-ctl")
    assert settings.watch.resync is None
    assert settings.watch.page_size == 50
    assert (settings.executor.qps, settings.executor.burst) == (5.0, 7)
    assert settings.queue.workers == 6
    assert (settings.queue.rate, settings.queue.burst) == (2.5, 20)
    assert settings.queue.per_kind == {
        "AutoscalingRunnerSet": 1,
        "EphemeralRunnerSet": 3,
        "EphemeralRunner": 2,
        "AutoscalingListener": 4,
    }
    assert settings.journal.retention.max_age == timedelta(days=2.5)
    assert settings.journal.tail_buffer_bytes == 2 << 20
    assert settings.journal.retention.max_records == 1000
    assert settings.journal.retention.max_bytes == 512 << 20
    assert settings.journal.history_retention.max_age == timedelta(days=30)
    assert settings.journal.history_retention.max_records == 500
    assert settings.machines == MachineSettings(
        controller_namespace="arc-ctl",
        listener_image="registry.example/arcsm:1",
        listener_entrypoint="/listen",
        exclude_label_prefixes=("argocd.argoproj.io/", "kustomize.toolkit.fluxcd.io/", "example.com/"),
        image_pull_secrets=("pull-a", "pull-b"),
        listener_log_level="info",
        listener_log_format="json",
        listener_metrics_addr=":8081",
        listener_metrics_endpoint="/metrics",
    )
    assert settings.http is not None and (settings.http.host, settings.http.port) == ("127.0.0.1", 0)
    assert started.logging == ("debug", "json")


def test_the_debug_endpoints_are_off_unless_asked_for(started: Started, kubeconfig: Path) -> None:
    served = ("--journal", "j.db", "--kubeconfig", str(kubeconfig), "--http", "127.0.0.1:0")
    http = settings_of(started, arcsm_run(*served)).http
    assert http is not None and not http.debug_endpoints
    for result in (
        arcsm_run(*served, "--debug-endpoints"),
        arcsm_run(*served, env={"ARCSM_DEBUG_ENDPOINTS": "true"}),
    ):
        http = settings_of(started, result).http
        assert http is not None and http.debug_endpoints


def test_variables_land_in_the_settings_and_repeatable_ones_split_on_spaces_and_commas(
    started: Started, kubeconfig: Path
) -> None:
    env = {
        "ARCSM_JOURNAL": "from-env.db",
        "ARCSM_KUBECONFIG": str(kubeconfig),
        "ARCSM_NAMESPACE": "team-a team-b,team-c",
        "ARCSM_RUNNER_CONCURRENCY": "2",
        "ARCSM_WORKERS": "3",
        "ARCSM_RECONCILE_RATE": "40",
        "ARCSM_RECONCILE_BURST": "200",
        "ARCSM_JOURNAL_RETAIN_BYTES": "2Gi",
        "ARCSM_JOURNAL_RETAIN_DAYS": "0",
        "ARCSM_LISTENER_IMAGE_PULL_SECRET": "pull-a, pull-b",
        "ARCSM_LOG_LEVEL": "warning",
        "ARCSM_LOG_FORMAT": "text",
        "ARCSM_LEADER_ELECT": "false",
        "ARCSM_PREDICATES": "false",
    }
    settings = settings_of(started, arcsm_run(env=env))
    assert settings.reconcile.predicates is False
    assert settings.journal_path == Path("from-env.db")
    assert settings.cluster == Source.kubeconfig(kubeconfig)
    assert settings.watch.namespaces == ("team-a", "team-b", "team-c", "arc-systems")
    assert settings.queue == QueueSettings(workers=3, rate=40, burst=200, per_kind={"EphemeralRunner": 2})
    assert settings.journal.retention.max_bytes == 2 << 30
    assert settings.journal.retention.max_age is None  # 0 turns the bound off
    assert settings.machines.image_pull_secrets == ("pull-a", "pull-b")
    assert started.logging == ("warning", "text")


def test_a_flag_wins_over_its_variable(started: Started, kubeconfig: Path) -> None:
    env = {
        "ARCSM_NAMESPACE": "from-env",
        "ARCSM_WORKERS": "3",
        "ARCSM_LOG_FORMAT": "text",
        "ARCSM_PREDICATES": "false",
    }
    result = arcsm_run(
        "--journal", "j.db", "--kubeconfig", str(kubeconfig),
        "--namespace", "from-flag", "--workers", "5", "--log-format", "json", "--predicates",
        env=env,
    )  # fmt: skip
    settings = settings_of(started, result)
    assert settings.reconcile.predicates is True
    assert settings.watch.namespaces == ("from-flag", "arc-systems")
    assert settings.queue.workers == 5
    assert started.logging == ("info", "json")


def test_upstream_chart_variables_are_read_when_the_arcsm_ones_are_unset(
    started: Started, kubeconfig: Path
) -> None:
    upstream = {
        "CONTROLLER_MANAGER_POD_NAMESPACE": "arc-upstream",
        "CONTROLLER_MANAGER_CONTAINER_IMAGE": "ghcr.io/example/controller:0.13.0",
        "LISTENER_ENTRYPOINT": "/ghalistener-upstream",
    }
    argv = ("--journal", "j.db", "--kubeconfig", str(kubeconfig))
    machines = settings_of(started, arcsm_run(*argv, env=upstream)).machines
    assert (machines.controller_namespace, machines.listener_image, machines.listener_entrypoint) == (
        "arc-upstream",
        "ghcr.io/example/controller:0.13.0",
        "/ghalistener-upstream",
    )
    ours = {**upstream, "ARCSM_CONTROLLER_NAMESPACE": "arc-ours", "ARCSM_LISTENER_IMAGE": "arcsm:ours"}
    machines = settings_of(started, arcsm_run(*argv, env=ours)).machines
    assert (machines.controller_namespace, machines.listener_image) == ("arc-ours", "arcsm:ours")


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--log-format", "yaml"], "--log-format"),
        (["--log-level", "verbose"], "--log-level"),
        (["--runner-concurrency", "0"], "--runner-concurrency"),
        (["--ars-concurrency", "-1"], "--ars-concurrency"),
        (["--workers", "0"], "--workers"),
        (["--reconcile-rate", "0"], "--reconcile-rate"),
        (["--reconcile-burst", "0"], "--reconcile-burst"),
        (["--journal-retain-bytes", "lots"], "--journal-retain-bytes"),
        (["--journal-tail-buffer", "0"], "--journal-tail-buffer"),
        (["--journal-tail-buffer", "big"], "--journal-tail-buffer"),
        (["--journal-retain-days", "-1"], "--journal-retain-days"),
        (["--history-retain-records", "-5"], "--history-retain-records"),
        (["--resync-period", "-1"], "--resync-period"),
        (["--page-size", "0"], "--page-size"),
        (["--listener-log-format", "xml"], "--listener-log-format"),
        (["--listener-log-level", "loud"], "--listener-log-level"),
        (["--http", "nowhere"], "HOST:PORT"),
        (["--debug-endpoints"], "--debug-endpoints serves on the HTTP API: give --http"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_flag(
    started: Started, kubeconfig: Path, argv: list[str], flag: str
) -> None:
    result = arcsm_run("--journal", "j.db", "--kubeconfig", str(kubeconfig), *argv)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arcsm run: ") and flag in lines[0], lines
    assert started.settings is None


def test_a_transition_log_line_in_json_carries_the_object_keys() -> None:
    record = logging.LogRecord(
        "arcsm.controller", logging.INFO, __file__, 1, "%s → %s", ("Pending", "Running"), None
    )
    ref = ObjectRef("AutoscalingRunnerSet", "runners", "arc")
    extra = logkeys.about(ref, seq=42, from_phase="Pending", to_phase="Running", trigger="listener_ready")
    for key, value in extra.items():
        setattr(record, key, value)
    line = json.loads(logformat.JsonLines().format(record))
    assert line == {
        "time": line["time"],
        "level": "info",
        "logger": "arcsm.controller",
        "msg": "Pending → Running",
        "kind": "AutoscalingRunnerSet",
        "namespace": "runners",
        "name": "arc",
        "seq": 42,
        "from_phase": "Pending",
        "to_phase": "Running",
        "trigger": "listener_ready",
    }


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("fmt", "stream", "json_lines"),
    [
        ("auto", io.StringIO(), True),
        ("auto", Terminal(), False),
        ("json", Terminal(), True),
        ("text", io.StringIO(), False),
    ],
)
def test_auto_writes_json_unless_the_stream_is_a_terminal(
    fmt: str, stream: io.StringIO, json_lines: bool
) -> None:
    assert isinstance(logformat.formatter(fmt, stream), logformat.JsonLines) is json_lines


@pytest.fixture
def in_a_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a pod: the service host set, a token where the service account is mounted
    (here a temporary one), no $KUBECONFIG, and a home without a kubeconfig."""
    token = tmp_path / "serviceaccount" / "token"
    token.parent.mkdir()
    token.write_text("a-token")
    monkeypatch.setattr(kubeconfigs, "TOKEN", token)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("ARCSM_KUBECONFIG", raising=False)
    (tmp_path / "home").mkdir()
    return {
        "KUBERNETES_SERVICE_HOST": "10.96.0.1",
        "KUBERNETES_SERVICE_PORT": "443",
        "HOME": str(tmp_path / "home"),
    }


def test_in_a_pod_it_uses_the_service_account_and_elects_a_leader(
    started: Started, in_a_pod: dict[str, str]
) -> None:
    settings = settings_of(started, arcsm_run("--journal", "j.db", env=in_a_pod))
    assert settings.cluster == Source.service_account()
    assert settings.leader_election is not None
    assert settings.leader_election.namespace == settings.machines.controller_namespace


def test_a_kubeconfig_in_a_pod_wins_and_then_no_leader_is_elected_unless_asked(
    started: Started, in_a_pod: dict[str, str], kubeconfig: Path
) -> None:
    env = {**in_a_pod, "KUBECONFIG": str(kubeconfig)}
    settings = settings_of(started, arcsm_run("--journal", "j.db", env=env))
    assert settings.cluster == Source(Origin.ENVIRONMENT, (kubeconfig,))
    assert settings.leader_election is None
    asked = settings_of(started, arcsm_run("--journal", "j.db", "--leader-elect", env=env))
    assert asked.cluster.files == (kubeconfig,) and asked.leader_election is not None


def test_the_home_kubeconfig_elects_no_leader(
    started: Started, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    (home / ".kube" / "config").write_text("apiVersion: v1\nkind: Config\n")
    settings = settings_of(started, arcsm_run("--journal", "j.db", env={"HOME": str(home)}))
    assert settings.cluster == Source(Origin.HOME, (home / ".kube" / "config",))
    assert settings.leader_election is None


def test_a_bad_lease_timing_is_a_bad_option_even_with_no_cluster_to_reach(
    started: Started, tmp_path: Path
) -> None:
    env = {"HOME": str(tmp_path), "KUBECONFIG": "", "KUBERNETES_SERVICE_HOST": ""}
    result = arcsm_run("--journal", "j.db", "--renew-deadline", "30", env=env)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("arcsm run: leader election needs 0 < retry period < renew deadline")
    result = arcsm_run("--journal", "j.db", env=env)
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("arcsm run: no cluster to reach: no --kubeconfig (or ARCSM_KUBECONFIG), ")
    assert started.settings is None
