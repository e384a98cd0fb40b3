"""The session's MCP servers against the real probe server: tools offered, results, failures as Feedback."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict

from tests.mcp.conftest import S1, S2, probe, with_servers
from workbench.config.mcp_servers import parse_server
from workbench.config.settings import Settings
from workbench.mcp.manager import McpManager
from workbench.pb import workbench_pb2 as pb
from workbench.tools.registry import Toolbox, ToolContext

pytestmark = pytest.mark.slow


def context(settings: Settings, outputs: list[str]) -> ToolContext:
    return ToolContext(
        workspace=settings.workspace,
        settings=settings,
        session_dir=settings.sessions_dir / S1,
        on_output=lambda call_id, text: outputs.append(text),
    )


async def call(box: Toolbox, ctx: ToolContext, name: str, arguments: str = "{}") -> pb.ToolResult:
    return await box.invoke(pb.ToolCall(id="c1", name=name, arguments=arguments), ctx)


async def started(settings: Settings) -> McpManager:
    manager = McpManager(settings, settings.sessions_dir / S1, S1)
    manager.start()
    for connection in manager.connections.values():
        await asyncio.wait_for(connection.ready(), 60)
    return manager


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_tools_results_and_failures(transport: str, settings: Settings, request: pytest.FixtureRequest) -> None:
    server = (
        probe(sandbox="off")
        if transport == "stdio"
        else parse_server("probe", {"url": request.getfixturevalue("http_probe"), "timeout": 5})
    )
    if transport == "stdio":  # 5 s: a loaded CI machine took over 2 s to answer a bad argument
        server = probe(sandbox="off", timeout=5)
    settings = with_servers(settings, server)
    manager = await started(settings)
    try:
        assert manager.connections["probe"].state == "ready", manager.connections["probe"].reason
        box = Toolbox([*Toolbox().builtin, *manager.patterns()], manager)
        assert {"probe__echo", "probe__refuse", "probe__hang"} <= set(box.tools)
        definition = next(d for d in box.definitions() if d.name == "probe__add")
        assert "a" in definition.parameters["properties"] and "MCP server probe" in definition.description
        outputs: list[str] = []
        ctx = context(settings, outputs)

        ok = await call(box, ctx, "probe__echo", '{"text": "hello"}')
        assert not ok.is_error and ok.output == "hello"
        summed = await call(box, ctx, "probe__add", '{"a": 2, "b": 3}')
        assert '"sum": 5' in summed.output
        picture = await call(box, ctx, "probe__picture")
        assert "[image image/png, 64 bytes" in picture.output and "a pixel" in picture.output

        refused = await call(box, ctx, "probe__refuse", '{"reason": "quota"}')
        assert refused.is_error and "MCP server probe" in refused.error and "refused: quota" in refused.error
        exploded = await call(box, ctx, "probe__explode")
        assert exploded.is_error and "explode" in exploded.error
        invalid = await call(box, ctx, "probe__echo", '{"text": 5}')
        assert invalid.is_error and "MCP server probe" in invalid.error and "text" in invalid.error

        progressed = await call(box, ctx, "probe__progress", '{"steps": 3}')
        assert progressed.output == "done 3 steps"
        assert "[progress 3/3: step 3 of 3]\n" in outputs

        hung = await asyncio.wait_for(call(box, ctx, "probe__hang"), 20)
        assert hung.is_error and "did not answer within 5 s" in hung.error and "MCP server probe" in hung.error
        assert not (await call(box, ctx, "probe__echo", '{"text": "still up"}')).is_error
    finally:
        await manager.close()


async def test_a_server_that_exits_mid_call_is_restarted_once(settings: Settings) -> None:
    manager = await started(with_servers(settings, probe(sandbox="off")))
    try:
        box = Toolbox(manager.patterns(), manager)
        ctx = context(settings, [])
        died = await call(box, ctx, "probe__die")
        assert died.is_error and "exited during the call of die" in died.error and "call it once more" in died.error
        again = await asyncio.wait_for(call(box, ctx, "probe__echo", '{"text": "back"}'), 60)
        assert again.output == "back", again.error
        died = await call(box, ctx, "probe__die")
        assert "not restarted again" in died.error
        gone = await asyncio.wait_for(call(box, ctx, "probe__echo", '{"text": "x"}'), 60)
        assert gone.is_error and "MCP server probe is not running" in gone.error
    finally:
        await manager.close()


async def test_a_server_that_floods_its_stderr_keeps_a_bounded_log_and_its_last_line(settings: Settings) -> None:
    """A server that writes megabytes to stderr, then dies: the log stays under twice LOG_CAP (the
    log and the one before it) and the call's error still names its last line."""
    from workbench.mcp.stderr_log import LOG_CAP

    manager = await started(with_servers(settings, probe(sandbox="off", env={"PROBE_DIE_STDERR_MB": "5"})))
    try:
        died = await call(Toolbox(manager.patterns(), manager), context(settings, []), "probe__die")
        assert "exited during the call of die" in died.error
        assert "its last stderr line: probe: the last words before dying" in died.error, died.error
        logs = settings.sessions_dir / S1 / "mcp" / "probe"
        sizes = {p.name: p.stat().st_size for p in logs.iterdir()}
        assert set(sizes) == {"stderr.log", "stderr.log.1"} and max(sizes.values()) <= LOG_CAP, sizes
        assert (logs / "stderr.log").read_bytes().endswith(b"probe: the last words before dying\n")
    finally:
        await manager.close()


