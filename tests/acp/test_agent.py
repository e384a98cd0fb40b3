"""`workbench acp` as a real process driven by the ACP SDK's client side: initialize, sessions,
prompts streamed as updates (the offline demo model, the scripted OpenAI-compatible server)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from acp import text_block

from tests.acp.client import Recorder, agent

INITIALIZE_SECONDS = 10.0  # spawn to the initialize reply, with room for a loaded CI machine (~0.7 s idle)


def test_the_initialize_path_imports_neither_litellm_nor_the_engine() -> None:
    code = (
        "import sys, workbench.cli.main, workbench.cli.commands.acp, workbench.acp.server, workbench.acp.agent\n"
        "bad = [m for m in ('litellm', 'workbench.engine.loop', 'workbench.session.session') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


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
    assert [t.title for t, _ in client.asked] == ["write_file: auth.go", "edit_file: auth.go", "edit_file: auth.go"]
    assert "CheckLogin" in client.text()
    assert (ws / "auth.go").read_text().count("return false") == 1
