"""The Textual workbench: the parent loop, its subagents and the Inbox in live panes.

The app is a client of one session, which it holds through its `SessionClient`
(`tui/session_client.py`: open, close, send, cancel, the events queued for the app) by the
session's interface (`SessionPort`, session/port.py), and of committed events only. Its
subscriber only queues the event and posts one message, so no UI handler runs inside a commit
hook; events are applied to the view model in batches and only the changed widgets are touched.
The app holds what it composes: its widgets and how they show the view model (`Panes`), the
pacing of redraws (`Redraws`), the search (`TranscriptSearch`) and the reviews (`Approvals`).
Nothing on the path to the first frame imports litellm or the engine: they import in a thread
after the first frame.
"""

from __future__ import annotations

import dataclasses
import gc
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Input

from workbench.config.settings import Settings, effective_approval
from workbench.pb import workbench_pb2 as pb
from workbench.tui.agents_pane import AgentsPane
from workbench.tui.alert import alert_sequence, alert_text, ring
from workbench.tui.clipboard import copy_text
from workbench.tui.engine import EventsArrived, no_model_help, start_litellm_import
from workbench.tui.heap import freeze_after
from workbench.tui.inbox_pane import InboxPane
from workbench.tui.items import UserItem
from workbench.tui.keymap import PALETTE, bindings
from workbench.tui.panes import Panes
from workbench.tui.prompt_input import PromptInput
from workbench.tui.redraw import Redraws
from workbench.tui.search_bar import Match, SearchBar, TranscriptSearch
from workbench.tui.session_client import OpenRefused, SessionClient
from workbench.tui.text import printable
from workbench.tui.theme import MARKDOWN, THEMES, set_theme_before_parse
from workbench.tui.view import ROOT, Changes, SessionView
from workbench.tui.welcome import welcome

if TYPE_CHECKING:
    from workbench.session.port import SessionPort
    from workbench.tui.approval import Approvals

DEMO_PROMPT = "fix the login check in auth.go"
QUIT_WINDOW = 3.0  # seconds in which a second Ctrl+C quits
NARROW_SCREEN = 110  # columns: below this the side column (Agents, Inbox) narrows
OPEN_WAIT = 30.0  # seconds a quit waits for a session that is opening


