"""The Agents pane: the root agent and its subagents as a tree, live.

Each row: status, name, spawn mode, elapsed time, tool-call count and last activity; a
finished child keeps its row with its final status in colour. Moving the cursor selects an
agent (the transcript follows). `c` or Delete cancels the selected subagent after a one-key
confirmation (y); the parent keeps running. A row whose agent waits for the person's review is
highlighted (`needs you`); Enter on it opens that review. Each row shows the agent's own tokens
and cost (— for a model litellm has no price for).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.style import Style
from rich.text import Span, Text
from textual import events
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from workbench.core import words
from workbench.core.activity import STARTED
from workbench.pb import workbench_pb2 as pb
from workbench.tui.keymap import bindings
from workbench.tui.text import duration, printable, tokens
from workbench.tui.view import ROOT, AgentRow, SessionView

STATUS_STYLE: dict[int, tuple[str, str]] = {
    pb.AGENT_STATUS_QUEUED: ("…", "dim"),
    pb.AGENT_STATUS_RUNNING: ("●", "yellow"),
    pb.AGENT_STATUS_WAITING: ("◌", "cyan"),
    pb.AGENT_STATUS_AWAITING_APPROVAL: ("?", "bold magenta"),
    pb.AGENT_STATUS_COMPLETED: ("✓", "green"),
    pb.AGENT_STATUS_FAILED: ("✗", "bold red"),
    pb.AGENT_STATUS_TIMED_OUT: ("⌛", "bold red"),
    pb.AGENT_STATUS_CANCELLED: ("⊘", "bold magenta"),
    pb.AGENT_STATUS_INTERRUPTED: ("!", "red"),
}


def coarse(seconds: float) -> str:
    """Elapsed time for a row: seconds for the first minute, then whole minutes (a long session's
    rows then change once a minute, not every second)."""
    return duration(seconds) if seconds < 60 else duration(seconds // 60 * 60).removesuffix("00s")


NEEDS_YOU = "bold #ffffff on #8b1c7a"  # a row whose agent waits for the person's review (contrast 8:1)


def usage_text(usage: pb.Usage) -> str:
    """An agent's own cost: `$0.0031`; `—` for a model litellm has no price for; "" before its first call
    (its tokens are in the line above its transcript)."""
    if not usage.calls and not usage.input_tokens and not usage.output_tokens:
        return ""
    return f"${usage.cost:.4f}" if usage.HasField("cost") else "—"


def row_label(row: AgentRow, now: float) -> Text:
    """Status, name, time and cost first (a narrow pane cuts the end, with an ellipsis):
    `✗ lint 11s $0.0031 · model call failed: 401 …`. The glyph's colour is the status; a row
    that waits for the person's review says `needs you` on a highlighted glyph, at any depth."""
    glyph, style = STATUS_STYLE.get(row.status, ("·", ""))
    text = Text()
    text.append(f"{glyph} ", style=NEEDS_YOU if row.reviews else style)
    text.append(printable(row.info.name or row.info.id), style="bold")
    if row.reviews:
        text.append(" needs you", style=NEEDS_YOU)
    if row.started:
        text.append(f" {coarse((row.ended or now) - row.started)}")
    if spent := usage_text(row.usage):
        text.append(f" {spent}", style="dim")
    activity = row.activity if row.activity not in ("", STARTED) else words.agent_status(row.status)
    text.append(f" · {printable(activity)}", style=f"italic {style}" if row.final else "italic dim")
    return text


def agent_line(row: AgentRow, now: float) -> Text:
    """The selected agent in one line above its transcript: status, elapsed, calls, tokens, cost,
    activity."""
    glyph, style = STATUS_STYLE.get(row.status, ("·", ""))
    text = Text()
    text.append(f"{glyph} ", style=style)
    text.append(printable(row.info.name or row.info.id), style="bold")
    text.append(f" {words.agent_status(row.status)}", style=style)
    if row.started:
        text.append(f" · {duration((row.ended or now) - row.started)}")
    text.append(f" · {row.tool_calls} call{'s' if row.tool_calls != 1 else ''}")
    usage = row.usage
    text.append(f" · ↑{tokens(usage.input_tokens)} ↓{tokens(usage.output_tokens)}")
    if usage.HasField("cost"):
        text.append(f" · ${usage.cost:.2f}")
    if row.activity and row.activity != words.agent_status(row.status):
        text.append(f" · {printable(row.activity)}", style="italic")
    text.no_wrap, text.overflow = True, "ellipsis"
    return text


def addressee(view: SessionView, selected: str) -> str:
    """Whom the prompt goes to (the prompt's title): the selected agent (steering a subagent), else the root."""
    row = view.agents.get(selected)
    if selected == ROOT or row is None:
        return "to main"
    who = printable(f"{row.info.name} ({row.info.id})" if row.info.name != row.info.id else row.info.id)
    if row.info.status in words.FINAL_AGENT_STATUSES:
        return f"{who} has finished: select main to write to the root"
    return f"to subagent {who}, at its next turn"


