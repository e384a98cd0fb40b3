"""Retry by error semantics: through litellm's real HTTP path, and the arithmetic with a fake clock."""

from __future__ import annotations

import asyncio
import email.utils
import functools
import itertools
import json
import socket
import time
from typing import Any

import httpx
import pytest

import workbench.engine.loop
from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, cut, drop, error, raw, reply
from workbench.config.settings import Settings
from workbench.model.gateway import ModelClient, ModelSpec, StreamIncomplete, litellm
from workbench.model.retry import (
    ContextOverflow,
    ModelCallFailed,
    RetryPolicy,
    backoff,
    call_with_retry,
    classify,
    retry_after,
)
from workbench.pb import workbench_pb2 as pb


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff of milliseconds instead of seconds (Retry-After is still honoured as sent)."""
    monkeypatch.setattr(workbench.engine.loop, "RetryPolicy", functools.partial(RetryPolicy, base_delay=0.01))


def gaps(server: ScriptedModel) -> list[float]:
    times = server.request_times
    return [b - a for a, b in itertools.pairwise(times)]


PROMPT = [pb.Message(role=pb.ROLE_USER, text="hi")]


# --- retried ---------------------------------------------------------------------------------


async def test_429_with_retry_after_waits_then_succeeds(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(error(429, "Rate limit reached", headers={"Retry-After": "1"}), reply("ok"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "ok"
    assert len(scripted_model.requests) == 2
    assert gaps(scripted_model)[0] >= 1.0
    (wait,) = run.of("retry_wait")
    assert wait.seconds == 1.0 and wait.status_code == 429 and wait.attempt == 1 and wait.max_attempts == 5
    assert "rate limited (429): Rate limit reached" in wait.reason and "asked to wait 1 s" in wait.reason


async def test_retry_after_ms_is_honoured(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(error(429, "slow down", headers={"retry-after-ms": "300"}), reply("ok"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert run.of("retry_wait")[0].seconds == 0.3
    assert gaps(scripted_model)[0] >= 0.3


async def test_503_twice_then_success(settings: Settings, scripted_model: ScriptedModel, fast_backoff: None) -> None:
    scripted_model.add(error(503, "overloaded"), error(503, "overloaded"), reply("ok"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert len(scripted_model.requests) == 3
    assert [w.attempt for w in run.of("retry_wait")] == [1, 2]
    assert all(w.status_code == 503 and "server error 503: overloaded" in w.reason for w in run.of("retry_wait"))


async def test_500_six_times_fails_after_5_attempts_with_the_last_cause(
    settings: Settings, scripted_model: ScriptedModel, fast_backoff: None
) -> None:
    scripted_model.add(*[error(500, f"boom {i}") for i in range(1, 7)])
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert len(scripted_model.requests) == 5
    assert "server error 500: boom 5" in run.outcome.reason and "gave up after 5 attempts" in run.outcome.reason
    assert len(run.of("retry_wait")) == 4


@pytest.mark.parametrize(
    ("status", "message", "type_", "expect"),
    [
        (502, "bad gateway", "", "server error 502"),
        (504, "gateway timeout", "", "timed out (504)"),
        (529, "Overloaded", "overloaded_error", "server error 529"),
    ],
)
async def test_other_server_errors_are_retried(
    settings: Settings,
    scripted_model: ScriptedModel,
    fast_backoff: None,
    status: int,
    message: str,
    type_: str,
    expect: str,
) -> None:
    scripted_model.add(error(status, message, type_=type_), reply("ok"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert len(scripted_model.requests) == 2
    assert expect in run.of("retry_wait")[0].reason


async def test_timeout_is_retried(settings: Settings, scripted_model: ScriptedModel, fast_backoff: None) -> None:
    settings.request_timeout = 0.5
    scripted_model.add(reply("too late", delay=1.5), reply("ok"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "ok"
    assert "timed out" in run.of("retry_wait")[0].reason


async def test_dropped_connection_is_retried(
    settings: Settings, scripted_model: ScriptedModel, fast_backoff: None
) -> None:
    scripted_model.add(drop(), reply("ok"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert len(scripted_model.requests) == 2
    assert run.of("retry_wait")


async def test_stream_cut_mid_message_is_retried_and_its_text_discarded(
    settings: Settings, scripted_model: ScriptedModel, fast_backoff: None
) -> None:
    partial = "I will delete the fi"
    scripted_model.add(reply("", call("read_file", path="a.txt")), cut(partial), reply("All done."))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "All done."
    assert len(scripted_model.requests) == 3
    assert partial in "".join(d.text for d in run.of("text_delta"))  # it was shown while streaming
    (discarded,) = run.of("stream_discarded")
    assert discarded.discarded_chars == len(partial) and discarded.attempt == 1
    kinds = run.kinds()
    assert kinds.index("stream_discarded") < kinds.index("retry_wait")
    # the partial text is in no message: not in the conversation, not in what the model was sent
    assert all(partial not in m.text for m in run.of("message"))
    assert partial not in str(scripted_model.requests[2]["messages"])
    assert scripted_model.requests[2]["messages"] == scripted_model.requests[1]["messages"]
    assert len(run.results()) == 1  # the tool before the cut ran once; nothing repeated


# --- not retried -----------------------------------------------------------------------------


async def test_429_insufficient_quota_is_not_retried(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(
        error(429, "You exceeded your current quota", code="insufficient_quota", type_="insufficient_quota"),
        reply("never"),
    )
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert len(scripted_model.requests) == 1 and not run.of("retry_wait")
    assert "quota exhausted" in run.outcome.reason and "You exceeded your current quota" in run.outcome.reason


async def test_401_is_not_retried_and_names_the_key(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(error(401, "Incorrect API key provided", code="invalid_api_key"), reply("never"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert len(scripted_model.requests) == 1 and not run.of("retry_wait")
    reason = run.outcome.reason
    assert "authentication failed (401)" in reason and "Incorrect API key provided" in reason
    assert "OPENAI_API_KEY" in reason and "WORKBENCH_API_KEY" in reason and "--api-key" in reason
    assert "sk-test-key" not in reason  # the key itself is never shown
    assert "\n" not in reason


@pytest.mark.parametrize(
    ("reply_error", "expect"),
    [
        (error(400, "Invalid value for 'messages'"), "bad request (400): Invalid value for 'messages'"),
        (error(403, "Project does not have access"), "permission denied (403)"),
        (error(404, "The model `x` does not exist", code="model_not_found"), "model not found (404)"),
        (error(422, "Unprocessable entity"), "bad request (422)"),
        (error(402, "Insufficient credits"), "payment required (402)"),
        (error(400, "flagged", code="content_policy_violation"), "content policy refused"),
    ],
    ids=["400", "403", "404", "422", "402", "content-policy"],
)
async def test_failures_that_are_not_retried(
    settings: Settings, scripted_model: ScriptedModel, reply_error: dict[str, Any], expect: str
) -> None:
    scripted_model.add(reply_error, reply("never"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert len(scripted_model.requests) == 1  # also no hidden re-send by litellm (drop_params is off)
    assert not run.of("retry_wait")
    assert expect in run.outcome.reason and "\n" not in run.outcome.reason


async def test_retry_after_beyond_the_cap_fails_and_says_when(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(error(429, "Rate limit reached", headers={"Retry-After": "120"}), reply("never"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FAILED
    assert len(scripted_model.requests) == 1
    assert "asks to wait 120 s, more than the 60 s cap: try again after" in run.outcome.reason


async def test_cancel_during_a_30_s_retry_after_wait_ends_the_run_at_once(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    from workbench.engine.agents import AgentTree
    from workbench.engine.store import Store

    settings.retry_after_cap = 60  # a 30 s wait is allowed
    scripted_model.add(error(429, "Rate limit reached", headers={"Retry-After": "30"}), reply("never"))
    store = Store(settings.db_path)
    session = store.create_session(settings.workspace, settings.model, "go")
    events: list[pb.Event] = []
    store.subscribe(events.append, session)
    tree = AgentTree(settings, store, session)
    task = asyncio.create_task(tree.run_root("go"))
    while not any(e.WhichOneof("kind") == "retry_wait" for e in events):
        assert not task.done()
        await asyncio.sleep(0.01)
    wait = next(e.retry_wait for e in events if e.WhichOneof("kind") == "retry_wait")
    assert wait.seconds == 30
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - cancelled_at < 1
    finished = [e.run_finished for e in events if e.WhichOneof("kind") == "run_finished"]
    assert finished[-1].status == pb.RUN_STATUS_CANCELLED
    assert len(scripted_model.requests) == 1
    await tree.close()
    store.close()


# --- the arithmetic, with a fake clock, sleep and random source --------------------------------


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def server_error(status: int = 503, headers: dict[str, str] | None = None) -> Exception:
    lm = litellm()
    response = httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://x"))
    if status == 429:
        return lm.RateLimitError("slow down", "openai", "m", response=response)
    return lm.ServiceUnavailableError("overloaded", "openai", "m", response=response)


def failing(errors: list[Exception], fake: FakeTime, took: float = 0.0) -> Any:
    async def call() -> str:
        fake.now += took
        if errors:
            raise errors.pop(0)
        return "ok"

    return call


def test_backoff_is_full_jitter_capped_exponential() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0)
    assert [backoff(n, policy, rand=lambda: 1.0) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert [backoff(n, policy, rand=lambda: 0.5) for n in range(1, 5)] == [0.5, 1, 2, 4]
    assert backoff(3, policy, rand=lambda: 0.0) == 0.0


async def test_waits_follow_the_backoff_and_every_wait_is_reported() -> None:
    fake = FakeTime()
    waits: list[pb.RetryWait] = []
    policy = RetryPolicy(max_attempts=5, base_delay=1.0, max_delay=3.0, deadline=300)
    result = await call_with_retry(
        failing([server_error() for _ in range(4)], fake),
        policy,
        waits.append,
        fake.sleep,
        clock=fake.clock,
        rand=lambda: 0.5,
    )
    assert result == "ok"
    assert fake.slept == [0.5, 1.0, 1.5, 1.5]
    assert [(w.attempt, w.seconds, w.status_code) for w in waits] == [
        (1, 0.5, 503),
        (2, 1.0, 503),
        (3, 1.5, 503),
        (4, 1.5, 503),
    ]


async def test_attempt_limit_gives_the_last_cause() -> None:
    fake = FakeTime()
    errors = [server_error() for _ in range(3)]
    with pytest.raises(ModelCallFailed, match="gave up after 3 attempts") as failed:
        await call_with_retry(
            failing(errors, fake), RetryPolicy(max_attempts=3), lambda w: None, fake.sleep, clock=fake.clock
        )
    assert len(fake.slept) == 2 and failed.value.status_code == 503
    assert isinstance(failed.value.__cause__, litellm().ServiceUnavailableError)


async def test_deadline_counts_the_calls_and_the_waits() -> None:
    fake = FakeTime()
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, max_delay=60, deadline=10)
    with pytest.raises(ModelCallFailed, match="10 s retry deadline"):
        await call_with_retry(
            failing([server_error() for _ in range(10)], fake, took=1.0),
            policy,
            lambda w: None,
            fake.sleep,
            clock=fake.clock,
            rand=lambda: 1.0,
        )
    # call (t=1), wait 1, call (t=3), wait 2, call (t=6), wait 4: ends at t=10, just inside;
    # call (t=11): no time left for any wait
    assert fake.slept == [1.0, 2.0, 4.0]
    assert fake.now <= 12


async def test_retry_after_replaces_the_backoff_up_to_the_cap() -> None:
    fake = FakeTime()
    waits: list[pb.RetryWait] = []
    errors = [server_error(429, {"Retry-After": "7"}), server_error(503, {"retry-after-ms": "2500"})]
    await call_with_retry(
        failing(errors, fake), RetryPolicy(retry_after_cap=10), waits.append, fake.sleep, clock=fake.clock
    )
    assert fake.slept == [7.0, 2.5]
    with pytest.raises(ModelCallFailed, match="asks to wait 11 s, more than the 10 s cap"):
        await call_with_retry(
            failing([server_error(429, {"Retry-After": "11"})], fake),
            RetryPolicy(retry_after_cap=10),
            waits.append,
            fake.sleep,
            clock=fake.clock,
        )
    assert fake.slept == [7.0, 2.5]


def test_retry_after_parses_seconds_http_dates_and_milliseconds() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 42, usegmt=True)
    assert retry_after(server_error(429, {"Retry-After": date}), now=lambda: now) == 42
    assert retry_after(server_error(429, {"Retry-After": "3"})) == 3
    assert retry_after(server_error(429, {"Retry-After": "3", "retry-after-ms": "150"})) == 0.15
    past = email.utils.formatdate(now - 5, usegmt=True)
    assert retry_after(server_error(429, {"Retry-After": past}), now=lambda: now) == 0
    assert retry_after(server_error(429, {"Retry-After": "soon"})) is None
    assert retry_after(server_error(429)) is None


async def test_a_cancelled_wait_ends_at_once() -> None:
    waits: list[pb.RetryWait] = []
    task = asyncio.create_task(
        call_with_retry(failing([server_error(429, {"Retry-After": "30"})], FakeTime()), RetryPolicy(), waits.append)
    )
    while not waits:
        await asyncio.sleep(0.01)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 0.5


# --- classification of errors the scripted server does not produce ---------------------------


def test_subclasses_are_classified_before_bad_request() -> None:
    lm = litellm()
    overflow = lm.ContextWindowExceededError("too long", "m", "openai")
    policy = lm.ContentPolicyViolationError("flagged", "m", "openai")
    assert classify(overflow).action == "overflow"
    assert classify(policy).action == "fail" and "content policy" in classify(policy).reason
    assert classify(lm.BadRequestError("bad", "m", "openai")).action == "fail"


def test_stream_incomplete_is_retried_unless_its_cause_is_fatal() -> None:
    lm = litellm()
    assert classify(StreamIncomplete(10)).action == "retry"
    assert classify(StreamIncomplete(10, ConnectionResetError("reset"))).action == "retry"
    fatal = StreamIncomplete(10, lm.ContentPolicyViolationError("stopped", "m", "openai"))
    assert classify(fatal).action == "fail"


def test_plain_connection_errors_retry_and_unknown_errors_fail() -> None:
    assert classify(ConnectionResetError("reset by peer")).action == "retry"
    assert classify(TimeoutError()).action == "retry"
    unknown = classify(ValueError("something odd"))
    assert unknown.action == "fail" and unknown.reason == "ValueError: something odd"


async def test_overflow_is_not_retried_but_handed_to_compaction() -> None:
    fake = FakeTime()
    with pytest.raises(ContextOverflow):
        await call_with_retry(
            failing([litellm().ContextWindowExceededError("too long", "m", "openai")], fake),
            RetryPolicy(),
            lambda w: None,
            fake.sleep,
        )
    assert fake.slept == []


def test_unsupported_parameters_fail_without_retry() -> None:
    lm = litellm()
    verdict = classify(lm.UnsupportedParamsError("tools is not supported by this model", "openai", "m"))
    assert verdict.action == "fail" and "unsupported parameter" in verdict.reason


# --- connection failures: the endpoint and the real cause --------------------------------------


def closed_port() -> int:
    with socket.socket() as sock:  # bound, never listening: connecting to it is refused
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_refused_local_connection_names_the_endpoint_and_is_not_retried_for_long() -> None:
    """Issue 15 item 5: it read as 'server error 500: Connection error.' four times."""
    port = closed_port()
    spec = ModelSpec("openai/scripted", api_base=f"http://127.0.0.1:{port}/v1", api_key="k")
    waits: list[pb.RetryWait] = []
    started = time.monotonic()
    with pytest.raises(ModelCallFailed) as failed:
        await call_with_retry(lambda: ModelClient(spec).complete(PROMPT, []), RetryPolicy(), waits.append)
    assert time.monotonic() - started < 5
    assert f"cannot connect to http://127.0.0.1:{port}/v1/chat/completions: connection refused" in failed.value.reason
    assert "gave up after 2 attempts" in failed.value.reason and "500" not in failed.value.reason
    assert len(waits) == 1 and waits[0].seconds <= 1


async def test_a_tls_error_names_the_endpoint_and_is_not_retried(scripted_model: ScriptedModel) -> None:
    https = scripted_model.url.replace("http://", "https://")  # a plain HTTP server: the handshake fails
    spec = ModelSpec("openai/scripted", api_base=https, api_key="k")
    with pytest.raises(ModelCallFailed, match=r"cannot connect to https://127\.0\.0\.1:\d+/v1/chat/completions: TLS"):
        await call_with_retry(lambda: ModelClient(spec).complete(PROMPT, []), RetryPolicy(), lambda w: None)


def chained(*errors: BaseException) -> BaseException:
    """errors[0] raised from errors[1] raised from ... (how litellm wraps httpx wraps OSError)."""
    for outer, inner in itertools.pairwise(errors):
        outer.__cause__ = inner
    return errors[0]


def test_connection_causes_are_named() -> None:
    request = httpx.Request("POST", "https://api.example.com/v1/chat/completions")
    lm = litellm()

    def wrapped(cause: BaseException) -> BaseException:
        return chained(
            lm.InternalServerError("Connection error.", "openai", "m"), httpx.ConnectError("x", request=request), cause
        )

    unknown_host = classify(wrapped(socket.gaierror(socket.EAI_NONAME, "Name or service not known")))
    assert unknown_host.action == "fail"
    assert "https://api.example.com/v1/chat/completions: DNS lookup of api.example.com failed" in unknown_host.reason
    assert classify(wrapped(socket.gaierror(socket.EAI_AGAIN, "Temporary failure"))).action == "retry"
    remote_refused = classify(wrapped(ConnectionRefusedError(111, "refused")))
    assert remote_refused.action == "retry" and remote_refused.max_attempts == 0  # a remote host may come back
    assert "connection refused" in remote_refused.reason


async def test_retry_deadline_counts_from_the_failed_attempts_end() -> None:
    """Issue 16 item 6: a 7-minute stream that broke got no retry (the deadline counted from its start)."""
    fake = FakeTime()
    errors = [StreamIncomplete(30_000, ConnectionResetError("reset"))]
    result = await call_with_retry(
        failing(errors, fake, took=420.0), RetryPolicy(deadline=300), lambda w: None, fake.sleep, clock=fake.clock
    )
    assert result == "ok" and len(fake.slept) == 1


# --- malformed streams ---------------------------------------------------------------------------


async def test_a_chunk_nested_too_deeply_is_a_broken_stream_like_invalid_json(scripted_model: ScriptedModel) -> None:
    head = json.dumps({"id": "x", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]})
    deep = '{"id": "x", "choices": ' + "[" * 100_000 + "]" * 100_000 + "}"
    spec = ModelSpec("openai/scripted", api_base=scripted_model.url, api_key="k")
    verdicts = []
    for bad in (deep, "{not json"):
        scripted_model.add(raw(head, bad))
        with pytest.raises(StreamIncomplete) as broken:
            await ModelClient(spec).complete(PROMPT, [])
        verdicts.append(classify(broken.value))
    assert [v.action for v in verdicts] == ["retry", "retry"]
    assert "recursion" in verdicts[0].reason


async def test_an_error_event_mid_stream_is_retried_with_the_providers_words(scripted_model: ScriptedModel) -> None:
    """An OpenAI-compatible stream is read from the SDK under litellm's wrapper (model.provider_stream);
    its mid-stream error events are still mapped by litellm and retried as a broken stream."""
    head = json.dumps({"id": "x", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]})
    spec = ModelSpec("openai/scripted", api_base=scripted_model.url, api_key="k")
    for message, kind in (("Rate limit reached", "rate_limit_error"), ("The server had an error", "server_error")):
        scripted_model.add(raw(head, json.dumps({"error": {"message": message, "type": kind, "code": None}})))
        with pytest.raises(StreamIncomplete) as broken:
            await ModelClient(spec).complete(PROMPT, [])
        verdict = classify(broken.value)
        assert verdict.action == "retry" and f"broke ({message}) after 2 chars" in verdict.reason


async def test_zero_means_no_limit_in_every_bound() -> None:
    """The settings say 0 is no limit (retry_max_attempts, retry_deadline, retry_after_cap)."""
    fake = FakeTime()
    errors = [server_error(429, {"Retry-After": "500"})] + [server_error() for _ in range(11)]
    policy = RetryPolicy(max_attempts=0, deadline=0, retry_after_cap=0, max_delay=1000)
    result = await call_with_retry(
        failing(errors, fake, took=100.0), policy, lambda w: None, fake.sleep, clock=fake.clock
    )
    assert result == "ok" and len(fake.slept) == 12 and fake.slept[0] == 500
