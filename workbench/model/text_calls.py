"""Tool calls a model wrote as text, on the wire: given back as text with their results.

The loop runs the calls a model wrote in its reply's text (`engine.calls_in_text`) and marks
them `from_text`. `echo_reply` and `echo_results` give such a turn back to the model as it wrote
it: the reply's own text, then the results in a user message ("Result of your read_file call:
...", then the closing line for what they are: `closing_line`), so the model sees that the
block it wrote ran. Shown as tool_calls instead, a chat template renders
them in its own call format, and a small model that never wrote that format copies its prose
without a block. Pure functions: no I/O, no state.
"""

from __future__ import annotations

from typing import Any

from workbench.core.feedback import model_text
from workbench.pb import workbench_pb2 as pb


def echo_reply(message: pb.Message) -> dict[str, Any]:
    """A reply whose calls were recovered from its text, as the model wrote it: its whole text,
    without tool_calls."""
    return {"role": "assistant", "content": message.text}


def echo_results(results: list[pb.ToolResult]) -> dict[str, Any]:
    """The results of one reply's text calls, in call order, as one user message ending with
    the closing line for what they are (`closing_line`)."""
    texts = [f"Result of your {r.name} call:\n{model_text(r)}" for r in results]
    return {"role": "user", "content": "\n\n".join(texts) + closing_line(results)}


def closing_line(results: list[pb.ToolResult], *, as_text: bool = True) -> str:
    """The line after a turn's results, from what they are (their tools mark it in metadata):
    content (a file's text, a command's output, a page) may answer the task: ECHO_NEXT;
    discovery (`discovery`: paths from ls or glob) is not what the files hold: ECHO_READ; a
    search that found nothing (`empty`, with `why_empty` when known): echo_empty; a failure:
    ECHO_FIX (with its cause when the search found nothing); an async child's start
    (`pending`): ECHO_WAIT. For real calls (`as_text` false) failures and starts get no line:
    the error says what to do, and the child's result comes in the Inbox."""
    kinds = [_kind(r) for r in results]
    if "failed" in kinds:
        if not as_text:
            return ""
        why = next((_why(r) for r, k in zip(results, kinds, strict=True) if k == "failed" and _why(r)), "")
        return (
            f"\n\nA call failed ({why}): correct it as its error says and send it again as a JSON block."
            if why
            else ECHO_FIX
        )
    if "pending" in kinds:
        return ECHO_WAIT if as_text else ""
    if "empty" in kinds:
        return echo_empty(next(_why(r) for r, k in zip(results, kinds, strict=True) if k == "empty"))
    return ECHO_READ if "discovery" in kinds else ECHO_NEXT


def _kind(result: pb.ToolResult) -> str:
    """failed, pending, empty, discovery or content: what the result is, for the closing line.
    A failure with output its tool marked `partial` (a bash command that timed out after printing)
    is content: it may hold the answer (docs/DECISIONS.md)."""
    if result.is_error and not _flag(result, "partial"):
        return "failed"
    for kind in ("pending", "empty", "discovery"):
        if _flag(result, kind):
            return kind
    return "content"


def _flag(result: pb.ToolResult, key: str) -> bool:
    """Whether the result's tool set metadata `key` to true."""
    return key in result.metadata and result.metadata[key] is True


def _why(result: pb.ToolResult) -> str:
    """Why the result found nothing, as its tool said it (metadata `why_empty`); '' when unsaid."""
    why = result.metadata["why_empty"] if "why_empty" in result.metadata else ""
    return why if isinstance(why, str) else ""


def echo_empty(why: str) -> str:
    """After a search that found nothing (and did not fail): what it was, and both ways on."""
    said = f": {why}" if why else ""
    return (
        f"\n\nIt found nothing{said}. If finding nothing answers the task, reply with that in plain words; "
        "else make the next call."
    )


# After the results of a reply echoed as text: else a model whose turns are all JSON blocks goes on
# calling with the answer in hand (docs/DECISIONS.md).
ECHO_NEXT = (
    "\n\nIf this answers the task, reply now with the answer in plain words, without a JSON block; "
    "else make the next call."
)
# After paths (ls, glob): told to answer now, a model answers about a file it never read (docs/DECISIONS.md).
ECHO_READ = (
    "\n\nThat lists paths, not what the files hold: if the task asks what a file holds, read it first "
    "(read_file) and answer from its text; if the paths themselves answer the task, reply now with them "
    "in plain words; else make the next call."
)
# After an async child's start: told to answer now, a model guesses the child's result (docs/DECISIONS.md).
ECHO_WAIT = (
    "\n\nIts result comes later, in your Inbox: do not guess it. Reply without a JSON block to wait "
    "for it, or make the next call."
)
# After results of which one failed: told to answer when it could, a model answers with the error (docs/DECISIONS.md).
ECHO_FIX = "\n\nA call failed: correct it as its error says and send it again as a JSON block."
