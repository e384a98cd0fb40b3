"""`workbench acp` as a real process driven by the ACP SDK's client side: initialize, sessions,
prompts streamed as updates (the offline demo model, the scripted OpenAI-compatible server)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import McpServerStdio, SseMcpServer

from tests.acp.client import Recorder, agent, always, command, no_permissions, reject
from tests.mcp.conftest import PROBE
from tests.scripted_server import Router, ScriptedModel, call, error, reply

INITIALIZE_SECONDS = 10.0  # spawn to the initialize reply, with room for a loaded CI machine (~0.7 s idle)


def test_the_initialize_path_imports_neither_litellm_nor_the_engine() -> None:
    code = (
        "import sys, workbench.cli.main, workbench.cli.commands.acp, workbench.acp.server, workbench.acp.agent\n"
        "bad = [m for m in ('litellm', 'workbench.engine.loop', 'workbench.session.session') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


PRELOAD_PROBE = """
import asyncio, sys, time
from workbench.acp.agent import WorkbenchAgent
from workbench.config.settings import Settings

async def main(preload: bool) -> None:
    await WorkbenchAgent(lambda cwd: Settings(), preload=preload).initialize(protocol_version=1)
    deadline = time.monotonic() + (20 if preload else 1.5)
    while "litellm" not in sys.modules and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    print("litellm" in sys.modules)

