"""The executors of the effects that write secret material: the JIT Secret, the listener config Secret
and the proxy Secret. The material is read or generated here, written into the Secret's ``data``, and
never returned: results carry only the runner id and name, or what was done.

=========================  ===========================================================================
effect                     result
=========================  ===========================================================================
CreateJitConfigSecret      ``{"ok": true, "runnerId", "runnerName"}``. A Secret already there that the
                           effect's owner owns: no new config is generated; its runner is answered,
                           plus ``alreadyExisted``. One of another owner (a predecessor's of the same
                           runner name, or no one's): ``{"ok": false, "error": "AlreadyExists"}``, never
                           its runner. The service refusing the name: ``{"ok": false, "error":
                           "RunnerExists"}``. When the Secret cannot be written (or another owner's was
                           written meanwhile), the runner just registered is removed again (best
                           effort), so the next attempt does not meet RunnerExists.
CreateListenerConfigSecret ``{"ok": true}`` (``alreadyExisted`` when the Secret is there)
WriteProxySecret           ``{"ok": true, "created" | "updated" | "unchanged": true}``: written only
                           when the live Secret's data, labels or annotations differ
=========================  ===========================================================================

Error messages of these writes are scrubbed of the exact values they handled before they reach a result.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from actions import errors as actions_errors
from actions.client import ActionsClient
from controller.executor import results, scopes, secrets, vaults
from controller.executor.contexts import Context
from controller.executor.errors import KubeError
from controller.executor.kubeeffects import ALREADY_EXISTS, NOT_FOUND
from statemachines.effectresults import EffectResult
from statemachines.effects import (
    CreateJitConfigSecret,
    CreateListenerConfigSecret,
    ObjectRef,
    WriteProxySecret,
)

log = logging.getLogger(__name__)


async def _get_or_none(ctx: Context, ref: ObjectRef) -> dict[str, Any] | None:
    try:
        return await ctx.kube.get(ref.kind, ref.namespace, ref.name)
    except KubeError as exc:
        if exc.reason == NOT_FOUND:
            return None
        raise


def _scrubbed(exc: KubeError, values: Iterable[str]) -> KubeError:
    return KubeError(exc.reason, results.clean(str(exc), values), code=exc.code, retry_after=exc.retry_after)


# -- the JIT Secret ----------------------------------------------------------------------------------------


def _taken(effect: CreateJitConfigSecret, secret: dict[str, Any]) -> EffectResult:
    """The Secret of the target name is another owner's: its runner is not this one's."""
    uids = ", ".join(secrets.owner_uids(secret)) or "none"
    where = f"{effect.target.namespace}/{effect.target.name}"
    return results.failed(ALREADY_EXISTS, f"the Secret {where} belongs to another owner (owner uid {uids})")


async def create_jit_config_secret(effect: CreateJitConfigSecret, ctx: Context) -> EffectResult:
    existing = await _get_or_none(ctx, effect.target)
    if existing is not None:
        # A runner name can be reused while a predecessor's Secret lingers (terminating, or held by a
        # finalizer) before the watch has shown it: its runner is not this runner's.
        if not secrets.owned_by(existing, effect.owner):
            return _taken(effect, existing)
        return results.ok(**secrets.jit_facts(existing), alreadyExisted=True)
    async with ctx.clients.lease(effect.scope, ctx.kube) as client:
        jit = await client.generate_jit_runner_config(
            effect.scale_set_id, effect.runner_name, work_folder=effect.work_folder
        )
        token = jit.encoded_jit_config.reveal()
        try:
            await ctx.kube.create("Secret", effect.target.namespace, secrets.jit_secret(effect, jit))
        except KubeError as exc:
            if exc.reason != ALREADY_EXISTS:
                await _unregister(client, jit.runner.id)
                raise _scrubbed(exc, [token]) from None
            # Another execution wrote it meanwhile: answer with its runner, drop the one made here; or
            # another owner's Secret appeared: drop it too and answer that the name is taken.
            written = await _get_or_none(ctx, effect.target) or {}
            facts = secrets.jit_facts(written)
            ours = secrets.owned_by(written, effect.owner)
            if not ours or facts.get("runnerId") != jit.runner.id:
                await _unregister(client, jit.runner.id)
            if not ours:
                return _taken(effect, written)
            return results.ok(**facts, alreadyExisted=True)
    return results.ok(runnerId=jit.runner.id, runnerName=jit.runner.name)


async def _unregister(client: ActionsClient, runner_id: int) -> None:
    try:
        await client.remove_runner(runner_id)
    except actions_errors.ActionsError as exc:
        log.warning("could not remove the unused runner registration %d: %s", runner_id, exc)


# -- the listener config Secret ----------------------------------------------------------------------------


async def create_listener_config_secret(effect: CreateListenerConfigSecret, ctx: Context) -> EffectResult:
    scope = effect.scope
    credentials, vault_proxy = None, None
    if vaults.uses_vault(scope):
        vault_proxy = (await vaults.vault_of(scope, ctx.kube)).proxy
    else:
        credentials = await scopes.read_credentials(ctx.kube, scope)
    root_ca = await scopes.root_ca(ctx.kube, scope)
    config = secrets.listener_config(effect, credentials, root_ca, vault_proxy)
    values = [str(v) for v in secrets.credential_fields(credentials).values()] if credentials else []
    values += [vault_proxy.http, vault_proxy.https] if vault_proxy else []
    try:
        await ctx.kube.create(
            "Secret", effect.target.namespace, secrets.listener_config_secret(effect, config)
        )
    except KubeError as exc:
        if exc.reason == ALREADY_EXISTS:
            return results.ok(alreadyExisted=True)
        raise _scrubbed(exc, values) from None
    return results.ok()


# -- the proxy Secret --------------------------------------------------------------------------------------


async def write_proxy_secret(effect: WriteProxySecret, ctx: Context) -> EffectResult:
    namespace = effect.secrets_namespace or effect.target.namespace
    urls = await scopes.proxy_urls(ctx.kube, effect.proxy, namespace)
    data = urls.as_secret_data()
    values = [urls.http, urls.https]
    live = await _get_or_none(ctx, effect.target)
    if live is None:
        try:
            await ctx.kube.create("Secret", effect.target.namespace, secrets.proxy_secret(effect, data))
            return results.ok(created=True)
        except KubeError as exc:
            if exc.reason != ALREADY_EXISTS:
                raise _scrubbed(exc, values) from None
        live = await _get_or_none(ctx, effect.target) or {}
    patch = secrets.proxy_patch(effect, data, live)
    if not patch:
        return results.ok(unchanged=True)
    version = str((live.get("metadata") or {}).get("resourceVersion") or "")
    patch["metadata"] = {**patch.get("metadata", {}), "resourceVersion": version}
    try:
        await ctx.kube.merge_patch(effect.target, patch)
    except KubeError as exc:
        raise _scrubbed(exc, values) from None
    return results.ok(updated=True)
