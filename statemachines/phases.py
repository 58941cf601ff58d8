"""The phases of the four kinds, as the strings their CRDs carry in ``status.phase``.

``NONE`` is the empty phase of an object no controller has written yet. An EphemeralRunner mirrors its
pod's phase, so it is ``UNKNOWN`` while its pod's is (the node stopped reporting); wherever runners are
counted, ``UNKNOWN`` counts as pending, as upstream's runner set counts it. The AutoscalingListener has no
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
    UNKNOWN = "Unknown"

    @classmethod
    def of(cls, value: object) -> ErPhase:
        """A runner's phase; a string that is no phase counts as Pending."""
        try:
            return cls(str(value or ""))
        except ValueError:
            return cls.PENDING


class ListenerState(enum.StrEnum):
    NONE = ""
    PENDING = "Pending"  # building its ServiceAccount, Role, RoleBinding, Secrets or pod
    RUNNING = "Running"  # the listener container runs
    BACKOFF = "BackOff"  # the pod kept failing: waiting before it is recreated
