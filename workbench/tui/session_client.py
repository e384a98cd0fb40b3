"""The app's side of the Session: open it (or resume, or pick), subscribe, fold the events into
the view model in batches and redraw what changed, send, cancel, close. The screen and its keys
are in app.py; nothing here reaches into the loop, the tree or the store. The session package's
modules that import the engine are imported in a thread after the first frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import App
from textual.containers import Horizontal
from textual.theme import Theme
from textual.timer import Timer
from textual.widgets import Static

from workbench.config.settings import Settings
from workbench.core import words
from workbench.pb import workbench_pb2 as pb
from workbench.session.errors import SessionError
from workbench.tui.agents_pane import STATUS_STYLE, AgentsPane
from workbench.tui.alert import alert_sequence, alert_text
from workbench.tui.engine import EventsArrived
from workbench.tui.header_bar import HeaderBar
from workbench.tui.heap import freeze_after
from workbench.tui.inbox_pane import InboxPane
from workbench.tui.items import UserItem
from workbench.tui.prompt_input import PromptInput
from workbench.tui.search_bar import Match, SearchBar
from workbench.tui.status_line import StatusLine
from workbench.tui.text import duration, printable, tokens
from workbench.tui.theme import ANSI_DARK, ANSI_LIGHT, MARKDOWN, THEMES
from workbench.tui.transcript import Transcript
from workbench.tui.view import ROOT, Changes, SessionView
from workbench.tui.working_line import WorkingLine

if TYPE_CHECKING:
    from workbench.session.session import Session
    from workbench.tui.approval import Approvals

log = logging.getLogger("workbench")

RENDER_INTERVAL = 0.1  # seconds between redraws while events stream in (10 a second)
OPEN_WAIT = 30.0  # seconds a quit waits for a session that is opening


class SessionClient(App[int]):
    """The Session and its events, shown in the widgets this class owns."""

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
        self._set_theme(THEMES.get(settings.theme, THEMES["dark"]))
        self.console.push_theme(MARKDOWN)  # inline code without rich's black box (theme.py)
        self.settings = settings
        self.initial_prompt = prompt
        self.resume_id = resume
        self.pick = pick
        self.clock = clock
        self.blink = blink
        self.preload_litellm = preload
        self.offline = offline  # no session: shows only what `apply_events` is given (snapshots, benchmarks)
        self.session: Session | None = None
        self.session_id = ""  # the last session opened (said on the way out)
        self._opening: Session | None = None  # opened, not shown yet
        self._open_done = asyncio.Event()  # cleared while Session.open runs
        self._open_done.set()
        self.approvals: Approvals | None = None  # reviews of the open session, one modal at a time
        self.last_alert = ""  # what the last review that came wrote to the terminal (bell, OSC 9/777)
        self.view = SessionView()
        self.selected = ROOT
        self._pending: list[pb.Event] = []
        self._posted = False
        self._unsubscribe: Callable[[], None] | None = None
        self.litellm_import: threading.Thread | None = None  # litellm's import, started after the first frame
        self._to_send: list[UserItem] = []  # prompts typed before the session opened, shown already
        self.side_shown: bool | None = None  # the Agents/Inbox column; None: shown when there is something
        self.matches: list[Match] = []  # the search's matches in the shown transcript
        self.match_index = -1
        self._last_ctrl_c = 0.0
        self._changes: Changes | None = None  # applied to the view model, not drawn yet
        self._last_render = 0.0
        self._render_timer: Timer | None = None
        # the screen's parts, kept at hand (a query would look at a modal screen when one is open)
        self.header_bar = HeaderBar(id="header")
        self.agents_pane = AgentsPane(clock, id="agents")
        self.inbox_pane = InboxPane(id="inbox")
        self.transcript = Transcript(clock, id="transcript")
        self.agent_line = Static(markup=False, id="agent-line")
        self.search_bar = SearchBar(placeholder="search this transcript", id="search")
        self.search_info = Static(markup=False, id="search-info")
        self.working_line = WorkingLine(clock, id="working")
        self.setup = Horizontal(id="setup")
        self.prompt_input = PromptInput(blink=blink, id="prompt")
        self.status_line = StatusLine(clock, id="status")

    def _set_theme(self, theme: Theme) -> None:
        """The theme and its ANSI colours before the stylesheet is first parsed. Set as reactives,
        each would queue a parse of the whole CSS again (twice before the first frame: docs/DECISIONS.md);
        this does what their watchers do, but once and before that parse."""
        for registered in THEMES.values():
            self.register_theme(registered)
        self.set_reactive(App.ansi_theme_dark, ANSI_DARK)
        self.set_reactive(App.ansi_theme_light, ANSI_LIGHT)
        self.set_reactive(App.theme, theme.name)
        self.set_class(theme.dark, "-dark-mode", update=False)
        self.set_class(not theme.dark, "-light-mode", update=False)
        self.set_class(True, f"-theme-{theme.name}", update=False)
        self._refresh_truecolor_filter(self.ansi_theme)
        self.stylesheet.set_variables(self.get_css_variables())

    def _show_header(self) -> None:
        v = self.view
        model = v.model or (self.session.settings.model if self.session else self.settings.model)
        workspace = v.workspace or str(self.session.settings.workspace if self.session else self.settings.workspace)
        self.header_bar.show(v.title, model, workspace, v.session_id, v.needs_you)

    # --- the session -------------------------------------------------------------------

    def open_session(self, settings: Settings, resume: str | None, prompt: str | None) -> None:
        self.run_worker(self._open(settings, resume, prompt), group="session", exclusive=True)

    async def _open(self, settings: Settings, resume: str | None, prompt: str | None) -> None:
        import sqlite3  # what is needed once a session opens loads after the first frame

        from workbench.tui.approval import Approvals

        status = self.status_line
        status.message = "resuming…" if resume else "opening the session…"
        status.sync()
        await self._close_session()
        self._open_done.clear()  # a quit meanwhile waits for it, to close it and say its id (_quit)
        try:
            session_class = await asyncio.to_thread(_session_class)
            try:
                session = await session_class.open(settings, resume=resume, interactive=True)
            except SessionError as err:  # unknown id, another workspace, held elsewhere, corrupt
                self._problem(f"cannot open the session: {err}")
                return
            except (OSError, sqlite3.Error) as err:  # the data folder: missing rights, disk full
                self._problem(f"cannot open the session in {settings.data_dir}: {err}; choose another --data-dir")
                return
            self.session_id, self._opening = session.id, session  # closed by a quit meanwhile
        finally:
            self._open_done.set()
        if self.litellm_import is not None:  # the run's first model call would wait for it on this loop,
            await asyncio.to_thread(self.litellm_import.join)  # frozen (4 s): it waits here, in a thread
        if self._opening is not session:
            return  # the app quit (or another session opened) meanwhile: that closed it
        self._opening = None
        self.session, self.settings = session, settings
        self.view = SessionView()
        self.view.transcript(ROOT).extend(self._to_send)  # typed while it opened: still shown, sent below
        self.view.model, self.view.workspace = settings.model, str(settings.workspace)
        self.view.session_id = session.id
        self.selected = ROOT
        self.setup.display = False
        self.agents_pane.show_view(self.view)
        self.inbox_pane.show_view(self.view)
        self.transcript.show(ROOT, self.view.transcript(ROOT))
        status.view, status.message = self.view, ""
        working = self.working_line
        working.view, working.starting = self.view, ""
        self.approvals = Approvals(
            self,
            session.decide,
            session.pending_reviews,
            cancel=lambda agent_id: self._cancel_agent(agent_id),
            task_of=lambda agent_id: row.info.prompt if (row := self.view.agents.get(agent_id)) else "",
            alert=self._alert,
        )
        status.slots["approval"] = session.approval
        self._unsubscribe = session.subscribe(self._on_event, after=0)
        self.run_worker(self._context_window(session), group="window")
        for text in [*([prompt] if prompt else []), *(item.text for item in self._to_send)]:
            self._send(session, text)
        self._to_send.clear()
        self._show_header()
        self._show_agent_line()
        self.layout_side()
        status.sync()
        working.sync()

    async def _context_window(self, session: Session) -> None:
        """The model's window for the status line (the session looks it up in a thread: it needs litellm)."""
        window = await session.context_window()
        status = self.status_line
        status.window = window
        status.sync()

    async def _close_session(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        sessions = [s for s in (self.session, self._opening) if s is not None]  # _opening: waits for litellm
        self.session = self._opening = None
        self.approvals = None
        self._pending.clear()
        self._changes = None
        for session in sessions:
            await session.close()

    def _problem(self, text: str) -> None:
        """A session that cannot open: said in the prompt area until another opens (ctrl+p offers ways on)."""
        status = self.status_line
        status.message = ""
        status.sync()
        self.working_line.starting = ""
        self.working_line.sync()
        self.query_one("#setup-help", Static).update(Text(printable(text) + "  (ctrl+p: new session, resume session)"))
        self.setup.display = True
        self.notify(printable(text), severity="error", timeout=10, markup=False)

    async def _pick(self) -> None:
        from workbench.tui.picker import ResumePicker

        try:
            sessions = await asyncio.to_thread(_list_sessions, self.settings)
        except SessionError as err:
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
        self.freeze_history(len(batch))
        if self.approvals is not None:  # a review opens its modal at once, not at the next render
            for event in batch:
                self.approvals.on_event(event)
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
        self.freeze_history(len(events))

    def freeze_history(self, events: int) -> bool:
        """A long history just applied (a resume's replay) leaves the collector's generations (tui/heap.py)."""
        return freeze_after(events)

    def render_changes(self, changes: Changes) -> None:
        with self.batch_update():
            agents = self.agents_pane
            if agents.view is not self.view:
                agents.show_view(self.view)
            else:
                agents.sync([*changes.new_agents, *changes.agents])
            if self.selected in changes.agents:  # it may have finished: the prompt says so
                self.prompt_input.border_title = self._addressee()
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
            working = self.working_line
            working.view = self.view
            if self.view.busy and working.starting:
                working.starting = ""
            if changes.status:
                status.message = ""
                status.sync()
                self._show_header()
                working.reviews = self.view.needs_you  # any agent's, at any depth
            if changes.status or self.view.busy:  # streamed text moves the token estimate
                working.sync()
            if changes.status or self.selected in changes.agents:
                self._show_agent_line()
            if changes.new_agents or changes.inbox:
                self.layout_side()

    def layout_side(self) -> None:
        """The Agents/Inbox column: shown when there is more than one agent or an Inbox item,
        unless Ctrl+B chose otherwise."""
        view = self.view
        auto = len(view.agents) > 1 or bool(view.inbox)
        shown = self.side_shown if self.side_shown is not None else auto
        side = self.query_one("#side")
        if side.display != shown:
            side.display = shown
            if not shown and side.has_focus_within:
                self.prompt_input.focus()

    def on_agents_pane_cancel_requested(self, event: AgentsPane.CancelRequested) -> None:
        if self.session is not None:
            self.notify(f"cancelling {event.agent_id}…", timeout=3)
            self.run_worker(self._cancel(event.agent_id), group="cancel")

    def _show_agent_line(self) -> None:
        """The selected agent in one line above its transcript: status, elapsed, calls, tokens, cost,
        activity; the prompt's title says whom it goes to."""
        self.prompt_input.border_title = self._addressee()
        row = self.view.agents.get(self.selected)
        if row is None:
            self.agent_line.update("")
            return
        glyph, style = STATUS_STYLE.get(row.status, ("·", ""))
        text = Text()
        text.append(f"{glyph} ", style=style)
        text.append(printable(row.info.name or row.info.id), style="bold")
        text.append(f" {words.agent_status(row.status)}", style=style)
        if row.started:
            text.append(f" · {duration((row.ended or self.clock()) - row.started)}")
        text.append(f" · {row.tool_calls} call{'s' if row.tool_calls != 1 else ''}")
        usage = row.usage
        text.append(f" · ↑{tokens(usage.input_tokens)} ↓{tokens(usage.output_tokens)}")
        if usage.HasField("cost"):
            text.append(f" · ${usage.cost:.2f}")
        if row.activity and row.activity != words.agent_status(row.status):
            text.append(f" · {printable(row.activity)}", style="italic")
        text.no_wrap, text.overflow = True, "ellipsis"
        self.agent_line.update(text)

    def _tick(self) -> None:
        self.agents_pane.tick()
        self.status_line.sync()
        row = self.view.agents.get(self.selected)
        if row is not None and not row.final:
            self._show_agent_line()

    def _addressee(self) -> str:
        """Whom the prompt goes to: the selected agent (steering a subagent), else the root."""
        row = self.view.agents.get(self.selected)
        if self.selected == ROOT or row is None:
            return "to main"
        who = printable(f"{row.info.name} ({row.info.id})" if row.info.name != row.info.id else row.info.id)
        if row.info.status in words.FINAL_AGENT_STATUSES:
            return f"{who} has finished: select main to write to the root"
        return f"to subagent {who}, at its next turn"

    def _send(self, session: Session, text: str) -> None:
        try:
            session.send(text, None if self.selected == ROOT else self.selected)
        except Exception as err:  # SessionError: one line a person can act on (anything else is logged too)
            log.info("send refused", exc_info=True)
            self.notify(printable(str(err)), severity="error", timeout=8, markup=False)

    def _alert(self, decision: pb.GuardDecision, agent_id: str) -> None:
        """A review came: the bell and a desktop notification (setting review_alert)."""
        sequence = alert_sequence(self.settings.review_alert, alert_text(decision, agent_id))
        driver = self._driver
        if sequence and driver is not None and not self.is_headless:
            driver.write(sequence)  # as App.bell() writes its bell
        self.last_alert = sequence

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
        """Cancel one agent from a modal (the run, for the root), in a worker."""
        self.notify(f"cancelling {printable(agent_id)}…", timeout=3, markup=False)
        self.run_worker(self._cancel(agent_id), group="cancel")

    async def _cancel(self, agent_id: str | None) -> None:
        if self.session is None:
            return
        try:
            await self.session.cancel(agent_id)
        except Exception as err:  # SessionError: an agent that is gone (anything else is logged too)
            log.info("cancel refused", exc_info=True)
            self.notify(printable(str(err)), severity="error", timeout=8, markup=False)

    async def _quit(self) -> None:
        if not self._open_done.is_set():  # Ctrl+C twice right after the first frame: the session opening
            self.status_line.message = "closing the session…"
            self.status_line.sync()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._open_done.wait(), OPEN_WAIT)
        await self._close_session()  # the run stops and the session's tmux server ends
        self.exit(0)

    async def action_quit(self) -> None:
        """Every way out (the palette's Quit too) closes the session first."""
        await self._quit()


def _session_class() -> type[Session]:
    """The Session class (its import brings the engine: the app makes it in a thread)."""
    from workbench.session.session import Session

    return Session


def _list_sessions(settings: Settings) -> list[pb.SessionInfo]:
    from workbench.session.catalog import list_sessions

    return list_sessions(settings)