class WorkbenchApp(App[int]):
    """The screen, its keys and the session it shows (through `self.client`)."""

    CSS_PATH = Path(__file__).with_name("workbench.tcss")  # also for subclasses in other folders
    TITLE = "workbench"
    BINDINGS: ClassVar[list[BindingType]] = bindings("app")  # every key is in workbench/tui/keymap.py

    def __init__(
        self,
        settings: Settings,
        prompt: str | None = None,
        resume: str | None = None,
        pick: bool = False,
        *,
        clock: Callable[[], float] = time.time,
        blink: bool = True,
        preload: bool = True,
        offline: bool = False,
    ) -> None:
        super().__init__()
        # libtmux (imported with the session, after the first frame) reads sys.stdout.encoding at
        # import; Textual's capture of stdout has none. Importing libtmux before the first frame
        # cost 35 ms of it; the capture gets the real stream's encoding instead.
        for capture in (self._capture_stdout, self._capture_stderr):
            capture.encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"  # type: ignore[attr-defined]
        set_theme_before_parse(self, THEMES.get(settings.theme, THEMES["dark"]))
        self.console.push_theme(MARKDOWN)  # inline code without rich's black box (theme.py)
        self.settings = settings
        self.detached = False  # left running in the engine (the exit's last line says how to come back)
        self.initial_prompt = prompt
        self.resume_id = resume
        self.pick = pick
        self.clock = clock
        self.blink = blink
        self.preload_litellm = preload
        self.offline = offline  # no session: shows only what `apply_events` is given (snapshots, benchmarks)
        self.client = SessionClient(lambda: self.post_message(EventsArrived()))
        self.approvals: Approvals | None = None  # reviews of the open session, one modal at a time
        self.last_alert = ""  # what the last review that came wrote to the terminal (bell, OSC 9/777)
        self.view = SessionView()
        self.selected = ROOT
        self._to_send: list[UserItem] = []  # prompts typed before the session opened, shown already
        self._last_ctrl_c = 0.0
        self.redraws = Redraws(self.set_timer, self.render_changes)
        # the screen's parts, kept at hand (a query would look at a modal screen when one is open)
        self.panes = p = Panes.make(clock, blink)
        self.header_bar, self.agents_pane, self.inbox_pane = p.header_bar, p.agents_pane, p.inbox_pane
        self.transcript, self.agent_line, self.search_bar = p.transcript, p.agent_line, p.search_bar
        self.search_info, self.working_line, self.setup = p.search_info, p.working_line, p.setup
        self.prompt_input, self.status_line = p.prompt_input, p.status_line
        self.search = TranscriptSearch(self.transcript, p.search_row, self.search_bar, self.search_info)

    @property
    def session(self) -> SessionPort | None:
        """The session shown (None before one opens)."""
        return self.client.session

    @property
    def session_id(self) -> str:
        """The last session opened (said on the way out)."""
        return self.client.session_id

    @property
    def matches(self) -> list[Match]:
        """The search's matches in the shown transcript."""
        return self.search.matches

    def _show_header(self) -> None:
        settings = self.session.settings if self.session else self.settings
        self.panes.show_header(self.view, settings.model, str(settings.workspace))

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield from self.panes.compose()

    def on_mount(self) -> None:
        self.agents_pane.border_title = "Agents"
        self.inbox_pane.border_title = "Inbox"
        self.setup.display = False
        self.panes.search_row.display = False
        self._show_header()
        if not self.offline and not self.pick:  # before the first prompt: what this session will use
            self.transcript.show_welcome(welcome(self.settings, effective_approval(self.settings, interactive=True)))
        self.panes.layout_side(self.view)
        self.prompt_input.focus()
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(self._start)

    def on_resize(self, event: events.Resize) -> None:
        """The new size is the event's: `self.size` may still be the previous one here."""
        self.screen.set_class(event.size.width < NARROW_SCREEN, "narrow")

    def on_key(self, event: events.Key) -> None:
        """A printable key no pane used goes to the prompt, which takes the focus."""
        if not event.is_printable or not event.character or len(self.screen_stack) > 1:
            return
        focused = self.focused
        if isinstance(focused, (PromptInput, Input)) or not self.prompt_input.display:
            return
        if event.key in self.screen.active_bindings:  # the focused pane's own key (c, y, t): it acted
            return
        event.stop()
        event.prevent_default()
        self.prompt_input.focus()
        self.prompt_input.insert(event.character)

    def action_focus_prompt(self) -> None:
        self.prompt_input.focus()

    def action_help(self) -> None:
        from workbench.tui.help_screen import KeysHelp  # each screen not shown at start loads when asked for

        if not isinstance(self.screen, KeysHelp):
            self.push_screen(KeysHelp())

    def _start(self) -> None:
        """After the first frame: the garbage collector (off until now when the console script
        started the app: cli/launch.py), litellm starts importing, then the session opens (or the picker shows)."""
        gc.enable()
        if self.offline:
            return
        if self.preload_litellm and self.settings.engine == "off":  # else the engine has it (or opening starts it)
            self.client.litellm_import = start_litellm_import()
        if self.pick:
            from workbench.tui.picker import pick  # each screen not shown at start loads when asked for

            self.run_worker(pick(self), group="session")
        elif not self.settings.model and not self.resume_id:
            self.setup.display = True
            self.status_line.message = "no model set"
        else:
            self.working_line.starting = "resuming the session…" if self.resume_id else "starting the engine…"
            self.open_session(self.settings, self.resume_id, self.initial_prompt)

    # --- the session -------------------------------------------------------------------

    def open_session(self, settings: Settings, resume: str | None, prompt: str | None) -> None:
        self.run_worker(self._open(settings, resume, prompt), group="session", exclusive=True)

    async def _open(self, settings: Settings, resume: str | None, prompt: str | None) -> None:
        from workbench.tui.approval import Approvals  # what is needed once a session opens loads after the first frame

        self.panes.say("resuming…" if resume else "opening the session…")
        await self._close_session()
        try:
            session = await self.client.open(settings, resume)
        except OpenRefused as refused:  # unknown id, another workspace, held elsewhere, the data folder
            self.problem(str(refused))
            return
        if session is None:
            return  # the app quit (or another session opened) meanwhile: that closed it
        self.settings = settings
        self.view = SessionView()
        self.view.transcript(ROOT).extend(self._to_send)  # typed while it opened: still shown, sent below
        self.view.model, self.view.workspace = settings.model, str(settings.workspace)
        self.view.session_id = session.id
        self.selected = ROOT
        self.transcript.show_welcome(welcome(settings, session.approval))
        self.panes.open(self.view, session.approval, session.settings, self.clock())
        self.approvals = Approvals(
            self,
            session.decide,
            session.pending_reviews,
            cancel=lambda agent_id: self._cancel_agent(agent_id),
            task_of=lambda agent_id: row.info.prompt if (row := self.view.agents.get(agent_id)) else "",
            alert=self._alert,
        )
        self.client.follow(session)
        self.run_worker(self._context_window(session), group="window")
        for text in [*([prompt] if prompt else []), *(item.text for item in self._to_send)]:
            self._send(text)
        self._to_send.clear()

    async def _context_window(self, session: SessionPort) -> None:
        """The model's window for the status line (the session looks it up in a thread: it needs litellm)."""
        self.status_line.window = await session.context_window()

    async def _close_session(self) -> None:
        self.approvals = None
        self.redraws.drop()
        await self.client.close()

    def problem(self, text: str) -> None:
        """A session that cannot open: said in the prompt area until another opens (ctrl+p offers ways on)."""
        self.panes.problem(text)
        self.notify(printable(text), severity="error", timeout=10, markup=False)

    # --- events: the subscriber only queues and posts ----------------------------------

    def _on_event(self, event: pb.Event) -> None:
        self.client.queue(event)

    def on_events_arrived(self, _: EventsArrived) -> None:
        """Fold the queued events into the view model now; redraw at most every RENDER_INTERVAL (redraw.py)."""
        batch = self.client.take_events()
        if not batch:
            return
        self.redraws.apply(self.view, batch)
        self.freeze_history(len(batch))
        if self.approvals is not None:  # a review opens its modal at once, not at the next render
            for event in batch:
                self.approvals.on_event(event)
        self.redraws.request()

    def apply_events(self, events: list[pb.Event]) -> None:
        """Apply events at once (snapshots and benchmarks feed fixed events this way)."""
        self.render_changes(self.view.apply(events))
        self.freeze_history(len(events))

    def freeze_history(self, events: int) -> bool:
        """A long history just applied (a resume's replay) leaves the collector's generations (tui/heap.py)."""
        return freeze_after(events)

    def render_changes(self, changes: Changes) -> None:
        with self.batch_update():
            self.panes.draw(self.view, changes, self.selected, self.clock())
            if changes.status:
                self._show_header()
            if changes.new_agents or changes.inbox:
                self.panes.layout_side(self.view)

    def on_agents_pane_cancel_requested(self, event: AgentsPane.CancelRequested) -> None:
        if self.session is not None:
            self._cancel_agent(event.agent_id)

    def _show_agent_line(self) -> None:
        self.panes.show_agent(self.view, self.selected, self.clock())

    def _tick(self) -> None:
        self.panes.tick(self.view, self.selected, self.clock())

    def _send(self, text: str) -> None:
        if refused := self.client.send(text, None if self.selected == ROOT else self.selected):
            self.notify(refused, severity="error", timeout=8, markup=False)

    def _alert(self, decision: pb.GuardDecision, agent_id: str) -> None:
        """A review came: the bell and a desktop notification (setting review_alert)."""
        self.last_alert = ring(self, alert_sequence(self.settings.review_alert, alert_text(decision, agent_id)))

    def action_next_review(self) -> None:
        """Open the next review that waits (ctrl+r, from anywhere) and select its agent."""
        self._open_review("")

    def on_agents_pane_review_requested(self, event: AgentsPane.ReviewRequested) -> None:
        self._open_review(event.agent_id)

    def _open_review(self, agent_id: str) -> None:
        waiting = self.view.next_review() if not agent_id else None
        target = agent_id or (waiting[0] if waiting else "")
        if self.approvals is None or not target or not self.approvals.show(target):
            self.notify("No review waits for you.", timeout=3)
            return
        self.agents_pane.select_agent(target)

    def _cancel_agent(self, agent_id: str) -> None:
        """Cancel one agent (from its row, or a modal: the run, for the root), in a worker."""
        self.notify(f"cancelling {printable(agent_id)}…", timeout=3, markup=False)
        self.run_worker(self._cancel(agent_id), group="cancel")

    async def _cancel(self, agent_id: str | None) -> None:
        if refused := await self.client.cancel(agent_id):
            self.notify(refused, severity="error", timeout=8, markup=False)

    async def _quit(self) -> None:
        if self.client.opening:  # Ctrl+C twice right after the first frame: the session opening
            self.status_line.message = "closing the session…"
            await self.client.wait_opening(OPEN_WAIT)
        await self._close_session()  # the run stops and the session's tmux server ends
        self.exit(0)

    async def action_detach(self) -> None:
        """Leave the session running in the engine and close the app (`workbench attach ID` returns)."""
        refused = await self.client.detach()
        if refused:
            self.notify(refused, severity="warning", timeout=5)
            return
        self.detached = True
        self.exit(0)

    async def action_quit(self) -> None:
        """Every way out (the palette's Quit too) closes the session first."""
        await self._quit()

    # --- input -------------------------------------------------------------------------

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        if self.session is None and not self.settings.model:
            self.setup.display = True  # the setup area above the prompt says how to set one
            self.notify("No model is set: see above the prompt.", severity="warning", timeout=4)
            return
        item = self.view.pending_prompt(self.selected, event.text, self.clock())  # on the screen at once
        self.transcript.add([item])
        if not self.view.busy:
            self.working_line.starting = "starting the engine…" if self.session is None else "starting…"
        if self.session is not None:
            self._send(event.text)
        else:
            self._to_send.append(item)  # sent as soon as the session is open

    def on_agents_pane_selected(self, event: AgentsPane.Selected) -> None:
        if event.agent_id != self.selected:
            self.selected = event.agent_id
            self.transcript.show(event.agent_id, self.view.transcript(event.agent_id))
            self._show_agent_line()
            if self.search_bar.display:
                self.search.run(self.search_bar.value)

    # --- search ------------------------------------------------------------------------

    def action_search(self) -> None:
        self.search.open()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is self.search_bar:
            self.search.typed(event.value)

    def on_search_bar_step(self, event: SearchBar.Step) -> None:
        self.search.step(event.step)

    def on_search_bar_closed(self, _: SearchBar.Closed) -> None:
        self.search.close()

    # --- the side column ---------------------------------------------------------------

    def action_toggle_side(self) -> None:
        self.panes.toggle_side(self.view)

    def on_inbox_pane_open(self, event: InboxPane.Open) -> None:
        agents = self.agents_pane
        agents.select_agent(event.agent_id)
        agents.focus()

    def action_interrupt(self) -> None:
        if self.session is not None and self.session.busy:
            self.status_line.message = "interrupting…"
            self.run_worker(self._cancel(None), group="cancel")

    def action_quit_twice(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW:
            self.run_worker(self._quit(), group="quit", exclusive=True)
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit (Esc interrupts the run).", timeout=QUIT_WINDOW)

    # --- commands ----------------------------------------------------------------------

    def action_try_demo(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="workbench-demo-"))
        settings = dataclasses.replace(self.settings, model="demo", workspace=folder, api_base="", api_key="")
        self.open_session(settings, None, DEMO_PROMPT)

    def action_cycle_approval(self) -> None:
        if self.session is None:
            self.notify("No session is open yet.", timeout=3)
            return
        mode = self.session.cycle_approval()
        self.status_line.set_slot("approval", mode)
        self.transcript.show_welcome(welcome(self.session.settings, mode))
        self.notify(f"approval mode: {mode}", timeout=3)

    def action_changed_files(self) -> None:
        from workbench.tui.files_screen import changed_files

        changed_files(self)

    def action_rewind(self) -> None:
        if self.session is None:
            self.notify("No session is open yet.", timeout=3)
            return
        from workbench.tui.rewind_screen import rewind

        self.run_worker(rewind(self, self.session), group="rewind")

    def action_toggle_pane(self, pane: str) -> None:
        widget = self.agents_pane if pane == "agents" else self.inbox_pane
        widget.display = not widget.display

    def action_copy_answer(self) -> None:
        answer = self.view.last_answer
        if not answer:
            self.notify("No answer yet.", timeout=3)
            return
        where = copy_text(self, answer)  # OSC 52, and inside tmux its buffer and the outer terminal
        self.notify(f"Copied the last answer ({len(answer)} characters) to {where}.", timeout=3)

    def action_compact(self) -> None:
        if self.session is None:
            self.notify("No session is open yet.", timeout=3)
            return
        self.run_worker(self._compact(self.session), group="compact")

    async def _compact(self, session: SessionPort) -> None:
        """Summarize the older turns now; a refusal (a run is going, nothing older) is said in a note."""
        try:
            await session.compact()
        except Exception as err:  # SessionError: said to the person, the session goes on
            self.notify(printable(str(err)), severity="warning", timeout=6, markup=False)

    def action_show_attach(self) -> None:
        command = self.view.attach_command
        if command:
            copy_text(self, command)
        text = f"{command} (copied)" if command else "No terminal server runs yet: it starts with the first bash call."
        self.notify(printable(text), timeout=8, markup=False)

    def action_new_session(self) -> None:
        if self.settings.model:
            self.open_session(self.settings, None, None)
        else:
            self.notify(no_model_help(), severity="warning", timeout=8, markup=False)

    def action_switch_model(self) -> None:
        from workbench.tui.ask_screen import switch_model

        self.run_worker(switch_model(self), group="picker")

    def action_resume_session(self) -> None:
        from workbench.tui.picker import pick

        self.run_worker(pick(self), group="picker")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for title, help_text, action in PALETTE:  # keymap.py
            yield SystemCommand(title, help_text, partial(self.run_action, action))
        yield from super().get_system_commands(screen)
