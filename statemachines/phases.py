"""The phases of the four kinds, as the strings their CRDs carry in ``status.phase``.

``NONE`` is the empty phase of an object no controller has written yet. The AutoscalingListener has no
phase field; ``ListenerState`` names the implicit states arcsm tracks for it (§3.4 of the spec).
"""

from __future__ import annotations

import enum


class ArsPhase(enum.StrEnum):
    NONE = ""
    PENDING = "Pending"
    RUNNING = "Running"
    OUTDATED = "Outdated"


class ErsPhase(enum.StrEnum):
    NONE = ""
    RUNNING = "Running"
    OUTDATED = "Outdated"


class ErPhase(enum.StrEnum):
    NONE = ""
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    OUTDATED = "Outdated"

    @classmethod
    def of(cls, value: object) -> ErPhase:
        """A runner's phase; unknown strings (a mirrored pod phase such as ``Unknown``) count as Pending."""
        try:
            return cls(str(value or ""))
        except ValueError:
            return cls.PENDING


class ListenerState(enum.StrEnum):
    NONE = ""
    PENDING = "Pending"  # building its ServiceAccount, Role, RoleBinding, Secrets or pod
    RUNNING = "Running"  # the listener container runs
    BACKOFF = "BackOff"  # the pod kept failing: waiting before it is recreated