class AgentsPane(Tree[str]):
    """The agent tree. Its node data is the agent id."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("agents")

    class Selected(Message):
        def __init__(self, agent_id: str) -> None:
            super().__init__()
            self.agent_id = agent_id

    class CancelRequested(Message):
        def __init__(self, agent_id: str) -> None:
            super().__init__()
            self.agent_id = agent_id

    def __init__(self, clock: Callable[[], float], **kwargs: object) -> None:
        super().__init__("agents", **kwargs)  # type: ignore[arg-type]
        self.show_root = False
        self.auto_expand = False  # Enter on a row must not fold its children away
        self.guide_depth = 3
        self.clock = clock
        self.view: SessionView | None = None
        self.nodes_by_id: dict[str, TreeNode[str]] = {}
        self.pending_cancel = ""
        self._shown: dict[str, tuple[str, tuple[Span, ...]]] = {}

    def show_view(self, view: SessionView) -> None:
        self.view = view
        self.clear()
        self.nodes_by_id.clear()
        self._shown.clear()
        self.pending_cancel = ""
        self.sync(list(view.agents))

    def sync(self, changed: list[str] | set[str]) -> None:
        """Add rows of new agents and relabel changed ones."""
        if self.view is None:
            return
        now = self.clock()
        for agent_id in changed:
            row = self.view.agents.get(agent_id)
            if row is None:
                continue
            node = self.nodes_by_id.get(agent_id)
            if node is None:
                parent = self.nodes_by_id.get(row.info.parent_id, self.root)
                node = parent.add(row_label(row, now), data=agent_id, expand=True, allow_expand=False)
                parent.allow_expand = True
                self.nodes_by_id[agent_id] = node
            else:
                label = row_label(row, now)
                key = (label.plain, tuple(label.spans))
                if self._shown.get(agent_id) != key:  # unchanged rows are not redrawn
                    self._shown[agent_id] = key
                    node.set_label(label)

    def render_label(self, node: TreeNode[str], base_style: Style, style: Style) -> Text:
        """The row, cut with an ellipsis where the pane ends (never mid-word without one)."""
        text = super().render_label(node, base_style, style)
        levels, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            levels, parent = levels + 1, parent.parent
        room = self.scrollable_content_region.width - levels * self.guide_depth - 1
        if room > 0 and text.cell_len > room:
            text.truncate(room, overflow="ellipsis")
        return text

    def on_resize(self) -> None:
        self._invalidate()  # labels are cut to the width: cut them again

    def tick(self) -> None:
        """Relabel the rows whose elapsed time moves (running ones)."""
        if self.view is not None:
            self.sync([a for a, row in self.view.agents.items() if not row.final])

    def select_agent(self, agent_id: str, attempts: int = 50) -> None:
        """Put the cursor on the agent's row; the tree places a new row at its next refresh, so
        this tries again after each refresh until the cursor is there."""
        node = self.nodes_by_id.get(agent_id)  # None until the pane has drawn the agent's row
        if node is not None and node.line >= 0:
            self.move_cursor(node)
        if (node is None or self.cursor_node is not node) and attempts > 0:
            self.call_after_refresh(self.select_agent, agent_id, attempts - 1)

    @property
    def selected_agent(self) -> str:
        node = self.cursor_node
        return node.data if node is not None and node.data else ROOT

    class ReviewRequested(Message):
        """Enter on a row whose agent waits for a review: open its modal."""

        def __init__(self, agent_id: str) -> None:
            super().__init__()
            self.agent_id = agent_id

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        row = self.view.agents.get(event.node.data or "") if self.view else None
        if row is not None and row.reviews:
            event.stop()
            self.post_message(self.ReviewRequested(row.info.id))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        if event.node.data:
            self.post_message(self.Selected(event.node.data))

    def action_cancel_agent(self) -> None:
        agent_id = self.selected_agent
        row = self.view.agents.get(agent_id) if self.view else None
        if row is None:
            return
        if agent_id == ROOT:
            self.notify("The root agent is the run: Esc interrupts it. c cancels a subagent.", timeout=4)
            return
        if row.final:
            self.notify(f"{agent_id} has already ended ({words.agent_status(row.status)}).", timeout=4)
            return
        self.pending_cancel = agent_id
        self.border_subtitle = f"cancel {agent_id}? y: yes · any other key: no"
        self.add_class("confirming")

    def on_key(self, event: events.Key) -> None:
        if not self.pending_cancel:
            return
        event.stop()
        event.prevent_default()
        agent_id, self.pending_cancel = self.pending_cancel, ""
        self.border_subtitle = ""
        self.remove_class("confirming")
        if event.key == "y":
            self.post_message(self.CancelRequested(agent_id))
        else:
            self.notify(f"{agent_id} keeps running.", timeout=2)
