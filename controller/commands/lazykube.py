"""kubernetes_asyncio's package indexes, loaded lazily: a process imports the API and model classes it uses.

kubernetes_asyncio is generated code: ``kubernetes_asyncio/client/__init__.py`` imports every API class
(138 modules) and ``client/models/__init__.py`` every model class (1,536), and ``kubernetes_asyncio``
itself imports ``dynamic``, ``stream``, ``utils`` and ``watch``. That is about 28 MB of a controller's
memory and 850 modules, for the five APIs and the handful of models arcsm reaches (its objects are
read and written as JSON; only the Lease comes back typed).

``install()`` puts in ``sys.modules`` a stand-in for each of those four packages before anything imports
them: a module with the real package's ``__path__``, so ``kubernetes_asyncio.client.api_client`` and the
other submodules load from the real files as they always do, and a module ``__getattr__`` (PEP 562) that
imports the submodule holding a name on its first use (``client.CoreV1Api``, ``models.V1Lease``, as
``ApiClient`` deserialises by name). The names and their modules are read from the package's own
``__init__.py`` (its ``from kubernetes_asyncio.client.api.core_v1_api import CoreV1Api`` lines), so the
stand-in answers exactly what the package would, and nothing of the library's code is replaced.

Rules: a process that wants it calls ``install()`` first, before any import of kubernetes_asyncio (``arcsm
run`` and ``arcsm listener`` do, as their first step); once the real packages are loaded it does nothing.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import sys
import types
from pathlib import Path
from typing import Any, Final

ROOT: Final = "kubernetes_asyncio"
# The packages whose ``__init__`` imports more than a process uses, with the import lines to read.
PACKAGES: Final = (ROOT, f"{ROOT}.client", f"{ROOT}.client.api", f"{ROOT}.client.models")
_FROM_IMPORT: Final = re.compile(r"^from (kubernetes_asyncio(?:\.\w+)+) import (\w+)\s*(?:#.*)?$", re.M)
_IMPORT_AS: Final = re.compile(r"^import (kubernetes_asyncio(?:\.\w+)+) as (\w+)\s*$", re.M)
_VERSION: Final = re.compile(r"^__version__ = [\"']([^\"']+)[\"']", re.M)


class LazyPackage(types.ModuleType):
    """A package whose names are imported from their submodules on first use."""

    _names: dict[str, str]  # name -> the module that defines it (or that is it, for a submodule)

    def __getattr__(self, name: str) -> Any:
        origin = self._names.get(name)
        if origin is None:
            # A submodule the index does not import (``client.rest``): the package would have it once
            # anything imported it, as an attribute the import system sets.
            origin = f"{self.__name__}.{name}"
            if (
                name.startswith("_")
                or importlib.machinery.PathFinder.find_spec(origin, self.__path__) is None
            ):
                raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        module = importlib.import_module(origin)
        value = module if origin == f"{self.__name__}.{name}" else getattr(module, name)
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._names})


def _stand_in(name: str, spec: importlib.machinery.ModuleSpec) -> LazyPackage:
    assert spec.origin is not None and spec.submodule_search_locations is not None
    source = Path(spec.origin).read_text(encoding="utf-8")
    module = LazyPackage(name)
    module.__spec__ = spec
    module.__file__ = spec.origin
    module.__path__ = list(spec.submodule_search_locations)
    module.__package__ = name
    module._names = {attr: origin for origin, attr in _FROM_IMPORT.findall(source)}
    module._names.update({attr: origin for origin, attr in _IMPORT_AS.findall(source)})
    version = _VERSION.search(source)
    if version:
        module.__version__ = version.group(1)  # type: ignore[attr-defined]
    return module


def install() -> bool:
    """Put the lazy stand-ins in ``sys.modules``; False (and nothing done) when kubernetes_asyncio is
    already imported or not installed."""
    if any(name in sys.modules for name in PACKAGES):
        return False
    for name in PACKAGES:
        above, _, short = name.rpartition(".")
        parent = sys.modules.get(above) if above else None
        if isinstance(parent, LazyPackage):
            spec = importlib.machinery.PathFinder.find_spec(name, parent.__path__)
        else:
            spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or spec.submodule_search_locations is None:
            for done in PACKAGES:
                sys.modules.pop(done, None)
            return False
        module = _stand_in(name, spec)
        sys.modules[name] = module
        if isinstance(parent, LazyPackage):
            parent._names.pop(short, None)
            setattr(parent, short, module)
    return True
