"""Work asked for, none done (workbench/engine/undone.py, the `undone_check` setting): an answer
that ends a run whose task asks for a change, with no call that changed anything, gets one line back
with a ready call where one follows; never for a question; one line back a run, shared with the
how-to and claimed-change lines (engine/turn_back.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.engine.advice import work_verbs
from workbench.engine.claims import only_reads
from workbench.engine.undone import LINE, corrected, did_work, line, named_file, rename_command
from workbench.pb import workbench_pb2 as pb

GREET = "MESSAGE = 'Hello, %s!'  # shown at login\n\n\ndef greet(name):\n    return MESSAGE % name\n"
SLUG = 'def slug(title):\n    """A title as a URL slug."""\n    return title.lower()\n'
TOOLS = ["read_file", "edit_file", "write_file", "bash", "ls"]
CHANGING = ["edit_file", "write_file", "bash"]


def made(name: str, ok: bool = True, error: str = "", **arguments: object) -> tuple[pb.ToolCall, pb.ToolResult]:
    return pb.ToolCall(name=name, arguments=json.dumps(arguments)), pb.ToolResult(is_error=not ok, error=error)


def ready_call(text: str) -> dict[str, object]:
    """The JSON call a line offers after 'starting with '."""
    return dict(json.JSONDecoder().raw_decode(text.split("starting with ", 1)[1])[0])


def test_commands_that_only_read() -> None:
    for command in ["ls", "ls -la build 2>/dev/null", "cat slug.py | grep -n def", "cd src && cat a.py", "pwd"]:
        assert only_reads(command), command
    for command in ["mkdir build", "cat a > b", "find . -name x -delete", "echo $(rm x)", "python3 check.py", ""]:
        assert not only_reads(command), command


def test_what_counts_as_work_done() -> None:
    assert not did_work([made("bash", command="ls"), made("read_file", path="a")], CHANGING, False)
    assert not did_work([made("edit_file", ok=False, error="old_text not found")], CHANGING, False)
    assert did_work([made("bash", command="mkdir build")], CHANGING, False)
    assert did_work([made("write_file", path="a", content="x")], CHANGING, False)
    # a task that only asks to run a command: a command that ran and exited 1 did it
    exited = made("bash", ok=False, error="exit status 1", command="python3 deploy.py")
    exited[1].metadata["exit_code"] = 1
    assert did_work([exited], CHANGING, True) and not did_work([exited], CHANGING, False)
    missing = made("bash", ok=False, error="exit status 127", command="deploy")
    missing[1].metadata["exit_code"] = 127
    assert not did_work([missing], CHANGING, True)


def test_the_file_a_task_names() -> None:
    files = {"slug.py": SLUG, "check_slug.py": "", "greet.py": GREET}
    assert named_file("Running `python3 check_slug.py` fails. Fix slug.py so the check passes.", files.get) == "slug.py"
    assert named_file("In greet.py, change the word Hello to Howdy.", files.get) == "greet.py"
    assert named_file("Make a folder named build and copy app.ini into it.", files.get) == ""


def test_a_failed_change_corrected() -> None:
    files = {"greet.py": GREET, "slug.py": SLUG}
    edit, result = made(
        "edit_file",
        ok=False,
        error="old_text not found in greet.py",
        path="greet.py",
        old_text='MESSAGE = "Hello, %s!"',
        new_text='MESSAGE = "Howdy, %s!"',
    )
    # the model's change (Hello -> Howdy) made on the file's real line, its quotes and comment kept
    assert json.loads(corrected(edit, result, files.get)) == {
        "name": "edit_file",
        "arguments": {
            "path": "greet.py",
            "old_text": "MESSAGE = 'Hello, %s!'  # shown at login",
            "new_text": "MESSAGE = 'Howdy, %s!'  # shown at login",
        },
    }
    moved, missing = made(
        "write_file",
        ok=False,
        error="src/slug.py does not exist; did you mean slug.py? Send ...",
        path="src/slug.py",
        content="x",
    )
    assert json.loads(corrected(moved, missing, files.get))["arguments"] == {"path": "slug.py", "content": "x"}
    unrelated, _ = made("edit_file", path="slug.py", old_text="nothing like it at all", new_text="y")
    assert corrected(unrelated, result, files.get) == ""


def test_the_line() -> None:
    files = {"slug.py": SLUG}
    task = "Fix slug.py so the check passes."
    said = line(task, work_verbs(task), [made("read_file", path="check_slug.py")], CHANGING, TOOLS, files.get)
    assert said.startswith("The task asks for a change, and none was made: no call in this run changed anything.")
    assert ready_call(said) == {"name": "read_file", "arguments": {"path": "slug.py"}}
    read = [made("read_file", path="slug.py")]
    assert "with edit_file on slug.py (old_text copied exactly" in line(task, ["fix"], read, CHANGING, TOOLS, files.get)
    assert line(task, ["fix"], [made("edit_file", path="slug.py")], CHANGING, TOOLS, files.get) == ""
    assert line(task, ["fix"], [], CHANGING, ["read_file"], files.get) == ""
    denied = made("write_file", ok=False, error="The person denied this call.", path="slug.py", content="x")
    denied[1].metadata["guard_refused"] = True  # the loop marks a call the guard refused (loop._admitted)
    assert line(task, ["fix"], [denied], CHANGING, TOOLS, files.get) == ""  # not pushed past the person
    assert work_verbs("How do I fix slug.py?") == []


def test_a_task_to_run_a_command_it_quotes_gets_the_ready_call() -> None:
    """Seen (2026-12-07, answer_in_error): told only "Run it now with bash", the 1.5B model answered
    'Error: Command "bash" not found'."""
    task = "Run `python3 deploy.py` and tell me which environment variable it needs."
    said = line(task, work_verbs(task), [], CHANGING, TOOLS, {}.get, "python3 deploy.py")
    assert said.startswith("The task asks you to run a command, and none ran in this run. Run it now with bash: ")
    called = json.JSONDecoder().raw_decode(said.split("with bash: ", 1)[1])[0]
    assert called == {"name": "bash", "arguments": {"command": "python3 deploy.py"}}
    assert "Run it now with bash, or" in line("Run the tests.", ["run"], [], CHANGING, TOOLS, {}.get)


async def test_an_answer_with_nothing_changed_gets_one_turn_back(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "app.ini").write_text("[app]\n")
    scripted_model.add(
        reply("", call("ls", path=".")),
        reply("The build folder does not exist."),
        reply("", call("bash", command="mkdir build && cp app.ini build/")),
        reply("Done."),
    )
    run = await run_agent(settings, "Make a folder named build and copy app.ini into it.", TOOLS)
    assert run.outcome.text == "Done." and (workspace / "build" / "app.ini").read_text() == "[app]\n"
    told = scripted_model.requests[2]["messages"][-1]["content"]
    assert told == LINE.format(failed="", how=" with a call to edit_file or write_file or bash")
    assert [m.text for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH] == [told]


async def test_commands_written_as_results_are_said_not_to_have_run_and_are_the_ready_call(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, one_command): the 1.5B model wrote `mkdir build` and `cp app.ini build/`
    each inside <tool_response> tags, no call; told only "Make the change now", it said both
    commands were executed successfully."""
    (workspace / "app.ini").write_text("[app]\n")
    written = (
        'To create a folder named "build", use `mkdir`; then copy with `cp`.\n\n<tool_response>\n    mkdir build\n'
        "</tool_response>\n\n<tool_response>\n    cp app.ini build/\n</tool_response>"
    )
    scripted_model.add(
        reply(written), reply("", call("bash", command="mkdir build && cp app.ini build/")), reply("Done.")
    )
    run = await run_agent(settings, "Make a folder named build and copy app.ini into it.", TOOLS)
    assert run.outcome.text == "Done." and (workspace / "build" / "app.ini").read_text() == "[app]\n"
    told = scripted_model.requests[1]["messages"][-1]["content"]
    assert "(the commands your reply wrote inside result tags did not run: a command runs only as a bash call)" in told
    assert ready_call(told) == {"name": "bash", "arguments": {"command": "mkdir build && cp app.ini build/"}}
    # a result tag holding output, not commands, gives no ready call
    scripted_model.add(reply("Done.\n\n<tool_response>\n    build\n</tool_response>"))
    run = await run_agent(settings, "Make a folder named dist and copy app.ini into it.", TOOLS)
    assert scripted_model.requests[-1]["messages"][-1]["content"] == LINE.format(
        failed="", how=" with a call to edit_file or write_file or bash"
    )


