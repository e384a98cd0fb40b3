"""How the view model is drawn (`Panes`, held by the app as `app.panes`): the app makes the widgets
and gives them to it; the app keeps the state (the view model, the selected agent) and says what
changed, and `Panes` touches only the widgets a change concerns: it sets their reactive state
(the header's, the status and working lines', the Inbox's), and each repaints itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from workbench.config.settings import Settings
from workbench.tui.agents_pane import AgentsPane, addressee, agent_line
from workbench.tui.engine import no_model_help
from workbench.tui.footer import KeysFooter
from workbench.tui.header_bar import HeaderBar
from workbench.tui.inbox_pane import InboxPane
from workbench.tui.prompt_input import PromptInput
from workbench.tui.search_bar import SearchBar
from workbench.tui.status_line import Figures, StatusLine
from workbench.tui.text import printable
from workbench.tui.transcript import Transcript
from workbench.tui.view import ROOT, Changes, SessionView
from workbench.tui.working_line import Work, WorkingLine


@dataclass
class Panes:
    """The widgets that show a session's view model, and where each sits on the screen."""

    header_bar: HeaderBar
    side: Vertical  # the Agents/Inbox column
    agents_pane: AgentsPane
    inbox_pane: InboxPane
    transcript: Transcript
    agent_line: Static
    search_row: Horizontal  # hidden until Ctrl+F
    search_bar: SearchBar
    search_info: Static
    working_line: WorkingLine
    setup: Horizontal  # the no-model help and the demo's button, above the prompt
    prompt_input: PromptInput
    status_line: StatusLine
    side_shown: bool | None = None  # the side column as Ctrl+B left it; None: shown when there is something

    @classmethod
    def make(cls, clock: Callable[[], float], blink: bool) -> Panes:
        return cls(
            HeaderBar(id="header"),
            Vertical(id="side"),
            AgentsPane(clock, id="agents"),
            InboxPane(id="inbox"),
            Transcript(clock, id="transcript"),
            Static(markup=False, id="agent-line"),
            Horizontal(id="search-row"),
            SearchBar(placeholder="search this transcript", id="search"),
            Static(markup=False, id="search-info"),
            WorkingLine(clock, id="working"),
            Horizontal(id="setup"),
            PromptInput(blink=blink, id="prompt"),
            StatusLine(clock, id="status"),
        )

    def compose(self) -> ComposeResult:
        """The screen: header; the side column (Agents, Inbox) beside the work column (the agent's
        line, its transcript, the search row); the prompt area; the status line; the keys."""
        yield self.header_bar
        with Horizontal(id="main"):
            with self.side:
                yield self.agents_pane
                yield self.inbox_pane
            with Vertical(id="work"):
                yield self.agent_line
                yield self.transcript
                with self.search_row:
                    yield self.search_bar
                    yield self.search_info
        with Vertical(id="prompt-area"):
            with self.setup:
                yield Static(no_model_help(), markup=False, id="setup-help")
                yield Button("Try the offline demo", id="try-demo", variant="primary", action="app.try_demo")
            yield self.working_line
            yield self.prompt_input
        yield self.status_line
        yield KeysFooter()

    def show(self, view: SessionView, selected: str) -> None:
        """A new view model (a session opened): every pane shows it from the start."""
        self.agents_pane.show_view(view)
        self.inbox_pane.show(view)
        self.transcript.show(selected, view.transcript(selected))
        status = self.status_line
        status.figures, status.message = Figures.of(view), ""
        working = self.working_line
        working.work, working.starting = Work.of(view), ""

    def open(self, view: SessionView, approval: str, settings: Settings, now: float) -> None:
        """A session opened: the panes show its view model (the root selected), the header its
        settings, the status line its approval mode."""
        self.setup.display = False
        self.show(view, ROOT)
        self.status_line.set_slot("approval", approval)
        self.show_header(view, settings.model, str(settings.workspace))
        self.show_agent(view, ROOT, now)
        self.layout_side(view)

    def draw(self, view: SessionView, changes: Changes, selected: str, now: float) -> None:
        """What `changes` concern, redrawn (the header through `show_header`, after it)."""
        agents = self.agents_pane
        if agents.view is not view:
            agents.show_view(view)
        else:
            agents.sync([*changes.new_agents, *changes.agents])
        if selected in changes.agents:  # it may have finished: the prompt says so
            self.prompt_input.border_title = addressee(view, selected)
        transcript = self.transcript
        if transcript.agent_id != selected or transcript.items is not view.transcript(selected):
            transcript.show(selected, view.transcript(selected))
        else:
            transcript.add(changes.added.get(selected, []))
        transcript.update(changes.updated)
        inbox = self.inbox_pane
        if inbox.view is not view or changes.inbox:
            inbox.show(view)
        status, working = self.status_line, self.working_line
        if view.busy:
            working.starting = ""
        working.work = Work.of(view)  # streamed text moves the token estimate: a repaint of one row
        status.figures = Figures.of(view)  # equal figures (most redraws): nothing repaints
        if changes.status:
            status.message = ""
            working.reviews = view.needs_you  # any agent's, at any depth
        if changes.status or selected in changes.agents:
            self.show_agent(view, selected, now)

    def layout_side(self, view: SessionView) -> None:
        """The Agents/Inbox column: shown when there is more than one agent or an Inbox item,
        unless Ctrl+B chose otherwise."""
        auto = len(view.agents) > 1 or bool(view.inbox)
        shown = self.side_shown if self.side_shown is not None else auto
        side = self.side
        if side.display != shown:
            side.display = shown
            if not shown and side.has_focus_within:
                self.prompt_input.focus()

    def toggle_side(self, view: SessionView) -> None:
        """Ctrl+B: the side column shown or hidden from now on, whatever it holds."""
        self.side_shown = not self.side.display
        self.layout_side(view)

    def show_header(self, view: SessionView, model: str, workspace: str) -> None:
        """The title bar: the session's title, model and workspace (the view's, else the given)."""
        header = self.header_bar
        header.session_title, header.session_id, header.needs_you = view.title, view.session_id, view.needs_you
        header.model, header.workspace = view.model or model, view.workspace or workspace

    def show_agent(self, view: SessionView, selected: str, now: float) -> None:
        """The selected agent in one line above its transcript; the prompt's title says whom it goes to."""
        self.prompt_input.border_title = addressee(view, selected)
        row = view.agents.get(selected)
        self.agent_line.update(agent_line(row, now) if row is not None else "", layout=False)  # one row

    def tick(self, view: SessionView, selected: str, now: float) -> None:
        """Once a second: the elapsed times (the status line counts a retry down itself)."""
        self.agents_pane.tick()
        row = view.agents.get(selected)
        if row is not None and not row.final:
            self.show_agent(view, selected, now)

    def problem(self, text: str) -> None:
        """A session that cannot open: said in the prompt area (ctrl+p offers ways on), the start note gone."""
        self.say("")
        self.working_line.starting = ""
        self.setup.query_one("#setup-help", Static).update(
            Text(printable(text) + "  (ctrl+p: new session, resume session)")
        )
        self.setup.display = True

    def say(self, text: str) -> None:
        """A line in the status bar ('' clears it)."""
        self.status_line.message = text
