"""The Inbox: completions never dropped, messages bounded oldest first, each item read once."""

from __future__ import annotations

from workbench.engine.inbox import Inbox
from workbench.pb import workbench_pb2 as pb


def message(text: str) -> pb.InboxItem:
    return pb.InboxItem(kind=pb.INBOX_KIND_MESSAGE, child_id="a1", child_name="helper", text=text)


def completion(child_id: str) -> pb.InboxItem:
    return pb.InboxItem(kind=pb.INBOX_KIND_COMPLETION, child_id=child_id, status=pb.AGENT_STATUS_COMPLETED, result="ok")


def test_a_limit_of_0_keeps_every_message() -> None:
    """0 means no limit, as for every limit setting (a project config cannot use it to lift one)."""
    inbox = Inbox(0)
    inbox.expect("a2")
    for i in range(150):
        inbox.put(message(f"m{i}"))
    inbox.put(completion("a2"))
    text = inbox.drain_text()
    assert "dropped" not in text and "m0" in text and "m149" in text and "(a2) completed" in text
    assert not inbox.pending


def test_messages_past_the_limit_drop_the_oldest_and_completions_stay() -> None:
    inbox = Inbox(2)
    for i in range(3):
        inbox.expect(f"c{i}")
        inbox.put(completion(f"c{i}"))
        inbox.put(message(f"m{i}"))
    items = inbox.drain()
    assert [i.text for i in items if i.kind == pb.INBOX_KIND_MESSAGE] == ["m1", "m2"]
    assert [i.child_id for i in items if i.kind == pb.INBOX_KIND_COMPLETION] == ["c0", "c1", "c2"]
    assert not inbox.pending


def test_a_failed_or_timed_out_child_s_item_says_its_task_is_not_done_unless_hints_are_off() -> None:
    def ended(status: pb.AgentStatus) -> pb.InboxItem:
        return pb.InboxItem(kind=pb.INBOX_KIND_COMPLETION, child_id="a1", child_name="v", status=status, cause="x")

    for status, hinted in [
        (pb.AGENT_STATUS_FAILED, True),
        (pb.AGENT_STATUS_TIMED_OUT, True),
        (pb.AGENT_STATUS_CANCELLED, False),  # stopped on purpose
        (pb.AGENT_STATUS_COMPLETED, False),
    ]:
        for hints in (True, False):
            inbox = Inbox(hints=hints)
            inbox.put(ended(status))
            assert ("its task is not done" in inbox.drain_text()) == (hinted and hints), (status, hints)
