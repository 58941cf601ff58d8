"""``DeleteOptions`` as kube-apiserver's DELETE and DELETECOLLECTION handlers check them (the server reads
them from the request body, else from the query). ``validate`` is
``ValidateDeleteOptions``: 422 on ``DeleteOptions.meta.k8s.io`` for a ``dryRun`` other than ``All``, an
unknown ``propagationPolicy``, or both ``orphanDependents`` and ``propagationPolicy``. ``dry_run`` says
whether the delete is only to be answered (``dryRun: [All]``): the verbs then check and answer as they
would, and store nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim import errors, validation

ALL = "All"
POLICIES = ("Foreground", "Background", "Orphan")


def validate(options: Mapping[str, Any]) -> None:
    """``ValidateDeleteOptions``: raise the 422 when the options are not valid."""
    problems: list[errors.FieldError] = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        problems.append(
            errors.invalid_value(
                "propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set"
            )
        )
    if policy is not None and policy not in POLICIES:
        problems.append(errors.not_supported("propagationPolicy", policy, (*POLICIES, "nil")))
    dry_run = options.get("dryRun") or []
    if not isinstance(dry_run, list):
        dry_run = [dry_run]
    if any(value != ALL for value in dry_run):
        problems.append(
            errors.not_supported("dryRun", errors.GoLiteral(validation.go_string_slice(dry_run)), (ALL,))
        )
    if problems:
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", problems)


def dry_run(options: Mapping[str, Any]) -> bool:
    """Whether the delete is a dry run (``dryRun: [All]``)."""
    value = options.get("dryRun") or []
    return ALL in (value if isinstance(value, list) else [value])
