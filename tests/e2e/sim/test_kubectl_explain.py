"""OpenAPI v3 with schemas: ``kubectl explain`` of built-in kinds and custom resources, and ``kubectl apply
--validate`` of good and bad objects behaving as against a real server.

Inputs: the ``world`` fixture (the project's CRDs installed), a kubeconfig for it, Debian's ``kubectl``,
raw HTTP for the OpenAPI documents and kubernetes_asyncio to read what was stored. Outputs: the fields,
types, required marks and descriptions kubectl prints; the components of ``/openapi/v3/api/v1`` and of
the CRDs' group-version; a strict apply of an object with unknown fields refused with kube-apiserver's
message and nothing stored, a warning apply storing the object without them, a good one applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client

from sim.world import World
from tests.e2e.sim.conformance import ARS, GROUP, NS, VERSION
from tests.kubectl import kubectl, ok, requires_kubectl

POD = """apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  containers:
  - name: c
    image: busybox:1.36
    ports: [{containerPort: 80}]
    EXTRA
"""
GOOD = POD.replace("NAME", "good").replace("EXTRA", "imagePullPolicy: IfNotPresent")
BAD = POD.replace("NAME", "bad").replace("EXTRA", "bogus: 1") + "  nodeSelectr: {a: b}\n"
BAD_ARS = f"""apiVersion: {GROUP}/{VERSION}
kind: AutoscalingRunnerSet
metadata: {{name: bad}}
spec:
  githubConfigUrl: https://github.com/example
  githubConfigSecret: gh
  bogus: 1
