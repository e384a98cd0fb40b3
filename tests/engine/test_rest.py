"""The rest of the task (workbench/engine/rest.py, the `rest_check` setting): an answer that ends a
run which made changes, with more clauses of work in its task than changes made, or without running
the command the task quoted since the last change, gets one line back; once a run, shared with the
other lines (engine/turn_back.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.engine.rest import LINE_CHECK, LINE_FILE, LINE_PARTS, line, task_commands, touches
from workbench.pb import workbench_pb2 as pb

TOOLS = ["read_file", "edit_file", "write_file", "bash", "ls"]
CHANGING = ["edit_file", "write_file", "bash"]
PROGRAMS = {"python3", "make", "pytest"}
TWO_STEPS = "Make a folder named build and copy app.ini into it."
CHECKED = "Running `python3 check_slug.py` fails. Fix slug.py so the check passes. Do not change check_slug.py."


def made(name: str, ok: bool = True, **arguments: object) -> tuple[pb.ToolCall, pb.ToolResult]:
    return pb.ToolCall(name=name, arguments=json.dumps(arguments)), pb.ToolResult(is_error=not ok)


FILES = {"net.toml": "timeout = 5\n", "slug.py": "def slug(s):\n    return s\n", "check_slug.py": "..."}
WORKSPACE = "/ws"


def says(task: str, calls: list[tuple[pb.ToolCall, pb.ToolResult]], tools: list[str] = TOOLS) -> str:
    return line(task, calls, CHANGING, tools, PROGRAMS.__contains__, FILES.get, WORKSPACE)


def test_the_commands_a_task_quotes() -> None:
    assert task_commands(CHECKED, PROGRAMS.__contains__) == ["python3 check_slug.py"]
    assert task_commands("Fix `slug` in slug.py; run `./check.sh` then `make  test`.", PROGRAMS.__contains__) == [
        "./check.sh",
        "make test",
    ]
    # a word that is no program, and a command the task says not to run
    assert task_commands("Set `timeout = 30` in net.toml; do not run `make deploy`.", PROGRAMS.__contains__) == []


def test_more_clauses_than_changes() -> None:
    mkdir = made("bash", command="mkdir build")
    assert says(TWO_STEPS, [mkdir]) == LINE_PARTS.format(
        n=2, clauses="Make a folder named build; copy app.ini into it", k=1, s="", changes="bash mkdir build"
    )
    # one command line that does both, or two calls: nothing is left
    assert says(TWO_STEPS, [made("bash", command="mkdir build && cp app.ini build/")]) == ""
    assert says(TWO_STEPS, [mkdir, made("bash", command="cp app.ini build/")]) == ""
    # a command that only reads, and a failed one, are no change; with no change undone.py speaks
    assert says(TWO_STEPS, [made("bash", command="ls"), made("bash", ok=False, command="cp a b")]) == ""


def test_the_file_the_task_names_left_untouched() -> None:
    lookalike = made("write_file", path="src/config/net.toml", content="[net]\ntimeout = 30")
    assert says("Set the timeout in net.toml to 30.", [lookalike]) == LINE_FILE.format(
        path="net.toml",
        changes="write_file src/config/net.toml",
        how=', starting with {"name": "read_file", "arguments": {"path": "net.toml"}}',
    )
    read = made("read_file", path="net.toml")
    assert says("Set the timeout in net.toml to 30.", [read, lookalike]).startswith(
        "The task asks to change net.toml, and no change of this run touched it (its changes: write_file "
        "src/config/net.toml). Change net.toml itself now with edit_file on net.toml"
    )
    # the check changed instead of the code: the line names the code's file, and judges nothing else
    check = made("edit_file", path="check_slug.py", old_text="a", new_text="b")
    assert says(CHECKED, [check]).startswith("The task asks to change slug.py, and no change of this run touched it")
    for touched in (
        made("edit_file", path="./net.toml", old_text="5", new_text="30"),
        made("write_file", path="/ws/net.toml", content="timeout = 30\n"),
        made("bash", command="sed -i 's/5/30/' net.toml"),
        made("bash", command="echo 'timeout = 30' > net.toml"),
        made("bash", command='eval "$EDIT"'),  # made at run time: it may have
    ):
        assert says("Set the timeout in net.toml to 30.", [touched]) == "", touched[0].arguments


def test_what_a_call_touches() -> None:
    assert not touches(made("bash", command="cat net.toml && mkdir out")[0], "net.toml", WORKSPACE)
    assert touches(made("bash", command="cd /ws && cp other.toml net.toml")[0], "net.toml", WORKSPACE)
    assert not touches(made("bash", command="cp net.toml src/net.toml")[0], "src/config/net.toml", WORKSPACE)


def test_a_quoted_command_not_run_since_the_last_change() -> None:
    edit = made("edit_file", path="slug.py", old_text="a", new_text="b")
    check = made("bash", command="python3  check_slug.py")
    said = says(CHECKED, [check, edit])
    assert said == LINE_CHECK.format(
        command="python3 check_slug.py",
        change="edit_file slug.py",
        call='{"name": "bash", "arguments": {"command": "python3 check_slug.py"}}',
    )
    assert says(CHECKED, [edit, check]) == ""  # run after the change
    assert says(CHECKED, [edit], tools=["edit_file"]) == ""  # no bash to run it with
    denied = made("edit_file", ok=False, path="slug.py")
    denied[1].metadata["guard_refused"] = True
    assert says(CHECKED, [edit, denied]) == ""  # the person stopped a call: not pushed past them


async def test_the_second_step_is_asked_for_once(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(
        reply("", call("write_file", path="notes/todo.txt", content="buy milk\n")),
        reply("The file was created."),
        reply("", call("write_file", path="notes/done.txt", content="")),
        reply("Both files are there."),
    )
    run = await run_agent(settings, "Create notes/todo.txt with 'buy milk' and create an empty notes/done.txt.", TOOLS)
    assert run.outcome.text == "Both files are there." and (workspace / "notes" / "done.txt").exists()
    told = scripted_model.requests[2]["messages"][-1]["content"]
    assert told.startswith("The task asks for 2 things: Create notes/todo.txt with 'buy milk'; create an empty")
    assert "This run made 1 change: write_file notes/todo.txt." in told
    assert [m.text for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH] == [told]
    assert len(scripted_model.requests) == 4


async def test_a_rename_left_in_files_a_grep_showed_gets_its_sed_line(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, rename_across_files): the 1.5B model renamed the two import lines and the
    definition, left both calls, and said the project now used the new name."""
    (workspace / "shapes.py").write_text("def area_of(r):\n    return 3.14 * r * r\n")
    (workspace / "main.py").write_text("from shapes import area_of\n\nprint(area_of(2))\n")
    import_line = {"old_text": "from shapes import area_of", "new_text": "from shapes import circle_area"}
    scripted_model.add(
        reply("", call("grep", pattern=r"\barea_of\b")),
        reply("", call("edit_file", path="main.py", **import_line)),
        reply("", call("edit_file", path="shapes.py", old_text="def area_of(r):", new_text="def circle_area(r):")),
        reply("The project now uses circle_area."),
    )
    run = await run_agent(settings, "Rename the function area_of to circle_area everywhere.", [*TOOLS, "grep"])
    told = scripted_model.requests[4]["messages"][-1]["content"]
    assert told.startswith("The task asks to rename area_of to circle_area, and area_of is still in main.py (this")
    ready = json.JSONDecoder().raw_decode(told.split("too now: ", 1)[1])[0]
    assert ready == {"name": "bash", "arguments": {"command": "sed -i 's/\\barea_of\\b/circle_area/g' main.py"}}
    assert run.outcome.text == "The project now uses circle_area."
    # all of it renamed: no line
    grep = (pb.ToolCall(name="grep", arguments="{}"), pb.ToolResult(output="main.py:3:print(area_of(2))"))
    renamed = {"main.py": "from shapes import circle_area\n\nprint(circle_area(2))\n"}
    calls = [grep, made("edit_file", path="main.py")]
    assert (
        line("Rename area_of to circle_area.", calls, CHANGING, TOOLS, PROGRAMS.__contains__, renamed.get, "/ws") == ""
    )


async def test_off_the_answer_stands(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings.rest_check = "off"
    scripted_model.add(reply("", call("write_file", path="a.txt", content="a")), reply("Done."))
    run = await run_agent(settings, "Create a.txt and create b.txt.", TOOLS)
    assert run.outcome.text == "Done." and len(scripted_model.requests) == 2
