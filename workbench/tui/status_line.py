"""The status line: tokens, context used, cost, a retry countdown, the tmux attach command.

Named slots hold what later features add (the approval mode, the sandbox): `set_slot`.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from workbench.core.words import ROOT_ID
from workbench.tui.items import NoticeItem
from workbench.tui.text import printable, tokens
from workbench.tui.view import SessionView


class StatusLine(Static):
    def __init__(self, clock: Callable[[], float], **kwargs: object) -> None:
        super().__init__(markup=False, **kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self.view: SessionView | None = None
        self.window = 0  # the model's context window in tokens; 0 while unknown
        self.slots: dict[str, str] = {}  # e.g. "approval" -> "ask", "sandbox" -> "workspace-write"
        self.message = ""  # a short state: "working", "interrupting"

    def set_slot(self, name: str, value: str) -> None:
        if value:
            self.slots[name] = value
        else:
            self.slots.pop(name, None)
        self.sync()

    def sync(self) -> None:
        view = self.view
        text = Text()
        if view is None:
            self.update(Text(self.message, style="dim"))  # before a session: what the app is doing
            return
        usage = view.usage
        text.append(f"{tokens(usage.input_tokens)} in / {tokens(usage.output_tokens)} out")
        if self.window and view.prompt_tokens:  # unknown window (a model litellm has not mapped): not shown
            text.append(f"  ctx {100 * view.prompt_tokens / self.window:.0f}%")
        if usage.HasField("cost"):
            text.append(f"  ${usage.cost:.2f}")
        retry = self._retry(view)
        if retry:
            text.append(f"  {retry}", style="bold yellow")
        if self.message:
            text.append(f"  {self.message}", style="italic")
        for name, value in self.slots.items():
            text.append(f"  {name}: {printable(value)}", style="cyan")
        if view.attach_command and view.shell_ran:  # no shell ran: nothing to watch
            text.append(f"  watch: {printable(view.attach_command)}", style="dim")
        self.update(text)

    def _retry(self, view: SessionView) -> str:
        items = view.transcript(ROOT_ID)
        last = items[-1] if items else None
        if isinstance(last, NoticeItem) and last.kind == "retry":
            left = last.until - self.clock()
            if left > 0.5:
                return f"retrying in {left:.0f} s"
        return ""
