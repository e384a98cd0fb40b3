"""Reading a bash command line the way bash splits it: for the guard's rules, the engine's checks
of what a command did, and the bash tool's in-place edits (pure functions, no I/O but `Places.of`).

Quotes, `;`, `&&`, `||`, `|`, `&`, new lines, subshells, `$(...)`, backticks, `bash -c '...'`
and `eval` are read, and wrappers such as `sudo`, `env`, `nice` or `timeout` looked through,
so spacing, quoting and flag order do not hide a command. `Places` names the folders whose
recursive delete needs review, following `cd`, `~`, `$HOME` and globs.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SEPARATORS = frozenset({";", "&&", "||", "&", "\n", "(", ")", "{", "}", ";;", ";&", "|&", "|"})
REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>", "<", "<<", "<<<", "<&"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
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
_GLOB = re.compile(r"[*?\[]")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))")
_PWD_SUBSTITUTION = re.compile(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`")
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
        unknown = False
        if target.startswith("~"):  # ~, ~+ (the working folder), ~- (the previous one), ~user
            head, sep, rest = target[1:].partition("/")
            tilde = {"": home, "+": self.cwd or self.workspaces[0], "-": "", "root": "/root"}
            unknown = head == "-"
            target = tilde.get(head, f"/home/{head}") + sep + rest

        def variable(match: re.Match[str]) -> str:
            nonlocal unknown
            known = {"HOME": home, "PWD": self.cwd or self.workspaces[0], "USER": os.path.basename(home)}
            value = known.get(match.group(1) or match.group(2))
            unknown = unknown or value is None
            return value or ""

        target = _PWD_SUBSTITUTION.sub(lambda m: self.cwd or self.workspaces[0], target)
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
