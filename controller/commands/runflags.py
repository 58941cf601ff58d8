"""The values of ``arcsm run``'s options: parsed and checked, each failure one line naming the flag.

A count or an age of 0 turns a bound off (None in the settings); a size takes a binary or decimal unit
(``512Mi``, ``1Gi``, ``2G``); a repeatable option's values may each hold several separated by commas.
"""

from __future__ import annotations

import re
from datetime import timedelta

SIZE = re.compile(r"(\d+)(Ki|Mi|Gi|Ti|K|M|G|T)?")
UNITS: dict[str | None, int] = {
    None: 1,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
}


class BadOption(ValueError):
    """An option's value cannot be used: the message says which and what to pass."""


def names(values: list[str] | None) -> tuple[str, ...]:
    """The values of a repeatable option: each occurrence (or word of its environment variable, which
    click splits on whitespace) may hold several separated by commas."""
    return tuple(name.strip() for value in values or () for name in value.split(",") if name.strip())


def size(text: str, flag: str) -> int | None:
    """Bytes from ``512Mi``, ``1Gi``, ``2G`` or a plain number; None for 0 (no bound)."""
    found = SIZE.fullmatch(text.strip())
    if found is None:
        raise BadOption(f"{flag} {text!r} is not a size: pass bytes or a number with Ki, Mi, Gi, K, M or G")
    return int(found[1]) * UNITS[found[2]] or None


def days(value: float, flag: str) -> timedelta | None:
    if value < 0:
        raise BadOption(f"{flag} must not be negative (0: no bound), not {value}")
    return timedelta(days=value) or None


def count(value: int, flag: str) -> int | None:
    if value < 0:
        raise BadOption(f"{flag} must not be negative (0: no bound), not {value}")
    return value or None


def choice(value: str, allowed: tuple[str, ...], flag: str) -> str:
    if value not in allowed:
        raise BadOption(f"{flag} must be one of {', '.join(allowed)}, not {value!r}")
    return value


# The per-kind concurrency flags, by the kind each bounds.
CONCURRENCY_FLAGS = {
    "AutoscalingRunnerSet": "--ars-concurrency",
    "EphemeralRunnerSet": "--ers-concurrency",
    "EphemeralRunner": "--runner-concurrency",
    "AutoscalingListener": "--listener-concurrency",
}


def per_kind(bounds: dict[str, int | None]) -> dict[str, int]:
    """The per-kind concurrency flags given (by kind) as ``QueueSettings.per_kind``."""
    for kind, bound in bounds.items():
        if bound is not None and bound < 1:
            flag = CONCURRENCY_FLAGS[kind]
            raise BadOption(f"{flag} must be at least 1 (leave it unset to bound by --workers only)")
    return {kind: bound for kind, bound in bounds.items() if bound is not None}


def readable_size(value: int | None) -> str:
    """``size``'s inverse for a default: the largest binary unit that divides ``value``."""
    for unit in ("Ti", "Gi", "Mi", "Ki"):
        if value and value % UNITS[unit] == 0:
            return f"{value // UNITS[unit]}{unit}"
    return str(value or 0)


def at_least_one(value: int, flag: str) -> int:
    if value < 1:
        raise BadOption(f"{flag} must be at least 1, not {value}")
    return value


def positive(value: float, flag: str) -> float:
    if value <= 0:
        raise BadOption(f"{flag} must be more than 0 seconds, not {value}")
    return value


def per_second(value: float, flag: str) -> float:
    if value <= 0:
        raise BadOption(f"{flag} must be more than 0 per second, not {value}")
    return value
