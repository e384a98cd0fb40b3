"""The SQLite event log: sessions, agents and events; transactions with on_commit hooks.

Writing state and appending its events happen in one transaction. Subscribers are called
from on_commit hooks, only after COMMIT, never for a rolled-back write. Each event gets a
per-session sequence number, so a subscriber can resume from `after=seq`. Three speeds:
- an event that changes what others read (an agent's status, an Inbox item, a queued
  prompt, ...) commits at once, in the transaction of its state;
- the record of a run (messages, tool calls, usage: recorder.GROUPED_KINDS) is queued and written at
  the end of the event loop's pass, one transaction for every agent's records of that pass;
- text deltas and output chunks are merged and written about every 50 ms (recorder.BATCHED_KINDS).
The queue is one list, written in order, and every write first writes what is queued before
it, so the order of events is the order of emits. A queued event is published after its
commit like any other; a process killed meanwhile loses only what was never committed. A
subscriber or hook that raises is logged; the committed write stands, and the other
subscribers still see it. The schema and its migrations are `engine/store_schema.py`; an
agent's side, which picks the speed of each event, is `engine/recorder.py`.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from google.protobuf import json_format

from workbench.core.words import ROOT_ID
from workbench.engine.redaction import redact
from workbench.engine.store_schema import prepare
from workbench.pb import workbench_pb2 as pb

log = logging.getLogger("workbench")

Subscriber = Callable[[pb.Event], None]
BATCH_SECONDS = 0.05  # text deltas and output chunks are merged for this long before a write


def to_json(event: pb.Event) -> str:
    """One JSONL line: protobuf's JSON mapping with the proto (snake_case) field names."""
    return json_format.MessageToJson(event, preserving_proto_field_name=True, indent=None)


