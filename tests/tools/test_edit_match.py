"""edit_file's indentation match (`tools/edit_match.py`): old_text that differs from one region
of the file only in its lines' leading whitespace is applied there, new_text re-indented the same
way, and the result says so; anything less certain still fails with the diagnosis."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from tests.tools.test_file_tools import AUTH_GO, AUTH_GO_FIXED, FILE_TOOLS, Tools, last_tool_text, put
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb

# what Qwen2.5-Coder-1.5B sent in the recovery eval: the right lines, one tab short on each
UNDER_OLD = 'if password == "" {\n\treturn true\n}'
UNDER_NEW = 'if password == "" {\n\treturn false\n}'
ONE_TAB_MORE = (
    "(matched ignoring indentation: old_text's lines are indented with one more tab in the file; "
    "new_text was re-indented the same way)"
)


@pytest.fixture
def tools(workspace: Path, tmp_path: Path) -> Tools:
    return Tools(workspace, tmp_path)


async def test_old_text_indented_one_level_less_is_applied_and_new_text_reindented(
    tools: Tools, workspace: Path
) -> None:
    put(workspace, "auth.go", AUTH_GO)
    result = await tools.result("edit_file", path="auth.go", old_text=UNDER_OLD, new_text=UNDER_NEW)
    assert not result.is_error, result.error
    assert result.output.startswith(f"edited auth.go: replaced 1 occurrence at line 5 {ONE_TAB_MORE}\n--- a/auth.go")
    assert "-\t\treturn true\n+\t\treturn false\n" in result.metadata["diff"]
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED


async def test_spaces_per_level_for_the_files_tabs(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    text = await tools.ok(
        "edit_file",
        path="auth.go",
        old_text='    if password == "" {\n        return true\n    }',
        new_text='    if password == "" {\n        return false\n    }',
    )
    assert "(matched ignoring indentation: the file indents with tabs where old_text uses 4 spaces per level;" in text
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED
    # two spaces a level and no offset for the function body: both mapped, said both
    put(workspace, "auth.go", AUTH_GO)
    await tools.ok("read_file", path="auth.go")
    text = await tools.ok(
        "edit_file",
        path="auth.go",
        old_text='if password == "" {\n  return true\n}',
        new_text='if password == "" {\n  // empty: refused\n  return false\n}',
    )
    assert "uses 2 spaces per level; old_text's lines are indented with one more tab in the file;" in text
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED.replace(
        "\t\treturn false", "\t\t// empty: refused\n\t\treturn false"
    )


async def test_tabs_for_the_files_spaces_and_an_offset_removed(tools: Tools, workspace: Path) -> None:
    source = "class Login:\n    def check(self, password):\n        if not password:\n            return True\n"
    path = put(workspace, "login.py", source)
    text = await tools.ok(
        "edit_file",
        path="login.py",
        old_text="\tif not password:\n\t\treturn True",
        new_text="\tif not password:\n\t\treturn False",
    )
    assert "the file indents with 4 spaces per level where old_text uses tabs; " in text
    assert "old_text's lines are indented with 4 more spaces in the file;" in text
    assert path.read_text() == source.replace("True", "False")
    # over-indented by four spaces: removed from old_text and from new_text
    text = await tools.ok(
        "edit_file",
        path="login.py",
        old_text="            if not password:\n                return False",
        new_text="            if not password:\n                raise ValueError('empty')",
    )
    assert "old_text's lines are indented with 4 fewer spaces in the file" in text
    assert path.read_text() == source.replace("return True", "raise ValueError('empty')")


async def test_new_text_that_cannot_be_reindented_the_same_way_is_not_guessed(tools: Tools, workspace: Path) -> None:
    source = "def f():\n    if x:\n        y()\n"
    path = put(workspace, "f.py", source)
    # four spaces too many in old_text, but new_text's second line has fewer than four to remove
    text = await tools.fail(
        "edit_file", path="f.py", old_text="        if x:\n            y()", new_text="        if x:\n  z()"
    )
    assert "old_text not found in f.py" in text and "The closest region is lines 2-3" in text
    assert path.read_text() == source


async def test_the_eval_trap_still_fails_on_the_line_the_file_does_not_have(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    indented = '\t// reject empty passwords\n\tif password == "" {\n\t\treturn true\n\t}'
    for old in (f"// reject empty passwords\n{UNDER_OLD}", indented.replace("\t", "    ")):
        text = await tools.fail("edit_file", path="auth.go", old_text=old, new_text=UNDER_NEW)
        assert "these lines of old_text are not there: '// reject empty passwords'" in text
    assert (workspace / "auth.go").read_text() == AUTH_GO


async def test_only_leading_whitespace_may_differ(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    for old in (
        'if password == "" { \n\treturn true\n}',  # a trailing space
        'if password == ""  {\n\treturn true\n}',  # whitespace inside a line
        'if password == "" {\n\n\treturn true\n}',  # a blank line the file does not have
        'if password == "" {\n\treturn true\n\t}',  # relative indentation differs
    ):
        assert "old_text not found" in await tools.fail("edit_file", path="auth.go", old_text=old, new_text="x")
    assert (workspace / "auth.go").read_text() == AUTH_GO


async def test_two_candidate_regions_or_replace_all_do_not_fuzz(tools: Tools, workspace: Path) -> None:
    twice = "func a() {\n\tif ok {\n\t\treturn\n\t}\n}\n\nfunc b() {\n\tif ok {\n\t\treturn\n\t}\n}\n"
    path = put(workspace, "two.go", twice)
    text = await tools.fail("edit_file", path="two.go", old_text="if ok {\n\treturn\n}", new_text="x")
    assert "old_text not found in two.go" in text
    text = await tools.fail("edit_file", path="two.go", old_text="if ok {\n\treturn", new_text="x", replace_all=True)
    assert "old_text not found in two.go" in text
    assert path.read_text() == twice
    put(workspace, "auth.go", AUTH_GO)
    text = await tools.fail("edit_file", path="auth.go", old_text=UNDER_OLD, new_text=UNDER_NEW, replace_all=True)
    assert "old_text not found in auth.go" in text


async def test_blank_lines_crlf_and_a_trailing_newline(tools: Tools, workspace: Path) -> None:
    path = put(workspace, "f.py", "def f():\n    a = 1\n\n    return a\n")
    await tools.ok("edit_file", path="f.py", old_text="a = 1\n\nreturn a", new_text="a = 2\n\nreturn a")
    assert path.read_text() == "def f():\n    a = 2\n\n    return a\n"  # the blank line stays blank
    path = put(workspace, "win.go", b"func f() {\r\n\tif x {\r\n\t\treturn\r\n\t}\r\n}\r\n")
    await tools.ok("edit_file", path="win.go", old_text="if x {\n\treturn\n}", new_text="if x {\n\treturn 1\n}")
    assert path.read_bytes() == b"func f() {\r\n\tif x {\r\n\t\treturn 1\r\n\t}\r\n}\r\n"
    path = put(workspace, "conf.yaml", "a:\n    b: 1\n    c: 2\n")
    await tools.ok("edit_file", path="conf.yaml", old_text="b: 1\nc: 2\n", new_text="b: 3\nc: 2\nd: 4\n")
    assert path.read_text() == "a:\n    b: 3\n    c: 2\n    d: 4\n"


async def test_scenario_the_under_indented_edit_lands_first_time(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    put(workspace, "auth.go", AUTH_GO)
    scripted_model.add(
        reply("", call("edit_file", path="auth.go", old_text=UNDER_OLD, new_text=UNDER_NEW)),
        reply("CheckLogin now rejects empty passwords."),
    )
    run = await run_agent(settings, "make CheckLogin reject empty passwords", FILE_TOOLS)
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    assert ONE_TAB_MORE in last_tool_text(scripted_model.requests[1])
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED


async def test_a_stray_backtick_or_quote_is_named_and_the_exact_lines_given(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    # what the 1.5B model sent ten times after a hint that quoted the lines in backticks
    old = 'if password == "" {\n\t\treturn true\n\t}`'
    text = await tools.fail("edit_file", path="auth.go", old_text=old, new_text=UNDER_NEW)
    assert "old_text line '}`' has a stray '`' at its end; the file's line is '}'" in text
    assert "not there" not in text
    exact = '\\tif password == \\"\\" {\\n\\t\\treturn true\\n\\t}'
    assert text.endswith(f"on the next line):\n{exact}\nSend that as old_text, and indent new_text the same way.")
    old = '"if password == "" {\n\t\treturn true'
    text = await tools.fail("edit_file", path="auth.go", old_text=old, new_text=UNDER_NEW)
    assert "old_text line '\"if password == \"\" {' has a stray '\"' at its start; the file's line is " in text
    assert (workspace / "auth.go").read_text() == AUTH_GO


async def test_a_first_line_written_from_its_first_word_and_spaces_for_tabs(tools: Tools, workspace: Path) -> None:
    """The test_real_model run: old_text starts at the first line's first word (as an exact match
    allows), its other lines indented with 4 spaces per level where the file has tabs."""
    put(workspace, "auth.go", AUTH_GO)
    old = 'if password == "" {\n        return true\n    }'
    text = await tools.ok("edit_file", path="auth.go", old_text=old, new_text=old.replace("true", "false"))
    assert "matched ignoring indentation: the file indents with tabs where old_text uses 4 spaces per level" in text
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED


async def test_a_backslash_t_leading_old_texts_lines_is_read_as_a_tab(tools: Tools, workspace: Path) -> None:
    """Shown the exact lines escaped, the model (writing its call as JSON in text) escaped them again:
    a backslash and a t where the file has a tab, five times over in the real-model test."""
    put(workspace, "auth.go", AUTH_GO)
    old = '\\tif password == "" {\n\\t\treturn true\n\\t}'
    text = await tools.ok("edit_file", path="auth.go", old_text=old, new_text=old.replace("true", "false"))
    assert "(matched reading the \\t that starts old_text's lines as tabs)" in text
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED
    put(workspace, "t.tsv", "a\tb\n")  # only leading whitespace is read so: mid-line, a backslash-t is text
    result = await tools.result("edit_file", path="t.tsv", old_text="a\\tb\n", new_text="x\n")
    assert result.is_error and (workspace / "t.tsv").read_text() == "a\tb\n"


async def test_a_one_line_closest_region_is_given_exactly(tools: Tools, workspace: Path) -> None:
    """test_real_model, three runs: the model invented `def login(username, password):`, was told to
    re-read the file, read it, and answered that nothing needed renaming. Now the line is in the error."""
    put(workspace, "auth.py", 'def login(user):\n    return user == "admin"\n')
    result = await tools.result(
        "edit_file", path="auth.py", old_text="def login(username, password):", new_text="def sign_in(user):"
    )
    assert result.is_error and "these lines of old_text are not there: 'def login(username, password):'" in result.error
    assert "exactly (escaped as inside a JSON string, on the next line):\ndef login(user):\nIf they are" in result.error


NET = '[net]\nhost = "example.org"\ntimeout = 5\nretries = 3\n'


async def test_a_line_break_at_a_replaced_lines_end_stays_as_the_file_has_it(tools: Tools, workspace: Path) -> None:
    """Seen (2026-12-07, set_a_value): the 1.5B model's edit `timeout = 5` -> `timeout = 30\\n`
    added a blank line under it; the reverse would join the next line onto the new one."""
    put(workspace, "net.toml", NET)
    result = await tools.result("edit_file", path="net.toml", old_text="timeout = 5", new_text="timeout = 30\n")
    assert not result.is_error, result.error
    assert "no blank line added" in result.output.splitlines()[0]
    assert (workspace / "net.toml").read_text() == NET.replace("= 5", "= 30")
    put(workspace, "joined.toml", NET)
    await tools.result("edit_file", path="joined.toml", old_text="timeout = 5\n", new_text="timeout = 30")
    assert (workspace / "joined.toml").read_text() == NET.replace("= 5", "= 30")
    # CRLF lines keep theirs
    put(workspace, "win.ini", NET.replace("\n", "\r\n"))
    await tools.result("edit_file", path="win.ini", old_text="timeout = 5", new_text="timeout = 30\r\n")
    assert (workspace / "win.ini").read_bytes() == NET.replace("= 5", "= 30").replace("\n", "\r\n").encode()


async def test_line_breaks_the_edit_means_are_kept(tools: Tools, workspace: Path) -> None:
    for old, new, after in (
        ("timeout = 5\n", "", NET.replace("timeout = 5\n", "")),  # a line removed
        ("timeout = 5", "timeout = 30\n\n", NET.replace("= 5\n", "= 30\n\n\n")),  # a blank line asked for
        ("timeout = 5", "timeout = 5\n", NET.replace("= 5\n", "= 5\n\n")),  # only a line break added
        ("time", "time\n", NET.replace("timeout", "time\nout")),  # inside a line
        ("retries = 3\n", "retries = 4", NET.replace("retries = 3\n", "retries = 4")),  # the file's last line
    ):
        name = f"case{tools.calls}.toml"  # a file not read before: no "changed since you read it"
        put(workspace, name, NET)
        result = await tools.result("edit_file", path=name, old_text=old, new_text=new)
        assert not result.is_error, result.error
        assert (workspace / name).read_text() == after, (old, new)
        assert "line break" not in result.output.splitlines()[0]
