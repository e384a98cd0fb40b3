"""Searches that found nothing say why and where the files are; a did-you-mean gives the call;
an edit of a file not read shows the file (issue 28, item 1). Real files, real tool calls."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from tests.tools.test_file_tools import Tools, put
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb

LOGIN = "def login(user):\n    return user.active\n\n\ndef logout(user):\n    user.session = None\n"
INVENTED = "def login(self, username, password):\n    return True\n"


@pytest.fixture
def tools(workspace: Path, tmp_path: Path) -> Tools:
    return Tools(workspace, tmp_path)


def python_at_top(workspace: Path) -> None:
    put(workspace, "app.py", "PORT = 8080\n")
    put(workspace, "main.py", "import app\n")
    put(workspace, "README.md", "# demo\n")
    put(workspace, "src/notes.txt", "nothing\n")


# --- grep and glob: a filter that matches no file ---------------------------------------------


async def test_a_grep_glob_that_matches_no_file_is_an_error_saying_where_those_files_are(
    tools: Tools, workspace: Path
) -> None:
    python_at_top(workspace)
    result = await tools.result("grep", pattern="PORT", glob="src/**/*.py")
    assert result.is_error and result.metadata["empty"] is True
    assert result.error == (
        "the glob 'src/**/*.py' matched no file in the workspace, so nothing was searched; the workspace's "
        '2 .py files are at the top level: app.py, main.py; to find them, send grep(pattern="PORT", glob="*.py")'
    )
    # the corrected call finds the line
    assert await tools.ok("grep", pattern="PORT", glob="*.py") == "app.py:1:PORT = 8080"


async def test_a_missing_folder_to_search_or_list_says_where_the_files_are_and_gives_the_call(
    tools: Tools, workspace: Path
) -> None:
    """Seen in issue 28's eval (fence template): told "lib does not exist; nothing with a similar name
    exists. Use glob or ls to find the right path.", the model sent ls(lib/) until the loop stop."""
    put(workspace, "client.rb", "MAX_RETRIES = 7\n")
    put(workspace, "server.rb", "class Server\nend\n")
    text = await tools.fail("grep", pattern="MAX_RETRIES", path="lib/")
    assert text == (
        "Error: lib does not exist; nothing with a similar name exists; the workspace's 2 files are at the top "
        'level: client.rb, server.rb; to find them, send grep(pattern="MAX_RETRIES", path=".")'
    )
    assert await tools.ok("grep", pattern="MAX_RETRIES", path=".") == "client.rb:1:MAX_RETRIES = 7"
    text = await tools.fail("grep", pattern="MAX_RETRIES", path="lib", glob="*.rb")
    assert "the workspace's 2 .rb files are at the top level: client.rb, server.rb" in text
    text = await tools.fail("ls", path="lib/")
    assert text.startswith("Error: lib does not exist; nothing with a similar name exists; the workspace's 2 files")
    assert 'to list the top level, send ls(path=".")' in text
    text = await tools.fail("glob", pattern="*.rb", path="lib")
    assert "the workspace's 2 .rb files are at the top level: client.rb, server.rb; to find them, send glob(" in text
    # a similar name still gets the did-you-mean
    put(workspace, "libs/x.rb", "")
    assert "did you mean libs?" in await tools.fail("ls", path="lib")


async def test_a_grep_glob_of_a_kind_the_workspace_lacks_says_what_it_holds(tools: Tools, workspace: Path) -> None:
    python_at_top(workspace)
    text = await tools.fail("grep", pattern="fn main", glob="*.rs")
    assert text == (
        "Error: the glob '*.rs' matched no file in the workspace, so nothing was searched; the workspace "
        "holds 2 .py files, 1 .md file, 1 .txt file"
    )
    text = await tools.fail("grep", pattern="fn main", glob="src/*.rs")
    assert "the workspace has no .rs file (ignored ones left out); it holds 2 .py files" in text


async def test_a_grep_path_with_no_file_of_the_kind_gives_the_call_over_the_workspace(
    tools: Tools, workspace: Path
) -> None:
    python_at_top(workspace)
    text = await tools.fail("grep", pattern="PORT", path="src", glob="*.py")
    assert text == (
        "Error: the glob '*.py' matched no file in src, so nothing was searched; the workspace's 2 .py files "
        'are at the top level: app.py, main.py; to find them, send grep(pattern="PORT", path=".", glob="*.py")'
    )
    (workspace / "empty").mkdir()
    text = await tools.fail("grep", pattern="PORT", path="empty")
    assert text.startswith("Error: empty holds no file to search (ignored ones left out), so nothing was searched;")
    assert "the workspace's 4 files are at the top level and in src/: README.md, app.py, main.py, src/notes.txt" in text


