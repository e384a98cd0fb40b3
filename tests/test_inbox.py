"""The Inbox: completions never dropped, messages bounded oldest first, each item read once."""

from __future__ import annotations

import pytest

from workbench.inbox import Inbox
from workbench.pb import workbench_pb2 as pb


def message(text: str) -> pb.InboxItem:
    return pb.InboxItem(kind=pb.INBOX_KIND_MESSAGE, child_id="a1", child_name="helper", text=text)


def completion(child_id: str) -> pb.InboxItem:
    return pb.InboxItem(kind=pb.INBOX_KIND_COMPLETION, child_id=child_id, status=pb.AGENT_STATUS_COMPLETED, result="ok")


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_of_no_messages_drops_messages_but_keeps_completions(limit: int) -> None:
    inbox = Inbox(limit)
    inbox.expect("a2")
    inbox.put(message("one"))
    inbox.put(completion("a2"))
    inbox.put(message("two"))
    text = inbox.drain_text()
    assert "2 older message(s) were dropped" in text and "subagent agent (a2) completed" in text
    assert "one" not in text and "two" not in text
    assert not inbox.pending and inbox.drain_text() == ""
    inbox.put(message("three"))
    assert "1 older message(s) were dropped" in inbox.drain_text()


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