class Store:
    """One SQLite file (WAL). Used from one thread: the event loop's."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            prepare(self.db, path)
        except BaseException:
            self.db.close()
            raise
        self._depth = 0
        self.on_failure: Callable[[BaseException], None] | None = None  # a batched flush failed
        self.secrets: list[bytes] = []  # never written: replaced by "[redacted]" in any event
        self._hooks: list[Callable[[], None]] = []
        self._seq: dict[str, int] = {}
        self._subscribers: list[tuple[str | None, Subscriber]] = []
        self._batch: list[pb.Event] = []  # queued events (batched and grouped), in emit order
        self._tail: list[str] = []  # text merged into the last queued event, joined when it is written
        self._flushed: list[pb.Event] = []  # queued events written in the open transaction
        self._flush_timer: asyncio.Handle | None = None  # the queue's write: at the pass's end, or a timer

    def close(self) -> None:
        try:
            self.flush()
        finally:
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

    def create_session(self, workspace: Path, model: str, prompt: str = "") -> str:
        session_id = uuid.uuid4().hex[:12]
        with self.transaction():
            self.db.execute(
                "INSERT INTO sessions (id, workspace, model, prompt, title, updated) VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, str(workspace), model, prompt, title_of(prompt), time.time()),
            )
        return session_id

    def set_session_status(self, session_id: str, status: pb.RunStatus) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sessions SET status = ?, updated = ? WHERE id = ?", (int(status), time.time(), session_id)
            )

    def set_session_title(self, session_id: str, prompt: str) -> None:
        """The first prompt names the session (its first line, cut short); later prompts do not."""
        with self.transaction():
            self.db.execute(
                "UPDATE sessions SET prompt = ?, title = ? WHERE id = ? AND title = ''",
                (prompt, title_of(prompt), session_id),
            )

    def set_session_usage(self, session_id: str, usage: pb.Usage) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sessions SET usage = ?, updated = ? WHERE id = ?",
                (usage.SerializeToString(), time.time(), session_id),
            )

    def sessions(self, session_id: str | None = None) -> list[pb.SessionInfo]:
        """Stored sessions, newest first (or the one named)."""
        query = "SELECT id, title, workspace, model, created, updated, status, usage FROM sessions"
        rows = (
            self.db.execute(query + " WHERE id = ?", (session_id,))
            if session_id
            else self.db.execute(query + " ORDER BY created DESC, rowid DESC")
        )
        found = []
        for sid, title, workspace, model, created, updated, status, usage in rows.fetchall():
            info = pb.SessionInfo(id=sid, title=title, workspace=workspace, model=model, status=status)
            info.created.FromNanoseconds(int(created * 1e9))
            info.updated.FromNanoseconds(int((updated or created) * 1e9))
            info.usage.ParseFromString(usage or b"")
            found.append(info)
        return found

    def root_statuses(self) -> dict[str, int]:
        """Each session's root agent status as stored (a running one in a dead process was cut off)."""
        rows = self.db.execute("SELECT session_id, info FROM agents WHERE id = ?", (ROOT_ID,)).fetchall()
        return {sid: pb.AgentInfo.FromString(info).status for sid, info in rows}

    def delete_session(self, session_id: str) -> None:
        with self.transaction():
            for table in ("events", "agents"):
                self.db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self.db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

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

    def append_grouped(self, event: pb.Event) -> None:
        """Queue a record of a run: written, with whatever else is queued, at the end of the event
        loop's pass (in an open transaction it joins that one; without a running loop, now)."""
        if self._depth:
            self.append(event)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.append(event)
            return
        self._queue(event)
        if self._flush_timer is None or isinstance(self._flush_timer, asyncio.TimerHandle):
            if self._flush_timer is not None:
                self._flush_timer.cancel()  # a batch timer: the pass's write takes the batch too
            self._flush_timer = loop.call_soon(self._timed_flush)

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
                self._tail.append(event.text_delta.text)
                return
            if kind == "tool_output" and last.tool_output.call_id == event.tool_output.call_id:
                self._tail.append(event.tool_output.text)
                return
        self._queue(event)
        if self._flush_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_timer = loop.call_later(BATCH_SECONDS, self._timed_flush)

    def _queue(self, event: pb.Event) -> None:
        self._join_tail()
        self._batch.append(event)

    def _join_tail(self) -> None:
        """Put the text merged into the last queued event into it (once: a `+=` per merge would
        copy the growing text each time)."""
        if self._tail:
            last = self._batch[-1]
            field = last.text_delta if last.WhichOneof("kind") == "text_delta" else last.tool_output
            field.text = field.text + "".join(self._tail)
            self._tail = []

    def _schedule_flush(self) -> None:
        """A flush soon (none without a running event loop: the next append or `close` writes it)."""
        if self._flush_timer is None and self._batch:
            try:
                self._flush_timer = asyncio.get_running_loop().call_later(BATCH_SECONDS, self._timed_flush)
            except RuntimeError:
                pass

    def flush(self) -> None:
        if self._batch:
            with self.transaction():
                self._write_batch()

    def _timed_flush(self) -> None:
        """The queue's own write (the pass's end, or the batch timer): a failure (a full disk) goes
        to `on_failure`, not to asyncio's log."""
        self._flush_timer = None
        try:
            self.flush()
        except Exception as err:
            self._batch.clear()  # it cannot be written; the run is ended by on_failure
            self._tail = []
            if self.on_failure is None:
                raise
            self.on_failure(err)

    def _write_batch(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        self._join_tail()
        batch, self._batch = self._batch, []
        self._flushed.extend(batch)
        for event in batch:
            self._write(event)

    def _write(self, event: pb.Event) -> None:
        event.seq = self._next_seq(event.session_id)
        if not event.HasField("time"):
            now = time.time_ns()
            event.time.seconds, event.time.nanos = now // 1_000_000_000, now % 1_000_000_000
        data = event.SerializeToString()
        if self.secrets and any(secret in data for secret in self.secrets):
            redact(event, self.secrets)
            data = event.SerializeToString()
        self.db.execute(
            "INSERT INTO events (session_id, seq, agent_id, kind, data) VALUES (?, ?, ?, ?, ?)",
            (event.session_id, event.seq, event.agent_id, event.WhichOneof("kind"), data),
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
        """Call `subscriber` for each committed event; with `after`, replay stored ones first.

        Refused inside an open transaction: the replay would read rows not yet committed, and
        their publication at COMMIT would deliver them a second time.
        """
        if self._depth:
            raise RuntimeError("subscribe() inside an open transaction; subscribe before or after it")
        if after is not None and session_id is not None:
            for event in self.events(session_id, after=after):
                subscriber(event)
        entry = (session_id, subscriber)
        self._subscribers.append(entry)
        return lambda: self._subscribers.remove(entry) if entry in self._subscribers else None

    def events(self, session_id: str, after: int = 0, page: int = 1000) -> Iterator[pb.Event]:
        """Stored events with seq > `after`, in order, read `page` rows at a time (a long session
        is never held whole; events committed while the caller iterates are included)."""
        while True:
            rows = self.db.execute(
                "SELECT seq, data FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (session_id, after, page),
            ).fetchall()
            for _, data in rows:
                yield pb.Event.FromString(data)
            if len(rows) < page:
                return
            after = rows[-1][0]


def title_of(prompt: str, limit: int = 60) -> str:
    """A session's title: the first prompt's first non-blank line, cut short (no model request)."""
    line = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
