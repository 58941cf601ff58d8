"""The client against the fake when things go wrong or time passes: the message queue and its token,
the admin token's expiry and revocation, 5xx bursts, 429 with Retry-After, and logs free of secrets."""

from __future__ import annotations

import logging

import pytest

from actions import errors
from actions.client import ActionsClient
from actions.messages import JobAssigned, JobAvailable, JobCompleted, JobStarted
from actions.models import RunnerScaleSet
from actions.sessions import MessageQueue
from sim.github import GitHubFake, GitHubFault
from tests.e2e.actions.sharedclock import PAT, MakeClient, SharedClock

VERSION = "2.330.0"


async def _scale_set(client: ActionsClient, name: str = "arc") -> RunnerScaleSet:
    return await client.create_runner_scale_set(RunnerScaleSet(name=name, runner_group_id=1))


async def test_a_job_through_the_message_queue(fake: GitHubFake, make_client: MakeClient) -> None:
    client = make_client()
    scale_set = await _scale_set(client)
    async with await MessageQueue.open(client, scale_set_id=scale_set.id, owner_name="listener") as queue:
        assert queue.session.statistics is not None
        assert await queue.get_message(last_message_id=0, max_capacity=2) is None  # 202 after the long poll

        (job,) = fake.queue_jobs(scale_set.id, 1)
        message = await queue.get_message(last_message_id=0, max_capacity=2)
        assert message is not None and message.statistics is not None
        assert message.statistics.total_available_jobs == 1
        (available,) = message.jobs
        assert isinstance(available, JobAvailable) and available.runner_request_id == job.runner_request_id
        assert available.acquire_job_url.endswith("/acquirejobs")
        await queue.delete_message(message.message_id)
        assert await queue.acquire_jobs([job.runner_request_id, 999]) == (job.runner_request_id,)

        jit = await client.generate_jit_runner_config(scale_set.id, "runner-a")
        runner = fake.register_runner(jit.encoded_jit_config.reveal(), VERSION)
        await fake.run_job(runner.runner_id, seconds=0, timeout=5)

        seen: list[type] = []
        last_id = message.message_id
        while len(seen) < 3:
            next_message = await queue.get_message(last_message_id=last_id, max_capacity=2)
            assert next_message is not None, f"expected three job messages, got {seen}"
            seen += [type(j) for j in next_message.jobs]
            last_id = next_message.message_id
            await queue.delete_message(last_id)
        assert seen == [JobAssigned, JobStarted, JobCompleted]
    assert fake.state.session_of(scale_set.id) is None


async def test_a_second_session_is_refused(make_client: MakeClient) -> None:
    client = make_client()
    scale_set = await _scale_set(client)
    await client.create_message_session(scale_set.id, "listener-1")
    with pytest.raises(errors.RequestRejected, match=r"409: .*RunnerScaleSetSessionConflictException"):
        await client.create_message_session(scale_set.id, "listener-2")


async def test_an_expired_queue_token_refreshes_the_session_once(
    fake: GitHubFake, make_client: MakeClient
) -> None:
    client = make_client()
    scale_set = await _scale_set(client)
    queue = await MessageQueue.open(client, scale_set_id=scale_set.id, owner_name="listener")
    first_token = queue.session.message_queue_access_token
    fake.queue_jobs(scale_set.id, 1)
    assert fake.expire_message_queue_tokens(scale_set.id) == 1

    message = await queue.get_message(last_message_id=0, max_capacity=1)
    assert message is not None
    assert queue.session.message_queue_access_token != first_token
    polls = [c.status for c in fake.calls if c.path.endswith("/messages")]
    assert polls == [401, 200]
    assert len(fake.calls_to("PATCH", "/sessions/")) == 1

    fake.expire_message_queue_tokens(scale_set.id)
    await queue.delete_message(message.message_id)
    fake.expire_message_queue_tokens(scale_set.id)
    assert await queue.acquire_jobs([message.jobs[0].runner_request_id]) == (
        message.jobs[0].runner_request_id,
    )
    assert len(fake.calls_to("PATCH", "/sessions/")) == 3
    await queue.close()


