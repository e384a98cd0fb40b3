"""The files a task names are read before the run's first model call (`task_files`, issue 38).

Which names count is a function of the task and a real workspace folder (`named_files`); what the
model reads is pinned through the real loop, tree and SQLite store and litellm's HTTP to the
scripted server: a model litellm does not know (auto: on), and one it knows (auto: off)."""

from __future__ import annotations

from pathlib import Path

from inline_snapshot import snapshot

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from tests.words import steady, transcript
from workbench.config.settings import Settings
from workbench.engine.task_files import (
    FILE_BYTES,
    NAMES_LOOKED_AT,
    SYMBOL_LINES,
    TASK_FILES,
    named_files,
    named_identifiers,
    symbol_pattern,
    task_again,
)
from workbench.pb import workbench_pb2 as pb

NET_TOML = '[net]\nhost = "example.org"\ntimeout = 5\n'


def test_files_named_at_their_path_in_the_order_named(workspace: Path) -> None:
    (workspace / "conf").mkdir()
    (workspace / "conf" / "app.toml").write_text("port = 1\n")
    (workspace / "main.py").write_text("print(1)\n")
    task = "Make main.py read conf/app.toml, and see main.py again; example.org and e.g. are no files."
    assert named_files(task, workspace) == ["main.py", "conf/app.toml"]


def test_a_bare_name_finds_the_one_file_of_that_name(workspace: Path) -> None:
    (workspace / "etc" / "app").mkdir(parents=True)
    (workspace / "etc" / "app" / "logging.ini").write_text("[log]\nlevel = WARNING\n")
    assert named_files("What level does logging.ini set?", workspace) == ["etc/app/logging.ini"]
    (workspace / "old").mkdir()
    (workspace / "old" / "logging.ini").write_text("[log]\n")
    assert named_files("What level does logging.ini set?", workspace) == []  # two: which one is not for us to say