GARBAGE = Path(__file__).with_name("garbage_server.py")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "Segmentation fault (core dumped)",
            "failed during the call of answer (it sent a line that is not a JSON-RPC "
            "message: 'Segmentation fault (core dumped)'); it is being restarted",
        ),
        ('{"status": "ok"}', """it sent a line that is not a JSON-RPC message: '{"status": "ok"}'"""),
        (
            '{"jsonrpc": "2.0", "id": 999, "result": {}}',
            "did not answer within 5 s (its timeout setting); it sent instead a reply to no request of this call: "
            """'{"jsonrpc":"2.0","id":999,"result":{}}'""",
        ),
    ],
    ids=["not-json", "not-json-rpc", "unknown-id"],
)
async def test_a_server_that_answers_garbage_is_told_with_what_it_answered(
    line: str, said: str, settings: Settings
) -> None:
    """It did not exit, nor stay silent: the error quotes what it sent."""
    server = parse_server(
        "garbage",
        {
            "command": sys.executable,
            "args": [str(GARBAGE)],
            "sandbox": "off",
            "timeout": 5,
            "env": {"GARBAGE_LINE": line},
        },
    )
    manager = await started(with_servers(settings, server))
    try:
        assert manager.connections["garbage"].state == "ready", manager.connections["garbage"].reason
        answered = await call(Toolbox(manager.patterns(), manager), context(settings, []), "garbage__answer")
        assert answered.is_error and said in answered.error, answered.error
        assert "exited" not in answered.error
    finally:
        await manager.close()


async def test_a_tool_that_vanished_after_list_changed(settings: Settings) -> None:
    manager = await started(with_servers(settings, probe(sandbox="off")))
    try:
        box = Toolbox(manager.patterns(), manager)
        ctx = context(settings, [])
        assert "probe__shrinkable" in box.tools and "probe__extra" not in box.tools
        assert not (await call(box, ctx, "probe__grow")).is_error
        for _ in range(200):
            if "probe__extra" in box.tools:
                break
            await asyncio.sleep(0.05)
        assert "probe__extra" in box.tools and "probe__shrinkable" not in box.tools
        assert (await call(box, ctx, "probe__extra")).output == "extra here"
        gone = await call(box, ctx, "probe__shrinkable")
        assert gone.is_error and "MCP server probe no longer offers shrinkable (its tool list changed)" in gone.error
        assert "probe__extra" in gone.error
    finally:
        await manager.close()


async def test_a_server_that_never_starts_is_feedback(settings: Settings, tmp_path: Path) -> None:
    broken = parse_server("broken", {"command": str(tmp_path / "missing-program"), "sandbox": "off", "timeout": 5})
    manager = await started(with_servers(settings, broken))
    try:
        connection = manager.connections["broken"]
        assert connection.state == "failed" and connection.reason
        box = Toolbox(manager.patterns(), manager)
        assert box.tools == {}
    finally:
        await manager.close()


@pytest.mark.sandbox
async def test_cancelling_a_call_sends_the_protocols_cancellation(settings: Settings, workspace: Path) -> None:
    marker = workspace / "hang-cancelled"
    server = probe(env={"PROBE_HANG_MARKER": str(marker)})  # sandboxed: the workspace is writable
    manager = await started(with_servers(settings, server))
    try:
        box = Toolbox(manager.patterns(), manager)
        task = asyncio.create_task(call(box, context(settings, []), "probe__hang"))
        await asyncio.sleep(1.0)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):  # the server's tool was cancelled by notifications/cancelled
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        assert marker.read_text() == "cancelled"
    finally:
        await manager.close()


async def test_elicitation_is_refused_with_a_clear_error(settings: Settings) -> None:
    manager = await started(with_servers(settings, probe(sandbox="off")))
    try:
        asked = await call(Toolbox(manager.patterns(), manager), context(settings, []), "probe__ask_person")
        assert asked.is_error and "elicitation" in asked.error and "Workbench refuses" in asked.error
    finally:
        await manager.close()


