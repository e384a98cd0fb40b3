"""Work, not advice (workbench/engine/advice.py, the `work_nudge` setting): a how-to answer with no
call, in a run whose task asks for a change or a command, gets one line back saying the model can
do it itself, with a ready call where its text gives one; once a run, never for a question."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.engine.advice import asks_for_work, is_advice, nudge, offered_command_sent
from workbench.pb import workbench_pb2 as pb

PRICES = "def total(items):\n    return sum(items)\n\n\ndef tax(amount):\n    return amount * 0.1\n"
HOW_TO = (
    "To fix this, open `prices.py` and change the tax function:\n\n```python\ndef tax(amount):\n"
    "    return amount * 0.2\n```\n\nThen save the file."
)
TOOLS = ["read_file", "edit_file", "write_file", "bash"]


def test_which_tasks_ask_for_work() -> None:
    assert asks_for_work("Fix the tax rate in prices.py.")
    assert asks_for_work("In billing.py calc_total should be compute_total. Rename it where it is called.")
    assert asks_for_work("Please run the tests and tell me what fails")
    assert asks_for_work("The build breaks; can you update the version in setup.cfg?")
    assert not asks_for_work("How do I rename a function across a project?")
    assert not asks_for_work("What port does conf/settings.json set?")
    assert not asks_for_work("Why does the test fail? Fix ideas welcome.")
    assert not asks_for_work("Tell me about this project.")
    assert not asks_for_work("start over")  # after a rewind: a restart, not a command to run
    assert not asks_for_work("Let's start again.")
    assert asks_for_work("Start the dev server.")


def test_what_reads_as_a_how_to() -> None:
    assert is_advice(HOW_TO)
    assert is_advice("Do this:\n1. Open the file.\n2. Change the line.\n")
    assert not is_advice("Done: the tax rate is now 0.2.")
    assert not is_advice("1. only one step")


def test_the_line_gives_a_ready_call_from_the_reply_itself() -> None:
    files = {"prices.py": PRICES}
    line = nudge(HOW_TO, TOOLS, files.get)
    edit = json.loads(line.split("now, ", 1)[1])
    assert edit == {
        "name": "edit_file",
        "arguments": {
            "path": "prices.py",
            "old_text": "def tax(amount):\n    return amount * 0.1",
            "new_text": "def tax(amount):\n    return amount * 0.2",
        },
    }
    shell = nudge("Run this:\n```bash\n$ python -m pytest -q\n```", TOOLS, files.get)
    assert json.loads(shell.split("now, ", 1)[1]) == {"name": "bash", "arguments": {"command": "python -m pytest -q"}}
    # lines that name a tool as if it were a program are no commands (a 1.5B model's how-to)
    mixed = "Do this:\n```bash\n# Open\nread_file prices.py\n\nsed -i 's/0.1/0.2/' prices.py\nwrite_file prices.py\n```"
    assert json.loads(nudge(mixed, TOOLS, files.get).split("now, ", 1)[1])["arguments"] == {
        "command": "sed -i 's/0.1/0.2/' prices.py"
    }
    # an editor that waits for a person is no part of the ready command (seen: `nano greet.py` first)
    edit = "Do this:\n```bash\n# Open the file\nnano prices.py\nsed -i 's/0.1/0.2/' prices.py\n```"
    assert json.loads(nudge(edit, TOOLS, files.get).split("now, ", 1)[1])["arguments"] == {
        "command": "sed -i 's/0.1/0.2/' prices.py"
    }
    # every shell block of the how-to, in order, a line repeated once (seen: a rename of three files
    # as one sed in a first block and two in a second)
    blocks = (
        "For main.py:\n```bash\nsed -i 's/a/b/g' main.py\n```\nSimilarly:\n```bash\nsed -i 's/a/b/g' r.py\n"
        "sed -i 's/a/b/g' main.py\n```"
    )
    assert json.loads(nudge(blocks, TOOLS, files.get).split("now, ", 1)[1])["arguments"] == {
        "command": "sed -i 's/a/b/g' main.py && sed -i 's/a/b/g' r.py"
    }
    new = nudge("Create `notes.txt` with:\n```\nhello\n```", TOOLS, files.get)
    assert json.loads(new.split("now, ", 1)[1])["arguments"] == {"path": "notes.txt", "content": "hello\n"}
    # nothing ready in its text: the tools, by name
    assert nudge("1. Open the file.\n2. Change the line.", TOOLS, files.get) == (
        "You can make this change yourself, and the task asks you to: call edit_file or write_file or bash now "
        "instead of describing the change."
    )
    assert nudge("1. a\n2. b", ["read_file"], files.get) == ""


GREET = "MESSAGE = 'Hello, %s!'  # shown at login\n\n\ndef greet(name):\n    return MESSAGE % name\n"


def ready(line: str) -> dict[str, str]:
    return dict(json.loads(line.split("now, ", 1)[1])["arguments"])


def test_a_whole_file_copied_with_read_files_numbers_and_no_name_edits_the_file_the_task_names() -> None:
    """Seen (2026-12-07, claimed_change): the 1.5B model gave greet.py back with read_file's line
    numbers and its first line changed, naming no file."""
    how_to = "Here is the updated code:\n\n```python\n1\tMESSAGE = 'Howdy, %s!'  # shown at login\n2\t\n3\t\n"
    how_to += "4\tdef greet(name):\n5\t    return MESSAGE % name\n```"
    task = "In greet.py, change the greeting word Hello to Howdy."
    assert ready(nudge(how_to, TOOLS, {"greet.py": GREET}.get, task)) == {
        "path": "greet.py",
        "old_text": "MESSAGE = 'Hello, %s!'  # shown at login",
        "new_text": "MESSAGE = 'Howdy, %s!'  # shown at login",
    }
    # the file as it was, then as it should be, each under a comment of the model's own
    rest = "2\t\n3\t\n4\tdef greet(name):\n```"
    both = f"```python\n# Original content of greet.py\n1\tMESSAGE = 'Hello, %s!'  # shown at login\n{rest}\n"
    both += f"```python\n# Modified content of greet.py\n1\tMESSAGE = 'Howdy, %s!'  # shown at login\n{rest}"
    assert (
        ready(nudge(both, TOOLS, {"greet.py": GREET}.get, task))["new_text"]
        == "MESSAGE = 'Howdy, %s!'  # shown at login"
    )


def test_a_block_whose_first_line_changed_is_placed_where_its_other_lines_are() -> None:
    code = "import os\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n"
    renamed = "```python\ndef bb():\nreturn 2\n```"  # written without the indentation: the file's stays
    assert ready(nudge(renamed, TOOLS, {"f.py": code}.get, "Fix f.py")) == {
        "path": "f.py",
        "old_text": "def b():",
        "new_text": "def bb():",
    }
    twice = "x = 1\ny = 2\nx = 1\nz = 3\n"
    assert ready(nudge("```\ny = 2\nx = 9\nz = 3\n```", TOOLS, {"r.py": twice}.get, "Fix r.py")) == {
        "path": "r.py",
        "old_text": "y = 2\nx = 1\nz = 3",  # widened until it is once in the file
        "new_text": "y = 2\nx = 9\nz = 3",
    }
    # two places fit as well, or the block adds lines: no guess
    for block in ("```\nx = 1\ny = 5\n```", "```\nx = 1\ny = 2\nw = 0\nx = 1\nz = 3\n```"):
        assert "call edit_file or write_file or bash now" in nudge(block, TOOLS, {"r.py": twice}.get, "Fix r.py")


def test_a_numbered_copy_is_placed_by_its_numbers() -> None:
    """Seen (2026-12-07, claimed_change): "# Before modification" and "# After modification" in one
    block, each `1\tMESSAGE = ...`, were read as one block of two lines, and the ready edit doubled
    the line."""
    files = {"greet.py": GREET}
    before_after = (
        "```python\n# Before modification\n1\tMESSAGE = 'Hello, %s!'  # shown at login\n\n"
        "# After modification\n1\tMESSAGE = 'Howdy, %s!'  # shown at login\n```"
    )
    said = nudge(before_after, TOOLS, files.get, "In greet.py, change Hello to Howdy")
    assert json.loads(said.split("now, ", 1)[1])["arguments"] == {
        "path": "greet.py",
        "old_text": "MESSAGE = 'Hello, %s!'  # shown at login",
        "new_text": "MESSAGE = 'Howdy, %s!'  # shown at login",
    }
    # indented in the file, written flush in the copy: the file's indentation stays
    code = "def f():\n    x = 1\n    return x\n"
    said = nudge("```python\n2\tx = 2\n```", TOOLS, {"f.py": code}.get, "Fix f.py")
    assert json.loads(said.split("now, ", 1)[1])["arguments"]["new_text"] == "    x = 2"
    # a number that points at another line (not alike): no guess
    wrong = "```python\n4\tMESSAGE = 'Howdy, %s!'  # shown at login\n```"
    assert "call edit_file or write_file or bash now" in nudge(wrong, TOOLS, files.get, "In greet.py, change it")


async def test_a_how_to_gets_one_turn_back_and_the_change_is_made(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "prices.py").write_text(PRICES)
    line = nudge(HOW_TO, TOOLS, {"prices.py": PRICES}.get)
    scripted_model.add(
        reply(HOW_TO),
        reply("", call("edit_file", **json.loads(line.split("now, ", 1)[1])["arguments"])),
        reply("The tax rate is now 0.2."),
    )
    run = await run_agent(settings, "The tax in prices.py should be 20%. Fix it.", TOOLS)
    assert run.outcome.text == "The tax rate is now 0.2."
    assert (workspace / "prices.py").read_text() == PRICES.replace("0.1", "0.2")
    told = scripted_model.requests[1]["messages"][-1]
    assert told == {"role": "user", "content": line}
    assert [m.text for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH] == [line]


async def test_once_a_run_and_never_for_a_question(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "prices.py").write_text(PRICES)
    scripted_model.add(reply(HOW_TO), reply(HOW_TO))
    run = await run_agent(settings, "Fix the tax in prices.py: it should be 20%.", TOOLS)
    assert run.outcome.text == HOW_TO and len(scripted_model.requests) == 2
    scripted_model.add(reply(HOW_TO))
    run = await run_agent(settings, "How would I change the tax in prices.py to 20%?", TOOLS)
    assert run.outcome.text == HOW_TO and len(scripted_model.requests) == 3
    assert (workspace / "prices.py").read_text() == PRICES


async def test_a_line_without_a_ready_call_may_be_followed_by_one_with_it(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, rename_across_files): told only to call a tool, the 1.5B model answered
    with a how-to that held the right sed commands, and the run ended on it."""
    (workspace / "main.py").write_text("print(area_of(2))\n")
    steps = "1. Open main.py.\n2. Replace area_of with circle_area."
    sed = "Use:\n```bash\nsed -i 's/area_of/circle_area/g' main.py\n```"
    scripted_model.add(reply(steps), reply(sed), reply("Renamed."))
    run = await run_agent(settings, "Rename area_of to circle_area in main.py.", TOOLS)
    told = [m.text for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH]
    assert told == [nudge(steps, TOOLS, {}.get), nudge(sed, TOOLS, {}.get)]
    assert '"command": "sed -i \'s/area_of/circle_area/g\' main.py"' in told[1]
    assert len(scripted_model.requests) == 3  # no third line: the answer after the ready call ends the run
    # a first line that had its ready call gets no second one
    scripted_model.add(reply(sed), reply(sed.replace("main.py", "other.py")))
    run = await run_agent(settings, "Rename area_of to circle_area in main.py.", TOOLS)
    assert len([m for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH]) == 1


