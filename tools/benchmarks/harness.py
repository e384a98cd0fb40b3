"""The harness's own part of one turn, part by part, each with a baseline measured in the same run.

    .venv/bin/python -m tools.benchmarks.harness      # or: .venv/bin/python tools/bench.py harness

1. In the loop: a session's root agent against the instant scripted server, each turn one bash
   `true`, the guard on as in a headless session (auto mode, sandbox on). Per turn (from one
   model call's start to the next's), in order: the model call; from the reply to the tool's
   task starting (the reply's events; litellm's success logging when it runs on our loop);
   to the tool (the call's event, the repeats check, the guard with its decision event); the
   bash tool; to the next model call (the result's events, the next request). Run twice: the
   server in a process of its own (as a real model server is), and in this process, as
   `tools/bench.py turn` runs it, where its HTTP thread shares the GIL with the loop.
2. Each part alone, in alternating blocks with `subprocess.run(["bash", "-c", "true"])`: the
   bash tool without the guard and the loop (`Toolbox.invoke`) and its steps (the shell and
   the lock; the command file and the typed line; the wait for the shell's report of the end;
   reading the output and removing the files), the guard's check and its admit with the
   decision committed, one event committed, the loop's tool step with and without the guard,
   and the next request's build (`ModelClient.request`, 40 turns in). Wall time (median) and
   this process's CPU time per call (robust when the machine is busy: what waits on tmux and
   bash is not in it).

Timers wrap methods of the classes for the length of a measurement and are removed after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tools.benchmarks import in_clean_home  # noqa: E402
from workbench.config.settings import Settings  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402

TURNS = 60
BLOCKS = 8
PER_BLOCK = 25
# `true N`: each call different, as a model's are (the loop does not run one call a third time
# once it returned the same result twice: repeats.py)
TOOL_ALONE = "bash tool alone (Toolbox.invoke, no guard, no loop)"
IDLE = 0.01  # seconds: about a model call, in which tmux and the shell sleep (waking them costs)


class Timers:
    """Benchmark instrumentation: wraps methods of classes for the length of a `with`, recording
    when each call starts and ends (`marks`) and the milliseconds of each call (`samples`)."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float]] = []
        self.samples: dict[str, list[float]] = defaultdict(list)

    @contextlib.contextmanager
    def wrapped(self, targets: dict[str, tuple[type, str]]) -> Iterator[None]:
        saved = [(cls, attr, cls.__dict__[attr]) for cls, attr in targets.values()]
        for name, (cls, attr) in targets.items():
            setattr(cls, attr, self._wrap(name, getattr(cls, attr)))
        try:
            yield
        finally:
            for cls, attr, fn in saved:
                setattr(cls, attr, fn)

    def _record(self, name: str, start: float, end: float) -> None:
        self.marks += [(f"{name}>", start), (f"{name}<", end)]
        self.samples[name].append((end - start) * 1000)

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        record = self._record

        if asyncio.iscoroutinefunction(fn):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    record(name, start, time.perf_counter())

            return timed_async

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                record(name, start, time.perf_counter())

        return timed


def _line(name: str, ms: float, base_name: str = "", base: float = 0.0, cpu: float | None = None) -> None:
    cpu_text = f"  cpu {cpu:7.3f} ms" if cpu is not None else " " * 17
    text = f"  {name:<52} {ms:8.3f} ms{cpu_text}"
    if base_name:
        text += f"   vs {base_name:<22} {base:8.3f} ms   ratio {ms / base:5.2f}x"
    print(text)


# --- 1. in the loop ---------------------------------------------------------------------------------------

SEGMENTS = (
    ("model call (ModelClient.complete)", "model>", "model<"),
    ("from the reply to the tool's task starting", "model<", "tool task>"),
    ("from the tool's task to the tool (event, repeats, guard)", "tool task>", "invoke>"),
    ("the bash tool (Toolbox.invoke)", "invoke>", "invoke<"),
    ("from the tool's end to the next model call", "invoke<", "next>"),
)


def _loop_targets() -> dict[str, tuple[type, str]]:
    from workbench.engine.loop import AgentLoop
    from workbench.engine.recorder import Recorder
    from workbench.guard.guardrail import Guard
    from workbench.model.gateway import ModelClient
    from workbench.tools.registry import Toolbox

    targets = {
        "model": (ModelClient, "complete"),
        "tool task": (AgentLoop, "_run_tool"),
        "guard": (Guard, "admit"),
        "invoke": (Toolbox, "invoke"),
        "emit": (Recorder, "emit"),
    }
    with contextlib.suppress(ImportError, AttributeError):  # litellm's own: named when it is there
        from litellm.litellm_core_utils.litellm_logging import Logging

        if "dispatch_success_handlers" in Logging.__dict__:
            targets["litellm logging"] = (Logging, "dispatch_success_handlers")
    return targets


