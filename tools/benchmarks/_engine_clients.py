"""The engine's clients and sessions at scale (issue 32's targets), each beside a baseline from
the same run; called by tools/benchmarks/engine.py with its warm engine (a helper, not a section).

- two `workbench attach ID --jsonl` clients on a 10,000-event run (2,000 read_file calls in
  one turn) each see every event once, seq 1..N; the run's wall time beside the same run
  in-process (`--no-engine --jsonl`);
- a client attaching at event 10,000 is live (has every committed event) within 0.5 s, beside
  the same client attaching at the run's start;
- 10 sessions running at once in the engine: the RSS of the engine's processes (broker, fork
  server, sessions) beside the idle engine's.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.scripted_server import ScriptedModel, call, reply
from workbench.pb import workbench_pb2 as pb
from workbench.service.client import RemoteSession
from workbench.service.start import connect_engine

CALLS = 2_000  # read_file calls in one turn: ~5 events each, 10,000 and more in all
SESSIONS = 10


def many_calls(delay: float) -> list[dict]:
    return [
        reply("", *[call("read_file", path=f"m{i}.txt") for i in range(CALLS)], delay=delay),
        reply("done", delay=3),
    ]


async def attach_until_live(data: Path, session_id: str) -> tuple[float, int]:
    """Seconds from connecting to the engine to having every event committed so far; that count."""
    last = committed(data, session_id)
    start = time.monotonic()
    client = await connect_engine(data, start=False, wait=False)
    try:
        described = await client.attach(session_id)
    finally:
        await client.close()
    session = await RemoteSession.attach(described)
    seen: list[int] = []
    got = asyncio.Event()

    def on_event(event: pb.Event) -> None:
        seen.append(event.seq)
        if event.seq >= last:
            got.set()

    session.subscribe(on_event, after=0)
    await asyncio.wait_for(got.wait(), 30)
    took = time.monotonic() - start
    await session.close(end=False)
    return took, len(seen)


def committed(data: Path, session_id: str) -> int:
    """The session's last committed seq, read from its store."""
    with sqlite3.connect(data / "workbench.db") as db:
        row = db.execute("SELECT MAX(seq) FROM events WHERE session_id = ?", (session_id,)).fetchone()
    return int(row[0] or 0)


def followers(base: list[str], env: dict[str, str], server: ScriptedModel, data: Path) -> dict[str, float]:
    """Two attached followers of a 10,000-event run, a late attacher, and the in-process run."""
    wb = [sys.executable, "-m", "workbench.cli.main"]
    server.requests.clear()
    server.add(*many_calls(delay=3))
    started = subprocess.run(
        [*base, "--engine", "require", "--detach", "go"], env=env, check=True, capture_output=True, text=True
    )
    session_id = started.stdout.strip()
    attach = [*wb, "attach", session_id, "--jsonl", "--data-dir", str(data)]
    clients = [
        subprocess.Popen(attach, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    early, early_count = asyncio.run(attach_until_live(data, session_id))
    until(lambda: len(server.requests) >= 2, 300)  # every call's events are committed
    late, late_count = asyncio.run(attach_until_live(data, session_id))
    seqs = []
    for client in clients:
        out, _err = client.communicate(timeout=300)
        seqs.append([int(json.loads(line)["seq"]) for line in out.splitlines()])
    whole = all(s == list(range(1, len(s) + 1)) for s in seqs) and len(seqs[0]) == len(seqs[1])
    server.requests.clear()
    server.add(*many_calls(delay=0))
    t = time.monotonic()
    here = subprocess.run([*base, "--no-engine", "--jsonl", "go"], env=env, check=True, capture_output=True, text=True)
    local_s = time.monotonic() - t
    return {
        "events_a": len(seqs[0]), "events_b": len(seqs[1]), "whole": float(whole),
        "in_process_events": len(here.stdout.splitlines()), "in_process_s": local_s,
        "early_s": early, "early_events": early_count, "late_s": late, "late_events": late_count,
    }  # fmt: skip


def until(ready: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError("the bench's run did not get there")
        time.sleep(0.05)


def ten_sessions(
    base: list[str], env: dict[str, str], server: ScriptedModel, size_of_engine: Callable[[], tuple[int, int]]
) -> tuple[int, int]:
    """The engine's size (kB: RSS summed, PSS) with SESSIONS detached sessions, each waiting on its model reply."""
    server.requests.clear()
    server.add(*[reply("slow", delay=30) for _ in range(SESSIONS)])
    for _ in range(SESSIONS):
        started = subprocess.run(
            [*base, "--engine", "require", "--detach", "wait"], env=env, capture_output=True, text=True
        )
        if started.returncode != 0:
            raise RuntimeError(f"a detached run failed: {started.stderr}")
    until(lambda: len(server.requests) >= SESSIONS, 300)
    return size_of_engine()