async def test_the_offered_command_sent_back_in_a_shell_block_is_that_call(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Seen (2026-12-07, one_command): offered `mkdir build && cp app.ini build/` as a ready call,
    the 1.5B model answered with that line in a ```bash block and no call; the run ended."""
    (workspace / "app.ini").write_text("[app]\n")
    how_to = "Like this:\n```bash\nmkdir build\ncp app.ini build/\n```"
    sent = "```bash\nmkdir build && cp app.ini build/\n```\n\nThis creates build and copies app.ini."
    scripted_model.add(reply(how_to), reply(sent), reply("Done."))
    run = await run_agent(settings, "Make a folder named build and copy app.ini into it.", TOOLS)
    assert (workspace / "build" / "app.ini").read_text() == "[app]\n" and run.outcome.text == "Done."
    (bash,) = [started.call for started in run.of("tool_call_started")]
    assert (bash.name, json.loads(bash.arguments), bash.from_text) == (
        "bash",
        {"command": "mkdir build && cp app.ini build/"},
        True,
    )
    # another command in the block is no call: the answer after the line ends the run
    scripted_model.add(reply(how_to), reply("```bash\nmkdir dist\n```"))
    run = await run_agent(settings, "Make a folder named dist and copy app.ini into it.", TOOLS)
    assert not run.of("tool_call_started") and not (workspace / "dist").exists()


def test_the_offered_command_sent_back_under_bash_c_is_that_call() -> None:
    """Seen (2026-12-07, rename_across_files): the offered sed line came back as `bash -c "..."`."""
    command = "sed -i 's/area_of/circle_area/g' main.py && sed -i 's/area_of/circle_area/g' *.py"
    line = nudge(f"```bash\n{command}\n```", TOOLS, {}.get)
    wrapped = f'To rename, run:\n\n```bash\nbash -c "{command}"\n```\n\nThis runs the sed commands.'
    assert offered_command_sent(line, wrapped, TOOLS) == command
    assert offered_command_sent(line, wrapped.replace("bash -c", "bash -x"), TOOLS) == ""
    assert offered_command_sent(line, "```bash\nsh -c 'sed -i s/a/b/ x.py'\n```", TOOLS) == ""
    # inside result tags, as if it had run (seen: `<tool_response>\nbash -c "sed ..."\n</tool_response>`)
    assert offered_command_sent(line, f'<tool_response>\nbash -c "{command}"\n</tool_response>', TOOLS) == command
    assert offered_command_sent(line, f"<tool_response>\n{command}\n</tool_response>", TOOLS) == command
    assert offered_command_sent(line, "<tool_response>\nsed -i 's/a/b/' x.py\n</tool_response>", TOOLS) == ""


async def test_off_the_how_to_is_the_answer(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "prices.py").write_text(PRICES)
    settings.work_nudge = "off"
    settings.undone_check = "off"  # else the answer gets the line for work asked and none done (undone.py)
    scripted_model.add(reply(HOW_TO))
    run = await run_agent(settings, "Fix the tax in prices.py: it should be 20%.", TOOLS)
    assert run.outcome.text == HOW_TO and len(scripted_model.requests) == 1


def test_a_replacement_stated_in_the_reply_is_the_ready_edit() -> None:
    """Seen (2026-12-07, the 1.5B model): the unchanged greet.py under a `# greet.py` label, then
    "change the line `A` to `B`" in prose; and a sed inside a tmux line (tmux offered: no command)."""
    labelled = (
        "The current content of `greet.py` is:\n\n```python\n# greet.py\nMESSAGE = 'Hello, %s!'  # shown at login\n\n"
        "def greet(name):\n    return MESSAGE % name\n```\n\nYou need to change the line `MESSAGE = 'Hello, %s!'` "
        "to `MESSAGE = 'Howdy, %s!'`. Save the file."
    )
    assert ready(nudge(labelled, TOOLS, {"greet.py": GREET}.get, "In greet.py, change Hello to Howdy.")) == {
        "path": "greet.py",
        "old_text": "MESSAGE = 'Hello, %s!'",
        "new_text": "MESSAGE = 'Howdy, %s!'",
    }
    net = '[net]\nhost = "example.org"\ntimeout = 5\nretries = 3\n'
    wrapped = (
        'Use:\n\n```bash\ntmux send -t "your_agent_id" "sed -i \'s/timeout = 5/timeout = 30/\' net.toml" Enter\n```'
    )
    assert ready(nudge(wrapped, [*TOOLS, "tmux"], {"net.toml": net}.get, "Set the timeout in net.toml to 30.")) == {
        "path": "net.toml",
        "old_text": "timeout = 5",
        "new_text": "timeout = 30",
    }
    # an old text in two files, or twice in one, or a pattern: no single edit
    files = {"a.py": "x = old_name\n", "b.py": "old_name()\n"}
    for how_to, task in (
        ("1. Replace `old_name` with `new_name`\n2. save", "Fix a.py and b.py"),
        ("1. Replace `old_name` with `new_name`\n2. save", "Fix c.py"),
        ("```\nsed -i 's/time.*/timeout = 30/' net.toml\n```", "Set net.toml"),
    ):
        assert "call edit_file" in nudge(
            how_to, ["edit_file"], {**files, "c.py": "old_name\nold_name\n", "net.toml": net}.get, task
        )


def test_a_labelled_copy_of_the_file_as_it_is_gives_no_edit() -> None:
    """Seen (2026-12-07, fix_from_check and claimed_change): the file unchanged under a label comment,
    a blank line fewer; it was placed as an edit that added the label or dropped the blank line."""
    same = "I'll fix it:\n\n```python\n# greet.py\nMESSAGE = 'Hello, %s!'  # shown at login\n\ndef greet(name):\n"
    same += "    return MESSAGE % name\n```"
    assert nudge(same, TOOLS, {"greet.py": GREET}.get, "Fix greet.py") == (
        "You can make this change yourself, and the task asks you to: call edit_file or write_file or bash now "
        "instead of describing the change."
    )


def test_a_name_in_the_code_is_no_new_file() -> None:
    """Seen (2026-12-07, one_command): a how-to's Python block used `os.path.exists(...)` and
    `os.path.join(...)`; the line offered that block written to a file named os.path."""
    how_to = (
        "Here is the code:\n\n```python\nimport os\nif not os.path.exists('build'):\n    os.makedirs('build')\n"
        "target = os.path.join('build', 'app.ini')\nsettings = cfg.value\n```\n\nThis creates the folder."
    )
    task = "Make a folder named build and copy app.ini into it."
    line = nudge(how_to, TOOLS, {"app.ini": "[app]\n"}.get, task)
    assert "call edit_file or write_file or bash now" in line  # no ready call: no file named for the block
    new = nudge("Create `notes.txt` with:\n```\nhello\n```", TOOLS, {}.get, "Make notes.")
    assert ready(new) == {"path": "notes.txt", "content": "hello\n"}