asyncio.run(main(sys.argv[1] == "yes"))
"""


def test_litellm_is_imported_after_initialize_only_for_sessions_in_this_process() -> None:
    """`workbench acp` with the engine (setting engine not off) leaves litellm to the engine."""
    seen = [
        subprocess.run([sys.executable, "-c", PRELOAD_PROBE, arg], capture_output=True, text=True, check=True)
        for arg in ("yes", "no")
    ]
    assert [s.stdout.strip() for s in seen] == ["True", "False"], [s.stderr for s in seen]


@pytest.mark.slow
async def test_initialize_negotiates_version_1_and_names_workbench(tmp_path: Path) -> None:
    started = time.monotonic()
    async with agent(Recorder(), tmp_path / "data", "--model", "demo") as (conn, _):
        reply = await conn.initialize(protocol_version=1)
        seconds = time.monotonic() - started
        newer = await conn.initialize(protocol_version=7)  # a version this agent does not speak: its own
    assert reply.protocol_version == 1 and newer.protocol_version == 1
    assert reply.agent_info is not None and reply.agent_info.name == "workbench" and reply.agent_info.version
    caps = reply.agent_capabilities
    assert caps is not None and caps.load_session is True
    assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context is True
    assert seconds < INITIALIZE_SECONDS, f"initialize answered after {seconds:.2f} s"


@pytest.mark.slow
@pytest.mark.tmux
async def test_a_demo_turn_streams_text_and_tool_calls_with_permissions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    client = Recorder()
    async with agent(client, tmp_path / "data", "--model", "demo") as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        assert new.modes is not None and new.modes.current_mode_id == "ask"  # an editor: a person answers
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("fix the login check")])
    assert response.stop_reason == "end_turn"
    assert client.updates[0].session_update == "agent_message_chunk"  # the model's words before its first call
    starts = client.of("tool_call")
    assert [s.title for s in starts] == [f"{n}: auth.go" for n in ("read_file", "write_file", "edit_file")] + [
        "read_file: auth.go",
        "edit_file: auth.go",
    ]
    assert [s.kind for s in starts] == ["read", "edit", "edit", "read", "edit"]
    assert starts[0].locations[0].path == str(ws / "auth.go")
    started: set[str] = set()
    for update in client.updates:  # every update of a call comes after its start
        if update.session_update == "tool_call":
            started.add(update.tool_call_id)
        elif update.session_update == "tool_call_update":
            assert update.tool_call_id in started
    ends = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    assert [u.status for u in ends] == ["failed", "completed", "failed", "completed", "completed"]
    assert "old_text not found" in ends[2].content[-1].content.text  # the failed edit's cause
    assert ends[4].content[0].type == "diff" and ends[4].content[0].path == str(ws / "auth.go")
    # the first edit can only fail (its old_text is not in the file): it is never put to the person
    assert [t.title for t, _ in client.asked] == ["write_file: auth.go", "edit_file: auth.go"]
    assert "CheckLogin" in client.text()
    assert (ws / "auth.go").read_text().count("return false") == 1


def scripted(scripted_model: ScriptedModel, *flags: str) -> list[str]:
    return ["--model", "openai/scripted", "--api-base", scripted_model.url, "--api-key", "sk-test-key", *flags]


async def _until(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {seconds} s")
        await asyncio.sleep(0.02)


@pytest.mark.slow
@pytest.mark.tmux
async def test_cancel_during_a_long_bash_call_answers_cancelled_within_2_s_and_the_session_goes_on(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(reply("", call("bash", command="echo started; sleep 30")), reply("again"))
    client = Recorder()
    async with agent(client, tmp_path / "data", *scripted(scripted_model, "--approval", "auto")) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        turn = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("run it")]))
        await _until(lambda: "started" in str([u.content for u in client.of("tool_call_update")]), 60, "output")
        started = time.monotonic()
        await conn.cancel(session_id=new.session_id)
        response = await turn
        seconds = time.monotonic() - started
        again = await conn.prompt(session_id=new.session_id, prompt=[text_block("once more")])
    assert response.stop_reason == "cancelled" and seconds < 2.0, f"{response.stop_reason} after {seconds:.2f} s"
    ends = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    assert ends[0].status == "failed" and "interrupted" in ends[0].content[-1].content.text
    assert again.stop_reason == "end_turn" and client.text().endswith("again")


@pytest.mark.slow
@pytest.mark.tmux
async def test_a_rejected_review_with_a_reason_reaches_the_model(tmp_path: Path, scripted_model: ScriptedModel) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(reply("", call("write_file", path="notes.txt", content="hi\n")), reply("understood"))
    client = Recorder(answer=reject("not in this folder, ask me first"))
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("write notes")])
    assert response.stop_reason == "end_turn"
    [(tool_call, options)] = client.asked
    assert tool_call.title == "write_file: notes.txt" and "hi" in tool_call.content[0].content.text
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert not (ws / "notes.txt").exists()
    sent = json.dumps(scripted_model.requests[1]["messages"][-1])
    assert "The person denied this call: not in this folder, ask me first" in sent
    [end] = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    assert end.status == "failed"


@pytest.mark.slow
@pytest.mark.tmux
async def test_bad_requests_get_clear_errors_and_the_agent_goes_on(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "file.txt").write_text("x")
    scripted_model.add(reply("fine"))
    client = Recorder()
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        errors = []
        for request in (
            conn.new_session(cwd=str(tmp_path / "missing")),
            conn.new_session(cwd=str(tmp_path / "file.txt")),
            conn.new_session(cwd="relative/ws"),
            conn.prompt(session_id="nosuchsession", prompt=[text_block("hi")]),
            conn.load_session(cwd=str(ws), session_id="nosuchsession"),
        ):
            with pytest.raises(RequestError) as caught:
                await request
            errors.append(caught.value)
        new = await conn.new_session(cwd=str(ws))
        with pytest.raises(RequestError) as empty:
            await conn.prompt(session_id=new.session_id, prompt=[text_block("  ")])
        with pytest.raises(RequestError) as unknown:
            await conn.set_session_mode(session_id=new.session_id, mode_id="yolo")
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert [e.code for e in errors] == [-32602] * 5
    messages = [str(e) for e in errors]
    assert "does not exist" in messages[0] and "is not a folder" in messages[1] and "absolute" in messages[2]
    assert "no session 'nosuchsession' is open here" in messages[3] and "no session 'nosuchsession'" in messages[4]
    assert "the prompt is empty" in str(empty.value) and "ask, auto, read-only" in str(unknown.value)
    assert response.stop_reason == "end_turn" and client.text() == "fine"


@pytest.mark.slow
def test_stdout_carries_only_json_rpc_answers_to_unknown_methods_and_garbage(tmp_path: Path) -> None:
    lines = [
        "this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/bogus", "params": {}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": 5}}),
    ]
    proc = subprocess.run(
        command(tmp_path / "data", "--model", "demo"),
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}  # every line is JSON-RPC
    assert set(answers) == {1, 2, 3}
    assert answers[1]["result"]["protocolVersion"] == 1
    assert answers[2]["error"]["code"] == -32601 and answers[2]["error"]["data"] == {"method": "session/bogus"}
    assert answers[3]["error"]["code"] == -32602 and "cwd" in json.dumps(answers[3]["error"]["data"])
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
@pytest.mark.tmux
async def test_a_stored_session_is_listed_loaded_and_replayed_then_goes_on(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(reply("", call("read_file", path="missing.txt")), reply("first answer"), reply("second"))
    async with agent(Recorder(), tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        session_id = (await conn.new_session(cwd=str(ws))).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("the first prompt")])
        async with agent(Recorder(), tmp_path / "data", *scripted(scripted_model)) as (other, _):
            await other.initialize(protocol_version=1)
            with pytest.raises(RequestError) as held:  # the first process still has it open
                await other.load_session(cwd=str(ws), session_id=session_id)
            with pytest.raises(RequestError) as elsewhere:
                await other.load_session(cwd=str(tmp_path), session_id=session_id)
    assert "is open in another workbench process" in str(held.value)
    assert f"works in {ws}" in str(elsewhere.value)
    client = Recorder()
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        listed = await conn.list_sessions(cwd=str(ws))
        await conn.load_session(cwd=str(ws), session_id=session_id)
        replayed = list(client.updates)
        response = await conn.prompt(session_id=session_id, prompt=[text_block("the second prompt")])
    assert [s.session_id for s in listed.sessions] == [session_id] and listed.sessions[0].title == "the first prompt"
    kinds = [u.session_update for u in replayed]
    assert kinds[0] == "user_message_chunk" and replayed[0].content.text == "the first prompt"
    assert "tool_call" in kinds and "first answer" in "".join(
        u.content.text for u in replayed if u.session_update == "agent_message_chunk"
    )
    assert response.stop_reason == "end_turn" and client.text().endswith("second")
    assert [m["content"] for m in scripted_model.requests[2]["messages"] if m["role"] == "user"][-2:] == [
        "the first prompt",
        "the second prompt",
    ]


@pytest.mark.slow
@pytest.mark.tmux
async def test_an_mcp_server_the_client_passes_serves_the_session(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(reply("", call("probe__echo", text="from the model")), reply("done"))
    probe = McpServerStdio(name="probe", command=sys.executable, args=[str(PROBE)], env=[])
    client = Recorder()
    async with agent(client, tmp_path / "data", *scripted(scripted_model, "--approval", "auto")) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws), mcp_servers=[probe])
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("echo")])
        with pytest.raises(RequestError) as sse:
            await conn.new_session(
                cwd=str(ws), mcp_servers=[SseMcpServer(type="sse", name="old", url="http://x", headers=[])]
            )
    assert response.stop_reason == "end_turn"
    assert "probe__echo" in [t["function"]["name"] for t in scripted_model.requests[0]["tools"]]
    [tool] = [m for m in scripted_model.requests[1]["messages"] if m["role"] == "tool"]
    assert tool["content"].startswith("from the model")
    assert "the sse transport is not supported" in str(sse.value)


@pytest.mark.slow
@pytest.mark.tmux
async def test_a_sync_subagents_progress_shows_on_the_call_that_started_it_and_its_review_names_it(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    router = Router(
        delegate=[
            reply("", call("subagent", {"mode": "sync", "name": "helper", "prompt": "child task: list"})),
            reply("parent done"),
        ],
        child=[reply("", call("write_file", path="c.txt", content="c\n")), reply("child answer")],
    )
    scripted_model.add(*[router] * 4)
    client = Recorder()
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("delegate it")])
    assert response.stop_reason == "end_turn" and client.text() == "parent done"
    spawn, child_write = client.of("tool_call")
    assert spawn.title == "subagent: helper" and child_write.title == "[helper] write_file: c.txt"
    assert "[helper] write_file: c.txt" in [t.title for t, _ in client.asked]  # the child's review names it
    assert (ws / "c.txt").read_text() == "c\n"
    progress = [u for u in client.of("tool_call_update") if u.tool_call_id == spawn.tool_call_id and u.content]
    meta = progress[0].field_meta["workbench"]
    assert meta["agent_id"] == "main" and meta["child_agent_id"] == child_write.field_meta["workbench"]["agent_id"]
    lines = progress[-2].content[0].content.text.splitlines()
    assert lines[0] == "helper: started (sync): child task: list" and "helper: write_file: c.txt" in lines
    assert progress[-1].status == "completed" and "child answer" in str(progress[-1].content)


@pytest.mark.slow
@pytest.mark.tmux
async def test_allow_always_approves_the_tool_for_the_session(tmp_path: Path, scripted_model: ScriptedModel) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    writes = [call("write_file", path=name, content="x\n") for name in ("a.txt", "b.txt")]
    scripted_model.add(reply("", writes[0]), reply("", writes[1]), reply("done"))
    client = Recorder(answer=always)
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("write both")])
    assert response.stop_reason == "end_turn" and len(client.asked) == 1
    assert (ws / "a.txt").exists() and (ws / "b.txt").exists()


@pytest.mark.slow
@pytest.mark.tmux
async def test_reject_always_denies_the_tool_or_exact_command_for_the_session_telling_the_model_why(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(
        reply("", call("write_file", path="a.txt", content="x\n")),
        reply("", call("write_file", path="b.txt", content="x\n")),  # denied without asking
        reply("", call("bash", command="echo one")),
        reply("", call("bash", command="echo one")),  # the same command: denied without asking
        reply("", call("bash", command="echo two")),  # another command: asked
        reply("done"),
        reply("done"),  # asked once whether it is: every changing call failed (engine/turn_back.py)
    )
    client = Recorder(answer=reject("no changes today", option="reject_always"))
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("write and run")])
    assert response.stop_reason == "end_turn"
    assert [t.title for t, _ in client.asked] == ["write_file: a.txt", "bash: echo one", "bash: echo two"]
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    results = [json.dumps(r["messages"][-1]) for r in scripted_model.requests[1:]]
    assert "no changes today" in results[0] and "denied every write_file call for the rest of the session" in results[0]
    assert (
        "the person denied every write_file call for the rest of the session (their reason: no changes today)"
        in (results[1])
    )
    assert "denied this exact bash command for the rest of the session (their reason: no changes today)" in results[3]
    ends = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    assert [u.status for u in ends] == ["failed"] * 5


@pytest.mark.slow
@pytest.mark.tmux
async def test_a_prompt_sent_while_one_runs_is_queued_for_the_next_turn(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(reply("first", delay=2.0), reply("second"))
    client = Recorder()
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        first = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("one")]))
        await _until(lambda: len(scripted_model.requests) == 1, 60, "the first model call")
        second = await conn.prompt(session_id=new.session_id, prompt=[text_block("two")])
        responses = [await first, second]
    assert [r.stop_reason for r in responses] == ["end_turn", "end_turn"]
    users = [m["content"] for m in scripted_model.requests[1]["messages"] if m["role"] == "user"]
    assert users[-2:] == ["one", "two"] and client.text() == "firstsecond"


@pytest.mark.slow
@pytest.mark.tmux
async def test_a_client_that_goes_away_mid_turn_ends_the_process_and_its_command(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    mark = f"sleep 3{os.getpid() % 1000}.5"  # this test's own command, to look for afterwards
    scripted_model.add(reply("", call("bash", command=f"echo started; {mark}")))
    client = Recorder()
    async with agent(client, tmp_path / "data", *scripted(scripted_model, "--approval", "auto")) as (conn, proc):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        turn = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("run it")]))
        await _until(lambda: "started" in str([u.content for u in client.of("tool_call_update")]), 60, "output")
        assert proc.stdin is not None
        proc.stdin.close()  # the editor quit
        code = await asyncio.wait_for(proc.wait(), 15)
        turn.cancel()
    assert code == 0
    pgrep = await asyncio.create_subprocess_exec("pgrep", "-f", mark, stdout=asyncio.subprocess.PIPE)
    left, _ = await pgrep.communicate()
    assert left == b"", f"still running: {left!r}"


@pytest.mark.slow
@pytest.mark.tmux
async def test_cancel_while_a_review_waits_for_the_person(tmp_path: Path, scripted_model: ScriptedModel) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(reply("", call("write_file", path="x.txt", content="x\n")), reply("after"))
    client = Recorder(hold=asyncio.Event())  # the person never answers
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        turn = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("write")]))
        await _until(lambda: bool(client.asked), 60, "permission request")
        started = time.monotonic()
        await conn.cancel(session_id=new.session_id)
        response = await turn
        seconds = time.monotonic() - started
        again = await conn.prompt(session_id=new.session_id, prompt=[text_block("go on")])
    assert response.stop_reason == "cancelled" and seconds < 2.0, f"{response.stop_reason} after {seconds:.2f} s"
    assert not (ws / "x.txt").exists() and again.stop_reason == "end_turn"


@pytest.mark.slow
@pytest.mark.tmux
async def test_a_client_that_cannot_answer_reviews_denies_them_and_a_failed_run_is_an_error(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(
        reply("", call("write_file", path="x.txt", content="x\n")),
        reply("ok"),
        error(400, "this model does not exist", code="model_not_found"),
    )
    client = Recorder(answer=no_permissions)
    async with agent(client, tmp_path / "data", *scripted(scripted_model)) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
        with pytest.raises(RequestError) as failed:
            await conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
        with pytest.raises(RequestError) as huge:
            await conn.prompt(session_id=new.session_id, prompt=[text_block("x" * 1_000_001)])
    assert response.stop_reason == "end_turn" and not (ws / "x.txt").exists()
    denied = json.dumps(scripted_model.requests[1]["messages"][-1])
    assert "the editor did not answer the review" in denied
    assert str(failed.value).startswith("workbench: failed") and "does not exist" in str(failed.value)
    assert "over the limit of 1,000,000" in str(huge.value)
