"""kubectl's field validation against the emulated cluster: built-in kinds are decoded as a real server
decodes them.

Inputs: an emulated cluster, a kubeconfig for it and Debian's ``kubectl`` (1.32: ``--validate=strict`` is
its default and is sent as ``fieldValidation=Strict``). Outputs: kubectl's exit code and stderr for a Pod
manifest with a misspelled field or a value of the wrong type, under each ``--validate`` mode, and the pod
stored (or not) as ``kubectl get -o json`` reads it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.world import World
from tests.kubectl import apply_flags, get_json, kubectl, requires_kubectl

pytestmark = requires_kubectl

MISSPELLED = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  schedulerName: other-scheduler
  containers:
  - name: main
    image: busybox:1.36
    imagee: busybox:1.37
"""

WRONG_TYPE = """
apiVersion: v1
kind: Pod
metadata:
  name: typed
spec:
  containers:
  - name: main
    image: busybox:1.36
    ports: "80"
"""


@pytest.fixture
async def kubeconfig(tmp_path: Path) -> AsyncIterator[Path]:
    apply_flags()  # ask kubectl its version before the event loop serves the cluster
    async with World(seed=1, crd_dir=None, namespaces=("default",)) as world:
        yield world.write_kubeconfig(tmp_path / "kubeconfig")


def _strict_supported() -> bool:
    return apply_flags() == ()


async def test_kubectl_apply_refuses_a_misspelled_field_by_default(kubeconfig: Path) -> None:
    if not _strict_supported():
        pytest.skip("kubectl older than 1.27 validates on the client")
    code, _, err = await kubectl(kubeconfig, "apply", "-f", "-", stdin=MISSPELLED.format(name="strict"))
    assert code != 0
    assert (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "spec.containers[0].imagee"' in err
    )
    code, _, err = await kubectl(kubeconfig, "get", "pod", "strict")
    assert code != 0 and "NotFound" in err


async def test_kubectl_apply_with_validate_warn_prints_the_servers_warning(kubeconfig: Path) -> None:
    code, out, err = await kubectl(
        kubeconfig, "apply", "--validate=warn", "-f", "-", stdin=MISSPELLED.format(name="warned")
    )
    assert code == 0, err
    assert "pod/warned created" in out
    assert 'Warning: unknown field "spec.containers[0].imagee"' in err
    pod = await get_json(kubeconfig, "pod", "warned")
    assert pod["spec"]["containers"][0]["image"] == "busybox:1.36"
    assert "imagee" not in pod["spec"]["containers"][0]


async def test_kubectl_create_without_validation_drops_the_field_silently(kubeconfig: Path) -> None:
    code, _, err = await kubectl(
        kubeconfig, "create", "--validate=false", "-f", "-", stdin=MISSPELLED.format(name="ignored")
    )
    assert code == 0, err
    assert "Warning" not in err
    pod = await get_json(kubeconfig, "pod", "ignored")
    assert "imagee" not in pod["spec"]["containers"][0]


async def test_kubectl_create_of_a_wrong_type_shows_gos_decoding_error(kubeconfig: Path) -> None:
    code, _, err = await kubectl(kubeconfig, "create", "-f", "-", stdin=WRONG_TYPE)
    assert code != 0
    assert (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct '
        "field Container.spec.containers.ports of type []v1.ContainerPort" in err
    )
