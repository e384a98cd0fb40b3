"""The tool definitions the model reads, pinned whole (issue 36 item 8): each built-in tool's name,
description and JSON schema exactly as the model gateway sends them (`tools_to_wire`), and the
schema text an argument error quotes back. A change of wording or of a schema is a reviewed diff:
`pytest --inline-snapshot=review` (README, "Run the tests")."""

from __future__ import annotations

import json

from inline_snapshot import snapshot

from workbench.model.gateway import tools_to_wire
from workbench.tools.registry import Toolbox


def test_the_builtin_tools_as_the_model_reads_them() -> None:
    wire = {d["function"]["name"]: d["function"] for d in tools_to_wire(Toolbox().definitions())}
    assert wire == snapshot(
        {
            "skill": {
                "name": "skill",
                "description": """\
Load a skill's instructions by name (the system prompt lists the skills and what each is for).

Returns the instructions and the paths of the skill's other files, which read_file can open.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"description": "the skill's name as listed in the system prompt", "type": "string"}
                    },
                },
            },
            "read_file": {
                "name": "read_file",
                "description": """\
Read a text file as numbered lines (line number, a tab, then the line).

A page holds at most `limit` lines and about 256 KB; the note at its end says how to read
on. Also reads saved tool outputs and skill files.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["path"],
                    "properties": {
                        "limit": {
                            "description": "largest number of lines to read",
                            "default": 2000.0,
                            "type": "integer",
                        },
                        "offset": {
                            "description": "first line to read, 1-based; a negative number counts from the end (-20: the last 20 lines)",
                            "default": 1.0,
                            "type": "integer",
                        },
                        "path": {
                            "description": "file path relative to the workspace root (or absolute)",
                            "type": "string",
                        },
                    },
                },
            },
            "write_file": {
                "name": "write_file",
                "description": """\
Write a whole file (create or overwrite), creating parent folders as needed.

Prefer edit_file for changing part of an existing file. A file ends with a newline: one is
added when content lacks it, unless the file being replaced ends without one.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["path", "content"],
                    "properties": {
                        "content": {"description": "the complete new content of the file", "type": "string"},
                        "path": {"description": "file path relative to the workspace root", "type": "string"},
                    },
                },
            },
            "edit_file": {
                "name": "edit_file",
                "description": """\
Replace exact text in a file; the result shows the unified diff.

old_text must match the file exactly, whitespace and indentation included, and occur once
(or set replace_all). Copy it from read_file's output without the line-number prefix.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["path", "old_text", "new_text"],
                    "properties": {
                        "new_text": {"description": "the replacement text", "type": "string"},
                        "old_text": {
                            "description": "the exact text to replace, with enough surrounding lines to be unique",
                            "type": "string",
                        },
                        "replace_all": {
                            "description": "replace every occurrence instead of exactly one",
                            "default": False,
                            "type": "boolean",
                        },
                        "path": {"description": "file path relative to the workspace root", "type": "string"},
                    },
                },
            },
            "ls": {
                "name": "ls",
                "description": """\
List one folder: sub-folders first (ending in /), then files with their sizes.

`.git` and entries that .gitignore ignores are left out (a note says how many).\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": [],
                    "properties": {
                        "path": {
                            "description": "folder relative to the workspace root",
                            "default": ".",
                            "type": "string",
                        }
                    },
                },
            },
            "glob": {
                "name": "glob",
                "description": """\
Find files by name pattern; sorted paths, at most 200.

A pattern without "/" matches file names at any depth ("*.py"); one with "/" matches the
path below `path` ("src/**/*.go": ** spans folders, * stays in one). `{a,b}` and `[abc]`
work too. `.git` and .gitignore'd files are left out.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["pattern"],
                    "properties": {
                        "pattern": {
                            "description": 'glob pattern, e.g. "**/*.py", "*.{ts,tsx}", "tests/test_*.py"',
                            "type": "string",
                        },
                        "path": {
                            "description": "folder to search below, relative to the workspace root",
                            "default": ".",
                            "type": "string",
                        },
                    },
                },
            },
            "grep": {
                "name": "grep",
                "description": """\
Search file contents with a regular expression; prints path:line:text, sorted, at most 200 lines.

Python regex syntax, case-sensitive (start with (?i) to ignore case); ^ and $ match at
line ends. Binary files, `.git` and .gitignore'd files are skipped.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["pattern"],
                    "properties": {
                        "glob": {
                            "description": 'only search files whose name matches this glob, e.g. "*.py" or "src/**/*.go"',
                            "default": "",
                            "type": "string",
                        },
                        "pattern": {
                            "description": 'regular expression, e.g. "def \\w+_test", "TODO|FIXME"',
                            "type": "string",
                        },
                        "path": {
                            "description": "file or folder to search, relative to the workspace root",
                            "default": ".",
                            "type": "string",
                        },
                    },
                },
            },
            "web_search": {
                "name": "web_search",
                "description": "Search the web; list each hit's title, URL and snippet, with the backend that answered.",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["query"],
                    "properties": {
                        "query": {
                            "description": "what to search for, as you would type it into a search engine",
                            "type": "string",
                        },
                        "max_results": {
                            "description": "how many hits to list (1-20)",
                            "default": 8.0,
                            "type": "integer",
                        },
                    },
                },
            },
            "web_fetch": {
                "name": "web_fetch",
                "description": "Fetch a web page over HTTP(S) and return it as readable text (HTML becomes Markdown).",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["url"],
                    "properties": {
                        "url": {"description": "the http:// or https:// URL to fetch", "type": "string"},
                        "max_chars": {
                            "description": "cut the returned text after this many characters",
                            "type": "integer",
                        },
                    },
                },
            },
            "bash": {
                "name": "bash",
                "description": """\
Run a bash command in your persistent shell (cd and exported variables carry over; set -e
lasts for one call).

stdout and stderr come back interleaved; a non-zero exit status is an error. Stdin is a
terminal nobody types into: a command that waits for input runs into the timeout, so use
the tmux tool for interactive programs, REPLs and long-running servers. Output goes to a
file, so programs that buffer it show nothing until they exit (Python does not buffer
here); for line-buffered output from others use `stdbuf -oL CMD` or the program's option.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["command"],
                    "properties": {
                        "command": {"description": "the bash command line or script", "type": "string"},
                        "timeout": {
                            "description": "seconds to wait before giving up (default 120); the command then keeps running in a tmux window you can inspect or stop with the tmux tool",
                            "type": "number",
                        },
                    },
                },
            },
            "tmux": {
                "name": "tmux",
                "description": """\
Run and drive programs in tmux windows: dev servers, REPLs, TUIs, anything interactive.

new: start `command` (or a shell) in a new window; send: type `text` (a newline presses
Enter) and/or press `keys`; capture: the visible screen, or the last `lines` lines; wait:
until `pattern` (a regex) shows in the window (screen and scrollback, so text already there
counts) or the program exits; list: your windows;
kill: close a window and stop what runs in it.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": ["action"],
                    "properties": {
                        "keys": {
                            "description": 'for send: space-separated tmux key names, e.g. "Enter", "C-c", "Up Up Enter"',
                            "type": "string",
                        },
                        "text": {"description": "for send: literal text to type", "type": "string"},
                        "pattern": {
                            "description": "for wait: a regex to wait for (default: wait for the program to exit)",
                            "type": "string",
                        },
                        "action": {
                            "enum": ["new", "send", "capture", "wait", "list", "kill"],
                            "description": "new, send, capture, wait, list or kill",
                            "type": "string",
                        },
                        "command": {
                            "description": "for new: the program to run, as a shell command line",
                            "type": "string",
                        },
                        "lines": {
                            "description": "for capture: the last N lines including scrollback (default: the visible screen)",
                            "type": "integer",
                        },
                        "window": {"description": "the window's name (letters, digits, . _ + -)", "type": "string"},
                        "timeout": {"description": "for wait: seconds to wait (default 30)", "type": "number"},
                    },
                },
            },
            "subagent": {
                "name": "subagent",
                "description": """\
Delegate work to subagents: create one, list yours, cancel one, or message one.

create starts a child agent on `prompt`. mode sync waits and returns its final answer;
async (the default) returns its id at once and its result arrives later in your Inbox
(end your turn without tool calls to wait for it); fork is async but the child starts
from a copy of this conversation. A child's failure comes back with its cause.\
""",
                "parameters": {
                    "additionalProperties": False,
                    "type": "object",
                    "required": [],
                    "properties": {
                        "prompt": {
                            "description": "create: the task, self-contained (an async or sync child does not see this conversation)",
                            "default": "",
                            "type": "string",
                        },
                        "text": {
                            "description": "message: the text to put in that agent's Inbox; it reads it at its next turn",
                            "default": "",
                            "type": "string",
                        },
                        "action": {
                            "enum": ["create", "list", "cancel", "message"],
                            "default": "create",
                            "description": "create (the default), list, cancel or message",
                            "type": "string",
                        },
                        "tools": {
                            "description": 'create: the subset of your tools the child may use (default, or empty: all of yours); an MCP server\'s tools by a glob such as "github__*"',
                            "items": {"type": "string"},
                            "type": "array",
                        },
                        "mode": {
                            "enum": ["sync", "async", "fork"],
                            "default": "async",
                            "description": "create: sync (wait for the answer), async (result in your Inbox) or fork (async, with a copy of this conversation)",
                            "type": "string",
                        },
                        "name": {
                            "description": "create: a short name shown in lists and the Inbox",
                            "default": "",
                            "type": "string",
                        },
                        "timeout": {
                            "description": "create: seconds the child may run before it is stopped (0: no limit)",
                            "default": 0.0,
                            "type": "number",
                        },
                        "id": {"description": "cancel, message: the subagent's id", "default": "", "type": "string"},
                        "model": {
                            "description": "create: another model for the child; leave empty (your own model) unless the task names one",
                            "default": "",
                            "type": "string",
                        },
                    },
                },
            },
        }
    )