def _turns(marks: list[tuple[str, float]]) -> list[dict[str, float]]:
    """Per turn: each segment's ms, and within it the ms of events, the guard and litellm's logging."""
    starts = [i for i, (name, _) in enumerate(marks) if name == "model>"]
    turns = []
    for first, last in itertools.pairwise(starts):
        span = marks[first:last]
        at = {name: t for name, t in reversed(span)}  # the first of each
        at["next>"] = marks[last][1]
        if not all(k in at for k in ("model<", "tool task>", "invoke>", "invoke<")):
            continue
        turn: dict[str, float] = {}
        for label, a, b in SEGMENTS:
            turn[label] = (at[b] - at[a]) * 1000
            inside: dict[str, float] = defaultdict(float)
            opened: dict[str, float] = {}
            for name, t in span:
                kind, edge = name[:-1], name[-1]
                if kind == "emit" and "guard" in opened:
                    continue  # the guard's decision event: counted in the guard
                if edge == ">":
                    opened[kind] = t
                elif kind in opened and at[a] <= opened[kind] and t <= at[b]:
                    inside[kind] += (t - opened.pop(kind)) * 1000
            for kind in ("emit", "guard", "litellm logging"):
                turn[f"{label}/{kind}"] = inside.get(kind, 0.0)
        turn["turn"] = (at["next>"] - at["model>"]) * 1000
        turn["own"] = turn["turn"] - turn[SEGMENTS[0][0]]
        turn["events"] = sum(1 for name, _ in span if name == "emit<")
        turns.append(turn)
    return turns


