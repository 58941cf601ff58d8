"""The effect executor: step 5 of the loop (DESIGN.md "Act").

    executor = Executor(api=api, clients=ActionsClients(), settings=ExecutorSettings(qps=20, burst=30))
    result = await executor.execute(effect)    # an EffectResult; the runtime appends result.to_body()

``execute`` dispatches on the effect's type (``functools.singledispatch``, one function per type) to:

=============================  ==================================================
effect                         performed by
=============================  ==================================================
CreateObject, MergePatch,      ``kubeeffects`` (Kubernetes writes through
DeleteObject, DeleteMatching,  ``kubewriting.Kube``: a generic REST path per kind,
EmitEvent                      one QPS/burst token bucket for every request)
ActionsCall, ReleaseRunner     ``actionseffects`` (through ``ActionsClients``)
CreateJitConfigSecret,         ``secreteffects`` (secret material read or generated
CreateListenerConfigSecret,    at execution, written into Secret data only)
WriteProxySecret
RequeueAfter                   nobody: it is a timer, which the runtime turns into a
                               ``timer`` record; executing one raises ``TypeError``
=============================  ==================================================

The result is a ``statemachines.effectresults.EffectResult``, journaled as ``{"ok": true, ...facts}`` or
``{"ok": false, "error": CLASS, "message": TEXT}`` (see ``results`` for the classes, and each module above
for its facts). ``execute`` never raises for a Kubernetes, Actions-service or credentials failure: those
become failed results, logged at warning, except a create or patch the API server refuses as Invalid,
which no retry of the same object can fix: that is logged at error. It raises ``TypeError`` for what is
not an executable effect (a wiring bug, not a world state). A result never holds a token, a JIT config or
a private key, and neither does a log line.

What the API server answers about a Secret (read, written or deleted by any effect) also goes to the
``observer`` (``observing``): no watcher lists Secrets, so those answers are how the controller observes
them.

Retries are not the executor's business: a failed result is read by the next decision, which asks again
(the runtime paces it); ``retryAfter`` in a failure says when the server asked to be called back.
"""

from __future__ import annotations

import functools
import logging

from kubernetes_asyncio import client

from actions import errors as actions_errors
from controller.executor import actionseffects, kubeeffects, results, secreteffects
from controller.executor.actionsclients import ActionsClients
from controller.executor.contexts import Context, ExecutorSettings
from controller.executor.errors import ExecutionError
from controller.executor.kubewriting import Kube
from controller.executor.observing import Observations, Observer
from statemachines import effects
from statemachines.effectresults import EffectResult, Failure

__all__ = ["ActionsClients", "Executor", "ExecutorSettings", "perform"]

log = logging.getLogger(__name__)


class Executor:
    def __init__(
        self,
        *,
        api: client.ApiClient,
        clients: ActionsClients,
        settings: ExecutorSettings,
        observer: Observer | None = None,
    ) -> None:
        """``observer`` journals what the API server answers about the kinds no watcher lists
        (``observing``); without one those answers are not reported."""
        kube = Kube(
            api,
            qps=settings.qps,
            burst=settings.burst,
            timeout=settings.request_timeout,
            observations=Observations(observer),
        )
        self._context = Context(kube=kube, clients=clients, settings=settings)

    async def execute(self, effect: effects.Effect) -> EffectResult:
        """Perform ``effect`` and return its result (see the module docstring)."""
        try:
            result = await perform(effect, self._context)
        except ExecutionError as exc:
            result = results.from_execution(exc)
        except actions_errors.ActionsError as exc:
            result = results.from_actions(exc)
        _log(effect, result)
        return result


@functools.singledispatch
async def perform(effect: effects.Effect, ctx: Context) -> EffectResult:
    """Perform one effect; failures raise ``ExecutionError`` or ``ActionsError``."""
    raise TypeError(f"no executor for the effect type {type(effect).__name__}")


@perform.register
async def _requeue_after(effect: effects.RequeueAfter, ctx: Context) -> EffectResult:
    raise TypeError(
        "RequeueAfter is a timer, not work for the executor: the runtime appends a timer record for it"
    )


perform.register(effects.CreateObject, kubeeffects.create_object)
perform.register(effects.MergePatch, kubeeffects.merge_patch)
perform.register(effects.DeleteObject, kubeeffects.delete_object)
perform.register(effects.DeleteMatching, kubeeffects.delete_matching)
perform.register(effects.EmitEvent, kubeeffects.emit_event)
perform.register(effects.ActionsCall, actionseffects.actions_call)
perform.register(effects.ReleaseRunner, actionseffects.release_runner)
perform.register(effects.CreateJitConfigSecret, secreteffects.create_jit_config_secret)
perform.register(effects.CreateListenerConfigSecret, secreteffects.create_listener_config_secret)
perform.register(effects.WriteProxySecret, secreteffects.write_proxy_secret)


def _subject(effect: effects.Effect) -> tuple[str, str, str]:
    ref = getattr(effect, "target", None) or getattr(effect, "subject", None)
    if isinstance(ref, effects.ObjectRef):
        return ref.kind, ref.namespace, ref.name
    if isinstance(effect, effects.DeleteMatching):
        return effect.kind, effect.namespace, ""
    return "", "", ""


def _log(effect: effects.Effect, result: EffectResult) -> None:
    kind, namespace, name = _subject(effect)
    # The keys of ``logkeys`` (the object's name travels as ``object_name``).
    extra = {"kind": kind, "namespace": namespace, "object_name": name, "effect": type(effect).__name__}
    if result.ok:
        log.debug("%s done", effect.key, extra=extra)
    elif result.failed_with(Failure.INVALID) and isinstance(
        effect, effects.CreateObject | effects.MergePatch
    ):
        # The object as built is refused, and will be until its inputs change: a problem for the user.
        extra["error"] = result.error
        log.error("%s refused by the API server: %s", effect.key, result.message, extra=extra)
    else:
        extra["error"] = result.error
        # A failed effect is retried (decided again), so it warns; a problem a user must fix is logged at
        # error with the Warning Event decided for it (``reconciling``).
        log.warning("%s failed: %s: %s", effect.key, result.error, result.message, extra=extra)
