"""The executors of the Actions service effects: ``ActionsCall`` (one call per ``ActionsOp``) and
``ReleaseRunner`` (RemoveRunner, then DELETE the EphemeralRunner).

Results (an ``ActionsError`` raised here becomes ``{"ok": false, "error": CLASS}``, see ``results``):

=========================  ===========================================================================
op                         args → result facts
=========================  ===========================================================================
GetRunnerGroupByName       ``{name}`` → ``runnerGroup: {id, name}``; none: RunnerGroupNotFound
GetRunnerScaleSet          ``{runnerGroupId, name}`` → ``scaleSet: {...} | null``
GetRunnerScaleSetById      ``{scaleSetId}`` → ``scaleSet: {...} | null``; null when the service does not
                           know the id (404): the set was deleted behind the controller's back
CreateRunnerScaleSet       ``{name, runnerGroupId, labels, disableUpdate}`` → ``scaleSet``; a set of that
                           name already in the group → the existing one, plus ``alreadyExisted: true``
UpdateRunnerScaleSet       ``{scaleSetId, runnerGroupId}`` or ``{scaleSetId, name}`` → ``scaleSet``
DeleteRunnerScaleSet       ``{scaleSetId}`` → ``{}``; NotFound counts as done: ``alreadyGone: true``
GetRunnerByName            ``{name}`` → ``runner: {id, name, runnerScaleSetId} | null``
RemoveRunner               ``{runnerId}`` → ``{}``; AgentNotFound stays the class ``RunnerNotFound``
                           (the EphemeralRunner machine reads it as removed)
=========================  ===========================================================================

``scaleSet`` is ``{id, name, runnerGroupId, runnerGroupName, labels: [{name, type}], runnerSetting:
{disableUpdate}}``. After a scale set is found, created or updated, its id goes into the client's
SystemInfo (the User-Agent, §2.1 step 6.6). Arguments a machine got wrong are ``InvalidArguments``.

``ReleaseRunner`` answers ``{"ok": true}`` once the runner is unregistered (AgentNotFound counts) and its
EphemeralRunner deleted (NotFound, or a failed uid precondition, counts: ``alreadyGone``);
JobStillRunning ends it with nothing deleted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from actions import errors as actions_errors
from actions.client import ActionsClient
from actions.models import Label, RunnerReference, RunnerScaleSet
from controller.executor import kubeeffects, results
from controller.executor.contexts import Context
from controller.executor.errors import ExecutionError
from statemachines.effectresults import EffectResult
from statemachines.effects import ActionsCall, ActionsOp, ReleaseRunner
from statemachines.jsonvalues import JsonObject

Op = Callable[[ActionsClient, JsonObject], Awaitable[EffectResult]]

INVALID_ARGUMENTS: Final = "InvalidArguments"
SCALE_SET_EXISTS: Final = "RunnerScaleSetExistsException"


async def actions_call(effect: ActionsCall, ctx: Context) -> EffectResult:
    op = OPS[effect.op]
    async with ctx.clients.lease(effect.scope, ctx.kube) as client:
        return await op(client, effect.args)


async def release_runner(effect: ReleaseRunner, ctx: Context) -> EffectResult:
    async with ctx.clients.lease(effect.scope, ctx.kube) as client:
        with contextlib.suppress(actions_errors.RunnerNotFoundError):  # already unregistered (§8 item 7)
            await client.remove_runner(effect.runner_id)
    return await kubeeffects.delete(ctx, effect.target, uid=effect.uid)


# -- facts -------------------------------------------------------------------------------------------------


def scale_set_fact(scale_set: RunnerScaleSet) -> dict[str, Any]:
    return {
        "id": scale_set.id,
        "name": scale_set.name,
        "runnerGroupId": scale_set.runner_group_id,
        "runnerGroupName": scale_set.runner_group_name,
        "labels": [dict(label.as_wire()) for label in scale_set.labels],
        "runnerSetting": {"disableUpdate": scale_set.disable_update},
    }


def runner_fact(runner: RunnerReference) -> dict[str, Any]:
    return {"id": runner.id, "name": runner.name, "runnerScaleSetId": runner.runner_scale_set_id}


def _int(args: JsonObject, key: str) -> int:
    value = args.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExecutionError(INVALID_ARGUMENTS, f"argument {key!r} must be an integer, not {value!r}")
    return value


def _text(args: JsonObject, key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise ExecutionError(INVALID_ARGUMENTS, f"argument {key!r} must be a non-empty string")
    return value


# -- one function per op ---------------------------------------------------------------------------------


async def _get_runner_group_by_name(client: ActionsClient, args: JsonObject) -> EffectResult:
    group = await client.get_runner_group_by_name(_text(args, "name"))
    return results.ok(runnerGroup={"id": group.id, "name": group.name})


async def _get_runner_scale_set(client: ActionsClient, args: JsonObject) -> EffectResult:
    found = await client.get_runner_scale_set(_int(args, "runnerGroupId"), _text(args, "name"))
    if found is None:
        return results.ok(scaleSet=None)
    client.set_scale_set_id(found.id)
    return results.ok(scaleSet=scale_set_fact(found))


async def _get_runner_scale_set_by_id(client: ActionsClient, args: JsonObject) -> EffectResult:
    try:
        found = await client.get_runner_scale_set_by_id(_int(args, "scaleSetId"))
    except actions_errors.NotFound:
        return results.ok(scaleSet=None)
    return results.ok(scaleSet=scale_set_fact(found))


async def _create_runner_scale_set(client: ActionsClient, args: JsonObject) -> EffectResult:
    name, group_id = _text(args, "name"), _int(args, "runnerGroupId")
    labels = args.get("labels") or [name]
    wanted = RunnerScaleSet(
        name=name,
        runner_group_id=group_id,
        labels=tuple(Label(str(label)) for label in labels),
        disable_update=bool(args.get("disableUpdate")),
    )
    try:
        created = await client.create_runner_scale_set(wanted)
    except actions_errors.RequestRejected as exc:
        if not _already_exists(exc):
            raise
        existing = await client.get_runner_scale_set(group_id, name)
        if existing is None:
            raise
        client.set_scale_set_id(existing.id)
        return results.ok(scaleSet=scale_set_fact(existing), alreadyExisted=True)
    client.set_scale_set_id(created.id)
    return results.ok(scaleSet=scale_set_fact(created))


def _already_exists(exc: actions_errors.RequestRejected) -> bool:
    response = exc.response
    return response is not None and (SCALE_SET_EXISTS in response.type_name or response.status == 409)


async def _update_runner_scale_set(client: ActionsClient, args: JsonObject) -> EffectResult:
    scale_set_id = _int(args, "scaleSetId")
    name = _text(args, "name") if "name" in args else None
    group_id = _int(args, "runnerGroupId") if "runnerGroupId" in args else None
    if name is None and group_id is None:
        raise ExecutionError(INVALID_ARGUMENTS, "UpdateRunnerScaleSet needs a name or a runnerGroupId")
    updated = await client.update_runner_scale_set(scale_set_id, name=name, runner_group_id=group_id)
    client.set_scale_set_id(updated.id)
    return results.ok(scaleSet=scale_set_fact(updated))


async def _delete_runner_scale_set(client: ActionsClient, args: JsonObject) -> EffectResult:
    try:
        await client.delete_runner_scale_set(_int(args, "scaleSetId"))
    except actions_errors.NotFound:
        return results.ok(alreadyGone=True)
    return results.ok()


async def _get_runner_by_name(client: ActionsClient, args: JsonObject) -> EffectResult:
    found = await client.get_runner_by_name(_text(args, "name"))
    return results.ok(runner=None if found is None else runner_fact(found))


async def _remove_runner(client: ActionsClient, args: JsonObject) -> EffectResult:
    await client.remove_runner(_int(args, "runnerId"))
    return results.ok()


OPS: Final[Mapping[ActionsOp, Op]] = {
    ActionsOp.GET_RUNNER_GROUP_BY_NAME: _get_runner_group_by_name,
    ActionsOp.GET_RUNNER_SCALE_SET: _get_runner_scale_set,
    ActionsOp.GET_RUNNER_SCALE_SET_BY_ID: _get_runner_scale_set_by_id,
    ActionsOp.CREATE_RUNNER_SCALE_SET: _create_runner_scale_set,
    ActionsOp.UPDATE_RUNNER_SCALE_SET: _update_runner_scale_set,
    ActionsOp.DELETE_RUNNER_SCALE_SET: _delete_runner_scale_set,
    ActionsOp.GET_RUNNER_BY_NAME: _get_runner_by_name,
    ActionsOp.REMOVE_RUNNER: _remove_runner,
}
