"""100 async subagents, each one scripted turn: wall time against 1 child, and events per second.

    .venv/bin/python -m tools.benchmarks.agents      # or: .venv/bin/python tools/bench.py agents
    .venv/bin/python -m tools.benchmarks.agents --against OTHER_CHECKOUT [ROUNDS]   # before/after

A root agent creates N async children in one turn (N = 1, then 100), each child answers in one
instant scripted turn, and the root waits until every completion has reached its Inbox. The
scripted server runs in this process; the agent tree runs in a process of its own, like the
floors (a server in the tree's own process would take the tree's interpreter lock for every
request, a cost the floors do not pay), and imports litellm the way `workbench run` and the TUI
do (`model.preload`). One untimed warm-up run first (its first connection), then the median of
three runs each. Two floors, each in a process of its own with litellm's defaults: N bare
streamed calls to the same server all at once, and the very requests the tree sent (the root's
reply of N tool calls, the children's system prompt and tools) through bare litellm.
"""

from __future__ import annotations

import asyncio
import json
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

from tests.scripted_server import ScriptedModel, call, reply  # noqa: E402
from tools.benchmarks import bare_calls  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402

RUNS = 3
MANY = 100


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The model: the root creates as many async children as its prompt says, each child answers at once."""
    messages = body["messages"]
    task = next(m["content"] for m in messages if m["role"] == "user")
    if task.startswith("CHILD"):
        return reply(f"report of {task}")
    if not any(m["role"] == "assistant" for m in messages):
        children = int(task.split()[1])
        creates = [call("subagent", {"action": "create", "prompt": f"CHILD {i}"}) for i in range(children)]
        return reply("", *creates)
    return reply("all reported" if messages[-1]["content"].startswith("[Inbox") else "waiting")


async def run_tree(url: str, data: Path, children: int) -> dict[str, float]:
    """One run of a root that starts `children` async children and waits for them all."""
    from workbench.engine.agents import AgentTree
    from workbench.engine.store import Store

    settings = Settings(
        model="openai/scripted",
        api_base=url,
        api_key="sk-bench",
        workspace=data,
        data_dir=data / "data",
        max_running_children=children,
        max_total_children=children,
        max_turns=10 * children + 10,
    )
    store = Store(settings.db_path)
    session = store.create_session(settings.workspace, settings.model, "bench")
    events: list[pb.Event] = []
    store.subscribe(events.append, session)
    tree = AgentTree(settings, store, session)
    start, start_cpu = time.perf_counter(), time.process_time()
    outcome = await tree.run_root(f"ROOT {children} children: start them", ["subagent"])
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    await tree.close()
    store.close()
    items = [e.inbox_item for e in events if e.WhichOneof("kind") == "inbox_item" and e.agent_id == "main"]
    lost_or_twice = len(items) != children or len({i.child_id for i in items}) != children
    if outcome.status != pb.RUN_STATUS_FINISHED or lost_or_twice:
        raise SystemExit(f"bench run went wrong: {outcome.status} {outcome.reason!r}, {len(items)} Inbox items")
    spawned = [
        e.time.ToNanoseconds() for e in events if e.WhichOneof("kind") == "agent_spawned" and e.agent_id != "main"
    ]
    ended = [
        e.time.ToNanoseconds() for e in events if e.WhichOneof("kind") == "agent_finished" and e.agent_id != "main"
    ]
    span = (max(ended) - min(spawned)) / 1e9
    return {"wall": wall, "cpu": cpu, "events": len(events), "children_span": span}


async def _trees(url: str, tmp: Path) -> dict[str, list[dict[str, float]]]:
    from workbench.model.gateway import preload

    # litellm imported the way `workbench run` and the TUI import it: what the import built is
    # frozen out of the cyclic GC's collections (else each full collection walks it again)
    await asyncio.to_thread(preload().join)
    await run_tree(url, tmp / "warm", 1)  # the first connection
    one = [await run_tree(url, tmp / f"one{i}", 1) for i in range(RUNS)]
    many = [await run_tree(url, tmp / f"many{i}", MANY) for i in range(RUNS)]
    return {"one": one, "many": many}


def _trees_in_a_process(model: ScriptedModel, checkout: Path = ROOT) -> dict[str, list[dict[str, float]]]:
    """The warm-up and the timed trees, in a process of their own (replies queued here), with the
    workbench package of `checkout` (this module is run from this checkout's file)."""
    model.script.clear()
    model.add(*[answer] * ((1 + RUNS) * (3 * 1 + 20) + RUNS * (3 * MANY + 20)))
    code = (
        f"import sys; sys.path.insert(0, {str(checkout)!r}); sys.argv = ['agents', '--trees', {model.url!r}]; "
        f"import runpy; runpy.run_path({__file__!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=checkout,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, list[dict[str, float]]] = json.loads(done.stdout.splitlines()[-1])
    return result


SAME_REQUESTS = """
import asyncio, json, statistics, sys, time, litellm
litellm.suppress_debug_info = True
URL, RUNS = sys.argv[1], int(sys.argv[2])
root_first, children, root_rest = json.loads(sys.stdin.read())
async def one(body):
    extra = {"tools": body["tools"]} if body.get("tools") else {}
    response = await litellm.acompletion(model="openai/scripted", api_base=URL, api_key="sk-bench",
        messages=body["messages"], stream=True, num_retries=0, max_retries=0, **extra)
    async for _ in response:
        pass
async def tree():
    await one(root_first)
    await asyncio.gather(*[one(body) for body in children])
    for body in root_rest:
        await one(body)
async def main():
    await tree()
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        await tree()
        samples.append(time.perf_counter() - start)
    print(statistics.median(samples))
asyncio.run(main())
"""


def same_requests(model: ScriptedModel, runs: int = RUNS) -> float:
    """Seconds of the requests a tree of MANY children sent (its last timed run, as the server got them),
    sent again through bare litellm with its defaults in a process of its own: the root's first call,
    the children's all at once, then the root's later calls. The floor for the same work on the wire."""
    from tools.benchmarks import bare_env

    def is_child(body: dict[str, Any]) -> bool:
        return str(body["messages"][1]["content"]).startswith("CHILD")

    def of_a_tree(body: dict[str, Any]) -> bool:  # not a bare call's request
        return len(body["messages"]) >= 2 and body["messages"][0]["role"] == "system"

    first = max(i for i, b in enumerate(model.requests) if of_a_tree(b) and not is_child(b) and len(b["messages"]) == 2)
    bodies = [b for b in model.requests[first:] if of_a_tree(b)]
    root = [b for b in bodies if not is_child(b)]
    children = [b for b in bodies if is_child(b)]
    assert len(children) == MANY, len(children)
    model.script.clear()
    model.add(*[answer] * ((1 + runs) * len(bodies)))
    done = subprocess.run(
        [sys.executable, "-c", SAME_REQUESTS, model.url, str(runs)],
        input=json.dumps([root[0], children, root[1:]]),
        env=bare_env(),
        check=True,
        capture_output=True,
        text=True,
    )
    return float(done.stdout.split()[-1])


def _report(trees: dict[str, list[dict[str, float]]], floors: dict[str, float]) -> dict[str, float]:
    one, many = trees["one"], trees["many"]
    bare_one, bare_many, same = floors["bare_one"], floors["bare_many"], floors["same_requests"]

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    wall_one, wall_many = med(one, "wall"), med(many, "wall")
    events_many = med(many, "events")
    eps = statistics.median(r["events"] / r["wall"] for r in many)
    per_child = (wall_many - wall_one) / (MANY - 1)
    print(f"  {'1 async child, whole run':<44} {wall_one * 1000:9.1f} ms")
    print(
        f"  {f'{MANY} async children, whole run':<44} {wall_many * 1000:9.1f} ms   "
        f"ratio {wall_many / wall_one:5.2f}x   (+{per_child * 1000:.2f} ms per extra child)"
    )
    print(
        f"  {f'{MANY} children, first spawn to last finish':<44} {med(many, 'children_span') * 1000:9.1f} ms   "
        f"vs {MANY} bare streamed litellm calls at once {bare_many * 1000:9.1f} ms"
    )
    print(
        f"  {f'{MANY} async children, whole run':<44} {wall_many * 1000:9.1f} ms   vs {MANY} bare streamed litellm "
        f"calls at once {bare_many * 1000:9.1f} ms   ratio {wall_many / bare_many:5.2f}x   (target <= 1.3x)"
    )
    print(
        f"  {f'{MANY} async children, whole run':<44} {wall_many * 1000:9.1f} ms   vs the same requests "
        f"through bare litellm {same * 1000:9.1f} ms   ratio {wall_many / same:5.2f}x"
    )
    print(f"  {'1 bare streamed litellm call':<44} {bare_one * 1000:9.1f} ms")
    print(
        f"  {f'events, {MANY} children':<44} {events_many:9.0f}      {eps:,.0f} events/s committed   "
        f"(CPU of the tree's process {med(many, 'cpu') * 1000:.0f} ms)"
    )
    return {
        "one_child_s": wall_one,
        "many_children_s": wall_many,
        "ratio": wall_many / wall_one,
        "events_per_s": eps,
        "bare_many_s": bare_many,
        "same_requests_s": same,
    }


def _floors(model: ScriptedModel, runs: int) -> dict[str, float]:
    """The floors, each in a process of its own with litellm's defaults (after a tree has run)."""
    same = same_requests(model, runs)  # the requests of the tree that ran last
    model.script.clear()
    return {
        "same_requests": same,
        "bare_one": bare_calls(model, 1, at_once=True, runs=runs),
        "bare_many": bare_calls(model, MANY, at_once=True, runs=runs),
    }


def main() -> dict[str, float]:
    """Print 100 async one-turn children against 1, and events per second."""
    print(f"agents: {MANY} async children (one scripted turn each) vs 1 child, same run")
    model = ScriptedModel()
    try:
        trees = _trees_in_a_process(model)
        floors = _floors(model, RUNS)
    finally:
        model.close()
    return _report(trees, floors)


def against(other: Path, rounds: int) -> None:
    """This checkout's trees against another checkout's, in alternating processes, with the floors."""
    print(f"agents: {MANY} async children, this tree vs {other} ({rounds} alternating rounds), same run")
    model = ScriptedModel()
    walls: dict[str, list[float]] = {"this": [], "other": []}
    cpus: dict[str, list[float]] = {"this": [], "other": []}
    floors: list[dict[str, float]] = []
    try:
        for _ in range(rounds):
            for name, checkout in (("other", other), ("this", ROOT)):
                trees = _trees_in_a_process(model, checkout)
                walls[name].append(statistics.median(r["wall"] for r in trees["many"]))
                cpus[name].append(statistics.median(r["cpu"] for r in trees["many"]))
            floors.append(_floors(model, RUNS))
    finally:
        model.close()
    bare_many = statistics.median(f["bare_many"] for f in floors)
    same = statistics.median(f["same_requests"] for f in floors)
    print(
        f"  floors: {MANY} bare calls at once {bare_many * 1000:.1f} ms; "
        f"the same requests through bare litellm {same * 1000:.1f} ms"
    )
    for name in ("other", "this"):
        wall = statistics.median(walls[name])
        rounds_ms = " ".join(f"{w * 1000:.0f}" for w in walls[name])
        print(
            f"  {name + ':':<7} {MANY} children {wall * 1000:7.1f} ms (rounds {rounds_ms})   "
            f"ratio {wall / bare_many:5.2f}x to the bare calls, {wall / same:5.2f}x to the same requests   "
            f"(CPU {statistics.median(cpus[name]) * 1000:.0f} ms)"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--against"]:
        against(Path(sys.argv[2]).resolve(), int(sys.argv[3]) if len(sys.argv) > 3 else 3)
    elif sys.argv[1:2] == ["--trees"]:  # the tree side, in its own process (see _trees_in_a_process)
        with tempfile.TemporaryDirectory(prefix="wbbench-agents-") as tmp:
            print(json.dumps(asyncio.run(_trees(sys.argv[2], Path(tmp)))))
    else:
        main()
