"""Every key of the TUI, in one table: the widgets' bindings, the footer, the help screen (F1 or ?)
and the README's key table all come from `KEYS`.

A key belongs to one place (`where`): `app` keys work anywhere; the others only while that pane
has focus (single letters such as `c`, `y`, `t` act only there, and the footer shows them).
Keys a widget reads itself (Enter in the prompt) have no action: they are listed for people,
and their widget handles them. Add a key here, not in a widget's BINDINGS.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType

WHERE = {
    "app": "anywhere",
    "prompt": "prompt",
    "transcript": "transcript",
    "search": "search (Ctrl+F)",
    "agents": "Agents pane",
    "inbox": "Inbox pane",
    "approval": "approval",
    "screens": "pickers, help, changed files",
    "rewind": "the rewind screen",
    "review_rewind": "a rewind's files",
    "files": "changed files (Ctrl+O)",
}


@dataclass(frozen=True)
class Key:
    keys: str  # Textual key names, comma-separated: "c,delete"
    label: str  # how people write it: "c or Delete"
    where: str  # a key of WHERE
    does: str  # one sentence for the README and the help screen
    action: str = ""  # the Textual action; "" when the widget reads the key itself
    footer: str = ""  # the footer's short word; "" keeps it out of the footer
    priority: bool = False
    listed: bool = True  # False: a second key for a listed row (the README and help list it once)


KEYS: tuple[Key, ...] = (
    Key(
        "enter",
        "Enter",
        "prompt",
        "send the prompt (while the agent works it is queued and reaches it at its next turn)",
    ),
    Key(
        "ctrl+j,shift+enter",
        "Ctrl+J",
        "prompt",
        "a newline in the prompt (Shift+Enter too, where the terminal sends it)",
    ),
    Key("up,down", "Up / Down", "prompt", "earlier prompts (on the first / last line of the prompt)"),
    Key(
        "escape", "Esc", "prompt", "interrupt the running turn; the session stays usable", "app.interrupt", "interrupt"
    ),
    Key("", "any letter", "app", "typed where no pane uses it, it goes to the prompt (and focuses it)"),
    Key("escape", "Esc", "transcript", "back to the prompt", "app.focus_prompt", "prompt"),
    Key("escape", "Esc", "agents", "back to the prompt", "app.focus_prompt", "prompt"),
    Key("escape", "Esc", "inbox", "back to the prompt", "app.focus_prompt", "prompt"),
    Key("ctrl+c", "Ctrl+C twice", "app", "quit (the first press says how)", "quit_twice", "", priority=True),
    Key("f1", "F1 or ?", "app", "this list of keys (? in a pane)", "help", "keys"),
    Key("question_mark", "?", "transcript", "this list of keys", "app.help", listed=False),
    Key("question_mark", "?", "agents", "this list of keys", "app.help", listed=False),
    Key("question_mark", "?", "inbox", "this list of keys", "app.help", listed=False),
    Key("tab,shift+tab", "Tab / Shift+Tab", "app", "move between the prompt, the transcript and the panes"),
    Key("ctrl+b", "Ctrl+B", "app", "show or hide the Agents and Inbox column", "toggle_side", "agents", priority=True),
    Key("ctrl+f", "Ctrl+F", "app", "search the shown transcript", "search", "search", priority=True),
    Key("ctrl+o", "Ctrl+O", "app", "changed files, each with its diff", "changed_files", ""),
    Key(
        "ctrl+g",
        "Ctrl+G",
        "app",
        "rewind: the files, the conversation or both back to before one of your prompts",
        "rewind",
    ),
    Key("ctrl+t", "Ctrl+T", "app", "cycle the approval mode (ask, auto, read-only)", "cycle_approval", ""),
    Key(
        "ctrl+backslash",
        "Ctrl+\\",
        "app",
        "detach: leave the session running in the engine and close the app (workbench attach ID returns)",
        "detach",
    ),
    Key("ctrl+r", "Ctrl+R", "app", "the next call waiting for your approval, from any agent", "next_review", "review"),
    Key("ctrl+p", "Ctrl+P", "app", "commands: new, resume, switch model, copy answer, compact, tmux attach, demo"),
    Key("up", "Up", "transcript", "the item before (a tall item scrolls first)", "previous_item", "item"),
    Key("down", "Down", "transcript", "the item after (a tall item scrolls first)", "next_item", "", listed=True),
    Key(
        "enter,space",
        "Enter or Space",
        "transcript",
        "open or close the item; a long output opens 40 lines, then all",
        "toggle_item",
        "open",
    ),
    Key("t", "t", "transcript", "a defect's traceback (on a call or notice that has one)", "traceback", "traceback"),
    Key(
        "y",
        "y",
        "transcript",
        "copy the last answer (OSC 52, and the tmux buffer inside tmux)",
        "app.copy_answer",
        "copy",
    ),
    Key("home", "Home", "transcript", "the oldest item, at once (End: the newest)", "first_item", "first"),
    Key("end", "End", "transcript", "the newest item", "last_item", "last"),
    Key("pageup", "PageUp / PageDown", "transcript", "a page up or down (the mouse wheel scrolls too)", "page_up"),
    Key("pagedown", "PageDown", "transcript", "a page down", "page_down", listed=False),
    Key("enter,down", "Enter / Down", "search", "the next match", "next_match", "next"),
    Key("shift+enter,up", "Shift+Enter / Up", "search", "the previous match", "previous_match", "previous"),
    Key("escape", "Esc", "search", "close the search", "close_search", "close"),
    Key(
        "up,down",
        "Up / Down",
        "agents",
        "select an agent: the transcript shows it, and the prompt then writes to it (steering)",
        "",
        "select",
    ),
    Key("enter", "Enter", "agents", "on a row that needs you: open that agent's review", "", ""),
    Key(
        "c,delete", "c or Delete", "agents", "cancel the selected subagent after y to confirm", "cancel_agent", "cancel"
    ),
    Key("enter", "Enter", "inbox", "show the child that sent the item", "", "open"),
    Key("y", "y", "approval", "approve once", "approve", "approve"),
    Key("a", "a", "approval", "approve this tool (or this exact command) for the session", "approve_always", "always"),
    Key("n", "n", "approval", "deny; the reason typed in its field reaches the model", "deny", "deny"),
    Key("c", "c", "approval", "cancel the agent (a review of a call it repeats)", "cancel_agent", ""),
    Key("escape", "Esc", "approval", "later: the call keeps waiting (Ctrl+R shows it again)", "later", "later"),
    Key("escape", "Esc", "screens", "go back", "dismiss_none", "back"),
    Key("c", "c", "rewind", "put back the files only (the default)", "mode('code')", "files"),
    Key("v", "v", "rewind", "put back the conversation only", "mode('conversation')", "conversation"),
    Key("b", "b", "rewind", "put back both", "mode('both')", "both"),
    Key("y", "y", "review_rewind", "go ahead with the rewind", "go_ahead", "go ahead"),
    Key(
        "r",
        "r",
        "files",
        "put the highlighted file back as it was before the last turn that changed it",
        "restore",
        "restore",
    ),
    Key("f1,question_mark", "F1 or ?", "screens", "close the keys", "dismiss_none", listed=False),
)


def bindings(where: str) -> list[BindingType]:
    """The Textual bindings of one place (keys without an action are read by the widget)."""
    return [
        Binding(k.keys, k.action, k.footer or k.does, show=bool(k.footer), priority=k.priority)
        for k in KEYS
        if k.where == where and k.action
    ]


# The command palette's own commands (ctrl+p): title, what it does, the app's action it runs.
PALETTE: list[tuple[str, str, str]] = [
    ("New session", "Start a new session in this workspace", "new_session"),
    ("Resume session", "Pick a stored session and continue it", "resume_session"),
    ("Switch model", "Continue this session with another model", "switch_model"),
    ("Cancel run", "Interrupt the running turn (Esc)", "interrupt"),
    ("Changed files", "Files this session wrote or edited, with diffs (ctrl+o)", "changed_files"),
    ("Rewind", "Files, conversation or both back to before a prompt (ctrl+g)", "rewind"),
    ("Approval mode", "Cycle ask, auto, read-only (ctrl+t)", "cycle_approval"),
    ("Copy last answer", "The root agent's last answer to the clipboard", "copy_answer"),
    ("Compact now", "Summarize the older turns now (between runs)", "compact"),
    ("Detach", "Leave the session running in the engine and close the app (ctrl+\\)", "detach"),
    ("Show tmux attach command", "Watch the session's shell", "show_attach"),
    ("Toggle agents pane", "Show or hide the Agents pane", "toggle_pane('agents')"),
    ("Toggle inbox pane", "Show or hide the Inbox pane", "toggle_pane('inbox')"),
    ("Try the offline demo", "The scripted demo model in a new temporary folder", "try_demo"),
]


def keys_of(where: str) -> list[Key]:
    return [k for k in KEYS if k.where == where]


def grouped() -> list[tuple[str, str, str]]:
    """(key, where, does) for people: a key that does the same in several places is one row."""
    rows: dict[tuple[str, str], list[str]] = {}
    for k in KEYS:
        if not k.listed:
            continue
        rows.setdefault((k.label, k.does), []).append(WHERE[k.where])
    return [(label, ", ".join(wheres), does) for (label, does), wheres in rows.items()]


def markdown_table() -> str:
    """The README's key table (tests/tui/test_keymap.py checks the README holds it)."""
    lines = ["| key | where | does |", "|---|---|---|"]
    lines += [f"| {label} | {where} | {does} |" for label, where, does in grouped()]
    return "\n".join(lines)


if __name__ == "__main__":  # `python -m workbench.tui.keymap` prints the README's table
    print(markdown_table())
