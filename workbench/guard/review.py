"""What a person sees of a call under review, and the y/n prompt of a headless run on a terminal.

The TUI's approval modal and the terminal prompt show the same thing: the full command for
bash and tmux, a diff for write_file and edit_file, the URL for web_fetch. Text from the
model is shown with its control characters escaped, never performed.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from workbench.core.safe_text import printable
from workbench.guard.guardrail import NotWaiting, arguments
from workbench.pb import workbench_pb2 as pb
from workbench.tools.files.read_write import unified_diff

MAX_SHOWN_LINES = 400
MAX_READ_BYTES = 2_000_000


def _current_text(workspace: Path, path: str) -> str | None:
    """The file's text now, or None when it is absent, unreadable, binary or too big to diff."""
    target = Path(path).expanduser()
    target = target if target.is_absolute() else workspace / target
    try:
        if target.stat().st_size > MAX_READ_BYTES:
            return None
        return target.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _clip_lines(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= MAX_SHOWN_LINES:
        return text
    return "\n".join([*lines[:MAX_SHOWN_LINES], f"... {len(lines) - MAX_SHOWN_LINES:,} more lines"])


def _file_change(call: pb.ToolCall, args: dict[str, Any], workspace: Path) -> str:
    path = str(args.get("path", ""))
    before = _current_text(workspace, path)
    if call.name == "write_file":
        after = str(args.get("content", ""))
        if before is None:
            return f"new file {path} ({len(after.splitlines())} lines):\n" + unified_diff("", after, path)
        return unified_diff(before, after, path) or f"{path}: the content is unchanged"
    old, new = str(args.get("old_text", "")), str(args.get("new_text", ""))
    if before is not None and old and old in before:
        after = before.replace(old, new) if args.get("replace_all") else before.replace(old, new, 1)
        return unified_diff(before, after, path)
    # the text is not (exactly) there: the tool will say so; show what it was asked to do
    removed = "".join(f"-{line}\n" for line in old.splitlines())
    added = "".join(f"+{line}\n" for line in new.splitlines())
    return f"edit {path} (old_text not found as given):\n{removed}{added}"


def describe_call(call: pb.ToolCall, workspace: Path) -> str:
    """The call as a person reviews it, with control characters escaped."""
    args = arguments(call)
    if call.name == "bash":
        text = f"$ {args.get('command', call.arguments)}"
    elif call.name == "tmux":
        window = f" in window {args['window']}" if args.get("window") else ""
        parts = [f"tmux {args.get('action', '?')}{window}"]
        if args.get("command"):
            parts.append(f"$ {args['command']}")
        if args.get("text"):
            parts.append(f"types: {args['text']!r}")
        if args.get("keys"):
            parts.append(f"keys: {args['keys']}")
        text = "\n".join(parts)
    elif call.name in ("write_file", "edit_file"):
        text = _file_change(call, args, workspace)
    elif call.name == "web_fetch":
        text = f"fetch {args.get('url', call.arguments)}"
    else:
        text = f"{call.name} {json.dumps(args, ensure_ascii=False, indent=1) if args else call.arguments}"
    return printable(_clip_lines(text))


Decide = Callable[[str, bool, str, bool], None]  # Session.decide(call_id, approve, reason, remember)
ANSWERS = "[y]es once / [a]lways (this tool or exact command, for the session) / [n]o, optionally 'n: why'"


def parse_reply(line: str) -> tuple[bool, str, bool] | None:
    """(approve, reason, remember) from a typed answer; None when it is not one."""
    text = line.strip()
    word, _, rest = text.partition(":") if ":" in text else text.partition(" ")
    word = word.strip().lower()
    if word in ("y", "yes"):
        return True, "", False
    if word in ("a", "always"):
        return True, "", True
    if word in ("n", "no"):
        return False, rest.strip(), False
    return None


class TerminalReviewer:
    """Asks y/n on the terminal for each review of a headless run, one at a time, while the
    other agents keep running. Subscribe `on_event` to the session and run `run()` as a task."""

    def __init__(
        self,
        decide: Decide,
        pending: Callable[[], list[pb.GuardDecision]],
        workspace: Path,
        *,
        stdin: TextIO,
        stderr: TextIO,
    ):
        self.decide, self.pending, self.workspace = decide, pending, workspace
        self.stdin, self.stderr = stdin, stderr
        self.queue: asyncio.Queue[pb.GuardDecision] = asyncio.Queue()

    def on_event(self, event: pb.Event) -> None:
        if event.WhichOneof("kind") == "guard_decision" and event.guard_decision.verdict == pb.GUARD_VERDICT_REVIEW:
            self.queue.put_nowait(event.guard_decision)

    async def run(self) -> None:
        while True:
            decision = await self.queue.get()
            if decision.call_id not in {d.call_id for d in self.pending()}:
                continue  # answered already (an approval for the session covered it) or cancelled
            answer = await self._ask(decision)
            try:
                self.decide(decision.call_id, *answer)
            except NotWaiting:
                pass  # it stopped waiting while the person typed (the run was cancelled)

    async def _ask(self, decision: pb.GuardDecision) -> tuple[bool, str, bool]:
        shown = describe_call(decision.call, self.workspace)
        self.stderr.write(f"\nreview: {printable(decision.reason)}\n{shown}\n")
        while True:
            self.stderr.write(f"approve? {ANSWERS}: ")
            self.stderr.flush()
            line = await self._read_line()
            if line is None:
                return False, "no answer (end of input)", False
            if (answer := parse_reply(line)) is not None:
                return answer

    async def _read_line(self) -> str | None:
        """One line from stdin in a daemon thread (a blocked read must not hold up the exit)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str | None] = loop.create_future()

        def answer(line: str) -> None:
            if not done.done():
                done.set_result(line or None)

        def read() -> None:
            loop.call_soon_threadsafe(answer, self.stdin.readline())

        threading.Thread(target=read, name="review-prompt", daemon=True).start()
        return await done
