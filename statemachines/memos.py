"""Remembered results of pure functions of observed objects, keyed by the objects' identity.

The machines build the same desired objects and run the same drift checks over the same observed
objects in decision after decision: an AutoscalingRunnerSet decided again because its runner set's
status moved builds its runner set and listener bodies from an ARS that has not changed, and a listener
decided again because its pod moved builds its ServiceAccount, Role and RoleBinding from a listener that
has not changed. The projection hands out the same object (the same Python mapping) until a newer one
is observed, so a result can be kept per object identity and given back while the object is unchanged.

``by_identity(size)`` wraps such a function. A call is looked up by the identity of every argument but a
string (a string is looked up by its value: a name read from a newer observation is a new string of
the same text), and a kept result is only given back when each other argument *is* the one it was
computed from (the arguments are kept with it, so an identity is never reused while its entry lives).
A new object (a newer observation, a new settings value) or another name is a new key: its result is
computed and kept, and the oldest entry goes once ``size`` are kept.

What this relies on, and what the design already asks: observed objects and settings are never
modified in place (DESIGN: read-only mappings; a write is a merge patch), the wrapped function reads
nothing but its arguments, and its result is never modified by a caller (it is handed to every later
caller with the same arguments). A call that raises keeps nothing.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class ByIdentity(Generic[P, R]):
    """``function``, its results kept per the identity of its positional arguments (module docstring)."""

    def __init__(self, function: Callable[P, R], size: int) -> None:
        self.function = function
        self.size = size
        self._kept: collections.OrderedDict[tuple[int | str, ...], tuple[tuple[Any, ...], R]] = (
            collections.OrderedDict()
        )
        functools.update_wrapper(self, function)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:  # keyword calls are not remembered
            return self.function(*args, **kwargs)
        key = tuple(a if type(a) is str else id(a) for a in args)
        kept = self._kept.get(key)
        if kept is not None and all(a is b or type(b) is str for a, b in zip(kept[0], args, strict=True)):
            self._kept.move_to_end(key)
            return kept[1]
        value = self.function(*args, **kwargs)  # no keywords here: positional arguments only
        self._kept[key] = (args, value)
        self._kept.move_to_end(key)
        if len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._kept)

    def forget(self) -> None:
        self._kept.clear()


def by_identity(size: int) -> Callable[[Callable[P, R]], ByIdentity[P, R]]:
    """Decorate a pure function of observed objects: see the module docstring."""

    def wrap(function: Callable[P, R]) -> ByIdentity[P, R]:
        return ByIdentity(function, size)

    return wrap
