"""Where ``kubeconfigs.find`` looks for the cluster, step by step: ``--kubeconfig``, ``$KUBECONFIG``, the
pod's service account, ``~/.kube/config``, else one line naming what it tried; and what the in-cluster
step loads. Each test builds the process's environment, home and service account token in a temporary
directory; the commands' use of it against the emulated cluster is in
``tests/e2e/controller/test_controller_kubeconfig.py`` and ``tests/e2e/actions/test_listener_command.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kubernetes_asyncio.config import incluster_config

from actions import kubepatching
from controller.loop import kubeconfigs
from controller.loop.kubeconfigs import NoCluster, Origin, Source


class Machine:
    """A process's view: environment variables, a home directory and a service account token path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.environ: dict[str, str] = {}
        self.home = root / "home"
        self.token = root / "serviceaccount" / "token"

    def file(self, name: str) -> Path:
        path = self.root / name
        path.write_text("apiVersion: v1\nkind: Config\n")
        return path

    def home_config(self) -> Path:
        (self.home / ".kube").mkdir(parents=True, exist_ok=True)
        path = self.home / ".kube" / "config"
        path.write_text("apiVersion: v1\nkind: Config\n")
        return path

    def in_a_pod(self) -> None:
        self.environ["KUBERNETES_SERVICE_HOST"] = "10.96.0.1"
        self.token.parent.mkdir(parents=True, exist_ok=True)
        self.token.write_text("a-token")

    def find(self, explicit: Path | None = None) -> Source:
        return kubeconfigs.find(explicit, environ=self.environ, home=self.home, token=self.token)


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_the_explicit_kubeconfig_wins_over_everything_else(machine: Machine) -> None:
    explicit = machine.file("explicit")
    machine.environ["KUBECONFIG"] = str(machine.file("from-env"))
    machine.in_a_pod()
    machine.home_config()
    assert machine.find(explicit) == Source(Origin.EXPLICIT, (explicit,))


def test_an_explicit_kubeconfig_that_is_missing_is_an_error_not_a_fallback(machine: Machine) -> None:
    machine.home_config()
    with pytest.raises(NoCluster, match=r"^cannot use the kubeconfig .*missing: no such file$"):
        machine.find(machine.root / "missing")


def test_kubeconfig_lists_files_in_order_skipping_empty_entries_and_missing_files(machine: Machine) -> None:
    first, second = machine.file("first"), machine.file("second")
    machine.environ["KUBECONFIG"] = os.pathsep.join(
        ["", str(machine.root / "missing"), str(first), str(second)]
    )
    machine.in_a_pod()
    machine.home_config()
    assert machine.find() == Source(Origin.ENVIRONMENT, (first, second))


def test_kubeconfig_naming_no_file_that_exists_is_an_error_not_a_fallback(machine: Machine) -> None:
    machine.environ["KUBECONFIG"] = os.pathsep.join([str(machine.root / "a"), str(machine.root / "b")])
    machine.home_config()
    with pytest.raises(NoCluster, match=r"^\$KUBECONFIG names no file that exists: "):
        machine.find()


def test_an_empty_kubeconfig_variable_counts_as_unset(machine: Machine) -> None:
    machine.environ["KUBECONFIG"] = ""
    home = machine.home_config()
    assert machine.find() == Source(Origin.HOME, (home,))


def test_in_a_pod_the_service_account_wins_over_the_home_kubeconfig(machine: Machine) -> None:
    machine.in_a_pod()
    machine.home_config()
    found = machine.find()
    assert found == Source.service_account() and found.in_cluster and found.files == ()


def test_without_the_token_a_service_host_is_not_a_pod(machine: Machine) -> None:
    machine.environ["KUBERNETES_SERVICE_HOST"] = "10.96.0.1"
    home = machine.home_config()
    assert machine.find() == Source(Origin.HOME, (home,))


def test_the_home_kubeconfig_is_the_last_resort(machine: Machine) -> None:
    home = machine.home_config()
    found = machine.find()
    assert found == Source(Origin.HOME, (home,)) and not found.in_cluster


@pytest.mark.parametrize("service_host", [None, "10.96.0.1"])
def test_with_nothing_found_one_line_says_what_was_tried(machine: Machine, service_host: str | None) -> None:
    if service_host:
        machine.environ["KUBERNETES_SERVICE_HOST"] = service_host
    with pytest.raises(NoCluster) as raised:
        kubeconfigs.find(
            None, explicit_flag="--kubeconfig (or ARCSM_KUBECONFIG)", environ=machine.environ,
            home=machine.home, token=machine.token,
        )  # fmt: skip
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(
        "no cluster to reach: no --kubeconfig (or ARCSM_KUBECONFIG), $KUBECONFIG unset, "
    )
    assert str(machine.home / ".kube" / "config") in message
    tried_the_pod = (
        f"no service account token at {machine.token}" if service_host else "KUBERNETES_SERVICE_HOST"
    )
    assert tried_the_pod in message


def test_the_service_account_is_where_kubernetes_mounts_it() -> None:
    assert str(kubeconfigs.TOKEN) == incluster_config.SERVICE_TOKEN_FILENAME
    assert str(kubeconfigs.CA) == incluster_config.SERVICE_CERT_FILENAME


def test_the_service_account_configuration_is_https_to_the_service_with_the_token(machine: Machine) -> None:
    machine.in_a_pod()
    ca = machine.token.parent / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    environ = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    configuration = kubepatching.in_cluster(environ=environ, token=machine.token, ca=ca)
    assert configuration.host == "https://10.96.0.1:443"
    assert configuration.api_key["BearerToken"] == "Bearer a-token"
    assert configuration.ssl_ca_cert == str(ca)
