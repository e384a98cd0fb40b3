"""The guard's rules: built-in patterns that always need review, and the person's own rules.

Bash commands are read by `guard_shell` (the way bash splits them); the rules err on the side
of review: a heredoc's text or an `echo $(rm -rf /)` may be reviewed too.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from workbench.config.settings import ConfigError
from workbench.pb import workbench_pb2 as pb
from workbench.terminal.shell_parse import SHELLS, Command, Pipeline, Places, parse
from workbench.tools.arguments import BadArguments, parse_arguments
from workbench.tools.registry import is_dynamic

FETCHERS = frozenset({"curl", "wget"})
AS_ANOTHER_USER = frozenset({"sudo", "doas", "su", "pkexec", "run0"})
# Programs that only read: naming a .git/ path as their argument is not a write.
READERS = frozenset(
    {"cat", "ls", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "stat", "file", "wc", "diff"}
    | {"tree", "du", "test", "[", "echo", "printf", "realpath", "readlink", "md5sum", "sha256sum"}
)
_GIT_PATH = re.compile(r"(?:^|/)\.git(?:/|$)")
_SUBSTITUTION_OF_FETCH = re.compile(
    r"(?:^|[\s;&|(])(?:(?:\S*/)?(?:ba|z|da|k|mk|a)?sh|eval|source|\.)\s[^;&|\n]*?(?:\$\(|<\(|`)\s*(?:\S*/)?(?:curl|wget)\b"
)

# --- the built-in rules -------------------------------------------------------------------------


def _short_flags(args: tuple[str, ...]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--") and a != "-")


def _operands(args: tuple[str, ...]) -> list[str]:
    if "--" in args:
        i = args.index("--")
        return [a for a in args[:i] if not a.startswith("-")] + list(args[i + 1 :])
    return [a for a in args if not a.startswith("-") or a == "-"]


def _recursive_delete(command: Command, places: Places) -> str:
    args = command.args
    targets: list[str] = []
    if command.program == "rm":
        options = args[: args.index("--")] if "--" in args else args
        if "--recursive" in options or {"r", "R"} & set(_short_flags(options)):
            targets = _operands(args)
    elif command.program == "find" and ("-delete" in args or _find_runs_rm(args)) and not _find_filters(args):
        targets = _find_starts(args)
    for target in targets:
        if what := places.danger(target):
            return f"recursive delete of {what}"
    return ""


def _find_starts(args: tuple[str, ...]) -> list[str]:
    """find's starting folders: the words before its expression ("." when none)."""
    starts = list(itertools.takewhile(lambda a: not (a.startswith("-") or a in ("(", "!")), args))
    return starts or ["."]


# find's options and actions that do not narrow what it deletes
_FIND_UNFILTERED = frozenset(
    {"-delete", "-depth", "-mindepth", "-maxdepth", "-xdev", "-mount", "-print", "-print0", "-type", "-follow"}
    | {"-noleaf", "-ignore_readdir_race", "-exec", "-execdir", "-ok", "-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3"}
)


def _find_filters(args: tuple[str, ...]) -> bool:
    """Whether find's expression narrows what it matches (-name, -path, -mtime, ...)."""
    starts = list(itertools.takewhile(lambda a: not (a.startswith("-") or a in ("(", "!")), args))
    for arg in args[len(starts) :]:
        if arg in ("-exec", "-execdir", "-ok"):
            return False  # what follows is the command it runs
        if arg.startswith("-") and arg not in _FIND_UNFILTERED:
            return True
    return False


def _find_runs_rm(args: tuple[str, ...]) -> bool:
    return any(a in ("-exec", "-execdir", "-ok") and i + 1 < len(args) and
               os.path.basename(args[i + 1]) == "rm" for i, a in enumerate(args))  # fmt: skip


def _force_push(command: Command, places: Places) -> str:
    if command.program != "git":
        return ""
    args = list(command.args)
    while args and args[0].startswith("-"):  # git's own options: -C dir, -c key=value, --git-dir=...
        option = args.pop(0)
        if option in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") and args:
            args.pop(0)
    if not args or args[0] != "push":
        return ""
    rest = tuple(args[1:])
    forced = any(
        a in ("--force", "--mirror") or a.startswith(("--force-with-lease", "--force-if-includes")) for a in rest
    )
    forced = forced or "f" in _short_flags(rest) or any(a.startswith("+") for a in _operands(rest))
    return "a forced git push (it can overwrite the remote's history)" if forced else ""


def _world_writable(mode: str) -> bool:
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return int(mode[-1]) & 2 != 0
    for clause in mode.split(","):
        m = re.fullmatch(r"([ugoa]*)([-+=])([rwxXst]*)", clause)
        if m and m.group(2) in "+=" and "w" in m.group(3) and ("o" in m.group(1) or "a" in m.group(1)):
            return True
    return False


