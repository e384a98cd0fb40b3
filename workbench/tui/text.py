"""Turning model and tool text into what the screen shows: data, never markup or escape codes.

Every string from the model or a tool passes through `printable` before it reaches a widget:
control characters (ESC, BEL, CR, ...) are shown escaped (`\\x1b`), so a tool that prints
colour codes or a model that writes `[bold]` cannot restyle or move the terminal. Widgets get
`rich.text.Text` objects (never markup strings) or use `markup=False`.
"""

from __future__ import annotations

import json

from rich.text import Text

from workbench.core.safe_text import printable


def plain(text: str, style: str = "") -> Text:
    """A Text of untrusted `text`, escaped, never parsed as markup. The style is a span: Textual reads
    a Text's own style string as CSS ("red" is #ff0000 whatever the theme), a span's as rich's ANSI
    colour, which the theme's ANSI table makes readable."""
    return Text().append(printable(text), style=style or None)


def one_line(text: str, limit: int = 80) -> str:
    """The first line of `text`, escaped, cut to `limit` characters with an ellipsis."""
    line = printable(text.strip().splitlines()[0] if text.strip() else "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


# The argument that says most about a call, per tool: shown after the tool's name.
_SUMMARY_KEYS = ("path", "command", "pattern", "query", "url", "name", "action", "prompt", "keys", "text")


def argument_summary(name: str, arguments: str, limit: int = 70) -> str:
    """A one-line summary of a call's JSON arguments: the telling argument, else the raw text."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return one_line(arguments, limit)
    if not isinstance(args, dict):
        return one_line(arguments, limit)
    if name == "tmux":
        parts = [str(args.get(k)) for k in ("action", "window", "command", "keys", "text") if args.get(k)]
        return one_line(" ".join(parts), limit)
    if name == "subagent":
        parts = [str(args.get(k)) for k in ("action", "mode", "name", "id", "prompt") if args.get(k)]
        return one_line(" ".join(parts), limit)
    for key in _SUMMARY_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return one_line(value, limit)
    return one_line(arguments, limit)


def arguments_of(arguments: str) -> dict[str, object]:
    """The call's arguments as a dict ({} when they are not a JSON object)."""
    try:
        args = json.loads(arguments or "{}")
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to read: shown as text
        return {}
    return args if isinstance(args, dict) else {}


def diff_line_style(line: str) -> str:
    """The style of one line of a unified diff: headers bold, added green, removed red, hunks cyan."""
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    if line.startswith("@@"):
        return "cyan"
    return ""


def diff_text(diff: str) -> Text:
    """A unified diff, escaped, with added lines green and removed lines red."""
    text = Text()
    for line in printable(diff).splitlines():
        text.append(line + "\n", style=diff_line_style(line))
    text.rstrip()
    return text


def tokens(count: int) -> str:
    """A token count a person reads at a glance: 950, 12.3k, 1.2M."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def duration(seconds: float) -> str:
    """Elapsed time: 0.4s, 42s, 3m05s, 1h02m."""
    if seconds < 10:
        return f"{max(seconds, 0):.1f}s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
