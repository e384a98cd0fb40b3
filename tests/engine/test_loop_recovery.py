"""The loop's recovery from what small models do: calls written as text, repeated calls.

Through litellm's real HTTP path to the scripted server (issue 16, items 1 and 5).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.engine.repeats import STOP_AFTER
from workbench.model.text_calls import ECHO_FIX, ECHO_NEXT
from workbench.pb import workbench_pb2 as pb


def tool_contents(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def echoed(request: dict) -> list[dict]:
    """The request's messages after the first prompt: a text call's turn and its results, as text."""
    return [{k: m[k] for k in m if k in ("role", "content", "tool_calls")} for m in request["messages"][2:]]


def assistant_messages(run_events: list[pb.Message]) -> list[pb.Message]:
    return [m for m in run_events if m.role == pb.ROLE_ASSISTANT]


# --- item 1: tool calls written as text -----------------------------------------------------


async def test_a_call_written_as_a_json_block_runs_and_the_run_goes_on(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "auth.go").write_text("package auth\n")
    block = 'Let me read it.\n```json\n{"name": "read_file", "arguments": {"path": "auth.go"}}\n```'
    scripted_model.add(reply(block), reply("It is package auth."))
    run = await run_agent(settings, "what package is auth.go?")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "It is package auth."
    first = assistant_messages(run.of("message"))[0]
    assert first.text == block  # the reply keeps what the model wrote; the block also became the call
    (recovered,) = first.tool_calls
    assert (
        recovered.from_text and recovered.name == "read_file" and json.loads(recovered.arguments) == {"path": "auth.go"}
    )
    (result,) = run.results()
    assert not result.is_error and "package auth" in result.output and not result.notes
    # the model sees its turn as it wrote it, block included, and the result as text after it:
    # no tool_calls for a template to render in a format it never wrote, no note telling it to
    # call again another way (with both, the 1.5B model repeated the call instead of answering)
    assert echoed(scripted_model.requests[1]) == [
        {"role": "assistant", "content": block},
        {"role": "user", "content": "Result of your read_file call:\n     1\tpackage auth" + ECHO_NEXT},
    ]
    # the line after the results: with it the 1.5B model answered instead of writing more blocks
    assert ECHO_NEXT.strip().startswith("If this answers the task, reply now with the answer in plain words")


async def test_tagged_and_bare_calls_in_one_reply_all_run_in_order(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    text = (
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>\n'
        '{"name": "read_file", "arguments": {"path": "b.txt"}}'
    )
    scripted_model.add(reply(text), reply("done"))
    run = await run_agent(settings, "read both")
    assert run.outcome.text == "done"
    first, second = run.results()
    assert "alpha" in first.output and "beta" in second.output
    assert echoed(scripted_model.requests[1]) == [  # both results in one message, in call order
        {"role": "assistant", "content": text},
        {
            "role": "user",
            "content": "Result of your read_file call:\n     1\talpha\n\nResult of your read_file call:\n     1\tbeta"
            + ECHO_NEXT,  # once, after the last result
        },
    ]


async def test_a_text_call_to_an_unknown_tool_or_unreadable_json_is_an_error_the_model_reads(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    text = (
        '```json\n{"name": "delete_all", "arguments": {}}\n```\n'
        '```json\n{"name": "read_file", "arguments": {"path": "a.txt"}\n```'
    )
    scripted_model.add(reply(text), reply("sorry"))
    run = await run_agent(settings, "go")
    assert run.outcome.status == pb.RUN_STATUS_FINISHED and run.outcome.text == "sorry"
    assistant, results = echoed(scripted_model.requests[1])
    assert assistant == {"role": "assistant", "content": text}
    # after a failure the line says to correct the call (told to answer, the model answered with the error)
    assert results["content"].endswith(ECHO_FIX) and ECHO_NEXT not in results["content"]
    unknown, broken = results["content"].removesuffix(ECHO_FIX).split("\n\nResult of your ")
    assert "'delete_all'" in unknown and "not one of the offered tools" in unknown and "read_file" in unknown
    assert "not valid JSON" in broken and '{"name": "read_file", "arguments": {"path": "..."}}' in broken
    assert all(r.is_error for r in run.results())
    started = [e.call for e in run.of("tool_call_started")]
    assert len(started) == 2 and all(c.from_text for c in started)


async def test_a_made_up_tool_that_names_a_file_is_pointed_at_read_file_not_bash(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """Seen with the 1.5B model (docs/DECISIONS.md, issue 28): `get_log_level(path="logging.ini")` was told
    to run the program get_log_level with bash, and it tried /usr/bin/get_log_level until the loop stop."""
    text = '```json\n{"name": "get_log_level", "arguments": {"path": "logging.ini"}}\n```'
    scripted_model.add(reply(text), reply("ok"))
    await run_agent(settings, "What log level does logging.ini set?")
    unknown = tool_contents(scripted_model.requests[1]) or [echoed(scripted_model.requests[1])[1]["content"]]
    assert "'get_log_level'" in unknown[0]
    assert 'call read_file: {"name": "read_file", "arguments": {"path": "logging.ini"}}' in unknown[0]
    assert "bash" not in unknown[0].split("offered tools")[1].split(")", 1)[1]


async def test_prose_with_a_non_call_json_block_stays_the_answer(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    answer = 'Your package.json should be:\n```json\n{"name": "demo", "version": "1.0.0"}\n```'
    settings.work_nudge = "off"  # on, this how-to gets one turn back (test_advice.py); here: not read as a call
    settings.undone_check = "off"  # on, a task asking for work with nothing changed does too (test_undone.py)
    scripted_model.add(reply(answer))
    run = await run_agent(settings, "write me a package.json")
    assert run.outcome.text == answer and not run.results()
    assert len(scripted_model.requests) == 1


async def test_real_tool_calls_win_over_text_that_looks_like_one(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    text = 'For example {"name": "bash", "arguments": {"command": "rm -rf x"}}'
    scripted_model.add(reply(text, call("read_file", path="a.txt")), reply("done"))
    run = await run_agent(settings, "go")
    (result,) = run.results()
    assert result.name == "read_file" and not result.notes
    assert assistant_messages(run.of("message"))[0].text == text


# --- item 5: repeats --------------------------------------------------------------------------


async def test_the_reminder_counts_pretty_printed_and_compact_arguments_as_one_call(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(
        reply("", call("read_file", '{\n  "path": "missing.txt"\n}')),
        reply("", call("read_file", '{"path":"missing.txt"}')),
        reply("", call("read_file", '{"path": "missing.txt"}')),
        reply("giving up"),
    )
    await run_agent(settings, "go")
    contents = [tool_contents(r)[-1] for r in scripted_model.requests[1:4]]
    assert "Reminder" not in contents[0] and "Reminder" not in contents[1]
    assert contents[2].count("Reminder") == 1 and "3 times" in contents[2]


async def test_an_identical_successful_call_is_told_it_already_has_the_result(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(
        reply("", call("read_file", path="a.txt")),
        reply("", call("ls", path=".")),
        reply("", call("read_file", '{"path":  "a.txt"}')),
        reply("done"),
    )
    run = await run_agent(settings, "go")
    first, _, again = run.results()
    assert not first.notes
    (note,) = again.notes
    assert "already have this result" in note and "turn 1 (2 turns ago)" in note
    assert "alpha" in again.output  # it still ran: the note is advice, not a refusal


async def test_a_changed_file_makes_the_same_read_a_new_result(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(
        reply("", call("read_file", path="a.txt")),
        reply("", call("write_file", path="a.txt", content="beta\n")),
        reply("", call("read_file", path="a.txt")),
        reply("done"),
    )
    run = await run_agent(settings, "go")
    assert all(not r.notes for r in run.results())


@pytest.mark.tmux
async def test_a_call_that_keeps_failing_is_not_run_again_until_something_changes(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings.repeat_stop = 0  # the loop stop (test_looping.py) would stop it first; this is repeats' own refusal
    failing = call("bash", command="echo ran >> count.txt; exit 3")
    for _ in range(STOP_AFTER + 2):
        scripted_model.add(reply("", failing))
    scripted_model.add(
        reply("", call("write_file", path="fix.txt", content="fixed\n")),  # a change: the next one runs
        reply("", failing),
        reply("stuck"),
    )
    run = await run_agent(settings, "go")
    assert run.outcome.text == "stuck"
    assert (workspace / "count.txt").read_text().count("ran") == STOP_AFTER + 1
    results = [r for r in run.results() if r.name == "bash"]
    refused = [r for r in results if "repeat_refused" in r.metadata]
    assert len(refused) == 2 and results.index(refused[0]) == STOP_AFTER
    assert all(
        r.is_error and r.error.startswith("not run:") and f"failed {STOP_AFTER} times" in r.error for r in refused[:1]
    )
    assert "Reminder" in model_text_of(results[STOP_AFTER - 1])
    assert "repeat_refused" not in results[-1].metadata  # after the write it ran again
    notices = run.of("notice")
    assert len(notices) == 2 and all(n.level == "warning" and "not run" in n.text for n in notices)


@pytest.mark.tmux
async def test_a_call_that_keeps_returning_the_same_result_is_not_run_a_third_time(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """A 1.5B model ran the same pytest six times, "3 passed" each time, and never answered."""
    same = call("bash", command="echo ran >> count.txt; echo 3 passed")
    scripted_model.add(
        reply("", same),
        reply("", call("ls", path="nowhere")),  # a failed read-only call changes nothing
        reply("", same),
        reply("", same),
        reply("", call("write_file", path="other.txt", content="x\n")),  # another change: it runs again
        reply("", same),
        reply("3 passed"),
    )
    run = await run_agent(settings, "go")
    assert run.outcome.text == "3 passed"
    bash = [r for r in run.results() if r.name == "bash"]
    assert [("repeat_refused" in r.metadata) for r in bash] == [False, False, True, False]
    refused = bash[2]
    assert refused.is_error and refused.error.startswith("not run:") and "at turns 1 and 3" in refused.error
    assert "answer now without a tool call" in refused.error
    assert "answer now without a tool call" in bash[1].notes[0]  # the note before it says so too
    # the refused call did not run: 3 runs of the 4 calls
    assert (workspace / "count.txt").read_text().count("ran") == 3


def model_text_of(result: pb.ToolResult) -> str:
    from workbench.core.feedback import model_text

    return model_text(result)


# --- the ablation the eval measures hints with ------------------------------------------------


async def test_without_recovery_hints_an_error_is_only_its_first_sentence(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\n")
    settings.recovery_hints = False
    scripted_model.add(reply("", call("read_file", path="note.txt")), reply("no idea"))
    run = await run_agent(settings, "read the notes")
    (result,) = run.results()
    assert result.is_error and result.error == "note.txt does not exist"


@pytest.mark.tmux
async def test_a_timed_out_command_that_printed_is_closed_with_answer_now_in_both_call_forms(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """bash timed out after printing the answer: the closing line says to answer if that answers
    the task (told to correct and resend, a 1.5B model re-ran ./build.sh to the turn limit)."""
    (workspace / "build.sh").write_text('#!/bin/sh\necho "build id: 7f3a9c2e"\nsleep 300\n')
    (workspace / "build.sh").chmod(0o755)
    block = '```json\n{"name": "bash", "arguments": {"command": "./build.sh", "timeout": 1}}\n```'
    scripted_model.add(
        reply(block),  # written as text: echoed, its result in a user message
        reply("", call("bash", {"command": "./build.sh", "timeout": 1})),  # a real call
        reply("The build id is 7f3a9c2e."),
    )
    run = await run_agent(settings, "tell me the build id", tools=["bash", "tmux"])
    assert run.outcome.text == "The build id is 7f3a9c2e."
    assert all(r.is_error and r.metadata["partial"] is True for r in run.results())
    _assistant, results = echoed(scripted_model.requests[1])
    assert "build id: 7f3a9c2e" in results["content"] and results["content"].endswith(ECHO_NEXT)
    last = scripted_model.requests[2]["messages"][-1]
    assert last["role"] == "tool" and "build id: 7f3a9c2e" in last["content"] and last["content"].endswith(ECHO_NEXT)


async def test_a_glob_that_finds_nothing_is_closed_with_correct_the_call_and_names_the_close_path(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Default temperature, 3 runs of 3 and once in test_real_model: after edit_file's "did you mean
    auth.go?", the 1.5B model globbed "src/auth.go", was told "answer now if this answers the task",
    and answered glob's own "no files match ..." as the result of the edit."""
    (workspace / "auth.go").write_text("package auth\n")
    block = '```json\n{"name": "glob", "arguments": {"pattern": "src/auth.go"}}\n```'
    scripted_model.add(reply(block), reply("", call("glob", {"pattern": "src/auth.go"})), reply("ok"))
    run = await run_agent(settings, "fix src/auth.go", tools=["glob", "edit_file"])
    first, second = run.results()
    for result in (first, second):  # an error that says why, and the read to make (issue 28)
        assert result.is_error and result.metadata["empty"] is True
        assert result.error.startswith("the glob 'src/auth.go' matched no file in the workspace")
        assert 'did you mean auth.go? Read it with read_file(path="auth.go")' in result.error
    _assistant, results = echoed(scripted_model.requests[1])
    # correct it, with why it found nothing, not "answer now"
    why = "the glob 'src/auth.go' matched no file in the workspace"
    assert results["content"].endswith(ECHO_FIX.replace("A call failed", f"A call failed ({why})"))
    assert not scripted_model.requests[2]["messages"][-1]["content"].endswith(ECHO_NEXT)