"""


async def document(world: World, path: str) -> Any:
    async with aiohttp.ClientSession() as session, session.get(world.url + "/openapi/v3/" + path) as resp:
        assert resp.status == 200
        return await resp.json()


@requires_kubectl
async def test_kubectl_explains_built_in_kinds_from_the_client_models(world: World, kubeconfig: Path) -> None:
    spec = await ok(kubeconfig, "explain", "pods.spec")
    assert "containers\t<[]Container> -required-" in spec
    assert "nodeSelector\t<map[string]string>" in spec
    assert "List of containers belonging to the pod." in spec

    containers = await ok(kubeconfig, "explain", "pods.spec.containers")
    assert containers.splitlines()[:2] == ["KIND:       Pod", "VERSION:    v1"]
    assert "FIELD: containers <[]Container>" in containers
    assert "name\t<string> -required-" in containers
    assert "env\t<[]EnvVar>" in containers

    port = await ok(kubeconfig, "explain", "deployments.spec.template.spec.containers.ports.containerPort")
    assert "GROUP:      apps" in port and "FIELD: containerPort <integer>" in port
    metadata = await ok(kubeconfig, "explain", "configmaps.metadata")
    assert "FIELD: metadata <ObjectMeta>" in metadata and "Standard object's metadata." in metadata


@requires_kubectl
async def test_kubectl_explains_a_custom_resource_from_its_crd(world: World, kubeconfig: Path) -> None:
    out = await ok(kubeconfig, "explain", "autoscalingrunnersets.spec")
    assert out.splitlines()[:3] == [
        f"GROUP:      {GROUP}",
        "KIND:       AutoscalingRunnerSet",
        f"VERSION:    {VERSION}",
    ]
    assert "FIELD: spec <Object>" in out
    assert "githubConfigUrl\t<string>" in out
    labels = await ok(kubeconfig, "explain", "autoscalingrunnersets.metadata.labels")
    assert "FIELD: labels <map[string]string>" in labels


@requires_kubectl
async def test_kubectl_apply_validates_as_against_a_real_server(
    world: World, kube: client.ApiClient, kubeconfig: Path
) -> None:
    core = client.CoreV1Api(kube)
    assert (
        await ok(kubeconfig, "apply", "--validate=strict", "-f", "-", stdin=GOOD)
    ).strip() == "pod/good created"

    code, _, err = await kubectl(kubeconfig, "apply", "--validate=strict", "-f", "-", stdin=BAD)
    assert code == 1
    assert (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "spec.containers[0].bogus", unknown field "spec.nodeSelectr"'
    ) in err
    assert [p.metadata.name for p in (await core.list_namespaced_pod(NS)).items] == ["good"]

    code, out, err = await kubectl(kubeconfig, "apply", "--validate=warn", "-f", "-", stdin=BAD)
    assert code == 0 and out.strip() == "pod/bad created"
    assert 'Warning: unknown field "spec.containers[0].bogus"' in err
    assert 'Warning: unknown field "spec.nodeSelectr"' in err
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{world.url}/api/v1/namespaces/{NS}/pods/bad") as resp,
    ):
        stored = await resp.json()
    assert "nodeSelectr" not in stored["spec"] and "bogus" not in stored["spec"]["containers"][0]

    # An update through apply's strategic merge patch is checked the same way.
    code, _, err = await kubectl(
        kubeconfig,
        "apply",
        "--validate=strict",
        "-f",
        "-",
        stdin=GOOD.replace("IfNotPresent", "Always") + "  bogus: 2\n",
    )
    assert code == 1 and 'strict decoding error: unknown field "spec.bogus"' in err
    out = await ok(kubeconfig, "apply", "--validate=strict", "-f", "-", stdin=GOOD.replace("1.36", "1.37"))
    assert out.strip() == "pod/good configured"
    assert (await core.read_namespaced_pod("good", NS)).spec.containers[0].image == "busybox:1.37"

    code, _, err = await kubectl(kubeconfig, "apply", "--validate=strict", "-f", "-", stdin=BAD_ARS)
    assert code == 1 and 'strict decoding error: unknown field "spec.bogus"' in err


async def test_unknown_fields_of_a_built_in_body_are_dropped_when_the_request_names_field_validation(
    world: World,
) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "bogus": "x"},
        "data": {"a": "b"},
        "extra": 1,
    }
    url = f"{world.url}/api/v1/namespaces/{NS}/configmaps"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=body, params={"fieldValidation": "Strict"}) as resp:
            status = await resp.json()
            assert resp.status == 400
        assert status["message"] == (
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
            'unknown field "metadata.bogus", unknown field "extra"'
        )
        async with session.post(url, json=body, params={"fieldValidation": "Warn"}) as resp:
            stored = await resp.json()
            assert resp.status == 201
            assert resp.headers.getall("Warning") == [
                '299 - "unknown field \\"metadata.bogus\\""',
                '299 - "unknown field \\"extra\\""',
            ]
        assert "extra" not in stored and "bogus" not in stored["metadata"]
        patch = {"data": {"c": "d"}, "nope": True}
        async with session.patch(
            url + "/cm",
            json=patch,
            params={"fieldValidation": "Strict"},
            headers={"Content-Type": "application/merge-patch+json"},
        ) as resp:
            assert resp.status == 400
            assert (await resp.json())["message"] == 'strict decoding error: unknown field "nope"'


async def test_openapi_documents_carry_the_schemas(world: World) -> None:
    core = await document(world, "api/v1")
    schemas = core["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["properties"]["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    assert schemas["io.k8s.api.core.v1.PodSpec"]["required"] == ["containers"]
    container = schemas["io.k8s.api.core.v1.Container"]
    assert container["properties"]["name"]["type"] == "string"
    assert container["properties"]["ports"]["items"] == {
        "$ref": "#/components/schemas/io.k8s.api.core.v1.ContainerPort"
    }
    meta = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    assert meta["properties"]["creationTimestamp"] == {
        "type": "string",
        "format": "date-time",
        "description": meta["properties"]["creationTimestamp"]["description"],
    }
    event = schemas["io.k8s.api.core.v1.Event"]
    assert event["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Event", "version": "v1"}]
    # Every reference resolves within the document.
    refs = set()

    def collect(value: Any) -> None:
        if isinstance(value, dict):
            if "$ref" in value:
                refs.add(value["$ref"].removeprefix("#/components/schemas/"))
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(schemas)
    assert refs <= set(schemas)

    custom = await document(world, f"apis/{GROUP}/{VERSION}")
    schemas = custom["components"]["schemas"]
    ars = schemas[f"com.github.actions.{VERSION}.AutoscalingRunnerSet"]
    assert ars["x-kubernetes-group-version-kind"] == [
        {"group": GROUP, "kind": "AutoscalingRunnerSet", "version": VERSION}
    ]
    crd = world.api.registry.get(GROUP, VERSION, ARS)
    assert crd is not None and crd.schema is not None
    assert ars["properties"]["spec"] == crd.schema["properties"]["spec"]
    assert ars["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas


@pytest.mark.parametrize("path", ["apis/apps/v1", "apis/events.k8s.io/v1", "apis/apiextensions.k8s.io/v1"])
async def test_every_kind_of_a_group_version_has_its_schema(world: World, path: str) -> None:
    doc = await document(world, path)
    kinds = {
        (op["x-kubernetes-group-version-kind"]["kind"])
        for item in doc["paths"].values()
        for op in item.values()
        if op["x-kubernetes-group-version-kind"]["kind"] != "Scale"
    }
    declared = {
        gvk["kind"]
        for schema in doc["components"]["schemas"].values()
        for gvk in schema.get("x-kubernetes-group-version-kind", [])
    }
    assert kinds and kinds <= declared
