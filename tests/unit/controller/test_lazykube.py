"""``lazykube.install`` in fresh interpreters (this one has kubernetes_asyncio loaded whole): every public
name of the library's four package indexes resolves through the stand-ins to what the real index holds,
while a process that asks for one API loads that API's module and no other; the library's own
``from kubernetes_asyncio.client import ...`` (its kubeconfig loaders) works through them."""

from __future__ import annotations

import json
import subprocess
import sys

from kubernetes_asyncio import client

from controller.commands import lazykube

# What each public name of the four packages is: "module:qualname" for a class or function, the module's
# name for a module. Run once with the real packages and once with the stand-ins.
NAMES = """
import json, sys, types
from controller.commands import lazykube

lazy = {lazy}
installed = lazykube.install() if lazy else None
import kubernetes_asyncio.client.api, kubernetes_asyncio.client.models

def what(value):
    if isinstance(value, types.ModuleType):
        return value.__name__
    return f"{{getattr(value, '__module__', '')}}:{{getattr(value, '__qualname__', repr(value))}}"

names = {{}}
for package in lazykube.PACKAGES:
    module = sys.modules[package]
    public = sorted(n for n in dir(module) if not n.startswith("_"))
    names[package] = {{n: what(getattr(module, n)) for n in public}}
print(json.dumps({{"installed": installed, "names": names}}))
"""

ONE_API = """
import json, sys
from controller.commands import lazykube

lazykube.install()
from kubernetes_asyncio import client, config

apis = sorted(m for m in sys.modules if m.startswith("kubernetes_asyncio.client.api."))
models = [m for m in sys.modules if m.startswith("kubernetes_asyncio.client.models.")]
client.CoordinationV1Api
print(json.dumps({{
    "apis_before": apis,
    "models_before": len(models),
    "apis_after": sorted(m for m in sys.modules if m.startswith("kubernetes_asyncio.client.api.")),
    "loader": config.load_kube_config.__module__,
    "version": client.__version__,
    "again": lazykube.install(),
}}))
"""


def run(code: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_every_public_name_of_the_real_packages_resolves_to_the_same_thing() -> None:
    real = run(NAMES.format(lazy=False))["names"]
    lazy = run(NAMES.format(lazy=True))
    assert lazy["installed"] is True
    assert isinstance(real, dict)
    names = lazy["names"]
    assert isinstance(names, dict)
    for package in lazykube.PACKAGES:
        assert len(real[package]) > 4, package
        # ``from __future__ import absolute_import`` leaves a name in a module, not one of the library's.
        exported = {n: v for n, v in real[package].items() if not v.startswith("__future__:")}
        missing = {n: v for n, v in exported.items() if names[package].get(n) != v}
        assert not missing, (package, sorted(missing)[:10])


def test_a_process_loads_the_api_it_uses_and_no_model_until_one_is_read() -> None:
    found = run(ONE_API.format())
    assert found["apis_before"] == []
    assert found["models_before"] == 0
    assert found["apis_after"] == ["kubernetes_asyncio.client.api.coordination_v1_api"]
    assert found["loader"] == "kubernetes_asyncio.config.kube_config"
    assert found["version"] == client.__version__
    assert found["again"] is False  # once the packages are in sys.modules, it does nothing


def test_install_does_nothing_where_the_packages_are_loaded_already() -> None:
    assert lazykube.install() is False
    assert not isinstance(sys.modules["kubernetes_asyncio.client"], lazykube.LazyPackage)
