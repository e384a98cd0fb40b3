"""Failures that point at the code (workbench/tools/code_refs.py): a failed command's traceback or
test failure names the workspace's files and lines with the line's text and a ready read_file call;
"No module named X" says what it means."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.tools.code_refs import places, pointers

SLUG = "def slug(title):\n    return title.lower()\n"
CHECK = 'from slug import slug\n\nassert slug("A B") == "a-b", slug("A B")\n'


def workspace_with(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_python_pytest_node_and_go_places(tmp_path: Path) -> None:
    ws = workspace_with(tmp_path, {"check.py": CHECK, "src/app.js": "a\nb\nthrow x\n", "m.go": "package m\nx :=\n"})
    python = (
        'Traceback (most recent call last):\n  File "/usr/lib/python3/runpy.py", line 9, in run\n'
        f'  File "{ws}/check.py", line 3, in <module>\nAssertionError: a b\n'
    )
    assert places(python, ws) == [("check.py", 3, 'assert slug("A B") == "a-b", slug("A B")')]
    assert places("check.py:3: AssertionError\n", ws) == [("check.py", 3, 'assert slug("A B") == "a-b", slug("A B")')]
    assert places("    at Object.<anonymous> (src/app.js:3:7)\n", ws) == [("src/app.js", 3, "throw x")]
    assert places("./m.go:2:3: syntax error\n", ws) == [("m.go", 2, "x :=")]
    assert places("nothing.py:4: gone\n/etc/passwd.py:1\n", ws) == []


def test_the_note_gives_the_ready_read_call_and_says_what_a_missing_module_is(tmp_path: Path) -> None:
    ws = workspace_with(tmp_path, {"lib/slug.py": SLUG})
    (note,) = pointers('  File "lib/slug.py", line 2, in slug\n', ws)
    assert note == (
        "the output points at lib/slug.py line 2: `return title.lower()` (read it: "
        '{"name": "read_file", "arguments": {"path": "lib/slug.py", "offset": 1, "limit": 20}})'
    )
    (note,) = pointers("ModuleNotFoundError: No module named 'slug'\n", ws)
    assert note == (
        "No module named 'slug': Python cannot find a module the code imports; lib/slug.py is in the "
        "workspace: run the command from that file's folder or fix the import"
    )
    assert pointers("ModuleNotFoundError: No module named 'yaml'\n", ws) == [
        "No module named 'yaml': Python cannot find a module the code imports; install the package that "
        "provides it only if it is a published package"
    ]


@pytest.mark.tmux
async def test_a_failed_check_names_the_line_above_its_output(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    workspace_with(workspace, {"slug.py": SLUG, "check.py": CHECK})
    # the system python3: a venv under /tmp (a clone there, as CI's may be) is hidden by the sandbox's /tmp
    scripted_model.add(reply("", call("bash", command="python3 check.py")), reply("It fails."))
    run = await run_agent(settings, "Run check.py.", ["bash"])
    (result,) = run.results()
    assert result.is_error and result.error.startswith("exit code 1; the output points at check.py line 3: ")
    assert '"path": "check.py", "offset": 1' in result.error and "AssertionError" in result.output
