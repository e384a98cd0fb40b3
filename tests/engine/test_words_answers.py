"""The lines a final answer may get back before it is accepted, pinned whole (issue 36 item 8): a
how-to for work the task asks for (with the ready call: a command, an edit of the file it named, a
new file's content; or the tools to use), a change claimed when every changing call failed, and an
answer stating values no tool result shows (answer_check). Through the real loop, tree and SQLite
store and litellm's HTTP to the scripted server (a model litellm does not know, so the checks are on
as `auto` makes them); the text pinned is the message the model reads next. A change of wording is a
reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inline_snapshot import snapshot

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from tests.words import steady, transcript
from workbench.config.settings import Settings

TOOLS = ["read_file", "write_file", "edit_file", "bash"]


async def answered(settings: Settings, model: ScriptedModel, task: str, *replies: dict[str, object]) -> str:
    """The run of `task` with these replies then "done"; what the model read after its last reply
    (the messages after it in the last request)."""
    model.add(*replies, reply("done"))
    await run_agent(settings, task, TOOLS)
    wire = model.requests[-1]["messages"]
    last = max(i for i, m in enumerate(wire) if m["role"] == "assistant")
    return steady(transcript(wire[last + 1 :]), (settings.workspace, "<ws>"))


async def test_a_how_to_for_a_command(settings: Settings, scripted_model: ScriptedModel) -> None:
    how_to = "To run the tests:\n```bash\n$ cd tests\n$ pytest -q\n```"
    assert await answered(settings, scripted_model, "Run the tests.", reply(how_to)) == snapshot("""\
[user]
You can run this yourself, and the task asks you to: make the call now, {"name": "bash", "arguments": {"command": "cd tests && pytest -q"}}\
""")


async def test_a_how_to_that_runs_a_variant_of_the_command_the_task_quotes(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """Seen (2026-12-07, answer_in_error): the ready call was the how-to's variant, the model ran it
    ("deployed to eu-west") and reported that run instead of what the task asked."""
    how_to = "Set it first:\n```sh\nexport DEPLOY_REGION=eu-west\npython3 deploy.py\n```"
    task = "Run `python3 deploy.py` and tell me which variable it needs."
    assert await answered(settings, scripted_model, task, reply(how_to)) == snapshot("""\
[user]
You can run this yourself, and the task asks you to: make the call now, {"name": "bash", "arguments": {"command": "python3 deploy.py"}}\
""")


async def test_a_how_to_for_an_edit(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "app.py").write_text("def total(xs):\n    retrun sum(xs)\n")
    how_to = "In app.py, fix the typo:\n```python\ndef total(xs):\n    return sum(xs)\n```"
    assert await answered(settings, scripted_model, "Fix the typo in app.py.", reply(how_to)) == snapshot("""\
[user]
You can make this change yourself, and the task asks you to: make the call now, {"name": "edit_file", "arguments": {"path": "app.py", "old_text": "def total(xs):\\n    retrun sum(xs)", "new_text": "def total(xs):\\n    return sum(xs)"}}\
""")


async def test_a_how_to_for_a_new_file(settings: Settings, scripted_model: ScriptedModel) -> None:
    how_to = "Create hello.py with:\n```python\nprint('hello')\n```"
    assert await answered(settings, scripted_model, "Create hello.py that prints hello.", reply(how_to)) == snapshot("""\
[user]
You can make this change yourself, and the task asks you to: make the call now, {"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hello')\\n"}}\
""")


async def test_a_how_to_in_steps(settings: Settings, scripted_model: ScriptedModel) -> None:
    how_to = "1. Open the config.\n2. Set the port to 8081.\n3. Save it."
    assert await answered(settings, scripted_model, "Change the port to 8081.", reply(how_to)) == snapshot("""\
[user]
You can make this change yourself, and the task asks you to: call edit_file or write_file or bash now instead of describing the change.\
""")


async def test_a_lookalike_written_instead_of_the_file_the_task_names(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "net.toml").write_text("[net]\ntimeout = 5\n")
    replies = (
        reply("", call("write_file", path="src/config/net.toml", content="[net]\ntimeout = 30\n")),
        reply("I changed the timeout in net.toml to 30."),
    )
    assert await answered(settings, scripted_model, "Set the timeout in net.toml to 30.", *replies) == snapshot("""\
[user]
The task asks to change net.toml, and no change of this run touched it (its changes: write_file src/config/net.toml). Change net.toml itself now, starting with {"name": "read_file", "arguments": {"path": "net.toml"}}, or, if it needs no change, say why.\
""")


@pytest.mark.tmux
async def test_a_sed_that_matched_nothing_is_no_change(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "net.toml").write_text("[net]\ntimeout = 5\n")
    replies = (
        reply("", call("bash", command="sed -i 's/timeout = 120/timeout = 30/' net.toml")),
        reply("The file net.toml is unchanged and has not been modified by the command."),
    )
    assert await answered(settings, scripted_model, "Set the timeout in net.toml to 30.", *replies) == snapshot("""\
[user]
The task asks for a change, and none was made: no call in this run changed anything. Make the change now, starting with {"name": "read_file", "arguments": {"path": "net.toml"}}, or, if it cannot be done, say why.\
""")


async def test_an_answer_that_only_announces_its_next_step(settings: Settings, scripted_model: ScriptedModel) -> None:
    replies = (reply("The build folder is there. Now I'll copy app.ini into it."),)
    assert await answered(settings, scripted_model, "What is in app.ini?", *replies) == snapshot("""\
[user]
Your answer ends with a step you are about to take ("Now I'll copy app.ini into it") but makes no call, so that step was not taken. Make the call now; answer when the task is done.\
""")


async def test_a_change_claimed_when_every_changing_call_failed(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.py").write_text("def foo():\n    return 1\n")
    replies = (
        reply("", call("edit_file", path="a.py", old_text="def fooo():", new_text="def bar():")),
        reply("", call("bash", command="")),
        reply("I have renamed foo to bar in a.py."),
    )
    assert await answered(settings, scripted_model, "Rename foo to bar in a.py.", *replies) == snapshot("""\
[user]
Your answer says the change is made, but every call that could make it failed: edit_file on a.py (old_text not found in a.py (you have not read it in this session: its whole current tex...); bash (command is empty; pass the shell command to run). Nothing changed. Make the change now (read the file first to copy its exact text), or say that it is not done.\
""")


async def test_an_answer_stating_values_no_result_shows(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.answer_check = True
    (workspace / "app.toml").write_text("port = 8080\n")
    replies = (
        reply("", call("read_file", path="app.toml")),
        reply(
            "The app listens on port 9090, set in config/server.yaml with `listen_port` and MAX_WORKERS 48271."
        ),  # a number no tmp path holds
    )
    assert await answered(settings, scripted_model, "Which port does the app use?", *replies) == snapshot("""\
[user]
Your answer states '9090', '48271', 'config/server.yaml', which no tool result in this conversation shows. Which tool result shows it? If none does, read what holds it first (read_file), then answer from what you read.\
""")
