"""The texts of calls made again, pinned whole (issue 36 item 8): the reminder on a failure made
again, the note that the model already has a result, the refusals of a call that keeps failing or
keeps returning the same, the loop stop (no person to ask, or the person stopped it), the note on
a result the reply wrote itself. Real tool results on a real workspace go through the run's own
`Repeats`; the loop stop through `looping.ask` with a real Guard. A change of wording is a
reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from inline_snapshot import snapshot

from tests.words import tool_ctx
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.engine import looping
from workbench.engine.calls_in_text import WROTE_RESULT
from workbench.engine.repeats import Repeats
from workbench.guard.guardrail import Guard
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext

BOX = Toolbox(["read_file", "edit_file"])


class Run:
    """Calls as one run makes them: refused by the repeats' memory, or run and recorded there."""

    def __init__(self, ctx: ToolContext):
        self.ctx, self.repeats, self.turn = ctx, Repeats(BOX.changing(), ctx.workspace), 0

    async def call(self, name: str, **args: Any) -> str:
        self.turn += 1
        call = pb.ToolCall(id=f"c{self.turn}", name=name, arguments=json.dumps(args))
        result = self.repeats.refuse(call) or await BOX.invoke(call, self.ctx.for_call(call.id))
        self.repeats.record(call, result, self.turn)
        return model_text(result)


async def test_a_failing_call_made_again(workspace: Path, tmp_path: Path) -> None:
    run = Run(tool_ctx(workspace, tmp_path))
    said = [await run.call("read_file", path="config.yaml") for _ in range(5)]
    assert (
        said[1]
        == said[0]
        == snapshot(
            "Error: config.yaml does not exist; nothing with a similar name exists. Use glob or ls to find the right path."
        )
    )
    assert said[2] == snapshot("""\
Error: config.yaml does not exist; nothing with a similar name exists. Use glob or ls to find the right path.
Reminder: this exact call (same tool, same arguments) has now failed 3 times with nothing changed in between. Do not repeat it; change the arguments or take another approach.\
""")
    assert said[3] == snapshot("""\
Error: config.yaml does not exist; nothing with a similar name exists. Use glob or ls to find the right path.
Reminder: this exact call (same tool, same arguments) has now failed 4 times with nothing changed in between. Do not repeat it; change the arguments or take another approach.\
""")
    assert said[4] == snapshot(
        "Error: not run: this exact call (same tool, same arguments) failed 4 times in a row and nothing has changed since (no successful write_file, edit_file, bash or other changing call), so it would fail again. Change the arguments or take another approach."
    )


async def test_a_call_whose_result_the_model_has(workspace: Path, tmp_path: Path) -> None:
    (workspace / "version.txt").write_text("1.4.2\n")
    run = Run(tool_ctx(workspace, tmp_path))
    said = [await run.call("read_file", path="version.txt") for _ in range(3)]
    assert said[0] == snapshot("     1\t1.4.2")
    assert said[1] == snapshot("""\
     1	1.4.2
Note: you already have this result: the same call (same tool, same arguments) returned exactly this at turn 1 (1 turn ago). Calling it again will not change it; use that result: if it answers the task, answer now without a tool call.\
""")
    assert said[2] == snapshot(
        "Error: not run: this exact call (same tool, same arguments) returned the same result twice, at turns 1 and 2, and nothing else has changed since, so you already have its result. Use it: if it answers the task, answer now without a tool call; else take the next step."
    )


def test_the_loop_stop_with_no_person_to_ask() -> None:
    call = pb.ToolCall(id="c9", name="read_file", arguments='{"path": "same.txt"}')
    emitted: list[Any] = []
    stop = asyncio.run(looping.ask(call, 3, agent_id="main", guard=None, emit=emitted.append, on_status=lambda s: None))
    assert stop.result is not None
    assert (model_text(stop.result), stop.reason, [e.text for e in emitted]) == snapshot(
        (
            "Error: not run: stopped: agent main repeated read_file(same.txt) 4 times with nothing changed; the run stops here for the person.",
            "stopped: agent main repeated read_file(same.txt) 4 times",
            [
                "stopped: agent main repeated read_file(same.txt) 4 times (nothing changed in between; no person can be asked here)"
            ],
        )
    )


async def test_the_loop_stop_the_person_answers(workspace: Path, tmp_path: Path) -> None:
    guard = Guard(Settings(workspace=workspace, data_dir=tmp_path / "data"), answerable=True)
    call = pb.ToolCall(id="c9", name="bash", arguments=json.dumps({"command": "pytest -q " + "x" * 80}))
    emitted: list[Any] = []

    async def asked(answer: dict[str, Any]) -> tuple[str, str, str]:
        task = asyncio.create_task(
            looping.ask(call, 3, agent_id="main", guard=guard, emit=emitted.append, on_status=lambda s: None)
        )
        while not guard.pending_reviews():
            await asyncio.sleep(0.01)
        (review,) = guard.pending_reviews()
        guard.decide(call.id, **answer)
        stop = await task
        return review.reason, model_text(stop.result) if stop.result else "(it runs)", stop.note

    assert await asked({"approve": True}) == snapshot(
        (
            "agent main is looping: it made bash(pytest -q xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…) 3 times in a row with the same outcome and nothing changed, and asks to make it again. Let it go on, write it a note, or cancel it",
            "(it runs)",
            "",
        )
    )
    assert await asked({"approve": False}) == snapshot(
        (
            "agent main is looping: it made bash(pytest -q xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…) 3 times in a row with the same outcome and nothing changed, and asks to make it again. Let it go on, write it a note, or cancel it",
            "Error: not run: you made this exact call 4 times in a row with nothing changed; the person stopped it and did not let it run. Do not repeat it: take another approach.",
            "",
        )
    )
    assert await asked({"approve": False, "reason": "the tests need a database; start it first"}) == snapshot(
        (
            "agent main is looping: it made bash(pytest -q xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…) 3 times in a row with the same outcome and nothing changed, and asks to make it again. Let it go on, write it a note, or cancel it",
            "Error: not run: you made this exact call 4 times in a row with nothing changed; the person stopped it and wrote to you (the next message). Do not repeat it: take another approach.",
            "the tests need a database; start it first",
        )
    )


def test_the_note_on_a_result_the_reply_wrote_itself() -> None:
    assert WROTE_RESULT.format(name="read_file") == snapshot(
        "Your reply also wrote a result for this read_file call itself; that text was made up, not the call's result. The real result is the one above: answer only from it."
    )
