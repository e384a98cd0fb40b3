"""Context compaction: older turns summarized by the model into one message.

When a request overflows the model's context window, or before a call whose prompt is above
`compact_threshold` of a window litellm knows, the conversation becomes

    the leading system message(s) + one user message with the summary + the last turns

The cut never falls between an assistant message and its tool results, so every tool call
kept still has exactly its result after it, and every call summarized is summarized with its
result. The summary is written by the same model, from a plain-text transcript of the older
messages (no tool definitions, so the summary call itself cannot call tools).

Events: a Compaction event (messages before and after, reason, tokens before), then the
summary as a `message` event. A conversation rebuilt from the log is: its system messages,
the summary, and the last `messages_after - 1 - systems` messages before the Compaction event.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from google.protobuf.message import Message

from workbench.core.feedback import model_text
from workbench.model.gateway import context_window, message_to_wire, tools_to_wire
from workbench.pb import workbench_pb2 as pb

KEEP_TURNS = 2  # the last assistant turns (with their tool results) kept word for word
ITEM_LIMIT = 4_000  # characters of one message shown to the summarizer (head and tail)
SUMMARY_PREFIX = "[Earlier conversation, compacted]"

SUMMARIZER = """You compact an agent's conversation so it can continue within its context window.
Write a summary that lets the agent carry on without the original messages:
- the person's task and every requirement or preference they stated, quoted where short;
- what has been done: files read, created or changed (with paths), commands run, results;
- errors met and how they were resolved, and anything that did not work;
- facts found that are still needed (names, paths, numbers, decisions);
- what remains to do next.
Be specific and concise. Do not address the person; write notes for the agent."""


class NothingToCompact(Exception):
    """The conversation has no older turns to summarize (only the system prompt and the last turn)."""


CHARS_PER_TOKEN = 4


def prompt_tokens(messages: list[pb.Message], tools: list[pb.ToolDefinition]) -> int:
    """About how many tokens the next request takes, without running a tokenizer.

    The provider's own count for the last call (its input plus its reply) and about four
    characters a token for the messages after it. Before the first reply, everything is
    estimated, tool definitions included. Running the tokenizer over the whole conversation
    every turn would cost milliseconds per turn (and ~0.3 s to load it), for a threshold.
    """
    base, rest = 0, messages
    for i in range(len(messages) - 1, -1, -1):
        usage = messages[i].usage
        if messages[i].role == pb.ROLE_ASSISTANT and usage.input_tokens:
            base, rest = usage.input_tokens + usage.output_tokens, messages[i + 1 :]
            break
    else:
        base = len(json.dumps(tools_to_wire(tools))) // CHARS_PER_TOKEN if tools else 0
    chars = sum(len(json.dumps(message_to_wire(m))) for m in rest)
    return base + chars // CHARS_PER_TOKEN


@dataclass
class Split:
    system: list[pb.Message]
    older: list[pb.Message]
    recent: list[pb.Message]


def split(messages: list[pb.Message], keep_turns: int = KEEP_TURNS) -> Split:
    """Leading system messages, the older part to summarize, and the last `keep_turns` turns.

    A turn starts at an assistant message and keeps its tool results; the user messages just
    before it (the prompt, an Inbox drain) go with it. A cut falls only before an assistant or
    user message, never at a tool result. With `keep_turns` 0 every turn is summarized.
    """
    head = 0
    while head < len(messages) and messages[head].role == pb.ROLE_SYSTEM:
        head += 1
    body = messages[head:]
    starts = [i for i, m in enumerate(body) if m.role == pb.ROLE_ASSISTANT]
    if keep_turns <= 0:
        cut = len(body)  # every turn summarized; only trailing user messages stay
    elif len(starts) >= keep_turns:
        cut = starts[-keep_turns]
    else:
        cut = 0
    while cut > 0 and body[cut - 1].role == pb.ROLE_USER:
        cut -= 1
    return Split(list(messages[:head]), list(body[:cut]), list(body[cut:]))


def transcript(messages: list[pb.Message]) -> str:
    """The older messages as plain text for the summarizer (long items cut head and tail)."""
    lines = []
    for m in messages:
        if m.role == pb.ROLE_USER:
            lines.append(f"USER:\n{_clip(m.text)}")
        elif m.role == pb.ROLE_ASSISTANT:
            if m.text:
                lines.append(f"ASSISTANT:\n{_clip(m.text)}")
            for call in m.tool_calls:
                lines.append(f"TOOL CALL {call.name} {_clip(call.arguments, 1_000)}")
        elif m.role == pb.ROLE_TOOL:
            result = m.tool_result
            status = "error" if result.is_error else "ok"
            lines.append(f"TOOL RESULT {result.name} ({status}):\n{_clip(model_text(result))}")
        elif m.role == pb.ROLE_SYSTEM:
            lines.append(f"SYSTEM:\n{_clip(m.text)}")
    return "\n\n".join(lines)


def _clip(text: str, limit: int = ITEM_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters left out ...]\n{text[-half:]}"


class Compactor:
    """Decides when to compact one agent's conversation and does it through `summarize`."""

    def __init__(
        self,
        wire_model: str,
        summarize: Callable[[list[pb.Message]], Awaitable[pb.Message]],
        emit: Callable[[Message], object],
        threshold: float,
        keep_turns: int = KEEP_TURNS,
    ):
        self.wire_model = wire_model
        self.summarize = summarize
        self.emit = emit
        self.threshold = threshold
        self.keep_turns = keep_turns

    def due(self, messages: list[pb.Message], tools: list[pb.ToolDefinition]) -> str:
        """A reason to compact before the next call, or "" (always "" when the window is unknown)."""
        window = context_window(self.wire_model)
        if not window or self.threshold <= 0:
            return ""
        tokens = prompt_tokens(messages, tools)
        if tokens < self.threshold * window:
            return ""
        if not split(messages, self.keep_turns).older:
            return ""  # nothing older to summarize: call as it is; an overflow compacts harder
        return f"{tokens:,} tokens is over {self.threshold:.0%} of the model's {window:,}-token window"

    async def compact(self, messages: list[pb.Message], reason: str, tools: list[pb.ToolDefinition]) -> pb.Message:
        """Replace `messages` in place by system + summary + last turns; return the summary call's reply.

        Keeps `keep_turns` turns when there is anything older, else fewer; raises
        NothingToCompact when even the last turn has nothing before it.
        """
        parts = next(
            (s for keep in range(self.keep_turns, -1, -1) if (s := split(messages, keep)).older),
            None,
        )
        if parts is None:
            raise NothingToCompact("nothing older to summarize: the last turn alone does not fit")
        tokens_before = prompt_tokens(messages, tools)
        request = [
            pb.Message(role=pb.ROLE_SYSTEM, text=SUMMARIZER),
            pb.Message(role=pb.ROLE_USER, text=f"The conversation so far:\n\n{transcript(parts.older)}"),
        ]
        reply = await self.summarize(request)
        summary = pb.Message(
            role=pb.ROLE_USER,
            author=pb.AUTHOR_WORKBENCH,
            text=(
                f"{SUMMARY_PREFIX} {len(parts.older)} earlier messages were summarized to fit the "
                f"context window:\n\n{reply.text.strip()}"
            ),
        )
        compacted = [*parts.system, summary, *parts.recent]
        self.emit(
            pb.Compaction(
                messages_before=len(messages),
                messages_after=len(compacted),
                reason=reason,
                tokens_before=tokens_before,
            ),
        )
        self.emit(summary)
        messages[:] = compacted
        return reply