def _chmod_open(command: Command, places: Places) -> str:
    if command.program != "chmod":
        return ""
    args = command.args
    recursive = "--recursive" in args or "R" in _short_flags(tuple(a for a in args if not re.fullmatch(r"-[rwx]+", a)))
    modes = [a for a in args if not a.startswith("--") and (not a.startswith("-") or re.fullmatch(r"-[rwx]+", a))]
    if recursive and modes and _world_writable(modes[0]):
        return f"a recursive chmod {modes[0]} (everyone may write every file below)"
    return ""


def _pipes_to_shell(pipeline: Pipeline) -> str:
    fetch = next((i for i, c in enumerate(pipeline) if c.program in FETCHERS), None)
    if fetch is not None and any(c.program in SHELLS for c in pipeline[fetch + 1 :]):
        return f"a download piped into a shell ({pipeline[fetch].program} ... | sh)"
    return ""


def _as_another_user(command: Command, places: Places) -> str:
    who = next((w for w in command.wrappers if w in AS_ANOTHER_USER), "")
    who = who or (command.program if command.program in AS_ANOTHER_USER else "")
    return f"runs a command as another user ({who})" if who else ""


def _git_dir_write(command: Command, places: Places) -> str:
    named = list(command.redirects)
    if command.program not in READERS and command.program != "git":
        if command.program != "find" or "-delete" in command.args or _find_runs_rm(command.args):
            named += command.args
    path = next((p for p in named if _GIT_PATH.search(p)), None)
    return f"names a path inside .git/ ({path})" if path else ""


COMMAND_RULES = (_recursive_delete, _force_push, _chmod_open, _as_another_user, _git_dir_write)


def bash_rule(command: str, places: Places) -> str:
    """Why a built-in rule wants this bash command reviewed; "" when none does."""
    if _SUBSTITUTION_OF_FETCH.search(command):
        return 'built-in rule: a download run by a shell (sh <(curl ...), bash -c "$(curl ...)")'
    for pipeline in parse(command):
        if why := _pipes_to_shell(pipeline):
            return f"built-in rule: {why}"
        for c in pipeline:
            if c.program in ("cd", "pushd"):
                places = places.moved(next((a for a in c.args if not a.startswith("-")), ""))
            for rule in COMMAND_RULES:
                if why := rule(c, places):
                    return f"built-in rule: {why}"
    return ""


def file_rule(path: str) -> str:
    """Why a built-in rule wants a file tool's write reviewed; "" when none does."""
    if _GIT_PATH.search(os.path.normpath(path.strip() or ".")):
        return f"built-in rule: a write inside .git/ ({path})"
    return ""


# --- the person's rules ---------------------------------------------------------------------------

# The argument a rule's pattern matches, per tool; other tools match their arguments' JSON text.
PRIMARY_ARGUMENT = {
    "bash": "command",
    "read_file": "path",
    "write_file": "path",
    "edit_file": "path",
    "ls": "path",
    "glob": "pattern",
    "grep": "pattern",
    "web_fetch": "url",
    "web_search": "query",
    "skill": "name",
    "subagent": "prompt",
}


def arguments(call: pb.ToolCall) -> dict[str, Any]:
    """The call's arguments as a dict; {} when they cannot be read (the tool refuses those)."""
    try:
        return parse_arguments(call.arguments)
    except BadArguments:
        return {}


def primary_text(tool: str, args: dict[str, Any], raw: str) -> str:
    """The text a rule's pattern is matched against: the command, path, URL, ... of the call; for a
    tool of an MCP server (`server__tool`), its arguments as compact JSON."""
    if is_dynamic(tool):
        return json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    if tool == "tmux":
        return " ".join(str(args[k]) for k in ("command", "text", "keys") if args.get(k))
    key = PRIMARY_ARGUMENT.get(tool)
    if key is None:
        return raw
    value = args.get(key)
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Rule:
    """A person's rule, `tool:pattern`: the tool name and a glob on its main argument (`*` any text)."""

    text: str
    kind: str  # "allow", "review", "block"
    tool: str
    pattern: re.Pattern[str]

    @classmethod
    def parse(cls, text: str, kind: str) -> Rule:
        tool, sep, pattern = text.partition(":")
        tool = tool.strip()
        if not tool or not re.fullmatch(r"[A-Za-z0-9_.*?-]+", tool):
            raise ConfigError(
                f"guard_{kind}: rule {text!r} must be 'tool:pattern' (for example 'bash:git status*' or "
                "'web_fetch:https://docs.python.org/*')"
            )
        return cls(text, kind, tool, re.compile(fnmatch.translate(pattern if sep else "*"), re.DOTALL))

    def matches_tool(self, tool: str) -> bool:
        return fnmatch.fnmatchcase(tool, self.tool)

    def matches(self, tool: str, text: str) -> bool:
        return self.matches_tool(tool) and self.pattern.match(text) is not None


def parse_rules(texts: list[str], kind: str) -> tuple[Rule, ...]:
    return tuple(Rule.parse(t, kind) for t in texts)