def test_the_schema_an_argument_error_quotes_is_the_one_offered() -> None:
    """Argument errors quote `schema_text` (compact JSON of the tool's schema): the same schema as the
    definition, its arguments in the order of the tool's signature (the order pinned here; the whole
    text is pinned with the argument errors, tests/tools/test_words_arguments.py)."""
    box = Toolbox()
    texts = {name: box.schema_text(name) for name in box.tools}
    for d in tools_to_wire(box.definitions()):
        assert json.loads(texts[d["function"]["name"]]) == d["function"]["parameters"]
    order = {name: list(json.loads(text)["properties"]) for name, text in texts.items()}
    assert order == snapshot(
        {
            "skill": ["name"],
            "read_file": ["path", "offset", "limit"],
            "write_file": ["path", "content"],
            "edit_file": ["path", "old_text", "new_text", "replace_all"],
            "ls": ["path"],
            "glob": ["pattern", "path"],
            "grep": ["pattern", "path", "glob"],
            "web_search": ["query", "max_results"],
            "web_fetch": ["url", "max_chars"],
            "bash": ["command", "timeout"],
            "tmux": ["action", "window", "command", "keys", "text", "lines", "pattern", "timeout"],
            "subagent": ["action", "prompt", "mode", "name", "tools", "model", "timeout", "id", "text"],
        }
    )
