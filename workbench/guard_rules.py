"""The guard's rules: built-in patterns that always need review, and the person's own rules.

Bash commands are read the way bash splits them (quotes, `;`, `&&`, `||`, `|`, `&`, new
lines, subshells, `$(...)`, backticks, `bash -c '...'`, `eval`), with wrappers such as
`sudo`, `env`, `nice` or `timeout` looked through, so spacing, quoting and flag order do not
dodge a rule. The rules err on the side of review: a heredoc's text or an `echo "rm -rf /"`
may be reviewed too.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import itertools
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.config import ConfigError

SEPARATORS = frozenset({";", "&&", "||", "&", "\n", "(", ")", "{", "}", ";;", ";&", "|&", "|"})
REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>", "<", "<<", "<<<", "<&"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
FETCHERS = frozenset({"curl", "wget"})
AS_ANOTHER_USER = frozenset({"sudo", "doas", "su", "pkexec", "run0"})
# Wrappers run the command that follows them; their own options (and option values) are skipped.
WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "pkexec": frozenset({"--user"}),
    "run0": frozenset({"--user", "-u"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "chronic": frozenset(),
    "xargs": frozenset({"-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E", "--max-args", "--max-procs"}),
}
# Programs that only read: naming a .git/ path as their argument is not a write.
READERS = frozenset(
    {"cat", "ls", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "stat", "file", "wc", "diff"}
    | {"tree", "du", "test", "[", "echo", "printf", "cd", "pushd", "realpath", "readlink", "md5sum", "sha256sum"}
)
_GIT_PATH = re.compile(r"(?:^|/)\.git(?:/|$)")
_GLOB = re.compile(r"[*?\[]")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))")
_SUBSTITUTION_OF_FETCH = re.compile(
    r"(?:^|[\s;&|(])(?:(?:\S*/)?(?:ba|z|da|k|mk|a)?sh|eval|source|\.)\s[^;&|\n]*?(?:\$\(|<\(|`)\s*(?:\S*/)?(?:curl|wget)\b"
)
_OPAQUE = re.compile(r"\$\(|`|<\(|>\(")
_EVERYTHING = re.compile(r"\*|\.\*|\*\*|\*\.\*|\.\[!.\]\*|\.\?\*")  # globs that match (nearly) every name
MAX_DEPTH = 4  # nested bash -c / eval / $(...) levels read


@dataclass(frozen=True)
class Command:
    """One simple command: its words with leading assignments and wrappers removed."""

    words: tuple[str, ...]
    redirects: tuple[str, ...]  # redirection targets (files written or read)
    wrappers: tuple[str, ...]  # programs it ran under: sudo, env, nice, ...
    assignments: tuple[str, ...]  # NAME=value words before the program

    @property
    def program(self) -> str:
        return os.path.basename(self.words[0]) if self.words else ""

    @property
    def args(self) -> tuple[str, ...]:
        return self.words[1:]


Pipeline = tuple[Command, ...]


# --- reading a bash command -------------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    lex = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lex.whitespace = " \t\r"
    lex.commenters = ""
    lex.whitespace_split = True
    try:
        return list(lex)
    except ValueError:  # an unclosed quote: bash would refuse it too, but read it without quoting
        return _tokens(text.replace('"', " ").replace("'", " ")) if ('"' in text or "'" in text) else text.split()


def _substitutions(text: str) -> Iterator[str]:
    """The inner text of every `$(...)`, `<(...)`, `>(...)` and backtick pair (quoted or not)."""
    for match in re.finditer(r"[$<>]\(", text):
        depth, start = 1, match.end()
        for i in range(start, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                yield text[start:i]
                break
        else:
            yield text[start:]
    parts = text.split("`")
    yield from parts[1::2]


def _strip_wrappers(words: list[str]) -> tuple[list[str], list[str], list[str]]:
    wrappers: list[str] = []
    assignments: list[str] = []
    while words:
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=", words[0]):
            assignments.append(words[0])  # FOO=bar before the program
            words = words[1:]
        name = os.path.basename(words[0]) if words else ""
        if name not in WRAPPERS:
            break
        wrappers.append(name)
        takes_value = WRAPPERS[name]
        words = words[1:]
        while words and words[0].startswith("-") and words[0] != "-":
            option = words.pop(0)
            if option == "--":
                break
            if option in takes_value and words:
                words.pop(0)
        if name == "timeout" and words:
            words = words[1:]  # the duration
        if name == "env":
            while words and "=" in words[0] and not words[0].startswith("="):
                assignments.append(words[0])
                words = words[1:]
    return words, wrappers, assignments


def _command(words: list[str]) -> Command:
    plain, targets = [], []
    i = 0
    while i < len(words):
        word = words[i]
        if word in REDIRECTS:
            if i + 1 < len(words):
                targets.append(words[i + 1])
            i += 2
            continue
        plain.append(word)
        i += 1
    stripped, wrappers, assignments = _strip_wrappers(plain)
    return Command(tuple(stripped), tuple(targets), tuple(wrappers), tuple(assignments))


@functools.lru_cache(maxsize=512)
def parse(text: str, depth: int = 0) -> tuple[Pipeline, ...]:
    """Every pipeline in a bash command line, nested ones (`$(...)`, `bash -c`, `eval`) included."""
    pipelines: list[Pipeline] = []
    current: list[Command] = []
    words: list[str] = []

    def end_command() -> None:
        nonlocal words
        if words:
            current.append(_command(words))
        words = []

    for token in _tokens(text):
        if token in ("|", "|&"):
            end_command()
        elif token in SEPARATORS:
            end_command()
            if current:
                pipelines.append(tuple(current))
            current = []
        else:
            words.append(token)
    end_command()
    if current:
        pipelines.append(tuple(current))
    if depth < MAX_DEPTH:
        for inner in list(_substitutions(text)):
            pipelines += parse(inner, depth + 1)
        for pipeline in list(pipelines):
            for command in pipeline:
                if script := _script_of(command):
                    pipelines += parse(script, depth + 1)
    return tuple(pipelines)


def _script_of(command: Command) -> str:
    """The command text a shell, `eval` or `su -c` runs: `bash -c 'rm -rf ~'` gives `rm -rf ~`."""
    if command.program == "eval":
        return " ".join(command.args)
    if command.program in SHELLS or command.program == "su":
        args = list(command.args)
        for i, arg in enumerate(args):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:] and i + 1 < len(args):
                return args[i + 1]
            if arg == "--command" and i + 1 < len(args):
                return args[i + 1]
    return ""


def simple_commands(text: str) -> list[str]:
    """Each simple command of a command line as its words joined by one space (for the person's rules)."""
    return [" ".join(c.words) for pipeline in parse(text) for c in pipeline if c.words]


def opaque(text: str) -> bool:
    """Whether a command line runs text made at run time or under a wrapper, so an allow rule
    cannot vouch for it: `$(...)`, backticks, `bash -c`, `eval`, `source`, `sudo`, `FOO=1 cmd`."""
    return bool(_OPAQUE.search(text)) or any(
        c.wrappers or c.assignments or _script_of(c) or c.program in ("source", ".")
        for pipeline in parse(text)
        for c in pipeline
    )


# --- places that must not be deleted ----------------------------------------------------------


@dataclass(frozen=True)
class Places:
    """The folders whose recursive delete needs review: the workspace, the homes, `/`."""

    workspaces: tuple[str, ...]  # as given and with symlinks resolved
    homes: tuple[str, ...]
    cwd: str = ""  # the folder relative targets start from; "" is the workspace

    @classmethod
    def of(cls, workspace: Path) -> Places:
        homes = {os.path.normpath(os.path.expanduser("~"))}
        if os.environ.get("HOME"):
            homes.add(os.path.normpath(os.environ["HOME"]))
        given = os.path.normpath(str(workspace.absolute()))
        return cls((given, *({os.path.realpath(given)} - {given})), tuple(sorted(homes)))

    def expand(self, target: str) -> tuple[str, str, bool]:
        """The absolute path `target` names (~, $HOME, $PWD expanded, unknown variables empty,
        relative to `cwd`), the glob of its first globbed component (or ""), and whether it held
        no unknown variable."""
        home = self.homes[0]
        if target.startswith("~"):
            head, sep, rest = target[1:].partition("/")
            target = (home if not head else f"/home/{head}") + sep + rest
        unknown = False

        def variable(match: re.Match[str]) -> str:
            nonlocal unknown
            known = {"HOME": home, "PWD": self.cwd or self.workspaces[0], "USER": os.path.basename(home)}
            value = known.get(match.group(1) or match.group(2))
            unknown = unknown or value is None
            return value or ""

        target = _VARIABLE.sub(variable, target)
        if not target.strip():
            return "", "", not unknown
        parts = target.split("/")
        globbed = next((i for i, p in enumerate(parts) if _GLOB.search(p)), None)
        glob = parts[globbed] if globbed is not None else ""
        if globbed is not None:  # "/*" deletes what "/" holds
            target = "/".join(parts[:globbed]) or ("/" if target.startswith("/") else ".")
        return os.path.normpath(os.path.join(self.cwd or self.workspaces[0], target)), glob, not unknown

    def moved(self, folder: str) -> Places:
        """These places as seen after `cd folder`."""
        path, _, literal = self.expand(folder or "~")
        return dataclasses.replace(self, cwd=path if path and literal else self.cwd)

    def danger(self, target: str) -> str:
        """What a recursive delete of `target` would remove, when it is a protected place; else ""."""
        path, glob, literal = self.expand(target)
        if not path:
            return ""  # rm -rf "$EMPTY" removes nothing
        if glob and not (_EVERYTHING.fullmatch(glob) or path == "/" or path in self.homes):
            return ""  # "*.pyc" removes some files, not the folder's whole content
        return self._named(path, literal)

    def _named(self, path: str, literal: bool) -> str:
        if path == "/":
            return "the root folder /"
        if path in self.homes or re.fullmatch(r"/home/[^/]+|/root|/Users/[^/]+", path):
            return f"the home folder {path}"
        if path in self.workspaces:
            return f"the workspace {path}"
        within = path.rstrip("/") + "/"
        if any(w.startswith(within) for w in self.workspaces):
            return f"{path}, which holds the workspace"
        if any(h.startswith(within) for h in self.homes):
            return f"{path}, which holds a home folder"
        if literal and path.count("/") == 1:
            return f"the top-level folder {path}"
        return ""


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


def primary_text(tool: str, args: dict[str, Any], raw: str) -> str:
    """The text a rule's pattern is matched against: the command, path, URL, ... of the call."""
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
