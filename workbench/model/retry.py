"""Retry of model calls by error semantics: the only place anything is retried.

`classify` sorts every failure of a model call into one of three decisions by litellm's
exception classes and the HTTP status (subclasses before their bases: a context overflow or a
content-policy refusal is also a BadRequestError):

- RETRY: rate limits (429 without insufficient_quota), overload and server errors (408, 500,
  502, 503, 504, 529), timeouts, dropped connections, and a stream that broke mid-message;
- FAIL: authentication, permission, bad request, model not found, content policy, quota or
  payment, unsupported parameters, and anything unknown; the reason is one line a person
  can act on;
- OVERFLOW: the request is longer than the model's context window; the caller compacts the
  conversation (`workbench.engine.compaction`) instead of retrying.

`call_with_retry` waits what the provider asks (Retry-After in seconds or as an HTTP date,
retry-after-ms) up to a cap, else capped exponential backoff with full jitter, within a
maximum attempt count and a total deadline. Every wait is a RetryWait event, and the wait is a
plain `asyncio.sleep`, so cancelling the run ends it at once. The clock, the sleep and the
random source are injected, so the arithmetic is tested without waiting.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import itertools
import random
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeVar

from workbench.model.gateway import litellm
from workbench.model.stream import StreamIncomplete
from workbench.pb import workbench_pb2 as pb

T = TypeVar("T")
Action = Literal["retry", "fail", "overflow"]

RETRIED_STATUS = frozenset({408, 500, 502, 503, 504, 529})
# A local server that refuses the connection is not running; it is not busy. One quick retry.
LOCAL_REFUSED_ATTEMPTS = 2
LOCAL_REFUSED_DELAY = 0.5
# The env var that holds each provider's key, where it is not PROVIDER_API_KEY.
_KEY_VARS = {
    "azure": "AZURE_API_KEY",
    "bedrock": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
    "gemini": "GEMINI_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
}


class ModelCallFailed(Exception):
    """A model call that failed for good; `reason` is one line a person can act on."""

    def __init__(self, reason: str, status_code: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.status_code = status_code


class ContextOverflow(ModelCallFailed):
    """The request does not fit the model's context window: compact, do not retry."""


@dataclass
class RetryPolicy:
    """How often and how long one model call is retried; 0 in any limit means no limit."""

    max_attempts: int = 5
    deadline: float = 300.0  # seconds for all attempts and waits of one call
    retry_after_cap: float = 60.0  # the longest Retry-After honoured; beyond it the call fails
    base_delay: float = 1.0
    max_delay: float = 30.0


@dataclass
class Verdict:
    action: Action
    reason: str
    status_code: int = 0
    retry_after: float | None = None  # seconds the provider asked to wait, if it said
    max_attempts: int = 0  # a lower attempt limit for this failure (0: the policy's)
    delay: float | None = None  # a fixed wait before the next attempt instead of the backoff


# --- what the error says ------------------------------------------------------------------


def _status(err: BaseException) -> int:
    try:
        return int(getattr(err, "status_code", 0) or 0)
    except (TypeError, ValueError):
        return 0


def _body(err: BaseException) -> dict[str, Any]:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        return inner if isinstance(inner, dict) else body
    return {}


def _codes(err: BaseException) -> str:
    """The provider's error code, type and message, lower-cased, for matching known codes."""
    body = _body(err)
    parts = [str(getattr(err, "code", "") or ""), str(body.get("code") or ""), str(body.get("type") or "")]
    return " ".join([*parts, str(err)]).lower()


def provider_message(err: BaseException) -> str:
    """The provider's own message in one line, without litellm's class-name prefixes."""
    message = _body(err).get("message")
    if not isinstance(message, str) or not message.strip():
        text = str(getattr(err, "message", "") or err)
        message = text.rsplit("Exception - ", 1)[-1]
    lines = message.strip().splitlines()
    line = lines[0] if lines else type(err).__name__
    return line if len(line) <= 200 else line[:199] + "…"


def key_variable(err: BaseException) -> str:
    provider = str(getattr(err, "llm_provider", "") or "")
    if not provider:
        return "the provider's API key variable"
    return _KEY_VARS.get(provider, f"{provider.upper()}_API_KEY")


def _headers(err: BaseException) -> dict[str, str]:
    found: Any = getattr(err, "litellm_response_headers", None)
    if not found:
        try:
            found = getattr(getattr(err, "response", None), "headers", None)
        except Exception:  # some SDK errors have no response to give
            found = None
    found = found or getattr(err, "headers", None) or {}
    try:
        return {str(k).lower(): str(v) for k, v in found.items()}
    except AttributeError:
        return {}