def test_what_is_not_read_with_the_task(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("outside\n")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (workspace / "big.log").write_text("x" * (FILE_BYTES + 1))
    (workspace / "dir.d").mkdir()
    task = "Look at ../secret.txt, link.txt, logo.png, big.log, dir.d and missing.txt."
    assert named_files(task, workspace) == []


def test_at_most_a_few_files(workspace: Path) -> None:
    names = [f"f{i}.txt" for i in range(TASK_FILES + 2)]
    for name in names:
        (workspace / name).write_text(name + "\n")
    assert named_files("Merge " + ", ".join(names) + ".", workspace) == names[:TASK_FILES]


def test_only_the_first_names_of_a_long_paste_are_looked_at(workspace: Path) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    log = "\n".join(f'  File "lib{i}.py", line 3' for i in range(NAMES_LOOKED_AT))
    assert named_files(f"Fix app.py:\n{log}", workspace) == ["app.py"]
    assert named_files(f"{log}\nFix app.py.", workspace) == []


async def test_the_model_starts_with_the_file_the_task_names(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "net.toml").write_text(NET_TOML)
    settings.task_files = "auto"  # the fixture's is off
    scripted_model.add(reply("The timeout is 5."))
    run = await run_agent(settings, "What is the timeout in net.toml?", ["read_file", "edit_file"])
    first = scripted_model.requests[0]["messages"]
    assert steady(transcript(first[1:]), (workspace, "<ws>")) == snapshot("""\
[user]
What is the timeout in net.toml?

[assistant calls] read_file {"path": "net.toml"}

[tool]
     1\t[net]
     2\thost = "example.org"
     3\ttimeout = 5

[user]
Above are the files the task names, as they are now. The task:

What is the timeout in net.toml?\
""")
    by_workbench = [m for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH]
    assert [(m.role, [c.name for c in m.tool_calls]) for m in by_workbench] == [
        (pb.ROLE_ASSISTANT, ["read_file"]),
        (pb.ROLE_USER, []),
    ]
    assert (
        task_again("x" * 2_001)
        == "Above are the files the task names, as they are now. Now do the task given before them."
    )
    finished = run.of("tool_call_finished")
    assert [(f.result.name, f.result.is_error) for f in finished] == [("read_file", False)]
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.usage.calls == 1


async def test_off_and_for_a_model_litellm_knows_nothing_is_read(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "net.toml").write_text(NET_TOML)
    scripted_model.add(reply("5"))  # the fixture's task_files is off
    await run_agent(settings, "What is the timeout in net.toml?", ["read_file"])
    settings.task_files, settings.model = "auto", "openai/gpt-4o-mini"
    scripted_model.add(reply("5"))
    await run_agent(settings, "What is the timeout in net.toml?", ["read_file"])
    assert [[m["role"] for m in r["messages"]] for r in scripted_model.requests] == [["system", "user"]] * 2


def test_the_code_names_a_task_gives(workspace: Path) -> None:
    task = "Rename area_of to circle_area in shapes.py (see check_slug.py, docs/read_me.md); getUser too."
    assert named_identifiers(task) == ["area_of", "circle_area"]  # the first two; file names are no code names
    assert named_identifiers("Fix the login check in auth.go. What does MAX_RETRIES do?") == ["MAX_RETRIES"]
    assert named_identifiers("Set the timeout in net.toml to 30, e.g. like example.org.") == []
    (workspace / "shapes.py").write_text("def area_of(r):\n    return r * r\n")
    assert symbol_pattern(["area_of", "circle_area"], workspace) == r"\b(?:area_of|circle_area)\b"
    assert symbol_pattern(["area_of"], workspace) == r"\barea_of\b"
    assert symbol_pattern(["circle_area"], workspace) == ""  # nowhere: no search
    (workspace / "many.py").write_text("area_of(1)\n" * SYMBOL_LINES)
    assert symbol_pattern(["area_of"], workspace) == ""  # on more lines than SYMBOL_LINES: left to the model


async def test_the_model_starts_with_where_the_names_the_task_gives_occur(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (every run of five evals, rename_across_files): asked to rename area_of across files it
    had not been shown, the 1.5B model edited files it invented (src/utils/circle.py)."""
    (workspace / "shapes.py").write_text("def area_of(r):\n    return r * r\n")
    (workspace / "main.py").write_text("from shapes import area_of\n\nprint(area_of(2))\n")
    settings.task_files = "auto"
    scripted_model.add(reply("Renamed."))
    await run_agent(settings, "Rename area_of to circle_area everywhere.", ["read_file", "grep", "edit_file"])
    first = scripted_model.requests[0]["messages"]
    assert steady(transcript(first[1:]), (workspace, "<ws>")) == snapshot("""\
[user]
Rename area_of to circle_area everywhere.

[assistant calls] grep {"pattern": "\\\\b(?:area_of|circle_area)\\\\b"}

[tool]
main.py:1:from shapes import area_of
main.py:3:print(area_of(2))
shapes.py:1:def area_of(r):

[user]
Above are the lines where the names the task gives occur, as they are now. The task:

Rename area_of to circle_area everywhere.\
""")
    scripted_model.add(reply("Renamed."))
    before = len(scripted_model.requests)
    await run_agent(settings, "Rename area_of to circle_area everywhere.", ["read_file", "edit_file"])
    assert [m["role"] for m in scripted_model.requests[before]["messages"]] == ["system", "user"]  # no grep: none


async def test_no_read_file_no_reads(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "net.toml").write_text(NET_TOML)
    settings.task_files = "on"
    scripted_model.add(reply("I cannot read it."))
    await run_agent(settings, "What is the timeout in net.toml?", ["bash"])
    assert [m["role"] for m in scripted_model.requests[0]["messages"]] == ["system", "user"]


async def test_the_model_reading_it_again_is_told_it_was_read_with_the_task(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "net.toml").write_text(NET_TOML)
    settings.task_files = "auto"
    scripted_model.add(reply("", call("read_file", path="./net.toml")), reply("5"))
    run = await run_agent(settings, "What is the timeout in net.toml?", ["read_file"])
    again = run.results()[-1]
    assert not again.is_error and again.notes == [
        "Note: Workbench made this same call with the task, before your first turn, and its result (this same "
        "result) is above the task. Calling it again will not change it: take the task's next step with it, the "
        "change or command the task asks for (a question this result answers: answer now without a tool call)."
    ]
