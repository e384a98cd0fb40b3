"""The SQLite event log: sessions, agents and events; transactions with on_commit hooks.

Writing state and appending its events happen in one transaction. Subscribers are called
from on_commit hooks, only after COMMIT, never for a rolled-back write. Each event gets a
per-session sequence number, so a subscriber can resume from `after=seq`. Message-level
events commit at once; text deltas and output chunks are batched (about every 50 ms) and
merged, and any other event first flushes the batch so order is kept. A subscriber or hook
that raises is logged; the committed write stands, and the other subscribers still see it.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from workbench.pb import workbench_pb2 as pb

log = logging.getLogger("workbench")

Subscriber = Callable[[pb.Event], None]
BATCHED_KINDS = ("text_delta", "tool_output")
BATCH_SECONDS = 0.05

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0),
    workspace TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    status INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS agents (
    session_id TEXT NOT NULL,
    id TEXT NOT NULL,
    info BLOB NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""


def to_json(event: pb.Event) -> str:
    """One JSONL line: protobuf's JSON mapping with the proto (snake_case) field names."""
    return json_format.MessageToJson(event, preserving_proto_field_name=True, indent=None)


class Store:
    """One SQLite file (WAL). Used from one thread: the event loop's."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(_SCHEMA)
        self._depth = 0
        self._hooks: list[Callable[[], None]] = []
        self._seq: dict[str, int] = {}
        self._subscribers: list[tuple[str | None, Subscriber]] = []
        self._batch: list[pb.Event] = []
        self._flushed: list[pb.Event] = []  # batched events written in the open transaction
        self._flush_timer: asyncio.TimerHandle | None = None

    def close(self) -> None:
        self.flush()
        self.db.close()

    # --- transactions -------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A transaction; a nested one joins the outer. Hooks run after the outer COMMIT.

        When the write rolls back (an exception, or a COMMIT that fails) its hooks are dropped
        and the text deltas and output chunks it flushed go back to the batch.
        """
        outer = self._depth == 0
        if outer:
            self.db.execute("BEGIN IMMEDIATE")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            if outer:
                self._rollback()
            raise
        self._depth -= 1
        if outer:
            try:
                self.db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
            self._flushed = []
            hooks, self._hooks = self._hooks, []
            for hook in hooks:
                try:
                    hook()
                except Exception:  # the write is committed; a hook's bug must not undo or stop the rest
                    log.exception("an on_commit hook failed")

    def _rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self._hooks.clear()
        self._seq.clear()  # re-read from the file: the rolled-back numbers are free again
        flushed, self._flushed = self._flushed, []
        if flushed:  # still to be written, before anything batched since
            self._batch[:0] = flushed
            self._schedule_flush()

    def on_commit(self, hook: Callable[[], None]) -> None:
        """Run `hook` after the current transaction commits (at once outside a transaction)."""
        if self._depth == 0:
            hook()
        else:
            self._hooks.append(hook)

    # --- sessions and agents ------------------------------------------------------------

    def create_session(self, workspace: Path, model: str, prompt: str) -> str:
        session_id = uuid.uuid4().hex[:12]
        with self.transaction():
            self.db.execute(
                "INSERT INTO sessions (id, workspace, model, prompt) VALUES (?, ?, ?, ?)",
                (session_id, str(workspace), model, prompt),
            )
        return session_id

    def set_session_status(self, session_id: str, status: pb.RunStatus) -> None:
        with self.transaction():
            self.db.execute("UPDATE sessions SET status = ? WHERE id = ?", (int(status), session_id))

    def save_agent(self, session_id: str, info: pb.AgentInfo) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO agents (session_id, id, info) VALUES (?, ?, ?)",
                (session_id, info.id, info.SerializeToString()),
            )

    def agents(self, session_id: str) -> list[pb.AgentInfo]:
        rows = self.db.execute("SELECT info FROM agents WHERE session_id = ? ORDER BY rowid", (session_id,))
        return [pb.AgentInfo.FromString(row[0]) for row in rows]

    # --- events -------------------------------------------------------------------------

    def _next_seq(self, session_id: str) -> int:
        if session_id not in self._seq:
            row = self.db.execute("SELECT MAX(seq) FROM events WHERE session_id = ?", (session_id,)).fetchone()
            self._seq[session_id] = row[0] or 0
        self._seq[session_id] += 1
        return self._seq[session_id]

    def append(self, event: pb.Event) -> pb.Event:
        """Persist an event now (flushing any batch first); subscribers see it after COMMIT."""
        with self.transaction():
            self._write_batch()
            self._write(event)
        return event

    def append_batched(self, event: pb.Event) -> None:
        """Queue a text delta or output chunk; merged with the previous one of the same stream."""
        last = self._batch[-1] if self._batch else None
        kind = event.WhichOneof("kind")
        if (
            last is not None
            and last.WhichOneof("kind") == kind
            and (last.session_id, last.agent_id) == (event.session_id, event.agent_id)
        ):
            if kind == "text_delta":
                last.text_delta.text += event.text_delta.text
                return
            if kind == "tool_output" and last.tool_output.call_id == event.tool_output.call_id:
                last.tool_output.text += event.tool_output.text
                return
        self._batch.append(event)
        if self._flush_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_timer = loop.call_later(BATCH_SECONDS, self.flush)

    def _schedule_flush(self) -> None:
        """A flush soon (none without a running event loop: the next append or `close` writes it)."""
        if self._flush_timer is None and self._batch:
            try:
                self._flush_timer = asyncio.get_running_loop().call_later(BATCH_SECONDS, self.flush)
            except RuntimeError:
                pass

    def flush(self) -> None:
        if self._batch:
            with self.transaction():
                self._write_batch()

    def _write_batch(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        batch, self._batch = self._batch, []
        self._flushed.extend(batch)
        for event in batch:
            self._write(event)

    def _write(self, event: pb.Event) -> None:
        event.seq = self._next_seq(event.session_id)
        if not event.HasField("time"):
            event.time.GetCurrentTime()
        self.db.execute(
            "INSERT INTO events (session_id, seq, agent_id, kind, data) VALUES (?, ?, ?, ?, ?)",
            (
                event.session_id,
                event.seq,
                event.agent_id,
                event.WhichOneof("kind"),
                event.SerializeToString(),
            ),
        )
        self.on_commit(lambda: self._publish(event))

    def _publish(self, event: pb.Event) -> None:
        for session_id, subscriber in list(self._subscribers):
            if session_id is None or session_id == event.session_id:
                try:
                    subscriber(event)
                except Exception:  # logged; the event stays committed and the others still see it
                    log.exception("a subscriber failed on event %s (seq %d)", event.WhichOneof("kind"), event.seq)

    def subscribe(
        self, subscriber: Subscriber, session_id: str | None = None, after: int | None = None
    ) -> Callable[[], None]:
        """Call `subscriber` for each committed event; with `after`, replay stored ones first."""
        if after is not None and session_id is not None:
            for event in self.events(session_id, after=after):
                subscriber(event)
        entry = (session_id, subscriber)
        self._subscribers.append(entry)
        return lambda: self._subscribers.remove(entry) if entry in self._subscribers else None

    def events(self, session_id: str, after: int = 0) -> Iterator[pb.Event]:
        rows = self.db.execute(
            "SELECT data FROM events WHERE session_id = ? AND seq > ? ORDER BY seq", (session_id, after)
        )
        for (data,) in rows.fetchall():
            yield pb.Event.FromString(data)


class Recorder:
    """Events of one agent in one session: `emit("message", msg)` builds and appends the Event."""

    def __init__(self, store: Store, session_id: str, agent_id: str):
        self.store, self.session_id, self.agent_id = store, session_id, agent_id

    def event(self, kind: str, message: Any) -> pb.Event:
        event = pb.Event(session_id=self.session_id, agent_id=self.agent_id)
        event.time.GetCurrentTime()
        getattr(event, kind).CopyFrom(message)
        return event

    def emit(self, kind: str, message: Any) -> pb.Event:
        event = self.event(kind, message)
        if kind in BATCHED_KINDS:
            self.store.append_batched(event)
            return event
        return self.store.append(event)

    def output(self, call_id: str, text: str) -> None:
        self.emit("tool_output", pb.ToolOutputChunk(call_id=call_id, text=text))
