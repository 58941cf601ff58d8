"""The structured keys of the controller's log lines (DESIGN "Conventions").

A line about an object carries ``kind``, ``namespace``, ``name`` and, where they apply, ``seq``,
``from_phase``, ``to_phase`` and ``trigger``. ``name`` is an attribute every ``logging.LogRecord`` already
has (the logger's name), so the object's name travels as ``object_name`` and ``FIELDS`` says how a
formatter spells each key.
"""

from __future__ import annotations

from typing import Any

from statemachines.effects import ObjectRef

# (key written by a formatter, attribute of the LogRecord)
FIELDS: tuple[tuple[str, str], ...] = (
    ("kind", "kind"),
    ("namespace", "namespace"),
    ("name", "object_name"),
    ("seq", "seq"),
    ("from_phase", "from_phase"),
    ("to_phase", "to_phase"),
    ("trigger", "trigger"),
)


def about(ref: ObjectRef, *, seq: int | None = None, **more: Any) -> dict[str, Any]:
    """The ``extra`` of a log line about ``ref``."""
    extra: dict[str, Any] = {"kind": ref.kind, "namespace": ref.namespace, "object_name": ref.name, **more}
    if seq is not None:
        extra["seq"] = seq
    return extra
