"""The Inbox of one agent: completions of its async children and messages from other agents.

Completion items are never dropped; message items are dropped oldest first when the bound is
reached, with a note. `pending` holds the children whose completion has not been read yet
(not arrived, or arrived but not drained), so the loop knows it must take another turn, or
wait, before it finishes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from workbench.core.words import AGENT_ENDED as STATUS_WORD
from workbench.pb import workbench_pb2 as pb

# A child that failed or ran out of time left its task undone (a cancelled one was stopped on
# purpose: no hint). Told only the cause, a parent may invent the result (docs/DECISIONS.md).
UNDONE = (pb.AGENT_STATUS_FAILED, pb.AGENT_STATUS_TIMED_OUT)
UNDONE_HINT = "its task is not done: do it yourself with your tools, or start a new subagent for it"


class Inbox:
    """Items change only after the write that records them commits (`on_commit`): a rolled-back
    put leaves the Inbox as it was, and no waiter is woken for it."""

    def __init__(
        self,
        limit: int = 100,
        on_put: Callable[[pb.InboxItem], object] | None = None,
        on_commit: Callable[[Callable[[], None]], None] = lambda hook: hook(),
        hints: bool = True,
    ):
        self.limit = limit
        self.hints = hints  # a failed child's item says what to do next (the recovery_hints setting)
        self.on_put = on_put
        self.on_commit = on_commit
        self.pending: set[str] = set()
        self._items: list[pb.InboxItem] = []
        self._dropped = 0
        self._changed = asyncio.Event()

    def expect(self, child_id: str) -> None:
        """A child was started whose completion will arrive here."""
        self.pending.add(child_id)

    def put(self, item: pb.InboxItem) -> None:
        """Record the item (`on_put`); it is in the Inbox once that write commits."""
        if self.on_put is not None:
            self.on_put(item)
        self.on_commit(lambda: self._add(item))

    def wake(self) -> None:
        """Wake a `wait` without an item (the person sent a prompt)."""
        self._changed.set()

    def _add(self, item: pb.InboxItem) -> None:
        if item.kind == pb.INBOX_KIND_MESSAGE and self.limit:  # 0: no limit
            messages = [i for i in self._items if i.kind == pb.INBOX_KIND_MESSAGE]
            if len(messages) >= self.limit:
                self._items.remove(messages[0])
                self._dropped += 1
        self._items.append(item)
        self._changed.set()

    def __len__(self) -> int:
        return len(self._items)

    def drain(self) -> list[pb.InboxItem]:
        items, self._items = self._items, []
        self._changed.clear()
        for item in items:
            if item.kind == pb.INBOX_KIND_COMPLETION:
                self.pending.discard(item.child_id)
        return items

    def drain_text(self) -> str:
        """Everything waiting, as the text of one user message ("" when empty); each item once."""
        items, dropped = self.drain(), self._dropped
        self._dropped = 0
        if not items and not dropped:
            return ""
        lines = [f"[Inbox: {len(items)} item{'s' if len(items) != 1 else ''}]"]
        if dropped:
            lines.append(f"(note: {dropped} older message(s) were dropped because the Inbox was full)")
        for item in items:
            who = f"{item.child_name or 'agent'} ({item.child_id})"
            if item.kind == pb.INBOX_KIND_MESSAGE:
                lines.append(f"- message from {who}: {item.text}")
                continue
            lines.append(f"- subagent {who} {STATUS_WORD.get(item.status, 'finished')}")
            if item.result:
                lines.append(f"  result: {item.result}")
            if item.cause:
                lines.append(f"  cause: {item.cause}")
            elif item.status != pb.AGENT_STATUS_COMPLETED and not item.result:
                lines.append("  cause: it ended without a result or a cause")
            if self.hints and item.status in UNDONE:
                lines.append(f"  {UNDONE_HINT}")
        return "\n".join(lines)

    async def wait(self, timeout: float | None) -> bool:
        """Wait until an item is waiting; False when `timeout` seconds (None: no limit) passed first."""
        if self._items:
            return True
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            return False
        return True