async def test_admin_token_is_refreshed_before_it_expires(
    fake: GitHubFake, make_client: MakeClient, clock: SharedClock
) -> None:
    client = make_client()
    first = await client.admin_connection()
    await client.get_runner_group_by_name("Default")
    clock.advance(3600 - 61)
    assert await client.admin_connection() == first
    clock.advance(1)  # 60 s before exp: refresh before the service would refuse it
    await client.get_runner_group_by_name("Default")
    second = await client.admin_connection()
    assert second.token != first.token and second.expires_at > first.expires_at
    assert len(fake.calls_to("POST", "runner-registration")) == 2
    assert all(c.status != 401 for c in fake.calls)


async def test_a_revoked_admin_token_registers_again(fake: GitHubFake, make_client: MakeClient) -> None:
    client = make_client()
    await client.get_runner_group_by_name("Default")
    fake.expire_admin_tokens()
    await client.get_runner_group_by_name("Default")
    assert [c.status for c in fake.calls if "runnergroups" in c.path] == [200, 401, 200]
    assert len(fake.calls_to("POST", "runner-registration")) == 2


async def test_a_5xx_burst_is_ridden_out(
    fake: GitHubFake, make_client: MakeClient, sleeps: list[float]
) -> None:
    client = make_client()
    await client.get_runner_group_by_name("Default")
    fake.inject(GitHubFault(method="POST", path="/runnerscalesets$", status=503, times=3))
    created = await _scale_set(client)
    assert created.id > 0
    assert [c.status for c in fake.calls_to("POST", "/runnerscalesets")] == [503, 503, 503, 200]
    assert sleeps == [1.0, 2.0, 4.0]


async def test_a_5xx_storm_outlasts_the_retries(
    fake: GitHubFake, make_client: MakeClient, sleeps: list[float]
) -> None:
    client = make_client()
    await client.get_runner_group_by_name("Default")
    fake.inject(GitHubFault(method="GET", path="/runnergroups", status=500, times=None))
    with pytest.raises(errors.ServiceUnavailable, match="answered 500") as caught:
        await client.get_runner_group_by_name("Default")
    assert isinstance(caught.value, errors.Transient)
    assert len(fake.calls_to("GET", "/runnergroups")) == 1 + 5
    assert sleeps == [1.0, 2.0, 4.0, 8.0]


async def test_429_with_retry_after(fake: GitHubFake, make_client: MakeClient, sleeps: list[float]) -> None:
    client = make_client()
    fake.inject(GitHubFault(method="GET", path="/runnergroups", status=429, retry_after=7, times=2))
    await client.get_runner_group_by_name("Default")
    assert sleeps == [7.0, 7.0]
    assert [c.status for c in fake.calls_to("GET", "/runnergroups")] == [429, 429, 200]


async def test_runner_registration_403_is_retried(
    fake: GitHubFake, make_client: MakeClient, sleeps: list[float]
) -> None:
    fake.inject(GitHubFault(method="POST", path="runner-registration", status=403, times=1))
    await make_client().get_runner_group_by_name("Default")
    assert [c.status for c in fake.calls_to("POST", "runner-registration")] == [403, 201]
    assert sleeps == [1.0]


async def test_debug_logs_of_a_whole_flow_carry_no_secret(
    fake: GitHubFake, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = make_client()
    fake.inject(GitHubFault(method="GET", path="/runnergroups", status=502, times=1))
    scale_set = await _scale_set(client)
    jit = await client.generate_jit_runner_config(scale_set.id, "runner-a")
    queue = await MessageQueue.open(client, scale_set_id=scale_set.id, owner_name="listener")
    fake.queue_jobs(scale_set.id, 1)
    fake.expire_message_queue_tokens(scale_set.id)
    message = await queue.get_message(last_message_id=0, max_capacity=1)
    assert message is not None
    await queue.delete_message(message.message_id)
    fake.expire_admin_tokens()
    await client.get_runner_group_by_name("Default")
    with pytest.raises(errors.RunnerExistsError) as caught:
        await client.generate_jit_runner_config(scale_set.id, "runner-a")
    await queue.close()

    admin = await client.admin_connection()
    secrets = [
        PAT,
        jit.encoded_jit_config.reveal(),
        queue.session.message_queue_access_token.reveal(),
        admin.token.reveal(),
    ]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert any(r.name.startswith("httpx") for r in caplog.records), "httpx should log at this level"
    shown = "\n".join([logged, str(caught.value), repr(caught.value), repr(jit), repr(queue.session)])
    for secret in secrets:
        assert secret not in shown