async def test_a_grep_that_searched_files_and_found_no_line_is_still_a_plain_no_match(
    tools: Tools, workspace: Path
) -> None:
    python_at_top(workspace)
    result = await tools.result("grep", pattern="HOST", glob="*.py")
    assert not result.is_error and result.output.startswith("no matches for 'HOST' in the workspace")


async def test_a_glob_that_matches_nothing_is_an_error_with_where_the_files_are(tools: Tools, workspace: Path) -> None:
    python_at_top(workspace)
    result = await tools.result("glob", pattern="src/**/*.py")
    assert result.is_error and result.metadata["empty"] is True
    assert result.error.startswith(
        "the glob 'src/**/*.py' matched no file in the workspace; the workspace's 2 .py files are at the "
        'top level: app.py, main.py; to find them, send glob(pattern="*.py")'
    )
    put(workspace, "lib/deep/a.py", "")
    put(workspace, "lib/b.py", "")
    text = await tools.fail("glob", pattern="*.py", path="src")
    assert "the workspace's 4 .py files are at the top level and in 2 folders: app.py, lib/b.py, lib/deep/a.py" in text
    assert 'send glob(pattern="*.py", path=".")' in text


async def test_ls_of_an_empty_folder_is_an_error_with_where_the_files_are(tools: Tools, workspace: Path) -> None:
    put(workspace, "config/app.toml", "port = 8443\n")
    (workspace / "conf").mkdir()
    result = await tools.result("ls", path="conf")
    assert result.is_error and result.metadata["empty"] is True
    assert result.error == (
        "conf is an empty folder: there is nothing in it to list; the workspace's 1 file is in config/: config/app.toml"
    )


# --- did you mean: the corrected call, ready to send ------------------------------------------


async def test_a_did_you_mean_with_one_candidate_gives_the_call_ready_to_send(tools: Tools, workspace: Path) -> None:
    put(workspace, "config/settings.json", '{"port": 8443}\n')
    text = await tools.fail("read_file", path="settings.json", limit=50)
    assert text == (
        "Error: settings.json does not exist; did you mean config/settings.json? "
        'Send read_file(path="config/settings.json", limit=50)'
    )
    assert "glob" not in text  # searching again is not the next step: reading is
    long = "x" * 400
    text = await tools.fail("edit_file", path="settings.json", old_text=long, new_text="y")
    assert text.endswith(
        'did you mean config/settings.json? Send the same edit_file call with path="config/settings.json"'
    )


async def test_a_did_you_mean_with_several_candidates_lists_them(tools: Tools, workspace: Path) -> None:
    put(workspace, "a/settings.json", "{}\n")
    put(workspace, "b/settings.json", "{}\n")
    text = await tools.fail("read_file", path="settings.json")
    assert text == (
        "Error: settings.json does not exist; did you mean one of: a/settings.json, b/settings.json? "
        "Send the call again with the one you mean"
    )


async def test_a_glob_of_a_plain_path_that_is_elsewhere_gives_the_read(tools: Tools, workspace: Path) -> None:
    put(workspace, "config/app.toml", "port = 8443\n")
    text = await tools.fail("glob", pattern="src/app.toml")
    assert 'did you mean config/app.toml? Read it with read_file(path="config/app.toml")' in text, text


# --- edit_file on a file not read in this session ---------------------------------------------


