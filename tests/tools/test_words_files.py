"""The texts the file tools give the model, pinned whole (issue 36 item 8): read_file's pages and
their notes, write_file's results, ls, glob and grep with what they found or why they found
nothing, and the path errors (missing with did-you-mean, outside the workspace, a folder for a file,
binary, not UTF-8, too long, NUL). Each is a real call on a real workspace in tmp_path, the folders
written `<ws>` and `<tmp>`; a change of wording is a reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inline_snapshot import snapshot

from tests.words import said, tool_ctx
from workbench.tools.registry import Toolbox, ToolContext


@pytest.fixture
def ctx(workspace: Path, tmp_path: Path) -> ToolContext:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\n\n\ndef main():\n    print('hi')\n")
    (workspace / "src" / "util.py").write_text("def helper():\n    return 1\n")
    (workspace / "README.md").write_text("# Demo\n\nA demo project.\n")
    (workspace / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    return tool_ctx(workspace, tmp_path)


BOX = Toolbox()


async def test_read_file(ctx: ToolContext) -> None:
    assert await said(BOX, ctx, "read_file", {"path": "src/app.py"}) == snapshot("""\
     1	import os
     2	
     3	
     4	def main():
     5	    print('hi')\
""")
    assert await said(BOX, ctx, "read_file", {"path": "notes.txt", "offset": 5, "limit": 3}) == snapshot("""\
     5	line 5
     6	line 6
     7	line 7
[lines 5-7 of 30 shown; read on with read_file(path='notes.txt', offset=8)]\
""")
    assert await said(BOX, ctx, "read_file", {"path": "notes.txt", "offset": -2}) == snapshot("""\
    29	line 29
    30	line 30\
