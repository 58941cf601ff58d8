"""Effects: what a decision asks the world to do, as data.

A machine never performs I/O. It returns effects; the controller records them with the decision (one
atomic append, the outbox) and an executor performs them, appending an ``effect_result`` for each.
Every effect has a deterministic ``key`` so a re-executed effect after a crash is recognised and so
creates can treat AlreadyExists as success.

Secret material never appears in an effect: ``CreateJitConfigSecret`` and ``CreateListenerConfigSecret``
name what to build; the executor reads the credentials and writes the Secret itself.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statemachines.jsonvalues import JsonObject


@dataclass(frozen=True)
class ObjectRef:
    """Which object: the API kind (``AutoscalingRunnerSet``, ``Pod``, ...), namespace and name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Effect:
    """Base of every effect. ``reason`` says why, for the journal and the logs."""

    @property
    def key(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class CreateObject(Effect):
    """Create ``body`` (which names its kind, namespace and name). AlreadyExists counts as success."""

    target: ObjectRef
    body: JsonObject

    @property
    def key(self) -> str:
        return f"create:{self.target}"


@dataclass(frozen=True)
class MergePatch(Effect):
    """A JSON merge patch built from the fields a decision changes, never a whole object.

    ``resource_version`` makes it conditional (409 when the object moved on); ``subresource`` is
    ``"status"`` for status writes.
    """

    target: ObjectRef
    patch: JsonObject
    subresource: str = ""
    resource_version: str = ""

    @property
    def key(self) -> str:
        sub = f"/{self.subresource}" if self.subresource else ""
        return f"patch:{self.target}{sub}"


@dataclass(frozen=True)
class DeleteObject(Effect):
    """Delete an object; ``uid`` is a precondition when set. NotFound counts as success."""

    target: ObjectRef
    uid: str = ""
    propagation: str = ""  # "", "Background", "Foreground" or "Orphan"

    @property
    def key(self) -> str:
        return f"delete:{self.target}"


@dataclass(frozen=True)
class DeleteMatching(Effect):
    """Delete every object of a kind in a namespace that matches a label selector (runner hook pods)."""

    kind: str
    namespace: str
    label_selector: str

    @property
    def key(self) -> str:
        return f"delete-matching:{self.kind}/{self.namespace}?{self.label_selector}"


@dataclass(frozen=True)
class RequeueAfter(Effect):
    """Decide this object again after ``seconds``: the executor appends a ``timer`` record then."""

    target: ObjectRef
    seconds: float

    @property
    def key(self) -> str:
        return f"requeue:{self.target}"


@dataclass(frozen=True)
class EmitEvent(Effect):
    """A Kubernetes Event on an object (Normal or Warning), for users reading ``kubectl describe``."""

    target: ObjectRef
    uid: str
    type: str  # Normal | Warning
    reason: str
    message: str
    # The table trigger of a phase-change Event: two transitions of one object never share a key.
    trigger: str = ""

    @property
    def key(self) -> str:
        base = f"event:{self.target}:{self.reason}"
        return f"{base}:{self.trigger}" if self.trigger else base


class ActionsOp(enum.StrEnum):
    """The Actions service calls the controllers make (§2.1–2.3)."""

    GET_RUNNER_GROUP_BY_NAME = "GetRunnerGroupByName"
    GET_RUNNER_SCALE_SET = "GetRunnerScaleSet"
    GET_RUNNER_SCALE_SET_BY_ID = "GetRunnerScaleSetById"
    CREATE_RUNNER_SCALE_SET = "CreateRunnerScaleSet"
    UPDATE_RUNNER_SCALE_SET = "UpdateRunnerScaleSet"
    DELETE_RUNNER_SCALE_SET = "DeleteRunnerScaleSet"
    GET_RUNNER_BY_NAME = "GetRunnerByName"
    REMOVE_RUNNER = "RemoveRunner"


@dataclass(frozen=True)
class ActionsScope:
    """Which Actions client: the config URL and the Secret (in ``namespace``) holding its credentials."""

    config_url: str
    namespace: str
    secret_name: str
    proxy: JsonObject = field(default_factory=dict)
    tls: JsonObject = field(default_factory=dict)
    # The object's vaultConfig (§2.0): when set, ``secret_name`` is the vault lookup key.
    vault: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class ActionsCall(Effect):
    """One Actions service call for ``subject`` (the object whose decision made it)."""

    subject: ObjectRef
    scope: ActionsScope
    op: ActionsOp
    args: JsonObject = field(default_factory=dict)
    # Which state of the subject the call serves (e.g. its uid and generation). Part of the key, never
    # sent: a result recorded for an older state is not read as this state's answer.
    epoch: str = ""

    @property
    def key(self) -> str:
        detail = ",".join(f"{k}={self.args[k]}" for k in sorted(self.args))
        epoch = f"@{self.epoch}" if self.epoch else ""
        return f"actions:{self.subject}{epoch}:{self.op}({detail})"


@dataclass(frozen=True)
class CreateJitConfigSecret(Effect):
    """Generate a runner's JIT config and store it in the Secret ``target`` (owned by the runner).

    The executor calls GenerateJitRunnerConfig and writes ``jitToken``, ``runnerName``, ``runnerId`` and
    ``scaleSetId`` into the Secret; only the runner id and name come back in the effect result. It also
    writes them as the annotations ``naming.ANNOTATION_JIT_RUNNER_ID``/``_NAME`` on the Secret, which is
    where the EphemeralRunner machine reads them. When the Secret already exists and ``owner``'s uid owns
    it, it generates nothing and answers with the id and name that Secret holds, so an effect executed
    twice registers one runner; a Secret of that name another owner holds (a predecessor's of the same
    runner name) is ``{"ok": false, "error": "AlreadyExists"}``, never its runner. A RunnerExists answer
    from the service is the result ``{"ok": false, "error": "RunnerExists"}``.
    """

    target: ObjectRef
    scope: ActionsScope
    runner_name: str
    scale_set_id: int
    work_folder: str
    owner: JsonObject  # the ownerReference to the EphemeralRunner
    metadata: JsonObject = field(default_factory=dict)  # labels and annotations for the Secret

    @property
    def key(self) -> str:
        return f"jit:{self.target}"


@dataclass(frozen=True)
class CreateListenerConfigSecret(Effect):
    """Build the listener's ``config.json`` (§5.2) from ``settings`` plus the credentials of ``scope``
    and store it in the Secret ``target``. The credentials are read and written by the executor only, and
    so is ``server_root_ca`` (the PEM of the ConfigMap key ``scope.tls`` names, in ``scope.namespace``)."""

    target: ObjectRef
    scope: ActionsScope
    settings: JsonObject  # every config.json key but the credentials
    owner: JsonObject
    metadata: JsonObject = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"listener-config:{self.target}"


@dataclass(frozen=True)
class WriteProxySecret(Effect):
    """Create the proxy Secret ``target``, or update it when its data or metadata differ (§1.5).

    The executor builds ``http_proxy``/``https_proxy``/``no_proxy`` from ``proxy`` (a ``proxy`` block of a
    runner or listener spec), reading the credentials its ``credentialSecretRef`` Secrets hold in
    ``secrets_namespace`` (the scale set's: a listener's proxy Secret lives in the controller's namespace,
    its credentials in the scale set's, as upstream reads them; ``target.namespace`` when empty), and
    stamps ``actions.github.com/integrity-hash`` over the data; it writes nothing when the live Secret
    already matches. The credentials never enter the effect or its result.
    """

    target: ObjectRef
    proxy: JsonObject
    owner: JsonObject  # the controller ownerReference
    metadata: JsonObject = field(default_factory=dict)  # labels and annotations
    secrets_namespace: str = ""

    @property
    def key(self) -> str:
        return f"proxy-secret:{self.target}"


def release_key(target: ObjectRef, runner_id: int) -> str:
    return f"release:{target}#{runner_id}"


@dataclass(frozen=True)
class ReleaseRunner(Effect):
    """Remove a registered runner from the Actions service, then delete its EphemeralRunner (§2.2).

    The executor calls RemoveRunner(``runner_id``) with ``scope``'s client. AgentNotFound counts as removed
    (§8 item 7). JobStillRunning ends the effect with nothing deleted. Otherwise it deletes ``target``
    (``uid`` as a precondition; NotFound counts as success). The two steps are one effect so their order
    holds and a crash between them is safe: the outbox re-executes the effect, RemoveRunner answers
    AgentNotFound, and the delete follows.

    The result follows ``outcomes``: ``{"ok": true}`` once both steps are done, ``{"ok": false, "error":
    "JobStillRunning"}`` when the service refused, or another failure. It is stored under ``key`` (which
    names the runner registration, so it is never confused with a later runner of the same name) and
    handed to ``subject``'s next decisions: JobStillRunning marks the runner busy for a while, after
    which it is asked again (its job may have finished), success counts it as deleting until the deletion
    is observed, and any other failure lets the next decision ask again (the executor must not suppress a
    re-emitted effect whose last result failed).
    """

    subject: ObjectRef
    target: ObjectRef
    uid: str
    scope: ActionsScope
    runner_id: int

    @property
    def key(self) -> str:
        return release_key(self.target, self.runner_id)


# -- the journal form of effects (the outbox must survive a crash and replay exactly) --------------------

_NESTED = {"target": ObjectRef, "subject": ObjectRef, "scope": ActionsScope}


# Fields whose name is the discriminator ``type``, stored under another name (EmitEvent's Normal/Warning).
_JSON_NAMES = {"type": "event_type"}


def to_json(effect: Effect) -> dict[str, Any]:
    """An effect as a JSON object: its type name and its fields (nested refs as objects)."""
    out: dict[str, Any] = {"type": type(effect).__name__}
    for name in effect.__dataclass_fields__:
        value = getattr(effect, name)
        if isinstance(value, ObjectRef | ActionsScope):
            value = {f: getattr(value, f) for f in value.__dataclass_fields__}
        elif isinstance(value, enum.Enum):
            value = value.value
        out[_JSON_NAMES.get(name, name)] = value
    return out


def from_json(data: Mapping[str, Any]) -> Effect:
    """The inverse of ``to_json``."""
    types: dict[str, type[Effect]] = {cls.__name__: cls for cls in _effect_types()}
    cls = types[data["type"]]
    kwargs: dict[str, Any] = {}
    for name in cls.__dataclass_fields__:
        stored = _JSON_NAMES.get(name, name)
        if stored not in data:
            continue
        value = data[stored]
        if name in _NESTED and isinstance(value, Mapping):
            value = _NESTED[name](**value)
        elif name == "op":
            value = ActionsOp(value)
        kwargs[name] = value
    return cls(**kwargs)


def _effect_types() -> list[type[Effect]]:
    found: list[type[Effect]] = []
    pending: list[type[Effect]] = [Effect]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.append(sub)
            pending.append(sub)
    return found