async def test_an_edit_of_a_small_file_not_read_shows_its_whole_text(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.py", LOGIN)
    result = await tools.result("edit_file", path="auth.py", old_text=INVENTED, new_text="x")
    assert result.is_error
    assert result.output == "auth.py as it is now (all 6 lines):\n" + "\n".join(
        f"{n:>6}\t{line}" for n, line in enumerate(LOGIN.splitlines(), 1)
    )
    # the closest region's two lines are given exactly (they stay last), the file is said to be shown
    assert result.error.startswith(
        "old_text not found in auth.py (you have not read it in this session: its whole current text is shown above)"
    )
    # shown whole, it counts as seen: a second miss gives the usual diagnosis, not the file again
    again = await tools.result("edit_file", path="auth.py", old_text=INVENTED, new_text="x")
    assert "as it is now (all" not in again.output and "not read" not in again.error
    # and the edit copied from what was shown works
    await tools.ok("edit_file", path="auth.py", old_text="    return user.active", new_text="    return user.ok")


async def test_an_edit_unlike_anything_in_a_small_file_not_read_ends_with_copy_from_it(
    tools: Tools, workspace: Path
) -> None:
    put(workspace, "auth.py", LOGIN)
    text = await tools.fail("edit_file", path="auth.py", old_text="class Session:\n    timeout = 30\n", new_text="x")
    assert text.startswith("auth.py as it is now (all 6 lines):\n     1\tdef login(user):")
    assert text.endswith(
        "Error: old_text not found in auth.py, and no part of the file resembles it; check that this is the file "
        "you mean and that old_text is text from it, not a summary or a placeholder. You have not read auth.py in "
        "this session: its whole current text (6 lines) is shown above with line numbers. Copy old_text exactly "
        "from it (without the line-number prefix) and send the edit again."
    )


async def test_an_edit_of_a_file_already_read_keeps_the_usual_diagnosis(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.py", LOGIN)
    await tools.ok("read_file", path="auth.py")
    result = await tools.result("edit_file", path="auth.py", old_text=INVENTED, new_text="x")
    assert "as it is now" not in result.output and "not read" not in result.error


async def test_an_edit_of_a_large_file_not_read_gives_the_lines_near_old_texts_first_line_and_the_read(
    tools: Tools, workspace: Path
) -> None:
    body = "".join(f"value_{i} = {i}\n" for i in range(1, 200))
    put(workspace, "big.py", body.replace("value_120 = 120\n", "def compute(total):\n    return total\n"))
    result = await tools.result(
        "edit_file", path="big.py", old_text="def compute(total, rate, years):\n    pass\n", new_text="x"
    )
    assert result.is_error
    assert '(you have not read it in this session: read it with read_file(path="big.py", offset=' in result.error
    offset, limit = map(int, re.search(r"offset=(\d+), limit=(\d+)\)", result.error).groups())  # type: ignore[union-attr]
    assert offset <= 120 < offset + limit and limit <= 30
    assert "   120\tdef compute(total):" in result.output and "value_1 = 1\n" not in result.output


async def test_the_ablation_does_not_show_the_unread_file(workspace: Path, tmp_path: Path) -> None:
    tools = Tools(workspace, tmp_path, recovery_hints=False)
    put(workspace, "auth.py", LOGIN)
    result = await tools.result("edit_file", path="auth.py", old_text=INVENTED, new_text="x")
    assert "as it is now" not in result.output and result.error == "old_text not found in auth.py"


# --- through the loop: the model's next request holds the hint --------------------------------


def last_tool_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "tool")


async def test_the_model_gets_where_the_files_are_and_the_corrected_grep(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    python_at_top(workspace)

    def corrected(body: dict[str, Any]) -> dict[str, Any]:
        sent = re.search(r"send grep\((.*)\)$", last_tool_text(body))
        assert sent is not None, last_tool_text(body)
        args = json.loads("{" + re.sub(r"(\w+)=", r'"\1":', sent.group(1)) + "}")
        return reply("", call("grep", **args))

    scripted_model.add(
        reply("", call("grep", pattern="PORT", glob="src/**/*.py")), corrected, reply("PORT is 8080 in app.py.")
    )
    run = await run_agent(settings, "what is PORT set to?", ["grep", "read_file"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    first, second = run.results()
    assert first.is_error and "the workspace's 2 .py files are at the top level: app.py, main.py" in first.error
    assert second.output == "app.py:1:PORT = 8080"
    assert "app.py, main.py" in last_tool_text(scripted_model.requests[1])


async def test_the_model_gets_the_unread_file_and_its_next_edit_is_right(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    put(workspace, "auth.py", LOGIN)

    def from_shown(body: dict[str, Any]) -> dict[str, Any]:
        shown = last_tool_text(body)
        line = next(m.group(1) for x in shown.splitlines() if (m := re.match(r"^\s*\d+\t(.*return user\.active)$", x)))
        return reply("", call("edit_file", path="auth.py", old_text=line, new_text=line.replace("active", "enabled")))

    scripted_model.add(
        reply("", call("edit_file", path="auth.py", old_text=INVENTED, new_text="x")), from_shown, reply("Done.")
    )
    run = await run_agent(settings, "login should check user.enabled", ["edit_file", "read_file"])
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert "     1\tdef login(user):" in last_tool_text(scripted_model.requests[1])
    assert (workspace / "auth.py").read_text() == LOGIN.replace("user.active", "user.enabled")
    assert len(scripted_model.requests) == 3  # no read_file turn in between
