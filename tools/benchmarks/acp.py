"""`workbench acp` against its baselines, in the same run (issue 33's targets).

    .venv/bin/python -m tools.benchmarks.acp      # or: .venv/bin/python tools/bench.py acp

- initialize: spawn of `workbench acp` to its initialize reply (the SDK's client side), against
  the spawn of a bare `python -c "import acp"` to its exit (the interpreter and the SDK: the floor).
- first chunk: session/prompt to the first agent_message_chunk, against Session.send to the first
  text_delta in this process (headless, in-process), both warm (an untimed turn first), turn for
  turn alternated, both to the same scripted server (in a process of its own). Target <= 1.2x.
- per turn: session/prompt to its response, against send to wait(). Target <= 1.1x.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from acp import spawn_agent_process, text_block  # noqa: E402

from workbench.config.settings import Settings  # noqa: E402

SPAWNS = 8
TURNS = 16
# the scripted server in a process of its own (as a real model server is): no thread of it shares
# the GIL with the headless session in this process; every request gets the same streamed answer
SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
from tests.scripted_server import ScriptedModel, reply
server = ScriptedModel()
server.add(*[reply("The answer is forty-two, as the file says. " * 8) for _ in range(100)])
print(server.url, flush=True)
sys.stdin.read()
server.close()
"""


class _Client:
    def __init__(self) -> None:
        self.first: float | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk" and self.first is None:
            self.first = time.monotonic()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the benchmark's turns need no review")

    def on_connect(self, conn: Any) -> None:
        pass


def _agent(data: Path, client: _Client, *flags: str) -> Any:
    cmd = [sys.executable, "-m", "workbench.cli.launch", "acp", "--data-dir", str(data), *flags]
    return spawn_agent_process(
        client, *cmd, env=dict(os.environ), transport_kwargs={"stderr": subprocess.DEVNULL, "shutdown_timeout": 10.0}
    )


async def _initialize(tmp: Path) -> tuple[list[float], list[float]]:
    replies, floors = [], []
    for i in range(SPAWNS):
        start = time.monotonic()
        async with _agent(tmp / f"init{i}", _Client(), "--model", "demo") as (conn, _):
            await conn.initialize(protocol_version=1)
            replies.append((time.monotonic() - start) * 1000)
        start = time.monotonic()
        bare = await asyncio.create_subprocess_exec(sys.executable, "-c", "import acp")
        await bare.wait()
        floors.append((time.monotonic() - start) * 1000)
    return replies, floors


async def _turns(url: str, tmp: Path) -> dict[str, list[float]]:
    """ACP turns and headless turns alternated (the machine's load falls on both alike)."""
    from workbench.pb import workbench_pb2 as pb
    from workbench.session.session import Session

    client = _Client()
    flags = ("--model", "openai/scripted", "--api-base", url, "--api-key", "k", "--approval", "auto")
    for name in ("acp-ws", "headless-ws"):
        (tmp / name).mkdir()
    settings = Settings(
        model="openai/scripted",
        api_base=url,
        api_key="k",
        workspace=tmp / "headless-ws",
        data_dir=tmp / "headless",
        approval="auto",
    )
    first: list[float] = []

    def on_event(event: pb.Event) -> None:
        if event.WhichOneof("kind") == "text_delta" and not first:
            first.append(time.monotonic())

    samples: dict[str, list[float]] = {"acp_first": [], "acp_turn": [], "head_first": [], "head_turn": []}
    async with _agent(tmp / "acp", client, *flags) as (conn, _):
        await conn.initialize(protocol_version=1)
        acp_session = (await conn.new_session(cwd=str(tmp / "acp-ws"))).session_id
        session = await Session.open(settings)
        session.subscribe(on_event, after=max((e.seq for e in session.events()), default=0))
        try:
            for i in range(TURNS + 1):  # the first turn of each is untimed
                client.first = None
                start = time.monotonic()
                await conn.prompt(session_id=acp_session, prompt=[text_block(f"question {i}")])
                end = time.monotonic()
                if i and client.first is not None:
                    samples["acp_first"].append((client.first - start) * 1000)
                    samples["acp_turn"].append((end - start) * 1000)
                first.clear()
                start = time.monotonic()
                session.send(f"question {i}")
                await session.wait()
                end = time.monotonic()
                if i and first:
                    samples["head_first"].append((first[0] - start) * 1000)
                    samples["head_turn"].append((end - start) * 1000)
        finally:
            await session.close()
    return samples


def _line(name: str, value: float, base_name: str, base: float, target: str = "") -> None:
    ratio = value / base if base else float("inf")
    print(f"  {name:<40} {value:8.1f} ms   vs {base_name:<32} {base:8.1f} ms   ratio {ratio:5.2f}x {target}")


def main() -> dict[str, float]:
    print("acp: `workbench acp` (the SDK's client over the process's stdio) vs its baselines")
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(ROOT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdout is not None
    url = server.stdout.readline().decode().strip()
    try:
        with tempfile.TemporaryDirectory(prefix="wbbench-acp-") as folder:
            tmp = Path(folder)
            os.environ["HOME"] = str(tmp)
            replies, floors = asyncio.run(_initialize(tmp))
            turns = asyncio.run(_turns(url, tmp))
    finally:
        server.communicate(b"", timeout=30)
    figures = {
        "initialize_ms": statistics.median(replies),
        "import_acp_ms": statistics.median(floors),
        "acp_first_chunk_ms": statistics.median(turns["acp_first"]),
        "headless_first_delta_ms": statistics.median(turns["head_first"]),
        "acp_turn_ms": statistics.median(turns["acp_turn"]),
        "headless_turn_ms": statistics.median(turns["head_turn"]),
    }
    _line(
        "spawn to initialize reply (median)",
        figures["initialize_ms"],
        "python -c 'import acp'",
        figures["import_acp_ms"],
    )
    print(f"  {'initialize samples':<40} {', '.join(f'{s:.0f}' for s in replies)} ms")
    _line(
        "prompt to first chunk (median)",
        figures["acp_first_chunk_ms"],
        "headless send to first delta",
        figures["headless_first_delta_ms"],
        "(target <= 1.2x)",
    )
    _line(
        "prompt to response (median)",
        figures["acp_turn_ms"],
        "headless send to wait",
        figures["headless_turn_ms"],
        "(target <= 1.1x)",
    )
    return figures


if __name__ == "__main__":
    main()
