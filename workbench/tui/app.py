"""The Textual workbench: the parent loop, its subagents and the Inbox in live panes.

The app is a client of `workbench.session.session` and of committed events only. The Session runs as
an async worker on Textual's loop; its subscriber only queues the event and posts one message,
so no UI handler runs inside a commit hook; events are applied to the view model in batches
and only the changed widgets are touched. Nothing on the path to the first frame imports
litellm or the engine: they import in a thread after the first frame.
"""

from __future__ import annotations

import dataclasses
import gc
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Input, Static

from workbench.config.settings import Settings
from workbench.tui.agents_pane import AgentsPane
from workbench.tui.clipboard import copy_text
from workbench.tui.engine import no_model_help, start_litellm_import
from workbench.tui.footer import KeysFooter
from workbench.tui.inbox_pane import InboxPane
from workbench.tui.keymap import bindings
from workbench.tui.prompt_input import PromptInput
from workbench.tui.search_bar import SearchBar, find
from workbench.tui.session_client import SessionClient
from workbench.tui.text import printable

if TYPE_CHECKING:
    from workbench.session.session import Session

DEMO_PROMPT = "fix the login check in auth.go"
QUIT_WINDOW = 3.0  # seconds in which a second Ctrl+C quits
NARROW_SCREEN = 110  # columns: below this the side column (Agents, Inbox) narrows


