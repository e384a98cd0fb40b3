"""The file tools against hostile input: paths past PATH_MAX, slow path work kept off the event
loop, a folder swapped for a symlink while the tools run, huge values echoed in errors; and the
recovery fixes of a real model's run (a missing path first, an edit diagnosis that does not mislead,
the diff the TUI shows)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.tools.test_file_tools import AUTH_GO, Tools, put
from workbench.core.feedback import model_text
from workbench.tools.files import edit, grep, listing, paths
from workbench.tools.files import read_write as files

PATH_TOOLS = [
    ("read_file", {}),
    ("write_file", {"content": "x"}),
    ("edit_file", {"old_text": "a", "new_text": "b"}),
    ("ls", {}),
    ("glob", {"pattern": "*"}),
    ("grep", {"pattern": "x"}),
]


@pytest.fixture
def tools(workspace: Path, tmp_path: Path) -> Tools:
    return Tools(workspace, tmp_path)


def deep_folders(root: Path, depth: int) -> str:
    """`depth` nested folders named `a` below root (made with dir fds: the path is too long for
    os.makedirs' recursion); their relative path, ending in '/'."""
    fd = os.open(root, os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("a", dir_fd=fd)
        child = os.open("a", os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    return "a/" * depth


# --- a very long path: feedback at once, and no slow path work on the event loop -------------


@pytest.mark.parametrize(("name", "args"), PATH_TOOLS)
async def test_a_path_over_path_max_is_feedback_at_once(tools: Tools, name: str, args: dict[str, str]) -> None:
    started = time.monotonic()
    text = await tools.fail(name, path="a/" * 400_000, **args)  # read_file took 26 s before, echoing 800 KB
    assert time.monotonic() - started < 5.0
    assert "the path is 800,000 bytes long" in text and "a path has at most 4,096 bytes" in text
    assert len(text) < 1000, len(text)


@pytest.mark.slow
async def test_resolving_a_long_path_runs_off_the_event_loop(
    tools: Tools, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rel = deep_folders(workspace, 1500) + "f.txt"  # 3,005 bytes: resolving it took ~200 ms on the loop
    (workspace / rel).write_text("deep down\n")
    loop_thread = threading.get_ident()
    threads: list[int] = []
    realpath = os.path.realpath

    def spy(path: str, *args: object, **kwargs: object) -> str:
        if len(str(path)) > 3000:
            threads.append(threading.get_ident())
        return realpath(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(paths.os.path, "realpath", spy)
    try:
        assert "deep down" in await tools.ok("read_file", path=rel)
    finally:  # rm, not shutil.rmtree (pytest's too): their recursion cannot go 1,500 folders deep
        monkeypatch.undo()
        remover = await asyncio.create_subprocess_exec("rm", "-rf", str(workspace / "a"))
        await remover.wait()
    assert threads and loop_thread not in threads


async def test_did_you_mean_scan_runs_off_the_event_loop(
    tools: Tools, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(workspace, "src/auth.go", AUTH_GO)
    loop_thread = threading.get_ident()
    threads: list[int] = []
    walk = paths.walk

    def spy(*args: object, **kwargs: object) -> object:
        threads.append(threading.get_ident())
        return walk(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(paths, "walk", spy)
    for name, args in PATH_TOOLS:
        if name == "write_file":
            continue  # a missing file is what write_file creates
        text = await tools.fail(name, path="src/auth.og", **args)
        assert "did you mean src/auth.go?" in text, (name, text)
    assert len(threads) == 5 and loop_thread not in threads


# --- check-then-use: a folder swapped for a symlink to outside while the tools run --------------

SWAPPER = """
import os, shutil, sys, time
folder, outside = sys.argv[1], sys.argv[2]
parked = folder + "_parked"
while True:
    try:
        os.rename(folder, parked)
        os.symlink(outside, folder)
        time.sleep(0.0002)
        os.unlink(folder)
        os.rename(parked, folder)
        time.sleep(0.0002)
    except OSError:  # a tool created the folder while it was away: put the real one back
        try:
            if os.path.islink(folder):
                os.unlink(folder)
            elif os.path.isdir(folder) and os.path.isdir(parked):
                shutil.rmtree(folder, ignore_errors=True)
            if os.path.isdir(parked):
                os.rename(parked, folder)
        except OSError:
            pass
"""


def _reads_and_writes(calls: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read_file", {"path": "d/secret.txt"}),
        ("write_file", {"path": "d/new.txt", "content": f"write {calls}\n"}),
        ("write_file", {"path": "d/e.txt", "content": f"A{calls}\n"}),
        ("edit_file", {"path": "d/e.txt", "old_text": f"A{calls}", "new_text": f"B{calls}"}),
        ("grep", {"pattern": "SECRET", "path": "d/secret.txt"}),
    ]


def _walks(calls: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("grep", {"pattern": "SECRET|only"}),
        ("glob", {"pattern": "**/*.txt"}),
        ("ls", {"path": "d"}),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("calls_of", [_reads_and_writes, _walks], ids=["read-write-edit", "walks"])
async def test_swapping_a_folder_for_a_symlink_never_reaches_outside(
    tools: Tools, workspace: Path, tmp_path: Path, calls_of: Callable[[int], list[tuple[str, dict[str, Any]]]]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET canary\n")
    (outside / "outside_only.txt").write_text("TOP SECRET too\n")
    put(workspace, "d/secret.txt", "inside\n")
    # what the agent's own bash could do: another process swapping d/ and a symlink to outside
    swapper = await asyncio.create_subprocess_exec(sys.executable, "-c", SWAPPER, str(workspace / "d"), str(outside))
    bad: list[str] = []
    calls = 0
    deadline = time.monotonic() + 3.0
    try:
        while time.monotonic() < deadline:
            calls += 1
            for name, args in calls_of(calls):
                text = model_text(await tools.result(name, **args))
                if "TOP SECRET" in text or "outside_only" in text or "[Errno" in text or "Traceback" in text:
                    bad.append(text)
            if sorted(os.listdir(outside)) != ["outside_only.txt", "secret.txt"]:
                bad.append(f"outside now holds {sorted(os.listdir(outside))}")
                break
    finally:
        swapper.terminate()
        await swapper.wait()
    assert not bad, bad[:3]
    assert calls > 20, calls
    assert (outside / "secret.txt").read_text() == "TOP SECRET canary\n"


async def test_a_swap_between_the_check_and_the_open_is_caught(
    tools: Tools, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race made certain: the folder becomes a symlink to outside right after each check."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET canary\n")
    put(workspace, "d/secret.txt", "inside\n")
    put(workspace, "d/e.txt", "A\n")
    await tools.ok("read_file", path="d/e.txt")  # e.txt has been seen: write_file and edit_file may change it
    folder, parked = workspace / "d", workspace / "d_parked"
    check = paths.resolve

    def check_then_swap(*args: Any, **kwargs: Any) -> Path:
        target = check(*args, **kwargs)
        if not folder.is_symlink():
            os.rename(folder, parked)
            os.symlink(outside, folder)
        return target

    for module in (paths, files, edit, grep, listing):  # wherever the check is looked up
        if hasattr(module, "resolve"):
            monkeypatch.setattr(module, "resolve", check_then_swap)
    for name, args in [
        ("read_file", {"path": "d/secret.txt"}),
        ("write_file", {"path": "d/new.txt", "content": "x"}),
        ("write_file", {"path": "d/e.txt", "content": "x"}),
        ("edit_file", {"path": "d/e.txt", "old_text": "A", "new_text": "B"}),
        ("grep", {"pattern": "SECRET", "path": "d/secret.txt"}),
    ]:
        if folder.is_symlink():
            folder.unlink()
        if parked.exists():
            os.rename(parked, folder)
        text = await tools.fail(name, **args)
        assert "TOP SECRET" not in text and "Refused" in text and "goes through the symlink d ->" in text, text
        assert sorted(os.listdir(outside)) == ["secret.txt"], name
    assert (outside / "secret.txt").read_text() == "TOP SECRET canary\n"


# --- errors quote what the model sent, shortened ----------------------------------------------


@pytest.mark.slow
async def test_grep_and_glob_patterns_are_shortened_in_errors(tools: Tools, workspace: Path) -> None:
    put(workspace, "a.txt", "x\n")
    long = "(" + "a" * 20_000
    text = await tools.fail("grep", pattern=long[:5_000])
    assert "invalid regular expression" in text and "(shortened: 5,000 characters)" in text
    assert len(text) < 1000
    text = await tools.ok("grep", pattern="b" * 10_000)
    assert "no matches for" in text and "(shortened: 10,000 characters)" in text and len(text) < 1000
    text = await tools.fail("glob", pattern="c" * 10_000)
    assert "matched no file" in text and "(shortened: 10,000 characters)" in text and len(text) < 1000


@pytest.mark.parametrize(("name", "arguments"), [("grep", {}), ("glob", {}), ("grep", {"pattern": "x", "glob": ""})])
async def test_a_pattern_over_the_limit_is_refused_at_once(tools: Tools, name: str, arguments: dict[str, str]) -> None:
    """Compiling a 3 MB pattern took 4-20 s (120 s under load); refused before any work."""
    huge = "(" + "a" * 3_000_000
    field = "glob" if "glob" in arguments else "pattern"
    started = time.monotonic()
    text = await tools.fail(name, **{**arguments, field: huge})
    assert time.monotonic() - started < 2.0
    assert "is too long: a pattern has at most 10,000 characters" in text and len(text) < 1000
    assert "(shortened: 3,000,001 characters)" in text


async def test_a_path_just_under_path_max_is_echoed_within_the_limit(tools: Tools) -> None:
    path = "/".join(["b" * 200] * 20)  # 4,019 bytes: allowed, and missing
    text = await tools.fail("read_file", path=path)
    assert "does not exist" in text and len(text) < tools.settings.output_limit


# --- a missing path is reported first, with its did-you-mean, in every tool -------------------


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("edit_file", {"old_text": "", "new_text": "x"}),  # the real model's 15 calls
        ("edit_file", {"old_text": "same", "new_text": "same"}),
        ("read_file", {"limit": 0}),
        ("grep", {"pattern": "("}),
        ("ls", {}),
        ("glob", {"pattern": "["}),
    ],
)
async def test_a_missing_path_is_reported_first(
    tools: Tools, workspace: Path, name: str, args: dict[str, object]
) -> None:
    put(workspace, "auth.go", AUTH_GO)
    text = await tools.fail(name, path="src/auth.go", **args)
    assert text.startswith("Error: src/auth.go does not exist"), text
    assert "did you mean auth.go? Send " in text and '(path="auth.go"' in text  # the call, ready to send
    assert "old_text is" not in text and "limit must" not in text and "regular expression" not in text


# --- the edit diagnosis does not mislead ------------------------------------------------------


async def test_an_unlike_old_text_gets_no_closest_region_and_no_tabs_claim(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    result = await tools.result("edit_file", path="auth.go", old_text="// existing code", new_text="x")
    text = model_text(result)
    assert result.is_error and "no part of the file resembles it" in text
    assert "closest region" not in text and "tabs" not in text and "closest_first_line" not in result.metadata


async def test_tabs_against_spaces_only_when_the_indentation_is_the_difference(tools: Tools, workspace: Path) -> None:
    put(workspace, "auth.go", AUTH_GO)
    # same indentation (tabs), a changed word: a region, and no claim about tabs
    text = await tools.fail("edit_file", path="auth.go", old_text='\tif passwd == "" {\n\t\treturn true', new_text="x")
    assert "The closest region is lines 5-6" in text and "tabs" not in text and "spaces" not in text
    # the same lines indented with spaces: the claim, and nothing about missing lines (with
    # replace_all, which never matches ignoring indentation)
    spaces = '    if password == "" {\n        return true'
    text = await tools.fail("edit_file", path="auth.go", old_text=spaces, new_text="x", replace_all=True)
    assert "the file indents with tabs where old_text uses spaces" in text and "not there" not in text


# --- the diff in the metadata, for the TUI ----------------------------------------------------


async def test_write_and_edit_put_a_unified_diff_in_the_metadata(tools: Tools, workspace: Path) -> None:
    result = await tools.result("write_file", path="new/a.txt", content="one\ntwo\n")
    assert result.metadata["created"] is True
    assert result.metadata["diff"] == "--- a/new/a.txt\n+++ b/new/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    result = await tools.result("write_file", path="new/a.txt", content="one\nthree\n")
    assert "created" not in result.metadata and "-two\n+three\n" in result.metadata["diff"]
    result = await tools.result("edit_file", path="new/a.txt", old_text="three", new_text="four")
    assert "created" not in result.metadata and "-three\n+four\n" in result.metadata["diff"]


async def test_a_huge_diff_in_the_metadata_is_cut_with_a_note(workspace: Path, tmp_path: Path) -> None:
    tools = Tools(workspace, tmp_path, output_limit=10_000)
    content = "".join(f"line {i}\n" for i in range(100_000))  # 1.1 MB
    result = await tools.result("write_file", path="big.txt", content=content)
    diff = result.metadata["diff"]
    assert len(diff) < files.DIFF_METADATA_CHARS + 200 and "[... diff cut:" in diff
    assert result.metadata["diff_cut"] is True and result.metadata["diff_chars"] > 1_000_000
    assert (workspace / "big.txt").read_text() == content
