"""The texts of a call that ended without its tool's own words, pinned whole (issue 36 item 8): a
call the run's cancel interrupted, a failure inside Workbench, a tool that raised without a message,
a result with nothing in it. Made by core/feedback.py's own functions, and a tool registered for the
test that raises; a change of wording is a reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

from pathlib import Path

from inline_snapshot import snapshot

from tests.conftest import RegisterTool
from tests.words import said, tool_ctx
from workbench.core.feedback import Feedback, interrupted, machinery_bug, model_text
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext


async def _silent(ctx: ToolContext, kind: str = "feedback") -> str:
    """Raise without a message.

    Args:
        kind: feedback, value or nested
    """
    if kind == "feedback":
        raise Feedback()
    if kind == "nested":
        raise Feedback() from OSError(28, "No space left on device")
    raise ValueError()


async def _nothing(ctx: ToolContext) -> str:
    """Return nothing."""
    return ""


def test_calls_that_never_finished() -> None:
    call = pb.ToolCall(id="c1", name="bash", arguments="{}")
    assert model_text(interrupted(call)) == snapshot(
        "Error: interrupted: the run was cancelled before this call finished"
    )
    assert model_text(interrupted(call, partial="building...\n")) == snapshot("""\
building...
Error: interrupted: the run was cancelled before this call finished\
""")
    assert model_text(machinery_bug(call, KeyError("window"))) == snapshot(
        "Error: the call failed inside workbench: KeyError: 'window'"
    )


async def test_tools_that_said_nothing(register_tool: RegisterTool, workspace: Path, tmp_path: Path) -> None:
    register_tool(_silent, name="silent")
    register_tool(_nothing, name="nothing")
    box, ctx = Toolbox(["silent", "nothing"]), tool_ctx(workspace, tmp_path)
    assert await said(box, ctx, "silent", {}) == snapshot("Error: silent failed")
    assert await said(box, ctx, "silent", {"kind": "nested"}) == snapshot("Error: [Errno 28] No space left on device")
    assert await said(box, ctx, "silent", {"kind": "value"}) == snapshot("Error: ValueError in silent")
    assert await said(box, ctx, "nothing", {}) == snapshot("(no output)")