class WorkbenchApp(SessionClient):
    CSS_PATH = Path(__file__).with_name("workbench.tcss")  # also for subclasses in other folders
    TITLE = "workbench"
    BINDINGS: ClassVar[list[BindingType]] = bindings("app")  # every key is in workbench/tui/keymap.py

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.header_bar
        with Horizontal(id="main"):
            with Vertical(id="side"):
                yield self.agents_pane
                yield self.inbox_pane
            with Vertical(id="work"):
                yield self.agent_line
                yield self.transcript
                with Horizontal(id="search-row"):
                    yield self.search_bar
                    yield self.search_info
        with Vertical(id="prompt-area"):
            with self.setup:
                yield Static(no_model_help(), markup=False, id="setup-help")
                yield Button("Try the offline demo", id="try-demo", variant="primary")
            yield self.working_line
            yield self.prompt_input
        yield self.status_line
        yield KeysFooter()

    def on_mount(self) -> None:
        self.agents_pane.border_title = "Agents"
        self.inbox_pane.border_title = "Inbox"
        self.setup.display = False
        self.query_one("#search-row").display = False
        self._show_header()
        self.layout_side()
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
        if self.preload_litellm:
            self.litellm_import = start_litellm_import()
        if self.pick:
            self.run_worker(self._pick(), group="session")
        elif not self.settings.model and not self.resume_id:
            self.setup.display = True
            self.status_line.message = "no model set"
            self.status_line.sync()
        else:
            self.working_line.starting = "resuming the session…" if self.resume_id else "starting the engine…"
            self.working_line.sync()
            self.open_session(self.settings, self.resume_id, self.initial_prompt)

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
            self.working_line.sync()
        if self.session is not None:
            self._send(self.session, event.text)
        else:
            self._to_send.append(item)  # sent as soon as the session is open

    def on_agents_pane_selected(self, event: AgentsPane.Selected) -> None:
        if event.agent_id != self.selected:
            self.selected = event.agent_id
            self.transcript.show(event.agent_id, self.view.transcript(event.agent_id))
            self._show_agent_line()
            if self.search_bar.display:
                self._search(self.search_bar.value)

    # --- search ------------------------------------------------------------------------

    def action_search(self) -> None:
        self.query_one("#search-row").display = True
        self.search_bar.focus()
        self._search(self.search_bar.value)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is self.search_bar:
            self._search(event.value)
            if self.matches:
                self._goto(len(self.matches) - 1)  # the newest match first

    def _search(self, query: str) -> None:
        self.matches = find(self.transcript.items, query)
        self.match_index = -1
        self.transcript.mark(query)
        self._search_info()

    def _search_info(self) -> None:
        count, at = len(self.matches), self.match_index + 1
        shown = f"{at} of {count}" if at else f"{count} match{'es' if count != 1 else ''}"
        self.search_info.update(shown if self.search_bar.value else "type to search")

    def _goto(self, index: int) -> None:
        self.match_index = index % len(self.matches)
        self.transcript.reveal(self.matches[self.match_index])
        self._search_info()

    def on_search_bar_step(self, event: SearchBar.Step) -> None:
        if self.matches:
            self._goto(self.match_index + event.step if self.match_index >= 0 else len(self.matches) - 1)

    def on_search_bar_closed(self, _: SearchBar.Closed) -> None:
        self.query_one("#search-row").display = False
        self.transcript.mark("")
        self.transcript.focus()

    # --- the side column ---------------------------------------------------------------

    def action_toggle_side(self) -> None:
        self.side_shown = not self.query_one("#side").display
        self.layout_side()

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
        self.notify(f"approval mode: {mode}", timeout=3)

    def action_changed_files(self) -> None:
        from workbench.tui.files_screen import ChangedFiles

        restore = None if self.session is None else self.restore_file
        self.push_screen(ChangedFiles(self.view.changed_files, restore))

    def restore_file(self, path: str) -> None:
        self.run_worker(self._restore_file(path), group="rewind")

    async def _restore_file(self, path: str) -> None:
        """One file back as it was before the last turn that changed it (Ctrl+O, r)."""
        if self.session is None:
            return
        try:
            done = await self.session.restore_file(path)
        except Exception as err:  # SessionError: said to the person, nothing changed
            self.notify(printable(str(err)), severity="warning", timeout=6, markup=False)
            return
        self.notify(printable(f"{path} put back as before turn {done.to_turn}"), timeout=5, markup=False)

    def action_rewind(self) -> None:
        if self.session is None:
            self.notify("No session is open yet.", timeout=3)
            return
        self.run_worker(self._rewind(self.session), group="rewind")

    async def _rewind(self, session: Session) -> None:
        """Pick a prompt and what goes back, review the files and their diffs, then rewind."""
        from workbench.tui.rewind_screen import RewindReview, TurnPicker

        try:
            turns = session.turns()
            if not turns:
                self.notify("Nothing to rewind yet: no prompt has a checkpoint.", timeout=4)
                return
            picked = await self.push_screen_wait(TurnPicker(turns))
            if picked is None:
                return
            turn, mode = picked
            plan = await session.plan_rewind(
                turn, code=mode in ("code", "both"), conversation=mode in ("conversation", "both")
            )
            if not await self.push_screen_wait(RewindReview(plan)):
                return
            done = await session.rewind(plan)
        except Exception as err:  # SessionError: said to the person, nothing changed
            self.notify(printable(str(err)), severity="warning", timeout=6, markup=False)
            return
        kept = f"; {len(plan.outside)} changed outside kept as they are" if plan.outside else ""
        self.notify(printable(f"Rewound to before turn {turn}: {len(done.files)} path(s) put back{kept}"), timeout=6)

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

    async def _compact(self, session: Session) -> None:
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
        self.run_worker(self._switch_model(), group="picker")

    async def _switch_model(self) -> None:
        """Continue this session with another model: it is closed and opened again (resumed) with
        the new model in its settings; with no session yet, the next one opens with it."""
        from workbench.tui.ask_screen import AskText

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
            ("Rewind", "Files, conversation or both back to before a prompt (ctrl+g)", self.action_rewind),
            ("Approval mode", "Cycle ask, auto, read-only (ctrl+t)", self.action_cycle_approval),
            ("Copy last answer", "The root agent's last answer to the clipboard", self.action_copy_answer),
            ("Compact now", "Summarize the older turns now (between runs)", self.action_compact),
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
    if session_id := app.session_id:  # as `workbench run` does: how to go on
        print(
            f"workbench: session {session_id}; continue it with `workbench --resume {session_id}`, "
            f"read it with `workbench export {session_id}`",
            file=sys.stderr,
        )
    return code if isinstance(code, int) else app.return_code or 0
