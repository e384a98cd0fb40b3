"""The Session API through the scripted model server: follow-ups, queued prompts, cancel, replay."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedModel, call, reply
from tests.waiting import EventLog, of_kind, until
from workbench.config.settings import Settings
from workbench.engine.recorder import Recorder
from workbench.engine.store_schema import SCHEMA_VERSION
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import SessionError
from workbench.session.session import Session

pytestmark = pytest.mark.tmux


def user_texts(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def test_two_prompts_make_one_conversation(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("The capital is Paris."), reply("About 2.1 million."))
    session = await Session.open(settings)
    try:
        session.send("capital of France?")
        first = await session.wait()
        session.send("and its population?")
        second = await session.wait()
    finally:
        await session.close()
    assert (first.text, second.text) == ("The capital is Paris.", "About 2.1 million.")
    sent = scripted_model.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == "The capital is Paris." and sent[3]["content"] == "and its population?"
    assert session.info.title == "capital of France?"


async def test_the_tmux_server_starts_while_the_first_model_call_runs(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """Issue 17: the shell's server is not started by the first bash call, after the first reply."""
    # the first reply takes two seconds, as a real model's may: the server (~0.1 s in its sandbox)
    # is up before it; an instant reply would race the start
    scripted_model.add(reply("", call("bash", command="echo hi"), delay=2.0), reply("done"))
    session = await Session.open(settings)
    log = EventLog()
    events = log.events
    session.subscribe(log)
    try:
        session.send("say hi")
        await log.until(lambda es: bool(of_kind(es, "terminal_ready")))
        ready = of_kind(events, "terminal_ready")[0].seq
        finished = await session.wait()
    finally:
        await session.close()
    assert finished.text == "done"
    first_call = of_kind(events, "tool_call_started")[0].seq
    assert ready < first_call  # up before the model asked for bash, not started by the call
    assert of_kind(events, "tool_call_finished")[0].tool_call_finished.result.is_error is False


