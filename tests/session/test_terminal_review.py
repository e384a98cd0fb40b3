"""The y/n prompt of a headless run on a terminal (workbench/session/terminal_review.py): typed
answers, and a review asked and answered over a real pipe, the guard on a real SQLite store."""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path

import pytest

from tests.waiting import until
from workbench.config.settings import Settings
from workbench.engine.recorder import Recorder
from workbench.engine.store import Store
from workbench.guard.guardrail import Guard
from workbench.pb import workbench_pb2 as pb
from workbench.session.terminal_review import TerminalReviewer, parse_reply


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "wb.db")


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("y", (True, "", False)),
        ("YES\n", (True, "", False)),
        ("a", (True, "", True)),
        ("n", (False, "", False)),
        ("n: use the staging server", (False, "use the staging server", False)),
        ("no because it is slow", (False, "because it is slow", False)),
        ("maybe", None),
        ("", None),
    ],
)
def test_parse_reply(line: str, answer: tuple[bool, str, bool] | None) -> None:
    assert parse_reply(line) == answer


async def test_the_terminal_prompt_asks_and_answers(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    recorder = Recorder(store, session, "main")
    guard = Guard(Settings(workspace=workspace), mode="ask", answerable=True)
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd) as stdin, os.fdopen(write_fd, "w") as typing:
        stderr = io.StringIO()
        reviewer = TerminalReviewer(guard.decide, guard.pending_reviews, stdin=stdin, stderr=stderr)
        unsubscribe = store.subscribe(reviewer.on_event, session)
        worker = asyncio.create_task(reviewer.run())
        try:
            command = pb.ToolCall(id="c1", name="bash", arguments=json.dumps({"command": "make deploy"}))
            waiting = asyncio.create_task(guard.admit(command, agent_id="main", task="the task", emit=recorder.emit))
            await until(lambda: "approve?" in stderr.getvalue())
            assert "$ make deploy" in stderr.getvalue() and "ask mode" in stderr.getvalue()
            typing.write("what?\n")
            typing.flush()
            await until(lambda: stderr.getvalue().count("approve?") == 2)
            typing.write("n: not on a Friday\n")
            typing.flush()
            result = await asyncio.wait_for(waiting, 10)
            assert result is not None and "not on a Friday" in result.error
        finally:
            worker.cancel()
            unsubscribe()


async def test_a_subagents_looping_review_names_it_and_takes_a_note(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, "m", "p")
    recorder = Recorder(store, session, "a2")
    guard = Guard(Settings(workspace=workspace), mode="auto", answerable=True)
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd) as stdin, os.fdopen(write_fd, "w") as typing:
        stderr = io.StringIO()
        reviewer = TerminalReviewer(guard.decide, guard.pending_reviews, stdin=stdin, stderr=stderr)
        unsubscribe = store.subscribe(reviewer.on_event, session)
        worker = asyncio.create_task(reviewer.run())
        try:
            read = pb.ToolCall(id="c9", name="read_file", arguments=json.dumps({"path": "same.txt"}))
            decision = pb.GuardDecision(
                call_id="c9", verdict=pb.GUARD_VERDICT_REVIEW, judge="repeats", reason="agent a2 is looping", call=read
            )
            waiting = asyncio.create_task(guard.ask_person(decision, agent_id="a2", emit=recorder.emit))
            await until(lambda: "looping: [y] let it go on" in stderr.getvalue())
            assert "review of agent a2: agent a2 is looping" in stderr.getvalue()
            typing.write("n: the answer is in the file you read\n")
            typing.flush()
            answer = await asyncio.wait_for(waiting, 10)
            assert answer is not None and not answer.approved
            assert answer.reason == "the answer is in the file you read"
        finally:
            worker.cancel()
            unsubscribe()
