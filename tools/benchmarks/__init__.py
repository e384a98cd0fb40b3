"""Benchmark sections of tools/bench.py, one module per area, and what they share."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def in_clean_home(prefix: str, run: Callable[[Path], Awaitable[T]]) -> T:
    """asyncio.run(run(folder)) with HOME set to a new empty folder (no person's config or caches)."""
    saved_home = os.environ.get("HOME")
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        os.environ["HOME"] = tmp
        try:
            return asyncio.run(run(Path(tmp)))
        finally:
            if saved_home is not None:
                os.environ["HOME"] = saved_home


# What workbench.model.gateway sets for litellm before importing it; a bare baseline runs without them.
WORKBENCH_LITELLM_ENV = ("MAX_BASE64_LENGTH_FOR_LOGGING",)


def bare_env() -> dict[str, str]:
    """The environment of a baseline process: litellm with its defaults (and the local cost map)."""
    env = {k: v for k, v in os.environ.items() if k not in WORKBENCH_LITELLM_ENV}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


BARE_CALLS = """
import asyncio, statistics, subprocess, sys, time, litellm
litellm.suppress_debug_info = True
URL, CALLS, AT_ONCE, RUNS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) == 1, int(sys.argv[4])
BASH = sys.argv[5] == "1"
async def one():
    response = await litellm.acompletion(model="openai/scripted", api_base=URL, api_key="sk-bench",
        messages=[{"role": "user", "content": "CHILD"}], stream=True, num_retries=0, max_retries=0)
    async for _ in response:
        pass
    if BASH:
        subprocess.run(["bash", "-c", "true"], check=True)
async def main():
    for _ in range(3):
        await one()
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        if AT_ONCE:
            await asyncio.gather(*[one() for _ in range(CALLS)])
        else:
            for _ in range(CALLS):
                await one()
        samples.append((time.perf_counter() - start) / (1 if AT_ONCE else CALLS))
    print(statistics.median(samples))
asyncio.run(main())
"""


def bare_calls(server: object, calls: int, at_once: bool, runs: int, bash: bool = False) -> float:
    """Seconds of bare streamed litellm calls to `server` (a tests.scripted_server.ScriptedModel), in
    a process of its own with litellm's defaults: the median per call (one after another) or per
    batch of `calls` at once; with `bash`, each call is followed by `bash -c true` (a bare agent
    loop's turn). Replies for the warm-up and every call are queued here."""
    import subprocess
    import sys

    from tests.scripted_server import ScriptedModel, reply

    assert isinstance(server, ScriptedModel)
    server.add(*[reply("report")] * (3 + calls * runs))
    args = [server.url, str(calls), "1" if at_once else "0", str(runs), "1" if bash else "0"]
    done = subprocess.run(
        [sys.executable, "-c", BARE_CALLS, *args], env=bare_env(), check=True, capture_output=True, text=True
    )
    return float(done.stdout.split()[-1])


WORKBENCH_CALLS = """
import asyncio, statistics, sys, time
sys.path.insert(0, sys.argv[3])
from workbench.model.gateway import ModelClient, ModelSpec
from workbench.pb import workbench_pb2 as pb
URL, CALLS = sys.argv[1], int(sys.argv[2])
client = ModelClient(ModelSpec("openai/scripted", api_base=URL, api_key="sk-bench"))
PROMPT = [pb.Message(role=pb.ROLE_USER, text="CHILD")]
async def main():
    for _ in range(3):
        await client.complete(PROMPT, [])
    start = time.perf_counter()
    for _ in range(CALLS):
        await client.complete(PROMPT, [])
    print((time.perf_counter() - start) / CALLS)
asyncio.run(main())
"""


def alternating_calls(server: object, calls: int, rounds: int, root: str) -> tuple[float, float]:
    """Seconds per streamed call: Workbench's ModelClient (from the checkout at `root`) and a bare
    litellm call with its defaults, each in fresh processes, in alternating rounds (so a machine's
    load drifts over both); the medians of the rounds' means."""
    import statistics
    import subprocess
    import sys

    from tests.scripted_server import ScriptedModel, reply

    assert isinstance(server, ScriptedModel)
    ours, bare = [], []
    for _ in range(rounds):
        server.add(*[reply("report")] * (3 + calls))
        done = subprocess.run(
            [sys.executable, "-c", WORKBENCH_CALLS, server.url, str(calls), root],
            env={**bare_env(), "PYTHONPATH": root},
            check=True,
            capture_output=True,
            text=True,
        )
        ours.append(float(done.stdout.split()[-1]))
        bare.append(bare_calls(server, calls, at_once=False, runs=1))
    return statistics.median(ours), statistics.median(bare)
