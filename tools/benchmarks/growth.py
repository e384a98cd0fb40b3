"""Per-turn time as the session grows: turn 1, 100 and 500 with 10 KB tool results, against a bare
litellm loop that carries the same conversation, in the same run.

    .venv/bin/python -m tools.benchmarks.growth      # or: .venv/bin/python tools/bench.py growth

Both sides talk to the same instant scripted server on 127.0.0.1; every turn is one tool call
whose result is 10 KB, compaction off. A turn is the time between two model requests as the
server sees them (median of five turns around each mark). At turn 500 the request is about
5 MB: encoding it (and the server decoding it) is paid by both sides. The bare loop is what a
minimal agent does with litellm: a list of dicts, one streamed acompletion per turn, the tool
call appended and a 10 KB result after it, in a process of its own with litellm's defaults.
Growth is turn 500 minus turn 1.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.scripted_server import ScriptedModel, call, reply  # noqa: E402
from tools.benchmarks import bare_env  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402

TURNS = 500
MARKS = (1, 100, 500)
SAMPLES = 9
RESULT = "".join(f"{i:05d} " + "x" * 94 + "\n" for i in range(100))  # 10 KB, 100 lines


def _register_tool() -> None:
    from workbench.tools.registry import ToolContext, tool

    @tool(name="bench_10k")
    async def ten_kilobytes(ctx: ToolContext) -> str:
        """Return 10 KB of text."""
        return RESULT


def _per_turn(times: list[float]) -> dict[int, float]:
    """Milliseconds per turn at each mark: the median gap of the nine turns ending there (turn 1:
    turns 3-11, after the first connection)."""
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(times)]
    out = {}
    for mark in MARKS:
        end = max(SAMPLES + 2, min(mark, len(gaps)))
        out[mark] = statistics.median(gaps[end - SAMPLES : end])
    return out


async def _workbench(server: ScriptedModel, tmp: Path) -> dict[int, float]:
    from tests.conftest import run_agent

    settings = Settings(
        model="openai/scripted",
        api_base=server.url,
        api_key="sk-bench",
        workspace=tmp,
        data_dir=tmp / "data",
        max_turns=TURNS + 10,
        compact_threshold=0,
    )
    server.request_times.clear()
    server.add(*[reply("", call("bench_10k")) for _ in range(TURNS)], reply("done"))
    run = await run_agent(settings, "grow", ["bench_10k"])
    assert run.outcome.text == "done", run.outcome
    return _per_turn(server.request_times)


BARE_LOOP = """
import asyncio, sys, litellm
litellm.suppress_debug_info = True
URL, TURNS, RESULT = sys.argv[1], int(sys.argv[2]), sys.argv[3]
TOOLS = [{"type": "function", "function": {"name": "bench_10k", "parameters": {"type": "object"}}}]
async def main():
    messages = [{"role": "system", "content": "bench"}, {"role": "user", "content": "grow"}]
    for _ in range(TURNS + 1):
        response = await litellm.acompletion(model="openai/scripted", api_base=URL, api_key="sk-bench",
            messages=messages, tools=TOOLS, stream=True, num_retries=0, max_retries=0)
        calls = {}
        async for chunk in response:
            for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                entry = calls.setdefault(tc.index, {"id": tc.id, "name": "", "arguments": []})
                entry["name"] = entry["name"] or (tc.function.name or "")
                entry["arguments"].append(tc.function.arguments or "")
        if not calls:
            return
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": "".join(c["arguments"])}}
            for c in calls.values()]})
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": RESULT} for c in calls.values())
asyncio.run(main())
"""


def _bare(server: ScriptedModel) -> dict[int, float]:
    """The bare loop in a process of its own: litellm as a minimal agent has it, with its defaults."""
    server.request_times.clear()
    server.add(*[reply("", call("bench_10k")) for _ in range(TURNS)], reply("done"))
    subprocess.run([sys.executable, "-c", BARE_LOOP, server.url, str(TURNS), RESULT], env=bare_env(), check=True)
    return _per_turn(server.request_times)


async def _main(tmp: Path) -> dict[str, float]:
    _register_tool()
    server = ScriptedModel()
    try:
        bare = _bare(server)
        ours = await _workbench(server, tmp)
    finally:
        server.close()
    for mark in MARKS:
        ratio = ours[mark] / bare[mark] if bare[mark] else float("inf")
        print(
            f"  {f'turn {mark}: workbench loop':<44} {ours[mark]:9.1f} ms   vs bare litellm loop "
            f"{bare[mark]:9.1f} ms   ratio {ratio:5.2f}x"
        )
    ours_growth, bare_growth = ours[MARKS[-1]] - ours[1], bare[MARKS[-1]] - bare[1]
    print(
        f"  {f'growth, turn {MARKS[-1]} - turn 1':<44} {ours_growth:9.1f} ms   vs bare litellm loop "
        f"{bare_growth:9.1f} ms   ratio {ours_growth / bare_growth if bare_growth else float('inf'):5.2f}x"
        "   (target <= 1.2x)"
    )
    return {"growth_ratio": ours_growth / bare_growth if bare_growth else float("inf")}


def main() -> dict[str, float]:
    """Print per-turn time at turns 1, 100 and 500 against the bare loop, and the growth ratio."""
    print(f"growth: per-turn time with 10 KB tool results, turn {', '.join(map(str, MARKS))} (compaction off)")
    with tempfile.TemporaryDirectory(prefix="wbbench-growth-") as tmp:
        return asyncio.run(_main(Path(tmp)))


if __name__ == "__main__":
    main()
