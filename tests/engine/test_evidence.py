"""Answers that cite nothing (workbench/engine/evidence.py, the `answer_check` setting): the values
an answer states, which no tool result shows, and the one question before the answer is accepted."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_agent
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.settings import Settings
from workbench.engine.evidence import claimed, question, unsupported
from workbench.pb import workbench_pb2 as pb


def test_the_values_an_answer_states() -> None:
    answer = "The port in `config/server.toml` is 8080; version 4.2.1 of main.py has 1,234 lines and 3 tests."
    assert claimed(answer) == ["8080", "4.2.1", "1,234", "config/server.toml", "main.py"]
    assert claimed("The level is WARNING; MAX_RETRIES and parse_date in CheckLogin.") == [
        "WARNING",
        "MAX_RETRIES",
        "parse_date",
        "CheckLogin",
    ]
    assert claimed("Nothing specific here, just words.") == []


def conversation(*results: str, prompt: str = "What port?") -> list[pb.Message]:
    messages = [pb.Message(role=pb.ROLE_USER, text=prompt)]
    messages += [pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(output=r)) for r in results]
    return messages


def test_a_value_no_result_shows_is_unsupported() -> None:
    assert unsupported("The port is 8080.", conversation("config/server.toml")) == ["8080"]
    assert unsupported("The port is 9090.", conversation("     1\tport = 9090")) == []
    assert unsupported("It has 1,234 lines.", conversation("1234 lines")) == []
    assert unsupported("Port 8080, as you said.", conversation("x", prompt="is the port 8080?")) == []
    assert unsupported("The answer is 4096.", conversation(prompt="what is 2**12?")) == []  # no tool used


def test_the_question_names_the_values() -> None:
    assert question(["8080"]).startswith("Your answer states '8080', which no tool result in this conversation")


async def test_with_the_check_on_an_uncited_answer_is_asked_once_and_the_model_reads(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The issue's run: glob found config/server.toml, the model answered 8080 without reading it."""
    (workspace / "config").mkdir()
    (workspace / "config/server.toml").write_text("port = 9090\n")
    settings.answer_check = True
    scripted_model.add(
        reply("", call("glob", pattern="**/server.toml")),
        reply("The port is 8080."),
        reply("", call("read_file", path="config/server.toml")),
        reply("The port is 9090."),
    )
    run = await run_agent(settings, "What port does server.toml set?", ["glob", "read_file"])
    assert run.outcome.text == "The port is 9090."
    asked = scripted_model.requests[2]["messages"][-1]
    assert asked["role"] == "user" and asked["content"] == question(["8080"])
    workbench = [m for m in run.of("message") if m.author == pb.AUTHOR_WORKBENCH]
    assert [m.text for m in workbench] == [question(["8080"])]


async def test_it_is_asked_only_once_a_run(settings: Settings, scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    settings.answer_check = True
    # a name no path of the test's folders can hold (a number could: pytest-of-root/pytest-142/...)
    scripted_model.add(
        reply("", call("read_file", path="a.txt")), reply("It is QUUX_LIMIT."), reply("Still QUUX_LIMIT.")
    )
    run = await run_agent(settings, "what number?", ["read_file"])
    # the answer asked about, with no call after the question, stays in the run's answer (loop._answer)
    assert run.outcome.text == "It is QUUX_LIMIT.\n\nStill QUUX_LIMIT." and len(scripted_model.requests) == 3


async def test_off_by_default_the_answer_is_accepted(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(reply("", call("read_file", path="a.txt")), reply("It is 42."))
    run = await run_agent(settings, "what number?", ["read_file"])
    assert not settings.answer_check and run.outcome.text == "It is 42." and len(scripted_model.requests) == 2