""")
    assert await said(BOX, ctx, "read_file", {"path": "notes.txt", "offset": 40}) == snapshot(
        "Error: offset 40 is past the end of notes.txt, which has 30 lines; use an offset from 1 to 30"
    )
    assert await said(BOX, ctx, "read_file", {"path": "notes.txt", "limit": 0}) == snapshot(
        "Error: limit must be at least 1 (a number of lines), got 0"
    )
    (ctx.workspace / "empty.txt").write_text("")
    assert await said(BOX, ctx, "read_file", {"path": "empty.txt"}) == snapshot("(empty.txt is empty: 0 lines)")
    (ctx.workspace / "wide.txt").write_text("x" * 3000 + "\n")
    wide = await said(BOX, ctx, "read_file", {"path": "wide.txt"})
    assert wide.replace("x" * 2000, "<2,000 x>") == snapshot("     1\t<2,000 x>… [line cut: 1,000 more characters]")


async def test_read_file_refusals(ctx: ToolContext) -> None:
    (ctx.workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(40))
    (ctx.workspace / "data.bin").write_bytes(b"ab\x00cd")
    (ctx.workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    assert await said(BOX, ctx, "read_file", {"path": "logo.png"}) == snapshot(
        "Error: logo.png is a PNG image, 48 bytes; read_file shows text only and does not dump binary files. Inspect it with a command instead (for example `file`, `xxd | head`), if you have bash"
    )
    assert await said(BOX, ctx, "read_file", {"path": "data.bin"}) == snapshot(
        "Error: data.bin is binary data (it contains NUL bytes), 5 bytes; read_file shows text only and does not dump binary files. Inspect it with a command instead (for example `file`, `xxd | head`), if you have bash"
    )
    assert await said(BOX, ctx, "read_file", {"path": "latin.txt"}) == snapshot(
        "Error: latin.txt is not valid UTF-8 text: byte 0xe9 at line 1, column 4. It may use another encoding such as Latin-1; convert it with a command (for example `iconv -f latin1 -t utf-8`), if you have bash"
    )
    assert await said(BOX, ctx, "read_file", {"path": "src"}) == snapshot(
        "Error: src is a directory, not a file; list it with ls(path='src')"
    )


async def test_missing_paths_and_what_they_may_have_meant(ctx: ToolContext) -> None:
    assert await said(BOX, ctx, "read_file", {"path": "src/ap.py"}) == snapshot(
        "Error: src/ap.py does not exist; did you mean one of: src/app.py, src/util.py? Send the call again with the one you mean"
    )
    assert await said(BOX, ctx, "read_file", {"path": "app.py"}) == snapshot(
        'Error: app.py does not exist; did you mean src/app.py? Send read_file(path="src/app.py")'
    )
    assert await said(BOX, ctx, "read_file", {"path": "docs/guide.md"}) == snapshot(
        "Error: docs/guide.md does not exist (nor does its folder docs; the nearest existing folder is .); nothing with a similar name exists. Use glob or ls to find the right path."
    )
    assert await said(BOX, ctx, "read_file", {"path": "README.md/x"}) == snapshot(
        "Error: README.md is a file, not a directory, so README.md/x cannot exist inside it; check the path (read_file('README.md') reads that file)"
    )
    assert await said(BOX, ctx, "ls", {"path": "lib"}) == snapshot(
        'Error: lib does not exist; nothing with a similar name exists; the workspace\'s 4 files are at the top level and in src/: README.md, notes.txt, src/app.py, src/util.py; to list the top level, send ls(path=".")'
    )
    assert await said(BOX, ctx, "grep", {"pattern": "def", "path": "source"}) == snapshot(
        'Error: source does not exist; did you mean src? Send grep(pattern="def", path="src")'
    )


async def test_paths_that_are_refused(ctx: ToolContext) -> None:
    os.symlink("/etc", ctx.workspace / "etc-link")
    assert await said(BOX, ctx, "read_file", {"path": "/etc/hostname"}) == snapshot(
        "Error: Refused: '/etc/hostname' resolves to /etc/hostname, outside the workspace <ws>. Use a path inside the workspace (relative paths start there); reading is also allowed in saved tool outputs (<tmp>/session/outputs), skill folders."
    )
    assert await said(BOX, ctx, "read_file", {"path": "../outside.txt"}) == snapshot(
        "Error: Refused: '../outside.txt' resolves to <tmp>/outside.txt, outside the workspace <ws>. Use a path inside the workspace (relative paths start there); reading is also allowed in saved tool outputs (<tmp>/session/outputs), skill folders."
    )
    assert await said(BOX, ctx, "read_file", {"path": "etc-link/hostname"}) == snapshot(
        "Error: Refused: 'etc-link/hostname' goes through the symlink etc-link -> /etc, which leads to /etc/hostname, outside the workspace <ws>. Use a path inside the workspace (relative paths start there); reading is also allowed in saved tool outputs (<tmp>/session/outputs), skill folders."
    )
    assert await said(BOX, ctx, "write_file", {"path": "/tmp/x.txt", "content": "x"}) == snapshot(
        "Error: Refused: '/tmp/x.txt' resolves to /tmp/x.txt, outside the workspace <ws>. Use a path inside the workspace (relative paths start there)."
    )
    assert await said(BOX, ctx, "read_file", {"path": "a\u0000b"}) == snapshot(
        "Error: the path 'a\\x00b' contains a NUL character, which no file name can hold; check the path"
    )
    assert await said(BOX, ctx, "read_file", {"path": "n" * 300}) == snapshot(
        "Error: a name in the path is 300 bytes long ('nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn'…); file names have at most 255 bytes. Use a shorter name"
    )
    assert await said(BOX, ctx, "read_file", {"path": "/".join(["d" * 200] * 30)}) == snapshot(
        "Error: the path is 6,029 bytes long ('dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd'… (shortened: 6,029 characters)); a path has at most 4,096 bytes. Check the path; relative paths start in the workspace"
    )


async def test_write_file(ctx: ToolContext) -> None:
    assert await said(BOX, ctx, "write_file", {"path": "new/dir/a.txt", "content": "one\ntwo\n"}) == snapshot(
        "wrote 8 bytes, 2 lines to new/dir/a.txt (new file, created folder new/dir)"
    )
    assert await said(BOX, ctx, "write_file", {"path": "new/dir/a.txt", "content": "one\ntwo\n"}) == snapshot(
        "new/dir/a.txt unchanged: it already holds exactly this content (8 bytes, 2 lines)"
    )
    assert await said(BOX, ctx, "write_file", {"path": "new/dir/a.txt", "content": "one\n2\n"}) == snapshot(
        "wrote 6 bytes, 2 lines to new/dir/a.txt (replaced 8 bytes)"
    )
    assert await said(BOX, ctx, "write_file", {"path": "src", "content": "x"}) == snapshot(
        "Error: src is a directory; give the path of a file (for example src/file.txt), or ls(path='src')"
    )
    assert await said(BOX, ctx, "write_file", {"path": "README.md/x.txt", "content": "x"}) == snapshot(
        "Error: README.md is a file, not a directory, so README.md/x.txt cannot be created inside it; check the path"
    )
    assert await said(BOX, ctx, "write_file", {"path": "s.txt", "content": "bad \ud800"}) == snapshot(
        "Error: content holds a character that is not valid Unicode text at position 4 ('\\ud800', a lone surrogate); nothing was written. Send valid text"
    )


async def test_write_file_over_a_file_not_read_names_the_lines_it_removed(ctx: ToolContext) -> None:
    (ctx.workspace / "net.toml").write_text('[net]\nhost = "example.org"\ntimeout = 5\n\nretries = 3\n')
    assert await said(BOX, ctx, "write_file", {"path": "net.toml", "content": "[net]\ntimeout = 30\n"}) == snapshot("""\
