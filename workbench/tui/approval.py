"""The approval modal: a call the guard sent to review, and the person's answer.

It shows what the guard put in the review's event (`GuardDecision.shown`: the full command for
bash and tmux, a diff for write_file and edit_file, the URL for web_fetch), coloured line by
line as data, never as markup; the app reads no file for it. The person approves once (y),
approves this tool or this exact command for the session (a), or denies (n, or Enter in the
reason field) with an optional reason the model reads. `Approvals` shows one modal at a time,
in the order the reviews came, and closes a modal whose call was settled elsewhere (a
remembered approval covered it, the run was cancelled).

An agent that keeps repeating one call (the repeat detector's review, judge "repeats") gets
the same modal in other words: let it go on (y), send it a note (n, or Enter in the note
field: it reads the note as the person's words), or cancel the agent (c).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static

from workbench.core.safe_text import printable
from workbench.core.words import ROOT_ID
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import NotWaiting
from workbench.tui.keymap import bindings
from workbench.tui.text import diff_line_style

Answer = tuple[bool, str, bool]  # approve, reason, remember
CANCEL_AGENT = "cancel"  # the looping modal's third answer: cancel the agent
LATER = "later"  # Esc: the review is put aside and keeps waiting
LOOPING = "repeats"  # GuardDecision.judge of a looping agent's review (engine/looping.py)
Decide = Callable[[str, bool, str, bool], None]  # Session.decide(call_id, approve, reason, remember)
SHELL_TOOLS = ("bash", "tmux")
TASK_SHOWN = 300  # characters of a subagent's task in its modal


def styled(shown: str) -> Text:
    """The call's text as a Text: diff lines coloured, nothing parsed as markup."""
    text = Text()
    for line in shown.split("\n"):
        text.append(line + "\n", style="bold" if line.startswith("$ ") else diff_line_style(line))
    text.rstrip()
    return text


class ApprovalScreen(ModalScreen[Answer | str]):
    """One call under review; dismissed with (approve, reason, remember)."""

    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > #approval { width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1; }
    ApprovalScreen #approval-reason-text { color: $text-muted; }
    ApprovalScreen #approval-call { height: auto; max-height: 24; border: round $primary; }
    ApprovalScreen #approval-buttons { height: auto; }
    ApprovalScreen #reason { height: 1; border: none; padding: 0 1; background: $boost; }
    ApprovalScreen #approval-buttons Button { margin-right: 1; }
    """
    AUTO_FOCUS = "#approve"
    BINDINGS: ClassVar[list[BindingType]] = bindings("approval")

    def __init__(self, decision: pb.GuardDecision, agent: str = "", task: str = "") -> None:
        super().__init__()
        self.decision = decision
        self.agent = agent
        self.agent_task = task  # a subagent's task: what the person needs to judge its call

    @property
    def call_id(self) -> str:
        return self.decision.call_id

    @property
    def looping(self) -> bool:
        return self.decision.judge == LOOPING

    def compose(self) -> ComposeResult:
        if self.looping:
            yield from self._compose_looping()
            return
        call = self.decision.call
        who = f" (agent {printable(self.agent)})" if self.agent and self.agent != ROOT_ID else ""
        always = "this exact command" if call.name in SHELL_TOOLS else f"every {printable(call.name)} call"
        with Vertical(id="approval") as box:
            box.border_title = "approval needed"
            yield Static(Text(f"Review: {printable(call.name)}{who}", style="bold"), id="approval-title")
            yield Static(Text(printable(self.decision.reason)), id="approval-reason-text")
            yield from self._task_line()
            with VerticalScroll(id="approval-call"):
                yield Static(styled(printable(self.decision.shown)), id="approval-shown")
            yield Input(placeholder="reason for a denial (optional; the model reads it); Enter denies", id="reason")
            hint = Text(f"For the session (a): approves {always} from now on", style="italic")
            yield Static(hint, id="always-hint")
            with Horizontal(id="approval-buttons"):
                yield Button(Content("Approve once (y)"), id="approve", variant="success", compact=True)
                yield Button(Content("For the session (a)"), id="approve-always", variant="primary", compact=True)
                yield Button(Content("Deny (n)"), id="deny", variant="error", compact=True)
        yield Footer()  # y, a, n: the modal's keys

    def _task_line(self) -> ComposeResult:
        if self.agent_task:
            task = " ".join(self.agent_task.split())
            shown = task if len(task) <= TASK_SHOWN else task[: TASK_SHOWN - 1] + "…"
            yield Static(Text(f"its task: {printable(shown)}", style="italic"), id="approval-task")

    def _compose_looping(self) -> ComposeResult:
        with Vertical(id="approval") as box:
            box.border_title = "agent looping"
            yield Static(
                Text(f"Agent {printable(self.agent or ROOT_ID)} is looping", style="bold"), id="approval-title"
            )
            yield Static(Text(printable(self.decision.reason)), id="approval-reason-text")
            yield from self._task_line()
            with VerticalScroll(id="approval-call"):
                yield Static(styled(printable(self.decision.shown)), id="approval-shown")
            yield Input(placeholder="a note for the agent (it reads it as your words); Enter sends it", id="reason")
            with Horizontal(id="approval-buttons"):
                yield Button(Content("Let it go on (y)"), id="approve", variant="success", compact=True)
                yield Button(Content("Send the note (n)"), id="deny", variant="primary", compact=True)
                yield Button(Content("Cancel the agent (c)"), id="cancel-agent", variant="error", compact=True)
        yield Footer()  # y, n, c: the modal's keys

    def on_mount(self) -> None:
        self.app.clear_notifications()  # a toast would sit on the modal (it draws above every screen)

    def on_resize(self, _: events.Resize) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The call's view takes what the screen leaves: the buttons stay on it (at 80x24 they were
        pushed off by a long diff, and Enter approved blind)."""
        box = self.query_one("#approval")
        others = sum(w.outer_size.height for w in box.children if w.id != "approval-call")
        room = int(self.size.height * 0.9) - others - 4  # the box's border, the footer, a spare line
        call = self.query_one("#approval-call")
        if call.styles.max_height is None or call.styles.max_height.value != max(3, min(24, room)):
            call.styles.max_height = max(3, min(24, room))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        {
            "approve": self.action_approve,
            "approve-always": self.action_approve_always,
            "deny": self.action_deny,
            "cancel-agent": self.action_cancel_agent,
        }[str(event.button.id)]()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_deny()

    def action_approve(self) -> None:
        self.dismiss((True, "", False))

    def action_approve_always(self) -> None:
        self.dismiss((True, "", True))

    def action_deny(self) -> None:
        self.dismiss((False, self.query_one("#reason", Input).value.strip(), False))

    def action_later(self) -> None:
        self.dismiss(LATER)

    def action_cancel_agent(self) -> None:
        if self.looping:
            self.dismiss(CANCEL_AGENT)


