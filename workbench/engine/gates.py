"""The gates a tool call passes before its tool runs: one pipeline, one convention.

`AgentLoop._run_tool` reads: the gates, the tool, the completion. The loop's gates, in order:
1. the looping review: a call made `repeat_stop` times in a row with nothing changed stops for
   the person (`engine/looping.py`);
2. a call the model wrote as text that cannot run gets the reason it cannot (`calls_in_text.py`);
3. repeats: a call that would only fail again, or return what the model already has
   (`engine/repeats.py`);
4. the tool's own checks: a call that can only fail (an unknown tool, bad arguments, edit_file's
   old_text not in the file) fails as itself, never put to a person (`own_checks`);
5. the guard: recorded, blocked, or reviewed by the person (`guard/guardrail.py`);
6. the checkpoint: the workspace kept before a call that can change it (`checkpoints/`).

Each gate is `async gate(call) -> None`: returning lets the call go on to the next gate; raising
`CallRefused(result)` ends it there, and `result` (the error the model reads) is the call's
result: nothing of the call ran. A new policy before a call (a cost cap, a plan mode) is one more
gate in the loop's list, not another branch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from google.protobuf.message import Message

from workbench.core.feedback import Feedback, to_result
from workbench.pb import workbench_pb2 as pb

if TYPE_CHECKING:
    from workbench.checkpoints.checkpointer import Checkpointer
    from workbench.tools.registry import Toolbox, ToolContext


class CallRefused(Exception):
    """A gate stopped the call: `result` is what the model reads instead (nothing of it ran)."""

    def __init__(self, result: pb.ToolResult):
        super().__init__(result.error)
        self.result = result


Gate = Callable[[pb.ToolCall], Awaitable[None]]


def own_checks(toolbox: Toolbox, ctx: ToolContext) -> Gate:
    """The gate of the tool's own checks (`Toolbox.check`): what a call would fail with, without
    side effects, is its result before the guard judges it (a review would put to the person an
    edit that cannot apply, and headless deny it without the model learning why it was wrong)."""

    async def gate(call: pb.ToolCall) -> None:
        if (failed := await toolbox.check(call, ctx)) is not None:
            raise CallRefused(failed)

    return gate


def record_checkpoint(cp: pb.Checkpoint, emit: Callable[[Message], object], *, failed: str) -> None:
    """A checkpoint's events, wherever it was taken (before a call here, at a prompt or a run's end
    by the Session): the `checkpoint` event, an info notice per path not kept, and when it failed
    the warning `failed` ('' when the failure is said otherwise: the call it refused)."""
    emit(cp)
    for line in cp.skipped:  # a large ignored tree, a file over the limit: once per session
        emit(pb.Notice(level="info", text=f"checkpoint: not kept: {line}"))
    if cp.error and failed:
        emit(pb.Notice(level="warning", text=failed))


async def keep_workspace(
    call: pb.ToolCall, checkpoints: Checkpointer, *, agent_id: str, emit: Callable[[Message], object]
) -> None:
    """The checkpoint gate: keep the workspace as it is before `call`, which can change it (a
    `checkpoint` event). When none could be taken and the person has not allowed calls without
    one (setting checkpoint_failure), the call does not run."""
    cp = await checkpoints.take(pb.CHECKPOINT_REASON_TOOL_CALL, call_id=call.id, tool=call.name, agent=agent_id)
    if cp is None:
        return
    refused = bool(cp.error) and checkpoints.refuse_on_failure
    record_checkpoint(cp, emit, failed="" if refused else f"{cp.error}; the call runs without one")
    if not refused:
        return
    raise CallRefused(
        to_result(
            call,
            Feedback(
                f"{cp.error}. The call did not run: Workbench keeps the workspace before each change, and the "
                "person has not allowed changes without it (setting checkpoint_failure)"
            ),
        )
    )
