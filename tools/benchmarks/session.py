"""The event log under the Session: appends per second, and the time to resume a session.

    .venv/bin/python -m tools.benchmarks.session      # or: .venv/bin/python tools/bench.py session

- append: 20,000 message events through `Recorder.emit`, 100 per transaction (as a turn's
  tool results commit), with on_commit publication to one subscriber, against a plain
  `executemany` of the same serialized rows into the same table, in the same run.
- resume: `Session.open(resume=ID)` of a stored session of 2,000 events (a conversation of
  500 turns with tool results), against reading those rows with one SELECT.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench.config.settings import Settings  # noqa: E402
from workbench.engine.recorder import Recorder  # noqa: E402
from workbench.engine.store import Store  # noqa: E402
from workbench.pb import workbench_pb2 as pb  # noqa: E402

EVENTS = 20_000
BATCH = 100
RESUME_EVENTS = 2_000


def bench_append(folder: Path) -> tuple[float, float]:
    store = Store(folder / "append.db")
    session = store.create_session(folder, "m", "p")
    seen = []
    store.subscribe(seen.append, session)
    rec = Recorder(store, session, "main")
    message = pb.Message(role=pb.ROLE_TOOL, tool_result=pb.ToolResult(call_id="c", name="bash", output="x" * 200))
    start = time.perf_counter()
    for _ in range(EVENTS // BATCH):
        with store.transaction():
            for _ in range(BATCH):
                rec.emit(message)
    ours = EVENTS / (time.perf_counter() - start)
    assert len(seen) == EVENTS
    rows = [(e.session_id, e.seq, e.agent_id, "message", e.SerializeToString()) for e in seen]
    store.close()

    db = sqlite3.connect(folder / "plain.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE TABLE events (session_id TEXT, seq INTEGER, agent_id TEXT, kind TEXT, data BLOB, "
        "PRIMARY KEY (session_id, seq))"
    )
    start = time.perf_counter()
    for i in range(0, EVENTS, BATCH):
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", rows[i : i + BATCH])
        db.execute("COMMIT")
    plain = EVENTS / (time.perf_counter() - start)
    db.close()
    return ours, plain


def bench_resume(folder: Path) -> tuple[float, float]:
    from workbench.session.session import Session

    settings = Settings(model="demo", workspace=folder, data_dir=folder / "data")
    store = Store(settings.db_path)
    session_id = store.create_session(folder, "demo", "p")
    rec = Recorder(store, session_id, "main")
    with store.transaction():
        store.save_agent(session_id, pb.AgentInfo(id="main", name="main", status=pb.AGENT_STATUS_COMPLETED))
        rec.emit(pb.RunStarted(prompt="p", system_prompt="system"))
        for turn in range((RESUME_EVENTS - 2) // 4):
            call = pb.ToolCall(id=f"c{turn}", name="read_file", arguments='{"path": "a.txt"}')
            rec.emit(pb.Message(role=pb.ROLE_ASSISTANT, text="reading", tool_calls=[call]))
            rec.emit(pb.ToolCallStarted(call=call))
            result = pb.ToolResult(call_id=call.id, name="read_file", output="line\n" * 200)
            rec.emit(pb.ToolCallFinished(result=result))
            rec.emit(pb.Message(role=pb.ROLE_TOOL, tool_result=result))
        rec.emit(pb.Message(role=pb.ROLE_ASSISTANT, text="done"))
    store.close()

    async def resume() -> float:
        start = time.perf_counter()
        session = await Session.open(settings, resume=session_id)
        took = time.perf_counter() - start
        root = session.tree.root
        assert root is not None and root.loop is not None and len(root.loop.messages) > 900
        await session.close()
        return took

    ours = min(asyncio.run(resume()) for _ in range(3))
    db = sqlite3.connect(settings.db_path)
    start = time.perf_counter()
    rows = db.execute("SELECT data FROM events WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    plain = time.perf_counter() - start
    assert len(rows) >= RESUME_EVENTS - 2
    db.close()
    return ours * 1000, plain * 1000


def main() -> None:
    from tools.bench import line

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ours, plain = bench_append(folder)
        print(f"session: event log appends ({EVENTS:,} events, {BATCH} per transaction, one subscriber)")
        line("Recorder.emit + on_commit publish", ours, "plain executemany", plain, unit="ev/s")
        print(f"  target >= 20,000 events/s: {'met' if ours >= 20_000 else 'NOT met'}")
        resumed, read = bench_resume(folder)
        print(f"session: resume a stored session of {RESUME_EVENTS:,} events")
        line("Session.open(resume=ID)", resumed, "one SELECT of its rows", read)
        print(f"  target < 300 ms: {'met' if resumed < 300 else 'NOT met'}")


if __name__ == "__main__":
    main()