def retry_after(err: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the provider asked to wait: retry-after-ms, or Retry-After in seconds or as an HTTP date."""
    headers = _headers(err)
    if ms := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


def _chain(err: BaseException) -> list[BaseException]:
    """The error and the errors that caused it (litellm wraps openai wraps httpx wraps OSError)."""
    chain: list[BaseException] = []
    found: BaseException | None = err
    while found is not None and len(chain) < 16 and all(found is not e for e in chain):
        chain.append(found)
        found = found.__cause__ or found.__context__
    return chain


def _request_url(chain: list[BaseException]) -> Any:
    """The URL of the request that failed, from the innermost error that knows it."""
    for err in reversed(chain):
        try:
            url = getattr(getattr(err, "request", None), "url", None)
        except RuntimeError:  # httpx: an error raised without its request
            continue
        if url is not None and getattr(url, "host", None):
            return url
    return None


def _is_local(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def connection_failure(err: BaseException) -> Verdict | None:
    """A failure to reach the endpoint at all, named with its real cause; None for other errors.

    litellm reports every one of them as "InternalServerError 500: Connection error.".
    """
    chain = _chain(err)
    url = _request_url(chain)
    endpoint = str(url) if url is not None else "the model's endpoint"
    host = str(getattr(url, "host", "") or "")
    for cause in chain:
        if isinstance(cause, ConnectionRefusedError):
            reason = f"cannot connect to {endpoint}: connection refused (is the server running?)"
            if _is_local(host):
                return Verdict("retry", reason, max_attempts=LOCAL_REFUSED_ATTEMPTS, delay=LOCAL_REFUSED_DELAY)
            return Verdict("retry", reason)
        if isinstance(cause, socket.gaierror):
            reason = (
                f"cannot connect to {endpoint}: DNS lookup of {host or 'the host'} failed ({cause.strerror or cause})"
            )
            if cause.errno == socket.EAI_NONAME:  # no such name: asking again gets the same answer
                return Verdict("fail", f"{reason}; check the host in --api-base")
            return Verdict("retry", reason)  # e.g. EAI_AGAIN, a resolver that is briefly unreachable
        if isinstance(cause, ssl.SSLError):
            innermost = [e for e in chain if isinstance(e, ssl.SSLError)][-1]  # aiohttp's wrapper says less
            words = getattr(innermost, "verify_message", None) or str(innermost)
            return Verdict(
                "fail",
                f"cannot connect to {endpoint}: TLS error ({words}); check http:// or https:// in --api-base "
                "and the server's certificate",
            )
        if isinstance(cause, ConnectionResetError):
            return Verdict("retry", f"connection to {endpoint} was reset by the server")
    return None


# --- the decision ---------------------------------------------------------------------------


def classify(err: BaseException, now: Callable[[], float] = time.time) -> Verdict:
    """Retry, fail or compact: the decision for one failed model call."""
    if isinstance(err, StreamIncomplete):
        if err.cause is not None and (inner := classify(err.cause, now)).action != "retry":
            return inner  # e.g. a content-policy stop mid-stream is not a broken connection
        return Verdict("retry", str(err), _status(err.cause) if err.cause else 0)
    lm = litellm()
    status = _status(err)
    message = provider_message(err)
    codes = _codes(err)
    wait = retry_after(err, now)

    def fail(reason: str) -> Verdict:
        return Verdict("fail", reason, status)

    if isinstance(err, lm.ContextWindowExceededError) or "context_length_exceeded" in codes:
        return Verdict("overflow", f"the conversation is longer than the model's context window: {message}", status)
    if isinstance(err, lm.ContentPolicyViolationError) or "content_policy_violation" in codes:
        return fail(f"the provider's content policy refused the request ({status or 400}): {message}")
    if isinstance(err, lm.PaymentRequiredError) or status == 402:
        return fail(f"payment required (402): add credit to the provider account: {message}")
    if "insufficient_quota" in codes:
        return fail(f"quota exhausted ({status or 429}, insufficient_quota): add credit or raise the limit: {message}")
    if isinstance(err, lm.RateLimitError) or status == 429:
        return Verdict("retry", f"rate limited (429): {message}", 429, wait)
    if isinstance(err, lm.AuthenticationError) or status == 401:
        return fail(
            f"authentication failed ({status or 401}): the API key was rejected ({message}); "
            f"set a valid key in {key_variable(err)}, WORKBENCH_API_KEY or --api-key"
        )
    if isinstance(err, lm.PermissionDeniedError) or status == 403:
        return fail(
            f"permission denied (403): the API key may not use this model ({message}); "
            f"check the key in {key_variable(err)}, WORKBENCH_API_KEY or --api-key, or pick another --model"
        )
    if isinstance(err, lm.NotFoundError) or status == 404:
        return fail(f"model not found (404): check --model and --api-base: {message}")
    if isinstance(err, lm.UnsupportedParamsError):
        return fail(f"unsupported parameter for this model: {message}")
    if isinstance(err, (lm.BadRequestError, lm.UnprocessableEntityError)) or status in (400, 422):
        return fail(f"bad request ({status or 400}): {message}")
    if (connection := connection_failure(err)) is not None:
        return connection
    if isinstance(err, (lm.Timeout, TimeoutError)):
        return Verdict("retry", f"timed out{f' ({status})' if status else ''}: {message}", status, wait)
    if isinstance(err, (lm.InternalServerError, lm.ServiceUnavailableError, lm.BadGatewayError)) or (
        status in RETRIED_STATUS
    ):
        return Verdict("retry", f"server error {status or 500}: {message}", status, wait)
    if isinstance(err, (lm.APIConnectionError, ConnectionError)):
        return Verdict("retry", f"connection failed: {message}", status, wait)
    return fail(f"{type(err).__name__}{f' ({status})' if status else ''}: {message}")


def backoff(attempt: int, policy: RetryPolicy, rand: Callable[[], float] = random.random) -> float:
    """Full jitter: uniform in [0, min(max_delay, base_delay * 2**(attempt-1))]."""
    return rand() * min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1))


async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    on_wait: Callable[[pb.RetryWait], object],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    *,
    on_discard: Callable[[pb.StreamDiscarded], object] = lambda discarded: None,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
    rand: Callable[[], float] = random.random,
) -> T:
    """Call until it succeeds or fails for good (ModelCallFailed, or ContextOverflow to compact).

    The retry deadline counts from the end of the first failed attempt: a long stream that
    broke still gets its retries. No attempt starts after it, so one call with its retries
    ends within about 2 x the call's own deadline + the retry deadline (workbench/model/README.md).
    """
    started: float | None = None
    for attempt in itertools.count(1):
        try:
            return await call()
        except Exception as err:
            if started is None:
                started = clock()
            if isinstance(err, StreamIncomplete):  # whatever comes next, the partial text is gone
                on_discard(pb.StreamDiscarded(attempt=attempt, discarded_chars=err.partial_chars, reason=str(err)))
            verdict = classify(err, wall)
            if verdict.action == "overflow":
                raise ContextOverflow(verdict.reason, verdict.status_code) from err
            if verdict.action == "fail":
                raise ModelCallFailed(verdict.reason, verdict.status_code) from err
            limits = [n for n in (policy.max_attempts, verdict.max_attempts) if n > 0]
            if limits and attempt >= min(limits):
                raise ModelCallFailed(
                    f"{verdict.reason} (gave up after {attempt} attempts)", verdict.status_code
                ) from err
            try:
                delay, why = _delay(verdict, attempt, policy, rand, wall)
            except ModelCallFailed as beyond_cap:
                raise beyond_cap from err
            left = policy.deadline - (clock() - started)
            if policy.deadline > 0 and delay > left:
                raise ModelCallFailed(
                    f"{verdict.reason} (gave up after {attempt} attempts: waiting {delay:.0f} s more "
                    f"would pass the {policy.deadline:.0f} s retry deadline)",
                    verdict.status_code,
                ) from err
            on_wait(
                pb.RetryWait(
                    attempt=attempt,
                    max_attempts=min(limits) if limits else 0,
                    reason=f"{verdict.reason}{why}",
                    seconds=delay,
                    status_code=verdict.status_code,
                )
            )
            await sleep(delay)
    raise AssertionError("unreachable")


def _delay(
    verdict: Verdict, attempt: int, policy: RetryPolicy, rand: Callable[[], float], wall: Callable[[], float]
) -> tuple[float, str]:
    """How long to wait before the next attempt, and what to add to the reason about it."""
    if verdict.delay is not None:
        return verdict.delay, ""
    asked = verdict.retry_after
    if asked is None or asked <= 0:
        return backoff(attempt, policy, rand), ""
    if 0 < policy.retry_after_cap < asked:
        when = datetime.fromtimestamp(wall() + asked).strftime("%Y-%m-%d %H:%M:%S")
        raise ModelCallFailed(
            f"{verdict.reason}; the provider asks to wait {asked:.0f} s, more than the "
            f"{policy.retry_after_cap:.0f} s cap: try again after {when}",
            verdict.status_code,
        )
    return asked, f" (the provider asked to wait {asked:g} s)"
