"""What a person sees of a call under review: the full command for bash and tmux, a diff for
write_file and edit_file (against the file as it is when the call is judged), the URL for
web_fetch. The guard puts it in the review's event (`GuardDecision.shown`), so the TUI's
approval modal and the terminal prompt show the same thing and no client reads the workspace.
Text from the model is shown with its control characters escaped, never performed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.core.safe_text import printable
from workbench.guard.rules import arguments
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
