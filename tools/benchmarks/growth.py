"""Per-turn time as the session grows: turn 1, 100 and 500 with 10 KB tool results, against a bare
litellm loop that carries the same conversation, in the same run.

    .venv/bin/python -m tools.benchmarks.growth      # or: .venv/bin/python tools/bench.py growth

Both sides talk to the same instant scripted server on 127.0.0.1; every turn is one tool call
whose result is 10 KB, compaction off. A turn is the time between two model requests as the
server sees them (median of five turns around each mark). At turn 500 the request is about
5 MB: encoding it (and the server decoding it) is paid by both sides. The bare loop is what a
minimal agent does with litellm: a list of dicts, one streamed acompletion per turn, the tool
call appended and a 10 KB result after it. Growth is turn 500 minus turn 1.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.scripted_server import ScriptedModel, call, reply  # noqa: E402
from workbench.config import Settings  # noqa: E402

TURNS = 500
MARKS = (1, 100, 500)
RESULT = "".join(f"{i:05d} " + "x" * 94 + "\n" for i in range(100))  # 10 KB, 100 lines


def _register_tool() -> None:
    from workbench.tools import ToolContext, tool

    @tool(name="bench_10k")
    async def ten_kilobytes(ctx: ToolContext) -> str:
        """Return 10 KB of text."""
        return RESULT


def _per_turn(times: list[float]) -> dict[int, float]:
    """Milliseconds per turn around each mark (median of the gaps of up to five turns)."""
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(times)]
    out = {}
    for mark in MARKS:
        lo = max(0, min(mark - 1, len(gaps) - 5))
        out[mark] = statistics.median(gaps[lo : lo + 5])
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


async def _bare(server: ScriptedModel) -> dict[int, float]:
    from workbench.model import litellm

    lm = litellm()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "bench"}, {"role": "user", "content": "grow"}]
    server.request_times.clear()
    server.add(*[reply("", call("bench_10k")) for _ in range(TURNS)], reply("done"))
    tools = [{"type": "function", "function": {"name": "bench_10k", "parameters": {"type": "object"}}}]
    for _ in range(TURNS + 1):
        response = await lm.acompletion(
            model="openai/scripted",
            api_base=server.url,
            api_key="sk-bench",
            messages=messages,
            tools=tools,
            stream=True,
            num_retries=0,
            max_retries=0,
        )
        calls: dict[int, dict[str, Any]] = {}
        async for chunk in response:
            for tc in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
                entry = calls.setdefault(tc.index, {"id": tc.id, "name": "", "arguments": []})
                entry["name"] = entry["name"] or (tc.function.name or "")
                entry["arguments"].append(tc.function.arguments or "")
        if not calls:
            break
        wire = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": "".join(c["arguments"])}}
            for c in calls.values()
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": wire})
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": RESULT} for c in calls.values())
    return _per_turn(server.request_times)


async def _main(tmp: Path) -> dict[str, float]:
    _register_tool()
    server = ScriptedModel()
    try:
        bare = await _bare(server)
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
