#!/usr/bin/env python3
"""Benchmarks, by hand (not in CI). Each figure is printed with a baseline measured in the same run.

    .venv/bin/python tools/bench.py            # everything
    .venv/bin/python tools/bench.py loop cli   # some sections

Sections: loop (in-process overhead per tool call), turn (per-turn time of the loop against a
bare litellm call to the same instant scripted server), start (start to first model request
of `workbench run` against `import litellm`), and the sections in tools/benchmarks/.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.scripted_server import ScriptedModel, call, reply  # noqa: E402
from tools.benchmarks import alternating_calls, bare_calls  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402


def line(name: str, value: float, baseline_name: str, baseline: float, unit: str = "ms") -> None:
    ratio = value / baseline if baseline else float("inf")
    print(f"  {name:<44} {value:9.3f} {unit}   vs {baseline_name:<34} {baseline:9.3f} {unit}   ratio {ratio:6.2f}x")


async def timed(fn: Callable[[], Awaitable[object]], n: int) -> float:
    """Median milliseconds of n awaited calls."""
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def loop_overhead(n: int = 2000) -> tuple[float, float]:
    """Median ms of one trivial tool call through the loop, and of the tool called directly."""
    from workbench.engine.loop import AgentLoop
    from workbench.engine.recorder import Recorder
    from workbench.engine.store import Store
    from workbench.model.gateway import ModelClient, ModelSpec
    from workbench.tools.registry import REGISTRY, Toolbox, ToolContext, tool

    if "bench_noop" not in REGISTRY:

        @tool(name="bench_noop")
        async def noop(ctx: ToolContext, value: str = "x") -> str:
            """Return at once.

            Args:
                value: echoed
            """
            return value

    noop_fn = REGISTRY["bench_noop"].fn

    async def main() -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            settings = Settings(workspace=root, data_dir=root / "data")
            store = Store(settings.db_path)
            session = store.create_session(root, "bench", "bench")
            recorder = Recorder(store, session, "main")
            box = Toolbox(["bench_noop"])
            ctx = ToolContext(workspace=root, settings=settings, session_dir=root / "s", on_output=recorder.output)
            loop = AgentLoop(
                client=ModelClient(ModelSpec("demo")),
                toolbox=box,
                ctx=ctx,
                recorder=recorder,
                settings=settings,
            )
            direct_ctx = ctx.for_call("c")
            direct = await timed(lambda: noop_fn(ctx=direct_ctx, value="x"), n)
            tool_call = pb.ToolCall(id="c", name="bench_noop", arguments='{"value": "x"}')
            via_loop = await timed(lambda: loop._run_tools([tool_call]), n)
            store.close()
            return via_loop, direct

    return asyncio.run(main())


def bench_loop() -> None:
    """Loop overhead per tool call in-process: a trivial tool through the loop vs called directly."""
    via_loop, direct = loop_overhead()
    print("loop: one tool call through the loop (validate, invoke, feedback, 2 events committed)")
    line("through the loop", via_loop, "the tool called directly", direct)
    print(f"  overhead per tool call: {via_loop - direct:.3f} ms (target < 1 ms)")


def bench_turn(turns: int = 40) -> None:
    """Per-turn time of a Session (guard and sandbox on) against a bare litellm loop (a streamed
    call, then `bash -c true`) to the same instant server, and one model call as Workbench makes
    it against a bare call. The Session's server runs in a process of its own, as the baselines'
    does (a server thread in the loop's process would take its interpreter lock each request)."""
    from tools.benchmarks.harness import ServerInChild
    from workbench.session.session import Session

    server = ScriptedModel()
    try:

        async def main() -> tuple[float, float, float, float, int]:
            # the baselines: litellm with its defaults, in a process of their own
            bare_loop_ms = bare_calls(server, turns, at_once=False, runs=1, bash=True) * 1000
            ours_s, bare_s = alternating_calls(server, turns, rounds=5, root=str(ROOT))
            with tempfile.TemporaryDirectory() as tmp:
                ws = Path(tmp) / "ws"
                ws.mkdir()
                child = ServerInChild(turns)  # replies: bash `true N` (each call its own), then "done"
                try:
                    settings = Settings(
                        model="openai/scripted", api_base=child.url, api_key="k", workspace=ws, data_dir=Path(tmp) / "d"
                    )
                    session = await Session.open(settings)
                    try:
                        session.send("bench")
                        await session.wait()
                        results = [
                            e.tool_call_finished.result for e in session.events() if e.HasField("tool_call_finished")
                        ]
                    finally:
                        await session.close()
                finally:
                    child.close()
            ran = sum(1 for r in results if not r.is_error)
            gaps = [(b - a) * 1000 for a, b in itertools.pairwise(child.request_times)]
            return statistics.median(gaps[2:]), bare_loop_ms, ours_s * 1000, bare_s * 1000, ran

        per_turn, bare_loop_ms, ours_ms, bare_ms, ran = asyncio.run(main())
        print(f"turn: per-turn time (between model requests), a Session, each turn one bash `true N` ({ran} ran)")
        print("  (baselines: litellm with its defaults, in a process of their own)")
        line("workbench loop per turn (median)", per_turn, "bare loop: litellm call + bash -c true", bare_loop_ms)
        print("  target: workbench per turn <= 0.7x the bare loop")
        line("one model call (ModelClient.complete)", ours_ms, "bare litellm streamed call", bare_ms)
        print("  (each side in fresh processes, 5 alternating rounds: the medians of the rounds)")
        print(f"  harness's own part (per turn - its model call): {per_turn - ours_ms:.2f} ms, tool run included")
    finally:
        server.close()


BARE_FIRST_REQUEST = """
import asyncio, sys, litellm
litellm.suppress_debug_info = True
async def main():
    response = await litellm.acompletion(model="openai/scripted", api_base=sys.argv[1], api_key="k",
        messages=[{"role": "user", "content": "hi"}], stream=True, num_retries=0, max_retries=0)
    async for _ in response:
        pass
asyncio.run(main())
"""


def bench_start(runs: int = 3) -> None:
    """Start to first model request of `workbench run`, against `import litellm` alone and against a
    bare litellm script's first request (litellm's own first call pays ~0.1-0.3 s of lazy imports)."""
    server = ScriptedModel()

    def first_request(command: list[str], env: dict[str, str]) -> float:
        server.requests.clear()
        server.request_times.clear()
        server.add(reply("ok"))
        start = time.monotonic()
        subprocess.run(command, env=env, check=True, capture_output=True)
        return (server.request_times[0] - start) * 1000

    def first_bash_turn(command: list[str], env: dict[str, str]) -> float:
        """ms from the first model request to the second, the first reply asking for `bash true`
        (the session's tmux server and shell start in this turn unless started earlier)."""
        server.requests.clear()
        server.request_times.clear()
        server.add(reply("", call("bash", {"command": "true"})), reply("ok"))
        subprocess.run(command, env=env, check=True, capture_output=True)
        return (server.request_times[1] - server.request_times[0]) * 1000

    try:
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "HOME": tmp, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
            workbench = [sys.executable, "-m", "workbench.cli.launch", "run", "hi", "--model", "openai/scripted"]
            workbench += ["--api-base", server.url, "--workspace", tmp, "--data-dir", f"{tmp}/d"]
            firsts, bares, imports, bash_turns = [], [], [], []
            for _ in range(runs):
                # the import baseline ends when the import ends (not at interpreter exit): the child
                # prints CLOCK_MONOTONIC, which is one clock across processes on Linux
                start = time.monotonic()
                done = subprocess.run(
                    [sys.executable, "-c", "import litellm, time; print(time.monotonic())"],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                imports.append((float(done.stdout.split()[-1]) - start) * 1000)
                bares.append(first_request([sys.executable, "-c", BARE_FIRST_REQUEST, server.url], env))
                firsts.append(first_request(workbench, env))
                bash_turns.append(first_bash_turn(workbench, env))
        first, bare, imported = (statistics.median(x) for x in (firsts, bares, imports))
        print("start: process start to first model request")
        line("workbench run", first, "python start + import litellm", imported)
        line("workbench run", first, "bare litellm script, first request", bare)
        print(f"  beyond litellm's import: {first - imported:.0f} ms (target <= 300 ms)")
        print(f"  beyond a bare litellm script (workbench's own start-up): {first - bare:.0f} ms")
        turn = statistics.median(bash_turns)
        print(f"  first turn of a fresh process, one bash `true` (1st to 2nd request): {turn:.0f} ms")
    finally:
        server.close()


SECTIONS: dict[str, Callable[[], None]] = {"loop": bench_loop, "turn": bench_turn, "start": bench_start}


def main() -> None:
    for path in sorted((ROOT / "tools" / "benchmarks").glob("*.py")):
        if not path.stem.startswith("_"):  # _bare_tui.py and the like: helpers, not sections
            SECTIONS.setdefault(path.stem, importlib.import_module(f"tools.benchmarks.{path.stem}").main)
    wanted = sys.argv[1:] or list(SECTIONS)
    unknown = [w for w in wanted if w not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    for name in wanted:
        SECTIONS[name]()
        print()


if __name__ == "__main__":
    main()
