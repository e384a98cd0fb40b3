"""No success without evidence (workbench/engine/claims.py, the `change_check` setting): an answer
that says a change was made, in a run where every changing call failed, gets one line back naming
the failed calls; once a run; not when a change succeeded or the answer admits the failure."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.engine.claims import claims_change, failed_changes, line
from workbench.pb import workbench_pb2 as pb

GREET = "MESSAGE = 'Hello, %s!'\n"
TOOLS = ["read_file", "edit_file", "write_file"]
WRONG_EDIT = call("edit_file", path="greet.py", old_text='MESSAGE = "Hello, %s!"', new_text='MESSAGE = "Howdy, %s!"')


def test_what_claims_a_change() -> None:
    assert claims_change("All occurrences have been replaced.")
    assert claims_change("The file is already correct.")
    assert claims_change("Done: greet.py now says Howdy.")
    assert not claims_change("The edit failed: old_text was not found.")
    assert not claims_change("I could not change the file.")
    assert not claims_change("The greeting is Hello.")


def test_the_failed_changes_of_a_run() -> None:
    edit = pb.ToolCall(name="edit_file", arguments='{"path": "greet.py", "old_text": "x"}')
    failed = pb.ToolResult(is_error=True, error="old_text not found in greet.py.\nThe closest lines are ...")
    read = pb.ToolCall(name="read_file", arguments='{"path": "greet.py"}')
    changing = ["edit_file", "write_file"]
    assert failed_changes([(read, pb.ToolResult()), (edit, failed)], changing) == [
        "edit_file on greet.py (old_text not found in greet.py. The closest lines are ...)"
    ]
    assert failed_changes([(edit, failed), (edit, pb.ToolResult(output="ok"))], changing) == []
    assert failed_changes([(read, pb.ToolResult())], changing) == []


async def test_a_claim_after_failed_edits_gets_one_turn_back(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "greet.py").write_text(GREET)
    scripted_model.add(
        reply("", WRONG_EDIT),
        reply("The greeting has been changed to Howdy."),
        reply("", call("edit_file", path="greet.py", old_text="Hello", new_text="Howdy")),
        reply("Changed."),
    )
    run = await run_agent(settings, "In greet.py, change Hello to Howdy.", TOOLS)
    assert run.outcome.text == "Changed." and (workspace / "greet.py").read_text() == GREET.replace("Hello", "Howdy")
    told = scripted_model.requests[2]["messages"][-1]["content"]
    assert told.startswith("Your answer says the change is made, but every call that could make it failed: edit_file")
    (result,) = [r for r in run.results() if r.is_error]
    assert told == line([f"edit_file on greet.py ({' '.join(result.error.split())[:87]}...)"])
    assert [m.text for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH] == [told]


async def test_once_a_run_and_off(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "greet.py").write_text(GREET)
    scripted_model.add(reply("", WRONG_EDIT), reply("Replaced."), reply("Replaced, really."))
    run = await run_agent(settings, "In greet.py, change Hello to Howdy.", TOOLS)
    # the answer turned back, with no call after it, stays in the run's answer (loop._answer)
    assert run.outcome.text == "Replaced.\n\nReplaced, really." and len(scripted_model.requests) == 3
    settings.change_check = "off"
    settings.undone_check = "off"  # else the answer gets the line for work asked and none done (undone.py)
    scripted_model.add(reply("", WRONG_EDIT), reply("Replaced."))
    run = await run_agent(settings, "In greet.py, change Hello to Howdy.", TOOLS)
    assert run.outcome.text == "Replaced." and len(scripted_model.requests) == 5
