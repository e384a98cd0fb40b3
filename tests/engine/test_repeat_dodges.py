"""The loop stop is not dodged by trivially different arguments (issue 39 item 10).

Through the real loop, SQLite store and litellm's HTTP to the scripted server: a model that varies
its call each turn in a way that cannot change the outcome (one more trailing space in a command,
another spelling of one file's path, a timeout of 120, 120.0, 121, ...) stops like one that sends
the same call: the run ends STOPPED after repeat_stop + 1 model calls, not at max_turns. Calls
that differ in the same way but return something new each time are not looping.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb

MAX_TURNS = 60  # the reviewer's --max-turns


def scripted(model: ScriptedModel, nth_call: Callable[[int], dict[str, Any]]) -> None:
    model.add(*[reply("", nth_call(i)) for i in range(MAX_TURNS)])


async def stops_early(settings: Settings, model: ScriptedModel, stop_line: str) -> pb.RunFinished:
    settings.max_turns = MAX_TURNS
    run = await run_agent(settings, "read a.txt")
    k = settings.repeat_stop
    assert len(model.requests) == k + 1, f"{len(model.requests)} model calls, not {k + 1}"
    assert run.outcome.status == pb.RUN_STATUS_STOPPED
    assert run.outcome.reason == f"stopped: agent main repeated {stop_line} {k + 1} times"
    stopped = run.results()[-1]
    assert stopped.metadata["loop_stopped"] and "the run stops here" in stopped.error
    return run.outcome


def spelling(workspace: Path, i: int) -> str:
    """The i-th spelling of a.txt's path, each new: ./a.txt, ././a.txt, /abs/./a.txt, sub/../a.txt, ..."""
    dots = "./" * (i // 4 + 1)
    return [f"{dots}a.txt", f"{workspace}/{dots}a.txt", f"{dots}sub/../a.txt", f" {dots}a.txt "][i % 4]


async def test_new_spellings_of_one_path_each_turn_stop_like_the_same_call(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "sub").mkdir()
    scripted(scripted_model, lambda i: call("read_file", path=spelling(workspace, i)))
    await stops_early(settings, scripted_model, "read_file(./a.txt)")


async def test_a_listing_of_the_workspace_spelled_anew_each_turn_stops(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """ls() lists "." like ls(path=".") and ls(path="./"): the default is one spelling of it."""
    (workspace / "a.txt").write_text("alpha\n")
    forms: list[dict[str, Any]] = [{"path": str(workspace)}, {}, {"path": "./"}, {"path": "."}]
    scripted(scripted_model, lambda i: call("ls", **forms[i % 4]) if i < 4 else call("ls", path="./" * i))
    await stops_early(settings, scripted_model, "ls(.)")


@pytest.mark.tmux
async def test_one_more_trailing_space_in_a_command_each_turn_stops(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted(scripted_model, lambda i: call("bash", command="echo ran >> count.txt; cat a.txt" + " " * i))
    await stops_early(settings, scripted_model, "bash(echo ran >> count.txt; cat a.txt)")
    # one call to the shell: the third was refused too (the same result twice), so it ran twice
    assert (workspace / "count.txt").read_text().count("ran") == 2


@pytest.mark.tmux
async def test_a_timeout_of_120_then_120_0_then_121_stops(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    timeouts: list[float] = [120, 120.0, 121, 121.0, 122]
    timeouts += [123 + i for i in range(MAX_TURNS)]
    scripted(scripted_model, lambda i: call("bash", command="echo ran >> count.txt; cat a.txt", timeout=timeouts[i]))
    await stops_early(settings, scripted_model, "bash(echo ran >> count.txt; cat a.txt)")
    assert (workspace / "count.txt").read_text().count("ran") == 3  # 120 and 120.0 are one call, refused at its third


@pytest.mark.tmux
async def test_whitespace_inside_a_command_with_the_same_output_stops(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """`cat  a.txt` with one more inner space each turn: nearly the same call with the same output."""
    (workspace / "a.txt").write_text("alpha\n")
    scripted(scripted_model, lambda i: call("bash", command="cat" + " " * (i + 1) + "a.txt"))
    await stops_early(settings, scripted_model, "bash(cat a.txt)")


async def test_alternating_two_calls_still_stops(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """A and B in turn, each with its one result: A's third stop comes at its fourth call (7th turn)."""
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    scripted(scripted_model, lambda i: call("read_file", path="ab"[i % 2] + ".txt"))
    settings.max_turns = MAX_TURNS
    run = await run_agent(settings, "read both")
    assert len(scripted_model.requests) == 2 * settings.repeat_stop + 1
    assert run.outcome.status == pb.RUN_STATUS_STOPPED
    assert run.outcome.reason == "stopped: agent main repeated read_file(a.txt) 4 times"


async def test_nearly_the_same_call_with_a_new_result_each_time_is_not_looping(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Reading a file a line further each time: only a number changes, but each result is new."""
    (workspace / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 20)))
    scripted_model.add(*[reply("", call("read_file", path="a.txt", offset=n, limit=1)) for n in range(1, 9)])
    scripted_model.add(reply("line 8 is the last I need"))
    settings.max_turns = MAX_TURNS
    run = await run_agent(settings, "read a.txt line by line")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "line 8 is the last I need"
    assert all(not r.is_error and not r.notes for r in run.results())
