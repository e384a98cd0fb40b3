"""MCP servers in a real Session: tools in the loop, the cached list on the first request, the guard,
a subagent limited to one server, and no process left after close or after a kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.guard.test_guard_in_loop import of, open_session, until
from tests.mcp.conftest import probe, with_servers
from tests.scripted_server import ScriptedModel, call, reply
from workbench.config.mcp_servers import parse_server
from workbench.config.settings import Settings
from workbench.mcp.manager import marker_of
from workbench.pb import workbench_pb2 as pb
from workbench.session.session import Session
from workbench.terminal.leftovers import reap_orphans
from workbench.terminal.processes import marked_pids
from workbench.terminal.shell_env import MARKER

pytestmark = pytest.mark.tmux


def offered(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_a_tool_of_a_sandboxed_server_in_the_loop_and_nothing_left_after_close(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    settings = with_servers(settings, probe())
    scripted_model.add(reply("", call("probe__echo", text="from the model")), reply("done"))
    session = await Session.open(settings)
    marker = marker_of(session.id)
    try:
        await asyncio.wait_for(session.mcp.connections["probe"].ready(), 60)
        assert marked_pids(MARKER, marker), "the server carries the session's marker"
        session.send("echo something")
        finished = await asyncio.wait_for(session.wait(), 60)
        assert finished.status == pb.RUN_STATUS_FINISHED
        first = scripted_model.requests[0]
        assert "probe__echo" in offered(first)
        assert tool_texts(scripted_model.requests[1])[0].startswith("from the model")
    finally:
        await session.close()
    assert marked_pids(MARKER, marker) == []


async def test_a_first_session_offers_a_new_servers_tools_from_its_first_request(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    """Issue 37 item 1: a newly configured server (no cached tool list) starts as the session opens and
    the first request waits for it: the model's call of its tool runs (it got "unknown tool" before)."""
    settings = with_servers(settings, probe())
    scripted_model.add(reply("", call("probe__echo", text="first try")), reply("done"))
    session = await Session.open(settings)
    try:
        assert session.mcp.connections["probe"].began_at, "it started as the session opened"
        session.send("echo something")
        finished = await asyncio.wait_for(session.wait(), 60)
        assert finished.status == pb.RUN_STATUS_FINISHED
        assert "probe__echo" in offered(scripted_model.requests[0])
        assert tool_texts(scripted_model.requests[1])[0].startswith("first try")
        assert not [e for e in session.events() if e.WhichOneof("kind") == "notice" and "MCP" in e.notice.text]
    finally:
        await session.close()