SERVER_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.scripted_server import ScriptedModel, call, reply
server = ScriptedModel()
server.add(*[reply("", call("bash", {"command": f"true {i}"})) for i in range(int(sys.argv[2]))], reply("done"))
print(server.url, flush=True)
sys.stdin.read()
print(json.dumps(server.request_times), flush=True)
server.close()
"""


SERVER_PLACES = ((True, "in a process of its own"), (False, "in this process (its thread shares the GIL)"))


class ServerInChild:
    """The scripted server in a process of its own (as a real model server is): its HTTP thread
    does not share this process's GIL with the loop. request_times are CLOCK_MONOTONIC, one
    clock across processes on Linux."""

    def __init__(self, turns: int):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER_CHILD, str(ROOT), str(turns)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        self.request_times: list[float] = []

    def close(self) -> None:
        out, _ = self.proc.communicate("", timeout=30)
        self.request_times = json.loads(out.strip().splitlines()[-1])


async def _in_loop(home: Path, server_in_child: bool) -> dict[str, float]:
    from tests.scripted_server import ScriptedModel, call, reply
    from workbench.engine.agents import AgentTree
    from workbench.engine.recorder import Recorder
    from workbench.engine.store import Store
    from workbench.guard.guardrail import Guard
    from workbench.terminal.host import TerminalHost

    server: ScriptedModel | ServerInChild
    if server_in_child:
        server = ServerInChild(TURNS)
    else:
        server = ScriptedModel()
        server.add(*[reply("", call("bash", {"command": f"true {i}"})) for i in range(TURNS)], reply("done"))
    timers = Timers()
    folder = home / ("child-server" if server_in_child else "in-process-server")
    try:
        ws = folder / "ws"
        ws.mkdir(parents=True)
        settings = Settings(
            model="openai/scripted", api_base=server.url, api_key="k", workspace=ws, data_dir=folder / "data"
        )
        store = Store(settings.db_path)
        session_id = store.create_session(ws, settings.model, "bench")
        terminal = TerminalHost(
            f"wbbench-{session_id}", Recorder(store, session_id, "main").emit, data_dir=settings.data_dir
        )
        tree = AgentTree(settings, store, session_id, terminal=terminal, guard=Guard(settings))
        try:
            with timers.wrapped(_loop_targets()):
                outcome = await tree.run_root("bench", ["bash"])
        finally:
            await tree.close()
            store.close()
        assert outcome.status == pb.RUN_STATUS_FINISHED, outcome
    finally:
        server.close()
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(server.request_times)]
    turns = _turns(timers.marks)[3:]  # the first turns start the tmux server and the shell
    assert len(turns) >= TURNS - 5, f"the tool ran in only {len(turns)} of {TURNS} turns"
    found = {name: statistics.median(t[name] for t in turns) for name in turns[0]}
    found["turn at the server"] = statistics.median(gaps[3:])
    return found


def _print_loop(found: dict[str, float], bash_c: float, where: str) -> None:
    turn = found["turn"]
    print(f"harness: one turn in the loop ({TURNS} turns of bash `true`, guard on, sandbox on; medians per turn)")
    print(f"  the scripted server {where}")
    _line("per turn (a model call's start to the next one's)", turn)
    _line("  (per turn as the server sees it, request to request)", found["turn at the server"])
    for label, _, _ in SEGMENTS:
        _line(label, found[label])
        for kind, words in (("litellm logging", "litellm's success logging"), ("guard", "the guard (admit)")):
            if found.get(f"{label}/{kind}", 0.0) > 0.001:
                _line(f"  of it, {words}", found[f"{label}/{kind}"])
        if found.get(f"{label}/emit", 0.0) > 0.001 and label != SEGMENTS[0][0]:
            _line("  of it, events committed (outside the guard)", found[f"{label}/emit"])
    own = found["own"]
    _line("the harness's part (the turn minus its model call)", own, "bash -c true", bash_c)
    logging_ms = sum(found.get(f"{label}/litellm logging", 0.0) for label, _, _ in SEGMENTS[1:])
    if logging_ms > 0.001:
        _line("  less litellm's success logging (runs in it)", own - logging_ms, "bash -c true", bash_c)
    print(f"  events per turn: {found['events']:.0f} (each a SQLite commit)")


# --- 2. each part alone --------------------------------------------------------------------------------------


def _bash_c() -> float:
    start = time.perf_counter()
    subprocess.run(["bash", "-c", "true"], check=True)
    return (time.perf_counter() - start) * 1000


class Part:
    """A thing to time: an awaitable factory, timed in blocks; wall ms per call and CPU ms per call."""

    def __init__(
        self,
        name: str,
        run: Callable[[], Awaitable[object]] | None,
        sync: Callable[[], object] | None = None,
        idle: float = 0.0,
    ):
        self.name, self.run, self.sync, self.idle = name, run, sync, idle
        self.wall: list[float] = []
        self.cpu: list[float] = []

    async def block(self, n: int) -> None:
        cpu = time.process_time()
        for _ in range(n):
            if self.idle:  # untimed: what a turn's model call leaves tmux and bash (asleep)
                await asyncio.sleep(self.idle)
            start = time.perf_counter()
            if self.run is not None:
                await self.run()
            elif self.sync is not None:
                self.sync()
            self.wall.append((time.perf_counter() - start) * 1000)
        self.cpu.append((time.process_time() - cpu) * 1000 / n)

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


def _step_targets() -> dict[str, tuple[type, str]]:
    from workbench.terminal.bash_run import BashRun
    from workbench.terminal.host import TerminalHost

    return {
        "shell run": (TerminalHost, "run"),
        "1": (BashRun, "ready_shell"),
        "2": (BashRun, "start"),
        "2b": (TerminalHost, "type_run"),
        "3": (BashRun, "follow"),
        "4": (BashRun, "finish"),
    }


STEPS = (
    ("1", "1 the agent's shell (alive?)"),
    ("2", "2 the command file, the typed line"),
    ("2b", "  of it, the typed line (copy-mode, send-keys: replies)"),
    ("3", "3 the wait for the shell's report of the end"),
    ("4", "4 the output read, the files removed"),
)


async def _parts(home: Path) -> tuple[list[Part], dict[str, float]]:
    from workbench.engine.loop import AgentLoop
    from workbench.engine.recorder import Recorder
    from workbench.engine.store import Store
    from workbench.guard.guardrail import Guard
    from workbench.model.gateway import ModelClient, ModelSpec, litellm
    from workbench.terminal.host import TerminalHost
    from workbench.tools.registry import Toolbox, ToolContext

    litellm()  # first: a fork costs more in a bigger process (bash -c true: ~1.3 ms before, ~3 ms after)
    ws = home / "parts-ws"
    ws.mkdir()
    settings = Settings(workspace=ws, data_dir=home / "parts-data")
    store = Store(settings.db_path)
    session_id = store.create_session(ws, "bench", "bench")
    recorder = Recorder(store, session_id, "main")
    host = TerminalHost(f"wbbench-{uuid.uuid4().hex[:8]}", recorder.emit, data_dir=settings.data_dir)
    ctx = ToolContext(
        workspace=ws, settings=settings, session_dir=home / "parts-s", terminal=host, on_output=recorder.output
    )
    toolbox = Toolbox(["bash"])
    guard = Guard(settings, mode="auto")
    client = ModelClient(ModelSpec("openai/scripted", api_base="http://127.0.0.1:1", api_key="k"))

    def loop(with_guard: bool) -> AgentLoop:
        return AgentLoop(
            client=client,
            toolbox=toolbox,
            ctx=ctx,
            recorder=recorder,
            settings=settings,
            guard=guard if with_guard else None,
        )

    guarded, unguarded = loop(True), loop(False)
    ids = iter(range(10**9))

    def bash_call() -> pb.ToolCall:
        n = next(ids)
        return pb.ToolCall(id=f"b{n}", name="bash", arguments=json.dumps({"command": f"true {n}"}))

    history = [pb.Message(role=pb.ROLE_SYSTEM, text="You are a bench.")]
    for i in range(40):
        c = bash_call()
        history.append(pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[c]))
        history.append(pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id=c.id, output=f"out {i}")))
    tools = toolbox.definitions()
    started = pb.ToolCallStarted(call=bash_call())

    async def invoke() -> None:
        result = await toolbox.invoke(bash_call(), ctx)
        assert not result.is_error, result.error

    async def step(loop: AgentLoop) -> None:
        (result,) = await loop._run_tools([bash_call()])
        assert not result.is_error, result.error  # it ran (not refused, not blocked)

    async def admit() -> None:
        assert await guard.admit(bash_call(), agent_id="main", task="", emit=recorder.emit) is None

    parts = [
        Part("bash -c true (subprocess.run)", None, _bash_c),
        Part(TOOL_ALONE, invoke),
        Part(f"bash -c true, each after {IDLE * 1000:g} ms idle", None, _bash_c, idle=IDLE),
        Part(f"bash tool alone, each after {IDLE * 1000:g} ms idle", invoke, idle=IDLE),
        Part("guard check (modes and rules)", None, lambda: guard.check(bash_call())),
        Part("guard admit (check + its decision event committed)", admit),
        Part("one event committed (Recorder.emit)", None, lambda: recorder.emit(started)),
        Part("loop's tool step, no guard (2 events committed)", lambda: step(unguarded)),
        Part("loop's tool step with the guard (3 events committed)", lambda: step(guarded)),
        Part("the next request's build (ModelClient.request, 40 turns)", None, lambda: client.request(history, tools)),
    ]
    timers = Timers()
    try:
        for _ in range(20):  # start the server and the shell, warm up
            await invoke()
        for _ in range(BLOCKS):
            for part in parts:
                if part.name == TOOL_ALONE:
                    with timers.wrapped(_step_targets()):
                        await part.block(PER_BLOCK)
                else:
                    await part.block(PER_BLOCK)
    finally:
        await host.close()
        store.close()
    steps = {name: statistics.median(samples) for name, samples in timers.samples.items()}
    return parts, steps


def _print_parts(parts: list[Part], steps: dict[str, float]) -> float:
    base = parts[0]
    print(f"harness: each part alone ({BLOCKS} alternating blocks of {PER_BLOCK}; wall median, this process's CPU)")
    _line(base.name, base.median, cpu=base.cpu_median)
    by_name = {p.name: p for p in parts}
    for part in parts[1:]:
        if part.idle and part.run is not None:  # against bash -c true after the same idle time
            cold = next(p for p in parts if p.idle and p.run is None)
            _line(part.name, part.median, "bash -c true, as idle", cold.median, cpu=part.cpu_median)
            continue
        _line(part.name, part.median, "bash -c true", base.median, cpu=part.cpu_median)
        if part.name == TOOL_ALONE:
            shell = steps.get("shell run", 0.0)
            _line("  of it, the shell run (TerminalHost.run)", shell)
            for key, label in STEPS:
                _line(f"    {label}", steps.get(key, 0.0))
            listed = sum(steps.get(key, 0.0) for key in ("1", "2", "3", "4"))
            _line("    the lock, the run's set-up and the rest", shell - listed)
            _line("  of it, the tool around the run (arguments, output cap, result)", part.median - shell)
    plain = by_name["loop's tool step, no guard (2 events committed)"].median
    guarded = by_name["loop's tool step with the guard (3 events committed)"].median
    alone = by_name[TOOL_ALONE].median
    print(
        f"  the loop around the tool (its events, repeats, the task): {plain - alone:.3f} ms; the guard in the loop: "
        f"{guarded - plain:.3f} ms"
    )
    return base.median


async def _run(home: Path) -> dict[str, float]:
    parts, steps = await _parts(home)
    bash_c = _print_parts(parts, steps)
    figures = {p.name: p.median for p in parts}
    for in_child, where in SERVER_PLACES:
        found = await _in_loop(home, in_child)
        print()
        _print_loop(found, bash_c, where)
        figures.update({f"loop ({where}): {k}": v for k, v in found.items()})
    return figures


def main() -> dict[str, float]:
    """Print the harness's part of a turn, part by part, against `bash -c true` in the same run."""
    return in_clean_home("wbbench-harness-", _run)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()
