"""An answer that only announces its next step (workbench/engine/announce.py, the `announce_check`
setting) gets one line back, once a run, on its own allowance: it still comes after the line the
other checks share (the rest line, then "I will make the next call.": issue 38's eval)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.engine.announce import LINE, announced_step
from workbench.pb import workbench_pb2 as pb

TOOLS = ["read_file", "write_file", "edit_file", "bash"]


@pytest.mark.parametrize(
    ("answer", "step"),
    [
        ("I will make the next call.", "I will make the next call."),
        ("The mkdir command was successful. Now I will copy app.ini into it.", "Now I will copy app.ini into it."),
        ("Sure! I\u2019ll create the folder now.", "I\u2019ll create the folder now."),
        ("Let me read the file first:", "Let me read the file first"),
        (
            "Next, I need to run the check script to verify the fix.",
            "Next, I need to run the check script to verify the fix.",
        ),
        ("I'll do that for you.", "I'll do that for you."),
    ],
)
def test_an_announced_step(answer: str, step: str) -> None:
    assert announced_step(answer) == step


@pytest.mark.parametrize(
    "answer",
    [
        "I have updated net.toml: the timeout is 30.",
        "Done. Let me know if you need anything else.",
        "I'll be happy to help!",
        "Shall I run it?",
        "ok, I will not write it",  # a refusal
        "I will run this:\n```bash\nmake test\n```",  # a how-to: advice.py's
        "It needs DEPLOY_REGION (eu or us). I hope this helps.",
        "",
        "I will explain. " + "The answer is long. " * 40 + "Now I will stop.",  # longer than an announcement
    ],
)
def test_no_announcement(answer: str) -> None:
    assert announced_step(answer) == ""


async def test_the_step_after_the_rest_line_is_asked_for(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "app.ini").write_text("[app]\n")
    scripted_model.add(
        reply("", call("bash", command="mkdir build")),
        reply("The folder was created."),  # the rest line: copy app.ini is left
        reply("I will make the next call."),  # the announcement: its own line
        reply("", call("bash", command="cp app.ini build/")),
        reply("I will double-check it."),  # a second announcement in the run: the answer stands
    )
    run = await run_agent(settings, "Make a folder named build and copy app.ini into it.", TOOLS)
    assert (workspace / "build" / "app.ini").exists() and run.outcome.text == "I will double-check it."
    told = [m.text for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH]
    assert len(told) == 2 and told[0].startswith("The task asks for 2 things")
    assert told[1] == LINE.format(step="I will make the next call")
    assert len(scripted_model.requests) == 5


async def test_off_the_announcement_stands(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.announce_check = "off"
    scripted_model.add(reply("Let me look at the files."))
    run = await run_agent(settings, "What is in this folder?", TOOLS)
    assert run.outcome.text == "Let me look at the files." and len(scripted_model.requests) == 1
