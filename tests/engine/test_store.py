"""The SQLite event log: commit-then-publish, rollback, nesting, seq, batching, replay."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from tests.waiting import until
from workbench.engine.recorder import Recorder
from workbench.engine.store import Store, to_json
from workbench.pb import workbench_pb2 as pb


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "wb.db")


def message(text: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_USER, text=text)


def test_wal_mode_and_seq_per_session(store: Store) -> None:
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    a, b = store.create_session(Path("/w"), "m", "p"), store.create_session(Path("/w"), "m", "p")
    ra, rb = Recorder(store, a, "main"), Recorder(store, b, "main")
    assert [ra.emit(message("1")).seq, ra.emit(message("2")).seq] == [1, 2]
    assert rb.emit(message("x")).seq == 1


def test_subscribers_see_events_only_after_commit(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    rec = Recorder(store, session, "main")
    with store.transaction():
        rec.emit(message("one"))
        with store.transaction():  # a nested transaction joins the outer one
            rec.emit(message("two"))
        assert seen == []
        # another connection does not see it either: nothing is committed yet
        other = sqlite3.connect(store.path)
        assert other.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    assert [e.message.text for e in seen] == ["one", "two"]


def test_rolled_back_transaction_publishes_nothing(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    rec = Recorder(store, session, "main")
    with pytest.raises(RuntimeError), store.transaction():
        rec.emit(message("lost"))
        with store.transaction():
            rec.emit(message("lost too"))
        raise RuntimeError("disk full")
    assert seen == [] and list(store.events(session)) == []
    assert rec.emit(message("kept")).seq == 1  # the rolled-back numbers are reused
    assert [e.message.text for e in seen] == ["kept"]


def test_state_and_event_in_one_transaction(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    info = pb.AgentInfo(id="a1", name="tests", status=pb.AGENT_STATUS_RUNNING)
    with pytest.raises(RuntimeError), store.transaction():
        store.save_agent(session, info)
        Recorder(store, session, "a1").emit(pb.AgentSpawned(agent=info))
        raise RuntimeError("crash")
    assert store.agents(session) == [] and list(store.events(session)) == []


async def test_deltas_are_batched_and_merged_and_keep_order(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    rec = Recorder(store, session, "main")
    for word in ["Hel", "lo ", "world"]:
        rec.emit(pb.TextDelta(text=word))
    assert seen == []  # not yet: batched
    await until(lambda: seen, what="the batch's timed write")
    assert [e.text_delta.text for e in seen] == ["Hello world"]
    rec.emit(pb.TextDelta(text="more"))
    rec.output("c1", "out")
    rec.emit(message("final"))  # a record of the run: written with the batch, in order, at the pass's end
    assert len(seen) == 1
    await asyncio.sleep(0)  # one pass of the event loop, not the batch's 50 ms
    assert [e.WhichOneof("kind") for e in seen[1:]] == ["text_delta", "tool_output", "message"]
    rec.emit(pb.TextDelta(text="again"))
    rec.emit(pb.Notice(text="now"))  # an event outside the groups commits at once, the batch first
    assert [e.WhichOneof("kind") for e in seen[4:]] == ["text_delta", "notice"]
    assert [e.seq for e in seen] == [1, 2, 3, 4, 5, 6]


def test_subscribe_after_seq_replays_then_goes_live(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    rec = Recorder(store, session, "main")
    for i in range(5):
        rec.emit(message(str(i)))
    seen: list[int] = []
    store.subscribe(lambda e: seen.append(e.seq), session, after=3)
    rec.emit(message("5"))
    assert seen == [4, 5, 6]


def test_events_survive_reopening(tmp_path: Path) -> None:
    store = Store(tmp_path / "wb.db")
    session = store.create_session(Path("/w"), "m", "p")
    Recorder(store, session, "main").emit(message("kept"))
    store.close()
    reopened = Store(tmp_path / "wb.db")
    assert [e.message.text for e in reopened.events(session)] == ["kept"]
    assert Recorder(reopened, session, "main").emit(message("next")).seq == 2


def test_jsonl_uses_proto_field_names(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    event = Recorder(store, session, "main").emit(pb.ToolCallStarted(call=pb.ToolCall(id="c1", name="bash")))
    line = to_json(event)
    assert '"session_id"' in line and '"agent_id": "main"' in line and '"tool_call_started"' in line
    assert '"seq": "1"' in line and '"time"' in line


async def test_a_rolled_back_write_keeps_the_batched_deltas_it_flushed(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    rec = Recorder(store, session, "main")
    rec.emit(pb.TextDelta(text="partial answer"))
    with pytest.raises(RuntimeError), store.transaction():
        rec.emit(message("lost"))  # flushes the batch into this transaction
        raise RuntimeError("crash")
    rec.emit(message("kept"))
    await asyncio.sleep(0)  # the pass's end writes the message, the deltas before it
    stored = [(e.seq, e.WhichOneof("kind")) for e in store.events(session)]
    assert stored == [(1, "text_delta"), (2, "message")]
    assert [e.seq for e in seen] == [1, 2] and seen[0].text_delta.text == "partial answer"


def test_a_failed_commit_publishes_nothing_later(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    rec = Recorder(store, session, "main")
    # a deferred constraint fails at COMMIT, not at the INSERT: a real failing COMMIT
    store.db.execute("PRAGMA foreign_keys=ON")
    store.db.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    store.db.execute("CREATE TABLE child (pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    with pytest.raises(sqlite3.IntegrityError), store.transaction():
        rec.emit(message("never committed"))
        store.db.execute("INSERT INTO child VALUES (42)")
    assert not store.db.in_transaction
    assert seen == [] and list(store.events(session)) == []
    rec.emit(message("kept"))
    assert [(e.seq, e.message.text) for e in seen] == [(1, "kept")]
    assert [e.message.text for e in store.events(session)] == ["kept"]


def test_a_raising_subscriber_neither_breaks_the_write_nor_the_others(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[str] = []

    def broken(event: pb.Event) -> None:
        raise ValueError("subscriber bug")

    store.subscribe(broken, session)
    store.subscribe(lambda e: seen.append(e.message.text), session)
    rec = Recorder(store, session, "main")
    with store.transaction():
        rec.emit(message("one"))
        rec.emit(message("two"))
    rec.emit(message("three"))  # the emitter does not see the subscriber's error
    assert seen == ["one", "two", "three"]
    assert [e.seq for e in store.events(session)] == [1, 2, 3]
    assert "subscriber bug" in caplog.text


async def test_deltas_of_two_sessions_are_not_merged(store: Store) -> None:
    a, b = store.create_session(Path("/w"), "m", "p"), store.create_session(Path("/w"), "m", "p")
    Recorder(store, a, "main").emit(pb.TextDelta(text="for a"))
    Recorder(store, b, "main").emit(pb.TextDelta(text="for b"))
    store.flush()
    assert [e.text_delta.text for e in store.events(a)] == ["for a"]
    assert [e.text_delta.text for e in store.events(b)] == ["for b"]


def test_emit_picks_the_event_member_from_the_message_type(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    rec = Recorder(store, session, "main")
    for message_ in (pb.Notice(text="n"), pb.RunFinished(status=pb.RUN_STATUS_FINISHED), message("m")):
        event = rec.emit(message_)
        assert getattr(event, event.WhichOneof("kind")) == message_
    assert [e.WhichOneof("kind") for e in store.events(session)] == ["notice", "run_finished", "message"]


async def test_a_failed_batched_flush_goes_to_on_failure_not_to_the_loop(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    failures: list[BaseException] = []
    store.on_failure = failures.append
    store.db.execute("PRAGMA query_only = ON")  # every write now fails, as on a full disk
    rec = Recorder(store, session, "main")
    loop_errors: list[dict] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: loop_errors.append(ctx))
    rec.emit(pb.TextDelta(text="streamed"))
    await until(lambda: failures, what="the batch's timed write to fail")
    assert len(failures) == 1 and isinstance(failures[0], sqlite3.Error)
    assert loop_errors == []
    store.db.execute("PRAGMA query_only = OFF")


def test_secrets_are_redacted_before_they_are_written(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    store.secrets = [b"sk-live-abcdefghijkl"]
    rec = Recorder(store, session, "main")
    result = pb.ToolResult(name="bash", output="OPENAI_API_KEY=sk-live-abcdefghijkl\n", notes=["sk-live-abcdefghijkl"])
    event = rec.emit(pb.ToolCallFinished(result=result))
    assert (
        "sk-live" not in event.tool_call_finished.result.output
        and "[redacted]" in event.tool_call_finished.result.output
    )
    assert b"sk-live" not in store.db.execute("SELECT data FROM events").fetchone()[0]
    assert event.tool_call_finished.result.notes == ["[redacted]"]


def test_events_are_read_in_pages_and_include_what_commits_meanwhile(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    rec = Recorder(store, session, "main")
    for i in range(10):
        rec.emit(message(str(i)))
    seen = []
    for event in store.events(session, after=2, page=3):
        seen.append(event.seq)
        if event.seq == 4:
            rec.emit(message("late"))  # committed while the reader is between pages
    assert seen == list(range(3, 12))


async def test_the_records_of_one_pass_are_one_transaction_published_after_it(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    commits: list[str] = []
    store.db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    other = sqlite3.connect(store.path)
    recorders = [Recorder(store, session, f"a{i}") for i in range(20)]
    for rec in recorders:  # twenty agents' records in one pass of the event loop
        rec.emit(pb.RunStarted(prompt="go"))
        rec.emit(message(f"from {rec.agent_id}"))
        rec.emit(pb.UsageUpdate())
    assert seen == [] and commits == []
    assert other.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0  # nothing committed yet
    await asyncio.sleep(0)
    assert len(commits) == 1 and len(seen) == 60
    assert [e.seq for e in seen] == list(range(1, 61))
    assert [e.agent_id for e in seen[1::3]] == [r.agent_id for r in recorders]
    assert other.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 60


async def test_state_that_others_read_commits_at_once_after_the_queued_records(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    rec = Recorder(store, session, "a1")
    rec.emit(message("the answer"))
    with store.transaction():  # an agent's end: its state and its event in one write
        store.save_agent(session, pb.AgentInfo(id="a1", status=pb.AGENT_STATUS_COMPLETED))
        rec.emit(pb.AgentFinished(agent_id="a1", status=pb.AGENT_STATUS_COMPLETED))
        store.on_commit(lambda: seen.append(pb.Event(agent_id="hook")))
    assert [e.WhichOneof("kind") or e.agent_id for e in seen] == ["message", "agent_finished", "hook"]
    rec.emit(message("inside a transaction a record joins it"))
    with store.transaction():
        rec.emit(message("joined"))
    assert [e.message.text for e in seen[3:]] == ["inside a transaction a record joins it", "joined"]


async def test_a_failed_write_of_the_queued_records_goes_to_on_failure(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    failures: list[BaseException] = []
    store.on_failure = failures.append
    seen: list[pb.Event] = []
    store.subscribe(seen.append, session)
    loop_errors: list[dict] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: loop_errors.append(ctx))
    store.db.execute("PRAGMA query_only = ON")  # every write now fails, as on a full disk
    Recorder(store, session, "main").emit(message("never written"))
    await until(lambda: failures, what="the pass's write to fail")
    assert len(failures) == 1 and isinstance(failures[0], sqlite3.Error)
    assert seen == [] and loop_errors == []
    store.db.execute("PRAGMA query_only = OFF")
    Recorder(store, session, "main").emit(pb.Notice(text="after"))
    assert [(e.seq, e.WhichOneof("kind")) for e in seen] == [(1, "notice")]  # no gap in seq


async def test_merged_deltas_keep_every_piece_across_a_rollback(store: Store) -> None:
    session = store.create_session(Path("/w"), "m", "p")
    rec = Recorder(store, session, "main")
    for i in range(1000):
        rec.output("c1", f"{i},")
    with pytest.raises(RuntimeError), store.transaction():
        store.flush()  # the merged chunk is written in this transaction, which then rolls back
        raise RuntimeError("crash")
    rec.output("c1", "end")  # merged into the chunk put back in the queue
    store.flush()
    (event,) = store.events(session)
    assert event.tool_output.text == "".join(f"{i}," for i in range(1000)) + "end"
