"""The API server over HTTPS, and what the control plane publishes about itself.

Inputs: the ``world`` and ``kube`` fixtures (tests/conftest.py). Outputs: kubernetes_asyncio reaches the
HTTPS endpoint verifying it with the cluster CA; the serving certificate holds for every in-cluster name
of the API server and not without the CA; ``default/kubernetes`` (Service, Endpoints, EndpointSlice)
names the HTTPS endpoint; every namespace, old or new, has ``kube-root-ca.crt`` with that CA, and it comes
back when deleted or edited.
"""

from __future__ import annotations

import asyncio
import ssl

import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.helpers import eventually

ROOT_CA = "kube-root-ca.crt"


async def test_kubernetes_asyncio_talks_https_verified_by_the_cluster_ca(world: World) -> None:
    assert world.https_url.startswith("https://127.0.0.1:")
    async with client.ApiClient(world.https_configuration()) as api:
        names = {ns.metadata.name for ns in (await client.CoreV1Api(api).list_namespace()).items}
    assert {"default", "arc-systems"} <= names


@pytest.mark.parametrize(
    "server_name",
    [
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
        "localhost",
        "127.0.0.1",
    ],
)
async def test_the_serving_certificate_holds_for_every_name_of_the_api_server(
    world: World, server_name: str
) -> None:
    context = ssl.create_default_context(cafile=str(world.ca_file))
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", world.https_port, ssl=context, server_hostname=server_name
    )
    writer.write(f"GET /version HTTP/1.1\r\nHost: {server_name}\r\nConnection: close\r\n\r\n".encode())
    answer = await reader.read()
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:100]


async def test_without_the_cluster_ca_the_server_is_not_trusted(world: World) -> None:
    context = ssl.create_default_context()  # the system roots only
    with pytest.raises(ssl.SSLCertVerificationError):
        await asyncio.open_connection(
            "127.0.0.1", world.https_port, ssl=context, server_hostname="kubernetes"
        )


async def test_the_kubernetes_service_points_at_the_https_endpoint(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    service = await core.read_namespaced_service("kubernetes", "default")
    assert service.spec.type == "ClusterIP"
    assert service.spec.cluster_ip == "10.96.0.1"
    [port] = service.spec.ports
    assert (port.name, port.port, port.protocol, port.target_port) == ("https", 443, "TCP", world.https_port)
    assert service.metadata.labels == {"component": "apiserver", "provider": "kubernetes"}

    endpoints = await core.read_namespaced_endpoints("kubernetes", "default")
    [subset] = endpoints.subsets
    assert [a.ip for a in subset.addresses] == ["127.0.0.1"]
    assert [(p.name, p.port) for p in subset.ports] == [("https", world.https_port)]

    slices = await client.DiscoveryV1Api(kube).list_namespaced_endpoint_slice(
        "default", label_selector="kubernetes.io/service-name=kubernetes"
    )
    [slice_] = slices.items
    assert slice_.address_type == "IPv4"
    assert [e.addresses for e in slice_.endpoints] == [["127.0.0.1"]]
    assert [(p.name, p.port) for p in slice_.ports] == [("https", world.https_port)]


async def test_every_namespace_has_the_root_ca_and_it_comes_back(
    world: World, kube: client.ApiClient
) -> None:
    core = client.CoreV1Api(kube)
    ca = world.ca_file.read_text()
    for namespace in ("default", "arc-systems"):
        cm = await core.read_namespaced_config_map(ROOT_CA, namespace)
        assert cm.data == {"ca.crt": ca}
        assert "kubernetes.io/description" in cm.metadata.annotations

    await core.create_namespace({"metadata": {"name": "fresh"}})

    async def published() -> bool:
        found = await core.list_namespaced_config_map("fresh", field_selector=f"metadata.name={ROOT_CA}")
        return [cm.data for cm in found.items] == [{"ca.crt": ca}]

    await eventually(published, what="kube-root-ca.crt in a new namespace")

    await core.delete_namespaced_config_map(ROOT_CA, "fresh")
    await eventually(published, what="kube-root-ca.crt recreated after deletion")

    await core.patch_namespaced_config_map(ROOT_CA, "fresh", {"data": {"ca.crt": "edited", "extra": "x"}})
    await eventually(published, what="kube-root-ca.crt restored after an edit")