async def test_a_rename_the_run_found_and_did_not_make_gets_its_sed_line(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, rename_across_files): shown the grep lines of area_of with the task, the
    1.5B model sent the same grep, said the names were "already consistent", and, told no change
    was made, that there were none to rename."""
    (workspace / "shapes.py").write_text("def area_of(r):\n    return 3.14 * r * r\n")
    (workspace / "main.py").write_text("from shapes import area_of\n\nprint(area_of(2))\n")
    (workspace / "notes.txt").write_text("area_of_circle is another name\n")
    scripted_model.add(
        reply("", call("grep", pattern=r"\barea_of\b")),
        reply("No change needed; the function names are already consistent."),
    )
    task = "Rename the function area_of to circle_area everywhere in this project."
    run = await run_agent(settings, task, [*TOOLS, "grep"])
    told = scripted_model.requests[2]["messages"][-1]["content"]
    sed = "sed -i 's/\\barea_of\\b/circle_area/g' main.py shapes.py"
    assert ready_call(told) == {"name": "bash", "arguments": {"command": sed}}
    assert run.outcome.text == "No change needed; the function names are already consistent."
    # the ready line does what the task asks (the real bash tool, in the workspace)
    scripted_model.add(reply("", call("bash", command=sed)), reply("Renamed."))
    await run_agent(settings, "Run the line.", TOOLS)
    assert (workspace / "main.py").read_text() == "from shapes import circle_area\n\nprint(circle_area(2))\n"
    assert (workspace / "notes.txt").read_text() == "area_of_circle is another name\n"
    # no grep that showed the name, or a file rename: no sed line
    assert rename_command("Rename area_of to circle_area.", [], {}.get) == ""
    assert rename_command("Rename notes.txt to todo.txt.", run_grep_calls(), {"notes.txt": "x"}.get) == ""


async def test_a_rename_how_to_gets_the_renames_sed_line_before_its_own_commands(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, rename_across_files): the how-to's one shell block was `git add main.py
    report.py shapes.py && git commit -m ...`, offered as the ready call, and sent to the loop stop."""
    (workspace / "shapes.py").write_text("def area_of(r):\n    return 3.14 * r * r\n")
    (workspace / "main.py").write_text("from shapes import area_of\n\nprint(area_of(2))\n")
    how_to = (
        "Replace `area_of` in each file, then commit:\n\n```bash\ngit add main.py shapes.py && git commit -m x\n```"
    )
    scripted_model.add(reply("", call("grep", pattern=r"\barea_of\b")), reply(how_to))
    await run_agent(settings, "Rename the function area_of to circle_area everywhere.", [*TOOLS, "grep"])
    told = scripted_model.requests[2]["messages"][-1]["content"]
    assert told.startswith("You can run this yourself")
    sed = "sed -i 's/\\barea_of\\b/circle_area/g' main.py shapes.py"
    assert json.loads(told.split("now, ", 1)[1]) == {"name": "bash", "arguments": {"command": sed}}


