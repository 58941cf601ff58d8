"""The client against the fake Actions service: every endpoint, every error class, both credential forms
and all three scopes, over real HTTP."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from actions import errors
from actions.credentials import GitHubApp, PersonalAccessToken
from actions.models import Label, RunnerScaleSet
from actions.redaction import SecretStr
from sim.github import GitHubFake
from tests.e2e.actions.sharedclock import MakeClient

VERSION = "2.330.0"


async def test_scale_set_and_runner_endpoints(fake: GitHubFake, make_client: MakeClient) -> None:
    client = make_client()
    group = await client.get_runner_group_by_name("Default")
    assert (group.id, group.is_default_group) == (1, True)
    assert await client.get_runner_scale_set(group.id, "arc") is None

    created = await client.create_runner_scale_set(
        RunnerScaleSet(name="arc", runner_group_id=group.id, disable_update=True)
    )
    assert created.id > 0 and created.runner_group_name == "Default"
    assert created.labels == (Label("arc", "System"),) and created.disable_update
    assert await client.get_runner_scale_set(group.id, "arc") == created
    assert (await client.get_runner_scale_set_by_id(created.id)).name == "arc"

    renamed = await client.update_runner_scale_set(created.id, name="arc-renamed")
    assert renamed.name == "arc-renamed"
    fake.add_runner_group("my-org", "gpu")
    gpu = await client.get_runner_group_by_name("gpu")
    moved = await client.update_runner_scale_set(created.id, runner_group_id=gpu.id)
    assert (moved.runner_group_id, moved.runner_group_name) == (gpu.id, "gpu")

    jit = await client.generate_jit_runner_config(created.id, "runner-a", work_folder="_work")
    assert jit.runner.name == "runner-a" and jit.runner.runner_scale_set_id == created.id
    assert jit.encoded_jit_config.reveal() and "runner-a" not in repr(jit.encoded_jit_config)
    assert (await client.get_runner(jit.runner.id)).name == "runner-a"
    by_name = await client.get_runner_by_name("runner-a")
    assert by_name is not None and (by_name.id, by_name.runner_scale_set_id) == (jit.runner.id, created.id)

    await client.remove_runner(jit.runner.id)
    assert await client.get_runner_by_name("runner-a") is None
    await client.remove_runner(0)  # the fake's [R] choice: unknown ids are already removed

    await client.delete_runner_scale_set(created.id)
    with pytest.raises(errors.NotFound):
        await client.get_runner_scale_set_by_id(created.id)
    assert len(fake.calls_to("POST", "/runnerscalesets")) == 2  # the create and the JIT config


async def test_unknown_runner_group(make_client: MakeClient) -> None:
    with pytest.raises(errors.RunnerGroupNotFound, match="no runner group named 'missing'"):
        await make_client().get_runner_group_by_name("missing")


async def test_runner_name_clash_is_runner_exists(make_client: MakeClient) -> None:
    client = make_client()
    scale_set = await client.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))
    await client.generate_jit_runner_config(scale_set.id, "runner-a")
    with pytest.raises(errors.RunnerExistsError) as caught:
        await client.generate_jit_runner_config(scale_set.id, "runner-a")
    assert caught.value.response is not None and caught.value.response.status == 409
    assert "ActivityId" in str(caught.value)


async def test_runner_not_found(make_client: MakeClient) -> None:
    with pytest.raises(errors.RunnerNotFoundError):
        await make_client().get_runner(999)


async def test_busy_runner_cannot_be_removed(fake: GitHubFake, make_client: MakeClient) -> None:
    client = make_client()
    scale_set = await client.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))
    jit = await client.generate_jit_runner_config(scale_set.id, "runner-a")
    runner = fake.register_runner(jit.encoded_jit_config.reveal(), VERSION)
    session = await client.create_message_session(scale_set.id, "listener")
    (job,) = fake.queue_jobs(scale_set.id, 1)
    token = session.message_queue_access_token
    await client.get_message(session.message_queue_url, token, last_message_id=0, max_capacity=1)
    assert await client.acquire_jobs(scale_set.id, token, [job.runner_request_id]) == (job.runner_request_id,)
    started = await fake.next_job_for(runner.runner_id, timeout=5)
    assert started is not None

    with pytest.raises(errors.JobStillRunningError) as caught:
        await client.remove_runner(runner.runner_id)
    assert isinstance(caught.value, errors.Transient)
    assert fake.runner("runner-a") is not None

    fake.complete_job(job.runner_request_id)
    await client.remove_runner(runner.runner_id)
    assert fake.runner("runner-a") is None


async def test_bad_pat_is_refused_without_retries(
    fake: GitHubFake, make_client: MakeClient, sleeps: list[float]
) -> None:
    client = make_client(credentials=PersonalAccessToken(token=SecretStr("ghp_notTheAllowedToken0000000")))
    with pytest.raises(errors.AuthenticationFailed, match="Bad credentials") as caught:
        await client.get_runner_group_by_name("Default")
    assert "ghp_notTheAllowed" not in str(caught.value)
    assert sleeps == []
    assert len(fake.calls_to("POST", "registration-token")) == 1


@pytest.mark.parametrize("scope", ["my-org", "my-org/my-repo", "enterprises/my-ent"])
async def test_github_app_in_every_scope(
    fake: GitHubFake, make_client: MakeClient, rsa_pem: str, scope: str
) -> None:
    public = (
        load_pem_private_key(rsa_pem.encode(), None)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    fake.register_app("4242", public_key=public, installation_ids=[77])
    app = GitHubApp(app_id="4242", installation_id=77, private_key=SecretStr(rsa_pem))
    client = make_client(scope, credentials=app)
    scale_set = await client.create_runner_scale_set(RunnerScaleSet(name="arc", runner_group_id=1))
    assert scale_set.id > 0
    assert [c.path for c in fake.calls[:3]] == [
        "/api/v3/app/installations/77/access_tokens",
        "/api/v3/" + _registration_owner(scope) + "/actions/runners/registration-token",
        "/api/v3/actions/runner-registration",
    ]


async def test_app_with_the_wrong_installation_is_refused(
    fake: GitHubFake, make_client: MakeClient, rsa_pem: str
) -> None:
    fake.register_app("4242", installation_ids=[77])
    app = GitHubApp(app_id="4242", installation_id=78, private_key=SecretStr(rsa_pem))
    with pytest.raises(errors.NotFound, match="access_tokens answered 404"):
        await make_client(credentials=app).get_runner_group_by_name("Default")


def _registration_owner(scope: str) -> str:
    parts = scope.split("/")
    if parts[0] == "enterprises":
        return scope
    return f"orgs/{scope}" if len(parts) == 1 else f"repos/{scope}"
