"""`workbench acp` on the engine service (setting `engine` not off): its sessions are hosted by the
engine, so `workbench engine status` lists them, `workbench attach ID` follows one an editor
drives, and an editor that goes away leaves its session running there. Real processes: the ACP
agent (driven by the SDK's client side), the engine, `workbench attach` and `engine status`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import McpServerStdio

from tests.acp.client import Recorder, agent
from tests.acp.test_agent import _until, scripted
from tests.mcp.conftest import PROBE
from tests.scripted_server import ScriptedModel, call, reply
from workbench.service.place import engine_place

pytestmark = [pytest.mark.slow, pytest.mark.tmux]  # an engine imports litellm; a session starts tmux
FIRST_CALL = 150  # seconds to the first model call: a new engine imports litellm first, on a loaded machine


def wb(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "workbench.cli.main", *map(str, argv)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    """The data folder of this test's engine, stopped (and killed, if need be) at the end."""
    folder = tmp_path / "data"
    yield folder
    wb("engine", "stop", "--data-dir", folder)
    try:
        pid = int(engine_place(folder).lock.read_text().strip() or 0)
    except (OSError, ValueError):
        pid = 0
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def follow(session_id: str, data: Path) -> list[dict[str, object]]:
    """`workbench attach ID --jsonl` as a second client, to the run's end: the events it printed."""
    follower = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workbench.cli.main", "attach", session_id, "--jsonl", "--data-dir", str(data),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(follower.communicate(), 120)
    assert follower.returncode == 0, err.decode()
    return [json.loads(line) for line in out.decode().splitlines()]


def texts(events: list[dict[str, object]]) -> list[object]:
    return [e["message"].get("text") for e in events if isinstance(e.get("message"), dict)]  # type: ignore[union-attr]


async def test_an_acp_turn_runs_in_the_engine_listed_there_and_a_second_client_follows_it(
    tmp_path: Path, scripted_model: ScriptedModel, data: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    scripted_model.add(reply("", call("read_file", path="a.txt"), delay=3), reply("done"))
    client = Recorder()
    flags = scripted(scripted_model, "--engine", "require", "--sandbox", "off")
    async with agent(client, data, *flags) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        # a prompt that names no file: task_files (auto, for the scripted model) reads none before the model's call
        turn = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("read the file a")]))
        await _until(lambda: len(scripted_model.requests) >= 1, FIRST_CALL, "first model call")
        status = await asyncio.to_thread(wb, "engine", "status", "--data-dir", data)
        followed = await follow(new.session_id, data)
        response = await turn
    assert status.returncode == 0 and new.session_id in status.stdout, status.stdout + status.stderr
    assert response.stop_reason == "end_turn" and client.text() == "done"
    assert [u.status for u in client.of("tool_call_update") if u.status == "completed"] == ["completed"]
    seqs = [int(str(e["seq"])) for e in followed]
    assert seqs == list(range(1, len(seqs) + 1)) and "done" in texts(followed)  # all, in order, from the first


async def test_an_editor_that_goes_away_leaves_its_session_running_in_the_engine(
    tmp_path: Path, scripted_model: ScriptedModel, data: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(
        reply("", call("ls", path="."), delay=4), reply("finished without the editor"), reply("back in the editor")
    )
    flags = scripted(scripted_model, "--engine", "require", "--sandbox", "off")
    async with agent(Recorder(), data, *flags) as (conn, proc):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws))
        turn = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("list")]))
        await _until(lambda: len(scripted_model.requests) >= 1, FIRST_CALL, "first model call")
        assert proc.stdin is not None
        proc.stdin.close()  # the editor quit mid-turn
        code = await asyncio.wait_for(proc.wait(), 15)
        turn.cancel()
    status = await asyncio.to_thread(wb, "engine", "status", "--data-dir", data)
    assert code == 0 and new.session_id in status.stdout, status.stdout + status.stderr
    followed = await follow(new.session_id, data)
    assert "finished without the editor" in texts(followed)
    client = Recorder()  # the editor again: session/load replays the turn it missed, and the session goes on
    async with agent(client, data, *flags) as (conn, _):
        await conn.initialize(protocol_version=1)
        await conn.load_session(cwd=str(ws), session_id=new.session_id)
        replayed = client.text()
        again = await conn.prompt(session_id=new.session_id, prompt=[text_block("and now?")])
    assert replayed == "finished without the editor" and again.stop_reason == "end_turn"
    assert client.text().endswith("back in the editor")


async def test_an_mcp_server_the_client_passes_serves_the_session_in_the_engine(
    tmp_path: Path, scripted_model: ScriptedModel, data: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted_model.add(reply("", call("probe__echo", text="from the model")), reply("done"))
    probe = McpServerStdio(name="probe", command=sys.executable, args=[str(PROBE)], env=[])
    flags = scripted(scripted_model, "--engine", "require", "--approval", "auto")
    async with agent(Recorder(), data, *flags) as (conn, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws), mcp_servers=[probe])
        status = await asyncio.to_thread(wb, "engine", "status", "--data-dir", data)
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("echo")])
    assert new.session_id in status.stdout, status.stdout + status.stderr  # hosted by the engine
    assert response.stop_reason == "end_turn"
    assert "probe__echo" in [t["function"]["name"] for t in scripted_model.requests[0]["tools"]]
    [tool] = [m for m in scripted_model.requests[1]["messages"] if m["role"] == "tool"]
    assert tool["content"].startswith("from the model")
