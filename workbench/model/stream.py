"""A streamed reply assembled into one assistant Message: text, tool calls, ids, progress.

Chunks arrive in litellm's OpenAI shape. Text goes out as it comes (`on_delta`); tool-call
arguments are collected as parts and joined once at the end (linear in their size), and their
progress is reported at most every `CALL_DELTA_INTERVAL` seconds per call (`on_call_delta`).

Every tool call gets an id of ours, unique in the session (saved outputs and events are keyed
by it); the provider's id is kept in `provider_id` and used on the wire. Providers that number
their ids per reply (`call_0` every turn) are common; two calls of one reply with the same
provider id get distinct wire ids.

Text the model streams can hold a lone surrogate (a JSON `\\ud800` escape), which no UTF-8
encoder accepts: each is replaced by U+FFFD and the replacement is noted, so the run goes on.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.pb import workbench_pb2 as pb

log = logging.getLogger("workbench")

CALL_DELTA_INTERVAL = 0.1  # seconds between two progress reports of one call's arguments
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class StreamIncomplete(Exception):
    """The stream broke or ended before the message was complete; its partial text is discarded.

    `cause` is the error that broke it (None when the stream just ended without a finish
    reason); `partial_chars` is how much text had been streamed (and shown) before.
    """

    def __init__(self, partial_chars: int, cause: BaseException | None = None):
        how = f"broke ({first_line(cause)})" if cause else "ended without a finish reason"
        super().__init__(f"the model's stream {how} after {partial_chars} chars")
        self.partial_chars = partial_chars
        self.cause = cause


def first_line(err: BaseException) -> str:
    """The error's own words, without litellm's nested class-name prefixes and suffixes."""
    text = str(err).rsplit("Exception - ", 1)[-1].split(" Original exception", 1)[0].strip()
    lines = text.splitlines()
    return lines[0][:160] if lines else type(err).__name__


def new_call_id() -> str:
    """An id of ours for one tool call, unique in the session (64 random bits)."""
    return f"wb_{uuid.uuid4().hex[:16]}"


def replace_surrogates(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate replaced by U+FFFD, and how many there were."""
    if text.isascii():
        return text, 0
    return _LONE_SURROGATE.subn("\ufffd", text)


@dataclass
class _CallParts:
    provider_id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    chars: int = 0
    reported: float = float("-inf")


class ReplyAssembler:
    """Takes a stream's chunks one by one; `message()` gives the assembled reply."""

    def __init__(
        self,
        on_delta: Callable[[str], None] = lambda text: None,
        on_call_delta: Callable[[pb.ToolCallDelta], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.on_delta = on_delta
        self.on_call_delta = on_call_delta
        self.clock = clock
        self.text: list[str] = []
        self.text_chars = 0
        self.calls: dict[int, _CallParts] = {}
        self.finished = False
        self.usage: Any = None
        self.replaced: dict[str, int] = {}  # where lone surrogates were replaced: count

    def take(self, chunk: Any) -> None:
        """Add one streamed chunk's text, tool-call pieces, finish reason and usage."""
        self.usage = getattr(chunk, "usage", None) or self.usage
        for choice in chunk.choices:
            delta = choice.delta
            if delta is not None and delta.content:
                text, bad = replace_surrogates(delta.content)
                if bad:
                    self._note("text", bad)
                self.text.append(text)
                self.text_chars += len(text)
                self.on_delta(text)
            for tc in (getattr(delta, "tool_calls", None) or []) if delta is not None else []:
                self._take_call(tc)
            if choice.finish_reason:
                self.finished = True

    def _take_call(self, tc: Any) -> None:
        index = tc.index if getattr(tc, "index", None) is not None else len(self.calls)
        call = self.calls.setdefault(index, _CallParts())
        if tc.id:
            call.provider_id = tc.id
        function = tc.function
        if function is None:
            return
        if function.name and not call.name:
            call.name, bad = replace_surrogates(function.name)
            if bad:
                self._note("a tool name", bad)
        if function.arguments:
            call.parts.append(function.arguments)
            call.chars += len(function.arguments)
        if self.on_call_delta is not None and call.name:
            now = self.clock()
            if now - call.reported >= CALL_DELTA_INTERVAL:
                call.reported = now
                self.on_call_delta(pb.ToolCallDelta(index=index, name=call.name, chars=call.chars))

    def _note(self, where: str, count: int) -> None:
        self.replaced[where] = self.replaced.get(where, 0) + count

    def notes(self) -> list[str]:
        """What was changed in the model's reply to keep it (lone surrogates), one line each."""
        return [
            f"the model's reply held {n} lone surrogate code point(s) (invalid Unicode) in {where}; "
            "each was replaced by U+FFFD"
            for where, n in self.replaced.items()
        ]

    def message(self, model: str) -> pb.Message:
        """The assistant Message: the text, and the tool calls in index order with ids of ours."""
        reply = pb.Message(role=pb.ROLE_ASSISTANT, text="".join(self.text), model=model)
        used: set[str] = set()
        for index in sorted(self.calls):
            parts = self.calls[index]
            arguments, bad = replace_surrogates("".join(parts.parts))
            if bad:
                self._note("tool-call arguments", bad)
            ours = new_call_id()
            provider = parts.provider_id or ours
            if provider in used:  # the provider repeated an id within this reply
                provider = f"{provider}_{index}"
                while provider in used:
                    provider += "_"
            used.add(provider)
            reply.tool_calls.append(pb.ToolCall(id=ours, provider_id=provider, name=parts.name, arguments=arguments))
        for note in self.notes():
            log.warning("%s", note)
        return reply
