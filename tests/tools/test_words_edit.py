"""The texts edit_file gives the model, pinned whole (issue 36 item 8): the diff of an edit and how
old_text matched when not exactly, and each failure: old_text not found (in a file read or not
read, small or large, the closest region and what differs there, the exact lines to send), not
unique, empty, the same as new_text, a file changed since read. Real calls on a real workspace;
a change of wording is a reviewed diff (`pytest --inline-snapshot=review`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inline_snapshot import snapshot

from tests.words import said, tool_ctx
from workbench.tools.registry import Toolbox, ToolContext

BOX = Toolbox()
AUTH = 'package auth\n\nfunc Check(user string, password string) bool {\n\tif password == "" {\n\t\treturn false\n\t}\n\treturn user != ""\n}\n'


@pytest.fixture
def ctx(workspace: Path, tmp_path: Path) -> ToolContext:
    (workspace / "auth.go").write_text(AUTH)
    (workspace / "big.py").write_text("".join(f"def f{i}():\n    return {i}\n\n" for i in range(60)))
    return tool_ctx(workspace, tmp_path)


async def edit(ctx: ToolContext, old: str, new: str, path: str = "auth.go", **more: object) -> str:
    return await said(BOX, ctx, "edit_file", {"path": path, "old_text": old, "new_text": new, **more})


async def read_afresh(ctx: ToolContext) -> None:
    """auth.go as AUTH again, read by the agent (an edit is checked against what it last read)."""
    (ctx.workspace / "auth.go").write_text(AUTH)
    await said(BOX, ctx, "read_file", {"path": "auth.go"})


async def test_an_edit_and_how_it_matched(ctx: ToolContext) -> None:
    assert await edit(ctx, 'return user != ""', "return len(user) > 0") == snapshot("""\
edited auth.go: replaced 1 occurrence at line 7
--- a/auth.go
+++ b/auth.go
@@ -4,5 +4,5 @@
 	if password == "" {
 		return false
 	}
-	return user != ""
+	return len(user) > 0
 }\
""")
    assert await edit(ctx, "\treturn", "\treturn /* checked */", replace_all=True) == snapshot("""\
edited auth.go: replaced 2 occurrences at lines 5, 7
--- a/auth.go
+++ b/auth.go
@@ -2,7 +2,7 @@
 \n\
 func Check(user string, password string) bool {
 	if password == "" {
-		return false
+		return /* checked */ false
 	}
-	return len(user) > 0
+	return /* checked */ len(user) > 0
 }\
""")
    await read_afresh(ctx)
    indented = 'if password == "" {\n    return false\n}'
    assert await edit(ctx, indented, indented.replace("false", "true")) == snapshot("""\