def test_an_async_childs_start_is_closed_with_wait_not_answer_now() -> None:
    """Told "answer now if this answers the task" after starting an async child, the 1.5B model
    answered with an invented version while the child ran (stock and fence, every child run)."""
    from workbench.model.gateway import messages_to_wire
    from workbench.model.text_calls import ECHO_WAIT

    started = pb.ToolResult(call_id="c1", name="subagent", output="Started subagent v (a1) in async mode: running.")
    started.metadata["pending"] = True
    user = pb.Message(role=pb.ROLE_USER, text="version?")
    as_text = pb.Message(role=pb.ROLE_ASSISTANT, text="```json\n{}\n```")
    as_text.tool_calls.add(id="c1", name="subagent", arguments="{}", from_text=True)
    wire = messages_to_wire([user, as_text, pb.Message(role=pb.ROLE_TOOL, tool_result=started)], remind=True)
    assert wire[-1]["role"] == "user" and wire[-1]["content"].endswith(ECHO_WAIT)
    real = pb.Message(role=pb.ROLE_ASSISTANT)
    real.tool_calls.add(id="c1", name="subagent", arguments="{}")
    wire = messages_to_wire([user, real, pb.Message(role=pb.ROLE_TOOL, tool_result=started)], remind=True)
    assert wire[-1]["role"] == "tool" and not wire[-1]["content"].endswith(ECHO_NEXT)
