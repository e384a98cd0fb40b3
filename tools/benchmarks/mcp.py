"""MCP servers: the cost of a call through Workbench, and what configured servers cost the start.

    .venv/bin/python -m tools.benchmarks.mcp      # or: .venv/bin/python tools/bench.py mcp

1. A tool call of the probe server (tests/mcp/probe_server.py, over stdio, sandboxed) through
   Workbench (the registry's invoke of the MCP tool: arguments, the result through `to_result`,
   progress wiring) against the same call made with the SDK's `Client` directly on the same
   server process, interleaved, medians. Target: <= 1.5x. Beside it, what the sandbox costs a
   call: the SDK's call to that server against another instance of it run without a sandbox.
2. Prompt tokens of a first request with the probe server's 14 tools offered against the same
   server deferred (`mcp_defer_above`: one line in the `mcp__tools` tool), counted by litellm.
3. Start to the first model request of `workbench run` with three servers configured (their
   tools cached by an earlier start, the servers starting beside the request) against none,
   as new processes to the same scripted model server, medians of 5 each, alternating.
   Target: <= 1.05x.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.scripted_server import ScriptedModel, reply  # noqa: E402
from workbench.config.mcp_servers import parse_server  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402

PROBE = ROOT / "tests" / "mcp" / "probe_server.py"
CALLS = 300
TOKEN_MODEL = "gpt-4o"  # litellm's tokenizer for the count (tiktoken o200k)
STARTS = 5


async def _calls(tmp: Path) -> tuple[float, float, float]:
    from mcp import Client, StdioServerParameters

    from workbench.mcp.manager import McpManager
    from workbench.pb import workbench_pb2 as pb
    from workbench.tools.registry import Toolbox, ToolContext

    workspace = tmp / "ws"
    workspace.mkdir()
    server = parse_server("probe", {"command": sys.executable, "args": [str(PROBE)]})
    settings = Settings(workspace=workspace, data_dir=tmp / "data", mcp_servers={"probe": server})
    manager = McpManager(settings, tmp / "session", "bench")
    manager.start()
    direct = Client(StdioServerParameters(command=sys.executable, args=[str(PROBE)]))
    try:
        await manager.connections["probe"].ready()
        box = Toolbox(manager.patterns(), manager)
        ctx = ToolContext(workspace=workspace, settings=settings, session_dir=tmp / "session")
        same = manager.connections["probe"].client
        assert same is not None
        async with direct:
            ours, theirs, unsandboxed = [], [], []
            for i in range(CALLS):
                start = time.perf_counter()
                result = await box.invoke(pb.ToolCall(id=f"c{i}", name="probe__echo", arguments='{"text": "x"}'), ctx)
                ours.append(time.perf_counter() - start)
                assert result.output == "x", result.error
                start = time.perf_counter()
                await same.call_tool("echo", {"text": "x"})
                theirs.append(time.perf_counter() - start)
                start = time.perf_counter()
                await direct.call_tool("echo", {"text": "x"})
                unsandboxed.append(time.perf_counter() - start)
    finally:
        await manager.close()
    return tuple(statistics.median(x) * 1000 for x in (ours, theirs, unsandboxed))  # type: ignore[return-value]


async def _prompt_tokens(tmp: Path) -> tuple[int, int, int]:
    """Prompt tokens of a first request (system prompt, a prompt, every tool) with the probe server's
    tools offered, deferred behind mcp__tools, and with no server at all."""
    from workbench.engine.prompt import system_prompt
    from workbench.mcp.manager import McpManager
    from workbench.model.gateway import litellm, tools_to_wire
    from workbench.tools.registry import Toolbox

    workspace = tmp / "ws-tokens"
    workspace.mkdir()
    server = parse_server("probe", {"command": sys.executable, "args": [str(PROBE)], "sandbox": "off"})
    counts = []
    for defer, servers in ((0, {"probe": server}), (5, {"probe": server}), (0, {})):
        settings = Settings(workspace=workspace, data_dir=tmp / "data-tokens", mcp_servers=servers)
        settings.mcp_defer_above = defer
        manager = McpManager(settings, tmp / "session-tokens", "tokens")
        manager.start()
        try:
            for connection in manager.connections.values():
                await connection.ready()
            box = Toolbox([*Toolbox().tools, *manager.patterns()], manager)
            messages = [{"role": "system", "content": system_prompt(settings)}, {"role": "user", "content": "hi"}]
            tools = tools_to_wire(box.definitions())
            counts.append(litellm().token_counter(model=TOKEN_MODEL, messages=messages, tools=tools))
        finally:
            await manager.close()
    return counts[0], counts[1], counts[2]


def _config(home: Path, servers: int) -> Path:
    folder = home / "config" / "workbench"
    folder.mkdir(parents=True, exist_ok=True)
    tables = "".join(
        f'[mcp.servers.probe{i}]\ncommand = "{sys.executable}"\nargs = ["{PROBE}"]\n\n' for i in range(servers)
    )
    (folder / "config.toml").write_text(tables)
    return home / "config"


def _first_request(model: ScriptedModel, tmp: Path, servers: int) -> float:
    """Milliseconds from spawning `workbench run` to its first model request."""
    workspace = Path(tempfile.mkdtemp(dir=tmp))
    model.request_times.clear()
    model.add(reply("ok"))
    cmd = [sys.executable, "-m", "workbench.cli.launch", "run", "hi", "--model", "openai/scripted"]
    cmd += ["--api-base", model.url, "--workspace", str(workspace), "--data-dir", str(tmp / f"data{servers}")]
    env = {**os.environ, "HOME": str(tmp), "XDG_CONFIG_HOME": str(_config(tmp / f"home{servers}", servers))}
    start = time.monotonic()
    subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=ROOT)
    return (model.request_times[0] - start) * 1000


def main() -> dict[str, float]:
    print("mcp: a tool call through Workbench vs the SDK's Client; start to first request, 3 servers vs none")
    with tempfile.TemporaryDirectory(prefix="wbbench-mcp-") as tmp:
        ours, theirs, unsandboxed = asyncio.run(_calls(Path(tmp)))
        print(
            f"  {'MCP call through Workbench (median)':<44} {ours:9.3f} ms   vs SDK Client.call_tool "
            f"{theirs:9.3f} ms   ratio {ours / theirs:5.2f}x   (target <= 1.5x; same server process)"
        )
        print(
            f"  {'SDK call, the sandboxed server':<44} {theirs:9.3f} ms   vs the same server unsandboxed "
            f"{unsandboxed:9.3f} ms   ratio {theirs / unsandboxed:5.2f}x"
        )
        offered, deferred, none = asyncio.run(_prompt_tokens(Path(tmp)))
        print(
            f"  {'prompt tokens, probe server deferred':<44} {deferred:9d} tok  vs its 14 tools offered "
            f"{offered:9d} tok  ratio {deferred / offered:5.2f}x   (no server: {none} tok)"
        )
        model = ScriptedModel()
        try:
            _first_request(model, Path(tmp), 3)  # untimed: the servers' first start fills their tool cache
            with_servers, without = [], []
            for _ in range(STARTS):
                without.append(_first_request(model, Path(tmp), 0))
                with_servers.append(_first_request(model, Path(tmp), 3))
        finally:
            model.close()
    three, none = statistics.median(with_servers), statistics.median(without)
    print(
        f"  {'first request, 3 servers (median of 5)':<44} {three:9.1f} ms   vs no server "
        f"{none:9.1f} ms   ratio {three / none:5.2f}x   (target <= 1.05x)"
    )
    print(f"  {'samples with / without':<44} {[round(s) for s in with_servers]} / {[round(s) for s in without]} ms")
    return {
        "call_ms": ours,
        "sdk_call_ms": theirs,
        "first_request_3_ms": three,
        "first_request_0_ms": none,
        "tokens_offered": offered,
        "tokens_deferred": deferred,
    }


if __name__ == "__main__":
    main()