async def test_a_prompt_sent_during_a_turn_reaches_the_next_turn(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(reply("", call("bash", command="sleep 1; echo slept")), reply("noted both"))
    session = await Session.open(settings)
    log = EventLog()
    events = log.events
    session.subscribe(log)
    try:
        session.send("first task")
        await log.until(lambda ev: bool(of_kind(ev, "tool_call_started")))
        session.send("also check the README")
        assert of_kind(events, "prompt_queued")[0].prompt_queued.text == "also check the README"
        outcome = await session.wait()
    finally:
        await session.close()
    assert outcome.text == "noted both" and len(scripted_model.requests) == 2
    second = scripted_model.requests[1]["messages"]
    assert [m["role"] for m in second[-2:]] == ["tool", "user"]  # after the turn's tool results
    assert second[-1]["content"] == "also check the README"


async def test_a_prompt_queued_as_the_model_answers_gets_another_turn(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(reply("first answer", delay=1.0), reply("second answer"))
    session = await Session.open(settings)
    try:
        session.send("one")
        await until(lambda: scripted_model.requests, what="the first model call")  # under way: the reply takes 1 s
        session.send("two")
        outcome = await session.wait()
    finally:
        await session.close()
    assert outcome.text == "second answer"
    assert user_texts(scripted_model.requests[1]) == ["one", "two"]


async def test_cancel_mid_bash_stops_the_command_and_the_session_goes_on(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    marker = workspace / "still-running"
    scripted_model.add(reply("", call("bash", command=f"echo started; sleep 30; touch {marker}")), reply("second run"))
    session = await Session.open(settings)
    log = EventLog()
    events = log.events
    session.subscribe(log)
    try:
        session.send("sleep")
        await log.until(lambda ev: of_kind(ev, "tool_call_started"))
        seen_start = asyncio.get_running_loop().time()
        await log.until(lambda ev: any("started" in e.tool_output.text for e in of_kind(ev, "tool_output")))
        began = asyncio.get_running_loop().time()
        await session.cancel()
        assert asyncio.get_running_loop().time() - began < 2.0
        outcome = await session.wait()
        assert outcome.status == pb.RUN_STATUS_CANCELLED and not session.busy
        (finished,) = of_kind(events, "tool_call_finished")
        assert finished.tool_call_finished.result.error.startswith("interrupted")
        # how long it ran (at least from when its start was seen to the cancel), not 0.00 s
        assert finished.tool_call_finished.result.duration >= began - seen_start > 0
        session.send("go on")
        again = await session.wait()
    finally:
        await session.close()
    assert again.status == pb.RUN_STATUS_FINISHED and again.text == "second run"
    sent = scripted_model.requests[1]["messages"]
    assert sent[-2]["role"] == "tool" and "interrupted" in sent[-2]["content"]
    assert not marker.exists()


async def test_cancel_one_child_leaves_the_parent_running(settings: Settings, scripted_model: ScriptedModel) -> None:
    def route(body: dict) -> dict:
        first = user_texts(body)[0]
        if first == "CHILD":
            return reply("", call("bash", command="sleep 30"))
        if any("Inbox" in t for t in user_texts(body)):
            return reply("the child was cancelled; done")
        if any(m["role"] == "tool" for m in body["messages"]):
            return reply("waiting for it")
        return reply("", call("subagent", {"action": "create", "prompt": "CHILD", "mode": "async", "name": "sleeper"}))

    scripted_model.add(*[route] * 6)
    session = await Session.open(settings)
    log = EventLog()
    events = log.events
    session.subscribe(log)
    try:
        session.send("ROOT")
        await log.until(lambda ev: bool(of_kind(ev, "tool_call_started", "a1")))
        await session.cancel("a1")
        outcome = await session.wait()
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_FINISHED and outcome.text == "the child was cancelled; done"
    (item,) = of_kind(events, "inbox_item", "main")
    assert item.inbox_item.child_id == "a1" and item.inbox_item.status == pb.AGENT_STATUS_CANCELLED


async def test_rollback_leaves_the_inbox_and_the_status_as_they_were(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(reply("done"))
    session = await Session.open(settings)
    try:
        session.send("hi")
        await session.wait()
        root = session.tree.root
        assert root is not None
        before = root.info.status
        with pytest.raises(RuntimeError), session.store.transaction():
            root.inbox.put(pb.InboxItem(kind=pb.INBOX_KIND_MESSAGE, child_id="x", text="lost"))
            session.tree.set_status("main", pb.AGENT_STATUS_WAITING)
            raise RuntimeError("the write fails")
        assert len(root.inbox) == 0 and root.info.status == before
        assert not [e for e in session.events() if e.WhichOneof("kind") == "inbox_item"]
        root.inbox.put(pb.InboxItem(kind=pb.INBOX_KIND_MESSAGE, child_id="x", text="kept"))
        assert len(root.inbox) == 1
    finally:
        await session.close()


async def test_replay_then_live_with_a_concurrent_writer_has_no_gap_and_no_duplicate(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    session = await Session.open(settings)
    rec = Recorder(session.store, session.id, "main")
    try:
        for i in range(300):
            rec.emit(pb.Notice(text=f"early {i}"))

        async def writer() -> None:
            for i in range(300):
                rec.emit(pb.Notice(text=f"late {i}"))
                if i % 10 == 0:
                    await asyncio.sleep(0)

        seen: list[int] = []
        task = asyncio.create_task(writer())
        async for event in session.stream(after=0, limit=25):  # a small queue: it overflows and re-syncs
            seen.append(event.seq)
            if len(seen) % 7 == 0:
                await asyncio.sleep(0.001)  # a slow reader
            if len(seen) == 600:
                break
        await task
        with pytest.raises(RuntimeError), session.store.transaction():
            session.subscribe(lambda e: None, after=0)  # inside a transaction: refused
        sub: list[int] = []
        session.subscribe(lambda e: sub.append(e.seq), after=590)
        rec.emit(pb.Notice(text="one more"))
    finally:
        await session.close()
    assert seen == list(range(1, 601))
    assert sub == list(range(591, 602))


def test_secrets_never_reach_the_database_or_the_log(
    settings: Settings, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from workbench.cli.main import main

    env_key = "sk-env-secret-0123456789abcdef"
    flag_key = "sk-flag-secret-9876543210fedcba"
    monkeypatch.setenv("ANTHROPIC_API_KEY", env_key)
    scripted_model.add(reply(f"I saw {env_key} and {flag_key} somewhere"), reply("bye"))
    data = tmp_path / "secrets-data"
    code = main(
        [
            "run", "--model", "openai/scripted", "--api-base", scripted_model.url, "--api-key", flag_key,
            "--workspace", str(settings.workspace), "--data-dir", str(data), "--jsonl", "say it",
        ]
    )  # fmt: skip
    assert code == 0
    for path in data.rglob("*"):
        if path.is_file():
            blob = path.read_bytes()
            assert env_key.encode() not in blob and flag_key.encode() not in blob, path


async def test_a_damaged_file_and_a_newer_schema_are_refused_and_kept(settings: Settings, tmp_path: Path) -> None:
    settings.data_dir.mkdir(parents=True)
    settings.db_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(SessionError, match=r"damaged.*never overwritten"):
        await Session.open(settings)
    assert settings.db_path.read_bytes() == b"this is not a database" * 100
    settings.db_path.unlink()
    with sqlite3.connect(settings.db_path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SessionError, match="newer Workbench"):
        await Session.open(settings)


async def test_an_old_database_is_migrated(settings: Settings) -> None:
    settings.data_dir.mkdir(parents=True)
    with sqlite3.connect(settings.db_path) as db:  # the schema before versions were kept
        db.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created REAL NOT NULL DEFAULT 0, "
            "workspace TEXT NOT NULL, model TEXT NOT NULL, prompt TEXT NOT NULL, status INTEGER NOT NULL DEFAULT 0)"
        )
        db.execute("INSERT INTO sessions (id, created, workspace, model, prompt) VALUES ('old1', 5, '/w', 'm', 'p\nq')")
    session = await Session.open(settings)
    try:
        titles = {s.id: s.title for s in session.store.sessions()}
    finally:
        await session.close()
    assert titles["old1"] == "p"  # the first prompt's first line
    with sqlite3.connect(settings.db_path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_a_session_open_elsewhere_is_refused(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("hi"))
    first = await Session.open(settings)
    first.send("hello")
    await first.wait()
    try:
        with pytest.raises(SessionError, match="open in another workbench process"):
            await Session.open(settings, resume=first.id)
    finally:
        await first.close()
    again = await Session.open(settings, resume=first.id)
    await again.close()


async def test_resume_in_another_workspace_is_refused(settings: Settings, tmp_path: Path) -> None:
    session = await Session.open(settings)
    await session.close()
    other = tmp_path / "other"
    other.mkdir()
    settings.workspace = other
    with pytest.raises(SessionError, match="works in"):
        await Session.open(settings, resume=session.id)


async def test_an_empty_prompt_is_refused(settings: Settings) -> None:
    session = await Session.open(settings)
    try:
        with pytest.raises(SessionError, match="empty"):
            session.send("  \n ")
    finally:
        await session.close()


def _start_run(scripted_model: ScriptedModel, workspace: Path, data: Path, *extra: str) -> subprocess.Popen:
    argv = ["run", "--model", "openai/scripted", "--api-base", scripted_model.url, "--workspace", str(workspace)]
    return subprocess.Popen(
        [sys.executable, "-m", "workbench.cli.main", *argv, "--data-dir", str(data), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _read_until(proc: subprocess.Popen, kind: str) -> str:
    """Read JSONL events until one of `kind`; return the session id."""
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        event = json.loads(line)
        if kind in event:
            return event["session_id"]
    raise AssertionError(f"no {kind} event")


def _kill_tmux(session_id: str) -> None:
    subprocess.run(["tmux", "-L", f"workbench-{session_id}", "kill-server"], capture_output=True)


@pytest.mark.parametrize("where", ["mid-tool", "mid-stream"])
def test_kill_9_then_resume_holds_the_conversation_and_the_interrupted_results(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.cli.main import main

    data = tmp_path / "data"
    if where == "mid-tool":
        scripted_model.add(reply("Let me look.", call("bash", command="echo partial-output; sleep 60")))
        wait_for = "tool_output"
    else:
        scripted_model.add(reply("a long answer that streams slowly " * 20, chunk_delay=0.2))
        wait_for = "text_delta"
    proc = _start_run(scripted_model, workspace, data, "--jsonl", "go")
    session_id = _read_until(proc, wait_for)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)

    with sqlite3.connect(data / "workbench.db") as db:  # opens cleanly, no gap
        seqs = [row[0] for row in db.execute("SELECT seq FROM events WHERE session_id = ? ORDER BY seq", (session_id,))]
    assert seqs == list(range(1, len(seqs) + 1))

    assert main(["sessions", "--data-dir", str(data), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["status"] == "RUN_STATUS_INTERRUPTED"  # its process died mid-run

    scripted_model.add(reply("picked up where we were"))
    argv = ["run", "--resume", session_id, "--api-base", scripted_model.url, "--data-dir", str(data), "continue"]
    assert main(argv) == 0
    assert capsys.readouterr().out == "picked up where we were\n"
    sent = scripted_model.requests[-1]["messages"]
    if where == "mid-tool":
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
        assert sent[2]["tool_calls"][0]["function"]["name"] == "bash"
        assert "partial-output" in sent[3]["content"] and "interrupted" in sent[3]["content"]
        assert sent[3]["tool_call_id"] == sent[2]["tool_calls"][0]["id"]
    else:
        assert [m["role"] for m in sent] == ["system", "user", "user"]  # the cut reply is no message
    assert sent[1]["content"] == "go" and sent[-1]["content"] == "continue"
    alive = subprocess.run(["tmux", "-L", f"workbench-{session_id}", "list-sessions"], capture_output=True)
    assert alive.returncode != 0  # the dead run's tmux server was ended at the next start
    from workbench.config.settings import Settings as _S
    from workbench.session.catalog import list_sessions

    (info,) = list_sessions(_S(data_dir=data))
    assert info.status == pb.RUN_STATUS_FINISHED


def test_deeply_nested_json_from_the_model_raises_nowhere_a_person_or_judge_reads_it() -> None:
    from workbench.guard.model_judge import JudgeAnswerInvalid, parse_answer
    from workbench.tui.text import arguments_of

    deep = "[" * 100_000 + "]" * 100_000
    assert arguments_of(deep) == {}
    with pytest.raises(JudgeAnswerInvalid, match="nested too deeply"):
        parse_answer(deep)


async def test_compact_summarizes_between_runs(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("one"), reply("two"), reply("three"), reply("the summary"), reply("four"))
    session = await Session.open(settings)
    log = EventLog()
    events = log.events
    session.subscribe(log)
    try:
        for prompt in ("a", "b", "c"):
            session.send(prompt)
            await session.wait()
        session.send("d")
        with pytest.raises(SessionError, match="a run is going"):
            await session.compact()
        await session.wait()
        await session.compact()
        (compaction,) = of_kind(events, "compaction")
        assert compaction.compaction.reason == "the person asked to compact"
    finally:
        await session.close()


async def test_what_a_client_reads_of_the_session(settings: Settings, scripted_model: ScriptedModel) -> None:
    """The context window, the sandbox in words and a typed error for a review that does not wait:
    what the CLI and the TUI read of the Session instead of reaching into the model or the guard."""
    from workbench.session.errors import NotWaiting

    settings.sandbox, settings.sandbox_network = "workspace-write", False
    settings.model = "openai/gpt-4o"  # litellm's local table knows its window
    session = await Session.open(settings)
    try:
        assert session.sandbox == "workspace-write, network off"
        assert await session.context_window() == 128_000
        with pytest.raises(NotWaiting, match="no call 'nope' waits for review") as caught:
            session.decide("nope", approve=True)
        assert isinstance(caught.value, SessionError)
    finally:
        await session.close()
