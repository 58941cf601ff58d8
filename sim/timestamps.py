"""Kubernetes timestamps as the API writes them: ``metav1.Time`` (seconds) and ``MicroTime``, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime


def format_time(t: datetime) -> str:
    """A ``metav1.Time``: ``2025-01-02T03:04:05Z``."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(t: datetime) -> str:
    """A ``metav1.MicroTime`` (a Lease's ``renewTime``): ``2025-01-02T03:04:05.000006Z``."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
