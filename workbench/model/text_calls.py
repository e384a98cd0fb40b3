"""Tool calls a model wrote as text, on the wire: given back as text with their results.

The loop runs the calls a model wrote in its reply's text (`engine.calls_in_text`) and marks
them `from_text`. `echo_as_text` gives such a turn back to the model as it wrote it: the reply's
own text, then the results in a user message ("Result of your read_file call: ...", then
ECHO_NEXT: answer in plain words if that answers the task, or ECHO_FIX after a failure), so the
model sees that the block it wrote ran. Shown as tool_calls instead, a chat template renders
them in its own call format, and a small model that never wrote that format copies its prose
without a block. Pure functions: no I/O, no state.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from workbench.core.feedback import model_text
from workbench.pb import workbench_pb2 as pb


def echo_as_text(message: pb.Message, text_calls: Collection[str], wire: list[dict[str, Any]]) -> bool:
    """Append `message` to `wire` as text when it is a reply whose calls were recovered from its
    text, or the result of such a call (`text_calls`: their ids); False for any other message.

    The reply goes back as its whole text, without tool_calls; the results of one reply go in
    one user message, in call order.
    """
    if message.role == pb.ROLE_ASSISTANT and any(c.id in text_calls for c in message.tool_calls):
        wire.append({"role": "assistant", "content": message.text})
        return True
    if message.role != pb.ROLE_TOOL or message.tool_result.call_id not in text_calls:
        return False
    result = message.tool_result
    text = f"Result of your {result.name} call:\n{model_text(result)}"
    last = wire[-1]["content"] if wire and wire[-1]["role"] == "user" else ""
    closing = _closing(result)
    tail = next((t for t in (ECHO_NEXT, ECHO_WAIT, ECHO_FIX) if last.endswith(t)), "")
    if tail:  # the result of an earlier call of the same reply: one message, one closing line
        closing = max(tail, closing, key=(ECHO_NEXT, ECHO_WAIT, ECHO_FIX).index)  # a failure's line wins
        wire[-1]["content"] = last.removesuffix(tail) + "\n\n" + text + closing
    else:
        wire.append({"role": "user", "content": text + closing})
    return True


def _closing(result: pb.ToolResult) -> str:
    if may_answer(result):
        return ECHO_NEXT
    return ECHO_WAIT if _flag(result, "pending") else ECHO_FIX


def may_answer(result: pb.ToolResult) -> bool:
    """Whether the model may find its answer in this result: it succeeded, or it failed with output
    its tool marked `partial` (a bash command that timed out after printing: "build id: 7f3a9c2e").
    Told to correct and resend such a call, a small model re-runs it (docs/DECISIONS.md). A result
    its tool marked `empty` (found nothing) is not one."""
    if _flag(result, "empty") or _flag(result, "pending"):
        return False  # found nothing (a glob without matches), or the answer comes later (an async child)
    return not result.is_error or _flag(result, "partial")


def _flag(result: pb.ToolResult, key: str) -> bool:
    """Whether the result's tool set metadata `key` to true."""
    return key in result.metadata and result.metadata[key] is True


# After the results of a reply echoed as text: else a model whose turns are all JSON blocks goes on
# calling with the answer in hand (docs/DECISIONS.md).
ECHO_NEXT = (
    "\n\nIf this answers the task, reply now with the answer in plain words, without a JSON block; "
    "else make the next call."
)
# After an async child's start: told to answer now, a model guesses the child's result (docs/DECISIONS.md).
ECHO_WAIT = (
    "\n\nIts result comes later, in your Inbox: do not guess it. Reply without a JSON block to wait "
    "for it, or make the next call."
)
# After results of which one failed: told to answer when it could, a model answers with the error (docs/DECISIONS.md).
ECHO_FIX = "\n\nA call failed: correct it as its error says and send it again as a JSON block."