def run_grep_calls() -> list[tuple[pb.ToolCall, pb.ToolResult]]:
    return [(pb.ToolCall(name="grep", arguments="{}"), pb.ToolResult(output="notes.txt:1:notes"))]


async def test_a_fix_whose_check_has_not_run_starts_with_the_check(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, fix_from_check): shown slug.py and its check with the task, the 1.5B model
    said "I've fixed slug.py" with no call; told to edit slug.py, it asked what to change."""
    (workspace / "slug.py").write_text(SLUG)
    (workspace / "check_slug.py").write_text('from slug import slug\nassert slug("A B") == "a-b", slug("A B")\n')
    task = "Running `python3 check_slug.py` fails. Fix slug.py so the check passes."
    scripted_model.add(reply("", call("read_file", path="slug.py")), reply("I've fixed `slug.py`."))
    await run_agent(settings, task, TOOLS)
    told = scripted_model.requests[2]["messages"][-1]["content"]
    assert ready_call(told) == {"name": "bash", "arguments": {"command": "python3 check_slug.py"}}
    # once the check ran, the line points at the file again
    scripted_model.add(
        reply("", call("bash", command="python3 check_slug.py")),
        reply("", call("read_file", path="slug.py")),
        reply("The check fails on the hyphens."),
    )
    await run_agent(settings, task, TOOLS)
    assert "with edit_file on slug.py" in scripted_model.requests[-1]["messages"][-1]["content"]


async def test_a_failed_edit_gets_its_corrected_call(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "greet.py").write_text(GREET)
    wrong = {"path": "greet.py", "old_text": 'MESSAGE = "Hello, %s!"', "new_text": 'MESSAGE = "Howdy, %s!"'}
    scripted_model.add(reply("", call("edit_file", **wrong)), reply("old_text not found in greet.py"))
    run = await run_agent(settings, "In greet.py, change the greeting word Hello to Howdy.", TOOLS)
    told = scripted_model.requests[2]["messages"][-1]["content"]
    assert "(your last try, edit_file, failed: old_text not found in greet.py" in told
    fixed = ready_call(told)
    assert fixed["arguments"] == {
        "path": "greet.py",
        "old_text": "MESSAGE = 'Hello, %s!'  # shown at login",
        "new_text": "MESSAGE = 'Howdy, %s!'  # shown at login",
    }
    assert run.outcome.text == "old_text not found in greet.py"  # the scripted model had no more replies


async def test_never_for_a_question_nor_a_command_that_ran_nor_twice(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "slug.py").write_text(SLUG)
    scripted_model.add(reply("", call("read_file", path="slug.py")), reply("It lower-cases the title."))
    run = await run_agent(settings, "What does slug.py do?", TOOLS)
    assert run.outcome.text == "It lower-cases the title." and len(scripted_model.requests) == 2
    (workspace / "deploy.py").write_text("import sys\nsys.exit('error: set DEPLOY_REGION')\n")
    scripted_model.add(reply("", call("bash", command="python3 deploy.py")), reply("It needs DEPLOY_REGION."))
    run = await run_agent(settings, "Run `python3 deploy.py` and tell me which variable it needs.", TOOLS)
    assert run.outcome.text == "It needs DEPLOY_REGION." and len(scripted_model.requests) == 4
    # one line back a run, shared: after the how-to's line, an answer with nothing changed ends the run
    scripted_model.add(reply("Change it:\n```python\ndef slug(title):\n    return title\n```"), reply("It works."))
    run = await run_agent(settings, "Fix slug.py.", TOOLS)
    assert run.outcome.text.endswith("\n\nIt works.") and len(scripted_model.requests) == 6  # after the how-to
    assert len([m for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH]) == 1


async def test_an_answer_turned_back_stays_when_no_call_follows(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, answer_in_error, 2 of 3 runs): the 1.5B model answered from the file it was
    shown, was told to run the command, and replied it could not; that reply alone was the answer."""
    (workspace / "deploy.py").write_text("import sys\nsys.exit('error: set DEPLOY_REGION (eu-west, us-east)')\n")
    scripted_model.add(reply("It needs DEPLOY_REGION: eu-west or us-east."), reply("I cannot run commands."))
    run = await run_agent(settings, "Run `python3 deploy.py` and tell me which variable it needs.", TOOLS)
    assert run.outcome.text == "It needs DEPLOY_REGION: eu-west or us-east.\n\nI cannot run commands."
    # a call after the line: the answer after it stands alone
    scripted_model.add(
        reply("It needs DEPLOY_REGION."),
        reply("", call("bash", command="python3 deploy.py")),
        reply("It needs DEPLOY_REGION, one of eu-west and us-east."),
    )
    run = await run_agent(settings, "Run `python3 deploy.py` and tell me which variable it needs.", TOOLS)
    assert run.outcome.text == "It needs DEPLOY_REGION, one of eu-west and us-east."


async def test_off_the_answer_stands(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "slug.py").write_text(SLUG)
    settings.undone_check = "off"
    scripted_model.add(reply("The slug function works correctly."))
    run = await run_agent(settings, "Fix slug.py so the check passes.", TOOLS)
    assert run.outcome.text == "The slug function works correctly." and len(scripted_model.requests) == 1