class Approvals:
    """The app's reviews: one modal at a time, answered through the session's `decide`.

    Esc puts the shown review aside (it keeps waiting, its agent's row stays highlighted); `show`
    brings one back (ctrl+r: the next one, from anywhere; Enter on an agent's row: that agent's).
    """

    def __init__(
        self,
        app: App[Any],
        decide: Decide,
        pending: Callable[[], list[pb.GuardDecision]],
        cancel: Callable[[str], None] = lambda agent_id: None,
        task_of: Callable[[str], str] = lambda agent_id: "",
        alert: Callable[[pb.GuardDecision, str], None] = lambda decision, agent_id: None,
    ) -> None:
        """`decide` and `pending`: the session's `decide` and `pending_reviews` (a replayed review
        that no longer waits is not shown); `cancel(agent_id)` cancels an agent (a looping one);
        `task_of(agent_id)` is a subagent's task, shown in its modal; `alert` tells a person who
        looked away that a review came (the bell, a desktop notification)."""
        self.app, self.decide, self.pending = app, decide, pending
        self.cancel, self.task_of, self.alert = cancel, task_of, alert
        self.waiting: list[tuple[pb.GuardDecision, str]] = []  # (decision, agent id), in arrival order
        self.aside: list[tuple[pb.GuardDecision, str]] = []  # put aside with Esc: shown again on request
        self.shown: ApprovalScreen | None = None

    def on_event(self, event: pb.Event) -> None:
        """Feed every committed event: reviews open a modal; a settled call closes its own."""
        kind = event.WhichOneof("kind")
        if kind == "guard_decision" and event.guard_decision.verdict == pb.GUARD_VERDICT_REVIEW:
            decision = event.guard_decision
            self.waiting.append((decision, event.agent_id))
            if decision.call_id in {d.call_id for d in self.pending()}:  # live, not a replayed one
                self.alert(decision, event.agent_id)
            self._show_next()
        elif kind == "review_decided":
            self._settled(event.review_decided.call_id)
        elif kind == "tool_call_finished":
            self._settled(event.tool_call_finished.result.call_id)

    def show(self, agent_id: str = "") -> bool:
        """Show a waiting review now: `agent_id`'s, else the oldest (put aside ones too). False: none."""
        if self.shown is not None:
            return True
        live = {d.call_id for d in self.pending()}
        queued = [(d, a) for d, a in [*self.waiting, *self.aside] if d.call_id in live]
        found = next(((d, a) for d, a in queued if not agent_id or a == agent_id), None)
        if found is None:
            return False
        self.aside = [(d, a) for d, a in self.aside if d.call_id != found[0].call_id]
        self.waiting = [found, *[(d, a) for d, a in self.waiting if d.call_id != found[0].call_id]]
        self._show_next()
        return True

    def _settled(self, call_id: str) -> None:
        self.waiting = [(d, a) for d, a in self.waiting if d.call_id != call_id]
        self.aside = [(d, a) for d, a in self.aside if d.call_id != call_id]
        if self.shown is not None and self.shown.call_id == call_id:
            screen, self.shown = self.shown, None
            if screen.is_active:
                screen.dismiss(None)  # type: ignore[arg-type]  # answered elsewhere: no answer
            self._show_next()

    def _show_next(self) -> None:
        if self.shown is not None:
            return
        waiting = {d.call_id for d in self.pending()}
        self.waiting = [(d, a) for d, a in self.waiting if d.call_id in waiting]
        if not self.waiting:
            return
        decision, agent = self.waiting.pop(0)
        self.shown = ApprovalScreen(decision, agent, self.task_of(agent) if agent != ROOT_ID else "")

        def answered(answer: Answer | str | None, call_id: str = decision.call_id, agent_id: str = agent) -> None:
            if self.shown is not None and self.shown.call_id == call_id:
                self.shown = None
            if answer == LATER:
                self.aside.append((decision, agent_id))  # it still waits; ctrl+r or Enter on its row shows it
                return
            if answer == CANCEL_AGENT:
                self.cancel(agent_id or ROOT_ID)  # its review ends with it
            elif isinstance(answer, tuple):
                try:
                    self.decide(call_id, *answer)
                except NotWaiting:
                    pass  # it stopped waiting meanwhile (the run was cancelled)
            self._show_next()

        self.app.push_screen(self.shown, answered)
