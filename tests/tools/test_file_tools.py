"""The file tools on real files, folders and symlinks; the issue's scenarios through the scripted model."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.core.feedback import model_text
from workbench.model.demo import SAMPLE, WRONG_NEW, WRONG_OLD
from workbench.pb import workbench_pb2 as pb
from workbench.tools.files.edit import closest_region
from workbench.tools.files.grep import GREP_CAP
from workbench.tools.files.listing import GLOB_CAP, LS_CAP
from workbench.tools.files.walk import glob_regex
from workbench.tools.registry import Toolbox, ToolContext

FILE_TOOLS = ["read_file", "write_file", "edit_file", "ls", "glob", "grep"]
AUTH_GO = SAMPLE
AUTH_GO_FIXED = AUTH_GO.replace("return true", "return false")
SPACES_OLD, SPACES_NEW = WRONG_OLD, WRONG_NEW


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace, with a canary file no tool may read or change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOP SECRET canary\n")
    return folder


class Tools:
    """Calls the file tools the way the loop does: JSON arguments through Toolbox.invoke."""

    def __init__(self, workspace: Path, tmp: Path, **settings: Any):
        self.workspace = workspace
        self.settings = Settings(workspace=workspace, data_dir=tmp / "data", **settings)
        self.ctx = ToolContext(workspace=workspace, settings=self.settings, session_dir=tmp / "session")
        self.toolbox = Toolbox([*FILE_TOOLS, "skill"])
        self.calls = 0

    async def result(self, name: str, **args: Any) -> pb.ToolResult:
        self.calls += 1
        call_ = pb.ToolCall(id=f"call{self.calls}", name=name, arguments=json.dumps(args))
        return await self.toolbox.invoke(call_, self.ctx)

    async def ok(self, name: str, **args: Any) -> str:
        result = await self.result(name, **args)
        assert not result.is_error, model_text(result)
        return model_text(result)

    async def fail(self, name: str, **args: Any) -> str:
        result = await self.result(name, **args)
        assert result.is_error, model_text(result)
        return model_text(result)


@pytest.fixture
def tools(workspace: Path, tmp_path: Path) -> Tools:
    return Tools(workspace, tmp_path)


def put(root: Path, rel: str, content: str | bytes = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


# --- read_file ------------------------------------------------------------------------------


async def test_read_file_numbers_lines_and_pages(workspace: Path, tmp_path: Path) -> None:
    tools = Tools(workspace, tmp_path, output_limit=1_000_000)  # the 2,000-line page fits
    put(workspace, "big.txt", "".join(f"line {i}\n" for i in range(1, 5001)))
    text = await tools.ok("read_file", path="big.txt")
    assert text.startswith("     1\tline 1\n     2\tline 2")
    assert "  2000\tline 2000" in text and "line 2001" not in text
    assert "[lines 1-2000 of 5,000 shown; read on with read_file(path='big.txt', offset=2001)]" in text
    text = await tools.ok("read_file", path="big.txt", offset=4999, limit=10)
    assert text == "  4999\tline 4999\n  5000\tline 5000"
    assert await tools.ok("read_file", path="big.txt", offset=-2) == "  4999\tline 4999\n  5000\tline 5000"
    assert "past the end of big.txt, which has 5,000 lines" in await tools.fail(
        "read_file", path="big.txt", offset=6000
    )
    assert "limit must be at least 1" in await tools.fail("read_file", path="big.txt", limit=0)


async def test_read_file_page_fits_the_output_limit(workspace: Path, tmp_path: Path) -> None:
    tools = Tools(workspace, tmp_path, output_limit=3000)
    put(workspace, "wide.txt", "".join(f"{i:04d} " + "x" * 95 + "\n" for i in range(1, 201)))
    result = await tools.result("read_file", path="wide.txt")
    assert not result.is_error and "saved_output" not in result.metadata  # never cut by the registry
    lines = [x for x in result.output.splitlines() if re.match(r"\s*\d+\t", x)]
    assert 10 < len(lines) < 40
    assert f"offset={len(lines) + 1})]" in result.output and "the page stopped at about" in result.output


async def test_read_file_cuts_very_long_lines(tools: Tools, workspace: Path) -> None:
    put(workspace, "min.js", "a" * 5000 + "\nshort\n")
    text = await tools.ok("read_file", path="min.js")
    assert "[line cut: 3,000 more characters]" in text and "     2\tshort" in text


async def test_read_file_empty_binary_and_bad_utf8(tools: Tools, workspace: Path) -> None:
    put(workspace, "empty.txt", "")
    assert await tools.ok("read_file", path="empty.txt") == "(empty.txt is empty: 0 lines)"
    put(workspace, "logo.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    text = await tools.fail("read_file", path="logo.png")
    assert "logo.png is a PNG image, 1,032 bytes" in text and "\x00" not in text
    put(workspace, "blob.bin", b"abc\x00def" * 10)
    assert "binary data (it contains NUL bytes)" in await tools.fail("read_file", path="blob.bin")
    put(workspace, "latin.txt", "caf\xe9 ok\nna\xefve\n".encode("latin-1"))
    text = await tools.fail("read_file", path="latin.txt")
    assert "not valid UTF-8 text: byte 0xe9 at line 1, column 4" in text and "Latin-1" in text


async def test_read_file_directory_points_to_ls(tools: Tools, workspace: Path) -> None:
    put(workspace, "src/a.py", "")
    assert "src is a directory, not a file; list it with ls(path='src')" in await tools.fail("read_file", path="src")


async def test_missing_path_suggests_real_names(tools: Tools, workspace: Path) -> None:
    put(workspace, "src/auth.py", "x = 1\n")
    put(workspace, "lib/deep/config.yaml", "a: 1\n")
    text = await tools.fail("read_file", path="src/auht.py")
    assert "src/auht.py does not exist; did you mean src/auth.py?" in text
    text = await tools.fail("read_file", path="config.yaml")  # the same name elsewhere
    assert "did you mean lib/deep/config.yaml?" in text
    text = await tools.fail("read_file", path="nothing/like/it.rs")
    assert "nor does its folder nothing/like" in text and "nothing with a similar name exists" in text
    text = await tools.fail("read_file", path="src/auth.py/inner.txt")
    assert "src/auth.py is a file, not a directory" in text


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes files regardless of their mode")
async def test_permission_denied_is_explained(tools: Tools, workspace: Path) -> None:
    locked = put(workspace, "locked.txt", "no\n")
    locked.chmod(0)
    assert "permission denied reading locked.txt (mode ----------" in await tools.fail("read_file", path="locked.txt")
    locked.chmod(0o444)
    assert "locked.txt is read-only" in await tools.fail("write_file", path="locked.txt", content="x")


# --- confinement ----------------------------------------------------------------------------


async def test_dotdot_and_absolute_paths_outside_are_refused(tools: Tools, workspace: Path, outside: Path) -> None:
    root = str(workspace.resolve())
    for path in ["../outside/secret.txt", str(outside / "secret.txt"), "src/../../outside/secret.txt"]:
        text = await tools.fail("read_file", path=path)
        assert "Refused" in text and f"outside the workspace {root}" in text and "canary" not in text
    text = await tools.fail("write_file", path="../outside/new.txt", content="x")
    assert f"outside the workspace {root}" in text
    text = await tools.fail("edit_file", path="../outside/secret.txt", old_text="TOP", new_text="NO")
    assert f"outside the workspace {root}" in text
    for name, args in [("ls", {"path": ".."}), ("glob", {"pattern": "*", "path": ".."})]:
        assert f"outside the workspace {root}" in await tools.fail(name, **args)
    assert f"outside the workspace {root}" in await tools.fail("grep", pattern="SECRET", path="..")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOP SECRET canary\n"


async def test_symlinks_leading_outside_are_refused(tools: Tools, workspace: Path, outside: Path) -> None:
    (workspace / "etc").symlink_to("/etc")
    (workspace / "out").symlink_to(outside)
    (workspace / "secret.txt").symlink_to(outside / "secret.txt")
    text = await tools.fail("read_file", path="etc/passwd")
    assert "goes through the symlink etc -> /etc" in text and "root:" not in text
    assert "goes through the symlink secret.txt" in await tools.fail("read_file", path="secret.txt")
    assert "Refused" in await tools.fail("ls", path="etc")
    assert "Refused" in await tools.fail("write_file", path="out/planted.txt", content="x")
    assert "Refused" in await tools.fail("edit_file", path="out/secret.txt", old_text="TOP", new_text="X")
    assert "Refused" in await tools.fail("write_file", path="secret.txt", content="overwritten")
    grep = await tools.ok("grep", pattern="SECRET|root")
    assert "canary" not in grep and "3 symlinks leading outside the workspace skipped" in grep
    assert "secret.txt" not in await tools.fail("glob", pattern="*.txt")
    listing = await tools.ok("ls")
    assert "etc -> /etc (outside the workspace)" in listing
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOP SECRET canary\n"


async def test_paths_inside_the_workspace_work_every_way(tools: Tools, workspace: Path) -> None:
    put(workspace, "src/real.py", "print(1)\n")
    (workspace / "alias.py").symlink_to("src/real.py")
    assert "print(1)" in await tools.ok("read_file", path="src/../src/real.py")
    assert "print(1)" in await tools.ok("read_file", path=str(workspace / "src" / "real.py"))
    assert "print(1)" in await tools.ok("read_file", path="alias.py")
    await tools.ok("edit_file", path="alias.py", old_text="1", new_text="2")
    assert (workspace / "src" / "real.py").read_text() == "print(2)\n"
    assert (workspace / "alias.py").is_symlink()


async def test_reading_saved_outputs_read_roots_andhome_skills(
    workspace: Path, tmp_path: Path, outside: Path, home: Path
) -> None:
    tools = Tools(workspace, tmp_path, output_limit=2000, read_roots=[outside])
    put(workspace, "m.txt", "".join(f"needle {i}\n" for i in range(300)))
    result = await tools.result("edit_file", path="m.txt", old_text="needle", new_text="pin", replace_all=True)
    saved = result.metadata["saved_output"]  # the diff was over the limit: cut, and saved whole
    assert saved.startswith(str(tools.ctx.outputs_dir))
    text = await tools.ok("read_file", path=saved, offset=1, limit=3)
    assert text.startswith("     1\tedited m.txt: replaced 300 occurrences")
    assert "TOP SECRET canary" in await tools.ok("read_file", path=str(outside / "secret.txt"))
    assert "secret.txt" in await tools.ok("ls", path=str(outside))
    text = await tools.fail("write_file", path=str(outside / "secret.txt"), content="x")
    assert "may be read but not written" in text
    put(home, ".claude/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: PDFs\n---\nUse forms.md\n")
    put(home, ".claude/skills/pdf/forms.md", "fill the form\n")
    assert "fill the form" in await tools.ok("read_file", path=str(home / ".claude/skills/pdf/forms.md"))
    assert "Refused" in await tools.fail("read_file", path=str(home / "other.txt"))


# --- write_file -----------------------------------------------------------------------------


async def test_write_file_creates_folders_and_reports(tools: Tools, workspace: Path) -> None:
    result = await tools.result("write_file", path="a/b/c.txt", content="one\ntwo\nthree")
    assert model_text(result) == "wrote 14 bytes, 3 lines to a/b/c.txt (new file, created folder a/b)"
    assert (workspace / "a/b/c.txt").read_text() == "one\ntwo\nthree\n"
    assert "+one" in result.metadata["diff"]
    text = await tools.ok("write_file", path="a/b/c.txt", content="héllo\n")
    assert text == "wrote 7 bytes, 1 line to a/b/c.txt (replaced 14 bytes)"
    assert "a/b is a directory" in await tools.fail("write_file", path="a/b", content="x")
    assert "a/b/c.txt is a file, not a directory" in await tools.fail("write_file", path="a/b/c.txt/d.txt", content="x")
    text = await tools.fail("write_file", path="bad.txt", content="a\ud800b")
    assert "lone surrogate" in text and not (workspace / "bad.txt").exists()


async def test_a_new_file_in_a_new_folder_that_resembles_one_at_its_paths_tail_is_noted(
    tools: Tools, workspace: Path
) -> None:
    """Issue 38: a small model wrote its fix of slug.py to an invented src/slug.py. The write goes
    through (a real new file is never refused); its result names the existing file and the call."""
    slug = 'def slug(title):\n    """A title as a URL slug."""\n    return title.lower()\n'
    (workspace / "slug.py").write_text(slug)
    fixed = slug.replace("title.lower()", 'title.lower().replace(" ", "-")')
    text = await tools.ok("write_file", path="src/slug.py", content=fixed)
    assert text == (
        "wrote 93 bytes, 3 lines to src/slug.py (new file, created folder src)\n"
        "Note: slug.py already exists and this new file is much like it; if you meant to change slug.py, write "
        f'there instead: write_file(path="slug.py", content={json.dumps(fixed)})'
    )
    assert (workspace / "src/slug.py").read_text() == fixed and (workspace / "slug.py").read_text() == slug
    (workspace / "README.md").write_text("# Project\n\nWhat it does.\n")
    # a new file unlike the one of its name (a second README), or in a folder that was there: no note
    assert await tools.ok("write_file", path="docs/README.md", content="# Docs\n\nHow to build them.\n") == (
        "wrote 27 bytes, 3 lines to docs/README.md (new file, created folder docs)"
    )
    assert "Note" not in await tools.ok("write_file", path="src/other/slug.py", content=fixed.replace("(", "( "))
    assert "Note" not in await tools.ok("write_file", path="docs/slug.py", content=fixed)
    # the other run: a guessed whole config in an invented folder, half of it the real one's lines
    (workspace / "net.toml").write_text('[net]\nhost = "example.org"\ntimeout = 5\nretries = 3\n')
    text = await tools.ok("write_file", path="src/main/net.toml", content="[net]\ntimeout = 30")
    assert "\nNote: net.toml already exists and this new file is much like it" in text


async def test_a_copy_made_by_writing_is_no_misplaced_change(tools: Tools, workspace: Path) -> None:
    """Seen (2026-12-07, one_command): asked to copy app.ini into build/, the 1.5B model wrote its
    text there without the final newline (read_file never shows one) and was told to write app.ini
    instead. The file written ends with a newline, and an exact copy gets no note."""
    (workspace / "app.ini").write_text("[app]\nname = demo\n")
    assert await tools.ok("write_file", path="build/app.ini", content="[app]\nname = demo") == (
        "wrote 18 bytes, 2 lines to build/app.ini (new file, created folder build)"
    )
    assert (workspace / "build" / "app.ini").read_bytes() == (workspace / "app.ini").read_bytes()


async def test_a_written_file_ends_with_a_newline_unless_the_one_it_replaces_did_not(
    tools: Tools, workspace: Path
) -> None:
    await tools.ok("write_file", path="new.txt", content="one\ntwo")
    assert (workspace / "new.txt").read_bytes() == b"one\ntwo\n"
    put(workspace, "bare.txt", "no newline")  # a file that ends without one keeps that
    await tools.ok("read_file", path="bare.txt")
    await tools.ok("write_file", path="bare.txt", content="still none")
    assert (workspace / "bare.txt").read_bytes() == b"still none"
    (workspace / "dos.txt").write_bytes(b"a\r\nb\r\n")  # its own line break
    await tools.ok("read_file", path="dos.txt")
    await tools.ok("write_file", path="dos.txt", content="a\r\nc")
    assert (workspace / "dos.txt").read_bytes() == b"a\r\nc\r\n"
    await tools.ok("write_file", path="empty.txt", content="")  # empty stays empty
    assert (workspace / "empty.txt").read_bytes() == b""
    assert await tools.ok("write_file", path="new.txt", content="one\ntwo") == (
        "new.txt unchanged: it already holds exactly this content (8 bytes, 2 lines)"
    )


async def test_write_file_of_the_same_content_says_unchanged_and_does_not_write(tools: Tools, workspace: Path) -> None:
    # a 1.5B model wrote the same file ten times, each time told "wrote 30 bytes ... (replaced 30 bytes)"
    content = '{"debug": false, "port": 8080}'
    path = put(workspace, "conf/settings.json", content)
    os.utime(path, ns=(1, 1))
    inode = path.stat().st_ino
    result = await tools.result("write_file", path="conf/settings.json", content=content)
    assert not result.is_error
    assert result.output == "conf/settings.json unchanged: it already holds exactly this content (30 bytes, 1 line)"
    assert result.metadata["unchanged"] is True and "diff" not in result.metadata
    assert (path.stat().st_ino, path.stat().st_mtime_ns, path.read_text()) == (inode, 1, content)
    # what the agent has seen is that content: an edit after it needs no read
    await tools.ok("edit_file", path="conf/settings.json", old_text="8080", new_text="9090")
    # a file changed by someone else since the agent saw it is still refused, even with the same content
    put(workspace, "conf/settings.json", content)
    assert "changed on disk since you last read it" in await tools.fail(
        "write_file", path="conf/settings.json", content=content
    )


@pytest.mark.slow
async def test_write_file_is_atomic_and_keeps_the_mode(tools: Tools, workspace: Path) -> None:
    script = put(workspace, "run.sh", "#!/bin/sh\necho old\n" * 1000)
    script.chmod(0o755)
    old, new = script.read_text(), "#!/bin/sh\necho new\n" * 200_000
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:  # a reader never sees a half-written file
        while not done.is_set():
            seen.add(script.read_text())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        before = script.stat().st_ino
        await tools.ok("write_file", path="run.sh", content=new)
        assert script.stat().st_ino != before  # renamed into place, not written in place
        for content in [old, new]:
            await tools.ok("write_file", path="run.sh", content=content)
    finally:
        done.set()
        watcher.join()
    assert seen <= {old, new}
    assert script.read_text() == new and stat.S_IMODE(script.stat().st_mode) == 0o755
    assert sorted(p.name for p in workspace.iterdir()) == ["run.sh"]  # no temporary file left


async def test_write_file_refuses_a_file_changed_since_read(tools: Tools, workspace: Path) -> None:
    put(workspace, "notes.md", "mine\n")
    await tools.ok("read_file", path="notes.md")
    put(workspace, "notes.md", "someone else's\n")
    text = await tools.fail("write_file", path="notes.md", content="overwrite\n")
    assert "notes.md changed on disk since you last read it" in text and "read_file(path='notes.md')" in text
    assert (workspace / "notes.md").read_text() == "someone else's\n"
    await tools.ok("read_file", path="notes.md")
    await tools.ok("write_file", path="notes.md", content="overwrite\n")


# --- edit_file ------------------------------------------------------------------------------


async def test_edit_file_replaces_and_returns_the_diff(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    result = await tools.result("edit_file", path="auth.go", old_text="\t\treturn true", new_text="\t\treturn false")
    assert not result.is_error
    assert result.output.startswith("edited auth.go: replaced 1 occurrence at line 6\n--- a/auth.go\n+++ b/auth.go")
    diff = result.metadata["diff"]
    assert "-\t\treturn true\n+\t\treturn false\n" in diff and diff in result.output
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED


async def test_edit_not_found_names_the_closest_region(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    result = await tools.result("edit_file", path="auth.go", old_text=SPACES_OLD, new_text=SPACES_NEW)
    text = model_text(result)
    assert result.is_error and "old_text not found in auth.go" in text
    assert "The closest region is lines 5-7" in text
    assert "the file indents with tabs where old_text uses spaces" in text
    assert "'// reject empty passwords'" in text
    # a small region's exact lines, ready to copy (the reviewer's comment line is not among them)
    exact = '\\tif password == \\"\\" {\\n\\t\\treturn true\\n\\t}'
    assert f"exactly (escaped as inside a JSON string, on the next line):\n{exact}\nIf they are the text" in text
    assert "else re-read the file with read_file(path='auth.go')" in text
    assert '     5\t\tif password == "" {' in result.output  # the region as it is now
    assert (result.metadata["closest_first_line"], result.metadata["closest_last_line"]) == (5, 7)
    assert (workspace / "auth.go").read_text() == AUTH_GO


async def test_edit_not_found_other_cases(tools: Tools, workspace: Path) -> None:
    put(workspace, "a.py", "def f():\n    return 1\n\n\ndef f():\n    return 1\n")
    # tabs for spaces: the indentation match would take it, but the two regions make it ambiguous
    text = await tools.fail("edit_file", path="a.py", old_text="def f():\n\treturn 1", new_text="x")
    assert "it differs from old_text only in whitespace" in text
    assert "the file indents with spaces where old_text uses tabs" in text
    # the lines to send, JSON-escaped, ready to copy (a 1.5B model sent one tab where the file has two),
    # on a line of their own: the model copied the quotes, then the backtick, that were around them
    exact = "Those lines are exactly (escaped as inside a JSON string, on the next line):\ndef f():\\n    return 1\n"
    assert exact + "Send that as old_text, and indent new_text the same way." in text
    assert "Re-read" not in text
    text = await tools.fail("edit_file", path="a.py", old_text="     1\tdef f():\n     2\t    return 1", new_text="x")
    assert "read_file's line numbers" in text
    text = await tools.fail("edit_file", path="a.py", old_text="class Zebra(Base): pass", new_text="x")
    assert "no part of the file resembles it" in text
    assert "old_text is empty" in await tools.fail("edit_file", path="a.py", old_text="", new_text="x")
    assert "nothing to change" in await tools.fail("edit_file", path="a.py", old_text="f", new_text="f")
    assert "did you mean a.py?" in await tools.fail("edit_file", path="b.py", old_text="f", new_text="g")
    put(workspace, "img.gif", b"GIF89a\x00\x01")
    assert "a GIF image" in await tools.fail("edit_file", path="img.gif", old_text="GIF", new_text="x")


async def test_edit_several_matches_and_replace_all(tools: Tools, workspace: Path) -> None:
    put(workspace, "c.py", "x = 1\ny = 2\nx = 1\n\nx = 1\n")
    text = await tools.fail("edit_file", path="c.py", old_text="x = 1", new_text="x = 3")
    assert "old_text occurs 3 times in c.py, at lines 1, 3, 5" in text and "replace_all=true" in text
    text = await tools.ok("edit_file", path="c.py", old_text="x = 1", new_text="x = 3", replace_all=True)
    assert "replaced 3 occurrences at lines 1, 3, 5" in text
    assert (workspace / "c.py").read_text() == "x = 3\ny = 2\nx = 3\n\nx = 3\n"
    await tools.ok("edit_file", path="c.py", old_text="y = 2\n", new_text="")  # deleting works too
    assert (workspace / "c.py").read_text() == "x = 3\nx = 3\n\nx = 3\n"


async def test_edit_refuses_a_file_changed_since_read(tools: Tools, workspace: Path) -> None:
    put(workspace, "m.py", "a = 1\n")
    await tools.ok("read_file", path="m.py")
    put(workspace, "m.py", "a = 1\nb = 2\n")  # changed by someone else
    text = await tools.fail("edit_file", path="m.py", old_text="a = 1", new_text="a = 9")
    assert "m.py changed on disk since you last read it" in text
    assert (workspace / "m.py").read_text() == "a = 1\nb = 2\n"
    os.utime(workspace / "m.py", ns=(1, 1))  # touched only: the content is what was read
    await tools.ok("read_file", path="m.py")
    os.utime(workspace / "m.py")
    await tools.ok("edit_file", path="m.py", old_text="a = 1", new_text="a = 9")
    await tools.ok("edit_file", path="m.py", old_text="b = 2", new_text="b = 8")  # own edits are known


async def test_edit_crlf_file_and_keeps_mode(tools: Tools, workspace: Path) -> None:
    path = put(workspace, "win.txt", b"one\r\ntwo\r\nthree\r\n")
    path.chmod(0o750)
    text = await tools.ok("edit_file", path="win.txt", old_text="one\ntwo", new_text="one\n2")
    assert "CRLF" in text
    assert path.read_bytes() == b"one\r\n2\r\nthree\r\n" and stat.S_IMODE(path.stat().st_mode) == 0o750


async def test_edit_file_with_mixed_line_endings(tools: Tools, workspace: Path) -> None:
    # read_file shows lines without their endings, so the model cannot copy a CR; the edit matches anyway
    path = put(workspace, "mixed.txt", b"keep\r\nalpha\r\nbeta\ngamma\r\nend\n")
    text = await tools.ok("edit_file", path="mixed.txt", old_text="alpha\nbeta\ngamma", new_text="A\nB")
    assert "mixed CRLF and LF line endings" in text
    assert path.read_bytes() == b"keep\r\nA\r\nB\r\nend\n"
    # and old_text sent with CRLF matches a file with LF endings
    path = put(workspace, "unix.txt", b"one\ntwo\nthree\n")
    await tools.ok("edit_file", path="unix.txt", old_text="one\r\ntwo", new_text="1\r\n2")
    assert path.read_bytes() == b"1\n2\nthree\n"


async def test_edit_file_across_unicode_normalization(tools: Tools, workspace: Path) -> None:
    import unicodedata

    path = put(workspace, "menu.txt", unicodedata.normalize("NFD", "café crème\nthé\n"))
    text = await tools.ok("edit_file", path="menu.txt", old_text="café crème", new_text="café noir")
    assert "normalization form NFD" in text
    assert path.read_text() == unicodedata.normalize("NFD", "café noir\nthé\n")


def test_closest_region_in_a_big_file() -> None:
    lines = [f"value_{i} = compute({i})" for i in range(20_000)]
    lines[12_345] = "    if token is None:"
    lines[12_346] = "        raise Unauthorized()"
    region = closest_region("\n".join(lines), "if token is None:\n    raise Unauthorised()")
    assert region is not None and (region.first, region.last) == (12_346, 12_347)


# --- ls, glob, grep -------------------------------------------------------------------------


def make_tree(root: Path) -> None:
    put(root, ".gitignore", "build/\n*.log\n!keep.log\n")
    put(root, ".git/HEAD", "ref: refs/heads/main\n")
    put(root, "README.md", "# Demo\nTODO: write docs\n")
    put(root, "src/app.py", "import os\n\ndef main():\n    # TODO: parse args\n    return os.getcwd()\n")
    put(root, "src/util.ts", "export const todo = 1;\n")
    put(root, "src/view.tsx", "// TODO: render\n")
    put(root, "src/.gitignore", "generated/\n")
    put(root, "src/generated/out.py", "# TODO generated\n")
    put(root, "build/lib.py", "# TODO built\n")
    put(root, "debug.log", "TODO in a log\n")
    put(root, "keep.log", "TODO kept\n")
    put(root, "data.bin", b"\x00TODO\x00")


async def test_ls_sorted_with_sizes_and_ignored_note(tools: Tools, workspace: Path) -> None:
    make_tree(workspace)
    text = await tools.ok("ls")
    assert text.splitlines()[:2] == ["src/", ".gitignore  (23 B)"]
    assert "README.md  (24 B)" in text and "keep.log" in text
    assert "build/" not in text.splitlines() and "debug.log  (" not in text
    assert "[3 ignored entries not shown (.git or .gitignore): " in text
    assert "app.py" in await tools.ok("ls", path="src")
    assert "lib.py" in await tools.ok("ls", path="build")  # an ignored folder named explicitly
    assert "README.md is a file (24 B); read it with read_file" in await tools.ok("ls", path="README.md")
    assert "did you mean src?" in await tools.fail("ls", path="scr")
    put(workspace, "empty/.keep", "")
    (workspace / "empty/.keep").unlink()
    assert (await tools.fail("ls", path="empty")).startswith("Error: empty is an empty folder")


async def test_ls_caps_long_listings(tools: Tools, workspace: Path) -> None:
    for i in range(LS_CAP + 12):
        put(workspace, f"many/f{i:04}.txt", "")
    text = await tools.ok("ls", path="many")
    assert text.count("\n") == LS_CAP and text.endswith("[12 more entries not shown; use glob to narrow down]")


async def test_glob_patterns(tools: Tools, workspace: Path) -> None:
    make_tree(workspace)
    assert await tools.ok("glob", pattern="*.py") == "src/app.py"
    assert await tools.ok("glob", pattern="src/*.{ts,tsx}") == "src/util.ts\nsrc/view.tsx"
    assert await tools.ok("glob", pattern="**/*.log") == "keep.log"
    assert await tools.ok("glob", pattern="*.py", path="src") == "src/app.py"
    assert await tools.ok("glob", pattern=f"{workspace}/src/*.py") == "src/app.py"
    assert await tools.ok("glob", pattern="[RS]*") == "README.md"
    assert await tools.ok("glob", pattern="*.py", path="build") == "build/lib.py"
    text = await tools.fail("glob", pattern="lib.*")
    assert text.startswith("Error: the glob 'lib.*' matched no file in the workspace; the workspace holds ")
    assert "; 1 ignored file would match, e.g. build/lib.py" in text
    assert "HEAD" not in await tools.ok("glob", pattern="**/*")


async def test_glob_caps_and_sorts(tools: Tools, workspace: Path) -> None:
    for i in reversed(range(GLOB_CAP + 5)):
        put(workspace, f"d{i % 3}/n{i:04}.md", "")
    lines = (await tools.ok("glob", pattern="**/*.md")).splitlines()
    assert lines[:-1] == sorted(lines[:-1]) and len(lines) == GLOB_CAP + 1
    assert lines[-1] == "[5 more files match; narrow the pattern or the path]"


def test_glob_regex_semantics() -> None:
    assert glob_regex("**/*.py").match("a/b/c.py") and glob_regex("**/*.py").match("c.py")
    assert not glob_regex("src/*.py").match("src/a/b.py")
    assert glob_regex("src/**").match("src/a/b.py")
    assert glob_regex("*.{js,jsx}").match("x.jsx") and not glob_regex("*.{js,jsx}").match("x.ts")
    assert glob_regex("[!a]?.txt").match("bc.txt") and not glob_regex("[!a]?.txt").match("ab.txt")


async def test_grep_finds_sorted_lines_and_skips_ignored_and_binary(tools: Tools, workspace: Path) -> None:
    make_tree(workspace)
    text = await tools.ok("grep", pattern="TODO")
    assert text.splitlines()[:4] == [
        "README.md:2:TODO: write docs",
        "keep.log:1:TODO kept",
        "src/app.py:4:    # TODO: parse args",
        "src/view.tsx:1:// TODO: render",
    ]
    for hidden in ["build/lib.py", "debug.log", "generated", "data.bin", ".git"]:
        assert f"{hidden}:" not in text
    assert await tools.ok("grep", pattern="TODO", glob="*.py") == "src/app.py:4:    # TODO: parse args"
    assert await tools.ok("grep", pattern="(?i)todo", glob="*.ts") == "src/util.ts:1:export const todo = 1;"
    assert await tools.ok("grep", pattern="^def ", path="src/app.py") == "src/app.py:3:def main():"
    assert "src/generated/out.py:1:# TODO generated" in await tools.ok("grep", pattern="TODO", path="src/generated")
    text = await tools.ok("grep", pattern="Parse")
    assert "no matches for 'Parse' in the workspace" in text and "(?i)" in text
    assert "1 binary file not searched" in text  # data.bin
    assert "binary file" in await tools.fail("grep", pattern="x", path="data.bin")


async def test_grep_bad_regex_and_caps(tools: Tools, workspace: Path) -> None:
    text = await tools.fail("grep", pattern="foo(bar")
    assert "invalid regular expression 'foo(bar': missing ), unterminated subpattern at position 3" in text
    assert r"'foo\('" in text
    put(workspace, "long.txt", "".join(f"hit {i} " + "y" * 400 + "\n" for i in range(GREP_CAP + 30)))
    text = await tools.ok("grep", pattern="hit")
    lines = text.splitlines()
    assert 50 < len(lines) < GREP_CAP and lines[0].startswith("long.txt:1:hit 0 yyy") and lines[0].endswith("…")
    assert lines[-1].startswith(f"[{GREP_CAP + 30 - len(lines) + 1} more matching lines not shown (230 in 1 file)")
    put(workspace, "long.txt", "".join(f"hit {i}\n" for i in range(GREP_CAP + 30)))
    lines = (await tools.ok("grep", pattern="hit")).splitlines()
    assert len(lines) == GREP_CAP + 1 and lines[-1].startswith("[30 more matching lines not shown")


# --- scenarios through the scripted model -----------------------------------------------------


def last_tool_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "tool")


def edit_from_read(body: dict[str, Any]) -> dict[str, Any]:
    """A model that copies the exact block from the read_file output it was just given."""
    text = last_tool_text(body)
    lines = [m.group(1) for x in text.splitlines() if (m := re.match(r"^\s*\d+\t(.*)$", x))]
    at = next(i for i, x in enumerate(lines) if 'if password == ""' in x)
    old = "\n".join(lines[at : at + 3])
    return reply(
        "The file uses tabs; editing the exact lines.",
        call("edit_file", path="auth.go", old_text=old, new_text=old.replace("return true", "return false")),
    )


async def test_scenario_edit_trap(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    scripted_model.add(
        reply("Fixing it.", call("edit_file", path="auth.go", old_text=SPACES_OLD, new_text=SPACES_NEW)),
        reply("That did not match; re-reading.", call("read_file", path="auth.go")),
        edit_from_read,
        reply("CheckLogin now rejects empty passwords."),
    )
    run = await run_agent(settings, "make CheckLogin reject empty passwords", FILE_TOOLS)
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    first_edit = last_tool_text(scripted_model.requests[1])
    assert (
        "old_text not found in auth.go (you have not read it in this session: its whole current text is " in first_edit
    )
    assert "The closest region is lines 5-7" in first_edit
    assert "re-read the file" in first_edit
    assert last_tool_text(scripted_model.requests[3]).startswith("edited auth.go: replaced 1 occurrence")
    assert (workspace / "auth.go").read_text() == AUTH_GO_FIXED
    finished = [r for r in run.results() if r.name == "edit_file" and not r.is_error]
    assert "-\t\treturn true" in finished[0].metadata["diff"]


async def test_scenario_misspelled_path(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    put(workspace, "src/auth.py", "def login(): ...\n")
    scripted_model.add(
        reply("", call("read_file", path="src/auht.py")), reply("", call("read_file", path="src/auth.py")), reply("ok")
    )
    await run_agent(settings, "read the auth module", FILE_TOOLS)
    assert "did you mean src/auth.py?" in last_tool_text(scripted_model.requests[1])
    assert "def login" in last_tool_text(scripted_model.requests[2])


async def test_scenario_escapes_refused(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path, outside: Path
) -> None:
    (workspace / "etc").symlink_to("/etc")
    (workspace / "out").symlink_to(outside)
    scripted_model.add(
        reply(
            "",
            call("read_file", path="../../etc/passwd"),
            call("read_file", path="etc/passwd"),
            call("write_file", path="out/planted.txt", content="x"),
            call("read_file", path="out/secret.txt"),
        ),
        reply("I cannot leave the workspace."),
    )
    await run_agent(settings, "show me /etc/passwd", FILE_TOOLS)
    texts = [m["content"] for m in scripted_model.requests[1]["messages"] if m["role"] == "tool"]
    assert len(texts) == 4
    for text in texts:
        assert "Refused" in text and str(workspace.resolve()) in text
        assert "root:" not in text and "canary" not in text
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_scenario_parallel_edits_of_two_files(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    put(workspace, "a.py", "A = 1\n")
    put(workspace, "b.py", "B = 1\n")
    scripted_model.add(
        reply(
            "",
            call("edit_file", path="a.py", old_text="A = 1", new_text="A = 2"),
            call("edit_file", path="b.py", old_text="B = 1", new_text="B = 2"),
        ),
        reply("both done"),
    )
    run = await run_agent(settings, "bump both", FILE_TOOLS)
    assert [r.is_error for r in run.results()] == [False, False]
    assert (workspace / "a.py").read_text() == "A = 2\n" and (workspace / "b.py").read_text() == "B = 2\n"


async def test_demo_model_plays_the_edit_trap(tmp_path: Path, workspace: Path) -> None:
    settings = Settings(model="demo", workspace=workspace, data_dir=tmp_path / "data")
    run = await run_agent(settings, "fix the login check in auth.go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED
    edits = [r for r in run.results() if r.name == "edit_file"]
    assert [e.is_error for e in edits] == [True, False]
    assert "The closest region is lines" in edits[0].error
    assert 'if password == "" {\n\t\treturn false' in (workspace / "auth.go").read_text()


# --- special files: a FIFO or a device never hangs a tool -----------------------------------


@pytest.mark.timeout(20)
async def test_fifo_in_the_workspace_is_refused_not_waited_on(tools: Tools, workspace: Path) -> None:
    put(workspace, "src/a.py", "needle = 1\n")
    os.mkfifo(workspace / "src" / "pipe")
    for name, args in [
        ("read_file", {"path": "src/pipe"}),
        ("write_file", {"path": "src/pipe", "content": "x"}),
        ("edit_file", {"path": "src/pipe", "old_text": "a", "new_text": "b"}),
    ]:
        text = await tools.fail(name, **args)
        assert "src/pipe is a FIFO (named pipe), not a regular file" in text, (name, text)
    assert stat.S_ISFIFO(os.lstat(workspace / "src" / "pipe").st_mode)  # not replaced by write_file
    text = await tools.ok("grep", pattern="needle")
    assert "src/a.py:1:needle = 1" in text


@pytest.mark.timeout(20)
async def test_gitignore_symlinked_to_a_device_or_fifo_does_not_hang(tools: Tools, workspace: Path) -> None:
    put(workspace, "a.txt", "hello\n")
    os.symlink("/dev/zero", workspace / ".gitignore")
    put(workspace, "sub/b.txt", "hello\n")
    os.mkfifo(workspace / "sub" / ".gitignore")
    assert "a.txt" in await tools.ok("ls")
    assert await tools.ok("glob", pattern="*.txt") == "a.txt\nsub/b.txt"
    assert "sub/b.txt:1:hello" in await tools.ok("grep", pattern="hello")


async def test_symlink_loop_in_the_tree_does_not_break_listing_or_search(tools: Tools, workspace: Path) -> None:
    put(workspace, "a.txt", "hello\n")
    os.symlink("loop2", workspace / "loop1")
    os.symlink("loop1", workspace / "loop2")
    text = await tools.ok("ls")
    assert "a.txt" in text and "loop1 -> loop2 (broken)" in text
    assert await tools.ok("glob", pattern="*.txt") == "a.txt"
    assert await tools.ok("grep", pattern="hello") == "a.txt:1:hello"
    assert "Too many levels of symbolic links" in await tools.fail("read_file", path="loop1")


async def test_lone_surrogate_or_overlong_name_in_a_path_is_feedback(tools: Tools) -> None:
    for name, args in [
        ("read_file", {"path": "a\ud800b"}),
        ("write_file", {"path": "a\ud800b", "content": "x"}),
        ("ls", {"path": "a\ud800b"}),
    ]:
        assert "a lone surrogate" in await tools.fail(name, **args), name
    for name, args in [
        ("read_file", {"path": "a" * 300}),
        ("write_file", {"path": "a" * 300 + "/b.txt", "content": "x"}),
        ("edit_file", {"path": "src/" + "a" * 300, "old_text": "x", "new_text": "y"}),
    ]:
        assert "file names have at most 255 bytes" in await tools.fail(name, **args), name


async def test_nul_in_a_path_is_feedback_not_a_defect(tools: Tools) -> None:
    for name, args in [
        ("read_file", {"path": "a\x00b"}),
        ("write_file", {"path": "a\x00b", "content": "x"}),
        ("ls", {"path": "a\x00b"}),
        ("glob", {"pattern": "*", "path": "a\x00b"}),
        ("grep", {"pattern": "x", "path": "a\x00b"}),
    ]:
        result = await tools.result(name, **args)
        assert result.is_error and "contains a NUL character" in model_text(result), name


# --- grep: a catastrophic pattern is bounded in time and never freezes the process -----------


@pytest.mark.slow
@pytest.mark.timeout(60)
async def test_grep_catastrophic_pattern_is_stopped_and_the_loop_keeps_running(
    tools: Tools, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from workbench.tools.files import grep

    monkeypatch.setattr(grep, "GREP_MATCH_SECONDS", 0.3)
    put(workspace, "src/long.txt", "a" * 36 + "b\n")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        text = await tools.fail("grep", pattern=r"(a|aa)+$")
        assert "took longer than 0.3 s" in text and "src/long.txt" in text and "backtracks catastrophically" in text
        assert "took longer than 0.3 s" in await tools.fail("grep", pattern=r"(a|aa)+$", path="src/long.txt")
    finally:
        ticker.cancel()
    assert ticks >= 10  # the event loop ran while the pattern was searched (the GIL was released)
    assert await tools.ok("grep", pattern=r"a+b$") == "src/long.txt:1:" + "a" * 36 + "b"


# --- a huge file is refused by the tools that would hold it in memory ------------------------


async def test_huge_file_is_refused_not_loaded(tools: Tools, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.tools.files import grep, listing
    from workbench.tools.files import read_write as files

    for module in (files, grep, listing):
        monkeypatch.setattr(module, "FILE_MAX_BYTES", 100_000)
    put(workspace, "small.log", "needle\n")
    put(workspace, "big.log", "needle in a line\n" * 10_000)  # 170 KB, over the (lowered) limit
    for name, args in [
        ("read_file", {"path": "big.log"}),
        ("edit_file", {"path": "big.log", "old_text": "needle", "new_text": "pin", "replace_all": True}),
        ("grep", {"pattern": "needle", "path": "big.log"}),
    ]:
        text = await tools.fail(name, **args)
        assert "big.log is too large" in text and "bash" in text, (name, text)
    text = await tools.ok("grep", pattern="needle")
    assert text.splitlines() == ["small.log:1:needle", "[1 file over 97.7 KB not searched (use grep in bash)]"]
    assert (workspace / "big.log").read_text().count("needle") == 10_000
    assert "(replaced 170,000 bytes)" in await tools.ok("write_file", path="big.log", content="short\n")
    assert (workspace / "big.log").read_text() == "short\n"


async def test_ls_of_many_symlinks_lists_the_skills_once(
    tools: Tools, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # node_modules/.bin holds hundreds of symlinks; each one must not re-read every SKILL.md
    from workbench.tools import skills

    put(workspace, "node_modules/pkg/cli.js", "")
    for i in range(200):
        os.symlink("../pkg/cli.js", workspace / "node_modules" / f"tool{i}")
    calls = 0
    real_discover = skills.discover

    def counting(settings: Settings) -> Any:
        nonlocal calls
        calls += 1
        return real_discover(settings)

    monkeypatch.setattr(skills, "discover", counting)
    text = await tools.ok("ls", path="node_modules")
    assert "tool199 -> ../pkg/cli.js" in text
    assert calls <= 2


@pytest.mark.timeout(30)
async def test_glob_with_many_stars_takes_linear_time(tools: Tools, workspace: Path) -> None:
    import time

    put(workspace, "a" * 120, "")
    put(workspace, "deep/" + "/".join(["d"] * 40) + "/y.txt", "")
    started = time.monotonic()
    assert "matched no file" in await tools.fail("glob", pattern="*a*a*a*a*a*a*a*a*b")
    assert "matched no file" in await tools.fail("glob", pattern="**/**/**/**/**/**/**/**/x.txt")
    assert await tools.ok("glob", pattern="*a*a*a*a*a*a*a*a*a") == "a" * 120
    assert time.monotonic() - started < 5


@pytest.mark.timeout(30)
async def test_hostile_gitignore_pattern_does_not_stall_listing(tools: Tools, workspace: Path) -> None:
    import time

    put(workspace, ".gitignore", "*a*a*a*a*a*a*a*a*b\nbuild*out*\n")
    put(workspace, "a" * 150, "x\n")
    put(workspace, "build-x-out.txt", "x\n")
    put(workspace, "keep.txt", "x\n")
    started = time.monotonic()
    assert "build-x-out.txt  (" not in await tools.ok("ls")  # ignored: only named in the note
    assert await tools.ok("glob", pattern="*") == f".gitignore\n{'a' * 150}\nkeep.txt"
    assert "keep.txt:1:x" in await tools.ok("grep", pattern="x")
    assert time.monotonic() - started < 5


async def test_write_and_edit_a_file_with_a_long_name(tools: Tools, workspace: Path) -> None:
    name = "n" * 250 + ".txt"  # 254 bytes: a valid name, but not with a temporary prefix and suffix around it
    await tools.ok("write_file", path=name, content="one\n")
    await tools.ok("edit_file", path=name, old_text="one", new_text="two")
    assert (workspace / name).read_text() == "two\n"
    assert sorted(p.name for p in workspace.iterdir()) == [name]  # no temporary file left behind
