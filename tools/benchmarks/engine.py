"""The engine service (issue 32): `workbench run` through a warm engine against the same run
in-process, to the same instant scripted server, in the same run.

    .venv/bin/python -m tools.benchmarks.engine      # or: .venv/bin/python tools/bench.py engine

- start to the first model request: `workbench run --engine require` with the engine warm,
  against `workbench run --no-engine` (the cold in-process start);
- per turn: a 20-turn run (`read_file` each turn) through the engine against in-process;
- memory: the idle engine's processes (the broker and its fork server, which holds litellm)
  against `import litellm` alone;
- clients and sessions at scale (_engine_clients.py): two followers of a 10,000-event run, a
  client attaching at event 10,000, 10 sessions running in one engine.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.scripted_server import ScriptedModel, call, reply  # noqa: E402
from tools.benchmarks._engine_clients import CALLS, SESSIONS, followers, ten_sessions  # noqa: E402
from workbench.service.place import engine_place  # noqa: E402

RUNS = 5
MAX_RSS_OF_LITELLM = "import litellm, resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
TURNS = 20


def _line(name: str, value: float, baseline_name: str, baseline: float, unit: str = "ms") -> None:
    ratio = value / baseline if baseline else float("inf")
    print(f"  {name:<44} {value:9.1f} {unit}   vs {baseline_name:<34} {baseline:9.1f} {unit}   ratio {ratio:6.2f}x")


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the fork server is started from a thread: its
    `/proc/PID/task/TID/children` is another task's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _pss_kb(pid: int) -> int:
    """Proportional set size: a page shared by n processes counts 1/n in each (the sessions
    share the fork server's litellm pages, which each one's RSS counts whole)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_kb(pid: int, size: Callable[[int], int] = _rss_kb) -> int:
    """`size` of `pid` and its descendants by ppid (the broker, its fork server, the sessions)."""
    return size(pid) + sum(_tree_kb(child, size) for child in _children(pid))


def main() -> None:
    server = ScriptedModel()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HOME": tmp, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        data = Path(tmp) / "d"
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        for i in range(TURNS):
            (workspace / f"a{i}.txt").write_text(f"{i}\n")
        base = [sys.executable, "-m", "workbench.cli.launch", "run", "--model", "openai/scripted"]
        base += ["--api-base", server.url, "--workspace", str(workspace), "--data-dir", str(data), "--sandbox", "off"]

        def first_request(mode: str) -> float:
            server.requests.clear()
            server.request_times.clear()
            server.add(reply("ok"))
            start = time.monotonic()
            subprocess.run([*base, "--engine", mode, "hi"], env=env, check=True, capture_output=True)
            return (server.request_times[0] - start) * 1000

        def per_turn(mode: str) -> float:
            server.requests.clear()
            server.request_times.clear()
            server.add(*[reply("", call("read_file", path=f"a{i}.txt")) for i in range(TURNS)], reply("done"))
            subprocess.run([*base, "--engine", mode, "go"], env=env, check=True, capture_output=True)
            times = server.request_times
            return (times[-1] - times[0]) * 1000 / TURNS

        try:
            subprocess.run(
                [sys.executable, "-m", "workbench.cli.main", "engine", "start", "--data-dir", str(data)],
                env=env,
                check=True,
                capture_output=True,
            )
            first_request("require")  # the fork server's first fork, untimed
            warm = statistics.median(first_request("require") for _ in range(RUNS))
            cold = statistics.median(first_request("off") for _ in range(RUNS))
            print("engine: start to the first model request")
            _line("workbench run, warm engine", warm, "workbench run, in-process (cold)", cold)
            print(f"  target: <= 300 ms with a warm engine; measured {warm:.0f} ms")
            hosted = statistics.median(per_turn("require") for _ in range(3))
            local = statistics.median(per_turn("off") for _ in range(3))
            print("engine: per turn (one read_file of another file each turn), 20 turns")
            _line("through the engine", hosted, "in-process", local)
            pid = int(engine_place(data).lock.read_text().strip())
            engine_kb = _tree_kb(pid)
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import litellm, resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
                ],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            print("engine: memory of an idle engine (broker + fork server)")
            _line("idle engine RSS", engine_kb / 1024, "import litellm alone (max RSS)", int(done.stdout) / 1024, "MB")
            seen = followers(base, env, server, data)
            print(f"engine: two `attach --jsonl` clients on a run of {CALLS:,} read_file calls")
            print(
                f"  client A {seen['events_a']:,.0f} events, client B {seen['events_b']:,.0f}, in-process run "
                f"{seen['in_process_events']:,.0f}; each seq 1..N once: {'yes' if seen['whole'] else 'NO'}"
            )
            _line(
                f"attach at event {seen['late_events']:,.0f}: live after",
                seen["late_s"] * 1000,
                f"attach at event {seen['early_events']:,.0f}",
                seen["early_s"] * 1000,
            )
            print(f"  target: live within 500 ms at event 10,000; measured {seen['late_s'] * 1000:.0f} ms")
            idle_pss = _tree_kb(pid, _pss_kb)
            busy_kb, busy_pss = ten_sessions(base, env, server, lambda: (_tree_kb(pid), _tree_kb(pid, _pss_kb)))
            print(f"engine: {SESSIONS} sessions running at once (each waiting on its model)")
            _line(f"engine PSS, {SESSIONS} sessions", busy_pss / 1024, "idle engine PSS", idle_pss / 1024, "MB")
            _line(f"engine RSS summed, {SESSIONS} sessions", busy_kb / 1024, "idle engine RSS", engine_kb / 1024, "MB")
            print(f"  per session: {(busy_pss - idle_pss) / 1024 / SESSIONS:.1f} MB PSS")
        finally:
            subprocess.run(
                [sys.executable, "-m", "workbench.cli.main", "engine", "stop", "--data-dir", str(data)],
                env=env,
                capture_output=True,
            )
            server.close()


if __name__ == "__main__":
    main()