edited auth.go: replaced 1 occurrence at line 4 (matched ignoring indentation: the file indents with tabs where old_text uses 4 spaces per level; old_text's lines are indented with one more tab in the file; new_text was re-indented the same way)
--- a/auth.go
+++ b/auth.go
@@ -2,7 +2,7 @@
 \n\
 func Check(user string, password string) bool {
 	if password == "" {
-		return false
+		return true
 	}
 	return user != ""
 }\
""")
    (ctx.workspace / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert await edit(ctx, "one\ntwo", "one\n2", path="win.txt") == snapshot("""\
edited win.txt: replaced 1 occurrence at line 1 (matched with the file's CRLF line endings)
--- a/win.txt
+++ b/win.txt
@@ -1,2 +1,2 @@
 one\r
-two\r
+2\r\
""")


async def test_old_text_not_found_in_a_small_file_not_read(ctx: ToolContext) -> None:
    assert await edit(ctx, "if pass == nil {", "if password == nil {") == snapshot("""\
auth.go as it is now (all 8 lines):
     1	package auth
     2	
     3	func Check(user string, password string) bool {
     4		if password == "" {
     5			return false
     6		}
     7		return user != ""
     8	}
Error: old_text not found in auth.go (you have not read it in this session: its whole current text is shown above). The closest region is lines 4-4 (74% similar), shown above: these lines of old_text are not there: 'if pass == nil {'. The file's lines there are exactly (escaped as inside a JSON string, on the next line):
\\tif password == \\"\\" {
If they are the text you mean to change, send them as old_text; else re-read the file with read_file(path='auth.go').\
""")


async def test_old_text_not_found_in_a_file_read(ctx: ToolContext) -> None:
    await read_afresh(ctx)
    assert await edit(ctx, "func Check(user string, pw string) bool {", "x") == snapshot("""\
auth.go, lines 3-3 as they are now:
     3	func Check(user string, password string) bool {
Error: old_text not found in auth.go. The closest region is lines 3-3 (93% similar), shown above: these lines of old_text are not there: 'func Check(user string, pw string) bool {'. The file's lines there are exactly (escaped as inside a JSON string, on the next line):
func Check(user string, password string) bool {
If they are the text you mean to change, send them as old_text; else re-read the file with read_file(path='auth.go').\
""")
    assert await edit(ctx, '\tif password == "" {`\n\t\treturn false', "x") == snapshot("""\
auth.go, lines 4-5 as they are now:
     4		if password == "" {
     5			return false
Error: old_text not found in auth.go. The closest region is lines 4-5 (98% similar), shown above: old_text line 'if password == "" {`' has a stray '`' at its end; the file's line is 'if password == "" {'. Those lines are exactly (escaped as inside a JSON string, on the next line):
\\tif password == \\"\\" {\\n\\t\\treturn false
Send that as old_text, and indent new_text the same way.\
""")
    assert await edit(ctx, '     4\tif password == "" {', "x") == snapshot(
        "Error: old_text not found in auth.go: it starts its lines with read_file's line numbers (like '     4\\tif pa'); those are not part of the file. Re-read the file with read_file(path='auth.go') and copy old_text exactly from it (without the line-number prefix) before editing again."
    )
    assert await edit(ctx, "the function that checks the password", "x") == snapshot(
        "Error: old_text not found in auth.go, and no part of the file resembles it; check that this is the file you mean and that old_text is text from it, not a summary or a placeholder. Re-read the file with read_file(path='auth.go') and copy old_text exactly from it (without the line-number prefix) before editing again."
    )
    spaced = 'func Check(user string,  password string) bool {\n\tif password == "" {'
    assert await edit(ctx, spaced, "x") == snapshot("""\
auth.go, lines 3-4 as they are now:
     3	func Check(user string, password string) bool {
     4		if password == "" {
Error: old_text not found in auth.go. The closest region is lines 3-4 (100% similar), shown above: it differs from old_text only in whitespace. Those lines are exactly (escaped as inside a JSON string, on the next line):
func Check(user string, password string) bool {\\n\\tif password == \\"\\" {
Send that as old_text, and indent new_text the same way.\
""")
    several = 'func Check(user string, password string) bool {\n    if password == "" {\n\t\treturn nil\n\t}\n\treturn ok\n\tlog()\n\tdone()\n}'
    assert await edit(ctx, several, "x") == snapshot("""\
auth.go, lines 3-8 as they are now:
     3	func Check(user string, password string) bool {
     4		if password == "" {
     5			return false
     6		}
     7		return user != ""
     8	}
Error: old_text not found in auth.go. The closest region is lines 3-8 (86% similar), shown above: the file indents with tabs where old_text uses spaces; these lines of old_text are not there: 'return nil'; 'return ok'; 'log()' and 1 more. Re-read the file with read_file(path='auth.go') and copy old_text exactly from it (without the line-number prefix) before editing again.\
""")


async def test_old_text_not_found_in_a_large_file_not_read(ctx: ToolContext) -> None:
    assert await edit(ctx, "def f30():\n    return 31", "x", path="big.py") == snapshot("""\
big.py, lines 91-92 as they are now:
    91	def f30():
    92	    return 30
Error: old_text not found in big.py (you have not read it in this session: read it with read_file(path="big.py", offset=81, limit=22)). The closest region is lines 91-92 (95% similar), shown above: these lines of old_text are not there: 'return 31'. The file's lines there are exactly (escaped as inside a JSON string, on the next line):
def f30():\\n    return 30
If they are the text you mean to change, send them as old_text; else re-read the file with read_file(path='big.py').\
""")
    assert await edit(ctx, "class Nothing:\n    pass", "x", path="big.py") == snapshot("""\
big.py, lines 1-14 (nearest old_text's first line):
     1	def f0():
     2	    return 0
     3	
     4	def f1():
     5	    return 1
     6	
     7	def f2():
     8	    return 2
     9	
    10	def f3():
    11	    return 3
    12	
    13	def f4():
    14	    return 4
Error: old_text not found in big.py, and no part of the file resembles it; check that this is the file you mean and that old_text is text from it, not a summary or a placeholder. You have not read big.py in this session (180 lines). Read the part you mean to change with read_file(path="big.py", offset=1, limit=14) and copy old_text exactly from it (without the line-number prefix).\
""")


async def test_other_refusals(ctx: ToolContext) -> None:
    assert await edit(ctx, "\treturn", "\treturn /* checked */") == snapshot(
        "Error: old_text occurs 2 times in auth.go, at lines 5, 7; include more surrounding lines in old_text so it matches exactly once, or set replace_all=true to replace all 2"
    )
    assert await edit(ctx, "", "x") == snapshot(
        "Error: old_text is empty; to create or overwrite a whole file use write_file, to insert text include a neighbouring line in old_text and in new_text"
    )
    assert await edit(ctx, "package auth", "package auth") == snapshot(
        "Error: old_text and new_text are the same, so there is nothing to change"
    )
    assert await edit(ctx, "x", "y", path="auth.og") == snapshot(
        'Error: auth.og does not exist; did you mean auth.go? Send edit_file(path="auth.go", old_text="x", new_text="y")'
    )
    await read_afresh(ctx)
    (ctx.workspace / "auth.go").write_text(AUTH.replace("auth", "login"))
    assert await edit(ctx, "package login", "package auth") == snapshot(
        "Error: auth.go changed on disk since you last read it (by another program, a command you ran, or another agent); re-read it with read_file(path='auth.go') and base your change on its current content"
    )