async def test_the_first_request_carries_the_cached_tools_and_never_waits(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    settings = with_servers(settings, probe(sandbox="off"))
    session = await Session.open(settings)
    try:  # a first session: its start fills the cache
        await asyncio.wait_for(session.mcp.connections["probe"].ready(), 60)
    finally:
        await session.close()
    session = await Session.open(settings)
    try:  # the next one offers the tools of the last start at once, while the server starts beside it
        scripted_model.add(reply("second"))
        session.send("hi again")
        await asyncio.wait_for(session.wait(), 60)
        connection = session.mcp.connections["probe"]
        assert "probe__echo" in offered(scripted_model.requests[0])
        await asyncio.wait_for(connection.ready(), 60)
        assert scripted_model.request_times[0] < connection.ready_at, "the first request waited for the server"
    finally:
        await session.close()


async def test_a_new_server_that_fails_or_is_slow_gets_one_notice_and_the_request_goes_without_it(
    settings: Settings, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    silent = tmp_path / "silent.py"  # a "server" that never answers the handshake
    silent.write_text("import time\ntime.sleep(60)\n")
    slow = parse_server("slow", {"command": sys.executable, "args": [str(silent)], "sandbox": "off"})
    broken = parse_server("broken", {"command": str(tmp_path / "no-such-program"), "sandbox": "off"})
    settings = with_servers(settings, probe(sandbox="off"), slow, broken)
    settings.mcp_startup_timeout = 8.0  # the probe server starts within it even on a loaded machine
    text_call = '```json\n{"name": "slow__echo", "arguments": {"text": "hi"}}\n```'  # issue 37 item 2, as text
    scripted_model.add(reply(text_call), reply("one"), reply("two"))
    session = await Session.open(settings)
    try:
        session.send("hi")
        await asyncio.wait_for(session.wait(), 60)
        session.send("again")
        await asyncio.wait_for(session.wait(), 60)
        events = list(session.events())
        waited = scripted_model.request_times[0] - session.mcp.connections["probe"].began_at
    finally:
        await session.close()
    first = offered(scripted_model.requests[0])
    assert "probe__echo" in first and not [n for n in first if n.startswith(("slow__", "broken__"))]
    notes = [e.notice.text for e in events if e.WhichOneof("kind") == "notice" and "MCP" in e.notice.text]
    assert len(notes) == 2, notes  # once each, not again at the second run
    assert any(n.startswith("MCP server slow did not start within 8 s (mcp_startup_timeout)") for n in notes)
    assert any(n.startswith("MCP server broken failed to start (") for n in notes)
    told = json.dumps(scripted_model.requests[1]["messages"][-1])
    assert "'slow__echo' is not offered: MCP server slow is still starting (" in told and "bash" not in told
    assert 7.5 < waited < 20, f"the first request waited {waited:.1f} s, not the 8 s limit"


async def test_known_servers_start_after_the_first_request_or_soon_after_opening(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    settings = with_servers(settings, probe(sandbox="off"))
    session = await Session.open(settings)
    try:  # the first start in this data folder caches the tool list
        await asyncio.wait_for(session.mcp.connections["probe"].ready(), 60)
    finally:
        await session.close()
    session = await Session.open(settings)
    try:  # a prompt sent at once: the servers start once its request went out
        connection = session.mcp.connections["probe"]
        scripted_model.add(reply("answer"))
        session.send("hi")
        await asyncio.wait_for(session.wait(), 60)
        await until(lambda: connection.began_at, 10)
        assert scripted_model.request_times[0] < connection.began_at
    finally:
        await session.close()
    session = await Session.open(settings)
    try:  # no prompt: they start on their own, soon
        await until(lambda: session.mcp.connections["probe"].began_at, 10)
    finally:
        await session.close()


async def test_ask_mode_reviews_an_mcp_call_and_the_rule_matches_its_json(
    settings: Settings, scripted_model: ScriptedModel, workspace: Path
) -> None:
    settings = with_servers(settings, probe())
    settings.guard_block = ['probe__write_file:*"path":"/etc*']
    target = workspace / "approved.txt"
    scripted_model.add(
        reply("", call("probe__write_file", path="/etc/passwd", text="x")),
        reply("", call("probe__write_file", path=str(target), text="ok")),
        reply("done"),
    )
    opened = await open_session(settings, interactive=True)
    session = opened.session
    try:
        await asyncio.wait_for(session.mcp.connections["probe"].ready(), 60)
        session.send("write files")
        await until(lambda: session.pending_reviews(), 60)
        (pending,) = session.pending_reviews()
        assert pending.call.name == "probe__write_file" and "MCP server probe" in pending.reason
        session.decide(pending.call_id, True)
        await asyncio.wait_for(session.wait(), 60)
    finally:
        await session.close()
    decisions = of(opened, "guard_decision")
    assert decisions[0].verdict == pb.GUARD_VERDICT_BLOCK and "guard_block" in decisions[0].reason
    assert target.read_text() == "ok"


async def test_a_subagent_limited_to_one_server(settings: Settings, scripted_model: ScriptedModel) -> None:
    settings = with_servers(settings, probe(), probe("other"))
    scripted_model.add(
        reply("", call("subagent", prompt="echo via probe", mode="sync", tools=["probe__*"])),
        reply("", call("other__echo", text="not mine")),
        reply("", call("probe__echo", text="mine")),
        reply("child done"),
        reply("parent done"),
    )
    session = await Session.open(settings)
    try:
        for connection in session.mcp.connections.values():
            await asyncio.wait_for(connection.ready(), 60)
        session.send("delegate")
        assert (await asyncio.wait_for(session.wait(), 60)).status == pb.RUN_STATUS_FINISHED
    finally:
        await session.close()
    parent, child = scripted_model.requests[0], scripted_model.requests[1]
    assert "other__echo" in offered(parent) and "probe__echo" in offered(parent)
    assert "probe__echo" in offered(child) and not [n for n in offered(child) if n.startswith("other__")]
    texts = tool_texts(scripted_model.requests[2]) + tool_texts(scripted_model.requests[3])
    assert any("unknown tool 'other__echo'" in t for t in texts) and any(t.startswith("mine") for t in texts)


OWNER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from tests.mcp.conftest import probe, with_servers
    from workbench.config.settings import Settings
    from workbench.session.session import Session

    async def main():
        settings = with_servers(
            Settings(model="demo", workspace=Path(sys.argv[1]), data_dir=Path(sys.argv[2])),
            probe("loose", sandbox="off"), probe("boxed"),
        )
        session = await Session.open(settings)
        for connection in session.mcp.connections.values():
            await connection.ready()
        print(session.id, flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def test_nothing_is_left_after_a_kill_9(settings: Settings, workspace: Path) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(workspace), str(settings.data_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert owner.stdout is not None
    session_id = owner.stdout.readline().strip()
    marker = marker_of(session_id)
    assert len(marked_pids(MARKER, marker)) >= 2
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    assert session_id in reap_orphans(settings.data_dir)
    assert marked_pids(MARKER, marker) == []
    assert not Path(f"/tmp/workbench-{marker}").exists()
    assert json.dumps([]) == "[]"


async def test_a_resumed_session_offers_the_servers_configured_now(
    settings: Settings, scripted_model: ScriptedModel
) -> None:
    session = await Session.open(settings)  # no server configured then
    try:
        scripted_model.add(reply("first"))
        session.send("hi")
        await asyncio.wait_for(session.wait(), 60)
    finally:
        await session.close()
    settings = with_servers(settings, probe())
    session = await Session.open(settings, resume=session.id)
    try:
        await asyncio.wait_for(session.mcp.connections["probe"].ready(), 60)
        scripted_model.add(reply("", call("probe__echo", text="after resume")), reply("done"))
        session.send("again")
        await asyncio.wait_for(session.wait(), 60)
    finally:
        await session.close()
    assert "probe__echo" in offered(scripted_model.requests[1])
    assert tool_texts(scripted_model.requests[2])[-1].startswith("after resume")