wrote 19 bytes, 2 lines to net.toml (replaced 52 bytes)
Note: you had not read net.toml; this write removed 3 of its 5 lines, which were:
     2	host = "example.org"
     3	timeout = 5
     5	retries = 3
If any of them should stay, put them back.\
""")
    # read (or written) first: the write's result is the plain one
    assert await said(BOX, ctx, "write_file", {"path": "net.toml", "content": "timeout = 30\n"}) == snapshot(
        "wrote 13 bytes, 1 line to net.toml (replaced 19 bytes)"
    )
    # a write that keeps every line of an unread file says nothing more
    assert await said(
        BOX, ctx, "write_file", {"path": "README.md", "content": "# Demo\n\nA demo project.\nMore.\n"}
    ) == snapshot("wrote 30 bytes, 4 lines to README.md (replaced 24 bytes)")


async def test_write_file_over_a_file_that_changed_since_it_was_read(ctx: ToolContext) -> None:
    await said(BOX, ctx, "read_file", {"path": "README.md"})
    (ctx.workspace / "README.md").write_text("# Changed elsewhere\n")
    assert await said(BOX, ctx, "write_file", {"path": "README.md", "content": "# Mine\n"}) == snapshot(
        "Error: README.md changed on disk since you last read it (by another program, a command you ran, or another agent); re-read it with read_file(path='README.md') and base your change on its current content"
    )


async def test_ls(ctx: ToolContext) -> None:
    (ctx.workspace / ".gitignore").write_text("build/\n")
    (ctx.workspace / "build").mkdir()
    (ctx.workspace / "empty").mkdir()
    assert await said(BOX, ctx, "ls", {}) == snapshot("""\
empty/
src/
.gitignore  (7 B)
notes.txt  (231 B)
README.md  (24 B)
[1 ignored entry not shown (.git or .gitignore): build/; give their path to look inside]\
""")
    assert await said(BOX, ctx, "ls", {"path": "src"}) == snapshot("""\
app.py  (40 B)
util.py  (27 B)\
""")
    assert await said(BOX, ctx, "ls", {"path": "README.md"}) == snapshot(
        "README.md is a file (24 B); read it with read_file(path='README.md')"
    )
    assert await said(BOX, ctx, "ls", {"path": "empty"}) == snapshot(
        "Error: empty is an empty folder: there is nothing in it to list; the workspace's 5 files are at the top level and in src/: .gitignore, README.md, notes.txt, src/app.py, src/util.py"
    )


async def test_glob(ctx: ToolContext) -> None:
    assert await said(BOX, ctx, "glob", {"pattern": "*.py"}) == snapshot("""\
