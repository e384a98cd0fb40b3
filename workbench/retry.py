"""Retry of model calls by error semantics: the only place anything is retried.

(First version: classification of the common litellm errors and capped exponential backoff
with full jitter; issue 6 completes it.)
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from workbench.model import StreamIncomplete, litellm
from workbench.pb import workbench_pb2 as pb

T = TypeVar("T")


class ModelCallFailed(Exception):
    """A model call that failed for good; `reason` is one line a person can act on."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    deadline: float = 300.0
    retry_after_cap: float = 60.0
    base_delay: float = 1.0
    max_delay: float = 30.0


@dataclass
class Verdict:
    retry: bool
    reason: str
    status_code: int = 0


def classify(err: BaseException) -> Verdict:
    lm = litellm()
    status = int(getattr(err, "status_code", 0) or 0)
    text = str(err)
    if isinstance(err, StreamIncomplete):
        return Verdict(True, str(err))
    if isinstance(err, lm.RateLimitError):
        if "insufficient_quota" in text:
            return Verdict(False, f"quota exhausted: {text}", status)
        return Verdict(True, f"rate limited ({status or 429})", status)
    if isinstance(err, lm.AuthenticationError):
        return Verdict(False, f"authentication failed ({status}): check the API key: {text}", status)
    if isinstance(err, (lm.Timeout, lm.APIConnectionError, lm.InternalServerError, lm.ServiceUnavailableError)):
        return Verdict(True, f"{type(err).__name__} ({status or 'no status'})", status)
    if status in (500, 502, 503, 504, 529):
        return Verdict(True, f"server error {status}", status)
    return Verdict(False, f"{type(err).__name__}: {text}", status)


def backoff(attempt: int, policy: RetryPolicy, rand: Callable[[], float] = random.random) -> float:
    """Full jitter: uniform in [0, min(cap, base * 2**(attempt-1))]."""
    return rand() * min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1))


async def call_with_retry(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    on_wait: Callable[[pb.RetryWait], None],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    started = time.monotonic()
    for attempt in range(1, policy.max_attempts + 1):
        try:
            return await call()
        except Exception as err:
            verdict = classify(err)
            if not verdict.retry:
                raise ModelCallFailed(verdict.reason) from err
            if attempt == policy.max_attempts:
                raise ModelCallFailed(f"{verdict.reason}; gave up after {attempt} attempts") from err
            delay = backoff(attempt, policy)
            if time.monotonic() - started + delay > policy.deadline:
                raise ModelCallFailed(f"{verdict.reason}; retry deadline of {policy.deadline:.0f} s passed") from err
            on_wait(
                pb.RetryWait(
                    attempt=attempt,
                    max_attempts=policy.max_attempts,
                    reason=verdict.reason,
                    seconds=delay,
                    status_code=verdict.status_code,
                )
            )
            await sleep(delay)
    raise AssertionError("unreachable")