async def test_cached_tools_of_a_server_that_then_fails_to_start(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = probe(env={"TOKEN": "${PROBE_TOKEN}"}, sandbox="off")
    monkeypatch.setenv("PROBE_TOKEN", "t")
    await (await started(with_servers(settings, server))).close()  # a start: its tools are cached
    monkeypatch.delenv("PROBE_TOKEN")
    manager = McpManager(with_servers(settings, server), settings.sessions_dir / S2, S2)
    box = Toolbox(manager.patterns(), manager)
    assert "probe__echo" in box.tools  # offered at once, before any start
    manager.start()
    try:
        failed = await asyncio.wait_for(call(box, context(settings, []), "probe__echo", '{"text": "x"}'), 60)
        assert failed.is_error and "MCP server probe is not running" in failed.error
        assert "PROBE_TOKEN, which is not set" in failed.error
    finally:
        await manager.close()


async def test_a_large_server_is_deferred_until_the_model_lists_its_tools(settings: Settings) -> None:
    settings = with_servers(settings, probe(sandbox="off"))
    settings.mcp_defer_above = 5
    manager = await started(settings)
    try:
        box = Toolbox(manager.patterns(), manager)
        names = [d.name for d in box.definitions()]
        assert names == ["mcp__tools"]
        (lister,) = box.definitions()
        assert "- probe: 14 tools (Test server for Workbench.)" in lister.description
        deferred_size = len(json.dumps([MessageToDict(d) for d in box.definitions()]))
        listed = await call(box, context(settings, []), "mcp__tools", '{"server": "probe"}')
        assert "probe__echo: Return the text unchanged." in listed.output
        assert "probe__echo" in box.tools and "mcp__tools" not in box.tools  # nothing deferred any more
        offered_size = len(json.dumps([MessageToDict(d) for d in box.definitions()]))
        assert offered_size > 5 * deferred_size
    finally:
        await manager.close()


async def test_a_configured_servers_tool_not_offered_gets_the_servers_state(settings: Settings, tmp_path: Path) -> None:
    """Issue 37 item 2: `probe__echo` before its server was up got "To run the program probe__echo, call
    bash: ... probe__echo ..."; a `SERVER__tool` name of a configured server gets that server's state."""
    silent = tmp_path / "silent.py"  # a "server" that never answers the handshake: still starting
    silent.write_text("import time\ntime.sleep(60)\n")
    slow = parse_server("slow", {"command": sys.executable, "args": [str(silent)], "sandbox": "off"})
    broken = parse_server("broken", {"command": str(tmp_path / "no-such-program"), "sandbox": "off"})
    off = parse_server("off", {"command": sys.executable, "args": [str(silent)], "enabled": False})
    many = probe("many", sandbox="off")
    settings = with_servers(settings, probe(sandbox="off"), slow, broken, off, many)
    settings.mcp_defer_above = 20
    manager = McpManager(settings, settings.sessions_dir / S1, S1)
    manager.start()
    try:
        for name in ("probe", "broken", "many"):
            await asyncio.wait_for(manager.connections[name].ready(), 60)
        settings.mcp_defer_above = 5  # `many` deferred from now on (the probe server is too, once listed)
        manager.revealed.add("probe")
        manager._changed()
        box = Toolbox([*Toolbox().builtin, *manager.patterns()], manager)
        ctx = context(settings, [])
        errors = {
            name: (await call(box, ctx, name, '{"text": "hi"}')).error
            for name in ("slow__echo", "broken__echo", "off__echo", "probe__nope", "many__echo")
        }
    finally:
        await manager.close()
    assert errors["slow__echo"].startswith("MCP server slow is still starting (")
    assert "slow__echo is not offered yet" in errors["slow__echo"]
    assert errors["broken__echo"].startswith("MCP server broken is not running (it could not be started")
    assert errors["off__echo"].startswith("MCP server off is switched off (enabled = false in its [mcp.servers.off]")
    assert errors["probe__nope"].startswith("MCP server probe has no tool nope; its tools: probe__echo, probe__add")
    assert errors["many__echo"] == (
        "MCP server many's tools are not offered until you list them (it has many): "
        'call {"name": "mcp__tools", "arguments": {"server": "many", "match": "echo"}}'
    )
    for error in errors.values():
        assert "bash" not in error and "..." not in error, error


async def test_a_server_with_2000_tools_is_deferred_by_default_and_listed_by_a_match(settings: Settings) -> None:
    """With the default settings, a server of 2,014 tools put about 750 KB of schemas into every
    request (more tools than providers accept); it is one line until the model lists some of its
    tools, and a listing without `match` offers none of so many: it asks for one."""
    manager = await started(with_servers(settings, probe(sandbox="off", env={"PROBE_MANY_TOOLS": "2000"})))
    try:
        box = Toolbox(manager.patterns(), manager)
        assert len(manager.connections["probe"].tools) == 2014
        size = len(json.dumps([MessageToDict(d) for d in box.definitions()]))
        assert size < 5_000, size
        ctx = context(settings, [])
        everything = await call(box, ctx, "mcp__tools", '{"server": "probe"}')
        assert "2,014 tools, too many to offer at once" in everything.output, everything.output
        assert "match" in everything.output and "probe__echo" not in box.tools
        some = await call(box, ctx, "mcp__tools", '{"server": "probe", "match": "generated_001"}')
        assert "probe__generated_0010: Look up records of kind 10" in some.output, some.output
        offered = [d.name for d in box.definitions()]
        assert [n for n in offered if n.startswith("probe__")] == [f"probe__generated_{i:04d}" for i in range(10, 20)]
        assert "mcp__tools" in offered  # the rest can still be listed
        assert len(json.dumps([MessageToDict(d) for d in box.definitions()])) < 20_000
    finally:
        await manager.close()
