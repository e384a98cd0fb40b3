"""The Textual workbench: the parent loop, its subagents and the Inbox in live panes.

The app is a client of `workbench.session` and of committed events only. The Session runs as
an async worker on Textual's loop; its subscriber only queues the event and posts one message,
so no UI handler runs inside a commit hook; events are applied to the view model in batches
and only the changed widgets are touched. Nothing on the path to the first frame imports
litellm or the engine: they import in a thread after the first frame.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import logging
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

import libtmux  # noqa: F401  # reads sys.stdout.encoding at import: before Textual captures stdout
from rich.text import Text
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Button, Footer, Static

from workbench.config import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.tui.agents_pane import AgentsPane
from workbench.tui.ask_screen import AskText
from workbench.tui.engine import EventsArrived, Session, no_model_help, start_litellm_import
from workbench.tui.files_screen import ChangedFiles
from workbench.tui.header_bar import HeaderBar
from workbench.tui.inbox_pane import InboxPane
from workbench.tui.picker import ResumePicker
from workbench.tui.prompt_input import PromptInput
from workbench.tui.status_line import StatusLine
from workbench.tui.text import printable
from workbench.tui.transcript import Transcript
from workbench.tui.view import ROOT, Changes, SessionView

log = logging.getLogger("workbench")

DEMO_PROMPT = "fix the login check in auth.go"
QUIT_WINDOW = 3.0  # seconds in which a second Ctrl+C quits
RENDER_INTERVAL = 0.1  # seconds between redraws while events stream in (10 a second)
NARROW_SCREEN = 110  # columns: below this the side column (Agents, Inbox) narrows


class WorkbenchApp(App[int]):
    CSS_PATH = Path(__file__).with_name("workbench.tcss")  # also for subclasses in other folders
    TITLE = "workbench"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "interrupt"),
        Binding("ctrl+c", "quit_twice", "quit (twice)", priority=True),
        Binding("ctrl+o", "changed_files", "changed files"),
    ]

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
        self.settings = settings
        self.initial_prompt = prompt
        self.resume_id = resume
        self.pick = pick
        self.clock = clock
        self.blink = blink
        self.preload_litellm = preload
        self.offline = offline  # no session: shows only what `apply_events` is given (snapshots, benchmarks)
        self.session: Session | None = None
        self.view = SessionView()
        self.selected = ROOT
        self._pending: list[pb.Event] = []
        self._posted = False
        self._unsubscribe: Callable[[], None] | None = None
        self._to_send: list[str] = []
        self._last_ctrl_c = 0.0
        self._changes: Changes | None = None  # applied to the view model, not drawn yet
        self._last_render = 0.0
        self._render_timer: Timer | None = None
        # the screen's parts, kept at hand (a query would look at a modal screen when one is open)
        self.header_bar = HeaderBar(id="header")
        self.agents_pane = AgentsPane(clock, id="agents")
        self.inbox_pane = InboxPane(id="inbox")
        self.transcript = Transcript(clock, id="transcript")
        self.setup = Horizontal(id="setup")
        self.prompt_input = PromptInput(blink=blink, id="prompt")
        self.status_line = StatusLine(clock, id="status")

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.header_bar
        with Horizontal(id="main"):
            with Vertical(id="side"):
                yield self.agents_pane
                yield self.inbox_pane
            yield self.transcript
        with Vertical(id="prompt-area"):
            with self.setup:
                yield Static(no_model_help(), markup=False, id="setup-help")
                yield Button("Try the offline demo", id="try-demo", variant="primary")
            yield self.prompt_input
        yield self.status_line
        yield Footer()

    def on_mount(self) -> None:
        self.agents_pane.border_title = "Agents"
        self.inbox_pane.border_title = "Inbox"
        self.setup.display = False
        self._show_header()
        self.prompt_input.focus()
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(self._start)

    def on_resize(self) -> None:
        self.screen.set_class(self.size.width < NARROW_SCREEN, "narrow")

    def _start(self) -> None:
        """After the first frame: litellm starts importing, then the session opens (or the picker shows)."""
        if self.offline:
            return
        if self.preload_litellm:
            start_litellm_import()
        if self.pick:
            self.run_worker(self._pick(), group="session")
        elif not self.settings.model and not self.resume_id:
            self.setup.display = True
            self.status_line.message = "no model set"
            self.status_line.sync()
        else:
            self.open_session(self.settings, self.resume_id, self.initial_prompt)

    def _show_header(self) -> None:
        v = self.view
        model = v.model or (self.session.settings.model if self.session else self.settings.model)
        workspace = v.workspace or str(self.session.settings.workspace if self.session else self.settings.workspace)
        self.header_bar.show(v.title, model, workspace, v.session_id)

    # --- the session -------------------------------------------------------------------

    def open_session(self, settings: Settings, resume: str | None, prompt: str | None) -> None:
        self.run_worker(self._open(settings, resume, prompt), group="session", exclusive=True)

    async def _open(self, settings: Settings, resume: str | None, prompt: str | None) -> None:
        status = self.status_line
        status.message = "resuming…" if resume else "opening the session…"
        status.sync()
        await self._close_session()
        module = await asyncio.to_thread(importlib.import_module, "workbench.session")
        try:
            session: Session = await module.Session.open(settings, resume=resume)
        except module.SessionError as err:  # unknown id, another workspace, held elsewhere, corrupt
            self._problem(f"cannot open the session: {err}")
            return
        except (OSError, sqlite3.Error) as err:  # the data folder: missing rights, disk full
            self._problem(f"cannot open the session in {settings.data_dir}: {err}; choose another --data-dir")
            return
        self.session, self.settings = session, settings
        self.view = SessionView()
        self.view.model, self.view.workspace = settings.model, str(settings.workspace)
        self.view.session_id = session.id
        self.selected = ROOT
        self.setup.display = False
        self.agents_pane.show_view(self.view)
        self.inbox_pane.show_view(self.view)
        self.transcript.show(ROOT, self.view.transcript(ROOT))
        status.view, status.message = self.view, ""
        self._unsubscribe = session.subscribe(self._on_event, after=0)
        self.run_worker(self._context_window(settings.model), group="window")
        for text in [*([prompt] if prompt else []), *self._to_send]:
            self._send(session, text)
        self._to_send.clear()
        self._show_header()
        status.sync()

    async def _context_window(self, model: str) -> None:
        """The model's window for the status line, looked up in a thread (it needs litellm)."""
        from workbench.model import ModelSpec, context_window

        window = await asyncio.to_thread(context_window, ModelSpec(model).wire_model)
        status = self.status_line
        status.window = window
        status.sync()

    async def _close_session(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        session, self.session = self.session, None
        self._pending.clear()
        self._changes = None
        if session is not None:
            await session.close()

    def _problem(self, text: str) -> None:
        """A session that cannot open: said in the prompt area until another opens (ctrl+p offers ways on)."""
        status = self.status_line
        status.message = ""
        status.sync()
        self.query_one("#setup-help", Static).update(Text(printable(text) + "  (ctrl+p: new session, resume session)"))
        self.setup.display = True
        self.notify(printable(text), severity="error", timeout=10, markup=False)

    async def _pick(self) -> None:
        module = await asyncio.to_thread(importlib.import_module, "workbench.session")
        try:
            sessions = await asyncio.to_thread(module.list_sessions, self.settings)
        except module.SessionError as err:
            self._problem(f"cannot list the sessions: {err}")
            return
        chosen = await self.push_screen_wait(ResumePicker(sessions, str(self.settings.workspace)))
        info = next((s for s in sessions if s.id == chosen), None)
        if info is not None:  # it continues in its own folder, on its model unless one was given
            settings = dataclasses.replace(
                self.settings, workspace=Path(info.workspace), model=self.settings.model or info.model
            )
            self.open_session(settings, info.id, self.initial_prompt)
        elif self.session is None:
            if self.settings.model:
                self.open_session(self.settings, None, self.initial_prompt)
            else:
                self.setup.display = True

    # --- events: the subscriber only queues and posts ----------------------------------

    def _on_event(self, event: pb.Event) -> None:
        self._pending.append(event)
        if not self._posted:
            self._posted = True
            self.post_message(EventsArrived())

    def on_events_arrived(self, _: EventsArrived) -> None:
        """Fold the queued events into the view model now; redraw at most every RENDER_INTERVAL."""
        self._posted = False
        batch, self._pending = self._pending, []
        if not batch:
            return
        self._changes = self.view.apply(batch, self._changes)
        wait = self._last_render + RENDER_INTERVAL - time.monotonic()
        if wait <= 0:
            self._render_pending()
        elif self._render_timer is None:
            self._render_timer = self.set_timer(wait, self._render_pending)

    def _render_pending(self) -> None:
        self._render_timer = None
        changes, self._changes = self._changes, None
        self._last_render = time.monotonic()
        if changes is not None:
            self.render_changes(changes)

    def apply_events(self, events: list[pb.Event]) -> None:
        """Apply events at once (snapshots and benchmarks feed fixed events this way)."""
        self.render_changes(self.view.apply(events))

    def render_changes(self, changes: Changes) -> None:
        with self.batch_update():
            agents = self.agents_pane
            if agents.view is not self.view:
                agents.show_view(self.view)
            else:
                agents.sync([*changes.new_agents, *changes.agents])
            transcript = self.transcript
            if transcript.agent_id != self.selected or transcript.items is not self.view.transcript(self.selected):
                transcript.show(self.selected, self.view.transcript(self.selected))
            else:
                transcript.add(changes.added.get(self.selected, []))
            transcript.update(changes.updated)
            inbox = self.inbox_pane
            if inbox.view is not self.view:
                inbox.show_view(self.view)
            elif changes.inbox:
                inbox.sync()
            status = self.status_line
            status.view = self.view
            if changes.status:
                status.message = ""
                status.sync()
                self._show_header()
                self._title_transcript()

    def _tick(self) -> None:
        self.agents_pane.tick()
        self.status_line.sync()

    def _title_transcript(self) -> None:
        row = self.view.agents.get(self.selected)
        transcript = self.transcript
        transcript.border_title = printable(f"{row.info.name or row.info.id}" if row else self.selected)

    # --- input -------------------------------------------------------------------------

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        if self.session is not None:
            self._send(self.session, event.text)
        elif not self.settings.model:
            self.notify(no_model_help(), severity="warning", timeout=8, markup=False)
        else:
            self._to_send.append(event.text)  # sent as soon as the session is open

    def _send(self, session: Session, text: str) -> None:
        try:
            session.send(text)
        except Exception as err:  # SessionError: one line a person can act on (anything else is logged too)
            log.info("send refused", exc_info=True)
            self.notify(printable(str(err)), severity="error", timeout=8, markup=False)

    async def _cancel(self, agent_id: str | None) -> None:
        if self.session is None:
            return
        try:
            await self.session.cancel(agent_id)
        except Exception as err:  # SessionError: an agent that is gone (anything else is logged too)
            log.info("cancel refused", exc_info=True)
            self.notify(printable(str(err)), severity="error", timeout=8, markup=False)

    def on_agents_pane_selected(self, event: AgentsPane.Selected) -> None:
        if event.agent_id != self.selected:
            self.selected = event.agent_id
            self.transcript.show(event.agent_id, self.view.transcript(event.agent_id))
            self._title_transcript()

    def on_agents_pane_cancel_requested(self, event: AgentsPane.CancelRequested) -> None:
        if self.session is not None:
            self.notify(f"cancelling {event.agent_id}…", timeout=3)
            self.run_worker(self._cancel(event.agent_id), group="cancel")

    def on_inbox_pane_open(self, event: InboxPane.Open) -> None:
        agents = self.agents_pane
        agents.select_agent(event.agent_id)
        agents.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "try-demo":
            self.action_try_demo()

    def action_interrupt(self) -> None:
        if self.session is not None and self.session.busy:
            status = self.status_line
            status.message = "interrupting…"
            status.sync()
            self.run_worker(self._cancel(None), group="cancel")

    def action_quit_twice(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW:
            self.run_worker(self._quit(), group="quit", exclusive=True)
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit (Esc interrupts the run).", timeout=QUIT_WINDOW)

    async def _quit(self) -> None:
        await self._close_session()  # the run stops and the session's tmux server ends
        self.exit(0)

    async def action_quit(self) -> None:
        """Every way out (the palette's Quit too) closes the session first."""
        await self._quit()

    # --- commands ----------------------------------------------------------------------

    def action_try_demo(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix="workbench-demo-"))
        settings = dataclasses.replace(self.settings, model="demo", workspace=folder, api_base="", api_key="")
        self.open_session(settings, None, DEMO_PROMPT)

    def action_changed_files(self) -> None:
        self.push_screen(ChangedFiles(self.view.changed_files))

    def action_toggle_pane(self, pane: str) -> None:
        widget = self.agents_pane if pane == "agents" else self.inbox_pane
        widget.display = not widget.display

    def action_copy_answer(self) -> None:
        if self.view.last_answer:
            self.copy_to_clipboard(self.view.last_answer)
            self.notify("Copied the last answer.", timeout=3)
        else:
            self.notify("No answer yet.", timeout=3)

    def action_show_attach(self) -> None:
        command = self.view.attach_command
        if command:
            self.copy_to_clipboard(command)
        text = f"{command} (copied)" if command else "No terminal server runs yet: it starts with the first bash call."
        self.notify(printable(text), timeout=8, markup=False)

    def action_new_session(self) -> None:
        if self.settings.model:
            self.open_session(self.settings, None, None)
        else:
            self.notify(no_model_help(), severity="warning", timeout=8, markup=False)

    def action_switch_model(self) -> None:
        self.run_worker(self._switch_model(), group="picker")

    async def _switch_model(self) -> None:
        """Continue this session with another model: it is closed and opened again (resumed) with
        the new model in its settings; with no session yet, the next one opens with it."""
        current = self.session.settings.model if self.session else self.settings.model
        model = await self.push_screen_wait(
            AskText("Model for this session (any litellm model string, or demo)", current, "openai/gpt-4.1")
        )
        if not model or model == current:
            return
        settings = dataclasses.replace(self.session.settings if self.session else self.settings, model=model)
        self.open_session(settings, self.session.id if self.session else None, None)

    def action_resume_session(self) -> None:
        self.run_worker(self._pick(), group="picker")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        commands: list[tuple[str, str, Callable[[], object]]] = [
            ("New session", "Start a new session in this workspace", self.action_new_session),
            ("Resume session", "Pick a stored session and continue it", self.action_resume_session),
            ("Switch model", "Continue this session with another model", self.action_switch_model),
            ("Cancel run", "Interrupt the running turn (Esc)", self.action_interrupt),
            ("Changed files", "Files this session wrote or edited, with diffs (ctrl+o)", self.action_changed_files),
            ("Copy last answer", "The root agent's last answer to the clipboard", self.action_copy_answer),
            ("Show tmux attach command", "Watch the session's shell", self.action_show_attach),
            ("Toggle agents pane", "Show or hide the Agents pane", lambda: self.action_toggle_pane("agents")),
            ("Toggle inbox pane", "Show or hide the Inbox pane", lambda: self.action_toggle_pane("inbox")),
            ("Try the offline demo", "The scripted demo model in a new temporary folder", self.action_try_demo),
        ]
        for title, help_text, callback in commands:
            yield SystemCommand(title, help_text, callback)
        yield from super().get_system_commands(screen)


def run_app(settings: Settings, prompt: str | None, resume: str | None, pick: bool) -> int:
    """`workbench`, `workbench "TASK"`, `workbench --resume [ID]`: run the TUI; the exit status."""
    app = WorkbenchApp(settings, prompt=prompt, resume=resume, pick=pick)
    code = app.run()
    return code if isinstance(code, int) else app.return_code or 0
