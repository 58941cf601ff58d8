"""Secret values and scrubbing: what keeps tokens, JIT configs and private keys out of logs and errors.

``SecretStr`` wraps every secret-bearing value the package handles (a PAT, the App private key, the
installation, registration, admin and message-queue tokens, the encoded JIT config). Its ``repr`` and
``str`` are ``'***'``; the value is read only through ``reveal()``, at the one place it is put on the
wire. It is deliberately not a ``str`` subclass, so an f-string, ``json.dumps`` or a journal record can
never carry the value by accident (``json.dumps`` raises ``TypeError`` on it).

``scrub(text)`` is the second line of defence for text the package did not produce: error messages
quoted from a server's response body. It replaces anything shaped like a JWT or a GitHub token.
"""

from __future__ import annotations

import re
from typing import Final

MASK: Final = "***"

# JWTs (admin and message-queue tokens, App JWTs) and GitHub token formats (ghp_, gho_, ghu_, ghs_,
# ghr_, github_pat_), plus "Bearer/RemoteAuth <anything>" should a server echo a header back.
_SECRET_PATTERNS: Final = re.compile(
    r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"
    r"|\bgh[pousr]_[A-Za-z0-9_]{8,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{8,}"
    r"|\b(?:Bearer|RemoteAuth)\s+[A-Za-z0-9._~+/=-]{8,}",
    re.IGNORECASE,
)


class SecretStr:
    """A secret string whose ``repr``/``str`` never show it. Equal when the values are equal."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself: call this only where the value goes on the wire."""
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        return len(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretStr) and other._value == self._value

    def __hash__(self) -> int:
        return hash((SecretStr, self._value))

    def __repr__(self) -> str:
        return f"SecretStr('{MASK}')"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return MASK

    def __reduce__(self) -> tuple[object, ...]:
        # Pickling would be a way out of the process; nothing in arcsm needs it.
        raise TypeError("a SecretStr cannot be pickled")


def scrub(text: str) -> str:
    """``text`` with anything shaped like a token replaced by ``***``."""
    return _SECRET_PATTERNS.sub(MASK, text)


def one_line(text: str, *, limit: int = 300) -> str:
    """``text`` scrubbed, on one line and at most ``limit`` characters: fit for an error message."""
    flat = " ".join(scrub(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