src/app.py
src/util.py\
""")
    assert await said(BOX, ctx, "glob", {"pattern": "*.rs"}) == snapshot(
        "Error: the glob '*.rs' matched no file in the workspace; the workspace holds 2 .py files, 1 .md file, 1 .txt file"
    )
    assert await said(BOX, ctx, "glob", {"pattern": "*.py", "path": "docs"}) == snapshot(
        'Error: docs does not exist; nothing with a similar name exists; the workspace\'s 2 .py files are in src/: src/app.py, src/util.py; to find them, send glob(pattern="*.py", path=".")'
    )
    assert await said(BOX, ctx, "glob", {"pattern": "lib/*.py"}) == snapshot(
        "Error: the glob 'lib/*.py' matched no file in the workspace; the workspace's 2 .py files are in src/: src/app.py, src/util.py; to find them, send glob(pattern=\"*.py\"); a pattern without / matches file names at any depth, with / ** spans folders"
    )
    assert await said(BOX, ctx, "glob", {"pattern": "README.MD"}) == snapshot(
        "Error: the glob 'README.MD' matched no file in the workspace; the workspace holds 2 .py files, 1 .md file, 1 .txt file; did you mean README.md? Read it with read_file(path=\"README.md\")"
    )
    assert await said(BOX, ctx, "glob", {"pattern": "[a"}) == snapshot(
        "Error: the glob '[a' matched no file in the workspace; the workspace holds 2 .py files, 1 .md file, 1 .txt file"
    )


async def test_grep(ctx: ToolContext) -> None:
    assert await said(BOX, ctx, "grep", {"pattern": "def \\w+"}) == snapshot("""\
src/app.py:4:def main():
src/util.py:1:def helper():\
""")
    assert await said(BOX, ctx, "grep", {"pattern": "nowhere"}) == snapshot(
        "no matches for 'nowhere' in the workspace; 4 files searched; the search is case-sensitive (start the pattern with (?i) to ignore case)"
    )
    assert await said(BOX, ctx, "grep", {"pattern": "def", "glob": "*.go"}) == snapshot(
        "Error: the glob '*.go' matched no file in the workspace, so nothing was searched; the workspace holds 2 .py files, 1 .md file, 1 .txt file"
    )
    assert await said(BOX, ctx, "grep", {"pattern": "def", "path": "src", "glob": "*.md"}) == snapshot(
        'Error: the glob \'*.md\' matched no file in src, so nothing was searched; the workspace\'s 1 .md file is at the top level: README.md; to find them, send grep(pattern="def", path=".", glob="*.md")'
    )
    assert await said(BOX, ctx, "grep", {"pattern": "def (unclosed"}) == snapshot(
        "Error: invalid regular expression 'def (unclosed': missing ), unterminated subpattern at position 4. grep takes a Python regex; to match ( ) [ ] { } . * + ? | \\ literally, put a backslash before them (e.g. 'foo\\(')"
    )
    (ctx.workspace / "data.bin").write_bytes(b"ab\x00cd")
    assert await said(BOX, ctx, "grep", {"pattern": "ab", "path": "data.bin"}) == snapshot(
        "Error: data.bin is a binary file; grep searches text files only"
    )
    (ctx.workspace / "many.txt").write_text("hit\n" * 250)
    hits = (await said(BOX, ctx, "grep", {"pattern": "hit", "path": "many.txt"})).splitlines()
    assert (len(hits), hits[-2:]) == snapshot(
        (
            201,
            [
                "many.txt:200:hit",
                "[50 more matching lines not shown (250 in 1 file); narrow the search with path, glob or a more specific pattern]",
            ],
        )
    )
